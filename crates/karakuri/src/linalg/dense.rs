//! Small dense factorisations that work in place on preallocated buffers (nalgebra's
//! decompositions allocate their results, which the constrained-dynamics hot path must not).
//! Every routine acts on the leading block of a larger buffer so one allocation serves every
//! size up to the bound one.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)] // index loops read like the algebra; `!(x > tol)` also rejects NaN

use crate::spatial::Mat6;
use nalgebra::DMatrix;

/// LU with partial pivoting of the leading `n x n` block of `a`, in place (L unit lower, U
/// upper). Returns `false` when a pivot falls below `tol` (the matrix is singular to that
/// tolerance); the factors are then unusable.
pub(crate) fn lu_in_place(a: &mut DMatrix<f64>, n: usize, piv: &mut [usize], tol: f64) -> bool {
    let m = a.nrows();
    let s = a.as_mut_slice();
    for k in 0..n {
        let mut p = k;
        let mut best = s[k * m + k].abs();
        for r in k + 1..n {
            let x = s[k * m + r].abs();
            if x > best {
                best = x;
                p = r;
            }
        }
        piv[k] = p;
        if !(best > tol) {
            return false;
        }
        if p != k {
            for c in 0..n {
                s.swap(c * m + k, c * m + p);
            }
        }
        let inv = 1.0 / s[k * m + k];
        for x in &mut s[k * m + k + 1..k * m + n] {
            *x *= inv;
        }
        // trailing update, column by column: A[k+1.., c] -= L[k+1.., k] U[k, c]
        let (left, right) = s.split_at_mut((k + 1) * m);
        let lk = &left[k * m + k + 1..k * m + n];
        for col in right.chunks_exact_mut(m).take(n - k - 1) {
            let akc = col[k];
            if akc != 0.0 {
                for (x, l) in col[k + 1..n].iter_mut().zip(lk) {
                    *x -= l * akc;
                }
            }
        }
    }
    true
}

/// Solves with the factors of [`lu_in_place`]; `b` holds the right-hand side on entry.
pub(crate) fn lu_solve(a: &DMatrix<f64>, n: usize, piv: &[usize], b: &mut [f64]) {
    let m = a.nrows();
    let s = a.as_slice();
    for k in 0..n {
        b.swap(k, piv[k]);
    }
    for c in 0..n {
        let bc = b[c];
        if bc != 0.0 {
            for (x, l) in b[c + 1..n].iter_mut().zip(&s[c * m + c + 1..c * m + n]) {
                *x -= l * bc;
            }
        }
    }
    for c in (0..n).rev() {
        b[c] /= s[c * m + c];
        let bc = b[c];
        for (x, u) in b[..c].iter_mut().zip(&s[c * m..c * m + c]) {
            *x -= u * bc;
        }
    }
}

/// Cholesky `A = L Lᵀ` of the leading `n x n` block of the symmetric `a` (lower triangle read
/// and overwritten). Returns `false` when a pivot is not above `tol` (not positive definite
/// to that tolerance).
pub(crate) fn cholesky_in_place(a: &mut DMatrix<f64>, n: usize, tol: f64) -> bool {
    let m = a.nrows();
    let s = a.as_mut_slice();
    // right-looking, column by column (contiguous in column-major storage)
    for j in 0..n {
        let d = s[j * m + j];
        if !(d > tol) {
            return false;
        }
        let d = d.sqrt();
        s[j * m + j] = d;
        let inv = 1.0 / d;
        for x in &mut s[j * m + j + 1..j * m + n] {
            *x *= inv;
        }
        let (left, right) = s.split_at_mut((j + 1) * m);
        let lj = &left[j * m..j * m + n];
        for (c, col) in right.chunks_exact_mut(m).take(n - j - 1).enumerate() {
            let c = j + 1 + c;
            let f = lj[c];
            for (x, l) in col[c..n].iter_mut().zip(&lj[c..n]) {
                *x -= f * l;
            }
        }
    }
    true
}

/// Solves `L Lᵀ x = b` with the factor of [`cholesky_in_place`]; `b` holds b on entry.
pub(crate) fn cholesky_solve(a: &DMatrix<f64>, n: usize, b: &mut [f64]) {
    let m = a.nrows();
    let s = a.as_slice();
    for c in 0..n {
        b[c] /= s[c * m + c];
        let bc = b[c];
        for (x, l) in b[c + 1..n].iter_mut().zip(&s[c * m + c + 1..c * m + n]) {
            *x -= l * bc;
        }
    }
    for i in (0..n).rev() {
        let mut t = b[i];
        for (x, l) in b[i + 1..n].iter().zip(&s[i * m + i + 1..i * m + n]) {
            t -= l * x;
        }
        b[i] = t / s[i * m + i];
    }
}

