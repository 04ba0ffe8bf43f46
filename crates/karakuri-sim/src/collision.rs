//! Collision detection with `parry3d-f64`: shapes attached to the joints of the world model,
//! a sweep-and-prune broad phase and parry's contact manifolds as narrow phase.
//!
//! Parry speaks glam (through glamx); karakuri speaks nalgebra. Poses are converted here, at the
//! boundary, and nothing of parry's types leaves this module. Contact points are the vertices
//! of the contact region, as Springhead does (a box on a plane gives up to four points): parry's
//! manifolds give exactly those.

use karakuri::spatial::{quat_to_xyzw, Se3, Vec3};
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::math::{Pose as PPose, Rotation, Vector as PVec};
use parry3d_f64::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};
use parry3d_f64::shape::SharedShape;

use crate::scene::{ContactMode, Geometry, Material};

/// A collision shape attached to a joint of the world model.
#[derive(Clone)]
pub struct ColShape {
    /// The simulated body it belongs to (index into the world's bodies).
    pub body: usize,
    /// The model joint that moves it (0: static).
    pub joint: usize,
    /// Its placement in the joint frame.
    pub placement: Se3,
    /// The parry shape.
    pub shape: SharedShape,
    /// Its material.
    pub material: Material,
    /// Infinite (a plane): always passes the broad phase.
    pub unbounded: bool,
}

/// A contact point found by the narrow phase.
#[derive(Clone, Copy, Debug)]
pub struct RawContact {
    /// First shape.
    pub shape_a: usize,
    /// Second shape.
    pub shape_b: usize,
    /// Contact point (world), midway between the two surfaces.
    pub point: Vec3,
    /// Unit normal (world), pointing from shape A to shape B.
    pub normal: Vec3,
    /// Penetration depth (m): positive when overlapping, negative for a gap.
    pub depth: f64,
    /// Features of the two shapes (to recognise the same contact in the next step).
    pub features: (u32, u32),
    /// Contact mode of the pair.
    pub mode: ContactMode,
}

/// Builds the parry shape of a geometry and whether it is unbounded. Cylinders and capsules run
/// along the shape's z (parry's cylinder runs along y: a rotation is folded into `extra`).
pub fn make_shape(g: &Geometry) -> Result<(SharedShape, Se3, bool), String> {
    let v = |a: &[f64; 3]| PVec::new(a[0], a[1], a[2]);
    Ok(match g {
        Geometry::Sphere { radius } => (SharedShape::ball(*radius), Se3::identity(), false),
        Geometry::Box { half_extents: h } => (SharedShape::cuboid(h[0], h[1], h[2]), Se3::identity(), false),
        Geometry::Capsule { radius, half_length } => {
            (SharedShape::capsule_z(*half_length, *radius), Se3::identity(), false)
        }
        Geometry::Cylinder { radius, half_length } => {
            // parry's cylinder axis is y: rotate +90° about x so that y maps to z
            let r = karakuri::spatial::rotation_about(&Vec3::x(), std::f64::consts::FRAC_PI_2);
            (
                SharedShape::cylinder(*half_length, *radius),
                Se3::new(r, Vec3::zeros()),
                false,
            )
        }
        Geometry::Plane => (SharedShape::halfspace(PVec::new(0.0, 0.0, 1.0)), Se3::identity(), true),
        Geometry::ConvexMesh { vertices, .. } => {
            let pts: Vec<PVec> = vertices.iter().map(v).collect();
            let s = SharedShape::convex_hull(&pts)
                .ok_or("the convex hull of the vertices is degenerate (flat or repeated points)")?;
            (s, Se3::identity(), false)
        }
        Geometry::TriMesh { vertices, triangles, .. } => {
            let pts: Vec<PVec> = vertices.iter().map(v).collect();
            let s =
                SharedShape::trimesh(pts, triangles.clone()).map_err(|e| format!("invalid triangle mesh: {e:?}"))?;
            (s, Se3::identity(), false)
        }
    })
}

/// Converts a karakuri placement to parry's pose.
pub fn to_parry(x: &Se3) -> PPose {
    let q = quat_to_xyzw(&x.rotation);
    let t = x.translation;
    PPose::from_parts(
        PVec::new(t.x, t.y, t.z),
        Rotation::from_xyzw(q[0], q[1], q[2], q[3]).normalize(),
    )
}

fn from_pvec(v: PVec) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

