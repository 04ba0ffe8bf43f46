//! M(q)⁻¹ through the branch-induced factorisation of the CRBA matrix (see
//! `docs/decisions/0007-one-linear-algebra-layer.md`: not Pinocchio's ABA-based `computeMinverse`).

use crate::data::{Data, Fresh, Stale};
use crate::linalg::ltdl::{packed_prefix, PACKED};
use crate::linalg::Factorization;
use crate::model::Model;
use nalgebra::{DMatrix, DVector};

use super::mass_matrix;

/// The branch-induced factorisation M = Lᵀ D L of the mass matrix in `data`
/// ([`Data::mass_matrix_factorization`]; solves with M go through it). Needs the mass matrix
/// ([`mass_matrix`] or [`compute_all_terms`](crate::algorithms::compute_all_terms) first);
/// adds the factorisation to what is fresh.
pub fn factorize_mass_matrix(data: &mut Data) -> Result<&Factorization, Stale> {
    data.require(Fresh::MASS_MATRIX, "factorize_mass_matrix")?;
    data.ltdl.factorize(&data.mass_matrix);
    data.fresh = data.fresh | Fresh::MASS_MATRIX_FACTORIZATION;
    Ok(&data.ltdl)
}

/// M(q)⁻¹ in `data.mass_matrix_inverse` (full symmetric); fresh after: M, its factorisation,
/// M⁻¹, through the branch-induced
/// factorisation M = Lᵀ D L (left in `data.ltdl`): M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ = V D⁻¹ Vᵀ with V = L⁻¹,
/// which keeps L's pattern; V in `data.ltdl_inv` (and on the chains in `data.ltdl_inv_chain`).
///
/// The rows of V (W = L⁻ᵀ column by column: `W[:, j] = e_j − Σ_i L[j, i] W[:, i]` over the
/// ancestors i of j) are dense loops over contiguous prefixes of the chains of
/// [`Factorization`], with no parent chase. Column b of M⁻¹ is then
/// `Σ_k V[b, k] / D_k · V[:, k]` over the chain of b, restricted to rows ≤ b (the upper
/// triangle, mirrored at the end), the columns of V taken four at a time.
pub fn mass_matrix_inverse<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DMatrix<f64> {
    mass_matrix(model, data, q);
    data.fresh = Fresh::MASS_MATRIX;
    invert_mass_matrix(model, data);
    &data.mass_matrix_inverse
}

/// [`mass_matrix_inverse`] of the M already in `data.mass_matrix` (the analytical derivatives
/// compute M themselves): factorisation and M⁻¹ are added to what is fresh.
pub(crate) fn invert_mass_matrix(model: &Model, data: &mut Data) {
    data.ltdl.factorize(&data.mass_matrix);
    data.fresh = data.fresh | Fresh::MASS_MATRIX_FACTORIZATION | Fresh::MASS_MATRIX_INVERSE;
    let n = model.nv;
    if n == 0 {
        return;
    }
    let (chain, cs, u) = (&data.ltdl.chain[..], &data.ltdl.start[..], &data.ltdl.f[..]);
    let w = &mut data.ltdl_inv_chain[..];
    l_inverse_chain_rows(n, chain, cs, u, w);
    // V dense, column-major (only pattern entries are ever written)
    let v = data.ltdl_inv.as_mut_slice();
    for a in 0..n {
        let (s, e) = (cs[a], cs[a + 1]);
        for (&k, &x) in chain[s..e].iter().zip(&w[s..e]) {
            v[k * n + a] = x;
        }
    }
    // column b of M⁻¹ above the diagonal: Σ_q w_b[q] / D_{chain_b[q]} · V[chain_b[q]..=b, chain_b[q]]
    // D⁻¹ (the last entry of each compact column of the factors)
    let dinv = data.tmp_v.as_mut_slice();
    for (k, x) in dinv.iter_mut().enumerate() {
        *x = 1.0 / u[cs[k + 1] - 1];
    }
    let z = data.mass_matrix_inverse.as_mut_slice();
    upper_triangle(n, chain, cs, w, v, dinv, z);
    mirror_lower_triangle(n, z);
}

/// The rows of `V = L⁻¹` on the chains (`chain`, `cs`: each dof's ancestors, compact;
/// `u`: the factor's entries, same layout) into `w` (same layout):
/// `w_j = e_last − Σ_p L[j, chain_j[p]] w_{chain_j[p]}`, the first six ancestors as one
/// packed triangle.
#[inline]
fn l_inverse_chain_rows(n: usize, chain: &[usize], cs: &[usize], u: &[f64], w: &mut [f64]) {
    for j in 0..n {
        let (s, e) = (cs[j], cs[j + 1]);
        let d = e - s - 1;
        let (before, rest) = w.split_at_mut(s);
        let wj = &mut rest[..=d];
        wj.fill(0.0);
        wj[d] = 1.0;
        let pf = packed_prefix(chain, s, d);
        for p in pf..d {
            let i = chain[s + p];
            let a = u[s + p];
            let wi = &before[cs[i]..cs[i] + p + 1];
            for (x, y) in wj[..=p].iter_mut().zip(wi) {
                *x -= a * y;
            }
        }
        if pf == PACKED {
            // the rows of the six first ancestors form one packed triangle (see above)
            let base = cs[chain[s]];
            let t: &[f64; PACKED * (PACKED + 1) / 2] =
                (&before[base..base + PACKED * (PACKED + 1) / 2]).try_into().unwrap_or_else(|_| unreachable!());
            let a: [f64; PACKED] = u[s..s + PACKED].try_into().unwrap_or([0.0; PACKED]);
            let mut acc = [0.0; PACKED];
            for p in 0..PACKED {
                for q in 0..=p {
                    acc[q] += a[p] * t[p * (p + 1) / 2 + q];
                }
            }
            for (x, y) in wj[..PACKED].iter_mut().zip(&acc) {
                *x -= y;
            }
        }
    }
}

