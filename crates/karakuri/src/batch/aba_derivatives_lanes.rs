//! ∂q̈/∂q, ∂q̈/∂v and M⁻¹ (`algorithms::aba_derivatives`) for four states at once: the RNEA
//! derivative passes at q̈ = 0 and the q̈ share of ∂τ/∂q (`configuration_entries_at`) in lanes,
//! the single kernel's operations in its order (`rnea_derivatives_lanes.rs`); the LᵀDL
//! factorisation of M, M⁻¹, q̈ and the products by −M⁻¹ state by state by the single call's
//! own functions. Every output is the single call's bits (record 0076).

use super::lanes::{LMotion, L, LANES};
use super::rnea_derivatives_lanes::{backward, configuration_entries, forward, inertia_mul, DerivLanes, LaneMats};
use crate::algorithms::derivatives::{minus_minv_times, DerivativesWorkspace};
use crate::algorithms::invert_mass_matrix;
use crate::data::Data;
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

/// Lane `l` of the lane matrix `x` into `dst` (same layout).
#[inline(always)]
fn lane(x: &[L], l: usize, dst: &mut [f64]) {
    for (d, x) in dst.iter_mut().zip(x) {
        *d = x.0[l];
    }
}

/// The column-major `src` (`n x n`) row-major into `dst`.
#[inline(always)]
fn transpose_into(src: &[f64], n: usize, dst: &mut [f64]) {
    for r in 0..n {
        for c in 0..n {
            dst[r * n + c] = src[c * n + r];
        }
    }
}

/// Every group of `LANES` states of the `k` given: ∂q̈/∂q, ∂q̈/∂v, M⁻¹ into `outs` (row-major,
/// `nv * nv` per state).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn groups(m: &Model, w: &mut DerivLanes, data: &mut Data, ws: &mut DerivativesWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], outs: [&mut [f64]; 3]) {
    let (n, nn) = (m.nv, m.nv * m.nv);
    let mut mats = std::mem::take(&mut w.mats);
    let mut b = std::mem::take(&mut w.b);
    let mut minv = std::mem::take(&mut w.minv);
    let [oq, ov, om] = outs;
    for g in 0..k.div_ceil(LANES) {
        w.load(n, g, k, v, None);
        forward(m, w, g, k, q, false);
        backward::<false, _>(m, w, &mut LaneMats::<true> { n, m: &mut mats }, Some(&mut b));
        let cnt = LANES.min(k - g * LANES);
        for l in 0..LANES {
            // M's factors, M⁻¹ and q̈ = M⁻¹ (τ − b) state by state (padding lanes repeat the last)
            let s = (g * LANES + l).min(k - 1);
            lane(&mats[2 * nn..], l, data.mass_matrix.as_mut_slice());
            invert_mass_matrix(m, data);
            minv[l * nn..(l + 1) * nn].copy_from_slice(data.mass_matrix_inverse.as_slice());
            for d in 0..n {
                data.ddq[d] = tau[s * n + d] - b[d].0[l];
            }
            data.ltdl.solve(data.ddq.as_mut_slice());
            for d in 0..n {
                w.x2[d].0[l] = data.ddq[d];
            }
        }
        configuration_entries_at(m, w, &mut LaneMats::<true> { n, m: &mut mats });
        for l in 0..cnt {
            let s = g * LANES + l;
            lane(&mats[..nn], l, ws.dtau_dq.as_mut_slice());
            lane(&mats[nn..2 * nn], l, ws.dtau_dv.as_mut_slice());
            let mi = &minv[l * nn..(l + 1) * nn];
            minus_minv_times(m, ws, mi);
            transpose_into(ws.dqdd_dq.as_slice(), n, &mut oq[s * nn..(s + 1) * nn]);
            transpose_into(ws.dqdd_dv.as_slice(), n, &mut ov[s * nn..(s + 1) * nn]);
            // M⁻¹ is symmetric to the bit (its lower triangle mirrored): row-major = column-major
            om[s * nn..(s + 1) * nn].copy_from_slice(mi);
        }
    }
    w.mats = mats;
    w.b = b;
    w.minv = minv;
}

/// ∂q̈/∂q, ∂q̈/∂v and M⁻¹ of `k` states, row-major into `outs`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn aba_derivatives_chunk(m: &Model, w: &mut DerivLanes, data: &mut Data, ws: &mut DerivativesWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], outs: [&mut [f64]; 3]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked on the line above.
        #[allow(unsafe_code)]
        unsafe {
            aba_derivatives_avx2(m, w, data, ws, k, q, v, tau, outs)
        };
        return;
    }
    groups(m, w, data, ws, k, q, v, tau, outs);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
fn aba_derivatives_avx2(m: &Model, w: &mut DerivLanes, data: &mut Data, ws: &mut DerivativesWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], outs: [&mut [f64]; 3]) {
    groups(m, w, data, ws, k, q, v, tau, outs);
}

#[cfg(test)]
mod tests {
    //! The portable build of the kernel (the public call takes the AVX2 one on an AVX2
    //! machine) against the single call, bit for bit; `tests/batch.rs` covers the dispatched one.
    use super::groups;
    use crate::algorithms::{self as alg, DerivativesWorkspace, SplitMix64};
    use crate::batch::rnea_derivatives_lanes::DerivLanes;
    use crate::io::urdf;
    use nalgebra::DVector;

    #[test]
    fn portable_kernel_equals_the_single_call() {
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
            groups(&model, &mut DerivLanes::new(&model), &mut data, &mut ws, k, &q, v.as_slice(), tau.as_slice(), [x, y, z]);
            for s in 0..k {
                let row = |x: &[f64], n: usize| DVector::from_column_slice(&x[s * n..(s + 1) * n]);
                alg::aba_derivatives(&model, &mut data, &mut ws, &row(&q, nq), &row(v.as_slice(), nv), &row(tau.as_slice(), nv));
                for (got, want) in outs.iter().zip([&ws.dqdd_dq, &ws.dqdd_dv, &data.mass_matrix_inverse]) {
                    let want = want.transpose();
                    assert!(got[s * nv * nv..(s + 1) * nv * nv].iter().zip(want.as_slice()).all(|(x, y)| x.to_bits() == y.to_bits()), "{name} state {s}");
                }
            }
        }
    }
}
