//! The velocity-level constraint problem and its solvers.
//!
//! Every constraint is a row `J_i` of the world's joint-space Jacobian (contact normal,
//! friction tangents, loop closure, joint limit). With `v_free` the velocity after the smooth
//! forces and `λ` the impulses, `v⁺ = v_free + M⁻¹ Jᵀ λ` and each row's velocity is
//! `u_i = J_i v⁺`. Rows ask:
//!
//! | kind | condition |
//! | --- | --- |
//! | bilateral | `u_i = b_i`, λ free |
//! | unilateral (normal, limit) | `u_i ≥ b_i`, `λ_i ≥ 0`, complementary |
//! | friction pair (t1, t2) after its normal | `u_t = b_t` (0, or a track surface's velocity) unless `|λ_t| = μ λ_n` (circular cone) |
//! | bounded (velocity servo) | `u_i = b_i` unless λ is at a bound of `[lo, hi]` |
//!
//! [`solve_pgs`] is projected Gauss–Seidel on the Delassus operator `W = J M⁻¹ Jᵀ`, applied
//! through the columns `M⁻¹ J_iᵀ` (computed once per step with the sparse LTDL solves) without
//! forming `W`; it starts from the warm-start impulses and stops at a velocity tolerance.
//! [`solve_direct`] forms `W` and solves the problem without friction exactly by an active set
//! on a dense LDLᵀ (redundant rows, such as the out-of-plane rows of a planar loop, get zero
//! impulse).

use karakuri::linalg::dense::ldlt_semidefinite_solve;

/// What a row asks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RowKind {
    /// `u = b`.
    Bilateral,
    /// `u ≥ b`, `λ ≥ 0`.
    Unilateral,
    /// A contact normal, followed by `friction` (0 or 2) tangent rows bounded by `mu λ_n`.
    Normal {
        /// Number of tangent rows after it.
        friction: usize,
        /// Friction coefficient of this step.
        mu: f64,
    },
    /// A tangent row (handled with its normal).
    Tangent,
    /// `u = b` while `lo < λ < hi`, else λ at its bound (a velocity servo: `±` its effort
    /// limit times dt).
    Bounded {
        /// Lower impulse bound.
        lo: f64,
        /// Upper impulse bound.
        hi: f64,
    },
}

/// Rows of one step, dense over the `nv` velocity variables.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    /// Number of velocity variables.
    pub nv: usize,
    /// `J`, row-major `(m x nv)`.
    pub j: Vec<f64>,
    /// `M⁻¹ Jᵀ`, one row per constraint `(m x nv)`.
    pub minv_jt: Vec<f64>,
    /// Row targets `b` `(m)`.
    pub b: Vec<f64>,
    /// Row kinds `(m)`.
    pub kind: Vec<RowKind>,
    /// Diagonal of `W` `(m)`.
    pub diag: Vec<f64>,
    /// Impulses (warm start on entry, solution on exit) `(m)`.
    pub lambda: Vec<f64>,
    /// The (at most two) contiguous dof ranges outside which the row's `J` and `M⁻¹ Jᵀ` are
    /// zero: the kinematic trees it touches (M is block-diagonal per tree) `(m)`.
    pub ranges: Vec<[(usize, usize); 2]>,
}

