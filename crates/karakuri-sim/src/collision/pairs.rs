//! Narrow-phase pair functions: ball–ball in closed form, a plane against a convex shape, parry's
//! manifolds for the rest, and `four_of`, which keeps four points of a larger contact polygon.

use karakuri::spatial::{Se3, Vec3};

use crate::scene::ContactMode;
use super::collider::{Collider, Round};
use super::shapes::from_pvec;
use super::RawContact;
use parry3d_f64::bounding_volume::BoundingVolume;
use parry3d_f64::math::Pose as PPose;
use parry3d_f64::query::epa::EPA;
use parry3d_f64::query::gjk::{self, CsoPoint, GJKResult, VoronoiSimplex};
use parry3d_f64::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher, TrackedContact};
use parry3d_f64::shape::{PackedFeatureId, PolygonalFeature, PolygonalFeatureMap, Shape, ShapeType, SharedShape, TriMesh};

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

/// A ball or a capsule against a plane in closed form, in world coordinates: the plane
/// `x · normal = offset` (`normal` unit, pointing out of the solid), the shape's segment ends
/// `ends` (a ball: its centre twice, only the first kept) and its radius. For each end `p` within
/// `margin` of the plane, in the ends' order, `emit(end, point, depth)` with the contact point
/// midway between the two surfaces and the depth (positive when overlapping).
///
/// Derivation. A capsule is the set of points within `radius` of its segment; the segment's
/// height above the plane `h(s) = normal · p(s) − offset` is affine along it, so its lowest
/// points are among its ends, and the points of the capsule nearest the plane are `p − radius
/// normal` for the lowest end `p` (a ball: its centre). The gap of an end is `h − radius`; its
/// point on the plane is `p − h normal` (the foot of the perpendicular), its point on the shape
/// `p − radius normal`; their midpoint is `p − (h + radius)/2 normal`, the depth `radius − h`.
/// Both ends are tested (parry's half-space path takes a capsule's whole segment as its
/// support feature, so a capsule lying flat makes a line contact of two points); the normal is
/// the plane's. The same points as parry's manifold to rounding (test
/// `plane_round_is_parrys_manifold`), without its poses and feature maps.
#[inline]
pub(super) fn plane_round(
    (normal, offset): (&Vec3, f64),
    ends: &[Vec3],
    radius: f64,
    margin: f64,
    mut emit: impl FnMut(usize, Vec3, f64),
) {
    for (i, p) in ends.iter().enumerate() {
        let h = normal.dot(p) - offset;
        if h - radius <= margin {
            emit(i, p - normal * (0.5 * (h + radius)), radius - h);
        }
    }
}

impl Collider {
    /// A plane and a ball or a capsule (`a < b`, either first): their contacts in closed form
    /// ([`plane_round`]: the plane's normal, the capsule's segment ends as vertex features)
    /// into `out`; false (nothing written) for any other pair.
    #[inline]
    pub(super) fn plane_round_pair(&self, (poses, frames, planes): (&[PPose], &[Se3], &[(Vec3, f64)]), (a, b, mode): (usize, usize, ContactMode), margin: f64, out: &mut Vec<RawContact>) -> bool {
        let (u, k) = match (self.round[a], self.round[b]) {
            (Round::Plane, _) => (a, b),
            (_, Round::Plane) => (b, a),
            _ => return false,
        };
        let (ends, radius, count) = match self.round[k] {
            Round::Ball(r) => {
                let c = from_pvec(poses[k].translation);
                ([c, c], r, 1)
            }
            Round::Capsule(ea, eb, r) => ([frames[k].transform_point(&ea), frames[k].transform_point(&eb)], r, 2),
            _ => return false,
        };
        let ((normal, offset), flip) = (planes[u], if u == a { 1.0 } else { -1.0 });
        plane_round((&normal, offset), &ends[..count], radius, margin, |i, point, depth| {
            let end = if count == 1 { BALL_FEATURE } else { PackedFeatureId::vertex(i as u32).0 };
            let features = if u == a { (BALL_FEATURE, end) } else { (end, BALL_FEATURE) };
            out.push(RawContact { shape_a: a, shape_b: b, point, normal: flip * normal, depth, features, mode });
        });
        true
    }

