//! Box–box contact manifolds: the separating-axis test over the 15 axes of two cuboids and
//! the contact points of the feature pair it names, on fixed-size arrays (no allocation, no
//! quaternion: the boxes' rotation matrices are used as they are).
//!
//! * **Axes** (in A's frame, B's axes the columns of `C = R_Aᵀ R_B`, B's centre `d`): A's three
//!   face normals, B's three, and the nine cross products of an edge of each. The separation
//!   along an axis is `|d·n| − r_A(n) − r_B(n)` (the boxes' projected radii), the axis oriented
//!   from A to B. Where two or three face axes of one box already separate the boxes (a corner
//!   region), the axis is their separations' weighted sum, as parry does, so that a speculative
//!   contact measures the gap to the nearest vertex or edge rather than to a face's plane.
//! * **Which axis**: the largest separation; A's faces win ties with B's, and an edge axis must
//!   beat the best face by `EDGE_REL_TOL |s| + EDGE_ABS_TOL h` (`h`: the boxes' smallest half
//!   extent), so that resting faces (where an edge axis ties the face's within rounding) give
//!   face contacts with the face's normal, and an edge contact is chosen only when it is one.
//! * **Points**: the intersection of the two boxes' faces that face each other along the axis
//!   `n` (the support faces, A's toward `n`, B's toward `−n`), projected along `n`: A's
//!   corners inside B's face, B's corners inside A's face (a point on the boundary is inside)
//!   and the crossings of an edge of each (strictly inside both edges). Each point is a pair of
//!   points, one on each face, on a line along `n`, and its distance is their separation along
//!   `n` (positive: a gap). For a face axis this is the polygon Sutherland–Hodgman clipping of
//!   the incident face by the reference face's side planes gives; for an edge axis its deepest
//!   point is the crossing of the two edges (their closest points) and the others are the
//!   faces' overlap around it; the same points parry's manifold has. Why not the edges' closest
//!   points alone (ODE's and Bullet's edge contact): measured on `11_pile_mixed`, one point per
//!   edge contact let boxes rotate into each other (deepest penetration over the run 4.0 mm
//!   against 1.15 mm, 51 contact-steps deeper than 2 mm against none; without the bias toward
//!   faces, 60 mm).
//! * **Kept**: points of distance at most `margin` (parry keeps all; a point farther than the
//!   margin is a row that can never act within a step), then four of more (`four_of`).
//!
//! **Feature ids** (what the warm start keys a contact by, with the two shapes): each point
//! names the pair of features it lies on (vertex–face, face–vertex, edge–edge), with parry's
//! packing of the kind in the two top bits; the code below names the feature in the box's own
//! frame: a vertex by its signs (bit `a` set when coordinate `a` is negative), an edge by its
//! axis and the signs of its other two coordinates, a face by its axis and sign. A point keeps
//! its ids while the same features touch, whichever face is the reference.

use karakuri::spatial::{Mat3, Se3, Vec3};

use super::pairs::four_of;

/// Packed kind of a vertex feature id (parry's header bits).
const VERTEX: u32 = 0b01 << 30;
/// Packed kind of an edge feature id.
const EDGE: u32 = 0b10 << 30;
/// Packed kind of a face feature id.
const FACE: u32 = 0b11 << 30;

/// An edge axis is chosen over the best face axis only when its separation is larger by this
/// fraction of the face's (ODE's `dBoxBox` biases its edges by 5 % too)...
const EDGE_REL_TOL: f64 = 0.05;
/// ... plus this fraction of the smaller box's smallest half extent (ties at zero separation).
const EDGE_ABS_TOL: f64 = 1e-6;
/// Cross products of two edges shorter than this are not axes: the edges are parallel and the
/// face axes already cover the direction.
const PARALLEL: f64 = 1e-6;

/// Most points the face clipping gives before the margin and the four are kept (two
/// quadrilaterals overlap in an octagon; corners on each other's boundary may repeat a place).
pub const MAX_POINTS: usize = 16;

/// One contact point of two boxes.
#[derive(Clone, Copy, Debug, Default)]
pub struct BoxPoint {
    /// The point on A's surface.
    pub p_a: Vec3,
    /// The point on B's surface (`p_b − p_a` is along the normal).
    pub p_b: Vec3,
    /// Separation along the normal (m): positive for a gap, negative when overlapping.
    pub dist: f64,
    /// Feature ids (A's, B's).
    pub features: (u32, u32),
}

