//! A ball against a triangle mesh in closed form: the contacts parry's per-triangle path gives
//! ([`super::pairs::narrow_phase`]'s mesh path, each triangle a convex pair with the ball, then
//! `Collider::collide_parry`'s conversion to world contacts), without the dispatch and the
//! manifolds (0097).
//!
//! For each triangle `abc` whose box meets the ball's (the same query, the same order), the
//! ball's centre `p` in the mesh's frame is projected on the triangle by its Voronoi regions
//! (Ericson, *Real-Time Collision Detection*, 5.1.5): with `d1 = ab·ap`, `d2 = ac·ap`,
//! `d3 = ab·bp`, `d4 = ac·bp`, `d5 = ab·cp`, `d6 = ac·cp`, the vertex `a` when `d1, d2 ≤ 0`,
//! `b` when `d3 ≥ 0, d4 ≤ d3`, `c` when `d6 ≥ 0, d5 ≤ d6`; the edge `ab` when
//! `vc = d1 d4 − d3 d2 ≤ 0, d1 ≥ 0, d3 ≤ 0` (at `a + ab d1 / (d1 − d3)`), `ac` when
//! `vb = d5 d2 − d1 d6 ≤ 0, d2 ≥ 0, d6 ≤ 0`, `bc` when `va = d3 d6 − d5 d4 ≤ 0,
//! d4 − d3 ≥ 0, d5 − d6 ≥ 0`; else the face point `a + ab v + ac w`, `(v, w) = (vb, vc) /
//! (va + vb + vc)`. The closest point `q` gives the distance `|p − q|`, the normal `(p − q) /
//! |p − q|` (from the mesh to the ball) and, within `radius + margin`, the contact: the
//! midpoint of `q` and the ball's point `p − r n`, depth `r − |p − q|`, parry's feature ids
//! (vertex `i`, edge `ab` 0 / `bc` 1 / `ca` 2, face 0 on the side of `ab × ac`, 1 behind,
//! each with the triangle's index `<< 20`; the ball's face 0). A centre behind the triangle's
//! outward normal is the back-face contact of [`super::pairs::back_face`].
//!
//! Not bit for bit parry's (its products are grouped otherwise): the test compares the
//! contacts with parry's path to 1e-12 m over random poses. A degenerate triangle or a centre
//! on a triangle (parry's normal is then a guess) is left to parry: the caller takes the
//! parry path for the pair.

use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::partitioning::BvhNode;
use parry3d_f64::math::{Pose as PPose, Vector as PVec};
use parry3d_f64::shape::{PackedFeatureId, Shape, TriMesh, Triangle};

use super::pairs::BALL_FEATURE;
use super::shapes::from_pvec;
use super::RawContact;
use crate::scene::ContactMode;

/// A ball's last mesh query, kept: the mesh (its shape index), a box around the query box
/// (grown by [`KEPT_SLACK`]) and the triangles whose leaves meet it, in the hierarchy's order.
/// The hierarchy gives a box's triangles in one depth-first order whatever the box (a leaf is
/// given when it meets the box, and then so does every node above it, whose box holds the
/// leaf's), so the triangles of a query box inside the kept one are the kept triangles whose
/// leaves meet it, in the kept order: the same list as a fresh query, by the same leaf test.
#[derive(Clone, Debug, Default)]
pub struct KeptQuery {
    /// The mesh's shape index and the kept box (None: nothing kept).
    key: Option<(usize, Aabb)>,
    /// The triangles whose leaves meet the kept box, in the hierarchy's order.
    triangles: Vec<u32>,
}

/// How much larger than its query a ball's kept box is (m, each side): a foot that moves less
/// than this between steps reuses its list.
const KEPT_SLACK: f64 = 0.01;

impl KeptQuery {
    /// Nothing kept, with room for `n` triangles (a ball's list grows only past them).
    pub(super) fn with_room(n: usize) -> KeptQuery {
        KeptQuery { key: None, triangles: Vec::with_capacity(n) }
    }