impl Rows {
    /// Removes every row.
    pub fn clear(&mut self, nv: usize) {
        self.nv = nv;
        self.j.clear();
        self.minv_jt.clear();
        self.b.clear();
        self.kind.clear();
        self.diag.clear();
        self.lambda.clear();
        self.ranges.clear();
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.b.len()
    }
    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
    /// Appends a row with a zero Jacobian to fill; returns its index.
    pub fn push(&mut self, kind: RowKind, b: f64, warm: f64) -> usize {
        let nv = self.nv;
        self.push_ranged(kind, b, warm, [(0, nv), (0, 0)])
    }
    /// [`Rows::push`] for a row touching only the dofs in `ranges` (sorted, disjoint).
    pub fn push_ranged(
        &mut self,
        kind: RowKind,
        b: f64,
        warm: f64,
        ranges: [(usize, usize); 2],
    ) -> usize {
        self.ranges.push(ranges);
        self.j.extend(std::iter::repeat_n(0.0, self.nv));
        self.b.push(b);
        self.kind.push(kind);
        self.lambda.push(warm);
        self.b.len() - 1
    }
    /// Row `i` of `J`.
    pub fn j_row(&self, i: usize) -> &[f64] {
        &self.j[i * self.nv..(i + 1) * self.nv]
    }
    /// Row `i` of `J`, mutable.
    pub fn j_row_mut(&mut self, i: usize) -> &mut [f64] {
        let nv = self.nv;
        &mut self.j[i * nv..(i + 1) * nv]
    }
    /// Makes room for `m` rows without allocating (no-op when there is room).
    pub fn reserve(&mut self, m: usize) {
        let nv = self.nv;
        ensure(&mut self.j, m * nv);
        ensure(&mut self.minv_jt, m * nv);
        ensure(&mut self.b, m);
        ensure(&mut self.kind, m);
        ensure(&mut self.diag, m);
        ensure(&mut self.lambda, m);
        ensure(&mut self.ranges, m);
    }
    /// Makes `self` a copy of `other`, reusing its buffers (no allocation once large enough).
    pub fn assign(&mut self, other: &Rows) {
        self.nv = other.nv;
        self.j.clone_from(&other.j);
        self.minv_jt.clone_from(&other.minv_jt);
        self.b.clone_from(&other.b);
        self.kind.clone_from(&other.kind);
        self.diag.clone_from(&other.diag);
        self.lambda.clone_from(&other.lambda);
        self.ranges.clone_from(&other.ranges);
    }
    /// Fills `minv_jt` and `diag` with `solve(x)` computing `M⁻¹ x` in place.
    pub fn prepare(&mut self, mut solve: impl FnMut(&mut [f64])) {
        let (m, nv) = (self.len(), self.nv);
        self.minv_jt.clear();
        self.minv_jt.extend_from_slice(&self.j);
        self.diag.clear();
        for i in 0..m {
            let row = &mut self.minv_jt[i * nv..(i + 1) * nv];
            solve(row);
            self.diag.push(dot(&self.j[i * nv..(i + 1) * nv], row));
        }
    }
}

#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[inline]
fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    if a != 0.0 {
        for (yi, xi) in y.iter_mut().zip(x) {
            *yi += a * xi;
        }
    }
}

/// Result of a solve.
#[derive(Clone, Copy, Debug, Default)]
pub struct SolveStats {
    /// Sweeps (PGS) or active-set iterations (direct).
    pub iterations: usize,
    /// Largest row velocity change in the last sweep (PGS), 0 for an exact solve.
    pub residual: f64,
    /// Whether the direct solver was used.
    pub direct: bool,
}

/// The solvers' scratch buffers, reused from step to step (they grow to the largest problem
/// seen and are never shrunk).
#[derive(Clone, Debug, Default)]
pub struct SolverWork {
    /// PGS: the first row of each block (a normal with its tangents, or a single row) `(≤ m)`.
    blocks: Vec<usize>,
    /// Direct: `W = J M⁻¹ Jᵀ` `(m x m)`, row-major.
    w: Vec<f64>,
    /// Direct: `c = J v_free` `(m)`.
    c: Vec<f64>,
    /// Direct: the active set `(m)`.
    active: Vec<bool>,
    /// Direct: the impulses of the current active set `(m)`.
    lambda: Vec<f64>,
    /// Direct: indices of the active rows `(≤ m)`.
    idx: Vec<usize>,
    /// Direct: `W_AA` and its LDLᵀ factors `(k x k)`.
    a: Vec<f64>,
    /// Direct: right-hand side, then solution `(k)`.
    r: Vec<f64>,
    /// Direct: dependent rows of the LDLᵀ `(k)`.
    skip: Vec<bool>,
}