    /// The `HULL_MERGE` length of shapes `a`, `b` against each other: a hull's beside a
    /// plane, else 0 (every vertex of a support feature a contact).
    #[inline]
    pub(super) fn hull_merge(&self, a: usize, b: usize) -> f64 {
        match (self.round[a], self.round[b]) {
            (Round::Plane, Round::Hull(l)) | (Round::Hull(l), Round::Plane) => l,
            _ => 0.0,
        }
    }
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
/// `pos12` into `manifolds` (kept from step to step with their points' room), every one
/// computed afresh (nothing is carried from an earlier step); returns how many it filled, or
/// None when parry does not support the pair. Which function handles a pair:
///
/// | pair | function |
/// | --- | --- |
/// | plane – convex (but a ball) | [`plane_convex`] (here: parry's allocates a point list per call) |
/// | convex – convex through parry's generic path (cylinders, cones, hulls, capsule – box) | [`pfm_pfm`] (here: parry's builds an EPA per call) |
/// | convex – convex, balls | parry's `contact_manifold_convex_convex` into the kept manifold |
/// | triangle mesh – convex | [`trimesh_convex`]: each triangle near the shape as a convex pair (parry's composite path allocates its workspace and manifolds per call) |
/// | other composites | parry's `contact_manifolds` (its own buffers) |
///
/// `t1`, `t2` are the shapes' types, `composite` whether either is composite or a triangle
/// mesh; `merge` a hull's `HULL_MERGE` length against a plane (0: none); `triangles` the
/// kept buffer of a mesh's triangles.
pub(super) fn narrow_phase(
    pos12: &PPose,
    (s1, t1): (&SharedShape, ShapeType),
    (s2, t2): (&SharedShape, ShapeType),
    composite: bool,
    (margin, merge): (f64, f64),
    (manifolds, triangles): (&mut Vec<ContactManifold<(), ()>>, &mut Vec<u32>),
    epa: &mut EPA,
) -> Option<usize> {
    if composite {
        let plain = |s: &SharedShape| s.as_composite_shape().is_none() && s.shape_type() != ShapeType::HeightField;
        let fixed = |m: &TriMesh| m.pseudo_normals().is_none();
        match (s1.as_trimesh(), s2.as_trimesh()) {
            (Some(mesh), None) if plain(s2) && fixed(mesh) => {
                return Some(trimesh_convex(pos12, mesh, (&*s2.0, t2), false, margin, (manifolds, triangles), epa));
            }
            (None, Some(mesh)) if plain(s1) && fixed(mesh) => {
                return Some(trimesh_convex(pos12, mesh, (&*s1.0, t1), true, margin, (manifolds, triangles), epa));
            }
            _ => {}
        }
        manifolds.clear();
        let mut workspace = None;
        return DefaultQueryDispatcher
            .contact_manifolds(pos12, &*s1.0, &*s2.0, margin, manifolds, &mut workspace)
            .is_ok()
            .then_some(manifolds.len());
    }
    if manifolds.is_empty() {
        manifolds.push(manifold_with_room());
    }
    let m = &mut manifolds[0];
    reset(m);
    convex_pair(pos12, (&*s1.0, t1), (&*s2.0, t2), (margin, merge), m, epa).then_some(1)
}

/// One convex pair into the fresh manifold `m` (see [`narrow_phase`]; `merge`: a hull's
/// against a plane, [`plane_convex`]); false when parry does not support it.
fn convex_pair(pos12: &PPose, (s1, t1): (&dyn Shape, ShapeType), (s2, t2): (&dyn Shape, ShapeType), (margin, merge): (f64, f64), m: &mut ContactManifold<(), ()>, epa: &mut EPA) -> bool {
    let ball = t1 == ShapeType::Ball || t2 == ShapeType::Ball;
    if !ball && t1 == ShapeType::HalfSpace {
        return plane_convex(pos12, s1, s2, (margin, merge), m, false);
    }
    if !ball && t2 == ShapeType::HalfSpace {
        return plane_convex(&pos12.inverse(), s2, s1, (margin, merge), m, true);
    }
    if generic_pair(t1, t2) {
        if let (Some(f1), Some(f2)) = (s1.as_polygonal_feature_map(), s2.as_polygonal_feature_map()) {
            pfm_pfm(pos12, f1, f2, margin, m, epa);
            return true;
        }
    }
    DefaultQueryDispatcher.contact_manifold_convex_convex(pos12, s1, s2, None, None, margin, m).is_ok()
}

/// A triangle mesh (`mesh`, the pair's second shape when `flipped`) against a convex shape:
/// parry's `contact_manifolds_trimesh_shape` with a fresh workspace, the same operations in
/// the same order, into kept buffers: the triangles whose boxes meet the shape's box
/// (loosened by `margin`, then by a tenth of its size up to 0.1, as parry does) in the mesh's
/// bounding-volume hierarchy's order into `triangles`, then one fresh manifold per triangle
/// (an empty one where they do not touch), the triangle a convex pair ([`convex_pair`]).
/// Returns how many manifolds it filled.
fn trimesh_convex(
    pos12: &PPose,
    mesh: &TriMesh,
    (other, t_other): (&dyn Shape, ShapeType),
    flipped: bool,
    margin: f64,
    (manifolds, triangles): (&mut Vec<ContactManifold<(), ()>>, &mut Vec<u32>),
    epa: &mut EPA,
) -> usize {
    // the other shape in the mesh's frame, and back (parry's inverse of the inverse)
    let pos_m = if flipped { pos12.inverse() } else { *pos12 };
    let mut aabb = other.compute_aabb(&pos_m).loosened(margin);
    let extra = (aabb.maxs - aabb.mins).map(|e| (e / 10.0).min(0.1));
    aabb.mins -= extra;
    aabb.maxs += extra;
    triangles.clear();
    triangles.extend(mesh.bvh().intersect_aabb(&aabb));
    let back = flipped.then(|| pos_m.inverse());
    let mut used = 0;
    for &t in triangles.iter().filter(|&&t| (t as usize) < mesh.num_triangles()) {
        if used == manifolds.len() {
            manifolds.push(manifold_with_room());
        }
        let m = &mut manifolds[used];
        used += 1;
        reset(m);
        let tri = mesh.triangle(t);
        match &back {
            Some(pos21) => {
                m.subshape2 = t;
                convex_pair(pos21, (other, t_other), (&tri, ShapeType::Triangle), (margin, 0.0), m, epa);
            }
            None => {
                m.subshape1 = t;
                convex_pair(&pos_m, (&tri, ShapeType::Triangle), (other, t_other), (margin, 0.0), m, epa);
            }
        }
    }
    used
}

/// A manifold of a triangle mesh's triangle whose normal points out of its back face: the
/// other shape has passed the surface (a foot that starts inside a height field's terrain,
/// which MuJoCo's soft contacts allow). A mesh's triangles face outward (a solid's surface),
/// so this is one contact of the solid: the triangle's outward normal (from the pair's first
/// shape to its second: `sign` 1 when the mesh is the first, -1 else), the other shape's
/// deepest point along it, and its depth below the triangle's plane. `(mesh, its pose, the
/// triangle, sign, other, its pose)`; `normal` the manifold's (world). `None`: the front face.
pub(super) fn back_face(
    (mesh, pose, triangle, sign, other, other_pose): (&SharedShape, &PPose, u32, f64, &SharedShape, &PPose),
    m: &ContactManifold<(), ()>,
    normal: &Vec3,
) -> Option<(Vec3, Vec3, f64)> {
    let v = |p: parry3d_f64::math::Vector| Vec3::new(p.x, p.y, p.z);
    let tri = mesh.as_trimesh()?.triangle(triangle);
    let n = v(pose.rotation * tri.normal()?);
    if sign * normal.dot(&n) >= 0.0 || m.points.is_empty() {
        return None;
    }
    let dir = -n;
    let deepest = v(other.as_support_map()?.support_point(other_pose, parry3d_f64::math::Vector::new(dir.x, dir.y, dir.z)));
    let depth = (v(pose.transform_point(tri.a)) - deepest).dot(&n);
    Some((deepest + 0.5 * depth * n, sign * n, depth))
}

/// The pairs parry's dispatcher sends to its generic polygonal-feature path (every pair but
/// balls, two boxes, two capsules, a triangle and a box, and half-spaces, which have their own).
fn generic_pair(t1: ShapeType, t2: ShapeType) -> bool {
    use ShapeType::{Ball, Capsule, Cuboid, HalfSpace, Triangle};
    !matches!(
        (t1, t2),
        (Ball, _) | (_, Ball) | (Cuboid, Cuboid) | (Capsule, Capsule) | (Triangle, Cuboid) | (Cuboid, Triangle) | (HalfSpace, _) | (_, HalfSpace)
    )
}

impl Collider {
    /// Some pair of this collider's shapes may reach [`pfm_pfm`]'s EPA: two of its shape
    /// types (a triangle mesh's as a triangle; the same type twice counts) make a
    /// [`generic_pair`]. A world of planes, balls and boxes (a robot's feet) needs no
    /// [`warm_epa`] (about 21M instructions when the work is built).
    pub(super) fn may_expand(&self) -> bool {
        let mut kinds: Vec<ShapeType> = Vec::new();
        for &t in &self.types {
            let t = if t == ShapeType::TriMesh { ShapeType::Triangle } else { t };
            if !kinds.contains(&t) {
                kinds.push(t);
            }
        }
        kinds.iter().any(|&a| kinds.iter().any(|&b| generic_pair(a, b)))
    }
}

/// An EPA whose buffers (vertices, faces, silhouette, heap: parry keeps them private, so
/// they cannot be reserved) have grown through 64 expansions of overlapping balls, cylinders,
/// cones and boxes, so that a step's penetrating pairs seldom grow them again: one that does
/// allocates once, as a step with more contacts than any before does (the expansion is
/// capped at 101 iterations, so the buffers stay bounded).
pub(super) fn warm_epa() -> EPA {
    use parry3d_f64::math::{Rotation, Vector};
    use parry3d_f64::shape::{Ball, Cone, Cuboid, Cylinder, SupportMap};
    let mut epa = EPA::new();
    let (ball, cylinder) = (Ball::new(1.0), Cylinder::new(0.5, 0.3));
    let (cone, cuboid) = (Cone::new(0.4, 0.3), Cuboid::new(Vector::new(0.3, 0.2, 0.4)));
    let shapes: [&dyn SupportMap; 4] = [&ball, &cylinder, &cone, &cuboid];
    // every pair of the four at a spread of overlapping poses (flat faces make wide
    // silhouettes, smooth ones long expansions)
    for k in 0..64u32 {
        let a = f64::from(k) * 0.37;
        let (g1, g2) = (shapes[(k % 4) as usize], shapes[((k / 4) % 4) as usize]);
        let rot = Rotation::from_xyzw(a.sin(), (1.3 * a).cos(), 0.3, 0.9).normalize();
        let pos12 = PPose::from_parts(Vector::new(0.1 * a.cos(), 0.1 * a.sin(), 0.05), rot);
        let mut simplex = VoronoiSimplex::new();
        simplex.reset(CsoPoint::from_shapes(&pos12, g1, g2, Vector::X));
        if gjk::closest_points(&pos12, g1, g2, 0.0, true, &mut simplex) == GJKResult::Intersection {
            let _ = epa.closest_points(&pos12, g1, g2, &simplex);
        }
    }
    epa
}

/// parry's `contact_manifold_pfm_pfm` for a fresh manifold without normal constraints, the
/// same operations in the same order, with the EPA (its vertex, face and heap buffers) kept
/// in the collision workspace instead of built per penetrating pair: GJK, then EPA when the
/// shapes overlap, then the contact polygon of the two support features and the GJK point.
fn pfm_pfm(
    pos12: &PPose,
    (pfm1, border1): (&dyn PolygonalFeatureMap, f64),
    (pfm2, border2): (&dyn PolygonalFeatureMap, f64),
    margin: f64,
    manifold: &mut ContactManifold<(), ()>,
    epa: &mut EPA,
) {
    // a fresh manifold has no cached normal: parry's initial direction is the translation
    let dir = pos12.translation.try_normalize().unwrap_or(parry3d_f64::math::Vector::X);
    let mut simplex = VoronoiSimplex::new();
    simplex.reset(CsoPoint::from_shapes(pos12, pfm1, pfm2, dir));
    let total = margin + border1 + border2;
    let mut contact = gjk::closest_points(pos12, pfm1, pfm2, total, true, &mut simplex);
    if contact == GJKResult::Intersection {
        contact = match epa.closest_points(pos12, pfm1, pfm2, &simplex) {
            Some((p1, p2, n)) => GJKResult::ClosestPoints(p1, p2, n),
            None => GJKResult::NoIntersection(parry3d_f64::math::Vector::X),
        };
    }
    manifold.clear();
    match contact {
        GJKResult::ClosestPoints(p1, p2_1, dir) => {
            let local_n1 = dir;
            let local_n2 = pos12.rotation.inverse() * -dir;
            let (mut f1, mut f2) = (PolygonalFeature::default(), PolygonalFeature::default());
            pfm1.local_support_feature_toward(local_n1, p1, &mut f1);
            pfm2.local_support_feature_toward(local_n2, pos12.inverse_transform_point(p2_1), &mut f2);
            PolygonalFeature::contacts(pos12, &pos12.inverse(), local_n1, local_n2, &f1, &f2, manifold, false);
            manifold.points.push(TrackedContact::new(
                p1,
                pos12.inverse_transform_point(p2_1),
                PackedFeatureId::UNKNOWN,
                PackedFeatureId::UNKNOWN,
                (p2_1 - p1).dot(local_n1),
            ));
            if border1 != 0.0 || border2 != 0.0 {
                for c in &mut manifold.points {
                    c.local_p1 += local_n1 * border1;
                    c.local_p2 += local_n2 * border2;
                    c.dist -= border1 + border2;
                }
            }
            manifold.local_n1 = local_n1;
            manifold.local_n2 = local_n2;
        }
        GJKResult::NoIntersection(dir) => manifold.local_n1 = dir,
        _ => manifold.local_n1 = parry3d_f64::math::Vector::ZERO,
    }
}

/// Contacts of a plane (`plane`, its normal along its z) with a convex shape (`convex`, at
/// `pos12` in the plane's frame): the vertices of the shape's support feature against the
/// plane that lie within `margin` of it (Springhead's contact region: a box face gives its four
/// corners); a hull's ([`hull_points`] where `merge` > 0, its `HULL_MERGE` length) its
/// vertices within `margin`, spread. `flipped`: the convex shape is the pair's first shape.
/// Other than hulls the same result as parry's half-space dispatch, into the kept point list.
fn plane_convex(
    pos12: &PPose,
    plane: &dyn Shape,
    convex: &dyn Shape,
    (margin, merge): (f64, f64),
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
    let mut push = |vtx2: parry3d_f64::math::Vector, vid: PackedFeatureId| {
        let vtx_in_1 = pos12 * vtx2;
        let height = vtx_in_1.dot(n);
        if height - radius <= margin {
            m.points.push(TrackedContact::flipped(
                vtx_in_1 - n * height,
                vtx2 - n_in_2 * radius,
                PackedFeatureId::face(0),
                vid,
                height - radius,
                flipped,
            ));
        }
    };
    match convex.as_convex_polyhedron().filter(|_| merge > 0.0) {
        Some(hull) => {
            let (kept, count) = hull_points(hull.points(), (n_in_2, pos12.translation.dot(n)), margin + radius, merge);
            for &i in &kept[..count] {
                push(hull.points()[i], PackedFeatureId::vertex(i as u32));
            }
        }
        None => {
            let mut feature = PolygonalFeature::default();
            pfm.local_support_feature(-n_in_2, &mut feature);
            for i in 0..feature.num_vertices {
                push(feature.vertices[i], feature.vids[i]);
            }
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

/// A hull's contact points against a plane: of its vertices `points` whose height
/// `p · normal + offset` is at most `reach`, the deepest, then up to three more, each the
/// deepest of those farther than `merge` from every one kept (MuJoCo's plane–mesh contacts:
/// its support vertex and up to three more not nearer the first than 0.3 of the geom's
/// bounding radius). The vertices of the whole hull, not of one face: a flat bottom
/// tessellated into triangles rests on its corners, not on the triangle that happens to face
/// the plane best (which alternates between the two halves of a rectangle as the body rocks).
/// Returns the indices kept and their count.
fn hull_points(points: &[parry3d_f64::math::Vector], (normal, offset): (parry3d_f64::math::Vector, f64), reach: f64, merge: f64) -> ([usize; 4], usize) {
    let mut kept = [0usize; 4];
    let mut count = 0;
    while count < 4 {
        let mut best = (usize::MAX, reach);
        for (i, p) in points.iter().enumerate() {
            let h = p.dot(normal) + offset;
            if h <= best.1 && kept[..count].iter().all(|&k| (points[k] - *p).length_squared() > merge * merge) {
                best = (i, h);
            }
        }
        if best.0 == usize::MAX {
            break;
        }
        kept[count] = best.0;
        count += 1;
    }
    (kept, count)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collision::collider::HULL_MERGE;
    use crate::collision::to_parry;
    use karakuri::algorithms::SplitMix64;
    use karakuri::spatial::exp3;
    use parry3d_f64::math::Vector as PVec;

    /// The EPA is warmed only for worlds with a pair that may reach it: planes, balls and
    /// boxes (a robot's feet on the ground) or capsules among themselves do not; a cylinder,
    /// or a capsule beside a box, does.
    #[test]
    fn epa_warmed_only_where_a_pair_may_reach_it() {
        use crate::collision::ColShape;
        use crate::scene::{ContactMode, DEFAULT_MATERIAL};
        let world = |shapes: Vec<SharedShape>| {
            let shapes = shapes
                .into_iter()
                .enumerate()
                .map(|(k, shape)| ColShape { body: k, joint: k, placement: Se3::identity(), shape, material: DEFAULT_MATERIAL, unbounded: false })
                .collect();
            Collider::new(shapes, |_, _| Some(ContactMode::Lcp)).may_expand()
        };
        let plane = || SharedShape::halfspace(PVec::new(0.0, 0.0, 1.0));
        let (cuboid, ball, capsule) = (|| SharedShape::cuboid(0.1, 0.1, 0.1), || SharedShape::ball(0.1), || SharedShape::capsule_z(0.1, 0.05));
        assert!(!world(vec![plane(), cuboid(), cuboid(), ball()]));
        assert!(!world(vec![plane(), capsule(), capsule(), ball()]));
        assert!(world(vec![plane(), cuboid(), capsule()]));
        assert!(world(vec![plane(), SharedShape::cylinder(0.1, 0.05)]));
    }

    /// A plane against convex shapes (`plane_convex`, record 0127): a box's hull (its bottom
    /// two triangles) rocking by a milliradian either way rests on its four bottom corners,
    /// not on the three of the triangle facing the plane best; a cuboid's face still gives
    /// its four corners; a tessellated ball's points are its lowest vertex and others spread
    /// at least the merge length apart (no facet's triangle of near points).
    #[test]
    fn hulls_rest_on_spread_vertices_and_boxes_on_their_corners() {
        use parry3d_f64::math::Rotation;
        let plane = SharedShape::halfspace(PVec::Z);
        let contacts = |shape: &SharedShape, lift: f64, tilt: f64| {
            let merge = shape.as_convex_polyhedron().map_or(0.0, |h| HULL_MERGE * h.local_bounding_sphere().radius);
            let pos12 = PPose::from_parts(PVec::new(0.0, 0.0, lift), Rotation::from_scaled_axis(PVec::new(tilt, 0.0, 0.0)));
            let mut m = manifold_with_room();
            assert!(plane_convex(&pos12, &*plane.0, &*shape.0, (0.01, merge), &mut m, false));
            (m.points.iter().map(|c| c.local_p2).collect::<Vec<_>>(), merge)
        };
        let corners: Vec<PVec> = (0..8)
            .map(|k| PVec::new(if k & 1 == 0 { -0.2 } else { 0.2 }, if k & 2 == 0 { -0.05 } else { 0.05 }, if k & 4 == 0 { -0.04 } else { 0.04 }))
            .collect();
        let hull = SharedShape::convex_hull(&corners).expect("a box's hull");
        for tilt in [-1e-3, 1e-3] {
            let (points, _) = contacts(&hull, 0.0399, tilt);
            assert_eq!(points.len(), 4, "tilt {tilt}: {points:?}");
            for p in &points {
                assert!((p.x.abs() - 0.2).abs() < 1e-12 && (p.y.abs() - 0.05).abs() < 1e-12 && (p.z + 0.04).abs() < 1e-12, "{p:?}");
            }
            let (points, merge) = contacts(&SharedShape::cuboid(0.2, 0.05, 0.04), 0.0399, tilt);
            assert_eq!((points.len(), merge), (4, 0.0));
        }
        // a ball of radius 0.03 as the hull of 400 points spread over it (Fibonacci)
        let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
        let ball: Vec<PVec> = (0..400)
            .map(|k| {
                let z = 1.0 - 2.0 * (f64::from(k) + 0.5) / 400.0;
                let (r, a) = ((1.0 - z * z).sqrt(), golden * f64::from(k));
                0.03 * PVec::new(r * a.cos(), r * a.sin(), z)
            })
            .collect();
        let hull = SharedShape::convex_hull(&ball).expect("a ball's hull");
        let (points, merge) = contacts(&hull, 0.0299, 0.3);
        assert!(!points.is_empty() && points.len() <= 4, "{points:?}");
        let lowest = ball.iter().map(|p| Rotation::from_scaled_axis(PVec::new(0.3, 0.0, 0.0)) * *p).map(|p| p.z).fold(f64::INFINITY, f64::min);
        assert!(((Rotation::from_scaled_axis(PVec::new(0.3, 0.0, 0.0)) * points[0]).z - lowest).abs() < 1e-12, "the lowest vertex first");
        for (i, p) in points.iter().enumerate() {
            assert!(points[..i].iter().all(|q| (*p - *q).length() > merge), "points {points:?} nearer than {merge}");
        }
    }

    /// The closed form's contacts of a capsule or a ball against a tilted plane are parry's
    /// manifold's (its half-space path, the points and normal taken to the world as
    /// `Collider::collide_parry` takes them) to 1e-12 m, point for point in the same order,
    /// over random poses reaching through the plane, lying flat and far above it.
    #[test]
    fn plane_round_is_parrys_manifold() {
        let mut rng = SplitMix64::new(29);
        let (mut contacts, mut two, mut none) = (0, 0, 0);
        for case in 0..20000 {
            let plane_x = Se3::new(exp3(&Vec3::new(rng.range(-0.4, 0.4), rng.range(-0.4, 0.4), rng.range(-3.0, 3.0))), Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-0.2, 0.2)));
            let (radius, half) = (rng.range(0.01, 0.1), rng.range(0.0, 0.3));
            let ball = case % 4 == 0;
            // a capsule lying flat on the plane's normal every eighth case (a line contact)
            let turn = if case % 8 == 1 { exp3(&Vec3::new(std::f64::consts::FRAC_PI_2, 0.0, rng.range(-3.0, 3.0))) } else { exp3(&Vec3::new(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0))) };
            let lift = rng.range(-radius - half, 2.0 * (radius + half));
            let at = plane_x.transform_point(&Vec3::new(rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), lift));
            let shape_x = Se3::new(plane_x.rotation * turn, at);
            let margin = rng.range(0.0, 0.02);
            let plane = SharedShape::halfspace(PVec::Z);
            let shape = if ball { SharedShape::ball(radius) } else { SharedShape::capsule_z(half, radius) };
            // parry: the plane first, as a pair (plane, shape)
            let (p1, mut p2) = (to_parry(&plane_x), to_parry(&shape_x));
            if ball {
                p2 = PPose::translation(at.x, at.y, at.z);
            }
            let mut m = ContactManifold::<(), ()>::new();
            DefaultQueryDispatcher.contact_manifold_convex_convex(&p1.inv_mul(&p2), &*plane.0, &*shape.0, None, None, margin, &mut m).unwrap();
            let v = |p: PVec| Vec3::new(p.x, p.y, p.z);
            let want_normal = v(p1.rotation * m.local_n1).normalize();
            let want: Vec<(Vec3, f64, u32)> = m.points.iter().map(|c| (0.5 * (v(p1.transform_point(c.local_p1)) + v(p2.transform_point(c.local_p2))), -c.dist, c.fid2.0)).collect();
            // the closed form
            let normal = v(p1.rotation * PVec::Z);
            let offset = normal.dot(&v(p1.translation));
            let normal = normal / normal.norm();
            let ends = if ball {
                vec![at]
            } else {
                vec![shape_x.transform_point(&Vec3::new(0.0, 0.0, -half)), shape_x.transform_point(&Vec3::new(0.0, 0.0, half))]
            };
            let mut got = Vec::new();
            plane_round((&normal, offset), &ends, radius, margin, |i, point, depth| got.push((i, point, depth)));
            assert_eq!(got.len(), want.len(), "case {case}");
            for ((i, point, depth), (wp, wd, fid)) in got.iter().zip(&want) {
                assert!((point - wp).norm() < 1e-12, "case {case}: point {point:?} against {wp:?}");
                assert!((depth - wd).abs() < 1e-12, "case {case}: depth {depth} against {wd}");
                assert!((normal - want_normal).norm() < 1e-12, "case {case}");
                let feature = if ball { BALL_FEATURE } else { PackedFeatureId::vertex(*i as u32).0 };
                assert_eq!(feature, *fid, "case {case}");
            }
            contacts += got.len();
            two += usize::from(got.len() == 2);
            none += usize::from(got.is_empty());
        }
        assert!(contacts > 5000 && two > 1000 && none > 2000, "contacts {contacts}, two-point {two}, none {none}");
    }
}