    /// The triangles of `mesh` (shape `key`) whose leaves meet `query`, into `out`, in the
    /// hierarchy's order: from the kept list when `query` lies inside the kept box, else from a
    /// fresh query of a box grown by [`KEPT_SLACK`] (kept).
    fn triangles(&mut self, (mesh, key): (&TriMesh, usize), query: &Aabb, out: &mut Vec<u32>) {
        let inside = |k: &Aabb| {
            (0..3).all(|i| k.mins[i] <= query.mins[i] && query.maxs[i] <= k.maxs[i])
        };
        if !matches!(&self.key, Some((m, k)) if *m == key && inside(k)) {
            let grown = query.loosened(KEPT_SLACK);
            self.triangles.clear();
            self.triangles.extend(mesh.bvh().intersect_aabb(&grown));
            self.key = Some((key, grown));
        }
        let probe = BvhNode::leaf(*query, 0);
        out.clear();
        out.extend(self.triangles.iter().copied().filter(|&t| mesh.bvh().leaf_node(t).is_some_and(|leaf| leaf.intersects(&probe))));
    }
}

/// The point of triangle `t` closest to `p` and parry's feature id of where it lies; None for
/// a triangle without area.
#[inline]
fn closest(t: &Triangle, p: PVec) -> Option<(PVec, u32)> {
    let (a, b, c) = (t.a, t.b, t.c);
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return Some((a, PackedFeatureId::vertex(0).0));
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return Some((b, PackedFeatureId::vertex(1).0));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return Some((a + ab * (d1 / (d1 - d3)), PackedFeatureId::edge(0).0));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return Some((c, PackedFeatureId::vertex(2).0));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return Some((a + ac * (d2 / (d2 - d6)), PackedFeatureId::edge(2).0));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return Some((b + (c - b) * w, PackedFeatureId::edge(1).0));
    }
    let denom = va + vb + vc;
    if denom <= 0.0 || ab.cross(ac).length_squared() == 0.0 {
        return None;
    }
    let side = if ab.cross(ac).dot(ap) >= 0.0 { 0 } else { 1 };
    Some((a + ab * (vb / denom) + ac * (vc / denom), PackedFeatureId::face(side).0))
}

