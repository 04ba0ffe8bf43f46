//! Kinematics in lanes, four states at once, each lane the single call's bits: the joint
//! placements `λX_i` and world placements `oX_i` as `jcalc::place_joints` computes them (the
//! usual revolute joint's rotation as columns of its parent's mixed by the angle's sine and
//! cosine, the others as `oX_λ(i) λX_i`), then forward kinematics, the world Jacobian columns
//! (`dof_in_frame`) and the generalised gravity (`algorithms::gravity_torques`: `a_i = X_i
//! a_λ(i)` from `a_0 = −g`, `f_i = I_i a_i`, RNEA's backward pass).

// index loops over rows and columns, as the formulas are written
#![allow(clippy::needless_range_loop)]

use super::lanes::{add3, cross, inertia_mul, mul_mv, parent_placement, placement_in_lanes, sin_cos, splat3, LMotion, LSe3, LaneWorkspace, L, LANES, M3, V3, V6};
use crate::model::{JointType, Model};

/// The kinematics buffers of one thread: world placements per joint, world motion subspaces
/// per dof (CRBA's).
pub(crate) struct KinWorkspace {
    pub(crate) o: Vec<LSe3>,
    pub(crate) s_world: Vec<V6>,
}

/// The lanes of `src` (one state's result laid out in lanes: entry `e` of state `l` at
/// `src[e].0[l]`) that hold states of the group `g` (of `k`) into their rows of `dst`
/// (`src.len()` numbers per state): four entries of four states at a time, a 4x4 transpose
/// in registers rather than one scalar move per number.
#[inline(always)]
pub(crate) fn store_lanes(src: &[L], g: usize, k: usize, dst: &mut [f64]) {
    let per = src.len();
    let states = LANES.min(k - g * LANES);
    let rows = &mut dst[g * LANES * per..(g * LANES + states) * per];
    if states == LANES {
        let (r01, r23) = rows.split_at_mut(2 * per);
        let (r0, r1) = r01.split_at_mut(per);
        let (r2, r3) = r23.split_at_mut(per);
        let mut e = 0;
        while e + 4 <= per {
            let [a, b, c, d] = transpose4(src[e], src[e + 1], src[e + 2], src[e + 3]);
            r0[e..e + 4].copy_from_slice(&a.0);
            r1[e..e + 4].copy_from_slice(&b.0);
            r2[e..e + 4].copy_from_slice(&c.0);
            r3[e..e + 4].copy_from_slice(&d.0);
            e += 4;
        }
        for e in e..per {
            (r0[e], r1[e], r2[e], r3[e]) = (src[e].0[0], src[e].0[1], src[e].0[2], src[e].0[3]);
        }
    } else {
        for (l, row) in rows.chunks_exact_mut(per).enumerate() {
            for (o, x) in row.iter_mut().zip(src) {
                *o = x.0[l];
            }
        }
    }
}

impl KinWorkspace {
    pub(crate) fn new(model: &Model) -> Self {
        let mut o = vec![LSe3::default(); model.njoints];
        let (one, zero) = (L::splat(1.0), L::splat(0.0));
        o[0].r = [[one, zero, zero], [zero, one, zero], [zero, zero, one]];
        KinWorkspace { o, s_world: vec![[L::default(); 6]; model.nv] }
    }
}

/// Column `c` of `r`.
#[inline(always)]
fn column(r: &M3, c: usize) -> V3 {
    [r[0][c], r[1][c], r[2][c]]
}

/// `r` times the rotation about axis `c` by the angle of sine `s` and cosine `cs`, as
/// `model::mul_axis_rotation` mixes the columns.
#[inline(always)]
fn mul_axis_rotation(r: &M3, c: usize, s: L, cs: L) -> M3 {
    let (c0, c1, c2) = (column(r, 0), column(r, 1), column(r, 2));
    let mut cols = [c0, c1, c2];
    for i in 0..3 {
        match c {
            0 => {
                cols[1][i] = cs * c1[i] + s * c2[i];
                cols[2][i] = cs * c2[i] - s * c1[i];
            }
            1 => {
                cols[0][i] = cs * c0[i] - s * c2[i];
                cols[2][i] = s * c0[i] + cs * c2[i];
            }
            _ => {
                cols[0][i] = cs * c0[i] + s * c1[i];
                cols[1][i] = cs * c1[i] - s * c0[i];
            }
        }
    }
    let mut out = *r;
    for i in 0..3 {
        for k in 0..3 {
            out[i][k] = cols[k][i];
        }
    }
    out
}