/// Shapes, which pairs may touch, and reusable buffers.
pub struct Collider {
    /// Every collision shape.
    pub shapes: Vec<ColShape>,
    /// Contact mode of each candidate pair `(i, j)`, `i < j`; pairs not listed never collide.
    pair_mode: Vec<Option<ContactMode>>,
    poses: Vec<PPose>,
    aabbs: Vec<Aabb>,
    order: Vec<usize>,
    manifolds: Vec<ContactManifold<(), ()>>,
}

impl Collider {
    /// `pair_mode(a, b)` gives the mode of two shapes (None: never collide).
    pub fn new(shapes: Vec<ColShape>, pair_mode: impl Fn(&ColShape, &ColShape) -> Option<ContactMode>) -> Self {
        let n = shapes.len();
        let mut modes = vec![None; n * n];
        for i in 0..n {
            for j in i + 1..n {
                modes[i * n + j] = pair_mode(&shapes[i], &shapes[j]);
            }
        }
        Collider {
            pair_mode: modes,
            poses: vec![PPose::identity(); n],
            aabbs: vec![Aabb::new_invalid(); n],
            order: (0..n).collect(),
            manifolds: Vec::new(),
            shapes,
        }
    }

    /// Number of shape pairs that can ever touch.
    pub fn candidate_pairs(&self) -> usize {
        self.pair_mode.iter().filter(|m| m.is_some()).count()
    }

    /// Finds the contacts for joint placements `o_m_i` (world), detecting gaps up to `margin`.
    /// The result is in a deterministic order (by shape pair, then manifold point).
    pub fn detect(&mut self, o_m_i: &[Se3], margin: f64, out: &mut Vec<RawContact>) {
        out.clear();
        let n = self.shapes.len();
        if n < 2 {
            return;
        }
        for (k, s) in self.shapes.iter().enumerate() {
            let x = o_m_i[s.joint].compose(&s.placement);
            self.poses[k] = to_parry(&x);
            if !s.unbounded {
                self.aabbs[k] = s.shape.compute_aabb(&self.poses[k]).loosened(margin);
            }
        }
        // broad phase: sweep and prune along x; unbounded shapes pair with everything
        self.order.clear();
        self.order.extend((0..n).filter(|&k| !self.shapes[k].unbounded));
        let aabbs = &self.aabbs;
        self.order
            .sort_by(|&a, &b| aabbs[a].mins.x.total_cmp(&aabbs[b].mins.x).then(a.cmp(&b)));
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for (ia, &a) in self.order.iter().enumerate() {
            for &b in &self.order[ia + 1..] {
                if self.aabbs[b].mins.x > self.aabbs[a].maxs.x {
                    break;
                }
                if self.aabbs[a].intersects(&self.aabbs[b]) {
                    pairs.push((a.min(b), a.max(b)));
                }
            }
        }
        for u in (0..n).filter(|&k| self.shapes[k].unbounded) {
            for k in 0..n {
                if k != u && !(self.shapes[k].unbounded && k < u) {
                    pairs.push((u.min(k), u.max(k)));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let dispatcher = DefaultQueryDispatcher;
        for (a, b) in pairs {
            let Some(mode) = self.pair_mode[a * n + b] else {
                continue;
            };
            if mode == ContactMode::None {
                continue;
            }
            let (pa, pb) = (self.poses[a], self.poses[b]);
            let pos12 = pa.inv_mul(&pb);
            self.manifolds.clear();
            let mut workspace = None;
            if dispatcher
                .contact_manifolds(
                    &pos12,
                    &*self.shapes[a].shape.0,
                    &*self.shapes[b].shape.0,
                    margin,
                    &mut self.manifolds,
                    &mut workspace,
                )
                .is_err()
            {
                continue;
            }
            for m in &self.manifolds {
                let sub1 = m.subshape_pos1().copied().unwrap_or(PPose::identity());
                let sub2 = m.subshape_pos2().copied().unwrap_or(PPose::identity());
                let (w1, w2) = (pa * sub1, pb * sub2);
                let normal = from_pvec(w1.rotation * m.local_n1);
                let nn = normal.norm();
                if nn.is_nan() || nn <= 0.5 {
                    continue;
                }
                let normal = normal / nn;
                for c in &m.points {
                    let p1 = from_pvec(w1.transform_point(c.local_p1));
                    let p2 = from_pvec(w2.transform_point(c.local_p2));
                    out.push(RawContact {
                        shape_a: a,
                        shape_b: b,
                        point: 0.5 * (p1 + p2),
                        normal,
                        depth: -c.dist,
                        features: (c.fid1.0 ^ (m.subshape1 << 20), c.fid2.0 ^ (m.subshape2 << 20)),
                        mode,
                    });
                }
            }
        }
    }
}
