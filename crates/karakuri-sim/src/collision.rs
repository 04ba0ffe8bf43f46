//! Collision detection with `parry3d-f64`: shapes attached to the joints of the world model,
//! a sweep-and-prune broad phase and parry's contact manifolds as narrow phase.
//!
//! Parry speaks glam (through glamx); karakuri speaks nalgebra. Poses are converted here, at the
//! boundary, and nothing of parry's types leaves this module. Contact points are the vertices
//! of the contact region, as Springhead does (a box on a plane gives up to four points): parry's
//! manifolds give exactly those, and where two faces overlap in a
//! polygon of more corners, four of them are kept (`four_of`). Two boxes are karakuri's own
//! (`box_box`): the same points without parry's generic path.

use karakuri::spatial::{quat_to_xyzw, Se3, Vec3};
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::math::{Pose as PPose, Rotation, Vector as PVec};
use parry3d_f64::query::{
    ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher, TrackedContact,
};
use parry3d_f64::shape::{PackedFeatureId, PolygonalFeature, ShapeType, SharedShape};

use crate::scene::{ContactMode, Geometry, Material};
use crate::sort::sort_nearly_sorted;

mod box_box;
pub use box_box::{box_box, BoxManifold, BoxPoint};

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
        Geometry::Box { half_extents: h } => (
            SharedShape::cuboid(h[0], h[1], h[2]),
            Se3::identity(),
            false,
        ),
        Geometry::Capsule {
            radius,
            half_length,
        } => (
            SharedShape::capsule_z(*half_length, *radius),
            Se3::identity(),
            false,
        ),
        Geometry::Cylinder {
            radius,
            half_length,
        } => {
            // parry's cylinder axis is y: rotate +90° about x so that y maps to z
            let r = karakuri::spatial::rotation_about(&Vec3::x(), std::f64::consts::FRAC_PI_2);
            (
                SharedShape::cylinder(*half_length, *radius),
                Se3::new(r, Vec3::zeros()),
                false,
            )
        }
        Geometry::Plane => (
            SharedShape::halfspace(PVec::new(0.0, 0.0, 1.0)),
            Se3::identity(),
            true,
        ),
        Geometry::ConvexMesh { vertices, .. } => {
            let pts: Vec<PVec> = vertices.iter().map(v).collect();
            let s = SharedShape::convex_hull(&pts)
                .ok_or("the convex hull of the vertices is degenerate (flat or repeated points)")?;
            (s, Se3::identity(), false)
        }
        Geometry::TriMesh {
            vertices,
            triangles,
            ..
        } => {
            let pts: Vec<PVec> = vertices.iter().map(v).collect();
            let s = SharedShape::trimesh(pts, triangles.clone())
                .map_err(|e| format!("invalid triangle mesh: {e:?}"))?;
            (s, Se3::identity(), false)
        }
    })
}

/// The bounding box `(mins, maxs)` of a bounded shape in its joint's frame (None: a plane).
pub fn joint_frame_bounds(s: &ColShape) -> Option<(Vec3, Vec3)> {
    if s.unbounded {
        return None;
    }
    let b = s.shape.compute_aabb(&to_parry(&s.placement));
    Some((from_pvec(b.mins), from_pvec(b.maxs)))
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

/// The collision description of a world: its shapes and which pairs may touch (built once).
pub struct Collider {
    /// Every collision shape.
    pub shapes: Vec<ColShape>,
    /// Contact mode of each candidate pair `(i, j)`, `i < j` (`n x n`, upper triangle); pairs
    /// not listed never collide.
    pair_mode: Vec<Option<ContactMode>>,
    /// Each shape's parry type `(nshapes)`, looked up once (a ball's contacts do not depend
    /// on its orientation, so its parry pose is its centre with the identity rotation: no
    /// rotation-to-quaternion conversion per step).
    types: Vec<ShapeType>,
    /// Each shape is composite (a triangle mesh...): parry's multi-manifold dispatch
    /// `(nshapes)`.
    composite: Vec<bool>,
    /// A small world's pairs ([`SMALL_WORLD_PAIRS`] candidate pairs or fewer): every pair
    /// that may touch, in shape-pair order, tested directly instead of through the sweep and
    /// prune (decided once here; `None`: the sweep). See [`Collider::detect_small`].
    small: Option<SmallWorld>,
    /// Each box's half extents (None: not a box) `(nshapes)`: two boxes go to [`box_box`].
    half_extents: Vec<Option<Vec3>>,
}

/// At most this many candidate pairs, a world's pairs are tested one by one
/// ([`Collider::detect_small`]): the sweep's sorting and bookkeeping cost more than a few
/// box tests.
pub const SMALL_WORLD_PAIRS: usize = 32;

/// How [`Collider::detect_small`] tests one candidate pair.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SmallTest {
    /// Two balls of radii `(ra, rb)`: the closed form [`ball_ball`] (its distance test is the
    /// broad phase too).
    Balls(f64, f64),
    /// Two bounded shapes: their loosened boxes, then the narrow phase.
    Boxes,
    /// One shape is unbounded (a plane): the narrow phase.
    Unbounded,
}

