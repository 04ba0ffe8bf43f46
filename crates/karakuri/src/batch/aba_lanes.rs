//! ABA in lanes: `algorithms::forward_dynamics` for four states at once (RBDA Table 7.1, local
//! frames), using the structure the single-state kernel leaves to nalgebra's dense 6x6 code:
//!
//! * the articulated inertia `IA` is symmetric: its 21 upper entries only ([`S6`]), updated by
//!   `IA − U D⁻¹ Uᵀ` and moved to the parent on those entries;
//! * a dof whose `S` is a unit vector (`Model::dof_axis`: revolute about x, y, z, prismatic
//!   along them) takes `U = IA S` as a column of `IA`, `Sᵀ f` as one entry, `D` as one entry;
//! * a revolute joint about ±x, ±y, ±z behind an unrotated placement moves its `IA` to the
//!   parent by a plane rotation of the other two axes (`R M Rᵀ` as 2x2 rotations of rows and
//!   columns, no 3x3 product), then the translation's skew products.
//!
//! The result equals the single call to rounding, not bit for bit (the operations differ):
//! record 0068 states the tolerance and `tests/batch.rs` checks it.

// index loops over the dofs and the 6x6 entries, as the formulas are written
#![allow(clippy::needless_range_loop)]

use super::lanes::{inertia_mul, joint_motion, AxisRot, LMotion, LSe3, LaneWorkspace, IX, L, LANES, M3, M6, S6, V6};
use crate::model::Model;

#[inline(always)]
fn to6(m: LMotion) -> V6 {
    [m.lin[0], m.lin[1], m.lin[2], m.ang[0], m.ang[1], m.ang[2]]
}
#[inline(always)]
fn from6(x: V6) -> LMotion {
    LMotion { lin: [x[0], x[1], x[2]], ang: [x[3], x[4], x[5]] }
}
#[inline(always)]
fn s6(m: &Model, k: usize) -> [f64; 6] {
    let s = m.motion_subspace[k];
    [s.linear.x, s.linear.y, s.linear.z, s.angular.x, s.angular.y, s.angular.z]
}
/// `m x` of a symmetric `m`.
#[inline(always)]
fn sym_mul(m: &S6, x: &V6) -> V6 {
    let mut o = *x;
    for r in 0..6 {
        let mut s = m[IX[r][0]] * x[0];
        for c in 1..6 {
            s += m[IX[r][c]] * x[c];
        }
        o[r] = s;
    }
    o
}
/// `m s` of a symmetric `m` and a constant `s`, its zero entries skipped.
#[inline(always)]
fn sym_mul_const(m: &S6, s: &[f64; 6]) -> V6 {
    let mut out = [L::splat(0.0); 6];
    for c in 0..6 {
        if s[c] != 0.0 {
            let sc = L::splat(s[c]);
            for r in 0..6 {
                out[r] += m[IX[r][c]] * sc;
            }
        }
    }
    out
}
/// `s · x` of a constant `s`, its zero entries skipped.
#[inline(always)]
fn dot_const(s: &[f64; 6], x: &V6) -> L {
    let mut out = L::splat(0.0);
    for c in 0..6 {
        if s[c] != 0.0 {
            out += L::splat(s[c]) * x[c];
        }
    }
    out
}
#[inline(always)]
fn dot6(a: &V6, b: &V6) -> L {
    ((a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3])) + (a[4] * b[4] + a[5] * b[5])
}
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
#[inline(always)]
fn mul33_t(a: &M3, b: &M3) -> M3 {
    let mut o = *a;
    for i in 0..3 {
        for j in 0..3 {
            o[i][j] = a[i][0] * b[j][0] + a[i][1] * b[j][1] + a[i][2] * b[j][2];
        }
    }
    o
}

/// `R m Rᵀ` for `R` the rotation by the angle of cosine `c`, sine `s` about axis `a`: rows, then
/// columns, of the other two axes turned in their plane.
#[inline(always)]
fn rotate_plane(m: &M3, a: usize, c: L, s: L) -> M3 {
    let (i1, i2) = ((a + 1) % 3, (a + 2) % 3);
    let mut r = *m;
    for j in 0..3 {
        r[i1][j] = c * m[i1][j] - s * m[i2][j];
        r[i2][j] = s * m[i1][j] + c * m[i2][j];
    }
    let mut out = r;
    for i in 0..3 {
        out[i][i1] = c * r[i][i1] - s * r[i][i2];
        out[i][i2] = s * r[i][i1] + c * r[i][i2];
    }
    out
}

