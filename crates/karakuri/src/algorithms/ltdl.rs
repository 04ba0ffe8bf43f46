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
/// factorisation: M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ = Σ_k x_k x_kᵀ / D_k, where x_k = L⁻¹ e_k is nonzero only on
/// the dofs of the subtree of k — a contiguous range in depth-first order — so each term is a
/// dense rank-one update of one diagonal block.
pub fn mass_matrix_inverse<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DMatrix<f64> {
    mass_matrix(model, data, q);
    factorize(model, data);
    let n = model.nv;
    let minv = data.mass_matrix_inverse.as_mut_slice();
    minv.fill(0.0);
    let x = data.tmp_v.as_mut_slice();
    for k in 0..n {
        let end = model.subtree_end_v[model.dof_joint[k]];
        // x = L⁻¹ e_k on [k, end): x_j = −Σ L[j, i] x_i over ancestors i ≥ k of j
        x[k] = 1.0;
        for j in k + 1..end {
            let mut s = 0.0;
            let mut i = model.dof_parent[j];
            while i != NONE && i >= k {
                s -= data.ltdl[(j, i)] * x[i];
                i = model.dof_parent[i];
            }
            x[j] = s;
        }
        // upper triangle of the block [k, end)²: M⁻¹[a, b] += x_a x_b / D_k
        let d_inv = 1.0 / data.ltdl_d[k];
        for b in k..end {
            let xb = x[b] * d_inv;
            let col = &mut minv[b * n + k..b * n + b + 1];
            for (m, xa) in col.iter_mut().zip(&x[k..=b]) {
                *m += xa * xb;
            }
        }
    }
    for b in 0..n {
        for a in 0..b {
            minv[a * n + b] = minv[b * n + a];
        }
    }
    &data.mass_matrix_inverse
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
