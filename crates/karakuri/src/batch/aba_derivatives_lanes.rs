//! ∂q̈/∂q, ∂q̈/∂v and M⁻¹ (`algorithms::aba_derivatives`) for four states at once: the RNEA
//! derivative passes at q̈ = 0 and the q̈ share of ∂τ/∂q (`configuration_entries_at`) in lanes,
//! the single kernel's operations in its order (`rnea_derivatives_lanes.rs`); the LᵀDL
//! factorisation of M, M⁻¹, q̈ and the products by −M⁻¹ state by state by the single call's
//! own functions. Every output is the single call's bits (record 0076).

use super::crba_lanes::{invert, solve, store_rows, CrbaWorkspace};
#[cfg(target_arch = "x86_64")]
use super::crba_lanes::{put1, put4, store_rows_avx2, tile_avx2, stream_bytes};
use super::lanes::{LMotion, L, LANES};
#[cfg(target_arch = "x86_64")]
use super::lanes::ask_ahead4;
use super::rnea_derivatives_lanes::{backward, configuration_entries, forward, inertia_mul, DerivLanes, LaneMats};
use crate::algorithms::derivatives::DerivativesWorkspace;
use crate::model::Model;

#[inline(always)]
fn m_add(a: LMotion, b: LMotion) -> LMotion {
    a.add(b)
}
#[inline(always)]
fn m_scale(a: LMotion, s: L) -> LMotion {
    LMotion { lin: [a.lin[0] * s, a.lin[1] * s, a.lin[2] * s], ang: [a.ang[0] * s, a.ang[1] * s, a.ang[2] * s] }
}

/// `rnea::configuration_entries_at` in lanes: ∂τ/∂q at a = q̈ (`w.x2`) into matrix 0 of `out`,
/// after [`forward`] and [`backward`] ran with q̈ = 0.
#[inline(always)]
fn configuration_entries_at(m: &Model, w: &mut DerivLanes, out: &mut LaneMats<true>) {
    w.delta_a[0] = LMotion::default();
    for i in 1..m.njoints {
        let da_p = w.delta_a[m.parents[i]];
        let mut da = da_p;
        for k in m.idx_v[i]..m.idx_v[i] + m.nvs[i] {
            let j = w.j[k];
            da = m_add(da, m_scale(j, w.x2[k]));
            w.da_dq[k] = m_add(w.da_dq[k], da_p.cross(j));
        }
        w.delta_a[i] = da;
        w.p[i] = LMotion::default();
    }
    for i in (1..m.njoints).rev() {
        let (iv, nv) = (m.idx_v[i], m.nvs[i]);
        let (ic, bc, p) = (w.ic[i], w.bc[i], m.parents[i]);
        let mut p_i = w.p[i];
        for k in iv..iv + nv {
            p_i = m_add(p_i, m_scale(inertia_mul(&ic, w.j[k]), w.x2[k]));
        }
        let f = m_add(m_add(w.fc[i], inertia_mul(&ic, w.delta_a[p])), p_i);
        let ancestors = &w.ancestor_dofs[w.ancestor_start[i]..w.ancestor_start[i + 1]];
        for k in iv..iv + nv {
            let j_k = w.j[k];
            let fa = inertia_mul(&ic, j_k);
            let r = super::rnea_derivatives_lanes::mom_tmul(&bc, &j_k);
            let df_dq = m_add(
                m_add(inertia_mul(&ic, w.da_dq[k]), super::rnea_derivatives_lanes::mom_mul(&bc, &w.dv_dq[k])),
                j_k.cross_force(f),
            );
            configuration_entries(w, out, k, iv..iv + nv, ancestors, &fa, r, &df_dq);
        }
        if p > 0 {
            w.p[p] = m_add(w.p[p], p_i);
        }
    }
}