/// `a b` of 3x3 matrices in nalgebra's order (a column of the product at a time, each entry
/// `(a_i0 b_0j + a_i1 b_1j) + a_i2 b_2j`).
#[inline(always)]
fn mul33(a: &M3, b: &M3) -> M3 {
    let mut o = *a;
    for i in 0..3 {
        for j in 0..3 {
            o[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    o
}

/// Where [`place`] puts `o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// `li` only.
    None,
    /// World placements, but a free-flyer root's body is the frame of its subtree (CRBA's
    /// working frame, as the single kernel's).
    Root,
}

/// Places the joints of the group of states `g * LANES ..` (of `k`, lanes past `k` repeating
/// the last state): `li` always, the placements `o` in `frame`.
#[inline(always)]
pub(crate) fn place(model: &Model, li: &mut [LSe3], o: &mut [LSe3], g: usize, k: usize, q: &[f64], frame: Frame) {
    let world = frame != Frame::None;
    let nq = model.nq;
    let rows: [usize; LANES] = std::array::from_fn(|l| (g * LANES + l).min(k - 1));
    for i in 1..model.njoints {
        let p = model.parents[i];
        let iq = model.idx_q[i];
        let angle = |l: usize| q[rows[l] * nq + iq];
        if let JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } = model.joint_types[i] {
            if let (Some((c, sign)), Some(0)) = (axis.signed_basis(), model.placement_quarter_turn[i]) {
                // jcalc's fast path: no 3x3 product, the parent's columns mixed
                let mut x = L::splat(0.0);
                for l in 0..LANES {
                    x.0[l] = q[rows[l] * nq + iq];
                }
                let (s, cs) = sin_cos(x);
                let s = L::splat(sign) * s;
                let (one, zero) = (L::splat(1.0), L::splat(0.0));
                let id = [[one, zero, zero], [zero, one, zero], [zero, zero, one]];
                let t = splat3(&model.joint_placements[i].translation);
                li[i] = LSe3 { r: mul_axis_rotation(&id, c, s, cs), p: t };
                if world {
                    let op = o[p];
                    o[i] = LSe3 { r: mul_axis_rotation(&op.r, c, s, cs), p: add3(mul_mv(&op.r, t), op.p) };
                }
                continue;
            }
        }
        if let Some(x) = placement_in_lanes(model, i, angle) {
            li[i] = x;
        } else {
            for l in 0..LANES {
                let s = rows[l];
                li[i].set_lane(l, &parent_placement(model, i, &q[s * nq..(s + 1) * nq]));
            }
        }
        if frame == Frame::Root && p == 0 && model.joint_types[i] == JointType::FreeFlyer {
            o[i] = o[0];
        } else if world {
            // `Se3::compose`
            let (op, x) = (o[p], li[i]);
            o[i] = LSe3 { r: mul33(&op.r, &x.r), p: add3(mul_mv(&op.r, x.p), op.p) };
        }
    }
}

/// The world motion subspace of every dof (`jcalc::dof_in_frame` at `o`) into `s_world`.
#[inline(always)]
pub(crate) fn world_dofs(model: &Model, kw: &mut KinWorkspace) {
    for k in 0..model.nv {
        kw.s_world[k] = dof_column(model, &kw.o[model.dof_joint[k]], k);
    }
}

/// `a`, `b`, `c`, `d` transposed: entry `l` of the result is `[a_l, b_l, c_l, d_l]` (two
/// unpacks and two lane swaps where LLVM sees the pattern, rather than sixteen scalar moves).
#[inline(always)]
pub(crate) fn transpose4(a: L, b: L, c: L, d: L) -> [L; 4] {
    let (a, b, c, d) = (a.0, b.0, c.0, d.0);
    let (t0, t1) = ([a[0], b[0], a[2], b[2]], [a[1], b[1], a[3], b[3]]);
    let (t2, t3) = ([c[0], d[0], c[2], d[2]], [c[1], d[1], c[3], d[3]]);
    [L([t0[0], t0[1], t2[0], t2[1]]), L([t1[0], t1[1], t3[0], t3[1]]), L([t0[2], t0[3], t2[2], t2[3]]), L([t1[2], t1[3], t3[2], t3[3]])]
}

/// `r` times the rotation about axis `c` by the angle of sine `s` and cosine `cs`, row by row
/// (the products and sums of `model::mul_axis_rotation`).
#[inline(always)]
fn turn_columns(r: &M3, c: usize, s: L, cs: L) -> M3 {
    let mut o = *r;
    for i in 0..3 {
        let x = r[i];
        match c {
            0 => (o[i][1], o[i][2]) = (cs * x[1] + s * x[2], cs * x[2] - s * x[1]),
            1 => (o[i][0], o[i][2]) = (cs * x[0] - s * x[2], s * x[0] + cs * x[2]),
            _ => (o[i][0], o[i][1]) = (cs * x[0] + s * x[1], cs * x[1] - s * x[0]),
        }
    }
    o
}

/// The axis and sign of joint `i` if it is a revolute joint about ±x, ±y, ±z behind an
/// unrotated placement (`jcalc`'s fast path: its world rotation mixes two of its parent's
/// columns).
#[inline(always)]
fn axis_joint(model: &Model, i: usize) -> Option<(usize, f64)> {
    if let JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } = model.joint_types[i] {
        if model.placement_quarter_turn[i] == Some(0) {
            return axis.signed_basis();
        }
    }
    None
}

