//! Branch-induced sparse factorisation H = Lᵀ D L (RBDA §6.5, Table 6.3; spatial_v2's
//! `LTDL.m`) of the mass matrix, or of any symmetric matrix whose pattern is a tree given by a
//! parent array (`parent[k] < k`): L is unit lower triangular and nonzero only at (k, i) with
//! i an ancestor of k, so the factorisation and the solves touch nothing else: O(n d²) and
//! O(n d) for tree depth d, against O(n³) and O(n²) dense.
//!
//! [`Factorization`] is the one implementation, used by
//! [`mass_matrix_inverse`](crate::algorithms::mass_matrix_inverse), the mass matrix's
//! factorisation in `Data` ([`factorize_mass_matrix`](crate::algorithms::factorize_mass_matrix)),
//! the simulator's iteration matrix ([`Factorization::factorize_shifted`]), the constraint
//! solvers (range-space method) and hybrid dynamics (the block of the forward dofs, whose
//! pattern is the tree contracted to them, through [`Factorization::set_parents`]). It stores
//! L compactly on the *chains*: the
//! chain of k is its ancestors in increasing order followed by k itself, and row k of the
//! factors is one contiguous run on it (`L[k, chain_k[p]]`, then `D_k` last). The chain of the
//! p-th ancestor of k is the first p + 1 entries of k's chain, so every elimination step is a
//! contiguous `axpy` of a prefix of row k into the row of the ancestor, with no parent chase.
//!
//! With M = Lᵀ D L, M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ, so for a constraint Jacobian G (m x nv) the Delassus
//! operator is G M⁻¹ Gᵀ = (G L⁻¹ D^-½)(G L⁻¹ D^-½)ᵀ = Yᵀ Y with Y = D^-½ L⁻ᵀ Gᵀ
//! ([`Factorization::half_solve_columns`] on the columns of Gᵀ).

use crate::model::Model;
use nalgebra::DMatrix;

const NONE: usize = usize::MAX;

/// The branch-induced LᵀDL factors of a symmetric matrix with a tree pattern, stored on the
/// chains (see the module documentation). Build once (allocates); [`Self::factorize`], the
/// solves, the products and [`Self::set_parents`] within the first pattern's size do not
/// allocate.
#[derive(Clone, Debug, Default)]
pub struct Factorization {
    /// Row k is `f[start[k]..start[k + 1]]` at the dofs `chain[start[k]..start[k + 1]]`.
    pub(crate) start: Vec<usize>,
    /// Ancestors of each k in increasing order, then k.
    pub(crate) chain: Vec<usize>,
    /// L[k, chain_k[p]] for the ancestors, D_k last.
    pub(crate) f: Vec<f64>,
    /// The chains as runs of consecutive dofs `(offset in f, first dof, length)`, those of
    /// row k at `runs[run_start[k]..run_start[k + 1]]` (k itself ends the last one): the
    /// factorisation copies its input in slice by slice.
    runs: Vec<(usize, usize, usize)>,
    /// Where each row's runs start (n + 1 entries).
    run_start: Vec<usize>,
}

impl Factorization {
    /// The pattern of `model`'s mass matrix (`Model::dof_parent`).
    pub fn new(model: &Model) -> Self {
        Self::with_parents(&model.dof_parent)
    }

    /// The pattern of the tree `parent` (`parent[k] < k`, [`usize::MAX`] at a root).
    pub fn with_parents(parent: &[usize]) -> Self {
        let mut f = Factorization::default();
        f.set_parents(parent);
        f
    }

    /// Switches to the pattern of the tree `parent`; allocation-free when its chains are no
    /// longer in total than those of the pattern this was built with (e.g. the tree of a
    /// model contracted to a subset of its dofs).
    pub fn set_parents(&mut self, parent: &[usize]) {
        self.start.clear();
        self.chain.clear();
        self.start.push(0);
        for (k, &p) in parent.iter().enumerate() {
            debug_assert!(p == NONE || p < k, "parents must precede their children");
            if p != NONE {
                self.chain.extend_from_within(self.start[p]..self.start[p + 1]);
            }
            self.chain.push(k);
            self.start.push(self.chain.len());
        }
        self.f.resize(self.chain.len(), 0.0);
        // (no more runs than chain entries: room reserved once for the first pattern)
        self.runs.clear();
        self.runs.reserve(self.chain.len());
        self.run_start.clear();
        self.run_start.push(0);
        for k in 0..parent.len() {
            let row0 = self.runs.len();
            for pos in self.start[k]..self.start[k + 1] {
                let (dof, nruns) = (self.chain[pos], self.runs.len());
                match self.runs.last_mut() {
                    Some((_, first, len)) if nruns > row0 && *first + *len == dof => *len += 1,
                    _ => self.runs.push((pos, dof, 1)),
                }
            }
            self.run_start.push(self.runs.len());
        }
    }