/// `ya[:, j] = −M⁻¹ xa[:, j]`, `yb[:, j] = −M⁻¹ xb[:, j]` for every column `j` (column-major
/// `n x n` lane matrices; `zt` is M⁻¹ row-major, symmetric): over the rows `r` where column `j`
/// can be nonzero (`related`, as `derivatives::minus_minv_times`), four at a time, both
/// products from one pass over the rows of M⁻¹; a column of ∂τ/∂q that is zero whatever the
/// state (`zero_dq_column`) gives a zero column.
#[inline(always)]
fn minus_minv_times(m: &Model, ws: &DerivativesWorkspace, zt: &[L], xa: &[L], xb: &[L], ya: &mut [L], yb: &mut [L]) {
    let n = m.nv;
    let zero = L::splat(0.0);
    for i in 1..m.njoints {
        let related = &ws.related_dofs[ws.related_start[i]..ws.related_start[i + 1]];
        for j in m.idx_v[i]..m.idx_v[i] + m.nvs[i] {
            let (xa, xb) = (&xa[j * n..j * n + n], &xb[j * n..j * n + n]);
            let (ya, yb) = (&mut ya[j * n..j * n + n], &mut yb[j * n..j * n + n]);
            ya.fill(zero);
            yb.fill(zero);
            // a zero column of ∂τ/∂q: its products are skipped (xa taken as zero)
            let both = !ws.zero_dq_column[j];
            let mut chunks = related.chunks_exact(4);
            for r in &mut chunks {
                let row = |t: usize| &zt[r[t] * n..r[t] * n + n];
                let (a0, a1, a2, a3) = (xa[r[0]], xa[r[1]], xa[r[2]], xa[r[3]]);
                let (b0, b1, b2, b3) = (xb[r[0]], xb[r[1]], xb[r[2]], xb[r[3]]);
                let rows = row(0).iter().zip(row(1)).zip(row(2)).zip(row(3));
                for ((((p, q), u), w), (y, z)) in rows.zip(ya.iter_mut().zip(yb.iter_mut())) {
                    if both {
                        *y -= ((a0 * *p + a1 * *q) + a2 * *u) + a3 * *w;
                    }
                    *z -= ((b0 * *p + b1 * *q) + b2 * *u) + b3 * *w;
                }
            }
            for &r in chunks.remainder() {
                let (a, b) = (xa[r], xb[r]);
                for (p, (y, z)) in zt[r * n..r * n + n].iter().zip(ya.iter_mut().zip(yb.iter_mut())) {
                    if both {
                        *y -= a * *p;
                    }
                    *z -= b * *p;
                }
            }
        }
    }
}

/// The lanes of the column-major `src` (`n x n`, one state's matrix in lanes) that hold states
/// of group `g` (of `k`) row-major into their rows of `dst`: four entries of four states at a
/// time (a 4x4 transpose in registers).
#[inline(always)]
fn store_transposed(src: &[L], n: usize, g: usize, k: usize, dst: &mut [f64]) {
    let Some([r0, r1, r2, r3]) = four_rows(dst, n * n, g, k) else {
        return store_transposed_short(src, n, g, k, dst);
    };
    for t in 0..n {
        let mut j = 0;
        while j + 4 <= n {
            let (a, b, c, d) = (src[j * n + t], src[(j + 1) * n + t], src[(j + 2) * n + t], src[(j + 3) * n + t]);
            let e = t * n + j;
            r0[e..e + 4].copy_from_slice(&[a.0[0], b.0[0], c.0[0], d.0[0]]);
            r1[e..e + 4].copy_from_slice(&[a.0[1], b.0[1], c.0[1], d.0[1]]);
            r2[e..e + 4].copy_from_slice(&[a.0[2], b.0[2], c.0[2], d.0[2]]);
            r3[e..e + 4].copy_from_slice(&[a.0[3], b.0[3], c.0[3], d.0[3]]);
            j += 4;
        }
        for j in j..n {
            let x = src[j * n + t];
            (r0[t * n + j], r1[t * n + j], r2[t * n + j], r3[t * n + j]) = (x.0[0], x.0[1], x.0[2], x.0[3]);
        }
    }
}

/// The rows of the four states of group `g` (of `k`) in `dst`, `nn` numbers per state; `None`
/// for a short last group.
#[inline(always)]
fn four_rows(dst: &mut [f64], nn: usize, g: usize, k: usize) -> Option<[&mut [f64]; 4]> {
    if k - g * LANES < LANES {
        return None;
    }
    let (r01, r23) = dst[g * LANES * nn..(g + 1) * LANES * nn].split_at_mut(2 * nn);
    let (r0, r1) = r01.split_at_mut(nn);
    let (r2, r3) = r23.split_at_mut(nn);
    Some([r0, r1, r2, r3])
}