/// The pairs of a small world (see [`Collider::small`]).
struct SmallWorld {
    /// Every pair `(a, b, mode, test)`, `a < b`, whose mode is not `None`, by shape pair.
    pairs: Vec<(usize, usize, ContactMode, SmallTest)>,
    /// Each shape's loosened bounding box is read by some pair (`(nshapes)`; a world of balls
    /// needs none).
    needs_aabb: Vec<bool>,
}

/// The buffers of [`Collider::detect`], sized for the collider's shapes and reused every step.
pub struct CollisionWork {
    /// parry pose of each shape `(nshapes)`.
    poses: Vec<PPose>,
    /// Loosened bounding box of each bounded shape `(nshapes)`.
    aabbs: Vec<Aabb>,
    /// The bounded shapes sorted by `aabb.mins.x` (sweep and prune), kept from the last step
    /// (nearly sorted: bodies move little in a step) and re-sorted by insertion `(≤ nshapes)`.
    order: Vec<usize>,
    /// Candidate pairs of this step, in sweep order, then sorted by shape pair
    /// `(grows to the largest count seen)`.
    pairs: Vec<(usize, usize)>,
    /// The pairs sorted by shape pair (a counting sort of `pairs` by first shape) `(as pairs)`.
    sorted: Vec<(usize, usize)>,
    /// Pairs per first shape, then where each first shape's pairs start `(nshapes + 1)`.
    first: Vec<usize>,
    /// The narrow phase's manifolds (one for convex pairs; composite shapes may use more).
    manifolds: Vec<ContactManifold<(), ()>>,
    /// Frozen shapes `(nshapes)`: a pair of two is not collided (static shapes and sleeping
    /// trees', set by the sleep stage; all false when sleeping is off).
    pub frozen: Vec<bool>,
    /// World placement of each box `(nshapes)` (others: unused), for [`box_box`].
    frames: Vec<Se3>,
    /// The box–box manifold of the current pair.
    boxes: BoxManifold,
}

impl Collider {
    /// `pair_mode(a, b)` gives the mode of two shapes (None: never collide).
    pub fn new(
        shapes: Vec<ColShape>,
        pair_mode: impl Fn(&ColShape, &ColShape) -> Option<ContactMode>,
    ) -> Self {
        let n = shapes.len();
        let mut modes = vec![None; n * n];
        for i in 0..n {
            for j in i + 1..n {
                modes[i * n + j] = pair_mode(&shapes[i], &shapes[j]);
            }
        }
        let types: Vec<ShapeType> = shapes.iter().map(|s| s.shape.shape_type()).collect();
        let small = SmallWorld::of(&shapes, &modes);
        Collider {
            pair_mode: modes,
            composite: shapes
                .iter()
                .map(|s| s.shape.as_composite_shape().is_some() || s.shape.shape_type() == ShapeType::TriMesh)
                .collect(),
            types,
            small,
            half_extents: shapes
                .iter()
                .map(|s| s.shape.as_cuboid().map(|c| from_pvec(c.half_extents)))
                .collect(),
            shapes,
        }
    }

    /// Whether the world's pairs are tested one by one ([`Collider::detect_small`]) rather
    /// than through the sweep and prune.
    pub fn is_small(&self) -> bool {
        self.small.is_some()
    }

