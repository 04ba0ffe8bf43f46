//! The collider: a world's shapes and which pairs may touch (the pair table as built, the rules
//! set while running, the small world's pair list), MJCF margins and pair materials; its
//! detection over reusable buffers is in `detect.rs`.

use karakuri::spatial::Vec3;
use parry3d_f64::shape::ShapeType;

use crate::scene::{ContactMode, Material};
use super::{mean_material, ColShape};
use super::shapes::from_pvec;

/// The collision description of a world: its shapes and which pairs may touch (built once).
#[derive(Clone)]
pub struct Collider {
    /// Every collision shape.
    pub shapes: Vec<ColShape>,
    /// Contact mode of each candidate pair `(i, j)`, `i < j` (`n x n`, upper triangle); pairs
    /// not listed never collide. What the step reads: [`Collider::refresh`] derives it from
    /// `base_mode` and the runtime rules.
    pub(super) pair_mode: Vec<Option<ContactMode>>,
    /// The pair table as built (`n x n`): what runtime changes start from; `None` pairs
    /// (the load's filters) stay off whatever is set while running.
    base_mode: Vec<Option<ContactMode>>,
    /// Body pairs `(a, b)`, `a < b`, whose mode was set while running (sorted, the last
    /// setting of a pair kept).
    body_modes: Vec<((usize, usize), ContactMode)>,
    /// Groups of bodies whose pairs among themselves are off (a robot's self-collision
    /// switched off while running).
    no_self: Vec<Vec<usize>>,
    /// Each shape's parry type `(nshapes)`, looked up once (a ball's contacts do not depend
    /// on its orientation, so its parry pose is its centre with the identity rotation: no
    /// rotation-to-quaternion conversion per step).
    pub(super) types: Vec<ShapeType>,
    /// Each shape is composite (a triangle mesh...): parry's multi-manifold dispatch
    /// `(nshapes)`.
    pub(super) composite: Vec<bool>,
    /// Each shape's role in the closed-form plane pairs ([`Round`]) `(nshapes)`.
    pub(super) round: Vec<Round>,
    /// A small or listed world's pairs ([`LISTED_PAIRS`] candidate pairs or fewer): every pair
    /// that may touch, in shape-pair order, tested directly instead of through the sweep and
    /// prune (decided once here; `None`: the sweep). See [`Collider::detect_small`].
    pub(super) small: Option<SmallWorld>,
    /// Each box's half extents (None: not a box) `(nshapes)`: two boxes go to [`box_box`].
    pub(super) half_extents: Vec<Option<Vec3>>,
    /// The pairs `(i, j)`, `i < j`, whose material is not the mean of their shapes' (an MJCF
    /// robot's: MuJoCo's friction rule, `<pair>`s), sorted; empty in most worlds.
    materials: Vec<((usize, usize), Material)>,
    /// Where each pair `(i, j)`, `i < j`, finds its own material in `materials` (`n x n`,
    /// upper triangle; [`NO_MATERIAL`]: the mean of its shapes'); empty when `materials` is
    /// or above [`MATERIAL_TABLE_SHAPES`] shapes (a binary search in `materials` then): a
    /// contact's material is a lookup, not a binary search (MJCF robots list most pairs).
    material_at: Vec<u32>,
    /// Each shape's MuJoCo `margin` (an MJCF geom's; None: the step's margin applies)
    /// `(nshapes)`: a pair of two such shapes makes contacts closer than the larger margin
    /// plus their motion bands ([`Collider::pair_margin`]); all None in most worlds.
    pub(super) margins: Vec<Option<f64>>,
    /// The pairs `(i, j)`, `i < j`, of MJCF geoms with their own `margin` (`<pair>`s), sorted.
    pub(super) own_margins: Vec<((usize, usize), f64)>,
    /// How far each shape reaches from its joint's origin (its bounding sphere's far side)
    /// `(nshapes)`: with the joint's speeds, how far it may move in a step ([`Collider::set_motion`]).
    pub(super) reach: Vec<f64>,
    /// A ball against a triangle mesh takes the closed form [`super::ball_mesh::ball_mesh`]
    /// (true; false: parry's path, which the tests compare it with).
    pub(super) closed_ball_mesh: bool,
}