/// The sines and cosines of the angles of every [`axis_joint`] of the group (state rows
/// `rows`) into `sn`, `cs` at the joint's dof: apart from the placements, as
/// `jcalc::place_joints` computes them, so that the chain of placements does not wait on a
/// sine's latency.
#[inline(always)]
fn axis_angles(model: &Model, rows: &[usize; LANES], q: &[f64], sn: &mut [L], cs: &mut [L]) {
    let nq = model.nq;
    for i in 1..model.njoints {
        if axis_joint(model, i).is_some() {
            let (iq, iv) = (model.idx_q[i], model.idx_v[i]);
            let mut x = L::splat(0.0);
            for l in 0..LANES {
                x.0[l] = q[rows[l] * nq + iq];
            }
            (sn[iv], cs[iv]) = sin_cos(x);
        }
    }
}

/// Entry `at` of the group's rows of `q` (`nq` per state), one state per lane.
#[inline(always)]
fn gather(q: &[f64], rows: &[usize; LANES], nq: usize, at: usize) -> L {
    let mut x = L::splat(0.0);
    for l in 0..LANES {
        x.0[l] = q[rows[l] * nq + at];
    }
    x
}

/// `λX_i` of a free-flyer joint in lanes, as `JointType::placement_after` computes it for one
/// state: `placement ∘ (R, t)`, `R` from the quaternion normalised and turned into a matrix as
/// nalgebra's `UnitQuaternion::from_quaternion` and `to_rotation_matrix` do (its 4-vector dot
/// `(x² + z²) + (y² + w²)`, the square root, four divisions, then the products and sums of
/// `to_rotation_matrix`), operation for operation.
#[inline(always)]
fn free_flyer_in_lanes(model: &Model, i: usize, rows: &[usize; LANES], q: &[f64]) -> LSe3 {
    let (nq, iq) = (model.nq, model.idx_q[i]);
    let t = [gather(q, rows, nq, iq), gather(q, rows, nq, iq + 1), gather(q, rows, nq, iq + 2)];
    let (x, y, z, w) = (gather(q, rows, nq, iq + 3), gather(q, rows, nq, iq + 4), gather(q, rows, nq, iq + 5), gather(q, rows, nq, iq + 6));
    let n2 = L::splat(0.0) + ((x * x + z * z) + (y * y + w * w));
    let mut n = n2;
    for l in 0..LANES {
        n.0[l] = n2.0[l].sqrt();
    }
    let (qi, qj, qk, qw) = (x / n, y / n, z / n, w / n);
    let two = L::splat(2.0);
    let (ww, ii, jj, kk) = (qw * qw, qi * qi, qj * qj, qk * qk);
    let (ij, wk, wj, ik, jk, wi) = (qi * qj * two, qw * qk * two, qw * qj * two, qi * qk * two, qj * qk * two, qw * qi * two);
    let r = [[ww + ii - jj - kk, ij - wk, wj + ik], [wk + ij, ww - ii + jj - kk, jk - wi], [ik - wj, wi + jk, ww - ii - jj + kk]];
    let placement = &model.joint_placements[i];
    let mut pr: M3 = [[L::splat(0.0); 3]; 3];
    for a in 0..3 {
        for b in 0..3 {
            pr[a][b] = L::splat(placement.rotation[(a, b)]);
        }
    }
    LSe3 { r: mul33(&pr, &r), p: add3(mul_mv(&pr, t), splat3(&placement.translation)) }
}

