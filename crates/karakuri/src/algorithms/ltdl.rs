//! Branch-induced sparse factorisation M = Lᵀ D L (RBDA §6.5, Table 6.3; spatial_v2's
//! `LTDL.m`). L is unit lower triangular and nonzero only at (k, i) with i an ancestor dof
//! of k (`Model::dof_parent` chains), so the factorisation and the solves touch nothing else:
//! O(n d²) and O(n d) for tree depth d, against O(n³) and O(n²) dense.

use super::crba::mass_matrix;
use crate::data::Data;
use crate::model::Model;
use nalgebra::{DMatrix, DVector};

const NONE: usize = usize::MAX;

/// Factorises the mass matrix in `data.mass_matrix` into `data.ltdl` (L below the diagonal)
/// and `data.ltdl_d` (D). Call [`mass_matrix`] first.
pub fn factorize(model: &Model, data: &mut Data) {
    let n = model.nv;
    let lambda = &model.dof_parent;
    let h = &mut data.ltdl;
    // copy the lower triangle along ancestor chains only
    for k in 0..n {
        h[(k, k)] = data.mass_matrix[(k, k)];
        let mut i = lambda[k];
        while i != NONE {
            h[(k, i)] = data.mass_matrix[(k, i)];
            i = lambda[i];
        }
    }
    // RBDA Table 6.3: for k = n..1, eliminate H(k, ·) into its ancestors
    for k in (0..n).rev() {
        let hkk = h[(k, k)];
        let mut i = lambda[k];
        while i != NONE {
            let a = h[(k, i)] / hkk;
            let mut j = i;
            while j != NONE {
                let hkj = h[(k, j)];
                h[(i, j)] -= a * hkj;
                j = lambda[j];
            }
            h[(k, i)] = a;
            i = lambda[i];
        }
    }
    for k in 0..n {
        data.ltdl_d[k] = h[(k, k)];
    }
}

/// Solves M x = b in place (`x` holds b on entry) with the factors from [`factorize`].
pub fn solve_in_place(model: &Model, data: &Data, x: &mut [f64]) {
    solve_lt_in_place(model, data, x);
    for (k, xk) in x.iter_mut().enumerate() {
        *xk /= data.ltdl_d[k];
    }
    solve_l_in_place(model, data, x);
}

/// x ← L⁻ᵀ x.
pub fn solve_lt_in_place(model: &Model, data: &Data, x: &mut [f64]) {
    let lambda = &model.dof_parent;
    for k in (0..model.nv).rev() {
        let xk = x[k];
        let mut i = lambda[k];
        while i != NONE {
            x[i] -= data.ltdl[(k, i)] * xk;
            i = lambda[i];
        }
    }
}

/// x ← L⁻¹ x.
pub fn solve_l_in_place(model: &Model, data: &Data, x: &mut [f64]) {
    let lambda = &model.dof_parent;
    for k in 0..model.nv {
        let mut s = x[k];
        let mut i = lambda[k];
        while i != NONE {
            s -= data.ltdl[(k, i)] * x[i];
            i = lambda[i];
        }
        x[k] = s;
    }
}

