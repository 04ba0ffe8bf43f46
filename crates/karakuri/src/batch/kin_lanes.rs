//! Kinematics in lanes, four states at once, each lane the single call's bits: the joint
//! placements `λX_i` and world placements `oX_i` as `jcalc::place_joints` computes them (the
//! usual revolute joint's rotation as columns of its parent's mixed by the angle's sine and
//! cosine, the others as `oX_λ(i) λX_i`), then forward kinematics, the world Jacobian columns
//! (`dof_in_frame`) and the generalised gravity (`algorithms::gravity_torques`: `a_i = X_i
//! a_λ(i)` from `a_0 = −g`, `f_i = I_i a_i`, RNEA's backward pass).

// index loops over rows and columns, as the formulas are written
#![allow(clippy::needless_range_loop)]

use super::lanes::{
    add3, ask_ahead, cross, free_flyer_in_lanes, inertia_mul, mul33, mul_mv, parent_placement, placement_in_lanes, prismatic_in_lanes, revolute_in_lanes, sin_cos, splat3, LMotion,
    LSe3, LaneWorkspace, L, LANES, M3, V3, V6,
};
use crate::spatial::Vec3;
use crate::model::{JointType, Model};

/// The kinematics buffers of one thread: world placements per joint, world motion subspaces
/// per dof (CRBA's), the group's `q` in lanes, how each joint is placed.
pub(crate) struct KinWorkspace {
    pub(crate) o: Vec<LSe3>,
    pub(crate) s_world: Vec<V6>,
    q: Vec<L>,
    how: Vec<Place>,
    /// Four states' rows of the result of a short last group.
    tail: Vec<f64>,
    /// Whether a joint is some joint's parent (forward kinematics keeps only those placements).
    parent: Vec<bool>,
}

/// How [`world_placement`] places a joint, read off the model once.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// Revolute about `sign · e_c` behind an unrotated placement: the parent's columns mixed.
    Axis(usize, f64),
    /// Revolute about `sign · e_c` behind a rotated placement: [`revolute_in_lanes`], then
    /// the parent's placement composed with it.
    Turned(usize, f64),
    /// Prismatic along the axis: [`prismatic_in_lanes`], then composed.
    Prismatic(Vec3),
    /// Free flyer: [`free_flyer_in_lanes`], then composed.
    FreeFlyer,
    /// Any other joint: `λX_i` by the scalar code lane by lane, then composed.
    Scalar,
}