/// [`store_transposed`] of a short last group: one number at a time.
fn store_transposed_short(src: &[L], n: usize, g: usize, k: usize, dst: &mut [f64]) {
    let nn = n * n;
    let states = LANES.min(k - g * LANES);
    for (l, row) in dst[g * LANES * nn..(g * LANES + states) * nn].chunks_exact_mut(nn).enumerate() {
        for t in 0..n {
            for j in 0..n {
                row[t * n + j] = src[j * n + t].0[l];
            }
        }
    }
}

/// Every group of `LANES` states of the `k` given: ∂q̈/∂q, ∂q̈/∂v, M⁻¹ into `outs` (row-major,
/// `nv * nv` per state).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn groups(m: &Model, w: &mut DerivLanes, cw: &mut CrbaWorkspace, ws: &DerivativesWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], outs: [&mut [f64]; 3], store: impl Fn(&[L], bool, usize, usize, &mut [f64])) {
    let (n, nn) = (m.nv, m.nv * m.nv);
    let mut mats = std::mem::take(&mut w.mats);
    let mut b = std::mem::take(&mut w.b);
    let (mut ya, mut yb) = (std::mem::take(&mut cw.ya), std::mem::take(&mut cw.yb));
    let [oq, ov, om] = outs;
    for g in 0..k.div_ceil(LANES) {
        // v into x1, τ into x2; b, M, ∂τ/∂v at q̈ = 0
        w.load(n, g, k, v, Some(tau));
        forward(m, w, g, k, q, false);
        backward::<false, _>(m, w, &mut LaneMats::<true> { n, m: &mut mats }, Some(&mut b));
        // M = Lᵀ D L, M⁻¹, q̈ = M⁻¹ (τ − b) on the factors
        invert(m, Some(&mats[2 * nn..3 * nn]), cw);
        for (x, b) in w.x2.iter_mut().zip(&b) {
            *x -= *b;
        }
        solve(m, cw, &mut w.x2);
        configuration_entries_at(m, w, &mut LaneMats::<true> { n, m: &mut mats });
        minus_minv_times(m, ws, &cw.zt, &mats[..nn], &mats[nn..2 * nn], &mut ya, &mut yb);
        store(&ya, true, g, k, oq);
        store(&yb, true, g, k, ov);
        store(&cw.zt, false, g, k, om);
    }
    w.mats = mats;
    w.b = b;
    (cw.ya, cw.yb) = (ya, yb);
}

twice! {
    /// ∂q̈/∂q, ∂q̈/∂v and M⁻¹ of `k` states, row-major into `outs`; the AVX2 copy stores
    /// through AVX tiles, streamed past the caches when the three results do not fit (record
    /// 0092).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn aba_derivatives_chunk(m: &Model, w: &mut DerivLanes, cw: &mut CrbaWorkspace, ws: &DerivativesWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], outs: [&mut [f64]; 3]) {
        groups(m, w, cw, ws, k, q, v, tau, outs, |s, t, g, k, o| portable_store(m.nv, s, t, g, k, o));
    } avx2 {
        let n = m.nv;
        let stream = 3 * k * n * n * 8 >= stream_bytes();
        groups(m, w, cw, ws, k, q, v, tau, outs, |s, t, g, k, o| {
            if t {
                store_transposed_avx2(s, n, g, k, o, stream);
            } else {
                store_rows_avx2(s, &[(0, n * n, false)], g, k, o, stream);
            }
        });
    }
}

/// A result of the group into its rows: column-major (`transposed`) or row-major.
#[inline(always)]
fn portable_store(n: usize, src: &[L], transposed: bool, g: usize, k: usize, dst: &mut [f64]) {
    if transposed {
        store_transposed(src, n, g, k, dst);
    } else {
        store_rows(src, &[(0, n * n, false)], g, k, dst);
    }
}

