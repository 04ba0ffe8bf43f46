//! ABA in lanes: `algorithms::forward_dynamics` for four states at once, the same operations in
//! the same order (RBDA Table 7.1, local frames): nalgebra's 6x6 and 3x3 products written out
//! as it computes them (a column at a time, sums from the first term; a 6-vector dot from +0).

use super::lanes::{inertia_mul, joint_motion, LMotion, LSe3, LaneWorkspace, L, LANES, M3, M6, V6};
use crate::model::Model;

#[inline(always)]
fn to6(m: LMotion) -> V6 {
    [m.lin[0], m.lin[1], m.lin[2], m.ang[0], m.ang[1], m.ang[2]]
}
#[inline(always)]
fn from6(x: V6) -> LMotion {
    LMotion { lin: [x[0], x[1], x[2]], ang: [x[3], x[4], x[5]] }
}
/// `m x` (nalgebra's gemv: `((m_r0 x0 + m_r1 x1) + ...) + m_r5 x5`).
#[inline(always)]
fn mul6(m: &M6, x: &V6) -> V6 {
    std::array::from_fn(|r| m[r][0] * x[0] + m[r][1] * x[1] + m[r][2] * x[2] + m[r][3] * x[3] + m[r][4] * x[4] + m[r][5] * x[5])
}
/// `a · b` of 6-vectors: nalgebra's general dot, a sum from +0.
#[inline(always)]
fn dot6(a: &V6, b: &V6) -> L {
    let mut s = L::splat(0.0);
    for k in 0..6 {
        s += a[k] * b[k];
    }
    s
}
/// `a b` of 3x3 matrices (nalgebra: `(a_i0 b_0j + a_i1 b_1j) + a_i2 b_2j`).
#[inline(always)]
fn mul33(a: &M3, b: &M3) -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j]))
}
#[inline(always)]
fn tr33(a: &M3) -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| a[j][i]))
}
#[inline(always)]
fn add33(a: &M3, b: &M3) -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| a[i][j] + b[i][j]))
}
#[inline(always)]
fn block(m: &M6, r0: usize, c0: usize) -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| m[r0 + i][c0 + j]))
}

/// `X* I X⁻¹` of a 6x6 inertia in the parent frame (`aba::transform_inertia_matrix`).
#[inline(always)]
fn transform_inertia(x: &LSe3, m: &M6) -> M6 {
    let r = &x.r;
    let rt = tr33(r);
    let a = mul33(&mul33(r, &block(m, 0, 0)), &rt);
    let b = mul33(&mul33(r, &block(m, 0, 3)), &rt);
    let c = mul33(&mul33(r, &block(m, 3, 3)), &rt);
    let [px, py, pz] = x.p;
    let z = L::splat(0.0);
    let skew: M3 = [[z, -pz, py], [pz, z, -px], [-py, px, z]];
    let a_px = mul33(&a, &skew);
    let a_pt: M3 = std::array::from_fn(|i| std::array::from_fn(|j| -a_px[i][j]));
    let b_new = add33(&a_pt, &b);
    let pb = mul33(&skew, &b);
    let c_new = add33(&add33(&add33(&mul33(&skew, &a_pt), &pb), &tr33(&pb)), &c);
    let mut out = [[z; 6]; 6];
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = a[i][j];
            out[i][j + 3] = b_new[i][j];
            out[i + 3][j] = b_new[j][i];
            out[i + 3][j + 3] = c_new[i][j];
        }
    }
    out
}

