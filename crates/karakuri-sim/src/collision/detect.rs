//! The collider's detection: the broad phase (sweep and prune, or every pair of a small world)
//! and the dispatch of each pair to its narrow-phase function, over reusable buffers
//! ([`CollisionWork`]).

use karakuri::spatial::{Se3, Vec3};
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::math::Pose as PPose;
use parry3d_f64::query::epa::EPA;
use parry3d_f64::query::ContactManifold;
use parry3d_f64::shape::ShapeType;

use crate::scene::ContactMode;
use crate::sort::sort_nearly_sorted;
use super::ball_mesh::ball_mesh;
use super::box_box::{box_box, BoxManifold};
use super::collider::{Collider, Round, SmallTest, SmallWorld};
use super::RawContact;
use super::shapes::{capsule_box, from_pvec, to_parry};
use super::reject::{ball_apart, box_height, boxes_apart, SLACK};
use super::pairs::{back_face, ball_ball, four_of, manifold_with_room, narrow_phase, BALL_FEATURE};

/// The buffers of [`Collider::detect`], sized for the collider's shapes and reused every step.
pub struct CollisionWork {
    /// parry pose of each shape `(nshapes)`; a capsule's is current only where `posed` says.
    pub(super) poses: Vec<PPose>,
    /// Each capsule's `poses` entry is that of its `frames` entry (set on a pair's demand:
    /// most capsules meet only planes, which read `frames`) `(nshapes)`.
    pub(super) posed: Vec<bool>,
    /// Each plane's world unit normal and offset (`x · normal = offset`) `(nshapes)` (others:
    /// unused).
    pub(super) planes: Vec<(Vec3, f64)>,
    /// Each plane's [`Collider::world_plane`] as placed (others: None) `(nshapes)`: the
    /// broad phase's plane tests read it, not the pose.
    halfspaces: Vec<Option<(Vec3, f64)>>,
    /// Loosened bounding box of each bounded shape `(nshapes)`.
    aabbs: Vec<Aabb>,
    /// Each bounded convex shape's box in its own frame (others: None) `(nshapes)`: a hull's
    /// world box is this one's, turned (a few operations where the hull's takes every vertex);
    /// two shapes' boxes apart prove the pair makes no contact ([`boxes_apart`]).
    local_boxes: Vec<Option<Aabb>>,
    /// The loosening of each shape's box when it was last placed (NaN: never) `(nshapes)`.
    loose: Vec<f64>,
    /// Each joint's placement when its shapes were last placed `(njoints)`.
    joint_pose: Vec<Se3>,
    /// Each joint's shapes were placed at `joint_pose` by the sweep's path `(njoints)`.
    joint_kept: Vec<bool>,
    /// Each joint's placement is the same as at the last call `(njoints)`.
    joint_same: Vec<bool>,
    /// How far each joint moved since the last call: its origin's shift and the Frobenius
    /// norm of its rotation's change `(njoints)`.
    joint_move: Vec<(f64, f64)>,
    /// The joints that carry shapes, increasing: the only ones the per-joint entries above
    /// are kept for.
    shape_joints: Vec<usize>,
    /// How far each shape's points may have travelled in all, summed over the calls (a bound:
    /// its joint's shift plus turn times its reach, [`Collider::reach`]) `(nshapes)`.
    travel: Vec<f64>,
    /// For each pair `a < b` (`a n + b`), a gap a test proved plus the pair's travel then
    /// (`-∞`: none): while it less their travel now exceeds the pair's margin (+ [`SLACK`]),
    /// their distance does too and the pair is skipped, bit for bit the contacts of testing it
    /// `(n², empty above [`GAP_TABLE_SHAPES`] shapes)`.
    gaps: Vec<f64>,
    /// The moving and the frozen bounded shapes in sweep order `(≤ nshapes)`.
    moving: Vec<usize>,
    /// See `moving`.
    still: Vec<usize>,
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
    /// World placement of each box and capsule `(nshapes)` (others: unused), for [`box_box`]
    /// and the closed-form plane pairs.
    pub(super) frames: Vec<Se3>,
    /// The box–box manifold of the current pair.
    boxes: BoxManifold,
    /// The EPA of the generic convex pairs (its buffers kept from step to step).
    epa: parry3d_f64::query::epa::EPA,
    /// How far each shape with MuJoCo margins may move in this step `(nshapes)` (0 until
    /// [`Collider::set_motion`]): added to its pairs' `margin` as a speculative band.
    band: Vec<f64>,
    /// The triangles of a mesh near the other shape of a pair (a kept buffer: no allocation).
    triangles: Vec<u32>,
    /// Each ball's kept mesh query ([`super::ball_mesh::KeptQuery`]) `(nshapes)`.
    kept: Vec<super::ball_mesh::KeptQuery>,
}