/// At most this many candidate pairs, a world's pairs are tested one by one
/// ([`Collider::detect_small`]): the sweep's sorting and bookkeeping cost more than a few
/// box tests.
pub const SMALL_WORLD_PAIRS: usize = 32;

/// At most this many candidate pairs, a world's pairs are listed and tested one by one as a
/// small world's, its placements kept as the sweep's (`SmallWorld::listed`): a box test per
/// listed pair (a few dozen instructions) costs less than the sweep's sorting, scan and pair
/// sort (0089: the shadow hand, 32 shapes and 249 pairs).
pub const LISTED_PAIRS: usize = 512;

/// A pair without its own material in [`Collider::material_at`].
const NO_MATERIAL: u32 = u32::MAX;

/// The most shapes whose pair materials are found through the `n x n` index
/// `Collider::material_at` (4 bytes a pair: 1 MiB at 512 shapes); a larger world with pair
/// materials searches its sorted list instead (the same material).
pub const MATERIAL_TABLE_SHAPES: usize = 512;

/// A convex polyhedron's (a mesh's hull's) points against a plane closer together than this
/// fraction of its bounding radius are one contact ([`Round::Hull`], `pairs::hull_points`),
/// as MuJoCo's plane–mesh contacts skip vertices nearer its first than 0.3 of the geom's
/// bounding radius (its `tolplanemesh`). A hull tessellates a surface the mesh approximates:
/// where a round foot or shin rests on a floor, its support face is one small facet (a
/// triangle of a few mm on the Go2's calves), whose three points are redundant rows (lever
/// arms of a few mm) that make the solve nearly singular and tip a robot's island past the
/// exact solve's rows (record 0127). A hull's real faces (a box-like trunk's bottom) are
/// wider than this and keep their corners; boxes and cylinders (parry's own shapes) keep
/// every vertex of their support feature.
pub(super) const HULL_MERGE: f64 = 0.3;

/// A shape's role in the closed-form plane pairs (`Collider::plane_round_pair`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Round {
    /// A half-space.
    Plane,
    /// A ball of this radius.
    Ball(f64),
    /// A capsule: its segment's ends in its frame, its radius.
    Capsule(Vec3, Vec3, f64),
    /// A convex polyhedron (a mesh's hull): the distance within which its points against a
    /// plane are one contact ([`HULL_MERGE`] of its bounding radius, `pairs::plane_convex`).
    Hull(f64),
    /// Any other shape.
    Other,
}

impl Round {
    fn of(s: &ColShape) -> Round {
        if let Some(c) = s.shape.as_capsule() {
            Round::Capsule(from_pvec(c.segment.a), from_pvec(c.segment.b), c.radius)
        } else if let Some(b) = s.shape.as_ball() {
            Round::Ball(b.radius)
        } else if s.shape.as_halfspace().is_some() {
            Round::Plane
        } else if let Some(hull) = s.shape.as_convex_polyhedron() {
            Round::Hull(HULL_MERGE * hull.local_bounding_sphere().radius)
        } else {
            Round::Other
        }
    }
}

/// How [`Collider::detect_small`] tests one candidate pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum SmallTest {
    /// Two balls of radii `(ra, rb)`: the closed form [`ball_ball`] (its distance test is the
    /// broad phase too).
    Balls(f64, f64),
    /// Two bounded shapes: their loosened boxes, then the narrow phase.
    Boxes,
    /// One shape is unbounded (a plane): the narrow phase.
    Unbounded,
}