/// [`store_transposed`] through [`tile_avx2`], non-temporal when `stream`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn store_transposed_avx2(src: &[L], n: usize, g: usize, k: usize, dst: &mut [f64], stream: bool) {
    let Some([r0, r1, r2, r3]) = four_rows(dst, n * n, g, k) else {
        return store_transposed_short(src, n, g, k, dst);
    };
    for t in 0..n {
        let mut j = 0;
        while j + 4 <= n {
            let e = t * n + j;
            if !stream {
                ask_ahead4(r0.as_ptr(), n * n, e);
            }
            let x = [&src[j * n + t], &src[(j + 1) * n + t], &src[(j + 2) * n + t], &src[(j + 3) * n + t]];
            tile_avx2!(x, [&mut r0[e..], &mut r1[e..], &mut r2[e..], &mut r3[e..]], stream);
            j += 4;
        }
        for j in j..n {
            for (l, r) in [&mut *r0, &mut *r1, &mut *r2, &mut *r3].into_iter().enumerate() {
                put1(&mut r[t * n + j], src[j * n + t].0[l], stream);
            }
        }
    }
    if stream {
        std::arch::x86_64::_mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    //! The portable build of the kernel (the public call takes the AVX2 one on an AVX2
    //! machine) against the single call within `tests/batch.rs`'s tolerance, and bit for bit
    //! against the dispatched build.
    use super::groups;
    use crate::algorithms::{self as alg, DerivativesWorkspace, SplitMix64};
    use crate::batch::crba_lanes::CrbaWorkspace;
    use crate::batch::rnea_derivatives_lanes::DerivLanes;
    use crate::io::urdf;
    use nalgebra::DVector;

    #[test]
    fn portable_kernel_equals_the_single_call_and_the_dispatched_build() {
        for (name, root) in [("panda", urdf::Root::Fixed), ("solo12", urdf::Root::FreeFlyer)] {
            let path = format!("{}/../../tests/data/{name}.urdf", env!("CARGO_MANIFEST_DIR"));
            let model = urdf::load(path, root).unwrap();
            let (k, nq, nv) = (7, model.nq, model.nv);
            let mut rng = SplitMix64::new(11);
            let mut q = vec![];
            for _ in 0..k {
                q.extend(alg::random_configuration(&model, &mut rng).iter());
            }
            let (v, tau) = (rng.vector(k * nv), rng.vector(k * nv));
            let mut outs: [Vec<f64>; 3] = std::array::from_fn(|_| vec![f64::NAN; k * nv * nv]);
            let [x, y, z] = &mut outs;
            let (mut data, mut ws) = (crate::Data::new(&model), DerivativesWorkspace::new(&model));
            let mut cw = CrbaWorkspace::new(&model);
            groups(&model, &mut DerivLanes::new(&model), &mut cw, &ws, k, &q, v.as_slice(), tau.as_slice(), [x, y, z], |s, t, g, k, o| super::portable_store(nv, s, t, g, k, o));
            let mut public: [Vec<f64>; 3] = std::array::from_fn(|_| vec![f64::NAN; k * nv * nv]);
            let [x, y, z] = &mut public;
            let mut bw = crate::batch::BatchWorkspace::new(&model, 1);
            crate::batch::aba_derivatives(&model, &mut bw, &q, v.as_slice(), tau.as_slice(), x, y, z).unwrap();
            for (a, b) in outs.iter().zip(&public) {
                assert!(a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()), "{name} portable vs dispatched");
            }
            for s in 0..k {
                let row = |x: &[f64], n: usize| DVector::from_column_slice(&x[s * n..(s + 1) * n]);
                alg::aba_derivatives(&model, &mut data, &mut ws, &row(&q, nq), &row(v.as_slice(), nv), &row(tau.as_slice(), nv));
                let (mass, minv) = (data.mass_matrix.clone(), data.mass_matrix_inverse.clone());
                let minv_scale = (1.0 + mass.amax()) * minv.amax() * minv.amax();
                let scale = minv_scale * (1.0 + ws.dtau_dq.amax() + ws.dtau_dv.amax());
                for (got, (want, sc)) in outs.iter().zip([(&ws.dqdd_dq, scale), (&ws.dqdd_dv, scale), (&minv, minv_scale)]) {
                    let want = want.transpose();
                    let got = &got[s * nv * nv..(s + 1) * nv * nv];
                    assert!(got.iter().zip(want.as_slice()).all(|(x, y)| (x - y).abs() <= 1e-12 * sc), "{name} state {s}");
                }
            }
        }
    }
}