/// `x` negated where `s < 0`.
#[inline(always)]
fn sgn(x: L, s: f64) -> L {
    if s < 0.0 {
        -x
    } else {
        x
    }
}

/// The cosine and sine of `R_a(θ)` read off `x.r = P R_a(θ)`.
#[inline(always)]
fn cos_sin(x: &LSe3, r: &AxisRot) -> (L, L) {
    let (i1, i2) = ((r.a + 1) % 3, (r.a + 2) % 3);
    let (k1, k2) = (r.inv[i1], r.inv[i2]);
    (sgn(x.r[k1][i1], r.sign[k1]), sgn(x.r[k2][i1], r.sign[k2]))
}

/// `R y` (`t = false`) or `Rᵀ y` (`t = true`) for `R = P R_a(θ)`.
#[inline(always)]
fn turn(r: &AxisRot, cs: L, sn: L, y: [L; 3], t: bool) -> [L; 3] {
    let (i1, i2) = ((r.a + 1) % 3, (r.a + 2) % 3);
    let mut o = y;
    if t {
        for j in 0..3 {
            o[j] = sgn(y[r.inv[j]], r.sign[r.inv[j]]);
        }
        let (x1, x2) = (o[i1], o[i2]);
        o[i1] = cs * x1 + sn * x2;
        o[i2] = cs * x2 - sn * x1;
    } else {
        let mut z = y;
        z[i1] = cs * y[i1] - sn * y[i2];
        z[i2] = sn * y[i1] + cs * y[i2];
        for i in 0..3 {
            o[i] = sgn(z[r.perm[i]], r.sign[i]);
        }
    }
    o
}

/// `Se3::inv_act_motion` with `x`'s [`AxisRot`], if any.
#[inline(always)]
fn inv_act(x: &LSe3, rot: Option<&AxisRot>, m: LMotion) -> LMotion {
    let Some(r) = rot else { return x.inv_act_motion(m) };
    let (cs, sn) = cos_sin(x, r);
    let lin = super::lanes::sub3(m.lin, super::lanes::cross(x.p, m.ang));
    LMotion { lin: turn(r, cs, sn, lin, true), ang: turn(r, cs, sn, m.ang, true) }
}

/// `Se3::act_force` with `x`'s [`AxisRot`], if any.
#[inline(always)]
fn act_force(x: &LSe3, rot: Option<&AxisRot>, f: LMotion) -> LMotion {
    let Some(r) = rot else { return x.act_force(f) };
    let (cs, sn) = cos_sin(x, r);
    let lin = turn(r, cs, sn, f.lin, false);
    LMotion { lin, ang: super::lanes::add3(turn(r, cs, sn, f.ang, false), super::lanes::cross(x.p, lin)) }
}

/// `P y Pᵀ` of `r`'s quarter turn `P`: entry `(i, j)` is `sign_i sign_j y[perm i][perm j]`.
#[inline(always)]
fn perm_conj(r: &AxisRot, y: &M3) -> M3 {
    let mut o = *y;
    for i in 0..3 {
        for j in 0..3 {
            o[i][j] = sgn(y[r.perm[i]][r.perm[j]], r.sign[i] * r.sign[j]);
        }
    }
    o
}

/// `[p]× m`.
#[inline(always)]
fn skew_mul(p: [L; 3], m: &M3) -> M3 {
    let [px, py, pz] = p;
    let mut o = *m;
    for j in 0..3 {
        o[0][j] = py * m[2][j] - pz * m[1][j];
        o[1][j] = pz * m[0][j] - px * m[2][j];
        o[2][j] = px * m[1][j] - py * m[0][j];
    }
    o
}