/// The pairs of a small world (see [`Collider::small`]).
#[derive(Clone)]
pub(super) struct SmallWorld {
    /// Every pair `(a, b, mode, test)`, `a < b`, whose mode is not `None`, by shape pair.
    pub(super) pairs: Vec<(usize, usize, ContactMode, SmallTest)>,
    /// Each shape's loosened bounding box is read by some pair (`(nshapes)`; a world of balls
    /// needs none).
    pub(super) needs_aabb: Vec<bool>,
    /// More pairs than [`SMALL_WORLD_PAIRS`] (at most [`LISTED_PAIRS`]): every shape's box
    /// is made, the placements are kept while a joint stays (as the sweep's), and a plane's
    /// pairs take the sweep's box test first.
    pub(super) listed: bool,
}

impl Collider {
    /// `pair_mode(a, b)` gives the mode of two shapes (None: never collide).
    pub fn new(
        shapes: Vec<ColShape>,
        pair_mode: impl Fn(&ColShape, &ColShape) -> Option<ContactMode>,
    ) -> Self {
        Self::by_index(shapes, |s, i, j| pair_mode(&s[i], &s[j]))
    }

    /// `pair_mode(shapes, i, j)` gives the mode of shapes `i < j` (None: never collide).
    pub fn by_index(
        shapes: Vec<ColShape>,
        pair_mode: impl Fn(&[ColShape], usize, usize) -> Option<ContactMode>,
    ) -> Self {
        let n = shapes.len();
        let mut modes = vec![None; n * n];
        for i in 0..n {
            for j in i + 1..n {
                modes[i * n + j] = pair_mode(&shapes, i, j);
            }
        }
        let types: Vec<ShapeType> = shapes.iter().map(|s| s.shape.shape_type()).collect();
        let small = SmallWorld::of(&shapes, &modes);
        Collider {
            base_mode: modes.clone(),
            body_modes: vec![],
            no_self: vec![],
            pair_mode: modes,
            composite: shapes
                .iter()
                .map(|s| s.shape.as_composite_shape().is_some() || s.shape.shape_type() == ShapeType::TriMesh)
                .collect(),
            round: shapes.iter().map(Round::of).collect(),
            types,
            small,
            half_extents: shapes
                .iter()
                .map(|s| s.shape.as_cuboid().map(|c| from_pvec(c.half_extents)))
                .collect(),
            margins: vec![None; shapes.len()],
            reach: shapes
                .iter()
                .map(|s| {
                    let b = s.shape.compute_local_bounding_sphere();
                    let c = s.placement.transform_point(&from_pvec(b.center));
                    if s.unbounded { 0.0 } else { c.norm() + b.radius }
                })
                .collect(),
            shapes,
            materials: vec![],
            material_at: vec![],
            own_margins: vec![],
            closed_ball_mesh: true,
        }
    }

    /// The same collider, shapes `k` with `margins[k] = Some(margin)` taking MuJoCo's contact
    /// distance (MJCF geoms), pairs `((i, j), margin)` (`i < j`) their own.
    pub fn with_margins(mut self, margins: Vec<Option<f64>>, mut own: Vec<((usize, usize), f64)>) -> Self {
        own.sort_by_key(|m| m.0);
        self.margins = margins;
        self.margins.resize(self.shapes.len(), None);
        self.own_margins = own;
        self
    }

    /// The same collider, pairs `((i, j), material)` (`i < j`) taking their own material
    /// instead of the mean of their shapes'.
    pub fn with_pair_materials(mut self, mut materials: Vec<((usize, usize), Material)>) -> Self {
        materials.sort_by_key(|m| m.0);
        self.materials = materials;
        self.index_materials();
        self
    }

    /// `material_at` from `materials` (keys `(i, j)`, `i < j`, each pair once, as the
    /// collider's compile lists them).
    fn index_materials(&mut self) {
        let n = self.shapes.len();
        self.material_at.clear();
        if !self.materials.is_empty() && n <= MATERIAL_TABLE_SHAPES {
            self.material_at.resize(n * n, NO_MATERIAL);
            for (k, &((i, j), _)) in self.materials.iter().enumerate() {
                if i < j && j < n {
                    self.material_at[i * n + j] = k as u32;
                }
            }
        }
    }

