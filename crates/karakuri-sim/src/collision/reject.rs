//! Cheap proofs that a pair makes no contact, taken before its narrow phase: a shape's world box
//! above a plane, and two shapes' boxes in their own frames (oriented boxes) apart along one
//! of the 15 separating axes. Each is conservative: it answers "apart" only where every point
//! of the two shapes is farther apart than the pair's margin (plus [`SLACK`]), so the narrow
//! phase, which keeps points closer than the margin, would have found nothing.

use karakuri::spatial::Vec3;
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Pose as PPose;

use super::shapes::from_pvec;

/// How far (m) beyond a pair's margin two shapes must be proven apart to be skipped: these
/// tests and the narrow phase round differently (a few ulps of the positions; GJK stops within
/// a relative 1e-14 of the distance), so a point at the margin's edge is never dropped by the
/// rounding of a test.
pub(super) const SLACK: f64 = 1e-9;

/// The lowest height of the box `aabb` along the unit `normal` (the dot of its lowest corner).
#[inline]
pub(super) fn box_height(aabb: &Aabb, normal: &Vec3) -> f64 {
    let (c, h) = (aabb.center(), aabb.half_extents());
    normal.x * c.x + normal.y * c.y + normal.z * c.z - (normal.x.abs() * h.x + normal.y.abs() * h.y + normal.z.abs() * h.z)
}

/// Two oriented boxes farther apart than `margin` + [`SLACK`] along one of their 15 separating
/// axes (Gottschalk's test: the 3 face normals of each and their 9 cross products): box `a`
/// (its shape's box in the shape's own frame), box `b` (likewise) at pose `pos12` in `a`'s
/// frame. A cross axis is not of unit length (`|L| ≤ 1`): its gap over `margin` divided by
/// `|L|` is at least the gap over `margin |L|`, so comparing it with `margin` is conservative.
/// Returns the gap along the first separating axis found (`|t · L| − r_a − r_b`, at most the
/// boxes' distance: along a cross axis the distance is that over `|L| ≤ 1`), None when no axis
/// separates them by more than `margin` + [`SLACK`].
pub(super) fn boxes_apart(a: &Aabb, b: &Aabb, pos12: &PPose, margin: f64) -> Option<f64> {
    let (ha, hb) = (from_pvec(a.half_extents()), from_pvec(b.half_extents()));
    let m = margin + SLACK;
    // b's centre in a's frame, relative to a's centre; r[i][j]: a's axis i · b's axis j
    let t = from_pvec(pos12.transform_point(b.center()) - a.center());
    let cols = [pos12.rotation * parry3d_f64::math::Vector::X, pos12.rotation * parry3d_f64::math::Vector::Y, pos12.rotation * parry3d_f64::math::Vector::Z];
    let r = [[cols[0].x, cols[1].x, cols[2].x], [cols[0].y, cols[1].y, cols[2].y], [cols[0].z, cols[1].z, cols[2].z]];
    let abs = r.map(|row| row.map(f64::abs));
    // a's face normals
    for i in 0..3 {
        let r = ha[i] + hb[0] * abs[i][0] + hb[1] * abs[i][1] + hb[2] * abs[i][2];
        if t[i].abs() > r + m {
            return Some(t[i].abs() - r);
        }
    }
    // b's face normals
    for j in 0..3 {
        let tj = t[0] * r[0][j] + t[1] * r[1][j] + t[2] * r[2][j];
        let r = ha[0] * abs[0][j] + ha[1] * abs[1][j] + ha[2] * abs[2][j] + hb[j];
        if tj.abs() > r + m {
            return Some(tj.abs() - r);
        }
    }
    // a's axis i × b's axis j
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            let tl = t[i2] * r[i1][j] - t[i1] * r[i2][j];
            let ra = ha[i1] * abs[i2][j] + ha[i2] * abs[i1][j];
            let rb = hb[j1] * abs[i][j2] + hb[j2] * abs[i][j1];
            if tl.abs() > ra + rb + m {
                return Some(tl.abs() - (ra + rb));
            }
        }
    }
    None
}