impl SolverWork {
    /// Makes room for problems of `m` rows, of which at most `direct_max_rows` go to the
    /// direct solver.
    pub fn reserve(&mut self, m: usize, direct_max_rows: usize) {
        ensure(&mut self.blocks, m);
        let d = m.min(direct_max_rows);
        ensure(&mut self.w, d * d);
        ensure(&mut self.c, d);
        ensure(&mut self.active, d);
        ensure(&mut self.lambda, d);
        ensure(&mut self.idx, d);
        ensure(&mut self.a, d * d);
        ensure(&mut self.r, d);
        ensure(&mut self.skip, d);
    }
}

/// Grows `v`'s capacity to at least `cap`.
pub fn ensure<T>(v: &mut Vec<T>, cap: usize) {
    if v.capacity() < cap {
        v.reserve(cap - v.len());
    }
}

/// Projected Gauss–Seidel: writes `dv = M⁻¹ Jᵀ λ` (length nv) and the impulses in `rows.lambda`.
pub fn solve_pgs(
    rows: &mut Rows,
    v_free: &[f64],
    dv: &mut [f64],
    max_iterations: usize,
    tolerance: f64,
    work: &mut SolverWork,
) -> SolveStats {
    let (m, nv) = (rows.len(), rows.nv);
    dv.iter_mut().for_each(|x| *x = 0.0);
    let scale = rows.diag.iter().cloned().fold(0.0, f64::max);
    let tiny = 1e-12 * scale.max(1e-300);
    // clean the warm start: it must be feasible
    let mut i = 0;
    while i < m {
        match rows.kind[i] {
            RowKind::Normal { friction, mu } => {
                rows.lambda[i] = rows.lambda[i].max(0.0);
                if friction == 2 {
                    let lim = mu * rows.lambda[i];
                    let (a, b) = (rows.lambda[i + 1], rows.lambda[i + 2]);
                    let nrm = (a * a + b * b).sqrt();
                    if nrm > lim {
                        let s = if nrm > 0.0 { lim / nrm } else { 0.0 };
                        rows.lambda[i + 1] = a * s;
                        rows.lambda[i + 2] = b * s;
                    }
                }
                i += 1 + friction;
            }
            RowKind::Unilateral => {
                rows.lambda[i] = rows.lambda[i].max(0.0);
                i += 1;
            }
            RowKind::Bounded { lo, hi } => {
                rows.lambda[i] = rows.lambda[i].clamp(lo, hi);
                i += 1;
            }
            _ => i += 1,
        }
    }
    for i in 0..m {
        if rows.diag[i] <= tiny {
            rows.lambda[i] = 0.0;
        }
        let l = rows.lambda[i];
        axpy(dv, l, &rows.minv_jt[i * nv..(i + 1) * nv]);
    }
    let u = |rows: &Rows, dv: &[f64], i: usize| -> f64 {
        let j = &rows.j[i * nv..(i + 1) * nv];
        let mut s = 0.0;
        for &(a, b) in &rows.ranges[i] {
            for k in a..b {
                s += j[k] * (v_free[k] + dv[k]);
            }
        }
        s
    };
    let axpy_r = |dv: &mut [f64], a: f64, rows: &Rows, i: usize| {
        if a != 0.0 {
            let x = &rows.minv_jt[i * nv..(i + 1) * nv];
            for &(lo, hi) in &rows.ranges[i] {
                for k in lo..hi {
                    dv[k] += a * x[k];
                }
            }
        }
    };
    // blocks: a normal with its tangents, or a single row
    let blocks = &mut work.blocks;
    blocks.clear();
    let mut i = 0;
    while i < m {
        blocks.push(i);
        i += match rows.kind[i] {
            RowKind::Normal { friction, .. } => 1 + friction,
            _ => 1,
        };
    }
    let mut stats = SolveStats::default();
    for it in 0..max_iterations {
        let mut change: f64 = 0.0;
        // symmetric Gauss–Seidel: alternate the sweep direction (a stack passes its weight
        // down in one backward sweep and up in one forward sweep)
        for bi in 0..blocks.len() {
            let i = if it % 2 == 0 {
                blocks[bi]
            } else {
                blocks[blocks.len() - 1 - bi]
            };
            let kind = rows.kind[i];
            let d = rows.diag[i];
            if d <= tiny {
                continue;
            }
            match kind {
                RowKind::Bilateral
                | RowKind::Unilateral
                | RowKind::Normal { .. }
                | RowKind::Bounded { .. } => {
                    let ui = u(rows, dv, i);
                    let old = rows.lambda[i];
                    let mut new = old + (rows.b[i] - ui) / d;
                    match kind {
                        RowKind::Bilateral => {}
                        RowKind::Bounded { lo, hi } => new = new.clamp(lo, hi),
                        _ => new = new.max(0.0),
                    }
                    rows.lambda[i] = new;
                    axpy_r(dv, new - old, rows, i);
                    change = change.max(((new - old) * d).abs());
                    if let RowKind::Normal { friction: 2, mu } = kind {
                        let lim = mu * new;
                        let (i1, i2) = (i + 1, i + 2);
                        let (d1, d2) = (rows.diag[i1].max(tiny), rows.diag[i2].max(tiny));
                        let (o1, o2) = (rows.lambda[i1], rows.lambda[i2]);
                        let mut n1 = o1 + (rows.b[i1] - u(rows, dv, i1)) / d1;
                        let mut n2 = o2 + (rows.b[i2] - u(rows, dv, i2)) / d2;
                        let nrm = (n1 * n1 + n2 * n2).sqrt();
                        if nrm > lim {
                            let s = if nrm > 0.0 { lim / nrm } else { 0.0 };
                            n1 *= s;
                            n2 *= s;
                        }
                        rows.lambda[i1] = n1;
                        rows.lambda[i2] = n2;
                        axpy_r(dv, n1 - o1, rows, i1);
                        axpy_r(dv, n2 - o2, rows, i2);
                        change = change
                            .max(((n1 - o1) * d1).abs())
                            .max(((n2 - o2) * d2).abs());
                    }
                }
                RowKind::Tangent => {}
            }
        }
        stats.iterations = it + 1;
        stats.residual = change;

        if change <= tolerance {
            break;
        }
    }
    stats
}