/// The world placement of joint `i` of the group (state rows `rows`) from its parent's in `o`,
/// as [`place`] computes it in the world frame, without keeping `λX_i` (an [`axis_joint`]'s
/// sine and cosine from [`axis_angles`]).
#[inline(always)]
fn world_placement(model: &Model, o: &[LSe3], i: usize, rows: &[usize; LANES], q: &[f64], sn: &[L], cs: &[L]) -> LSe3 {
    let (nq, iq) = (model.nq, model.idx_q[i]);
    let op = &o[model.parents[i]];
    if let Some((c, sign)) = axis_joint(model, i) {
        let iv = model.idx_v[i];
        let t = splat3(&model.joint_placements[i].translation);
        return LSe3 { r: turn_columns(&op.r, c, L::splat(sign) * sn[iv], cs[iv]), p: add3(mul_mv(&op.r, t), op.p) };
    }
    let li = match placement_in_lanes(model, i, |l| q[rows[l] * nq + iq]) {
        Some(x) => x,
        None if model.joint_types[i] == JointType::FreeFlyer => free_flyer_in_lanes(model, i, rows, q),
        None => {
            let mut x = LSe3::default();
            for l in 0..LANES {
                x.set_lane(l, &parent_placement(model, i, &q[rows[l] * nq..(rows[l] + 1) * nq]));
            }
            x
        }
    };
    LSe3 { r: mul33(&op.r, &li.r), p: add3(mul_mv(&op.r, li.p), op.p) }
}

/// The rows of `out` (`per` numbers each) of the states of group `g` (of `k`), one slice per
/// lane (empty past `k`).
#[inline(always)]
fn state_rows(out: &mut [f64], per: usize, g: usize, k: usize) -> [&mut [f64]; LANES] {
    let states = LANES.min(k - g * LANES);
    let mut rest = &mut out[g * LANES * per..(g * LANES + states) * per];
    let mut rows: [&mut [f64]; LANES] = Default::default();
    for row in rows.iter_mut().take(states) {
        let (a, b) = std::mem::take(&mut rest).split_at_mut(per);
        (*row, rest) = (a, b);
    }
    rows
}

/// Joint `i`'s world placement `x` of the four states as 4x4 row-major into `rows` (one state's
/// `njoints * 16` numbers each, empty for lanes past the states).
#[inline(always)]
fn put_placement(x: &LSe3, i: usize, rows: &mut [&mut [f64]; LANES]) {
    let r0 = transpose4(x.r[0][0], x.r[0][1], x.r[0][2], x.p[0]);
    let r1 = transpose4(x.r[1][0], x.r[1][1], x.r[1][2], x.p[1]);
    let r2 = transpose4(x.r[2][0], x.r[2][1], x.r[2][2], x.p[2]);
    for l in 0..LANES {
        if let Some(o) = rows[l].get_mut(i * 16..i * 16 + 16) {
            o[..4].copy_from_slice(&r0[l].0);
            o[4..8].copy_from_slice(&r1[l].0);
            o[8..12].copy_from_slice(&r2[l].0);
            o[12..].copy_from_slice(&[0.0, 0.0, 0.0, 1.0]);
        }
    }
}

/// Forward kinematics of `k` states: `njoints` 4x4 row-major world placements each into `out`,
/// each joint's four placements written as soon as they are known (no lane buffer of the
/// result, no `λX_i` kept).
#[inline(always)]
pub(crate) fn fk_groups(m: &Model, w: &mut LaneWorkspace, kw: &mut KinWorkspace, k: usize, q: &[f64], out: &mut [f64]) {
    let nj = m.njoints;
    for g in 0..k.div_ceil(LANES) {
        let rows: [usize; LANES] = std::array::from_fn(|l| (g * LANES + l).min(k - 1));
        axis_angles(m, &rows, q, &mut w.x1, &mut w.x2);
        let mut dst = state_rows(out, nj * 16, g, k);
        put_placement(&kw.o[0], 0, &mut dst);
        for i in 1..nj {
            let x = world_placement(m, &kw.o, i, &rows, q, &w.x1, &w.x2);
            kw.o[i] = x;
            put_placement(&x, i, &mut dst);
        }
    }
}

/// Column `d` of the group's Jacobians (and `world_dofs`' motion subspaces): `dof_in_frame` at the
/// world placement `x` of its joint.
#[inline(always)]
fn dof_column(model: &Model, x: &LSe3, d: usize) -> V6 {
    let z = L::splat(0.0);
    match model.dof_axis[d] {
        Some(c) if c < 3 => {
            let w = column(&x.r, c);
            [w[0], w[1], w[2], z, z, z]
        }
        Some(c) => {
            let w = column(&x.r, c - 3);
            let l = cross(x.p, w);
            [l[0], l[1], l[2], w[0], w[1], w[2]]
        }
        None => {
            // `Se3::act_motion`
            let s = LMotion::splat(&model.motion_subspace[d]);
            let ang = mul_mv(&x.r, s.ang);
            let lin = add3(mul_mv(&x.r, s.lin), cross(x.p, ang));
            [lin[0], lin[1], lin[2], ang[0], ang[1], ang[2]]
        }
    }
}