/// M(q)⁻¹ in `data.mass_matrix_inverse` (full symmetric), through the branch-induced
/// factorisation M = Lᵀ D L: M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ = V D⁻¹ Vᵀ with V = L⁻¹, which keeps L's
/// pattern. The factors are left in `data.ltdl_chain` (compact), V in `data.ltdl_inv`;
/// `data.ltdl` and `data.ltdl_d` are not touched (call [`factorize`] for the solves).
///
/// Everything runs on the dof chains of the model (`Model::dof_chain`: the ancestors of a dof
/// in increasing order, then the dof), where the chain of an ancestor is a prefix of the
/// chain of its descendant. On these compact columns the factorisation (RBDA Table 6.3) and
/// the rows of V (W = L⁻ᵀ column by column: `W[:, j] = e_j − Σ_i L[j, i] W[:, i]` over the
/// ancestors i of j) are dense loops over contiguous prefixes, with no `dof_parent` chase.
/// Column b of M⁻¹ is then `Σ_k V[b, k] / D_k · V[:, k]` over the chain of b, restricted to
/// rows ≤ b (the upper triangle, mirrored at the end), the columns of V taken four at a time.
pub fn mass_matrix_inverse<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DMatrix<f64> {
    mass_matrix(model, data, q);
    let n = model.nv;
    if n == 0 {
        return &data.mass_matrix_inverse;
    }
    let chain = &model.dof_chain[..];
    let cs = &model.dof_chain_start[..];
    let u = &mut data.ltdl_chain[..];
    let mm = data.mass_matrix.as_slice();
    // the lower triangle of M on the chains: u_k[p] = M[k, chain_k[p]], u_k[last] = M[k, k]
    for k in 0..n {
        let col = &mm[k * n..(k + 1) * n];
        for (x, &r) in u[cs[k]..cs[k + 1]].iter_mut().zip(&chain[cs[k]..cs[k + 1]]) {
            *x = col[r];
        }
    }
    // RBDA Table 6.3 on compact columns: for k = n..1, eliminate row k into its ancestors i
    // (their chains are prefixes of k's), then scale: u_k[p] = L[k, chain_k[p]], u_k[last] = D_k
    for k in (0..n).rev() {
        let (s, e) = (cs[k], cs[k + 1]);
        let d = e - s - 1;
        let (before, rest) = u.split_at_mut(s);
        let uk = &mut rest[..=d];
        let inv = 1.0 / uk[d];
        let pf = packed_prefix(chain, s, d);
        for p in (pf..d).rev() {
            let i = chain[s + p];
            let a = uk[p] * inv;
            let ui = &mut before[cs[i]..cs[i] + p + 1];
            for (x, y) in ui.iter_mut().zip(&uk[..=p]) {
                *x -= a * y;
            }
        }
        if pf == PACKED {
            // the six first ancestors are consecutive dofs from the root (a free flyer): their
            // compact columns are one packed triangle, updated by one unrolled rank-one term
            let base = cs[chain[s]];
            let x: [f64; PACKED] = uk[..PACKED].try_into().unwrap_or([0.0; PACKED]);
            let t: &mut [f64; PACKED * (PACKED + 1) / 2] =
                (&mut before[base..base + PACKED * (PACKED + 1) / 2]).try_into().unwrap_or_else(|_| unreachable!());
            for p in 0..PACKED {
                let a = x[p] * inv;
                for q in 0..=p {
                    t[p * (p + 1) / 2 + q] -= a * x[q];
                }
            }
        }
        for x in &mut uk[..d] {
            *x *= inv;
        }
    }
    // rows of V = L⁻¹ on the chains: w_j = e_last − Σ_p L[j, chain_j[p]] w_{chain_j[p]} (prefixes)
    let w = &mut data.ltdl_inv_chain[..];
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
    // the lower triangle
    for b in 1..n {
        let (lo, hi) = z.split_at_mut(b * n);
        for (a, x) in hi[..b].iter().enumerate() {
            lo[a * n + b] = *x;
        }
    }
    &data.mass_matrix_inverse
}

/// Length of the free-flyer-like prefix handled as one packed triangle.
const PACKED: usize = 6;