    /// Buffers for [`Collider::detect`].
    pub fn work(&self) -> CollisionWork {
        let n = self.shapes.len();
        CollisionWork {
            poses: vec![PPose::identity(); n],
            aabbs: vec![Aabb::new_invalid(); n],
            order: (0..n).filter(|&k| !self.shapes[k].unbounded).collect(),
            // every pair of shapes (capped at 2^16 for huge worlds, which may then grow it)
            pairs: Vec::with_capacity((n * n.saturating_sub(1) / 2).min(1 << 16)),
            sorted: Vec::with_capacity((n * n.saturating_sub(1) / 2).min(1 << 16)),
            first: vec![0; n + 1],
            manifolds: vec![manifold_with_room()],
            frozen: vec![false; n],
            frames: vec![Se3::identity(); n],
            boxes: BoxManifold::default(),
        }
    }

    /// The contact mode of shapes `i` and `j` (None: they never collide).
    pub fn pair_mode(&self, i: usize, j: usize) -> Option<ContactMode> {
        let n = self.shapes.len();
        self.pair_mode[i.min(j) * n + i.max(j)].filter(|_| i != j)
    }

    /// Number of shape pairs that can ever touch.
    pub fn candidate_pairs(&self) -> usize {
        self.pair_mode.iter().filter(|m| m.is_some()).count()
    }