    /// The material of a contact between shapes `i` and `j`: the pair's own, else the mean of
    /// theirs ([`mean_material`]).
    #[inline]
    pub fn material(&self, i: usize, j: usize) -> Material {
        let n = self.shapes.len();
        let key = (i.min(j), i.max(j));
        let own = if self.material_at.is_empty() {
            // no index (no pair materials, or a large world): the last entry of the key, the
            // one the index keeps
            let k = self.materials.partition_point(|m| m.0 <= key);
            (k > 0 && self.materials[k - 1].0 == key).then(|| k - 1)
        } else {
            Some(self.material_at[key.0 * n + key.1]).filter(|&k| k != NO_MATERIAL).map(|k| k as usize)
        };
        match own {
            Some(k) => self.materials[k].1,
            None => mean_material(&self.shapes[i].material, &self.shapes[j].material),
        }
    }

    /// Sets the contact mode of every shape pair of a body of `a` with a body of `b` that the
    /// built table lets collide, and refreshes the table; returns how many shape pairs it
    /// reaches (allocates: not in a step).
    pub fn set_body_modes(&mut self, a: &[usize], b: &[usize], mode: ContactMode) -> usize {
        for &x in a {
            for &y in b.iter().filter(|&&y| y != x) {
                let key = (x.min(y), x.max(y));
                match self.body_modes.binary_search_by_key(&key, |m| m.0) {
                    Ok(k) => self.body_modes[k].1 = mode,
                    Err(k) => self.body_modes.insert(k, (key, mode)),
                }
            }
        }
        self.refresh();
        self.count_pairs(|p, q| (a.contains(&p) && b.contains(&q)) || (a.contains(&q) && b.contains(&p)))
    }

    /// Turns the pairs among `bodies` off (`on = false`) or back to their modes (`on`), and
    /// refreshes the table; returns how many shape pairs it reaches.
    pub fn set_self_collision(&mut self, bodies: &[usize], on: bool) -> usize {
        let mut group = bodies.to_vec();
        group.sort_unstable();
        group.dedup();
        self.no_self.retain(|g| *g != group);
        if !on {
            self.no_self.push(group.clone());
        }
        self.refresh();
        self.count_pairs(|p, q| group.binary_search(&p).is_ok() && group.binary_search(&q).is_ok())
    }

    /// Sets the material of every shape of `bodies` (their pairs' own materials dropped).
    pub fn set_body_material(&mut self, bodies: &[usize], material: Material) {
        for s in self.shapes.iter_mut().filter(|s| bodies.contains(&s.body)) {
            s.material = material;
        }
        let shapes = &self.shapes;
        self.materials.retain(|((i, j), _)| !bodies.contains(&shapes[*i].body) && !bodies.contains(&shapes[*j].body));
        self.index_materials();
    }

    /// The shape pairs the built table lets collide whose bodies `(p, q)` satisfy `of`.
    fn count_pairs(&self, of: impl Fn(usize, usize) -> bool) -> usize {
        let n = self.shapes.len();
        (0..n * n)
            .filter(|&ij| self.base_mode[ij].is_some() && of(self.shapes[ij / n].body, self.shapes[ij % n].body))
            .count()
    }

