//! Narrow-phase pair functions: ball–ball in closed form, a plane against a convex shape, parry's
//! manifolds for the rest, and `four_of`, which keeps four points of a larger contact polygon.

use karakuri::spatial::Vec3;
use parry3d_f64::math::Pose as PPose;
use parry3d_f64::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher, TrackedContact};
use parry3d_f64::shape::{PackedFeatureId, PolygonalFeature, ShapeType, SharedShape};

/// The feature both sides of a ball–ball contact carry: parry's `PackedFeatureId::face(0)`
/// (the face header, code 0), which its manifold gives.
pub(super) const BALL_FEATURE: u32 = 0b11 << 30;

/// Two balls (centres `ca`, `cb`, radii `ra`, `rb`, world) closer than `margin`: the contact
/// `(point, normal from A to B, depth)` as parry's ball–ball manifold gives it through
/// [`Collider::collide_pair`] (the same operations in the same order: the midpoint of the two
/// surface points, the normal renormalised), without its dispatch; `None` beyond `margin`.
#[inline]
pub(super) fn ball_ball(ca: &Vec3, ra: f64, cb: &Vec3, rb: f64, margin: f64) -> Option<(Vec3, Vec3, f64)> {
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
pub(super) fn manifold_with_room() -> ContactManifold<(), ()> {
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
pub(super) fn narrow_phase(
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
pub(super) fn four_of(
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
