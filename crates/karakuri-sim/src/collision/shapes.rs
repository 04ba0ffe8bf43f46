//! Shapes: a scene geometry as a parry shape, its bounds in the joint frame, and the pose
//! conversion at the boundary (nalgebra to parry).

use karakuri::spatial::{quat_to_xyzw, Se3, Vec3};
use parry3d_f64::math::{Pose as PPose, Rotation, Vector as PVec};
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::shape::SharedShape;

use crate::scene::Geometry;
use super::ColShape;

/// Builds the parry shape of a geometry and whether it is unbounded. Cylinders, cones and capsules run
/// along the shape's z (parry's cylinder and cone run along y: a rotation is folded into `extra`).
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
        Geometry::Cone { radius, half_length } => {
            // parry's cone runs along y, apex at +y: the same turn as the cylinder's
            let r = karakuri::spatial::rotation_about(&Vec3::x(), std::f64::consts::FRAC_PI_2);
            (SharedShape::cone(*half_length, *radius), Se3::new(r, Vec3::zeros()), false)
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

/// The box of the capsule of segment `(a, b)` (its frame) and radius `r` at world placement
/// `x`: its segment's ends placed, their box grown by the radius (parry's `Capsule::aabb`, the
/// ends placed by the matrix instead of the quaternion: the same box to rounding).
pub(super) fn capsule_box(x: &Se3, (a, b, r): (&Vec3, &Vec3, f64)) -> Aabb {
    let end = |p: &Vec3| {
        let w = x.transform_point(p);
        PVec::new(w.x, w.y, w.z)
    };
    let (a, b) = (end(a), end(b));
    Aabb::new(a.min(b) - PVec::splat(r), a.max(b) + PVec::splat(r))
}

pub(super) fn from_pvec(v: PVec) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}