    /// Derives the pair table the step reads from the built one and the rules set while
    /// running (a self-collision switch off wins over a pair's mode), and the small world's
    /// pair list from it: every change goes through here, so nothing the step reads is
    /// left over from before.
    fn refresh(&mut self) {
        let n = self.shapes.len();
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (self.shapes[i].body, self.shapes[j].body);
                let key = (a.min(b), a.max(b));
                let off = self.no_self.iter().any(|g| g.binary_search(&a).is_ok() && g.binary_search(&b).is_ok());
                let set = self.body_modes.binary_search_by_key(&key, |m| m.0).ok().map(|k| self.body_modes[k].1);
                self.pair_mode[i * n + j] = match self.base_mode[i * n + j] {
                    Some(_) if off => None,
                    Some(m) => Some(set.unwrap_or(m)),
                    None => None,
                };
            }
        }
        // fewer pairs may make a small world (the same contacts either way)
        self.small = SmallWorld::of(&self.shapes, &self.pair_mode);
    }

    /// Whether the world's pairs are tested one by one ([`Collider::detect_small`]) rather
    /// than through the sweep and prune, each shape placed afresh ([`SMALL_WORLD_PAIRS`]).
    pub fn is_small(&self) -> bool {
        self.small.as_ref().is_some_and(|s| !s.listed)
    }

    /// Whether the world's pairs are listed and tested one by one with the sweep's kept
    /// placements (more than [`SMALL_WORLD_PAIRS`], at most [`LISTED_PAIRS`]).
    pub fn is_listed(&self) -> bool {
        self.small.as_ref().is_some_and(|s| s.listed)
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
}

impl SmallWorld {
    /// The small-world pairs of shapes `shapes` (pair modes `modes`, `n x n` upper triangle),
    /// listed above [`SMALL_WORLD_PAIRS`] candidate pairs, `None` above [`LISTED_PAIRS`].
    pub(super) fn of(shapes: &[ColShape], modes: &[Option<ContactMode>]) -> Option<SmallWorld> {
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
                if pairs.len() > LISTED_PAIRS {
                    return None;
                }
            }
        }
        let listed = pairs.len() > SMALL_WORLD_PAIRS;
        Some(SmallWorld { pairs, needs_aabb, listed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::DEFAULT_MATERIAL;
    use karakuri::spatial::Se3;
    use parry3d_f64::shape::SharedShape;

    /// `n` balls, shape `k` of friction `k / n`.
    fn balls(n: usize) -> Vec<ColShape> {
        (0..n)
            .map(|k| ColShape {
                body: k,
                joint: k,
                placement: Se3::identity(),
                shape: SharedShape::ball(0.1),
                material: Material { static_friction: k as f64 / n as f64, ..DEFAULT_MATERIAL },
                unbounded: false,
            })
            .collect()
    }

    /// A world above [`MATERIAL_TABLE_SHAPES`] shapes keeps no `n x n` index of its pair
    /// materials (it would take `4 n²` bytes) and finds the same materials as a small world's
    /// index: a pair's own (the last given of a pair listed twice), else the mean of its shapes'.
    #[test]
    fn pair_materials_of_a_large_world_are_found_without_the_index() {
        let own = |k: usize| Material { static_friction: 2.0 + k as f64, dynamic_friction: 0.3, restitution: 0.1 };
        for n in [40, MATERIAL_TABLE_SHAPES + 40] {
            let list: Vec<((usize, usize), Material)> =
                (0..n / 3).map(|k| ((k, 3 * k + 1), own(k))).chain([((0, 1), own(999))]).collect();
            let c = Collider::new(balls(n), |_, _| Some(ContactMode::Lcp)).with_pair_materials(list);
            assert_eq!(c.material_at.is_empty(), n > MATERIAL_TABLE_SHAPES);
            for i in 0..n {
                for j in (0..n).step_by(7).chain([3 * i + 1]).filter(|&j| j < n && j != i) {
                    let want = match (i.min(j), i.max(j)) {
                        (0, 1) => own(999),
                        (a, b) if b == 3 * a + 1 && a < n / 3 => own(a),
                        _ => mean_material(&c.shapes[i].material, &c.shapes[j].material),
                    };
                    assert_eq!(c.material(i, j), want, "{n} shapes, pair ({i}, {j})");
                }
            }
        }
    }
}