/// `X* IA X⁻¹` (`x` parent-from-child) added to the parent's `acc`, upper triangles only; `axis`
/// `x`'s [`AxisRot`], if any.
#[inline(always)]
fn transform_add(x: &LSe3, rot: Option<&AxisRot>, ia: &S6, acc: &mut S6) {
    let z = L::splat(0.0);
    let (mut a, mut b, mut c) = ([[z; 3]; 3], [[z; 3]; 3], [[z; 3]; 3]);
    for i in 0..3 {
        for j in 0..3 {
            a[i][j] = ia[IX[i][j]];
            b[i][j] = ia[IX[i][3 + j]];
            c[i][j] = ia[IX[3 + i][3 + j]];
        }
    }
    match rot {
        Some(r) => {
            let (cs, sn) = cos_sin(x, r);
            (a, b, c) = (rotate_plane(&a, r.a, cs, sn), rotate_plane(&b, r.a, cs, sn), rotate_plane(&c, r.a, cs, sn));
            if !r.identity {
                (a, b, c) = (perm_conj(r, &a), perm_conj(r, &b), perm_conj(r, &c));
            }
        }
        None => {
            a = mul33_t(&mul33(&x.r, &a), &x.r);
            b = mul33_t(&mul33(&x.r, &b), &x.r);
            c = mul33_t(&mul33(&x.r, &c), &x.r);
        }
    }
    let [px, py, pz] = x.p;
    // B' = B − A [p]×, C' = C + [p]× B' + ([p]× B)ᵀ
    let mut b_new = b;
    for i in 0..3 {
        b_new[i][0] -= a[i][1] * pz - a[i][2] * py;
        b_new[i][1] -= a[i][2] * px - a[i][0] * pz;
        b_new[i][2] -= a[i][0] * py - a[i][1] * px;
    }
    let (pb_new, pb) = (skew_mul(x.p, &b_new), skew_mul(x.p, &b));
    for i in 0..3 {
        for j in i..3 {
            acc[IX[i][j]] += a[i][j];
            acc[IX[3 + i][3 + j]] += (c[i][j] + pb_new[i][j]) + pb[j][i];
        }
        for j in 0..3 {
            acc[IX[i][3 + j]] += b_new[i][j];
        }
    }
}

/// `D⁻¹` of joint `i` (`D = Sᵀ U` plus armature) by Cholesky into the top-left `nv x nv` of
/// `out`, lane by lane where it branches (a non-positive pivot gives NaN).
#[inline(always)]
fn invert_d(m: &Model, u_cols: &[V6], i: usize, out: &mut M6) {
    let (iv, nv) = (m.idx_v[i], m.nvs[i]);
    if nv == 1 {
        out[0][0] = L::splat(1.0) / (dot_const(&s6(m, iv), &u_cols[iv]) + L::splat(m.armature[iv]));
        return;
    }
    let z = L::splat(0.0);
    let mut d = [[z; 6]; 6];
    for r in 0..nv {
        let s = s6(m, iv + r);
        for k in 0..=r {
            d[r][k] = dot_const(&s, &u_cols[iv + k]);
        }
        d[r][r] += L::splat(m.armature[iv + r]);
    }
    for j in 0..nv {
        let mut djj = d[j][j];
        for k in 0..j {
            djj -= d[j][k] * d[j][k];
        }
        let ljj = L(djj.0.map(|x| if x > 0.0 { x.sqrt() } else { f64::NAN }));
        d[j][j] = ljj;
        for r in j + 1..nv {
            let mut x = d[r][j];
            for k in 0..j {
                x -= d[r][k] * d[j][k];
            }
            d[r][j] = x / ljj;
        }
    }
    let mut w = [[z; 6]; 6];
    for c in 0..nv {
        w[c][c] = L::splat(1.0) / d[c][c];
        for r in c + 1..nv {
            let mut x = z;
            for k in c..r {
                x -= d[r][k] * w[k][c];
            }
            w[r][c] = x / d[r][r];
        }
    }
    for r in 0..nv {
        for c in 0..=r {
            let mut x = z;
            for k in r..nv {
                x += w[k][r] * w[k][c];
            }
            out[r][c] = x;
            out[c][r] = x;
        }
    }
}

/// Every group of `LANES` states of the `k` given (the last one padded).
#[inline(always)]
pub(crate) fn aba_groups(m: &Model, w: &mut LaneWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], ddq: &mut [f64]) {
    for g in 0..k.div_ceil(LANES) {
        w.load(m, g, k, q, v, Some(tau));
        first_pass(m, w);
        second_pass(m, w);
        third_pass(m, w);
        w.store(m, g, k, ddq);
    }
}