/// Householder QR with column pivoting of the leading `m x n` block of `a`: `A P = Q R`.
/// On return the upper triangle holds R (columns in pivoted order), the part below the
/// diagonal the Householder vectors (unit first entry implied), `beta` their scales and
/// `perm[j]` the original index of column j. Stops when the largest remaining column norm is
/// at most `rel_tol` times the first pivot's: returns the numerical rank.
pub(crate) fn qr_pivoted(
    a: &mut DMatrix<f64>,
    m: usize,
    n: usize,
    beta: &mut [f64],
    perm: &mut [usize],
    rel_tol: f64,
) -> usize {
    for (j, p) in perm.iter_mut().enumerate().take(n) {
        *p = j;
    }
    let mut first = 0.0;
    for j in 0..n.min(m) {
        // pivot: the remaining column of largest norm (recomputed: n is small)
        let mut best = -1.0;
        let mut bj = j;
        for c in j..n {
            let mut s = 0.0;
            for r in j..m {
                s += a[(r, c)] * a[(r, c)];
            }
            if s > best {
                best = s;
                bj = c;
            }
        }
        let norm = best.sqrt();
        if j == 0 {
            first = norm;
        }
        if norm <= rel_tol * first || norm == 0.0 {
            return j;
        }
        if bj != j {
            a.swap_columns(j, bj);
            perm.swap(j, bj);
        }
        // Householder vector v = x - alpha e1 with alpha = -sign(x0) |x|, scaled to v0 = 1
        let x0 = a[(j, j)];
        let alpha = if x0 >= 0.0 { -norm } else { norm };
        let v0 = x0 - alpha;
        for r in j + 1..m {
            a[(r, j)] /= v0;
        }
        let mut vtv = 1.0;
        for r in j + 1..m {
            vtv += a[(r, j)] * a[(r, j)];
        }
        beta[j] = 2.0 / vtv;
        a[(j, j)] = alpha;
        for c in j + 1..n {
            let mut s = a[(j, c)];
            for r in j + 1..m {
                s += a[(r, j)] * a[(r, c)];
            }
            s *= beta[j];
            a[(j, c)] -= s;
            for r in j + 1..m {
                let vr = a[(r, j)];
                a[(r, c)] -= s * vr;
            }
        }
    }
    n.min(m)
}

/// The explicit orthogonal factor `Q = H_0 ⋯ H_{k-1}` (`m x m`) of [`qr_pivoted`] into `q`.
pub(crate) fn form_q(a: &DMatrix<f64>, m: usize, k: usize, beta: &[f64], q: &mut DMatrix<f64>) {
    let (sa, ma) = (a.as_slice(), a.nrows());
    let mq = q.nrows();
    let qs = q.as_mut_slice();
    for (c, col) in qs.chunks_exact_mut(mq).take(m).enumerate() {
        col[..m].fill(0.0);
        col[c] = 1.0;
    }
    for j in (0..k).rev() {
        // Q <- H_j Q on rows j..m; columns before j are still untouched unit vectors there
        let v = &sa[j * ma + j + 1..j * ma + m];
        for col in qs.chunks_exact_mut(mq).take(m).skip(j) {
            let (head, tail) = col[j..m].split_at_mut(1);
            let mut s = head[0];
            for (x, vr) in tail.iter().zip(v) {
                s += vr * x;
            }
            s *= beta[j];
            if s != 0.0 {
                head[0] -= s;
                for (x, vr) in tail.iter_mut().zip(v) {
                    *x -= s * vr;
                }
            }
        }
    }
}

/// The inverse of the symmetric positive definite leading `n x n` block of `d` (`n ≤ 6`, lower
/// triangle read, overwritten by its Cholesky factor), through `D = L Lᵀ` and `D⁻¹ = L⁻ᵀ L⁻¹`
/// in fixed-size loops (the joint blocks of the articulated-body algorithm, where they beat the
/// general routines). NaN if the block is not positive definite.
#[inline]
pub fn spd_inverse_small(d: &mut [[f64; 6]; 6], n: usize) -> Mat6 {
    let nv = n;
    let mut out = Mat6::zeros();
    if nv == 1 {
        out[(0, 0)] = 1.0 / d[0][0];
        return out;
    }
    // D = L Lᵀ, L lower, in place
    for j in 0..nv {
        let mut djj = d[j][j];
        for k in 0..j {
            djj -= d[j][k] * d[j][k];
        }
        let ljj = if djj > 0.0 { djj.sqrt() } else { f64::NAN };
        d[j][j] = ljj;
        for r in j + 1..nv {
            let mut x = d[r][j];
            for k in 0..j {
                x -= d[r][k] * d[j][k];
            }
            d[r][j] = x / ljj;
        }
    }
    // W = L⁻¹ (lower), then D⁻¹ = Wᵀ W
    let mut w = [[0.0; 6]; 6];
    for c in 0..nv {
        w[c][c] = 1.0 / d[c][c];
        for r in c + 1..nv {
            let mut x = 0.0;
            for k in c..r {
                x -= d[r][k] * w[k][c];
            }
            w[r][c] = x / d[r][r];
        }
    }
    for r in 0..nv {
        for c in 0..=r {
            let mut x = 0.0;
            for k in r..nv {
                x += w[k][r] * w[k][c];
            }
            out[(r, c)] = x;
            out[(c, r)] = x;
        }
    }
    out
}