/// Whether [`solve_direct`] takes these rows (no friction, no bounded rows).
pub fn direct_applies(rows: &Rows, max_rows: usize) -> bool {
    rows.len() <= max_rows
        && rows.kind.iter().all(|k| {
            !matches!(
                k,
                RowKind::Tangent | RowKind::Normal { friction: 2, .. } | RowKind::Bounded { .. }
            )
        })
}

/// Exact solution without friction: an active set over the unilateral rows, each candidate
/// set solved by a dense LDLᵀ of `W_AA` that gives zero impulse to dependent rows. Returns
/// `None` if the active set does not settle (the caller falls back to PGS).
pub fn solve_direct(
    rows: &mut Rows,
    v_free: &[f64],
    dv: &mut [f64],
    work: &mut SolverWork,
) -> Option<SolveStats> {
    let (m, nv) = (rows.len(), rows.nv);
    let SolverWork {
        w,
        c,
        active,
        lambda,
        idx,
        a,
        r,
        skip,
        ..
    } = work;
    // W and c = J v_free
    w.clear();
    w.resize(m * m, 0.0);
    for a in 0..m {
        for b in 0..=a {
            let x = dot(
                &rows.j[a * nv..(a + 1) * nv],
                &rows.minv_jt[b * nv..(b + 1) * nv],
            );
            w[a * m + b] = x;
            w[b * m + a] = x;
        }
    }
    c.clear();
    c.extend((0..m).map(|i| dot(&rows.j[i * nv..(i + 1) * nv], v_free)));
    let scale = rows.diag.iter().cloned().fold(0.0, f64::max).max(1e-300);
    let bilateral = |k: RowKind| k == RowKind::Bilateral;
    active.clear();
    active.extend(
        (0..m).map(|i| bilateral(rows.kind[i]) || rows.lambda[i] > 0.0 || c[i] < rows.b[i]),
    );
    lambda.clear();
    lambda.resize(m, 0.0);
    for it in 0..(3 * m + 10) {
        idx.clear();
        idx.extend((0..m).filter(|&i| active[i]));
        let k = idx.len();
        a.clear();
        a.resize(k * k, 0.0);
        r.clear();
        r.resize(k, 0.0);
        for (p, &i) in idx.iter().enumerate() {
            r[p] = rows.b[i] - c[i];
            for (q, &j) in idx.iter().enumerate() {
                a[p * k + q] = w[i * m + j];
            }
        }
        skip.clear();
        skip.resize(k, false);
        ldlt_semidefinite_solve(a, r, skip, k, 1e-10 * scale);
        lambda.iter_mut().for_each(|l| *l = 0.0);
        for (p, &i) in idx.iter().enumerate() {
            lambda[i] = r[p];
        }
        // drop the most negative unilateral impulse
        let worst = idx
            .iter()
            .filter(|&&i| !bilateral(rows.kind[i]) && lambda[i] < -1e-12 * scale)
            .min_by(|&&p, &&q| lambda[p].total_cmp(&lambda[q]).then(p.cmp(&q)));
        if let Some(&i) = worst {
            active[i] = false;
            continue;
        }
        // add the most violated inactive row
        let viol = (0..m)
            .filter(|&i| !active[i])
            .map(|i| {
                (
                    i,
                    c[i] + (0..m).map(|j| w[i * m + j] * lambda[j]).sum::<f64>() - rows.b[i],
                )
            })
            .filter(|(_, g)| *g < -1e-12 * (1.0 + scale))
            .min_by(|p, q| p.1.total_cmp(&q.1).then(p.0.cmp(&q.0)));
        if let Some((i, _)) = viol {
            active[i] = true;
            continue;
        }
        rows.lambda.copy_from_slice(lambda);
        dv.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..m {
            axpy(dv, lambda[i], &rows.minv_jt[i * nv..(i + 1) * nv]);
        }
        return Some(SolveStats {
            iterations: it + 1,
            residual: 0.0,
            direct: true,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgs_and_direct_agree_on_a_frictionless_problem() {
        // one dof of unit mass, two contacts pushing it up to 1 m/s and a bilateral
        let mut rows = Rows::default();
        rows.clear(2);
        let i = rows.push(
            RowKind::Normal {
                friction: 0,
                mu: 0.0,
            },
            1.0,
            0.0,
        );
        rows.j_row_mut(i).copy_from_slice(&[1.0, 0.0]);
        let i = rows.push(
            RowKind::Normal {
                friction: 0,
                mu: 0.0,
            },
            -5.0,
            0.0,
        );
        rows.j_row_mut(i).copy_from_slice(&[1.0, 1.0]);
        let i = rows.push(RowKind::Bilateral, 0.5, 0.0);
        rows.j_row_mut(i).copy_from_slice(&[0.0, 1.0]);
        rows.prepare(|x| x.iter_mut().for_each(|v| *v *= 0.5));
        let vf = [-1.0, 0.0];
        let mut dv = [0.0; 2];
        let mut r2 = rows.clone();
        let mut work = SolverWork::default();
        solve_pgs(&mut rows, &vf, &mut dv, 200, 1e-14, &mut work);
        let mut dv2 = [0.0; 2];
        solve_direct(&mut r2, &vf, &mut dv2, &mut work).unwrap();
        for k in 0..2 {
            assert!((dv[k] - dv2[k]).abs() < 1e-9, "{dv:?} {dv2:?}");
        }
        assert!((vf[0] + dv[0] - 1.0).abs() < 1e-9 && (vf[1] + dv[1] - 0.5).abs() < 1e-9);
    }
}