impl Place {
    fn of(model: &Model, i: usize) -> Place {
        match model.joint_types[i] {
            JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } => match axis.signed_basis() {
                Some((c, sign)) if model.placement_quarter_turn[i] == Some(0) => Place::Axis(c, sign),
                Some((c, sign)) => Place::Turned(c, sign),
                None => Place::Scalar,
            },
            JointType::Prismatic { axis } => Place::Prismatic(axis.vector()),
            JointType::FreeFlyer => Place::FreeFlyer,
            _ => Place::Scalar,
        }
    }
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
        let how = (0..model.njoints).map(|i| if i == 0 { Place::Scalar } else { Place::of(model, i) }).collect();
        let tail = vec![0.0; LANES * (16 * model.njoints).max(6 * model.nv)];
        let mut parent = vec![false; model.njoints];
        for i in 1..model.njoints {
            parent[model.parents[i]] = true;
        }
        KinWorkspace { o, s_world: vec![[L::default(); 6]; model.nv], q: vec![L::default(); model.nq], how, tail, parent }
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
/// the last state): `li` when given, the placements `o` in `frame`. Without `li` (CRBA) each
/// `λX_i` stays in registers and a free-flyer root's is not computed in [`Frame::Root`]: its
/// 39 placements of TALOS are 15 KB a group that the next group's output would evict from L1.
#[inline(always)]
pub(crate) fn place(model: &Model, mut li: Option<&mut [LSe3]>, o: &mut [LSe3], g: usize, k: usize, q: &[f64], frame: Frame) {
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
                if let Some(li) = li.as_deref_mut() {
                    li[i] = LSe3 { r: mul_axis_rotation(&id, c, s, cs), p: t };
                }
                if world {
                    let op = o[p];
                    o[i] = LSe3 { r: mul_axis_rotation(&op.r, c, s, cs), p: add3(mul_mv(&op.r, t), op.p) };
                }
                continue;
            }
        }
        let root = frame == Frame::Root && p == 0 && model.joint_types[i] == JointType::FreeFlyer;
        if root && li.is_none() {
            o[i] = o[0];
            continue;
        }
        let x = if let Some(x) = placement_in_lanes(model, i, angle) {
            x
        } else if model.joint_types[i] == JointType::FreeFlyer {
            free_flyer_in_lanes(model, i, &std::array::from_fn(|k| gather(q, &rows, nq, iq + k)))
        } else {
            let mut x = LSe3::default();
            for l in 0..LANES {
                let s = rows[l];
                x.set_lane(l, &parent_placement(model, i, &q[s * nq..(s + 1) * nq]));
            }
            x
        };
        if let Some(li) = li.as_deref_mut() {
            li[i] = x;
        }
        if root {
            o[i] = o[0];
        } else if world {
            // `Se3::compose`
            let op = o[p];
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

/// The group's rows of `q` (state rows `rows`, `nq` numbers each) in lanes into `qg`: entry
/// `e` of lane `l`'s state at `qg[e].0[l]`. Four consecutive states (every group but a
/// short last one) four entries at a time, a 4x4 transpose in registers.
#[inline(always)]
pub(crate) fn gather_rows(q: &[f64], rows: &[usize; LANES], nq: usize, qg: &mut [L]) {
    let qg = &mut qg[..nq];
    if rows[LANES - 1] == rows[0] + LANES - 1 {
        let base = &q[rows[0] * nq..(rows[0] + LANES) * nq];
        let (r01, r23) = base.split_at(2 * nq);
        let (r0, r1) = r01.split_at(nq);
        let (r2, r3) = r23.split_at(nq);
        let mut e = 0;
        while e + 4 <= nq {
            let four = |r: &[f64]| L([r[e], r[e + 1], r[e + 2], r[e + 3]]);
            qg[e..e + 4].copy_from_slice(&transpose4(four(r0), four(r1), four(r2), four(r3)));
            e += 4;
        }
        for e in e..nq {
            qg[e] = L([r0[e], r1[e], r2[e], r3[e]]);
        }
    } else {
        for (e, x) in qg.iter_mut().enumerate() {
            *x = gather(q, rows, nq, e);
        }
    }
}

/// The sines and cosines of the angles of every revolute joint about ±x, ±y, ±z of the group
/// (`qg` from [`gather_rows`]) into `sn`, `cs` at the joint's dof: apart from the placements,
/// as `jcalc::place_joints` computes them, so that the chain of placements does not wait on a
/// sine's latency.
#[inline(always)]
fn angles(model: &Model, how: &[Place], qg: &[L], sn: &mut [L], cs: &mut [L]) {
    for i in 1..model.njoints {
        if let Place::Axis(..) | Place::Turned(..) = how[i] {
            let iv = model.idx_v[i];
            (sn[iv], cs[iv]) = sin_cos(qg[model.idx_q[i]]);
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

/// The world placement of joint `i` of the group (state rows `rows`, `q` in lanes `qg`) from
/// its parent's `op`, as [`place`] computes it in the world frame, without keeping `λX_i` (a
/// revolute joint's sine and cosine from [`angles`]).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn world_placement(model: &Model, how: Place, op: &LSe3, i: usize, rows: &[usize; LANES], q: &[f64], qg: &[L], sn: &[L], cs: &[L]) -> LSe3 {
    let (iq, iv) = (model.idx_q[i], model.idx_v[i]);
    let li = match how {
        Place::Axis(c, sign) => {
            let t = splat3(&model.joint_placements[i].translation);
            return LSe3 { r: turn_columns(&op.r, c, L::splat(sign) * sn[iv], cs[iv]), p: add3(mul_mv(&op.r, t), op.p) };
        }
        Place::Turned(c, sign) => revolute_in_lanes(model, i, c, sign, sn[iv], cs[iv]),
        Place::Prismatic(a) => prismatic_in_lanes(model, i, &a, qg[iq]),
        Place::FreeFlyer => free_flyer_in_lanes(model, i, &std::array::from_fn(|k| qg[iq + k])),
        Place::Scalar => {
            let nq = model.nq;
            let mut x = LSe3::default();
            for l in 0..LANES {
                x.set_lane(l, &parent_placement(model, i, &q[rows[l] * nq..(rows[l] + 1) * nq]));
            }
            x
        }
    };
    LSe3 { r: mul33(&op.r, &li.r), p: add3(mul_mv(&op.r, li.p), op.p) }
}

/// Where the group `g` (of `k`) writes its four states' results (`per` numbers each): their
/// rows of `out`, or for a short last group the scratch rows `tail` (then copied by
/// [`finish_rows`]), so that every group stores four full rows without a test per lane.
#[inline(always)]
fn four_rows<'a>(out: &'a mut [f64], tail: &'a mut [f64], per: usize, g: usize, k: usize) -> [&'a mut [f64]; LANES] {
    let all = if k - g * LANES >= LANES { &mut out[g * LANES * per..(g + 1) * LANES * per] } else { &mut tail[..LANES * per] };
    let (r01, r23) = all.split_at_mut(2 * per);
    let (r0, r1) = r01.split_at_mut(per);
    let (r2, r3) = r23.split_at_mut(per);
    [r0, r1, r2, r3]
}

/// The states of a short last group `g` (of `k`) from the scratch rows `tail` into `out`.
#[inline(always)]
fn finish_rows(out: &mut [f64], tail: &[f64], per: usize, g: usize, k: usize) {
    let states = k - g * LANES;
    if states < LANES {
        out[g * LANES * per..(g * LANES + states) * per].copy_from_slice(&tail[..states * per]);
    }
}

/// Joint `i`'s world placement `x` of the four states as 4x4 row-major into `rows` (one state's
/// `njoints * 16` numbers each), each row's two lines [`AHEAD`](super::lanes::AHEAD) entries on
/// asked for (record 0145: TALOS's forward kinematics at N = 1024, 448 → 325 ns a state).
#[inline(always)]
fn put_placement(x: &LSe3, i: usize, rows: &mut [&mut [f64]; LANES]) {
    for r in rows.iter() {
        ask_ahead(r.as_ptr(), i * 16);
        ask_ahead(r.as_ptr(), i * 16 + 8);
    }
    let r0 = transpose4(x.r[0][0], x.r[0][1], x.r[0][2], x.p[0]);
    let r1 = transpose4(x.r[1][0], x.r[1][1], x.r[1][2], x.p[1]);
    let r2 = transpose4(x.r[2][0], x.r[2][1], x.r[2][2], x.p[2]);
    for l in 0..LANES {
        let o = &mut rows[l][i * 16..i * 16 + 16];
        o[..4].copy_from_slice(&r0[l].0);
        o[4..8].copy_from_slice(&r1[l].0);
        o[8..12].copy_from_slice(&r2[l].0);
        o[12..].copy_from_slice(&[0.0, 0.0, 0.0, 1.0]);
    }
}

/// Forward kinematics of `k` states: `njoints` 4x4 row-major world placements each into `out`,
/// each joint's four placements written as soon as they are known (no lane buffer of the
/// result, no `λX_i` kept).
#[inline(always)]
pub(crate) fn fk_groups(m: &Model, w: &mut LaneWorkspace, kw: &mut KinWorkspace, k: usize, q: &[f64], out: &mut [f64]) {
    let (nj, per) = (m.njoints, m.njoints * 16);
    let KinWorkspace { o, q: qg, how, tail, parent, .. } = kw;
    for g in 0..k.div_ceil(LANES) {
        let rows: [usize; LANES] = std::array::from_fn(|l| (g * LANES + l).min(k - 1));
        gather_rows(q, &rows, m.nq, qg);
        angles(m, how, qg, &mut w.x1, &mut w.x2);
        let mut dst = four_rows(out, tail, per, g, k);
        put_placement(&o[0], 0, &mut dst);
        for i in 1..nj {
            let x = world_placement(m, how[i], &o[m.parents[i]], i, &rows, q, qg, &w.x1, &w.x2);
            if parent[i] {
                o[i] = x;
            }
            put_placement(&x, i, &mut dst);
        }
        finish_rows(out, tail, per, g, k);
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
    let (nv, per) = (m.nv, 6 * m.nv);
    let KinWorkspace { o, q: qg, how, tail, .. } = kw;
    for g in 0..k.div_ceil(LANES) {
        let rows: [usize; LANES] = std::array::from_fn(|l| (g * LANES + l).min(k - 1));
        gather_rows(q, &rows, m.nq, qg);
        angles(m, how, qg, &mut w.x1, &mut w.x2);
        for i in 1..m.njoints {
            o[i] = world_placement(m, how[i], &o[m.parents[i]], i, &rows, q, qg, &w.x1, &w.x2);
        }
        let dst = four_rows(out, tail, per, g, k);
        let mut d = 0;
        while d + 4 <= nv {
            let c0 = dof_column(m, &o[m.dof_joint[d]], d);
            let c1 = dof_column(m, &o[m.dof_joint[d + 1]], d + 1);
            let c2 = dof_column(m, &o[m.dof_joint[d + 2]], d + 2);
            let c3 = dof_column(m, &o[m.dof_joint[d + 3]], d + 3);
            for r in 0..6 {
                let t = transpose4(c0[r], c1[r], c2[r], c3[r]);
                for l in 0..LANES {
                    dst[l][r * nv + d..r * nv + d + 4].copy_from_slice(&t[l].0);
                }
            }
            d += 4;
        }
        for d in d..nv {
            let c = dof_column(m, &o[m.dof_joint[d]], d);
            for r in 0..6 {
                for l in 0..LANES {
                    dst[l][r * nv + d] = c[r].0[l];
                }
            }
        }
        finish_rows(out, tail, per, g, k);
    }
}

/// g(q) of `k` states into `out` (`nv` each).
#[inline(always)]
pub(crate) fn gravity_groups(m: &Model, w: &mut LaneWorkspace, kw: &mut KinWorkspace, k: usize, q: &[f64], out: &mut [f64]) {
    for g in 0..k.div_ceil(LANES) {
        place(m, Some(&mut w.li), &mut kw.o, g, k, q, Frame::None);
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

twice! {
    /// `what` of `k` states in lanes.
    pub(crate) fn kin_chunk(m: &Model, w: &mut LaneWorkspace, kw: &mut KinWorkspace, what: Kin, k: usize, q: &[f64], out: &mut [f64]) {
        kin_groups(m, w, kw, what, k, q, out);
    }
}