/// The contacts of two boxes, reused from pair to pair.
#[derive(Clone, Debug)]
pub struct BoxManifold {
    /// Unit normal from A to B (A's frame inside `box_box`, the world after it).
    pub normal: Vec3,
    /// The points (`len` of them).
    pub points: [BoxPoint; MAX_POINTS],
    /// Number of points.
    pub len: usize,
}

impl Default for BoxManifold {
    fn default() -> Self {
        BoxManifold {
            normal: Vec3::zeros(),
            points: [BoxPoint::default(); MAX_POINTS],
            len: 0,
        }
    }
}

impl BoxManifold {
    /// The points.
    pub fn points(&self) -> &[BoxPoint] {
        &self.points[..self.len]
    }

    fn push(&mut self, p_a: Vec3, p_b: Vec3, dist: f64, features: (u32, u32)) {
        if self.len < MAX_POINTS {
            self.points[self.len] = BoxPoint {
                p_a,
                p_b,
                dist,
                features,
            };
            self.len += 1;
        }
    }
}

/// The sign bits of a box feature: bit `a` set when coordinate `a` is negative.
fn sign_bits(s: [f64; 3]) -> u32 {
    (s[0].is_sign_negative() as u32)
        | ((s[1].is_sign_negative() as u32) << 1)
        | ((s[2].is_sign_negative() as u32) << 2)
}

fn vertex_id(s: [f64; 3]) -> u32 {
    VERTEX | sign_bits(s)
}

/// The edge along `axis` whose other two coordinates have the signs of `s`.
fn edge_id(axis: usize, s: [f64; 3]) -> u32 {
    EDGE | ((axis as u32) << 3) | (sign_bits(s) & !(1 << axis))
}

/// The face of normal `sign · e_axis`.
fn face_id(axis: usize, sign: f64) -> u32 {
    FACE | (2 * axis as u32 + sign.is_sign_negative() as u32)
}

/// Index of the largest `|v_i|` (the first on ties).
fn abs_argmax(v: &Vec3) -> usize {
    let a = v.abs();
    if a.x >= a.y && a.x >= a.z {
        0
    } else if a.y >= a.z {
        1
    } else {
        2
    }
}

/// `h` with the signs of `dir` (a box's support point).
fn support(h: &Vec3, dir: &Vec3) -> Vec3 {
    Vec3::new(
        h.x.copysign(dir.x),
        h.y.copysign(dir.y),
        h.z.copysign(dir.z),
    )
}

/// The largest separation of box 2 from box 1 along box 1's face axes, and that axis (box 1's
/// frame, from 1 to 2); `r12` holds box 2's axes as columns in box 1's frame, `t12` its centre.
/// Where several face axes separate, their sum weighted by the separations (a corner region).
fn face_axes(h1: &Vec3, h2: &Vec3, r12: &Mat3, t12: &Vec3) -> (f64, Vec3) {
    let (mut best, mut best_n) = (f64::NEG_INFINITY, Vec3::zeros());
    let (mut acc, mut positive) = (Vec3::zeros(), 0);
    for i in 0..3 {
        let sign = 1f64.copysign(t12[i]);
        let r2 = h2.x * r12[(i, 0)].abs() + h2.y * r12[(i, 1)].abs() + h2.z * r12[(i, 2)].abs();
        let sep = sign * t12[i] - h1[i] - r2;
        if sep > best {
            best = sep;
            best_n = Vec3::zeros();
            best_n[i] = sign;
        }
        if sep >= 0.0 {
            acc[i] += sign * sep.max(f64::EPSILON);
            positive += 1;
        }
    }
    if positive > 1 {
        let n = acc.normalize();
        let p1 = support(h1, &n);
        let p2 = t12 + r12 * support(h2, &-(r12.tr_mul(&n)));
        return ((p2 - p1).dot(&n), n);
    }
    (best, best_n)
}

