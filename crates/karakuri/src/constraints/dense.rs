//! Small dense factorisations that work in place on preallocated buffers (nalgebra's
//! decompositions allocate their results, which the constrained-dynamics hot path must not).
//! Every routine acts on the leading block of a larger buffer so one allocation serves every
//! size up to the bound one.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)] // index loops read like the algebra; `!(x > tol)` also rejects NaN

use nalgebra::DMatrix;

/// LU with partial pivoting of the leading `n x n` block of `a`, in place (L unit lower, U
/// upper). Returns `false` when a pivot falls below `tol` (the matrix is singular to that
/// tolerance); the factors are then unusable.
pub(crate) fn lu_in_place(a: &mut DMatrix<f64>, n: usize, piv: &mut [usize], tol: f64) -> bool {
    for k in 0..n {
        let mut p = k;
        let mut best = a[(k, k)].abs();
        for r in k + 1..n {
            let x = a[(r, k)].abs();
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
                a.swap((k, c), (p, c));
            }
        }
        let inv = 1.0 / a[(k, k)];
        for r in k + 1..n {
            a[(r, k)] *= inv;
        }
        for c in k + 1..n {
            let akc = a[(k, c)];
            if akc != 0.0 {
                for r in k + 1..n {
                    let l = a[(r, k)];
                    a[(r, c)] -= l * akc;
                }
            }
        }
    }
    true
}

/// Solves with the factors of [`lu_in_place`]; `b` holds the right-hand side on entry.
pub(crate) fn lu_solve(a: &DMatrix<f64>, n: usize, piv: &[usize], b: &mut [f64]) {
    for k in 0..n {
        b.swap(k, piv[k]);
    }
    for c in 0..n {
        let bc = b[c];
        if bc != 0.0 {
            for r in c + 1..n {
                b[r] -= a[(r, c)] * bc;
            }
        }
    }
    for c in (0..n).rev() {
        b[c] /= a[(c, c)];
        let bc = b[c];
        for r in 0..c {
            b[r] -= a[(r, c)] * bc;
        }
    }
}

/// Cholesky `A = L Lᵀ` of the leading `n x n` block of the symmetric `a` (lower triangle read
/// and overwritten). Returns `false` when a pivot is not above `tol` (not positive definite
/// to that tolerance).
pub(crate) fn cholesky_in_place(a: &mut DMatrix<f64>, n: usize, tol: f64) -> bool {
    for j in 0..n {
        let mut d = a[(j, j)];
        for k in 0..j {
            d -= a[(j, k)] * a[(j, k)];
        }
        if !(d > tol) {
            return false;
        }
        let d = d.sqrt();
        a[(j, j)] = d;
        for i in j + 1..n {
            let mut s = a[(i, j)];
            for k in 0..j {
                s -= a[(i, k)] * a[(j, k)];
            }
            a[(i, j)] = s / d;
        }
    }
    true
}

/// Solves `L Lᵀ x = b` with the factor of [`cholesky_in_place`]; `b` holds b on entry.
pub(crate) fn cholesky_solve(a: &DMatrix<f64>, n: usize, b: &mut [f64]) {
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= a[(i, k)] * b[k];
        }
        b[i] = s / a[(i, i)];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= a[(k, i)] * b[k];
        }
        b[i] = s / a[(i, i)];
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
    for c in 0..m {
        for r in 0..m {
            q[(r, c)] = if r == c { 1.0 } else { 0.0 };
        }
    }
    for j in (0..k).rev() {
        // Q <- H_j Q on rows j..m; columns before j are still untouched unit vectors there
        for c in j..m {
            let mut s = q[(j, c)];
            for r in j + 1..m {
                s += a[(r, j)] * q[(r, c)];
            }
            s *= beta[j];
            if s != 0.0 {
                q[(j, c)] -= s;
                for r in j + 1..m {
                    q[(r, c)] -= s * a[(r, j)];
                }
            }
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
}
