//! The collider's detection: the broad phase (sweep and prune, or every pair of a small world)
//! and the dispatch of each pair to its narrow-phase function, over reusable buffers
//! ([`CollisionWork`]).

use karakuri::spatial::{Se3, Vec3};
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::math::Pose as PPose;
use parry3d_f64::query::ContactManifold;
use parry3d_f64::shape::ShapeType;

use crate::scene::ContactMode;
use crate::sort::sort_nearly_sorted;
use super::box_box::{box_box, BoxManifold};
use super::collider::{Collider, SmallTest, SmallWorld};
use super::RawContact;
use super::shapes::{from_pvec, to_parry};
use super::pairs::{back_face, ball_ball, four_of, manifold_with_room, narrow_phase, BALL_FEATURE};

/// The buffers of [`Collider::detect`], sized for the collider's shapes and reused every step.
pub struct CollisionWork {
    /// parry pose of each shape `(nshapes)`.
    poses: Vec<PPose>,
    /// Loosened bounding box of each bounded shape `(nshapes)`.
    aabbs: Vec<Aabb>,
    /// Each convex hull's box in its own frame (others: None) `(nshapes)`: its world box is
    /// this one's, turned (a few operations where the hull's takes every vertex).
    hull_boxes: Vec<Option<Aabb>>,
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
    /// The EPA of the generic convex pairs (its buffers kept from step to step).
    epa: parry3d_f64::query::epa::EPA,
    /// How far each shape with MuJoCo margins may move in this step `(nshapes)` (0 until
    /// [`Collider::set_motion`]): added to its pairs' `margin` as a speculative band.
    band: Vec<f64>,
    /// The triangles of a mesh near the other shape of a pair (a kept buffer: no allocation).
    triangles: Vec<u32>,
}

impl Collider {
    /// The distance below which shapes `a < b` make contacts, for the step's `margin`: two MJCF
    /// geoms, MuJoCo's `margin` (the larger of theirs, or their `<pair>`'s) plus their
    /// speculative bands (`band`, [`Collider::set_motion`]); other pairs, `margin`.
    #[inline]
    fn pair_margin(&self, a: usize, b: usize, margin: f64, band: &[f64]) -> f64 {
        let (Some(ma), Some(mb)) = (self.margins[a], self.margins[b]) else {
            return margin;
        };
        let own = if self.own_margins.is_empty() {
            None
        } else {
            self.own_margins.binary_search_by_key(&(a, b), |m| m.0).ok().map(|k| self.own_margins[k].1)
        };
        let m = own.unwrap_or(ma.max(mb));
        m + band[a] + band[b]
    }

    /// Buffers for [`Collider::detect`].
    pub fn work(&self) -> CollisionWork {
        let n = self.shapes.len();
        // room for a manifold per triangle near a shape (up to 128, 16 points each)
        let triangles = self.shapes.iter().filter_map(|s| s.shape.as_trimesh()).map(|m| m.num_triangles()).max().unwrap_or(0);
        let mut manifolds = vec![manifold_with_room()];
        manifolds.extend((1..triangles.min(128)).map(|_| {
            let mut m = ContactManifold::new();
            m.points.reserve(16);
            m
        }));
        CollisionWork {
            poses: vec![PPose::identity(); n],
            aabbs: vec![Aabb::new_invalid(); n],
            hull_boxes: self.shapes.iter().map(|s| s.shape.as_convex_polyhedron().map(|h| h.local_aabb())).collect(),
            order: (0..n).filter(|&k| !self.shapes[k].unbounded).collect(),
            // every pair of shapes (capped at 2^16 for huge worlds, which may then grow it)
            pairs: Vec::with_capacity((n * n.saturating_sub(1) / 2).min(1 << 16)),
            sorted: Vec::with_capacity((n * n.saturating_sub(1) / 2).min(1 << 16)),
            first: vec![0; n + 1],
            manifolds,
            frozen: vec![false; n],
            frames: vec![Se3::identity(); n],
            boxes: BoxManifold::default(),
            epa: super::pairs::warm_epa(),
            band: vec![0.0; n],
            triangles: Vec::with_capacity(triangles.min(4096)),
        }
    }

    /// The speculative band of each shape with MuJoCo margins into `work`: how far it may move
    /// in a step of `dt` at its joint's velocity `velocities` (each joint's spatial velocity in
    /// its frame: `|v| + |ω| reach`) under an acceleration of at most `accel`, so two MJCF
    /// geoms closing in on each other meet at the surface (karakuri's contacts are hard: one
    /// that appears only once they overlap leaves them overlapping), while geoms at rest make
    /// no contact before `margin`, as in MuJoCo. Other shapes keep the step's margin.
    pub fn set_motion(&self, work: &mut CollisionWork, velocities: &[karakuri::spatial::Motion], dt: f64, accel: f64) {
        for (k, s) in self.shapes.iter().enumerate() {
            if self.margins[k].is_some() && s.joint != 0 {
                let v = &velocities[s.joint];
                work.band[k] = (v.linear.norm() + v.angular.norm() * self.reach[k] + accel * dt) * dt;
            }
        }
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
                let loose = self.margins[k].map_or(margin, |m| (m + work.band[k]).max(margin));
                let aabb = work.hull_boxes[k].map_or_else(|| s.shape.compute_aabb(&work.poses[k]), |b| b.transform_by(&work.poses[k]));
                work.aabbs[k] = aabb.loosened(loose);
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
                    let detect = self.pair_margin(a, b, margin, &work.band);
                    if let Some((point, normal, depth)) = ball_ball(&centre(&work.poses[a]), ra, &centre(&work.poses[b]), rb, detect) {
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
        let margin = self.pair_margin(a, b, margin, &work.band);
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
        let Some(count) = narrow_phase(
            &pa.inv_mul(&pb),
            (&self.shapes[a].shape, self.types[a]),
            (&self.shapes[b].shape, self.types[b]),
            self.composite[a] || self.composite[b],
            margin,
            (&mut work.manifolds, &mut work.triangles),
            &mut work.epa,
        ) else {
            return;
        };
        for m in &work.manifolds[..count] {
            // a convex pair's manifold is in the shapes' own frames
            let w1 = m.subshape_pos1().map_or(pa, |sub| pa * *sub);
            let w2 = m.subshape_pos2().map_or(pb, |sub| pb * *sub);
            let normal = from_pvec(w1.rotation * m.local_n1);
            let nn = normal.norm();
            if nn.is_nan() || nn <= 0.5 {
                continue;
            }
            let normal = normal / nn;
            let mesh = match (self.types[a], self.types[b]) {
                (ShapeType::TriMesh, _) => Some((&self.shapes[a].shape, &pa, m.subshape1, 1.0, &self.shapes[b].shape, &pb)),
                (_, ShapeType::TriMesh) => Some((&self.shapes[b].shape, &pb, m.subshape2, -1.0, &self.shapes[a].shape, &pa)),
                _ => None,
            };
            if let Some((point, normal, depth)) = mesh.and_then(|mesh| back_face(mesh, m, &normal)) {
                let features = (m.subshape1 << 20, m.subshape2 << 20);
                out.push(RawContact { shape_a: a, shape_b: b, point, normal, depth, features, mode });
                continue;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::DEFAULT_MATERIAL;
    use crate::collision::ColShape;
    use parry3d_f64::math::Vector as PVec;
    use parry3d_f64::shape::SharedShape;
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