/// The largest separation along the nine edge–edge axes `e_i × c_k` (A's axis `i`, B's axis
/// `k`, `c = C`'s columns) and its axis (from A to B).
fn edge_axes(ha: &Vec3, hb: &Vec3, c: &Mat3, d: &Vec3) -> (f64, Vec3) {
    let (mut best, mut best_n) = (f64::NEG_INFINITY, Vec3::zeros());
    for k in 0..3 {
        let ck = c.column(k);
        for i in 0..3 {
            let axis = match i {
                0 => Vec3::new(0.0, -ck.z, ck.y),
                1 => Vec3::new(ck.z, 0.0, -ck.x),
                _ => Vec3::new(-ck.y, ck.x, 0.0),
            };
            let norm = axis.norm();
            if norm <= PARALLEL {
                continue;
            }
            let mut n = axis / norm;
            let dn = d.dot(&n);
            if dn < 0.0 {
                n = -n;
            }
            let cn = c.tr_mul(&n);
            let sep = dn.abs() - ha.dot(&n.abs()) - hb.dot(&cn.abs());
            if sep > best {
                best = sep;
                best_n = n;
            }
        }
    }
    (best, best_n)
}

/// The contacts of box A (half extents `ha`, world placement `xa`) with box B (`hb`, `xb`)
/// within `margin` into `out`: the normal (world, from A to B) and at most four points (world).
/// Reads only its arguments; writes `out`.
pub fn box_box(ha: &Vec3, xa: &Se3, hb: &Vec3, xb: &Se3, margin: f64, out: &mut BoxManifold) {
    out.len = 0;
    let ra = &xa.rotation;
    // B in A's frame: its axes (columns) and centre
    let c = ra.tr_mul(&xb.rotation);
    let d = ra.tr_mul(&(xb.translation - xa.translation));
    if !clip_local(ha, hb, &c, &d, margin, out) {
        out.len = 0;
        return;
    }
    keep_four(out);
    out.normal = ra * out.normal;
    for p in &mut out.points[..out.len] {
        p.p_a = xa.transform_point(&p.p_a);
        p.p_b = xa.transform_point(&p.p_b);
    }
}

/// The contacts in A's frame (B's axes `c`, centre `d`), every point of the feature pair
/// before the margin and the four are kept: the normal and the points into `out`. False when
/// the boxes are farther apart than `margin`.
pub fn clip_local(
    ha: &Vec3,
    hb: &Vec3,
    c: &Mat3,
    d: &Vec3,
    margin: f64,
    out: &mut BoxManifold,
) -> bool {
    out.len = 0;
    let (sep_a, n_a) = face_axes(ha, hb, c, d);
    if sep_a > margin {
        return false;
    }
    let ct = c.transpose();
    let (sep_b, n_b) = face_axes(hb, ha, &ct, &-(ct * d));
    if sep_b > margin {
        return false;
    }
    let (sep_e, n_e) = edge_axes(ha, hb, c, d);
    if sep_e > margin {
        return false;
    }
    let (sep_f, n_f) = if sep_b > sep_a {
        (sep_b, -(c * n_b))
    } else {
        (sep_a, n_a)
    };
    let h_min = ha.min().min(hb.min());
    let n = if sep_e > sep_f + EDGE_REL_TOL * sep_f.abs() + EDGE_ABS_TOL * h_min {
        n_e
    } else {
        n_f
    };
    out.normal = n;
    support_faces(ha, hb, c, d, &n, out);
    // the margin: a point farther than it is no contact (in place, order kept)
    let mut kept = 0;
    for q in 0..out.len {
        if out.points[q].dist <= margin {
            out.points[kept] = out.points[q];
            kept += 1;
        }
    }
    out.len = kept;
    true
}

/// Four of more points (`collision::four_of`), in their order.
fn keep_four(out: &mut BoxManifold) {
    if out.len <= 4 {
        return;
    }
    let pts = out.points;
    let keep = four_of(out.len, |q| pts[q].p_a, |q| pts[q].dist, &out.normal);
    let mut kept = 0;
    for (q, p) in pts[..out.len].iter().enumerate() {
        if keep.contains(&q) {
            out.points[kept] = *p;
            kept += 1;
        }
    }
    out.len = kept;
}