/// A ball against a triangle mesh, the pair `(a, b, mode)`: the mesh `mesh` at `mesh_pose`,
/// the ball (`ball`, radius `radius`) at `ball_pose`, the mesh the pair's first shape when
/// `mesh_first`; `pos12` the second shape's pose in the first's (as the caller made it).
/// Appends the contacts parry's path gives (see the module) to `out` and returns true; returns
/// false with `out` as it was when a triangle is left to parry. `triangles`: a kept buffer;
/// `kept`: the ball's kept query ([`KeptQuery`]); `key`: the mesh's shape index.
#[allow(clippy::too_many_arguments)]
pub(super) fn ball_mesh(
    (mesh, key, mesh_pose): (&TriMesh, usize, &PPose),
    (ball, radius, ball_pose): (&dyn Shape, f64, &PPose),
    mesh_first: bool,
    pos12: &PPose,
    margin: f64,
    (triangles, kept): (&mut Vec<u32>, &mut KeptQuery),
    (a, b, mode): (usize, usize, ContactMode),
    out: &mut Vec<RawContact>,
) -> bool {
    // the ball in the mesh's frame; its box loosened as the mesh path does
    let pos_m = if mesh_first { *pos12 } else { pos12.inverse() };
    let mut aabb = ball.compute_aabb(&pos_m).loosened(margin);
    let extra = (aabb.maxs - aabb.mins).map(|e| (e / 10.0).min(0.1));
    aabb.mins -= extra;
    aabb.maxs += extra;
    kept.triangles((mesh, key), &aabb, triangles);
    let (centre, back) = (pos_m.translation, pos_m.rotation.inverse());
    let start = out.len();
    for &t in triangles.iter().filter(|&&t| (t as usize) < mesh.num_triangles()) {
        let tri = mesh.triangle(t);
        let Some((q, feature)) = closest(&tri, centre) else {
            out.truncate(start);
            return false;
        };
        let d = centre - q;
        let dist = d.length();
        if !(dist > 1e-9) {
            out.truncate(start);
            return false;
        }
        if dist > radius + margin {
            continue;
        }
        let n_mesh = d / dist;
        // the normal from the pair's first shape to its second, world
        let n_ball = back * -n_mesh;
        let normal = if mesh_first { from_pvec(mesh_pose.rotation * n_mesh) } else { from_pvec(ball_pose.rotation * n_ball) };
        let nn = normal.norm();
        if nn.is_nan() || nn <= 0.5 {
            continue;
        }
        let normal = normal / nn;
        let sign = if mesh_first { 1.0 } else { -1.0 };
        let outward = tri.normal().map(|n| from_pvec(mesh_pose.rotation * n));
        if let Some(n) = outward.filter(|n| sign * normal.dot(n) < 0.0) {
            // behind the triangle: one contact of the solid along its outward normal
            let dir = -n;
            let deepest = from_pvec(ball.as_support_map().map_or(ball_pose.translation, |s| s.support_point(ball_pose, PVec::new(dir.x, dir.y, dir.z))));
            let depth = (from_pvec(mesh_pose.transform_point(tri.a)) - deepest).dot(&n);
            let (sa, sb) = if mesh_first { (t << 20, 0) } else { (0, t << 20) };
            out.push(RawContact { shape_a: a, shape_b: b, point: deepest + 0.5 * depth * n, normal: sign * n, depth, features: (sa, sb), mode });
            continue;
        }
        let on_mesh = from_pvec(mesh_pose.transform_point(q));
        let on_ball = from_pvec(ball_pose.transform_point(n_ball * radius));
        let features = if mesh_first { (feature ^ (t << 20), BALL_FEATURE) } else { (BALL_FEATURE, feature ^ (t << 20)) };
        out.push(RawContact {
            shape_a: a,
            shape_b: b,
            point: 0.5 * (on_mesh + on_ball),
            normal,
            depth: radius - dist,
            features,
            mode,
        });
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::{ColShape, Collider};
    use super::*;
    use crate::scene::DEFAULT_MATERIAL;
    use karakuri::algorithms::SplitMix64;
    use karakuri::spatial::{exp3, Se3, Vec3};
    use parry3d_f64::shape::SharedShape;

    /// A bumpy sheet of `n x n` cells, 0.1 m each (two triangles a cell, their normals up),
    /// heights within ±3 cm.
    fn sheet(rng: &mut SplitMix64, n: u32) -> SharedShape {
        let mut vertices = Vec::new();
        for i in 0..=n {
            for j in 0..=n {
                vertices.push(PVec::new(0.1 * i as f64, 0.1 * j as f64, rng.range(-0.03, 0.03)));
            }
        }
        let at = |i: u32, j: u32| i * (n + 1) + j;
        let mut indices = Vec::new();
        for i in 0..n {
            for j in 0..n {
                indices.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
                indices.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
            }
        }
        SharedShape::trimesh(vertices, indices).expect("a sheet")
    }

    /// The closed form gives parry's path's contacts (`Collider::collide_parry` on the mesh's
    /// triangles) to 1e-12 m (normals to 1e-10), contact for contact in the same order with the same features,
    /// over random sheets, tilts and balls above, touching, through and under the sheet
    /// (back faces), the mesh the pair's first shape and its second.
    #[test]
    fn ball_mesh_is_parrys_path() {
        let mut rng = SplitMix64::new(97);
        let (mut contacts, mut back, mut first, mut second) = (0, 0, 0, 0);
        for case in 0..400 {
            let mesh = ColShape {
                body: 0,
                joint: 0,
                placement: Se3::new(exp3(&Vec3::new(rng.range(-0.3, 0.3), rng.range(-0.3, 0.3), rng.range(-3.0, 3.0))), Vec3::new(rng.range(-0.2, 0.2), rng.range(-0.2, 0.2), rng.range(-0.1, 0.1))),
                shape: sheet(&mut rng, 6),
                material: DEFAULT_MATERIAL,
                unbounded: false,
            };
            let mut shapes = Vec::new();
            let mut o_m_i = vec![Se3::identity()];
            for k in 1..=8 {
                let r = rng.range(0.005, 0.06);
                // a point over the sheet, at a height from under it to above the margin
                let local = Vec3::new(rng.range(-0.05, 0.65), rng.range(-0.05, 0.65), rng.range(-0.06, 0.1));
                let centre = mesh.placement.transform_point(&local);
                let turn = exp3(&Vec3::new(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)));
                let placement = Se3::new(exp3(&Vec3::new(0.3, -0.2, 0.1)), Vec3::new(0.01, -0.02, 0.03));
                o_m_i.push(Se3::new(turn, centre - turn * placement.translation));
                shapes.push(ColShape { body: k, joint: k, placement, shape: SharedShape::ball(r), material: DEFAULT_MATERIAL, unbounded: false });
            }
            // the mesh first (shape 0) or last
            let mesh_first = case % 2 == 0;
            if mesh_first {
                shapes.insert(0, mesh);
            } else {
                shapes.push(mesh);
            }
            let mode = |a: &ColShape, b: &ColShape| (a.joint == 0 || b.joint == 0).then_some(crate::scene::ContactMode::Lcp);
            let closed = Collider::new(shapes.clone(), mode);
            let mut parry = Collider::new(shapes, mode);
            parry.closed_ball_mesh = false;
            let margin = rng.range(0.0, 0.02);
            let (mut wc, mut wp) = (closed.work(), parry.work());
            // four rounds, the balls moved by up to 0, 4 mm, 2 cm, 5 cm a side between them
            // (kept queries used, outgrown and renewed)
            for (round, step) in [0.0, 0.004, 0.02, 0.05].into_iter().enumerate() {
                for x in o_m_i.iter_mut().skip(1) {
                    x.translation += Vec3::new(rng.range(-step, step), rng.range(-step, step), rng.range(-step, step));
                }
                let (mut got, mut want) = (Vec::new(), Vec::new());
                closed.detect(&mut wc, &o_m_i, margin, &mut got);
                parry.detect(&mut wp, &o_m_i, margin, &mut want);
                let case = (case, round);
                assert_eq!(got.len(), want.len(), "case {case:?}");
                for (x, y) in got.iter().zip(&want) {
                    assert_eq!((x.shape_a, x.shape_b, x.features, x.mode), (y.shape_a, y.shape_b, y.features, y.mode), "case {case:?}");
                    assert!((x.point - y.point).norm() < 1e-12, "case {case:?}: {:?} against {:?}", x.point, y.point);
                    // the normal (p − q) / |p − q| carries the centre's rounding (parry's centre is
                    // made by other products, ~1e-16 m) over the distance: 1e-12 at 0.1 mm
                    assert!((x.normal - y.normal).norm() < 1e-10, "case {case:?}: {:?} against {:?}", x.normal, y.normal);
                    assert!((x.depth - y.depth).abs() < 1e-12, "case {case:?}: {} against {}", x.depth, y.depth);
                    // a back face's features carry no parry header (the top two bits)
                    back += usize::from((x.features.0 | x.features.1) >> 30 == 0);
                }
                contacts += got.len();
                if mesh_first { first += got.len() } else { second += got.len() }
            }
        }
        assert!(contacts > 4000 && back > 200 && first > 1600 && second > 1600, "contacts {contacts}, back faces {back}, mesh first {first}, second {second}");
    }
}