/// The most shapes whose pairs keep their proven gaps (`CollisionWork::gaps`, `n²` numbers:
/// 512 KiB at 256 shapes); larger worlds test every pair afresh.
pub const GAP_TABLE_SHAPES: usize = 256;

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
        let joints = self.shapes.iter().map(|s| s.joint + 1).max().unwrap_or(0);
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
            posed: vec![false; n],
            planes: vec![(Vec3::z(), 0.0); n],
            halfspaces: vec![None; n],
            aabbs: vec![Aabb::new_invalid(); n],
            local_boxes: self
                .shapes
                .iter()
                .enumerate()
                .map(|(k, s)| (!s.unbounded && !self.composite[k]).then(|| s.shape.compute_local_aabb()))
                .collect(),
            loose: vec![f64::NAN; n],
            joint_pose: vec![Se3::identity(); joints],
            joint_kept: vec![false; joints],
            joint_same: vec![false; joints],
            joint_move: vec![(f64::INFINITY, f64::INFINITY); joints],
            shape_joints: (0..joints).filter(|&j| self.shapes.iter().any(|s| s.joint == j)).collect(),
            travel: vec![0.0; n],
            // (a small world of plane pairs only has no use for it)
            gaps: if n <= GAP_TABLE_SHAPES && self.small.as_ref().is_none_or(|s| s.pairs.iter().any(|p| p.3 == SmallTest::Boxes)) {
                vec![f64::NEG_INFINITY; n * n]
            } else {
                Vec::new()
            },
            moving: Vec::with_capacity(n),
            still: Vec::with_capacity(n),
            order: (0..n).filter(|&k| !self.shapes[k].unbounded).collect(),
            // every pair of shapes (capped at 2^16 for huge worlds, which may then grow it)
            pairs: Vec::with_capacity((n * n.saturating_sub(1) / 2).min(1 << 16)),
            sorted: Vec::with_capacity((n * n.saturating_sub(1) / 2).min(1 << 16)),
            first: vec![0; n + 1],
            manifolds,
            frozen: vec![false; n],
            frames: vec![Se3::identity(); n],
            boxes: BoxManifold::default(),
            epa: if self.may_expand() { super::pairs::warm_epa() } else { EPA::new() },
            band: vec![0.0; n],
            triangles: Vec::with_capacity(triangles.min(4096)),
            kept: (0..if triangles > 0 { n } else { 0 }).map(|k| super::ball_mesh::KeptQuery::with_room(if self.types[k] == ShapeType::Ball { 256 } else { 0 })).collect(),
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
            // a listed world's boxes are all made, its placements kept as the sweep's
            let boxed = (!small.listed).then_some(&small.needs_aabb[..]);
            self.place_shapes(work, o_m_i, margin, boxed);
            self.detect_small(small, work, margin, out);
            return;
        }
        self.place_shapes(work, o_m_i, margin, None);
        self.sweep(work);
        self.plane_pairs(work, margin);
        sort_by_pair(work, n);
        for k in 0..work.sorted.len() {
            let (a, b) = work.sorted[k];
            let Some(mode) = self.pair_mode[a * n + b] else {
                continue;
            };
            self.collide_pair(work, (a, b, mode), margin, out);
        }
    }

    /// Whether shapes `a < b` may touch this step: a mode, not `None`, and not both frozen.
    #[inline]
    fn live(&self, frozen: &[bool], a: usize, b: usize) -> bool {
        let n = self.shapes.len();
        matches!(self.pair_mode[a * n + b], Some(m) if m != ContactMode::None) && !(frozen[a] && frozen[b])
    }

    /// The broad phase of the bounded shapes: sweep and prune along x into `work.pairs`, the
    /// pairs whose boxes meet and that may touch ([`Collider::live`]). The shapes sorted by
    /// their boxes' `mins.x` (a total order, ties broken by index: unique whatever the last
    /// step's was) are split into moving and frozen ones (the order kept in each), and only
    /// moving–moving and moving–frozen pairs are swept: a sleeping body's or the ground's many
    /// shapes (a pot of a hundred convex pieces, a frame of thirty meshes) overlap among
    /// themselves but are never collided with each other.
    fn sweep(&self, work: &mut CollisionWork) {
        let aabbs = &work.aabbs;
        sort_nearly_sorted(&mut work.order, |&a, &b| {
            aabbs[a].mins.x.total_cmp(&aabbs[b].mins.x).then(a.cmp(&b)).is_lt()
        });
        let frozen = &work.frozen;
        let (moving, still) = (&mut work.moving, &mut work.still);
        moving.clear();
        still.clear();
        for &k in &work.order {
            if frozen[k] { still.push(k) } else { moving.push(k) }
        }
        let before = |a: usize, b: usize| aabbs[a].mins.x.total_cmp(&aabbs[b].mins.x).then(a.cmp(&b)).is_lt();
        let pairs = &mut work.pairs;
        pairs.clear();
        // each shape against those of `list` after it in the order, from `list[from..]`
        let mut scan = |a: usize, list: &[usize]| {
            for &b in list {
                if aabbs[b].mins.x > aabbs[a].maxs.x {
                    break;
                }
                if aabbs[a].intersects(&aabbs[b]) && self.live(frozen, a.min(b), a.max(b)) {
                    pairs.push((a.min(b), a.max(b)));
                }
            }
        };
        let mut next = 0;
        for (i, &a) in moving.iter().enumerate() {
            scan(a, &moving[i + 1..]);
            while next < still.len() && before(still[next], a) {
                next += 1;
            }
            scan(a, &still[next..]);
        }
        let mut next = 0;
        for &f in still.iter() {
            while next < moving.len() && before(moving[next], f) {
                next += 1;
            }
            scan(f, &moving[next..]);
        }
    }

    /// The pairs of each unbounded shape (a plane) with every other that may touch
    /// ([`Collider::live`]) into `work.pairs`, but the bounded shapes whose box lies wholly
    /// above a plane beyond the pair's margin ([`box_height`]): they make no contact with it.
    fn plane_pairs(&self, work: &mut CollisionWork, margin: f64) {
        let n = self.shapes.len();
        for u in (0..n).filter(|&k| self.shapes[k].unbounded) {
            let plane = work.halfspaces[u];
            for k in 0..n {
                let (a, b) = (u.min(k), u.max(k));
                if k == u || (self.shapes[k].unbounded && k < u) || !self.live(&work.frozen, a, b) {
                    continue;
                }
                let above = |(normal, offset): (Vec3, f64)| {
                    box_height(&work.aabbs[k], &normal) - offset > self.pair_margin(a, b, margin, &work.band) + SLACK
                };
                if !self.shapes[k].unbounded && plane.is_some_and(above) {
                    continue;
                }
                work.pairs.push((a, b));
            }
        }
    }

    /// Of shapes `a < b`, one unbounded (a plane) and one bounded: the bounded one's box lies
    /// wholly above the plane beyond the pair's margin ([`box_height`], the sweep's test in
    /// [`Collider::plane_pairs`]), so the pair makes no contact. Reads `work.poses`,
    /// `work.aabbs`.
    #[inline]
    fn above_plane(&self, work: &CollisionWork, (a, b): (usize, usize), margin: f64) -> bool {
        let (u, k) = if self.shapes[a].unbounded { (a, b) } else { (b, a) };
        !self.shapes[k].unbounded
            && work.halfspaces[u].is_some_and(|(normal, offset)| {
                box_height(&work.aabbs[k], &normal) - offset > self.pair_margin(a, b, margin, &work.band) + SLACK
            })
    }

    /// The world plane of an unbounded shape `u` at parry pose `pose`: its outward unit normal
    /// and its offset along it (`x · normal = offset` on the plane); None when it is no
    /// half-space.
    pub(super) fn world_plane(&self, u: usize, pose: &PPose) -> Option<(Vec3, f64)> {
        let half = self.shapes[u].shape.as_halfspace()?;
        let normal = from_pvec(pose.rotation * half.normal);
        Some((normal, normal.dot(&from_pvec(pose.translation))))
    }

    /// Each shape's parry pose into `work.poses` (a ball's: its centre, identity rotation; a
    /// capsule's world placement into `work.frames` instead, its box from it: [`capsule_box`]),
    /// and the loosened bounding box of each bounded shape into `work.aabbs`. `boxed`: the
    /// shapes whose box is wanted (a small world's), each shape placed afresh; None: every
    /// shape's box, a shape placed only where its joint's placement (bit for bit) or its
    /// loosening changed since the last call (the static and the sleeping shapes keep theirs:
    /// the same operations on the same numbers give the same bits).
    #[inline]
    fn place_shapes(&self, work: &mut CollisionWork, o_m_i: &[Se3], margin: f64, boxed: Option<&[bool]>) {
        // (a joint without shapes: nothing reads its entries)
        for &j in &work.shape_joints {
            let kept = &mut work.joint_kept[j];
            let same = boxed.is_none() && *kept && same_bits(&o_m_i[j], &work.joint_pose[j]);
            work.joint_same[j] = same;
            if !work.gaps.is_empty() {
                let (x0, x1) = (&work.joint_pose[j], &o_m_i[j]);
                work.joint_move[j] = ((x1.translation - x0.translation).norm(), (x1.rotation - x0.rotation).norm());
            }
            work.joint_pose[j] = o_m_i[j];
            *kept = boxed.is_none();
        }
        for (k, s) in self.shapes.iter().enumerate() {
            // how far any point of the shape may have moved since the last call (its joint's
            // shift, plus its turn's Frobenius norm, which bounds |ΔR x|, times its reach)
            if !work.gaps.is_empty() {
                let (shift, turn) = work.joint_move[s.joint];
                work.travel[k] += shift + turn * self.reach[k];
            }
            let loose = self.margins[k].map_or(margin, |m| (m + work.band[k]).max(margin));
            if work.joint_same[s.joint] && loose.to_bits() == work.loose[k].to_bits() {
                continue;
            }
            work.loose[k] = loose;
            let o = &o_m_i[s.joint];
            if self.types[k] == ShapeType::Capsule {
                // its parry pose only when a pair asks ([`Collider::posed`])
                work.frames[k] = o.compose(&s.placement);
                work.posed[k] = false;
                if boxed.is_none_or(|b| b[k]) {
                    // (its segment and radius kept at load: no shape lookup through parry)
                    work.aabbs[k] = match self.round[k] {
                        Round::Capsule(a, b, r) => capsule_box(&work.frames[k], (&a, &b, r)),
                        _ => Aabb::new_invalid(),
                    }
                    .loosened(loose);
                }
                continue;
            }
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
            if matches!(self.round[k], Round::Plane) {
                work.halfspaces[k] = self.world_plane(k, &work.poses[k]);
                if let Some((normal, offset)) = work.halfspaces[k] {
                    work.planes[k] = (normal / normal.norm(), offset);
                }
            }
            if !s.unbounded && boxed.is_none_or(|b| b[k]) {
                let hull = self.types[k] == ShapeType::ConvexPolyhedron;
                let aabb = match work.local_boxes[k] {
                    Some(b) if hull => b.transform_by(&work.poses[k]),
                    _ => s.shape.compute_aabb(&work.poses[k]),
                };
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
    /// `work.aabbs` (of the shapes `needs_aabb` names), `work.frozen`; writes `out`. A listed
    /// world ([`SmallWorld::listed`]) tests a plane's pairs as the sweep does first
    /// ([`Collider::above_plane`]): its boxes are all made.
    fn detect_small(&self, small: &SmallWorld, work: &mut CollisionWork, margin: f64, out: &mut Vec<RawContact>) {
        // (one frozen shape or none, the ground's: no pair is frozen on both sides)
        let frozen_pairs = work.frozen.iter().filter(|&&f| f).count() > 1;
        for &(a, b, mode, test) in &small.pairs {
            if frozen_pairs && work.frozen[a] && work.frozen[b] {
                continue;
            }
            match test {
                SmallTest::Balls(ra, rb) => {
                    let centres = (&from_pvec(work.poses[a].translation), &from_pvec(work.poses[b].translation));
                    self.balls((a, ra), (b, rb), mode, self.pair_margin(a, b, margin, &work.band), centres, out);
                }
                SmallTest::Boxes if !work.aabbs[a].intersects(&work.aabbs[b]) => {}
                SmallTest::Unbounded if small.listed && self.above_plane(work, (a, b), margin) => {}
                SmallTest::Boxes | SmallTest::Unbounded => self.collide_pair(work, (a, b, mode), margin, out),
            }
        }
    }

    /// The narrow phase of shapes `a < b` (contact mode `mode`) at their poses in
    /// `work.poses`: their contacts, in manifold order, appended to `out`.
    #[inline]
    fn collide_pair(&self, work: &mut CollisionWork, (a, b, mode): (usize, usize, ContactMode), margin: f64, out: &mut Vec<RawContact>) {
        let margin = self.pair_margin(a, b, margin, &work.band);
        if self.plane_round_pair((&work.poses, &work.frames, &work.planes), (a, b, mode), margin, out) {
            return;
        }
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
        if work.gaps.get(a * self.shapes.len() + b).is_some_and(|g| g - (work.travel[a] + work.travel[b]) > margin + SLACK) {
            // apart by more than their travel since a test proved their gap
            return;
        }
        let (pa, pb) = (self.posed(work, a), self.posed(work, b));
        let pos12 = pa.inv_mul(&pb);
        let (ball_a, ball_b) = (self.ball_radius(a), self.ball_radius(b));
        let centre = |p: &PPose| from_pvec(p.translation);
        if let (Some(ra), Some(rb)) = (ball_a, ball_b) {
            self.balls((a, ra), (b, rb), mode, margin, (&centre(&pa), &centre(&pb)), out);
            return;
        }
        if let Some(gap) = self.apart(work, (a, b), &pos12, margin) {
            if let Some(g) = work.gaps.get_mut(a * self.shapes.len() + b) {
                *g = gap + (work.travel[a] + work.travel[b]);
            }
            return;
        }
        self.collide_parry(work, (a, b, mode), margin, (&pa, &pb, &pos12), out);
    }

    /// The parry pose of shape `k`: a capsule's made from its world placement on the first
    /// call of a step that asks ([`to_parry`], what every other shape's is made by).
    #[inline]
    pub(super) fn posed(&self, work: &mut CollisionWork, k: usize) -> PPose {
        if self.types[k] == ShapeType::Capsule && !work.posed[k] {
            work.poses[k] = to_parry(&work.frames[k]);
            work.posed[k] = true;
        }
        work.poses[k]
    }

    /// Bounded convex shapes `a`, `b` (`pos12`: `b`'s pose in `a`'s frame) proven farther
    /// apart than `margin`: a ball's centre far from the other's box in its own frame
    /// ([`ball_apart`]), else the two boxes apart along a separating axis ([`boxes_apart`]);
    /// the gap proven (at most their distance), None when not proven.
    #[inline]
    fn apart(&self, work: &CollisionWork, (a, b): (usize, usize), pos12: &PPose, margin: f64) -> Option<f64> {
        let (Some(box_a), Some(box_b)) = (&work.local_boxes[a], &work.local_boxes[b]) else {
            return None;
        };
        let centre = |p: &PPose| from_pvec(p.translation);
        match (self.ball_radius(a), self.ball_radius(b)) {
            (None, Some(rb)) => ball_apart(box_a, &centre(pos12), rb, margin),
            (Some(ra), None) => ball_apart(box_b, &centre(&pos12.inverse()), ra, margin),
            _ => boxes_apart(box_a, box_b, pos12, margin),
        }
    }

    /// The radius of shape `k` when it is a ball.
    #[inline]
    fn ball_radius(&self, k: usize) -> Option<f64> {
        (self.types[k] == ShapeType::Ball).then(|| self.shapes[k].shape.as_ball().map(|b| b.radius)).flatten()
    }

    /// Two balls `(a, ra)`, `(b, rb)` (centres `ca`, `cb`, world) closer than `margin`: their
    /// contact by the closed form [`ball_ball`] (parry's result bit for bit) into `out`.
    #[inline]
    fn balls(&self, (a, ra): (usize, f64), (b, rb): (usize, f64), mode: ContactMode, margin: f64, (ca, cb): (&Vec3, &Vec3), out: &mut Vec<RawContact>) {
        if let Some((point, normal, depth)) = ball_ball(ca, ra, cb, rb, margin) {
            let features = (BALL_FEATURE, BALL_FEATURE);
            out.push(RawContact { shape_a: a, shape_b: b, point, normal, depth, features, mode });
        }
    }

    /// A ball and a triangle mesh without pseudo-normals (shapes `a < b` at `pa`, `pb`): their
    /// contacts by the closed form [`ball_mesh`] into `out`; false (nothing written) for any
    /// other pair, or when the closed form leaves the pair to parry.
    #[inline]
    fn ball_on_mesh(&self, work: &mut CollisionWork, (a, b, mode): (usize, usize, ContactMode), margin: f64, (pa, pb, pos12): (&PPose, &PPose, &PPose), out: &mut Vec<RawContact>) -> bool {
        let mesh_first = match (self.types[a], self.types[b]) {
            (ShapeType::TriMesh, ShapeType::Ball) => true,
            (ShapeType::Ball, ShapeType::TriMesh) => false,
            _ => return false,
        };
        let (m, o, mp, bp) = if mesh_first { (a, b, pa, pb) } else { (b, a, pb, pa) };
        let (Some(mesh), Some(r)) = (self.shapes[m].shape.as_trimesh(), self.ball_radius(o)) else {
            return false;
        };
        if mesh.pseudo_normals().is_some() {
            return false;
        }
        let kept = &mut work.kept[o];
        ball_mesh((mesh, m, mp), (&*self.shapes[o].shape.0, r, bp), mesh_first, pos12, margin, (&mut work.triangles, kept), (a, b, mode), out)
    }

    /// parry's narrow phase of shapes `a < b` (contact mode `mode`, contact distance `margin`)
    /// at their parry poses `pa`, `pb` (`pos12` = `pa⁻¹ pb`): their contacts, in manifold order,
    /// appended to `out`.
    fn collide_parry(&self, work: &mut CollisionWork, (a, b, mode): (usize, usize, ContactMode), margin: f64, (pa, pb, pos12): (&PPose, &PPose, &PPose), out: &mut Vec<RawContact>) {
        let (pa, pb) = (*pa, *pb);
        if self.closed_ball_mesh && self.ball_on_mesh(work, (a, b, mode), margin, (&pa, &pb, pos12), out) {
            return;
        }
        let Some(count) = narrow_phase(
            pos12,
            (&self.shapes[a].shape, self.types[a]),
            (&self.shapes[b].shape, self.types[b]),
            self.composite[a] || self.composite[b],
            (margin, self.hull_merge(a, b)),
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

/// Two placements equal bit for bit (`==` would take -0 for 0).
#[inline]
fn same_bits(x: &Se3, y: &Se3) -> bool {
    let bits = |v: &f64| v.to_bits();
    x.rotation.iter().map(bits).eq(y.rotation.iter().map(bits)) && x.translation.iter().map(bits).eq(y.translation.iter().map(bits))
}

/// `work.pairs` (each pair once) sorted by shape pair into `work.sorted` (the contacts'
/// order): a counting sort by the first shape, then each first shape's few partners by
/// insertion. `n` shapes.
fn sort_by_pair(work: &mut CollisionWork, n: usize) {
    let (pairs, first, sorted) = (&work.pairs, &mut work.first, &mut work.sorted);
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

    /// A world of `n` shapes of every convex kind (balls, boxes, capsules, cylinders, cones,
    /// convex hulls of random points) two to a joint, and a tilted plane on joint 0; random
    /// joint placements crowd them into a 0.5 m cube reaching below the plane.
    fn mixed(n: usize, seed: u64) -> (Vec<ColShape>, Vec<Se3>) {
        let mut rng = SplitMix64::new(seed);
        let plane = SharedShape::halfspace(PVec::new(0.0, 0.0, 1.0));
        let tilt = Se3::new(exp3(&Vec3::new(0.05, -0.03, 0.0)), Vec3::new(0.0, 0.0, 0.05));
        let mut shapes = vec![ColShape { body: 0, joint: 0, placement: tilt, shape: plane, material: DEFAULT_MATERIAL, unbounded: true }];
        let mut o_m_i = vec![Se3::identity()];
        for k in 1..=n {
            let mut s = |lo: f64, hi: f64| rng.range(lo, hi);
            let shape = match k % 6 {
                0 => SharedShape::ball(s(0.01, 0.06)),
                1 => SharedShape::cuboid(s(0.01, 0.08), s(0.01, 0.08), s(0.01, 0.08)),
                2 => SharedShape::capsule_z(s(0.01, 0.08), s(0.01, 0.04)),
                3 => SharedShape::cylinder(s(0.01, 0.08), s(0.01, 0.05)),
                4 => SharedShape::cone(s(0.01, 0.08), s(0.01, 0.05)),
                _ => {
                    let points: Vec<PVec> = (0..12).map(|_| PVec::new(s(-0.07, 0.07), s(-0.05, 0.05), s(-0.03, 0.03))).collect();
                    SharedShape::convex_hull(&points).expect("12 random points span a solid")
                }
            };
            let placement = Se3::new(exp3(&Vec3::new(rng.range(-1.0, 1.0), 0.3, -0.2)), Vec3::new(0.02, rng.range(-0.05, 0.05), 0.0));
            let joint = k.div_ceil(2);
            shapes.push(ColShape { body: joint, joint, placement, shape, material: DEFAULT_MATERIAL, unbounded: false });
            if joint == o_m_i.len() {
                let r = exp3(&Vec3::new(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)));
                o_m_i.push(Se3::new(r, Vec3::new(rng.range(0.0, 0.5), rng.range(0.0, 0.5), rng.range(-0.05, 0.45))));
            }
        }
        (shapes, o_m_i)
    }

    /// The sweep over moving and frozen shapes, the planes' box test, the oriented-box and
    /// ball–box rejections, the closed-form ball pairs and the kept placements find exactly
    /// parry's contacts of every pair that may touch (each pair's narrow phase called
    /// directly), bit for bit and in the same order (a plane's with a ball or a capsule, the
    /// closed form's, to 1e-12 m); and the rejections do reject. The same for the listed
    /// pairs of a world of at most `LISTED_PAIRS` pairs (288 here) and for the sweep.
    #[test]
    fn detect_finds_every_pairs_parry_contacts_bit_for_bit() {
        let (mut found, mut rejected, mut planes) = (0, 0, 0);
        for (seed, listed) in (0..30).flat_map(|seed| [(seed, true), (seed, false)]) {
            let (shapes, mut o_m_i) = mixed(24, seed);
            let n = shapes.len();
            // a body's own shapes never collide, as in a robot
            let mut c = Collider::new(shapes, |p, q| (p.body != q.body).then_some(ContactMode::Lcp));
            assert!(!c.is_small() && c.is_listed(), "288 pairs");
            if !listed {
                c.small = None;
            }
            let mut w = c.work();
            let mut brute = c.work();
            let mut rng = SplitMix64::new(seed + 1000);
            // the joints moved between rounds (none, a little, more), so the kept gaps are
            // used, outlived and renewed
            for (round, margin, moved) in [(0, 0.01, 0.0), (1, 0.01, 0.0), (2, 0.01, 0.002), (3, 0.03, 0.01), (4, 0.03, 0.0), (5, 0.03, 0.05)] {
                for x in o_m_i.iter_mut().skip(1) {
                    let mut r = || rng.range(-moved, moved);
                    *x = Se3::new(exp3(&Vec3::new(r(), r(), r())) * x.rotation, x.translation + Vec3::new(r(), r(), r()));
                }
                // frozen: none, then the plane and every third shape (a sleeping body's)
                let frozen = |k: usize| round >= 3 && (k == 0 || k.is_multiple_of(3));
                for k in 0..n {
                    w.frozen[k] = frozen(k);
                }
                let mut got = Vec::new();
                c.detect(&mut w, &o_m_i, margin, &mut got);
                c.place_shapes(&mut brute, &o_m_i, margin, Some(&vec![true; n]));
                let mut want = Vec::new();
                for a in 0..n {
                    for b in a + 1..n {
                        let Some(mode) = c.pair_mode(a, b).filter(|_| !(frozen(a) && frozen(b))) else { continue };
                        if c.half_extents[a].is_some() && c.half_extents[b].is_some() {
                            c.collide_pair(&mut brute, (a, b, mode), margin, &mut want);
                            continue;
                        }
                        let (pa, pb) = (c.posed(&mut brute, a), c.posed(&mut brute, b));
                        let before = want.len();
                        c.collide_parry(&mut brute, (a, b, mode), margin, (&pa, &pb, &pa.inv_mul(&pb)), &mut want);
                        rejected += usize::from(want.len() == before && c.apart(&brute, (a, b), &pa.inv_mul(&pb), margin).is_some());
                    }
                }
                assert_eq!(got.len(), want.len(), "seed {seed} round {round}");
                for (x, y) in got.iter().zip(&want) {
                    assert_eq!((x.shape_a, x.shape_b, x.features, x.mode), (y.shape_a, y.shape_b, y.features, y.mode));
                    if c.plane_round_pair((&brute.poses, &brute.frames, &brute.planes), (x.shape_a, x.shape_b, x.mode), 0.0, &mut Vec::new()) {
                        // a plane and a ball or capsule: the closed form, parry's to rounding
                        let near = (x.point - y.point).norm() + (x.normal - y.normal).norm() + (x.depth - y.depth).abs();
                        assert!(near < 1e-12, "seed {seed} round {round}: {near}");
                        planes += 1;
                        continue;
                    }
                    let bits = |c: &RawContact| [c.point, c.normal].map(|v| v.map(f64::to_bits)).map(|v| (v.x, v.y, v.z));
                    assert_eq!(bits(x), bits(y), "seed {seed} round {round}");
                    assert_eq!(x.depth.to_bits(), y.depth.to_bits());
                }
                found += got.len();
            }
        }
        assert!(found > 600, "contacts met: {found}");
        assert!(rejected > 600, "pairs rejected before the narrow phase: {rejected}");
        assert!(planes > 60, "plane contacts of balls and capsules: {planes}");
    }

    /// More candidate pairs than [`SMALL_WORLD_PAIRS`]: listed; more than `LISTED_PAIRS`: the
    /// sweep.
    #[test]
    fn larger_worlds_list_their_pairs_then_sweep() {
        let c = Collider::new(crowd(9, 1).0, |_, _| Some(ContactMode::Lcp));
        assert!(!c.is_small() && c.is_listed(), "45 pairs");
        let c = Collider::new(crowd(32, 1).0, |_, _| Some(ContactMode::Lcp));
        assert!(!c.is_small() && !c.is_listed(), "528 pairs");
    }
}