    /// Finds the contacts for joint placements `o_m_i` (world), detecting gaps up to `margin`.
    /// The result is in a deterministic order (by shape pair, then manifold point). Reads the
    /// shapes and `o_m_i`; writes `work` and `out`. Allocates nothing once `work.pairs` and
    /// `out` have grown to the largest counts seen (triangle meshes excepted: parry's composite
    /// dispatch keeps its own buffers).
    pub fn detect(
        &self,
        work: &mut CollisionWork,
        o_m_i: &[Se3],
        margin: f64,
        out: &mut Vec<RawContact>,
    ) {
        out.clear();
        let n = self.shapes.len();
        if n < 2 {
            return;
        }
        if let Some(small) = &self.small {
            self.place_shapes(work, o_m_i, margin, |k| small.needs_aabb[k]);
            self.detect_small(small, work, margin, out);
            return;
        }
        self.place_shapes(work, o_m_i, margin, |_| true);
        // broad phase: sweep and prune along x; unbounded shapes pair with everything
        let aabbs = &work.aabbs;
        // a total order (ties broken by index): the sorted order is unique, whatever the last
        // step's was
        sort_nearly_sorted(&mut work.order, |&a, &b| {
            aabbs[a].mins.x.total_cmp(&aabbs[b].mins.x).then(a.cmp(&b)).is_lt()
        });
        let pairs = &mut work.pairs;
        pairs.clear();
        for (ia, &a) in work.order.iter().enumerate() {
            for &b in &work.order[ia + 1..] {
                if aabbs[b].mins.x > aabbs[a].maxs.x {
                    break;
                }
                if aabbs[a].intersects(&aabbs[b]) {
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
        // by shape pair (the contacts' order): each pair comes once (the sweep gives each
        // bounded pair once, the unbounded loop the others), so a counting sort by the first
        // shape, then each first shape's few partners by insertion
        let (first, sorted) = (&mut work.first, &mut work.sorted);
        first.fill(0);
        for &(a, _) in pairs.iter() {
            first[a + 1] += 1;
        }
        for k in 0..n {
            first[k + 1] += first[k];
        }
        sorted.clear();
        sorted.resize(pairs.len(), (0, 0));
        for &(a, b) in pairs.iter() {
            sorted[first[a]] = (a, b);
            first[a] += 1;
        }
        let mut start = 0;
        for &end in &first[..n] {
            sort_nearly_sorted(&mut sorted[start..end], |x, y| x.1 < y.1);
            start = end;
        }
        debug_assert!(sorted.windows(2).all(|w| w[0] < w[1]), "pairs sorted, each once");
        for k in 0..work.sorted.len() {
            let (a, b) = work.sorted[k];
            let Some(mode) = self.pair_mode[a * n + b] else {
                continue;
            };
            if mode == ContactMode::None || (work.frozen[a] && work.frozen[b]) {
                continue;
            }
            self.collide_pair(work, (a, b, mode), margin, out);
        }
    }

    /// Each shape's parry pose into `work.poses` (a ball's: its centre, identity rotation),
    /// and the loosened bounding box of each bounded shape `k` with `aabb(k)` into
    /// `work.aabbs`.
    #[inline]
    fn place_shapes(&self, work: &mut CollisionWork, o_m_i: &[Se3], margin: f64, aabb: impl Fn(usize) -> bool) {
        for (k, s) in self.shapes.iter().enumerate() {
            let o = &o_m_i[s.joint];
            work.poses[k] = if self.types[k] == ShapeType::Ball {
                let c = o.transform_point(&s.placement.translation);
                PPose::translation(c.x, c.y, c.z)
            } else {
                let x = o.compose(&s.placement);
                if self.half_extents[k].is_some() {
                    work.frames[k] = x;
                }
                to_parry(&x)
            };
            if !s.unbounded && aabb(k) {
                work.aabbs[k] = s.shape.compute_aabb(&work.poses[k]).loosened(margin);
            }
        }
    }

    /// The small world's detection ([`SMALL_WORLD_PAIRS`] candidate pairs or fewer): each
    /// pair that may touch, in shape-pair order, tested directly (two balls by the closed form
    /// [`ball_ball`]; two bounded shapes by their loosened boxes, then the narrow phase; a plane
    /// and a shape by the narrow phase). The same contacts in the same order as the sweep's
    /// path: the sweep finds exactly the pairs whose boxes intersect, and two balls whose boxes
    /// (each loosened by `margin`) do not intersect are more than `2 margin` apart, so the
    /// ball test, which keeps gaps below `margin`, drops them too. Reads `work.poses`,
    /// `work.aabbs` (of the shapes `needs_aabb` names), `work.frozen`; writes `out`.
    fn detect_small(&self, small: &SmallWorld, work: &mut CollisionWork, margin: f64, out: &mut Vec<RawContact>) {
        for &(a, b, mode, test) in &small.pairs {
            if work.frozen[a] && work.frozen[b] {
                continue;
            }
            match test {
                SmallTest::Balls(ra, rb) => {
                    let centre = |p: &PPose| Vec3::new(p.translation.x, p.translation.y, p.translation.z);
                    if let Some((point, normal, depth)) = ball_ball(&centre(&work.poses[a]), ra, &centre(&work.poses[b]), rb, margin) {
                        out.push(RawContact {
                            shape_a: a,
                            shape_b: b,
                            point,
                            normal,
                            depth,
                            features: (BALL_FEATURE, BALL_FEATURE),
                            mode,
                        });
                    }
                }
                SmallTest::Boxes if !work.aabbs[a].intersects(&work.aabbs[b]) => {}
                SmallTest::Boxes | SmallTest::Unbounded => self.collide_pair(work, (a, b, mode), margin, out),
            }
        }
    }

    /// The narrow phase of shapes `a < b` (contact mode `mode`) at their poses in
    /// `work.poses`: their contacts, in manifold order, appended to `out`.
    #[inline]
    fn collide_pair(&self, work: &mut CollisionWork, (a, b, mode): (usize, usize, ContactMode), margin: f64, out: &mut Vec<RawContact>) {
        if let (Some(ha), Some(hb)) = (&self.half_extents[a], &self.half_extents[b]) {
            let m = &mut work.boxes;
            box_box(ha, &work.frames[a], hb, &work.frames[b], margin, m);
            for c in m.points() {
                out.push(RawContact {
                    shape_a: a,
                    shape_b: b,
                    point: 0.5 * (c.p_a + c.p_b),
                    normal: m.normal,
                    depth: -c.dist,
                    features: c.features,
                    mode,
                });
            }
            return;
        }
        let (pa, pb) = (work.poses[a], work.poses[b]);
        if !narrow_phase(
            &pa.inv_mul(&pb),
            (&self.shapes[a].shape, self.types[a]),
            (&self.shapes[b].shape, self.types[b]),
            self.composite[a] || self.composite[b],
            margin,
            &mut work.manifolds,
        ) {
            return;
        }
        for m in &work.manifolds {
            // a convex pair's manifold is in the shapes' own frames
            let w1 = m.subshape_pos1().map_or(pa, |sub| pa * *sub);
            let w2 = m.subshape_pos2().map_or(pb, |sub| pb * *sub);
            let normal = from_pvec(w1.rotation * m.local_n1);
            let nn = normal.norm();
            if nn.is_nan() || nn <= 0.5 {
                continue;
            }
            let normal = normal / nn;
            let at = |k: usize| from_pvec(w1.transform_point(m.points[k].local_p1));
            let keep = (m.points.len() > 4)
                .then(|| four_of(m.points.len(), at, |k| m.points[k].dist, &normal));
            for (k, c) in m.points.iter().enumerate() {
                if keep.is_some_and(|keep| !keep.contains(&k)) {
                    continue;
                }
                let p1 = from_pvec(w1.transform_point(c.local_p1));
                let p2 = from_pvec(w2.transform_point(c.local_p2));
                out.push(RawContact {
                    shape_a: a,
                    shape_b: b,
                    point: 0.5 * (p1 + p2),
                    normal,
                    depth: -c.dist,
                    features: (
                        c.fid1.0 ^ (m.subshape1 << 20),
                        c.fid2.0 ^ (m.subshape2 << 20),
                    ),
                    mode,
                });
            }
        }
    }
}

impl SmallWorld {
    /// The small-world pairs of shapes `shapes` (pair modes `modes`, `n x n` upper triangle), or `None` above [`SMALL_WORLD_PAIRS`] candidate pairs.
    fn of(shapes: &[ColShape], modes: &[Option<ContactMode>]) -> Option<SmallWorld> {
        let n = shapes.len();
        let mut pairs = Vec::new();
        let mut needs_aabb = vec![false; n];
        for a in 0..n {
            for b in a + 1..n {
                let Some(mode) = modes[a * n + b].filter(|&mode| mode != ContactMode::None) else {
                    continue;
                };
                let radius = |k: usize| shapes[k].shape.as_ball().map(|ball| ball.radius);
                let test = if let (Some(ra), Some(rb)) = (radius(a), radius(b)) {
                    SmallTest::Balls(ra, rb)
                } else if shapes[a].unbounded || shapes[b].unbounded {
                    SmallTest::Unbounded
                } else {
                    needs_aabb[a] = true;
                    needs_aabb[b] = true;
                    SmallTest::Boxes
                };
                pairs.push((a, b, mode, test));
                if pairs.len() > SMALL_WORLD_PAIRS {
                    return None;
                }
            }
        }
        Some(SmallWorld { pairs, needs_aabb })
    }
}

/// The feature both sides of a ball–ball contact carry: parry's `PackedFeatureId::face(0)`
/// (the face header, code 0), which its manifold gives.
const BALL_FEATURE: u32 = 0b11 << 30;

/// Two balls (centres `ca`, `cb`, radii `ra`, `rb`, world) closer than `margin`: the contact
/// `(point, normal from A to B, depth)` as parry's ball–ball manifold gives it through
/// [`Collider::collide_pair`] (the same operations in the same order: the midpoint of the two
/// surface points, the normal renormalised), without its dispatch; `None` beyond `margin`.
#[inline]
fn ball_ball(ca: &Vec3, ra: f64, cb: &Vec3, rb: f64, margin: f64) -> Option<(Vec3, Vec3, f64)> {
    let d = cb - ca;
    let centre_dist = (d.x * d.x + d.y * d.y + d.z * d.z).sqrt();
    let dist = centre_dist - ra - rb;
    if dist >= margin || dist.is_nan() {
        return None;
    }
    let n1 = if centre_dist != 0.0 { d / centre_dist } else { Vec3::y() };
    let nn = n1.norm();
    if nn.is_nan() || nn <= 0.5 {
        return None;
    }
    let p1 = n1 * ra + ca;
    let p2 = -n1 * rb + cb;
    Some((0.5 * (p1 + p2), n1 / nn, -dist))
}

/// An empty manifold with room for more points than any convex pair gives.
fn manifold_with_room() -> ContactManifold<(), ()> {
    let mut m = ContactManifold::new();
    m.points.reserve(32);
    m
}

/// A fresh manifold (as `ContactManifold::new()`) that keeps its points' capacity.
fn reset(m: &mut ContactManifold<(), ()>) {
    let mut points = std::mem::take(&mut m.points);
    points.clear();
    *m = ContactManifold::new();
    m.points = points;
}

/// The narrow phase of one pair: the contact manifolds of shapes `s1`, `s2` at relative pose
/// `pos12` into `manifolds`, every one computed afresh (nothing is carried from an earlier
/// step). Which function handles a pair:
///
/// | pair | function |
/// | --- | --- |
/// | plane – convex (but a ball) | [`plane_convex`] (here: parry's allocates a point list per call) |
/// | convex – convex, balls | parry's `contact_manifold_convex_convex` into the kept manifold |
/// | triangle meshes and other composites | parry's `contact_manifolds` (its own buffers) |
///
/// `t1`, `t2` are the shapes' types, `composite` whether either is composite or a triangle
/// mesh. Returns false when parry does not support the pair.
fn narrow_phase(
    pos12: &PPose,
    (s1, t1): (&SharedShape, ShapeType),
    (s2, t2): (&SharedShape, ShapeType),
    composite: bool,
    margin: f64,
    manifolds: &mut Vec<ContactManifold<(), ()>>,
) -> bool {
    let dispatcher = DefaultQueryDispatcher;
    if composite {
        manifolds.clear();
        let mut workspace = None;
        return dispatcher
            .contact_manifolds(pos12, &*s1.0, &*s2.0, margin, manifolds, &mut workspace)
            .is_ok();
    }
    if manifolds.is_empty() {
        manifolds.push(manifold_with_room());
    }
    manifolds.truncate(1);
    let m = &mut manifolds[0];
    reset(m);
    let ball = t1 == ShapeType::Ball || t2 == ShapeType::Ball;
    if !ball && t1 == ShapeType::HalfSpace {
        return plane_convex(pos12, s1, s2, margin, m, false);
    }
    if !ball && t2 == ShapeType::HalfSpace {
        return plane_convex(&pos12.inverse(), s2, s1, margin, m, true);
    }
    dispatcher
        .contact_manifold_convex_convex(pos12, &*s1.0, &*s2.0, None, None, margin, m)
        .is_ok()
}

/// Contacts of a plane (`plane`, its normal along its z) with a convex shape (`convex`, at
/// `pos12` in the plane's frame): the vertices of the shape's support feature against the
/// plane that lie within `margin` of it (Springhead's contact region: a box face gives its four
/// corners). `flipped`: the convex shape is the pair's first shape. Same result as parry's
/// half-space dispatch, into the kept point list.
fn plane_convex(
    pos12: &PPose,
    plane: &SharedShape,
    convex: &SharedShape,
    margin: f64,
    m: &mut ContactManifold<(), ()>,
    flipped: bool,
) -> bool {
    let (Some(half), Some((pfm, radius))) =
        (plane.as_halfspace(), convex.as_polygonal_feature_map())
    else {
        return false;
    };
    let n = half.normal;
    // the plane's normal in the convex shape's frame
    let n_in_2 = pos12.rotation.inverse() * n;
    let mut feature = PolygonalFeature::default();
    pfm.local_support_feature(-n_in_2, &mut feature);
    for i in 0..feature.num_vertices {
        let vtx2 = feature.vertices[i];
        let vtx_in_1 = pos12 * vtx2;
        let height = vtx_in_1.dot(n);
        if height - radius <= margin {
            m.points.push(TrackedContact::flipped(
                vtx_in_1 - n * height,
                vtx2 - n_in_2 * radius,
                PackedFeatureId::face(0),
                feature.vids[i],
                height - radius,
                flipped,
            ));
        }
    }
    if flipped {
        m.local_n1 = -n_in_2;
        m.local_n2 = n;
    } else {
        m.local_n1 = n;
        m.local_n2 = -n_in_2;
    }
    true
}

/// The four points a contact keeps of a manifold of more (two faces overlapping as an
/// octagon), as Bullet and Box2D choose them: the deepest, the one farthest from it, and the
/// two farthest on either side of the line through those two (the largest triangles), as
/// indices into `points` (a repeated index where fewer span the region). Four points of a
/// face contact carry its normal force and moments; more only repeat them as redundant rows,
/// which slow the solver without changing the motion. `n` points, `at(k)` the point `k` on
/// the first shape (world, or any frame the normal is in), `dist(k)` its separation.
fn four_of(
    n: usize,
    at: impl Fn(usize) -> Vec3,
    dist: impl Fn(usize) -> f64,
    normal: &Vec3,
) -> [usize; 4] {
    let deepest = (0..n).fold(0, |b, k| if dist(k) < dist(b) { k } else { b });
    let p0 = at(deepest);
    let far = (0..n).fold(deepest, |b, k| {
        if (at(k) - p0).norm_squared() > (at(b) - p0).norm_squared() {
            k
        } else {
            b
        }
    });
    let d = at(far) - p0;
    let side = |k: usize| d.cross(&(at(k) - p0)).dot(normal);
    let left = (0..n).fold(deepest, |b, k| if side(k) > side(b) { k } else { b });
    let right = (0..n).fold(deepest, |b, k| if side(k) < side(b) { k } else { b });
    [deepest, far, left, right]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::DEFAULT_MATERIAL;
    use karakuri::algorithms::SplitMix64;
    use karakuri::spatial::exp3;

    /// A world of `n` balls, boxes and capsules on joints 1..=n and a plane on joint 0 (its own
    /// frame tilted), every pair colliding (`Lcp`), and random joint placements crowding the
    /// shapes into a 0.4 m cube above the plane.
    fn crowd(n: usize, seed: u64) -> (Vec<ColShape>, Vec<Se3>) {
        let mut rng = SplitMix64::new(seed);
        let mut shapes = vec![ColShape {
            body: 0,
            joint: 0,
            placement: Se3::new(exp3(&Vec3::new(0.02, -0.01, 0.0)), Vec3::zeros()),
            shape: SharedShape::halfspace(PVec::new(0.0, 0.0, 1.0)),
            material: DEFAULT_MATERIAL,
            unbounded: true,
        }];
        let mut o_m_i = vec![Se3::identity()];
        for k in 1..=n {
            let shape = match k % 3 {
                0 => SharedShape::cuboid(0.05, 0.04, 0.03),
                1 => SharedShape::ball(0.03 + 0.02 * rng.range(0.0, 1.0)),
                _ => SharedShape::ball(0.05),
            };
            shapes.push(ColShape {
                body: k,
                joint: k,
                placement: Se3::new(exp3(&Vec3::new(0.1, 0.2, -0.3)), Vec3::new(0.0, 0.0, -0.01)),
                shape,
                material: DEFAULT_MATERIAL,
                unbounded: false,
            });
            let r = exp3(&Vec3::new(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)));
            o_m_i.push(Se3::new(r, Vec3::new(rng.range(0.0, 0.4), rng.range(0.0, 0.4), rng.range(-0.01, 0.4))));
        }
        (shapes, o_m_i)
    }

    /// The small world's direct pair tests and closed-form ball pairs give the sweep's
    /// contacts bit for bit, in the same order, frozen pairs skipped alike.
    #[test]
    fn small_worlds_find_the_sweeps_contacts_bit_for_bit() {
        let mut found = 0;
        for seed in 0..40 {
            let (shapes, o_m_i) = crowd(7, seed);
            let small = Collider::new(shapes.clone(), |_, _| Some(ContactMode::Lcp));
            assert!(small.is_small(), "28 pairs");
            let mut sweep = Collider::new(shapes, |_, _| Some(ContactMode::Lcp));
            sweep.small = None;
            let (mut ws, mut wp) = (small.work(), sweep.work());
            for frozen in [false, true] {
                if frozen {
                    for w in [&mut ws, &mut wp] {
                        w.frozen[0] = true;
                        w.frozen[2] = true;
                        w.frozen[5] = true;
                    }
                }
                let (mut a, mut b) = (Vec::new(), Vec::new());
                small.detect(&mut ws, &o_m_i, 0.01, &mut a);
                sweep.detect(&mut wp, &o_m_i, 0.01, &mut b);
                assert_eq!(a.len(), b.len(), "seed {seed}");
                for (x, y) in a.iter().zip(&b) {
                    assert_eq!((x.shape_a, x.shape_b, x.features, x.mode), (y.shape_a, y.shape_b, y.features, y.mode));
                    let bits = |c: &RawContact| [c.point, c.normal].map(|v| v.map(f64::to_bits)).map(|v| (v.x, v.y, v.z));
                    assert_eq!(bits(x), bits(y), "seed {seed}");
                    assert_eq!(x.depth.to_bits(), y.depth.to_bits());
                }
                found += a.iter().filter(|c| {
                    small.types[c.shape_a] == ShapeType::Ball && small.types[c.shape_b] == ShapeType::Ball
                }).count();
            }
        }
        assert!(found > 20, "ball pairs met: {found}");
    }

    /// More candidate pairs than [`SMALL_WORLD_PAIRS`]: the sweep.
    #[test]
    fn larger_worlds_keep_the_sweep() {
        let (shapes, _) = crowd(9, 1);
        assert!(!Collider::new(shapes, |_, _| Some(ContactMode::Lcp)).is_small(), "45 pairs");
    }
}