/// A ball (centre `centre` in box `a`'s frame, radius `radius`) farther than `margin` +
/// [`SLACK`] from the box `a`: the distance from the centre to the box, less the radius (the
/// gap returned; None: not that far).
pub(super) fn ball_apart(a: &Aabb, centre: &Vec3, radius: f64, margin: f64) -> Option<f64> {
    let (c, h) = (from_pvec(a.center()), from_pvec(a.half_extents()));
    let d = (centre - c).map(f64::abs) - h;
    let out = d.map(|x| x.max(0.0)).norm();
    (out - radius > margin + SLACK).then_some(out - radius)
}

#[cfg(test)]
mod tests {
    use super::*;
    use karakuri::algorithms::SplitMix64;
    use parry3d_f64::math::{Rotation, Vector as PVec};
    use parry3d_f64::query;
    use parry3d_f64::shape::{Ball, Cuboid};

    /// Whenever the tests call two boxes (or a ball and a box) apart by more than the margin,
    /// parry's distance between the shapes themselves exceeds it; and for well separated
    /// pairs the tests do answer "apart" (they are not vacuous).
    #[test]
    fn apart_only_when_parry_measures_the_gap() {
        let mut rng = SplitMix64::new(7);
        let (mut apart, mut near_miss) = (0, 0);
        for _ in 0..20000 {
            let ha = PVec::new(rng.range(0.01, 0.3), rng.range(0.01, 0.3), rng.range(0.01, 0.3));
            let hb = PVec::new(rng.range(0.01, 0.3), rng.range(0.01, 0.3), rng.range(0.01, 0.3));
            let rot = Rotation::from_scaled_axis(PVec::new(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)));
            let pos12 = PPose::from_parts(PVec::new(rng.range(-0.7, 0.7), rng.range(-0.7, 0.7), rng.range(-0.7, 0.7)), rot);
            let margin = rng.range(0.0, 0.05);
            // boxes offset from their frames' origins, as a hull's box is
            let (oa, ob) = (PVec::new(0.02, -0.01, 0.03), PVec::new(-0.03, 0.0, 0.01));
            let (a, b) = (Aabb::new(oa - ha, oa + ha), Aabb::new(ob - hb, ob + hb));
            let (ca, cb) = (Cuboid::new(ha), Cuboid::new(hb));
            let (pa, pb) = (PPose::translation(oa.x, oa.y, oa.z), pos12 * PPose::translation(ob.x, ob.y, ob.z));
            let dist = query::distance(&pa, &ca, &pb, &cb).unwrap().distance;
            if let Some(gap) = boxes_apart(&a, &b, &pos12, margin) {
                assert!(dist > margin, "boxes called apart at distance {dist} (margin {margin})");
                assert!(gap > margin && gap <= dist + 1e-12, "gap {gap} at distance {dist}");
                apart += 1;
            } else if dist > 2.0 * margin + 0.3 {
                near_miss += 1;
            }
            let radius = hb.x;
            let centre = from_pvec(pb.translation);
            let dist = query::distance(&pa, &ca, &PPose::translation(centre.x, centre.y, centre.z), &Ball::new(radius)).unwrap().distance;
            if let Some(gap) = ball_apart(&a, &centre, radius, margin) {
                assert!(dist > margin, "ball called apart at distance {dist} (margin {margin})");
                assert!(gap > margin && gap <= dist + 1e-12, "gap {gap} at distance {dist}");
            } else {
                assert!(dist <= margin + SLACK + 1e-12, "a ball at {dist} not called apart (margin {margin})");
            }
        }
        assert!(apart > 5000, "pairs called apart: {apart}");
        assert!(near_miss < apart / 10, "far pairs not called apart: {near_miss} of {apart}");
    }

    /// A box resting a little above a plane: its lowest corner's height.
    #[test]
    fn box_height_is_the_lowest_corner() {
        let b = Aabb::new(PVec::new(-1.0, -2.0, 0.5), PVec::new(1.0, 2.0, 1.5));
        assert_eq!(box_height(&b, &Vec3::z()), 0.5);
        let n = Vec3::new(0.0, 0.6, 0.8);
        assert!((box_height(&b, &n) - (0.6 * -2.0 + 0.8 * 0.5)).abs() < 1e-15);
    }
}