/// The contact along `n` (A's frame, from A to B): the overlap of A's face toward `n` and B's
/// face toward `−n`, projected along `n` onto A's face plane (see the module's doc).
fn support_faces(ha: &Vec3, hb: &Vec3, c: &Mat3, d: &Vec3, n: &Vec3, out: &mut BoxManifold) {
    // A's face: x_i = sa ha_i, 2-D coordinates (x_j, x_l)
    let i = abs_argmax(n);
    let sa = 1f64.copysign(n[i]);
    let (j, l) = ((i + 1) % 3, (i + 2) % 3);
    let plane_a = sa * ha[i];
    // B's face toward −n: y_k = sb hb_k in B's frame, corners (p, q) signs ++, −+, −−, +−
    let m = -(c.tr_mul(n));
    let k = abs_argmax(&m);
    let sb = 1f64.copysign(m[k]);
    let (p, q) = ((k + 1) % 3, (k + 2) % 3);
    let nb = c.column(k) * sb; // B's face normal (A's frame)
    let centre_b = d + nb * hb[k];
    let (u, w) = (c.column(p) * hb[p], c.column(q) * hb[q]);
    const SIGNS: [(f64, f64); 4] = [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)];
    let mut vb = [Vec3::zeros(); 4]; // B's corners (A's frame)
    let mut sb_bits = [[0.0; 3]; 4]; // their signs in B's frame
    let mut proj = [(0.0, 0.0); 4]; // projected along n on A's plane, (x_j, x_l)
    let mut height = [0.0; 4]; // distance along n from A's plane
    for (g, &(su, sw)) in SIGNS.iter().enumerate() {
        let v = centre_b + u * su + w * sw;
        let t = (v[i] - plane_a) / n[i];
        vb[g] = v;
        height[g] = t;
        proj[g] = (v[j] - t * n[j], v[l] - t * n[l]);
        sb_bits[g][k] = sb;
        sb_bits[g][p] = su;
        sb_bits[g][q] = sw;
    }
    let face_b = face_id(k, sb);
    let face_a = face_id(i, sa);
    // A's corners inside B's projected face (a point on its boundary is inside)
    let n_dot_nb = n.dot(&nb);
    for &(sj, sl) in &SIGNS {
        let pt = (sj * ha[j], sl * ha[l]);
        let mut side = 0.0;
        let mut inside = true;
        for g in 0..4 {
            let (a, b) = (proj[(g + 3) % 4], proj[g]);
            let s = (b.0 - a.0) * (pt.1 - a.1) - (b.1 - a.1) * (pt.0 - a.0);
            if side == 0.0 {
                side = s;
            } else if side * s < 0.0 {
                inside = false;
                break;
            }
        }
        if inside {
            let mut corner = Vec3::zeros();
            corner[i] = plane_a;
            corner[j] = pt.0;
            corner[l] = pt.1;
            let t = (centre_b - corner).dot(&nb) / n_dot_nb;
            let mut s = [0.0; 3];
            s[i] = sa;
            s[j] = sj;
            s[l] = sl;
            out.push(corner, corner + n * t, t, (vertex_id(s), face_b));
        }
    }
    // B's corners inside A's face
    for g in 0..4 {
        if proj[g].0.abs() <= ha[j] && proj[g].1.abs() <= ha[l] {
            out.push(
                vb[g] - n * height[g],
                vb[g],
                height[g],
                (face_a, vertex_id(sb_bits[g])),
            );
        }
    }
    let a_face = FaceA { i, j, l, sa, plane: plane_a };
    let b_face = FaceB { corners: vb, bits: sb_bits, proj, p, q };
    edge_crossings(ha, n, &a_face, &b_face, out);
}

/// A's face toward `n` (A's frame): `x_i = plane` (`= sa ha_i`), its in-plane axes `j`, `l`.
#[derive(Clone, Copy)]
struct FaceA {
    i: usize,
    j: usize,
    l: usize,
    sa: f64,
    plane: f64,
}

/// B's face toward `−n`, in A's frame: its corners (signs ++, −+, −−, +− along B's in-plane
/// axes `p`, `q`), their signs in B's frame, and their projections along `n` on A's plane
/// `(x_j, x_l)`.
struct FaceB {
    corners: [Vec3; 4],
    bits: [[f64; 3]; 4],
    proj: [(f64, f64); 4],
    p: usize,
    q: usize,
}