/// World Jacobian columns of `k` states: `6 x nv` row-major each into `out`. The placements
/// first, then the columns four dofs at a time, each row's four entries of the four states
/// transposed in registers and stored (no lane buffer of the result).
#[inline(always)]
pub(crate) fn jacobian_groups(m: &Model, w: &mut LaneWorkspace, kw: &mut KinWorkspace, k: usize, q: &[f64], out: &mut [f64]) {
    let nv = m.nv;
    for g in 0..k.div_ceil(LANES) {
        let rows: [usize; LANES] = std::array::from_fn(|l| (g * LANES + l).min(k - 1));
        axis_angles(m, &rows, q, &mut w.x1, &mut w.x2);
        for i in 1..m.njoints {
            kw.o[i] = world_placement(m, &kw.o, i, &rows, q, &w.x1, &w.x2);
        }
        let dst = state_rows(out, 6 * nv, g, k);
        let mut d = 0;
        while d + 4 <= nv {
            let c0 = dof_column(m, &kw.o[m.dof_joint[d]], d);
            let c1 = dof_column(m, &kw.o[m.dof_joint[d + 1]], d + 1);
            let c2 = dof_column(m, &kw.o[m.dof_joint[d + 2]], d + 2);
            let c3 = dof_column(m, &kw.o[m.dof_joint[d + 3]], d + 3);
            for r in 0..6 {
                let t = transpose4(c0[r], c1[r], c2[r], c3[r]);
                for l in 0..LANES {
                    if let Some(o) = dst[l].get_mut(r * nv + d..r * nv + d + 4) {
                        o.copy_from_slice(&t[l].0);
                    }
                }
            }
            d += 4;
        }
        for d in d..nv {
            let c = dof_column(m, &kw.o[m.dof_joint[d]], d);
            for r in 0..6 {
                for l in 0..LANES {
                    if let Some(o) = dst[l].get_mut(r * nv + d) {
                        *o = c[r].0[l];
                    }
                }
            }
        }
    }
}

/// g(q) of `k` states into `out` (`nv` each).
#[inline(always)]
pub(crate) fn gravity_groups(m: &Model, w: &mut LaneWorkspace, kw: &mut KinWorkspace, k: usize, q: &[f64], out: &mut [f64]) {
    for g in 0..k.div_ceil(LANES) {
        place(m, &mut w.li, &mut kw.o, g, k, q, Frame::None);
        w.a_gf[0] = LMotion::splat(&-m.gravity);
        for i in 1..m.njoints {
            let a = w.li[i].inv_act_motion(w.a_gf[m.parents[i]]);
            w.a_gf[i] = a;
            w.f[i] = inertia_mul(m, i, a);
        }
        for i in (1..m.njoints).rev() {
            let f = w.f[i];
            let iv = m.idx_v[i];
            for d in iv..iv + m.nvs[i] {
                w.out[d] = LMotion::splat(&m.motion_subspace[d]).dot(f);
            }
            let p = m.parents[i];
            if p > 0 {
                let fp = w.li[i].act_force(f);
                w.f[p] = w.f[p].add(fp);
            }
        }
        w.store(m, g, k, out);
    }
}

/// Which kinematic function a chunk runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kin {
    /// World placements.
    Placements,
    /// World Jacobian columns.
    Jacobians,
    /// Generalised gravity.
    Gravity,
}

#[inline(always)]
fn kin_groups(m: &Model, w: &mut LaneWorkspace, kw: &mut KinWorkspace, what: Kin, k: usize, q: &[f64], out: &mut [f64]) {
    match what {
        Kin::Placements => fk_groups(m, w, kw, k, q, out),
        Kin::Jacobians => jacobian_groups(m, w, kw, k, q, out),
        Kin::Gravity => gravity_groups(m, w, kw, k, q, out),
    }
}

/// `what` of `k` states in lanes.
pub(crate) fn kin_chunk(m: &Model, w: &mut LaneWorkspace, kw: &mut KinWorkspace, what: Kin, k: usize, q: &[f64], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked on the line above.
        #[allow(unsafe_code)]
        unsafe {
            kin_avx2(m, w, kw, what, k, q, out)
        };
        return;
    }
    kin_groups(m, w, kw, what, k, q, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn kin_avx2(m: &Model, w: &mut LaneWorkspace, kw: &mut KinWorkspace, what: Kin, k: usize, q: &[f64], out: &mut [f64]) {
    kin_groups(m, w, kw, what, k, q, out);
}