    /// Size n of the pattern.
    #[inline]
    pub fn n(&self) -> usize {
        self.start.len() - 1
    }

    /// Total length of the chains (the storage of the factors).
    pub(crate) fn chain_len(&self) -> usize {
        self.chain.len()
    }

    /// D_k.
    #[inline]
    pub fn d(&self, k: usize) -> f64 {
        self.f[self.start[k + 1] - 1]
    }

    /// Row k of L below the diagonal: the ancestors of k (increasing) and L[k, ·] at them.
    #[inline]
    pub fn row(&self, k: usize) -> (&[usize], &[f64]) {
        let r = self.start[k]..self.start[k + 1] - 1;
        (&self.chain[r.clone()], &self.f[r])
    }

    /// Factorises the symmetric `h`, of which the leading `n x n` block is read at
    /// (i, k) for i on the chain of k only (the upper triangle along the pattern, contiguous
    /// in each column).
    pub fn factorize(&mut self, h: &DMatrix<f64>) {
        self.factorize_twice::<false>(h, |_| 0.0);
    }

    /// Factorises `h + diag(shift(k))` (as [`Self::factorize`], `h` untouched): the
    /// simulator's iteration matrix `M + armature + dt·damping + dt²·stiffness`.
    pub fn factorize_shifted(&mut self, h: &DMatrix<f64>, shift: impl Fn(usize) -> f64) {
        self.factorize_twice::<true>(h, shift);
    }