/// The crossings of an edge of each face, strictly inside both: B's edge g (corner g to
/// g + 1) against A's four edges (two along x_j at x_l = ±ha_l, two along x_l at x_j = ±ha_j);
/// pushed to `out`.
fn edge_crossings(ha: &Vec3, n: &Vec3, face_a: &FaceA, face_b: &FaceB, out: &mut BoxManifold) {
    let FaceA { i, j, l, sa, plane: plane_a } = *face_a;
    let FaceB { corners: vb, bits: sb_bits, proj, p, q } = face_b;
    let (p, q) = (*p, *q);
    for g in 0..4 {
        let h = (g + 1) % 4;
        let (a, b) = (proj[g], proj[h]);
        // B's edge: along p when the corners differ in p's sign, else along q
        let axis_b = if sb_bits[g][p] != sb_bits[h][p] { p } else { q };
        let edge_b = edge_id(axis_b, sb_bits[g]);
        for (along, across) in [(j, l), (l, j)] {
            let (a_along, a_across, b_along, b_across) = if along == j {
                (a.0, a.1, b.0, b.1)
            } else {
                (a.1, a.0, b.1, b.0)
            };
            let delta = b_across - a_across;
            if delta == 0.0 {
                continue;
            }
            for side in [1.0, -1.0] {
                let at = side * ha[across];
                let tb = (at - a_across) / delta;
                if !(tb > 0.0 && tb < 1.0) {
                    continue;
                }
                let x = a_along + tb * (b_along - a_along);
                if x.abs() >= ha[along] {
                    continue;
                }
                let mut pa = Vec3::zeros();
                pa[i] = plane_a;
                pa[along] = x;
                pa[across] = at;
                let pb = vb[g] + (vb[h] - vb[g]) * tb;
                let mut s = [0.0; 3];
                s[i] = sa;
                s[across] = side;
                out.push(pa, pb, (pb - pa).dot(n), (edge_id(along, s), edge_b));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The manifold against parry's (`contact_manifold_convex_convex` on two cuboids, what the
    //! collider called before) on randomised pairs of each kind, and the feature ids' meaning.
    use super::*;
    use crate::collision::to_parry;
    use crate::rng::SplitMix64;
    use karakuri::spatial::rotation_about;
    use parry3d_f64::math::Vector as PVec;
    use parry3d_f64::query::sat;
    use parry3d_f64::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};
    use parry3d_f64::shape::{Cuboid, SharedShape};

    const MARGIN: f64 = 0.01;
    const TOL: f64 = 1e-9;

    fn v(p: PVec) -> Vec3 {
        Vec3::new(p.x, p.y, p.z)
    }

    fn pv(p: &Vec3) -> PVec {
        PVec::new(p.x, p.y, p.z)
    }

    /// parry's manifold in A's frame: normal, points `(p_a, p_b, dist)`; and whether its
    /// choice of axis is unambiguous (no other kind of axis within `gap` of the chosen one's
    /// separation, and no edge axis it tested that this module does not).
    struct Parry {
        normal: Vec3,
        points: Vec<(Vec3, Vec3, f64)>,
        edge: bool,
        clear: bool,
    }

    fn parry(ha: &Vec3, xa: &Se3, hb: &Vec3, xb: &Se3) -> Parry {
        let (pa, pb) = (to_parry(xa), to_parry(xb));
        let pos12 = pa.inv_mul(&pb);
        let (sa, sb) = (
            SharedShape::cuboid(ha.x, ha.y, ha.z),
            SharedShape::cuboid(hb.x, hb.y, hb.z),
        );
        let mut m = ContactManifold::<(), ()>::new();
        DefaultQueryDispatcher
            .contact_manifold_convex_convex(&pos12, &*sa.0, &*sb.0, None, None, MARGIN, &mut m)
            .unwrap();
        let (ca, cb) = (Cuboid::new(pv(ha)), Cuboid::new(pv(hb)));
        let (s1, n1) = sat::cuboid_cuboid_find_local_separating_normal_oneway(&ca, &cb, &pos12);
        let (s2, n2) =
            sat::cuboid_cuboid_find_local_separating_normal_oneway(&cb, &ca, &pos12.inverse());
        // the two faces' normals (A's frame): the same within rounding (parallel faces) or
        // their separations apart
        let faces_clear = (s1 - s2).abs() > 1e-7 || (v(n1) + v(pos12.rotation * n2)).norm() < 1e-12;
        let (s3, n3) = sat::cuboid_cuboid_find_local_separating_edge_twoway(&ca, &cb, &pos12);
        let sf = s1.max(s2);
        let nf = if s2 > s1 {
            -v(pos12.rotation * n2)
        } else {
            v(n1)
        };
        // an edge axis along the best face's normal (parallel faces) is that face's axis
        let edge_is_face = (v(n3) - nf).norm() < 1e-12;
        let edge = s3 > sf && !edge_is_face;
        // ours picks the edge only past its bias: a margin on both sides, and faces apart
        let bias = EDGE_REL_TOL * sf.abs() + EDGE_ABS_TOL * ha.min().min(hb.min());
        let clear = (edge_is_face || (s3 - sf).abs() > 2.0 * bias + 1e-7) && faces_clear;
        Parry {
            normal: v(m.local_n1),
            points: m
                .points
                .iter()
                .map(|c| (v(c.local_p1), v(pos12 * c.local_p2), c.dist))
                .collect(),
            edge,
            clear,
        }
    }

    /// Ours in A's frame (every point within the margin, before the four are kept).
    fn ours(ha: &Vec3, xa: &Se3, hb: &Vec3, xb: &Se3) -> Option<BoxManifold> {
        let c = xa.rotation.tr_mul(&xb.rotation);
        let d = xa.rotation.tr_mul(&(xb.translation - xa.translation));
        let mut out = BoxManifold::default();
        clip_local(ha, hb, &c, &d, MARGIN, &mut out).then_some(out)
    }

    /// Does feature `id` of a box of half extents `h` hold point `p` (box frame)?
    fn holds(h: &Vec3, id: u32, p: &Vec3) -> bool {
        let code = id & !(0b11 << 30);
        let on = |a: usize, bit: u32| {
            let s = if bit & (1 << a) != 0 { -1.0 } else { 1.0 };
            (p[a] - s * h[a]).abs() < 1e-9
        };
        let within = |a: usize| p[a].abs() <= h[a] + 1e-9;
        match id >> 30 {
            0b01 => (0..3).all(|a| on(a, code)),
            0b10 => {
                let axis = (code >> 3) as usize;
                (0..3).all(|a| {
                    if a == axis {
                        within(a)
                    } else {
                        on(a, code & 0b111)
                    }
                })
            }
            0b11 => {
                let axis = (code / 2) as usize;
                let bit = if code % 2 == 1 { 1 << axis } else { 0 };
                (0..3).all(|a| if a == axis { on(a, bit) } else { within(a) })
            }
            _ => false,
        }
    }

    /// Checks one pair: the ids name features holding the points, they differ from point to
    /// point, and against parry where its choice is unambiguous: the normal and the same set
    /// of points within the margin. Returns whether parry was compared and on an edge axis.
    fn check(ha: &Vec3, xa: &Se3, hb: &Vec3, xb: &Se3, what: &str) -> Option<bool> {
        let p = parry(ha, xa, hb, xb);
        let Some(o) = ours(ha, xa, hb, xb) else {
            assert!(
                p.points.is_empty() || !p.clear,
                "{what}: parry finds contacts, not ours"
            );
            return None;
        };
        let x_ba = xa.inv_compose(xb);
        let pts = o.points();
        for (q, c) in pts.iter().enumerate() {
            assert!(
                holds(ha, c.features.0, &c.p_a),
                "{what}: A's feature {:x}",
                c.features.0
            );
            let pb = x_ba.inverse().transform_point(&c.p_b);
            assert!(
                holds(hb, c.features.1, &pb),
                "{what}: B's feature {:x}",
                c.features.1
            );
            assert!(
                (c.dist - (c.p_b - c.p_a).dot(&o.normal)).abs() < TOL,
                "{what}"
            );
            assert!(((c.p_b - c.p_a) - o.normal * c.dist).norm() < 1e-9, "{what}: along n");
            for e in &pts[..q] {
                let same_place = (e.p_a - c.p_a).norm() < 1e-9;
                assert!(e.features != c.features || same_place, "{what}: ids repeat");
            }
        }
        if !p.clear || p.points.is_empty() {
            return None;
        }
        assert!(
            (o.normal - p.normal).norm() < TOL,
            "{what}: normal {} vs {}",
            o.normal,
            p.normal
        );
        let near: Vec<_> = p.points.iter().filter(|c| c.2 <= MARGIN).collect();
        {
            assert_eq!(pts.len(), near.len(), "{what}: {pts:?} vs {near:?}");
            for c in pts {
                assert!(
                    near.iter().any(|e| (e.0 - c.p_a).norm() < TOL
                        && (e.1 - c.p_b).norm() < TOL
                        && (e.2 - c.dist).abs() < TOL),
                    "{what}: {c:?} not in {near:?}"
                );
            }
        }
        Some(p.edge)
    }

    fn random_rotation(g: &mut SplitMix64, max_angle: f64) -> Mat3 {
        let axis = Vec3::new(g.gaussian(), g.gaussian(), g.gaussian()).normalize();
        rotation_about(&axis, max_angle * g.symmetric())
    }

    fn random_half_extents(g: &mut SplitMix64) -> Vec3 {
        Vec3::new(
            0.05 + 0.04 * g.symmetric(),
            0.04 + 0.03 * g.symmetric(),
            0.03 + 0.02 * g.symmetric(),
        )
    }

    /// B above A (its lowest point at `depth` below A's top over A's centre... then moved
    /// sideways), both rotated as `ra`, `rb`: the gap along z set from B's support point.
    fn stacked(g: &mut SplitMix64, ra: Mat3, rb: Mat3, ha: &Vec3, hb: &Vec3) -> (Se3, Se3) {
        let xa = Se3::new(ra, Vec3::new(0.3 * g.symmetric(), 0.3 * g.symmetric(), 0.1));
        let top_a = (ra.transpose() * Vec3::z()).abs().dot(ha);
        let bottom_b = (rb.transpose() * Vec3::z()).abs().dot(hb);
        let gap = 0.006 * g.symmetric() - 0.002;
        let side = Vec3::new(0.06 * g.symmetric(), 0.05 * g.symmetric(), 0.0);
        let xb = Se3::new(
            rb,
            xa.translation + side + Vec3::z() * (top_a + bottom_b + gap),
        );
        (xa, xb)
    }

    #[test]
    fn matches_parry_on_random_pairs() {
        let mut g = SplitMix64::new(14, 0);
        let (mut faces, mut edges) = (0, 0);
        let mut count = |r: Option<bool>| match r {
            Some(true) => edges += 1,
            Some(false) => faces += 1,
            None => {}
        };
        for case in 0..4000 {
            let (ha, hb) = (random_half_extents(&mut g), random_half_extents(&mut g));
            let (ra, rb) = match case % 5 {
                // resting face on face: B turned about z, exactly parallel or tilted by
                // 2e-3 to 2e-2 rad
                0 => {
                    let r = rotation_about(&Vec3::z(), 3.0 * g.symmetric());
                    let axis = Vec3::new(g.gaussian(), g.gaussian(), 0.0).normalize();
                    let tilt = if case % 2 == 0 {
                        0.0
                    } else {
                        0.011 + 0.009 * g.symmetric()
                    };
                    (Mat3::identity(), rotation_about(&axis, tilt) * r)
                }
                // tilted: up to 30°
                1 => (random_rotation(&mut g, 0.2), random_rotation(&mut g, 0.5)),
                // edge on edge: A's top edge along x, B's bottom edge along y
                2 => (
                    rotation_about(
                        &Vec3::x(),
                        std::f64::consts::FRAC_PI_4 + 0.2 * g.symmetric(),
                    ),
                    rotation_about(
                        &Vec3::y(),
                        std::f64::consts::FRAC_PI_4 + 0.2 * g.symmetric(),
                    ) * rotation_about(&Vec3::z(), 0.3 * g.symmetric()),
                ),
                // vertex on face: B's body diagonal down
                3 => {
                    let tip = rotation_about(&Vec3::new(1.0, -1.0, 0.0).normalize(), 0.9553);
                    (Mat3::identity(), random_rotation(&mut g, 0.1) * tip)
                }
                // anything
                _ => (random_rotation(&mut g, 3.2), random_rotation(&mut g, 3.2)),
            };
            let (xa, xb) = stacked(&mut g, ra, rb, &ha, &hb);
            count(check(&ha, &xa, &hb, &xb, &format!("case {case}")));
            // and the other way round
            count(check(&hb, &xb, &ha, &xa, &format!("case {case} swapped")));
        }
        // the comparisons ran on every kind
        assert!(
            faces > 2400 && edges > 1600,
            "{faces} face and {edges} edge pairs compared"
        );
    }

    #[test]
    fn aligned_stack_keeps_the_corners() {
        // identical boxes exactly on each other: every corner of each is on the other's face
        // (eight points, four kept), the normal exactly +z, the depth exact
        let h = Vec3::new(0.05, 0.05, 0.05);
        let xa = Se3::from_translation(Vec3::new(0.0, 0.0, 0.05));
        let xb = Se3::from_translation(Vec3::new(0.0, 0.0, 0.1499));
        let o = ours(&h, &xa, &h, &xb).unwrap();
        assert_eq!(o.normal, Vec3::z());
        assert_eq!(o.len, 8);
        let p = parry(&h, &xa, &h, &xb);
        assert_eq!(p.points.len(), 8);
        let mut w = BoxManifold::default();
        box_box(&h, &xa, &h, &xb, MARGIN, &mut w);
        assert_eq!(w.len, 4);
        for c in w.points() {
            assert!((c.dist + 1e-4).abs() < 1e-12, "{c:?}");
            assert!((c.p_a.z - 0.1).abs() < 1e-15, "{c:?}");
            assert!((c.p_a.x.abs() - 0.05).abs() < 1e-12 && (c.p_a.y.abs() - 0.05).abs() < 1e-12);
        }
        // the four are the four corners
        let mut corners: Vec<_> = w
            .points()
            .iter()
            .map(|c| (c.p_a.x > 0.0, c.p_a.y > 0.0))
            .collect();
        corners.sort();
        corners.dedup();
        assert_eq!(corners.len(), 4);
    }

    #[test]
    fn ids_stay_while_the_same_features_touch() {
        // a box resting turned on another, moved by small steps (and which face is the
        // reference flipping with the tilt's sign): each point keeps its ids
        let (ha, hb) = (Vec3::new(0.1, 0.08, 0.05), Vec3::new(0.045, 0.035, 0.03));
        let turn = rotation_about(&Vec3::z(), 0.4);
        let key = |o: &BoxManifold| {
            let mut k: Vec<_> = o.points().iter().map(|c| c.features).collect();
            k.sort();
            k
        };
        let xa = Se3::from_translation(Vec3::new(0.0, 0.0, 0.05));
        let at = |dx: f64, tilt: f64| {
            let r = rotation_about(&Vec3::x(), tilt) * turn;
            Se3::new(r, Vec3::new(0.02 + dx, 0.01, 0.1295))
        };
        let first = ours(&ha, &xa, &hb, &at(0.0, 0.0)).unwrap();
        assert_eq!(first.len, 4, "B's four corners on A's face");
        for s in 1..20 {
            let dx = 1e-4 * s as f64;
            let tilt = 1e-6 * if s % 2 == 0 { 1.0 } else { -1.0 };
            let o = ours(&ha, &xa, &hb, &at(dx, tilt)).unwrap();
            assert_eq!(key(&o), key(&first), "step {s}");
        }
        // B reaching past A's edge: the corners still on A's face keep their ids, the others
        // give edge crossings
        let o = ours(&ha, &xa, &hb, &at(0.09, 0.0)).unwrap();
        let (k0, k1) = (key(&first), key(&o));
        let on_face = k1.iter().filter(|f| f.0 >> 30 == 0b11).count();
        assert!((1..4).contains(&on_face), "{k1:?}");
        assert!(k1
            .iter()
            .filter(|f| f.0 >> 30 == 0b11)
            .all(|f| k0.contains(f)));
        assert_eq!(k1.iter().filter(|f| f.0 >> 30 == 0b10).count(), 2, "{k1:?}");
    }

    #[test]
    fn apart_boxes_have_no_contact() {
        let h = Vec3::new(0.05, 0.04, 0.03);
        let xa = Se3::identity();
        let far = |p: Vec3| {
            Se3::new(
                rotation_about(&Vec3::new(1.0, 2.0, 3.0).normalize(), 0.7),
                p,
            )
        };
        let mut out = BoxManifold::default();
        for p in [
            Vec3::new(0.3, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 0.2),
            Vec3::new(0.12, 0.12, 0.1),
        ] {
            box_box(&h, &xa, &h, &far(p), MARGIN, &mut out);
            assert_eq!(out.len, 0, "{p}");
            assert!(parry(&h, &xa, &h, &far(p)).points.is_empty(), "{p}");
        }
    }
}