/// Pass 1: v_i, c_i = v_i × v_J, IA_i = I_i, pA_i = v_i ×* I_i v_i.
#[inline(always)]
fn first_pass(m: &Model, w: &mut LaneWorkspace) {
    for i in 1..m.njoints {
        let p = m.parents[i];
        let v_j = joint_motion(m, i, &w.x1);
        let v = inv_act(&w.li[i], w.axis_rot[i].as_ref(), w.v[p]).add(v_j);
        w.c[i] = v.cross(v_j);
        w.v[i] = v;
        for e in 0..21 {
            w.ia[i][e] = L::splat(w.inertia21[i][e]);
        }
        w.f[i] = v.cross_force(inertia_mul(m, i, v));
    }
}

/// Pass 2: U = IA S, D⁻¹, u = τ − Sᵀ pA; `IA − U D⁻¹ Uᵀ` and `pA + Ia c + U D⁻¹ u` to the parent.
#[inline(always)]
fn second_pass(m: &Model, w: &mut LaneWorkspace) {
    for i in (1..m.njoints).rev() {
        let (iv, nv) = (m.idx_v[i], m.nvs[i]);
        let pa = to6(w.f[i]);
        // IA_i updated in place (a copy is a 672-byte memcpy per joint), the parent's beside it
        let (head, tail) = w.ia.split_at_mut(i);
        let ia = &mut tail[0];
        for k in iv..iv + nv {
            let spa = match m.dof_axis[k] {
                Some(e) => {
                    for r in 0..6 {
                        w.u_cols[k][r] = ia[IX[r][e]];
                    }
                    pa[e]
                }
                None => {
                    w.u_cols[k] = sym_mul_const(ia, &s6(m, k));
                    dot_const(&s6(m, k), &pa)
                }
            };
            w.u[k] = w.x2[k] - spa;
        }
        invert_d(m, &w.u_cols, i, &mut w.d_inv[i]);
        let p = m.parents[i];
        if p == 0 {
            continue;
        }
        let d_inv = &w.d_inv[i];
        let mut udu = [L::splat(0.0); 6]; // U D⁻¹ u
        for r in 0..nv {
            let mut wr = w.u_cols[iv];
            for e in 0..6 {
                let mut s = w.u_cols[iv][e] * d_inv[0][r];
                for k in 1..nv {
                    s += w.u_cols[iv + k][e] * d_inv[k][r];
                }
                wr[e] = s;
            }
            let ur = &w.u_cols[iv + r];
            for a in 0..6 {
                for b in a..6 {
                    ia[IX[a][b]] -= wr[a] * ur[b];
                }
                udu[a] += wr[a] * w.u[iv + r];
            }
        }
        let iac = sym_mul(ia, &to6(w.c[i]));
        let mut pa_i = pa;
        for e in 0..6 {
            pa_i[e] = (pa[e] + iac[e]) + udu[e];
        }
        let (x, rot) = (&w.li[i], w.axis_rot[i].as_ref());
        transform_add(x, rot, ia, &mut head[p]);
        let fp = act_force(x, rot, from6(pa_i));
        w.f[p] = w.f[p].add(fp);
    }
}

/// Pass 3: a'_i = X_i a_λ(i) + c_i, q̈_i = D⁻¹(u_i − Uᵀ a'_i), a_i = a'_i + S_i q̈_i (gravity
/// folded in as the base acceleration −g).
#[inline(always)]
fn third_pass(m: &Model, w: &mut LaneWorkspace) {
    w.a_gf[0] = LMotion::splat(&-m.gravity);
    for i in 1..m.njoints {
        let (iv, nv) = (m.idx_v[i], m.nvs[i]);
        let p = m.parents[i];
        let a_prime = inv_act(&w.li[i], w.axis_rot[i].as_ref(), w.a_gf[p]).add(w.c[i]);
        let a6 = to6(a_prime);
        let mut rhs = [L::splat(0.0); 6];
        for k in 0..nv {
            rhs[k] = w.u[iv + k] - dot6(&w.u_cols[iv + k], &a6);
        }
        for r in 0..nv {
            let mut s = w.d_inv[i][r][0] * rhs[0];
            for k in 1..nv {
                s += w.d_inv[i][r][k] * rhs[k];
            }
            w.out[iv + r] = s;
        }
        w.a_gf[i] = a_prime.add(joint_motion(m, i, &w.out));
    }
}

twice! {
    /// ABA of `k` states in lanes.
    pub(crate) fn aba_chunk(m: &Model, w: &mut LaneWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], ddq: &mut [f64]) {
        aba_groups(m, w, k, q, v, tau, ddq);
    }
}