    /// [`Self::factorize_impl`] compiled twice on x86-64, for AVX2 (chosen at run time) and
    /// portable: the same operations in the same order (no FMA), the same bits (record 0115).
    #[inline]
    fn factorize_twice<const SHIFT: bool>(&mut self, h: &DMatrix<f64>, shift: impl Fn(usize) -> f64) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked on the line above.
            #[allow(unsafe_code)]
            unsafe {
                self.factorize_avx2::<SHIFT>(h, shift)
            };
            return;
        }
        self.factorize_impl::<SHIFT>(h, shift);
    }

    /// [`Self::factorize_impl`] compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn factorize_avx2<const SHIFT: bool>(&mut self, h: &DMatrix<f64>, shift: impl Fn(usize) -> f64) {
        self.factorize_impl::<SHIFT>(h, shift);
    }

    #[inline(always)]
    fn factorize_impl<const SHIFT: bool>(&mut self, h: &DMatrix<f64>, shift: impl Fn(usize) -> f64) {
        let n = self.n();
        if n == 0 {
            return;
        }
        debug_assert!(h.nrows() >= n && h.ncols() >= n);
        let (nr, hs) = (h.nrows(), h.as_slice());
        let (chain, cs, u) = (&self.chain[..], &self.start[..], &mut self.f[..]);
        let (runs, rs) = (&self.runs[..], &self.run_start[..]);
        for k in 0..n {
            let col = &hs[k * nr..k * nr + nr];
            for &(o, a, l) in &runs[rs[k]..rs[k + 1]] {
                u[o..o + l].copy_from_slice(&col[a..a + l]);
            }
            if SHIFT {
                u[cs[k + 1] - 1] += shift(k);
            }
        }
        // RBDA Table 6.3 on compact rows: for k = n..1, eliminate row k into its ancestors i
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
                // the six first ancestors are consecutive from a root (a free flyer): their
                // compact rows are one packed triangle, updated by one unrolled rank-one term
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
    }

    /// Solves H x = b in place (`x` holds b on entry).
    pub fn solve(&self, x: &mut [f64]) {
        self.solve_lt(x);
        for (k, xk) in x[..self.n()].iter_mut().enumerate() {
            *xk /= self.d(k);
        }
        self.solve_l(x);
    }

    /// x ← L⁻ᵀ x.
    pub fn solve_lt(&self, x: &mut [f64]) {
        for k in (0..self.n()).rev() {
            let xk = x[k];
            if xk != 0.0 {
                let (anc, l) = self.row(k);
                for (&a, &lv) in anc.iter().zip(l) {
                    x[a] -= lv * xk;
                }
            }
        }
    }

    /// x ← L⁻ᵀ x for an x that is zero outside `support` (ascending, closed under
    /// ancestors): only the support is touched, and it stays the support of the result.
    pub fn solve_lt_on(&self, x: &mut [f64], support: &[usize]) {
        for &k in support.iter().rev() {
            let xk = x[k];
            if xk != 0.0 {
                let (anc, l) = self.row(k);
                for (&a, &lv) in anc.iter().zip(l) {
                    x[a] -= lv * xk;
                }
            }
        }
    }

    /// x ← L⁻¹ x.
    pub fn solve_l(&self, x: &mut [f64]) {
        for k in 0..self.n() {
            let (anc, l) = self.row(k);
            let mut s = x[k];
            for (&a, &lv) in anc.iter().zip(l) {
                s -= lv * x[a];
            }
            x[k] = s;
        }
    }

    /// x ← L x.
    pub fn mul_l(&self, x: &mut [f64]) {
        // row k of L x reads x at k and its ancestors (all < k): go from the last row up
        for k in (0..self.n()).rev() {
            let (anc, l) = self.row(k);
            let mut s = x[k];
            for (&a, &lv) in anc.iter().zip(l) {
                s += lv * x[a];
            }
            x[k] = s;
        }
    }

    /// x ← Lᵀ x.
    pub fn mul_lt(&self, x: &mut [f64]) {
        // (Lᵀ x)_i = x_i + Σ_{k descendant of i} L[k, i] x_k: scatter each x_k to its
        // ancestors, first rows first, so every x_k read is still the input
        for k in 0..self.n() {
            let xk = x[k];
            let (anc, l) = self.row(k);
            for (&a, &lv) in anc.iter().zip(l) {
                x[a] += lv * xk;
            }
        }
    }

    /// x ← D x.
    pub fn mul_d(&self, x: &mut [f64]) {
        for (k, xk) in x[..self.n()].iter_mut().enumerate() {
            *xk *= self.d(k);
        }
    }

    /// x ← D^½ x (D > 0 for a positive definite H).
    pub fn mul_sqrt_d(&self, x: &mut [f64]) {
        for (k, xk) in x[..self.n()].iter_mut().enumerate() {
            *xk *= self.d(k).sqrt();
        }
    }

    /// x ← D^-½ x.
    pub fn mul_inv_sqrt_d(&self, x: &mut [f64]) {
        for (k, xk) in x[..self.n()].iter_mut().enumerate() {
            *xk /= self.d(k).sqrt();
        }
    }

    /// x ← H x = Lᵀ D L x through the factors (for checks; `Data` holds M densely).
    pub fn mul(&self, x: &mut [f64]) {
        self.mul_l(x);
        self.mul_d(x);
        self.mul_lt(x);
    }

    /// Solves H X = B for every column of `b` in place (`b` is `n x m`, X overwrites B).
    pub fn solve_columns(&self, b: &mut DMatrix<f64>) {
        self.each_column(b, |col| self.solve(col));
    }

    /// B ← D^-½ L⁻ᵀ B for every column of `b` (`n x m`): with B = Gᵀ on entry, the result Y
    /// gives the Delassus operator G H⁻¹ Gᵀ = Yᵀ Y, and H⁻¹ Gᵀ = L⁻¹ D^-½ Y.
    pub fn half_solve_columns(&self, b: &mut DMatrix<f64>) {
        self.each_column(b, |col| {
            self.solve_lt(col);
            self.mul_inv_sqrt_d(col);
        });
    }

    /// `f` on every column of the `n x m` matrix `b`.
    fn each_column(&self, b: &mut DMatrix<f64>, mut f: impl FnMut(&mut [f64])) {
        assert_eq!(b.nrows(), self.n(), "right-hand sides need n rows");
        if self.n() == 0 {
            return;
        }
        b.as_mut_slice().chunks_exact_mut(self.n()).for_each(&mut f);
    }
}

/// Length of the free-flyer-like prefix handled as one packed triangle.
pub(crate) const PACKED: usize = 6;

/// `PACKED` when the chain at `s` (of depth `d`, the dof itself excluded) starts with
/// `PACKED` consecutive dofs (then their compact columns are consecutive too, forming a
/// packed triangle), else 0.
#[inline(always)]
pub(crate) fn packed_prefix(chain: &[usize], s: usize, d: usize) -> usize {
    if d >= PACKED && chain[s + PACKED - 1] == chain[s] + PACKED - 1 {
        PACKED
    } else {
        0
    }
}