/// `D⁻¹` of joint `i` (`aba::invert_d` and `linalg::dense::spd_inverse_small`), lane by lane
/// where the scalar code branches (a non-positive pivot gives NaN).
#[inline(always)]
fn invert_d(m: &Model, u_cols: &[V6], i: usize) -> M6 {
    let (iv, nv) = (m.idx_v[i], m.nvs[i]);
    let z = L::splat(0.0);
    let mut d = [[z; 6]; 6];
    for r in 0..nv {
        let s = m.motion_subspace[iv + r];
        let s = [s.linear.x, s.linear.y, s.linear.z, s.angular.x, s.angular.y, s.angular.z].map(L::splat);
        for k in 0..=r {
            let u = &u_cols[iv + k];
            d[r][k] = s[0] * u[0] + s[1] * u[1] + s[2] * u[2] + s[3] * u[3] + s[4] * u[4] + s[5] * u[5];
        }
        let arm = m.armature[iv + r];
        if arm != 0.0 {
            d[r][r] += L::splat(arm);
        }
    }
    let mut out = [[z; 6]; 6];
    if nv == 1 {
        out[0][0] = L::splat(1.0) / d[0][0];
        return out;
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
    out
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
        let v = w.li[i].inv_act_motion(w.v[p]).add(v_j);
        w.v[i] = v;
        w.c[i] = v.cross(v_j);
        let i6 = &w.inertia6[i];
        w.ia[i] = std::array::from_fn(|r| std::array::from_fn(|c| L::splat(i6[(r, c)])));
        w.f[i] = v.cross_force(inertia_mul(m, i, v));
    }
}

/// Pass 2: U = IA S, D⁻¹, u = τ − Sᵀ pA; the articulated inertia and bias force to the parent.
#[inline(always)]
fn second_pass(m: &Model, w: &mut LaneWorkspace) {
    for i in (1..m.njoints).rev() {
        let (iv, nv) = (m.idx_v[i], m.nvs[i]);
        let pa = to6(w.f[i]);
        for k in 0..nv {
            let s = m.motion_subspace[iv + k];
            let s = [s.linear.x, s.linear.y, s.linear.z, s.angular.x, s.angular.y, s.angular.z].map(L::splat);
            w.u_cols[iv + k] = mul6(&w.ia[i], &s);
            w.u[iv + k] = w.x2[iv + k] - dot6(&s, &pa);
        }
        w.d_inv[i] = invert_d(m, &w.u_cols, i);
        let p = m.parents[i];
        if p == 0 {
            continue;
        }
        let mut ia = w.ia[i];
        let c6 = to6(w.c[i]);
        let iac = mul6(&w.ia[i], &c6);
        let mut pa_i: V6 = std::array::from_fn(|r| pa[r] + iac[r]);
        let d_inv = &w.d_inv[i];
        for r in 0..nv {
            let mut udinv = [L::splat(0.0); 6];
            let mut udinv_u = L::splat(0.0);
            for k in 0..nv {
                let uc = &w.u_cols[iv + k];
                for e in 0..6 {
                    udinv[e] += uc[e] * d_inv[k][r];
                }
                udinv_u += d_inv[r][k] * w.u[iv + k];
            }
            let ur = w.u_cols[iv + r];
            for a in 0..6 {
                for b in 0..6 {
                    ia[a][b] -= udinv[a] * ur[b];
                }
            }
            let uc_dot = dot6(&ur, &c6);
            for e in 0..6 {
                pa_i[e] -= udinv[e] * uc_dot;
            }
            for e in 0..6 {
                pa_i[e] += ur[e] * udinv_u;
            }
        }
        let x = w.li[i];
        let ia_parent = transform_inertia(&x, &ia);
        for a in 0..6 {
            for b in 0..6 {
                w.ia[p][a][b] += ia_parent[a][b];
            }
        }
        let fp = x.act_force(from6(pa_i));
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
        let a_prime = w.li[i].inv_act_motion(w.a_gf[p]).add(w.c[i]);
        let a6 = to6(a_prime);
        let mut rhs = [L::splat(0.0); 6];
        for k in 0..nv {
            rhs[k] = w.u[iv + k] - dot6(&w.u_cols[iv + k], &a6);
        }
        for r in 0..nv {
            let mut s = L::splat(0.0);
            for k in 0..nv {
                s += w.d_inv[i][r][k] * rhs[k];
            }
            w.out[iv + r] = s;
        }
        w.a_gf[i] = a_prime.add(joint_motion(m, i, &w.out));
    }
}

/// ABA of `k` states in lanes.
pub(crate) fn aba_chunk(m: &Model, w: &mut LaneWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], ddq: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked on the line above.
        #[allow(unsafe_code)]
        unsafe {
            aba_avx2(m, w, k, q, v, tau, ddq)
        };
        return;
    }
    aba_groups(m, w, k, q, v, tau, ddq);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn aba_avx2(m: &Model, w: &mut LaneWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], ddq: &mut [f64]) {
    aba_groups(m, w, k, q, v, tau, ddq);
}