/// Solves `A x = r` for a symmetric positive semi-definite `A` (`k x k`, row-major in `a`,
/// overwritten by its LDLᵀ factors) in place (`x` holds `r` on entry): pivots at or below
/// `tiny` mark dependent rows, whose unknowns are set to zero (the redundant rows of a
/// contact problem get no impulse). `skip` (`k`) is scratch.
pub fn ldlt_semidefinite_solve(a: &mut [f64], x: &mut [f64], skip: &mut [bool], k: usize, tiny: f64) {
    for j in 0..k {
        skip[j] = false;
        let mut d = a[j * k + j];
        for p in 0..j {
            if !skip[p] {
                d -= a[j * k + p] * a[j * k + p] * a[p * k + p];
            }
        }
        if !(d > tiny) {
            skip[j] = true;
            a[j * k + j] = 0.0;
            for i in j + 1..k {
                a[i * k + j] = 0.0;
            }
            continue;
        }
        a[j * k + j] = d;
        for i in j + 1..k {
            let mut s = a[i * k + j];
            for p in 0..j {
                if !skip[p] {
                    s -= a[i * k + p] * a[j * k + p] * a[p * k + p];
                }
            }
            a[i * k + j] = s / d;
        }
    }
    // L y = r, y ← D⁻¹ y, Lᵀ x = y
    for i in 0..k {
        if skip[i] {
            x[i] = 0.0;
            continue;
        }
        for p in 0..i {
            x[i] -= a[i * k + p] * x[p];
        }
    }
    for i in 0..k {
        if !skip[i] {
            x[i] /= a[i * k + i];
        }
    }
    for i in (0..k).rev() {
        if skip[i] {
            x[i] = 0.0;
            continue;
        }
        for p in i + 1..k {
            x[i] -= a[p * k + i] * x[p];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_matrix(m: usize, n: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = crate::algorithms::SplitMix64::new(seed);
        DMatrix::from_fn(m, n, |_, _| rng.range(-1.0, 1.0))
    }

    #[test]
    fn lu_and_cholesky_solve() {
        let a = test_matrix(7, 7, 1);
        let b = test_matrix(7, 1, 2);
        let mut f = a.clone();
        let mut piv = vec![0; 7];
        assert!(lu_in_place(&mut f, 7, &mut piv, 1e-14));
        let mut x = b.clone();
        lu_solve(&f, 7, &piv, x.as_mut_slice());
        assert!((&a * &x - &b).amax() < 1e-12);
        let s = &a * a.transpose() + DMatrix::identity(7, 7);
        let mut f = s.clone();
        assert!(cholesky_in_place(&mut f, 7, 0.0));
        let mut x = b.clone();
        cholesky_solve(&f, 7, x.as_mut_slice());
        assert!((&s * &x - &b).amax() < 1e-12);
    }

    #[test]
    fn pivoted_qr_reconstructs_and_finds_rank() {
        let mut a = test_matrix(8, 4, 3);
        let c0 = a.column(0).clone_owned();
        a.set_column(3, &(c0 * 2.0)); // rank 3
        let orig = a.clone();
        let (mut beta, mut perm) = (vec![0.0; 4], vec![0; 4]);
        let rank = qr_pivoted(&mut a, 8, 4, &mut beta, &mut perm, 1e-10);
        assert_eq!(rank, 3);
        let mut q = DMatrix::zeros(8, 8);
        form_q(&a, 8, rank, &beta, &mut q);
        assert!((q.transpose() * &q - DMatrix::identity(8, 8)).amax() < 1e-12);
        let mut r = DMatrix::zeros(8, 4);
        for c in 0..4 {
            for rr in 0..=c.min(rank - 1) {
                r[(rr, c)] = a[(rr, c)];
            }
        }
        let qr = &q * r;
        for c in 0..4 {
            assert!((qr.column(c) - orig.column(perm[c])).amax() < 1e-12);
        }
    }

    #[test]
    fn ldlt_semidefinite_gives_dependent_rows_no_share() {
        // rows 0 and 1 identical: the first takes the whole impulse, the second none
        let mut a = vec![2.0, 2.0, 0.0, 2.0, 2.0, 0.0, 0.0, 0.0, 1.0];
        let mut x = vec![4.0, 4.0, 3.0];
        ldlt_semidefinite_solve(&mut a, &mut x, &mut [false; 3], 3, 1e-12);
        assert!((x[0] - 2.0).abs() < 1e-12 && x[1] == 0.0 && (x[2] - 3.0).abs() < 1e-12, "{x:?}");
    }
}