/// Columns `b` of `M⁻¹` above (and on) the diagonal into `z` (n x n, column-major):
/// `Σ_q w_b[q] / D_{chain_b[q]} · V[chain_b[q]..=b, chain_b[q]]`, from the chain rows `w`,
/// the dense `V` and `D⁻¹` (`dinv`).
#[inline]
fn upper_triangle(n: usize, chain: &[usize], cs: &[usize], w: &[f64], v: &[f64], dinv: &[f64], z: &mut [f64]) {
    for b in 0..n {
        let (s, e) = (cs[b], cs[b + 1]);
        let mut cb = &chain[s..e];
        let mut wb = &w[s..e];
        let zb = &mut z[b * n..b * n + b + 1];
        zb[..cb[0]].fill(0.0);
        let mut first = true;
        if packed_prefix(chain, s, e - s - 1) == PACKED {
            // the six first ancestors at once (a free flyer: consecutive dofs from the root)
            let lo = cb[0];
            let x: [&[f64]; PACKED] = std::array::from_fn(|t| &v[(lo + t) * n + lo..(lo + t) * n + b + 1]);
            let c: [f64; PACKED] = std::array::from_fn(|t| wb[t] * dinv[lo + t]);
            let out = &mut zb[lo..];
            let len = out.len();
            let (x0, x1, x2) = (&x[0][..len], &x[1][..len], &x[2][..len]);
            let (x3, x4, x5) = (&x[3][..len], &x[4][..len], &x[5][..len]);
            for r in 0..len {
                out[r] = c[0] * x0[r] + c[1] * x1[r] + c[2] * x2[r] + c[3] * x3[r] + c[4] * x4[r] + c[5] * x5[r];
            }
            cb = &cb[PACKED..];
            wb = &wb[PACKED..];
            first = false;
        }
        for (ks, ws) in cb.chunks(4).zip(wb.chunks(4)) {
            let lo = ks[0];
            let col = |t: usize| &v[ks[t] * n + lo..ks[t] * n + b + 1];
            let cf = |t: usize| ws[t] * dinv[ks[t]];
            let out = &mut zb[lo..];
            match (ks.len(), first) {
                (4, true) => axpy4::<true>(out, [col(0), col(1), col(2), col(3)], [cf(0), cf(1), cf(2), cf(3)]),
                (4, false) => axpy4::<false>(out, [col(0), col(1), col(2), col(3)], [cf(0), cf(1), cf(2), cf(3)]),
                (len, first) => {
                    for t in 0..len {
                        let (c, x) = (cf(t), col(t));
                        if first && t == 0 {
                            for (o, y) in out.iter_mut().zip(x) {
                                *o = c * y;
                            }
                        } else {
                            for (o, y) in out.iter_mut().zip(x) {
                                *o += c * y;
                            }
                        }
                    }
                }
            }
            first = false;
        }
    }
}

/// Copies the upper triangle of `z` (n x n, column-major) below the diagonal: columns `b` and
/// `b + 1` at once, so that each row takes one pair store.
#[inline]
fn mirror_lower_triangle(n: usize, z: &mut [f64]) {
    let mut b = 1;
    while b < n {
        let (lo, hi) = z.split_at_mut(b * n);
        if b + 1 < n {
            for (col, (x0, x1)) in lo.chunks_exact_mut(n).zip(hi[..b].iter().zip(&hi[n..n + b])) {
                col[b..b + 2].copy_from_slice(&[*x0, *x1]);
            }
            hi[b + 1] = hi[n + b];
        } else {
            for (col, x) in lo.chunks_exact_mut(n).zip(&hi[..b]) {
                col[b] = *x;
            }
        }
        b += 2;
    }
}

/// `out (=|+=) Σ_t c[t] x[t]` over four columns of equal length.
#[inline(always)]
fn axpy4<const ASSIGN: bool>(out: &mut [f64], x: [&[f64]; 4], c: [f64; 4]) {
    let len = out.len();
    let (x0, x1, x2, x3) = (&x[0][..len], &x[1][..len], &x[2][..len], &x[3][..len]);
    for t in 0..len {
        let s = c[0] * x0[t] + c[1] * x1[t] + c[2] * x2[t] + c[3] * x3[t];
        out[t] = if ASSIGN { s } else { out[t] + s };
    }
}