/// `PACKED` when the chain at `s` (of depth `d`, the dof itself excluded) starts with
/// `PACKED` consecutive dofs (then their compact columns are consecutive too, forming a
/// packed upper triangle), else 0.
#[inline(always)]
fn packed_prefix(chain: &[usize], s: usize, d: usize) -> usize {
    if d >= PACKED && chain[s + PACKED - 1] == chain[s] + PACKED - 1 {
        PACKED
    } else {
        0
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

// ---------------------------------------------------------------------------------------------
// Products with the factors, many right-hand sides, and the same kernels for any tree pattern.
//
// With M = Lᵀ D L (L unit lower triangular, branch-induced), M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ, so for a
// constraint Jacobian G (m x nv) the Delassus operator is
// G M⁻¹ Gᵀ = (G L⁻¹ D^-1/2)(G L⁻¹ D^-1/2)ᵀ = Yᵀ Y with Y = D^-1/2 L⁻ᵀ Gᵀ
// ([`half_solve_columns_in_place`] on the columns of Gᵀ).
// ---------------------------------------------------------------------------------------------

/// x ← L x (L from [`factorize`], unit lower triangular; touches only ancestor pairs).
pub fn mul_l_in_place(model: &Model, data: &Data, x: &mut [f64]) {
    let lambda = &model.dof_parent;
    // row k of L x reads x at k and its ancestors (all < k): go from the last row up
    for k in (0..model.nv).rev() {
        let mut s = x[k];
        let mut i = lambda[k];
        while i != NONE {
            s += data.ltdl[(k, i)] * x[i];
            i = lambda[i];
        }
        x[k] = s;
    }
}

/// x ← Lᵀ x.
pub fn mul_lt_in_place(model: &Model, data: &Data, x: &mut [f64]) {
    let lambda = &model.dof_parent;
    // (Lᵀ x)_i = x_i + Σ_{k descendant of i} L[k, i] x_k: scatter each x_k to its ancestors,
    // first rows first, so every x_k read is still the input
    for k in 0..model.nv {
        let xk = x[k];
        let mut i = lambda[k];
        while i != NONE {
            x[i] += data.ltdl[(k, i)] * xk;
            i = lambda[i];
        }
    }
}

/// x ← D x.
pub fn mul_d_in_place(data: &Data, x: &mut [f64]) {
    for (xk, dk) in x.iter_mut().zip(data.ltdl_d.iter()) {
        *xk *= dk;
    }
}

/// x ← D^½ x (D > 0 for a positive definite M).
pub fn mul_sqrt_d_in_place(data: &Data, x: &mut [f64]) {
    for (xk, dk) in x.iter_mut().zip(data.ltdl_d.iter()) {
        *xk *= dk.sqrt();
    }
}

/// x ← D^-½ x.
pub fn mul_inv_sqrt_d_in_place(data: &Data, x: &mut [f64]) {
    for (xk, dk) in x.iter_mut().zip(data.ltdl_d.iter()) {
        *xk /= dk.sqrt();
    }
}

/// x ← M x = Lᵀ D L x through the factors (for checks; [`mass_matrix`] holds M densely).
pub fn mul_mass_matrix_in_place(model: &Model, data: &Data, x: &mut [f64]) {
    mul_l_in_place(model, data, x);
    mul_d_in_place(data, x);
    mul_lt_in_place(model, data, x);
}

/// Solves M X = B for every column of `b` in place (`b` is `nv x m`, X overwrites B).
pub fn solve_columns_in_place(model: &Model, data: &Data, b: &mut DMatrix<f64>) {
    assert_eq!(b.nrows(), model.nv, "right-hand sides need nv rows");
    if model.nv == 0 {
        return;
    }
    for col in b.as_mut_slice().chunks_exact_mut(model.nv) {
        solve_in_place(model, data, col);
    }
}

/// B ← D^-½ L⁻ᵀ B for every column of `b` (`nv x m`): with B = Gᵀ on entry, the result Y
/// gives the Delassus operator G M⁻¹ Gᵀ = Yᵀ Y, and M⁻¹ Gᵀ = L⁻¹ D^-½ Y.
pub fn half_solve_columns_in_place(model: &Model, data: &Data, b: &mut DMatrix<f64>) {
    assert_eq!(b.nrows(), model.nv, "right-hand sides need nv rows");
    if model.nv == 0 {
        return;
    }
    for col in b.as_mut_slice().chunks_exact_mut(model.nv) {
        solve_lt_in_place(model, data, col);
        mul_inv_sqrt_d_in_place(data, col);
    }
}

/// The branch-induced LᵀDL of any matrix whose pattern is a tree given by `parent`
/// (`parent[k] < k`, [`usize::MAX`] at a root): the leading `n x n` block of `h`, n =
/// `parent.len()`, is overwritten with L below the diagonal and D on it. Only the lower
/// triangle along ancestor chains is read. Used for sub-blocks of M, e.g. the block of the
/// forward dofs in hybrid dynamics, whose pattern is the tree contracted to those dofs.
pub fn factorize_with_parents(h: &mut DMatrix<f64>, parent: &[usize]) {
    let n = parent.len();
    debug_assert!(h.nrows() >= n && h.ncols() >= n);
    // RBDA Table 6.3
    for k in (0..n).rev() {
        let hkk = h[(k, k)];
        let mut i = parent[k];
        while i != NONE {
            let a = h[(k, i)] / hkk;
            let mut j = i;
            while j != NONE {
                let hkj = h[(k, j)];
                h[(i, j)] -= a * hkj;
                j = parent[j];
            }
            h[(k, i)] = a;
            i = parent[i];
        }
    }
}

/// Solves H x = b in place with the factors of [`factorize_with_parents`] (same `parent`).
pub fn solve_with_parents(h: &DMatrix<f64>, parent: &[usize], x: &mut [f64]) {
    let n = parent.len();
    // x ← L⁻ᵀ x
    for k in (0..n).rev() {
        let xk = x[k];
        let mut i = parent[k];
        while i != NONE {
            x[i] -= h[(k, i)] * xk;
            i = parent[i];
        }
    }
    for k in 0..n {
        x[k] /= h[(k, k)];
    }
    // x ← L⁻¹ x
    for k in 0..n {
        let mut s = x[k];
        let mut i = parent[k];
        while i != NONE {
            s -= h[(k, i)] * x[i];
            i = parent[i];
        }
        x[k] = s;
    }
}
