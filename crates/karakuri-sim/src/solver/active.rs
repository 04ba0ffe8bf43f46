//! The active-set solve of a small island with friction ([`Solve::contact_set`]): on the
//! island's dense `W` (`exact.rs`), each contact is separated, sticking or sliding, each
//! one-sided row active or not, each bounded row free or at a bound; one set is one linear
//! solve, in which a sticking contact asks `u = b` of its three rows, a sliding one
//! `u_n = b_n` with its friction `μ λ_n d` along a fixed direction `d` (a column of `W` folded
//! into the normal's: the matrix is not symmetric, so an LU with row pivoting; a set without
//! slides is symmetric positive definite and takes a Cholesky factor, 0095), and the next
//! set follows from the solution (a normal pulling lets go, a violated row joins, friction
//! outside its cone slides, a slide that turned sticks, a slide's `d` turns against its slip
//! velocity, or to its friction when it no longer slips; while an active sticking contact's
//! friction is outside the cone of its normal's magnitude, only such frictions change, the
//! normals held). On articulated
//! islands (a ragdoll on the floor, a robot's feet) Gauss–Seidel converges at 0.8–0.95 a
//! sweep; a few sets reach its fixed point.
//! A robot's servo rows, free through a try's sets, are condensed out once per try (a Schur
//! complement, `condense.rs`): each set then solves over the contact rows only.

use super::cone::project_set;
use super::lu::{add_rows_nz, chol_factor, chol_lower, chol_upper, lu_apply, lu_factor};
use super::rows::RowKind;
use super::workspace::{Dense, Solve, State};

/// Sets an island tries before it gives up (Gauss–Seidel goes on from the warm start).
const MAX_SETS: usize = 16;

/// A set whose natural residual is at most this share of the tolerance is accepted (refined
/// and written; the sweep after the try checks it against the tolerance): the second set of
/// a try whose first one met the tolerance but not a tenth of it (a slide's direction turned
/// by a little, a crawl) cost a factorisation for nothing the step needed (0088).
const ACCEPT: f64 = 0.5;

/// A warm-started first set counts a row whose warm impulse is within this share of the
/// tolerance (as a row velocity, `λ W_ii`) of a bound as at it (a normal at zero, a servo at
/// its torque bound, a friction on its cone): the sweep after last step's try nudges such
/// impulses off their bounds by less than the tolerance, and a first set that took them as
/// free needed a second set to put them back (0088).
const SNAP: f64 = 1.0;

/// Sets in a row without [`PROGRESS`] after which the sets count as cycling or crawling
/// (the best one so far is offered).
const STALE_SETS: usize = 4;

/// A set makes progress when its residual is below this share of the best before it: a
/// slide whose direction turns by a little each set lowers it by about 1 % a set (TALOS:
/// 7.9e-7 .. 7.2e-7 over eight sets), which is not settling.
const PROGRESS: f64 = 0.5;

/// A set whose bilateral rows miss their targets by more than this many velocity
/// tolerances after its solve is refused: its loop rows are redundant with targets no motion
/// meets (a closed chain's drift corrections), and the regularised solve answers with
/// impulses of order `residual / eps` (Choreonoid's ClosedLinkSample diverged so).
const INCONSISTENT: f64 = 100.0;

/// Proximal refinements of a settled set's impulses: each solves the set again with
/// `eps λ` of the last solution added to its right-hand side (the factors kept), which takes
/// the regularisation's error (`eps λ`, up to 1e-5 m/s on a humanoid) out.
const REFINEMENTS: usize = 2;

/// The refinements are skipped when what they could move the row velocities by is at most
/// this share of the tolerance: a set's solve leaves the equations off by `eps (λ₀ − λ)` (`λ₀`
/// the impulses it started from), a refinement moves `u` by `W (W + eps)⁻¹ eps (λ − λ₀)`, of
/// norm at most `eps |λ − λ₀|` (`W` positive semidefinite), and each one moves the impulses
/// less than the one before: the two together by at most `2 eps |λ − λ₀|`. A standing
/// robot's try starts from last step's impulses, its bound a few hundredths of the
/// tolerance (TALOS: 1987 of 1993 settled tries skipped).
const REFINE_ABOVE: f64 = 0.1;

/// Diagonal added to the set's matrix, relative to W's largest diagonal entry: of the many
/// impulses of redundant rows (four corners of a face, more contacts than a tree has dofs) it
/// takes the one of least norm.
const REGULARIZATION: f64 = 1e-7;

impl Solve<'_> {
    /// The island's active-set solve with friction (see the module documentation) from its
    /// current impulses (`warm_set`: its first set the warm start's, else the current
    /// impulses'), at velocity tolerance `tol` (`formed`: the island's `W` and `c` are in
    /// `dense` already): the number of sets solved when one set is its own successor or
    /// its impulses meet the tolerance (the natural residual below [`ACCEPT`] of it: its impulses,
    /// refined [`REFINEMENTS`] times unless [`REFINE_ABOVE`] says they need not be, then
    /// written, and `vel` with them), None when
    /// the sets do not settle within [`MAX_SETS`] or a set's matrix is singular (nothing
    /// written).
    pub(super) fn contact_set(&mut self, s: usize, e: usize, v_free: &[f64], tol: f64, (formed, warm_set): (bool, bool)) -> Option<usize> {
        let (p, b) = (self.p, self.b);
        let d = &mut self.work.dense;
        if !formed {
            d.form(p, &self.work.islands.order[s..e], v_free);
        }
        d.lambda.clear();
        d.lambda.extend(d.rows.iter().map(|&i| self.sol.lambda[i]));
        // a warm-started solve's first try: the set of the warm impulses (the last step's)
        d.start.clear();
        match self.warm {
            Some(warm) if warm_set => d.start.extend(d.rows.iter().map(|&i| warm[i])),
            _ => d.start.extend_from_slice(&d.lambda),
        }
        d.set_start(&p.kind, b, self.warm.is_some() && warm_set, SNAP * tol);
        let eps = REGULARIZATION * self.scale.max(1e-300);
        d.schur_start(&p.kind, eps);
        // a row velocity and an impulse that count as zero
        let (vt, lt) = (0.1 * tol, 0.1 * tol / self.scale.max(1e-300));
        let (mut best, mut since) = (f64::INFINITY, 0);
        for it in 0..MAX_SETS {
            // the impulses the set starts from (its proximal centre), for the bound below
            d.start.clear();
            d.start.extend_from_slice(&d.lambda);
            if !d.solve_set(&p.kind, b, eps) {
                return None;
            }
            let m = d.residual(&p.kind);
            let improved = m < best;
            since = if m < PROGRESS * best { 0 } else { since + 1 };
            if improved {
                best = m;
                std::mem::swap(&mut d.best, &mut d.proj);
            }
            if since >= STALE_SETS && m > ACCEPT * tol {
                // cycling, or crawling: the best of the sets so far is what this try offers
                break;
            }
            // the impulses solve the problem to the tolerance (a slide whose direction still
            // turns by less than that), or the set is its own successor
            if m <= ACCEPT * tol || !d.next_set(&p.kind, vt, lt, !improved) {
                if 2.0 * eps * d.moved(&p.kind) > REFINE_ABOVE * tol {
                    for _ in 0..REFINEMENTS {
                        d.refine(&p.kind, b, eps);
                    }
                }
                if !d.consistent(&p.kind, INCONSISTENT * tol) {
                    return None;
                }
                d.project(&p.kind);
                self.set_island(s, e);
                return Some(it + 1);
            }
        }
        // not settled (the sets cycle among degenerate contacts): the feasible impulses of
        // least residual among them are still a start (reported as MAX_SETS sets)
        if !d.consistent(&p.kind, INCONSISTENT * tol) {
            return None;
        }
        std::mem::swap(&mut d.lambda, &mut d.best);
        self.set_island(s, e);
        let d = &mut self.work.dense;
        std::mem::swap(&mut d.lambda, &mut d.best);
        Some(MAX_SETS)
    }
}

impl Dense {
    /// The first set, from the impulses in `start` (island order): a contact with a positive
    /// normal impulse is active (sliding along its impulse when its friction is on the cone),
    /// as is one violated at `v_free` (`c < b`; not with `support`: the warm start's set), a
    /// one-sided row likewise, a bounded row at its bound. Reads `rows`, `c`; writes `state`, `dir`, `slip`.
    fn set_start(&mut self, kind: &[RowKind], b: &[f64], support: bool, snap: f64) {
        let k = self.rows.len();
        self.state.clear();
        self.state.resize(k, State::Zero);
        self.dir.clear();
        self.dir.resize(k, 0.0);
        self.slip.clear();
        self.slip.resize(k, 0.0);
        let lambda = &self.start;
        for p in 0..k {
            let i = self.rows[p];
            // an impulse within `snap` (a row velocity) of a bound counts as at it
            let tiny = if support && snap > 0.0 { snap / self.w[p * k + p].max(1e-300) } else { 0.0 };
            self.state[p] = match kind[i] {
                RowKind::Bilateral => State::Free,
                RowKind::Unilateral | RowKind::Normal { .. } if lambda[p] > tiny || (!support && self.c[p] < b[i]) => State::Free,
                RowKind::Unilateral | RowKind::Normal { .. } => State::Zero,
                RowKind::Bounded { hi, .. } if lambda[p] >= hi - tiny => State::Hi,
                RowKind::Bounded { lo, .. } if lambda[p] <= lo + tiny => State::Lo,
                RowKind::Bounded { .. } => State::Free,
                RowKind::Tangent => self.state[p],
            };
            if let RowKind::Normal { friction: 2, mu } = kind[i] {
                let (ln, t1, t2) = (lambda[p], lambda[p + 1], lambda[p + 2]);
                let nt = (t1 * t1 + t2 * t2).sqrt();
                let tt = if support && snap > 0.0 { snap / self.w[(p + 1) * k + p + 1].max(1e-300) } else { 0.0 };
                let slide = ln > 0.0 && nt > 0.0 && nt >= mu * ln * (1.0 - 1e-9) - tt;
                let st = match self.state[p] {
                    State::Zero => State::Zero,
                    _ if slide => State::Slide,
                    _ => State::Free,
                };
                self.state[p + 1] = st;
                self.state[p + 2] = st;
                if slide {
                    self.dir[p + 1] = t1 / nt;
                    self.dir[p + 2] = t2 / nt;
                }
            }
        }
    }

    /// Solves the set: `u = b` for the free rows, a sliding contact's friction `μ λ_n d`
    /// folded into its normal's column plus an impulse `λ_e` across `d` (along `e`, `d`
    /// turned a quarter) whose row asks `u_e + k λ_e = 0`, `k` the contact's slip compliance
    /// (`slip`: the Newton step on the direction `d = −u_t/|u_t|`, whose derivative across
    /// `d` is `−(I − d dᵀ)/|u_t|`), held rows at their bounds; `eps` added to the diagonal
    /// and `eps λ` of the last impulses to the right-hand side (a proximal step). Writes
    /// `lambda` (every row) and `u` (`c + W λ − b`); false when the matrix is singular.
    fn solve_set(&mut self, kind: &[RowKind], b: &[f64], eps: f64) -> bool {
        let k = self.rows.len();
        let schur = self.schur_on();
        self.idx.clear();
        for p in 0..k {
            if (self.state[p] == State::Free || self.across(kind, p)) && !(schur && self.in_servo[p]) {
                self.idx.push(p);
            }
        }
        let n = self.idx.len();
        // each row's target less the held rows' velocity
        self.g.clear();
        self.g.extend(self.rows.iter().zip(&self.c[..k]).map(|(&i, &c)| b[i] - c));
        for ((&st, &i), wq) in self.state[..k].iter().zip(&self.rows).zip(self.w[..k * k].chunks_exact(k)) {
            let h = held(st, kind[i]);
            if h != 0.0 {
                for (g, w) in self.g.iter_mut().zip(wq) {
                    *g -= w * h;
                }
            }
        }
        if schur {
            self.schur_cover();
            self.reduce(kind, eps);
        }
        // the rows the equations read: each unknown's own, a slide's second tangent row
        self.eqrows.clear();
        for x in 0..n {
            let p = self.idx[x];
            self.eqrows.push(p);
            if self.across(kind, p) {
                self.eqrows.push(p + 1);
            }
        }
        // those rows of W times each unknown's column (W is symmetric: a column is a row),
        // `cols`' row j for `eqrows[j]`; `cols` and `a` keep their length (no entry is read
        // before it is written)
        if self.cols.len() < k * n {
            self.cols.resize(k * n, 0.0);
        }
        for y in 0..n {
            self.column(kind, y, n, schur);
        }
        // (an LU keeps its `L` by columns after the matrix: `2 n²`)
        if self.a.len() < 2 * n * n {
            self.a.resize(2 * n * n, 0.0);
        }
        self.r.clear();
        self.rhs.clear();
        // where unknown x's equation rows start in `eqrows` (and `cols`)
        let mut j = 0;
        for x in 0..n {
            let p = self.idx[x];
            // the equation: row p, or for a slide's `e` unknown the rows t1, t2 along e
            let (eq, we) = self.combination(p);
            let mut rhs = 0.0;
            let row = &mut self.a[x * n..(x + 1) * n];
            let g = if schur { &self.gr } else { &self.g };
            let mut first = true;
            for (t, (&i, &wi)) in eq.iter().zip(&we).enumerate() {
                if wi == 0.0 {
                    continue;
                }
                rhs += wi * g[i];
                let col = &self.cols[(j + t) * n..(j + t + 1) * n];
                if first {
                    row.iter_mut().zip(col).for_each(|(a, c)| *a = wi * c);
                } else {
                    row.iter_mut().zip(col).for_each(|(a, c)| *a += wi * c);
                }
                first = false;
            }
            if first {
                row.fill(0.0);
            }
            self.rhs.push(rhs);
            // proximal: of equal solutions, the one nearest the last impulses
            self.r.push(rhs + eps * self.prox(kind, p));
            self.a[x * n + x] += eps + if self.across(kind, p) { self.slip[p] } else { 0.0 };
            // as `eqrows` was made: one row, two for a slide's `e` unknown
            j += 1 + usize::from(self.across(kind, p));
        }
        for ((l, &st), &i) in self.lambda[..k].iter_mut().zip(&self.state[..k]).zip(&self.rows) {
            *l = held(st, kind[i]);
        }
        // no slide: the matrix is symmetric (positive definite with `eps`), a Cholesky
        // factor at half an LU's cost
        self.chol = !self.idx.iter().any(|&p| self.state[p] == State::Slide);
        let factored = if self.chol {
            chol_factor(&mut self.a[..n * n], n, 1e-3 * eps)
        } else {
            lu_factor(&mut self.a, &mut self.perm, n, 1e-3 * eps)
        };
        if !factored {
            return false;
        }
        self.apply_factors(n);
        self.take_solution(kind, b, true);
        true
    }

    /// The natural residual of the last set's impulses made feasible (kept in `proj`), as a
    /// row velocity: the largest over the rows of the change one projected Jacobi step would
    /// make (`min(λ_n W_nn, u_n)` for a normal or one-sided row, the friction's step
    /// `λ_t − u_t / W_tt` projected on its disk, a bilateral row's `u`, a bounded row's step
    /// clamped).
    fn residual(&mut self, kind: &[RowKind]) -> f64 {
        let k = self.rows.len();
        self.proj.clear();
        self.proj.extend_from_slice(&self.lambda[..k]);
        project_set(&self.rows, kind, &mut self.proj);
        // `u` at the projected impulses: the set's plus W (proj − λ) over the rows moved
        self.uproj.clear();
        self.uproj.extend_from_slice(&self.u[..k]);
        self.crow.clear();
        self.crow.extend(self.proj[..k].iter().zip(&self.lambda[..k]).map(|(p, l)| p - l));
        add_rows_nz(&mut self.uproj[..k], &self.w[..k * k], &self.crow);
        let (w, proj) = (&self.w, &self.proj);
        let u = |q: usize| self.uproj[q];
        let mut m: f64 = 0.0;
        let mut p = 0;
        while p < k {
            let wp = w[p * k + p];
            let l = proj[p];
            match kind[self.rows[p]] {
                RowKind::Normal { friction, mu } => {
                    m = m.max((l * wp).min(u(p)).abs());
                    if friction == 2 {
                        let wt = w[(p + 1) * k + p + 1].max(w[(p + 2) * k + p + 2]);
                        if wt > 0.0 {
                            let (l1, l2) = (proj[p + 1], proj[p + 2]);
                            let (mut x1, mut x2) = (l1 - u(p + 1) / wt, l2 - u(p + 2) / wt);
                            let (nx, lim) = ((x1 * x1 + x2 * x2).sqrt(), mu * l);
                            if nx > lim {
                                x1 *= lim / nx;
                                x2 *= lim / nx;
                            }
                            m = m.max(((l1 - x1).powi(2) + (l2 - x2).powi(2)).sqrt() * wt);
                        }
                    }
                    p += 1 + friction;
                    continue;
                }
                RowKind::Unilateral => m = m.max((l * wp).min(u(p)).abs()),
                RowKind::Bilateral => m = m.max(u(p).abs()),
                RowKind::Bounded { lo, hi } if wp > 0.0 => m = m.max((l - (l - u(p) / wp).clamp(lo, hi)).abs() * wp),
                _ => {}
            }
            p += 1;
        }
        m
    }

    /// How far the last set moved the impulses from those it started from (`start`), as a
    /// Euclidean norm: a bilateral row's from zero (its proximal term has none).
    fn moved(&self, kind: &[RowKind]) -> f64 {
        let mut sum = 0.0;
        for (p, (&l, &l0)) in self.lambda[..self.rows.len()].iter().zip(&self.start).enumerate() {
            let x = if kind[self.rows[p]] == RowKind::Bilateral { l } else { l - l0 };
            sum += x * x;
        }
        sum.sqrt()
    }

    /// Whether the last set met its bilateral rows' targets to within `tol`.
    fn consistent(&self, kind: &[RowKind], tol: f64) -> bool {
        (0..self.rows.len()).all(|p| kind[self.rows[p]] != RowKind::Bilateral || self.u[p].abs() <= tol)
    }

    /// Whether island row `p` is a sliding contact's first tangent row: the slot of its
    /// unknown `λ_e` across the slip.
    #[inline]
    fn across(&self, kind: &[RowKind], p: usize) -> bool {
        self.state[p] == State::Slide && p > 0 && matches!(kind[self.rows[p - 1]], RowKind::Normal { .. })
    }

    /// The rows (and their weights) whose combination is the equation of unknown `p`: the
    /// row itself, or for a slide's `e` unknown its tangent rows along `e = (−d₂, d₁)`.
    #[inline]
    fn combination(&self, p: usize) -> ([usize; 2], [f64; 2]) {
        if self.state[p] == State::Slide {
            ([p, p + 1], [-self.dir[p + 1], self.dir[p]])
        } else {
            ([p, p], [1.0, 0.0])
        }
    }

    /// The proximal term's impulse of unknown `p`: its current value, but none for a
    /// bilateral row (loop closures, equalities: their redundant rows take the least-norm
    /// impulses, which the proximal term would let drift from step to step).
    #[inline]
    pub(super) fn prox(&self, kind: &[RowKind], p: usize) -> f64 {
        if kind[self.rows[p]] == RowKind::Bilateral {
            0.0
        } else {
            self.unknown(p)
        }
    }

    /// The current value of unknown `p` (a slide's `e` unknown: its friction along `e`).
    #[inline]
    fn unknown(&self, p: usize) -> f64 {
        if self.state[p] == State::Slide {
            -self.dir[p + 1] * self.lambda[p] + self.dir[p] * self.lambda[p + 1]
        } else {
            self.lambda[p]
        }
    }

    /// Fills entry `y` of `cols`' rows, one for each row the equations read (`eqrows`; `n` unknowns;
    /// `schur`: of the condensed `W̃`): row `i` of `W` (`W̃`) times the column of
    /// unknown `q = idx[y]` (a sliding normal carries its friction `μ d`, a slide's `e`
    /// unknown is its tangents along `e`).
    #[inline]
    fn column(&mut self, kind: &[RowKind], y: usize, n: usize, schur: bool) {
        let k = self.rows.len();
        let q = self.idx[y];
        let w: &[f64] = if schur { &self.wr } else { &self.w };
        let mut col = Column::Plain;
        if let RowKind::Normal { friction: 2, mu } = kind[self.rows[q]] {
            if self.state[q + 1] == State::Slide {
                col = Column::SlidingNormal(mu, self.dir[q + 1], self.dir[q + 2]);
            }
        } else if self.state[q] == State::Slide {
            col = Column::Across(self.dir[q], self.dir[q + 1]);
        }
        let (cols, rows) = (&mut self.cols[..], &self.eqrows[..]);
        // rows of `W` as slices (the vectors' headers not read again at every entry)
        let wq = move |r: usize| &w[r * k..(r + 1) * k];
        match col {
            Column::Plain => {
                let w0 = wq(q);
                fill(cols, (rows, n, y), |i| w0[i]);
            }
            Column::SlidingNormal(mu, d1, d2) => {
                let (w0, w1, w2) = (wq(q), wq(q + 1), wq(q + 2));
                fill(cols, (rows, n, y), |i| w0[i] + mu * (d1 * w1[i] + d2 * w2[i]));
            }
            Column::Across(d1, d2) => {
                let (w0, w1) = (wq(q), wq(q + 1));
                fill(cols, (rows, n, y), |i| -d2 * w0[i] + d1 * w1[i]);
            }
        }
    }

    /// Solves the set solved last again (its factors kept) with `eps λ` of its solution
    /// added to the right-hand side: the proximal step that removes the regularisation's error.
    fn refine(&mut self, kind: &[RowKind], b: &[f64], eps: f64) {
        let n = self.idx.len();
        if self.schur_on() {
            // the servo rows' proximal terms moved: their part of the right-hand side too
            self.reduce(kind, eps);
            for x in 0..n {
                let (eq, we) = self.combination(self.idx[x]);
                self.rhs[x] = eq.iter().zip(&we).filter(|(_, &wi)| wi != 0.0).map(|(&i, &wi)| wi * self.gr[i]).sum();
            }
        }
        for x in 0..n {
            self.r[x] = self.rhs[x] + eps * self.prox(kind, self.idx[x]);
        }
        self.apply_factors(n);
        self.take_solution(kind, b, false);
    }

    /// Solves the last set's `n x n` system for `r` (overwritten) by its factors in `a`.
    fn apply_factors(&mut self, n: usize) {
        if self.chol {
            chol_lower(&self.a[..n * n], &mut self.r[..n]);
            chol_upper(&self.a[..n * n], &mut self.r[..n]);
        } else {
            lu_apply(&self.a, &self.perm, &mut self.r, n);
        }
    }

    /// The set's impulses from its solution `r` (the sliding friction from its normal and
    /// its `e` unknown) and the row velocities `u = c + W λ − b` (not `full`: only the
    /// bilateral rows', which [`Dense::consistent`] reads; a refinement's).
    fn take_solution(&mut self, kind: &[RowKind], b: &[f64], full: bool) {
        let k = self.rows.len();
        for (&p, &r) in self.idx.iter().zip(&self.r) {
            self.lambda[p] = r;
        }
        // a sliding contact's `e` unknown is its first tangent row's (`across`), its normal
        // the row before
        for x in 0..self.idx.len() {
            let t = self.idx[x];
            if !self.across(kind, t) {
                continue;
            }
            if let RowKind::Normal { friction: 2, mu } = kind[self.rows[t - 1]] {
                let (ln, le) = (self.lambda[t - 1], self.lambda[t]);
                let (d1, d2) = (self.dir[t], self.dir[t + 1]);
                self.lambda[t] = mu * ln * d1 - le * d2;
                self.lambda[t + 1] = mu * ln * d2 + le * d1;
            }
        }
        let schur = self.schur_on();
        if schur {
            self.servo_impulses(kind);
        }
        self.u.clear();
        if !full {
            self.u.resize(k, 0.0);
            for (p, &i) in self.rows.iter().enumerate() {
                if kind[i] == RowKind::Bilateral {
                    let wl: f64 = self.w[p * k..(p + 1) * k].iter().zip(&self.lambda[..k]).map(|(w, l)| w * l).sum();
                    self.u[p] = self.c[p] + wl - b[i];
                }
            }
            return;
        }
        // column by column over the impulses that are not zero (W is symmetric: a column is
        // a row), each an independent multiply-add down `u`
        self.u.extend(self.c[..k].iter().zip(&self.rows).map(|(&c, &i)| c - b[i]));
        add_rows_nz(&mut self.u[..k], &self.w[..k * k], &self.lambda[..k]);
    }

    /// The set after the one solved (see the module documentation), velocities below `vt`
    /// and impulses below `lt` counting as zero (`single`: only the most violated one-sided
    /// row and its friction change, see below; else, while an active sticking contact's
    /// friction is outside the cone of its normal's magnitude, only such contacts' friction
    /// changes, see [`Dense::friction_out`]); whether it differs. Reads `lambda`, `u`;
    /// writes `state`, `dir`.
    fn next_set(&mut self, kind: &[RowKind], vt: f64, lt: f64, single: bool) -> bool {
        let k = self.rows.len();
        let mut changed = false;
        // after a set that did not improve (the sets cycle among degenerate contacts, a
        // block of rows switching on and off together): only the most violated one-sided
        // row changes (single pivots, after Júdice & Pires' block principal pivoting)
        let mut only = usize::MAX;
        // a sticking contact whose friction left its cone slides first, the normals held:
        // the sticking set's friction on redundant contacts can be inconsistent (a landing
        // foot's gaps closing in one step while no point slips), its impulses large and
        // self-cancelling, and the normals they push or pull are no guide
        let friction_first = !single && self.friction_leaves(kind, lt);
        if single {
            let mut worst = 0.0;
            for p in 0..k {
                let (l, u) = (self.lambda[p], self.u[p]);
                let v = match (kind[self.rows[p]], self.state[p]) {
                    (RowKind::Unilateral | RowKind::Normal { .. }, State::Free) if l < -lt => -l * self.w[p * k + p],
                    (RowKind::Unilateral | RowKind::Normal { .. }, State::Zero) if u < -vt => -u,
                    _ => 0.0,
                };
                if v > worst {
                    worst = v;
                    only = p;
                }
            }
        }
        for p in 0..k {
            let (l, u) = (self.lambda[p], self.u[p]);
            let st = self.state[p];
            let next = match kind[self.rows[p]] {
                RowKind::Unilateral | RowKind::Normal { .. } if friction_first || (only != usize::MAX && p != only) => st,
                RowKind::Unilateral | RowKind::Normal { .. } => match st {
                    State::Free if l < -lt => State::Zero,
                    State::Zero if u < -vt => State::Free,
                    _ => st,
                },
                RowKind::Bounded { lo, hi } => match st {
                    State::Free if l > hi => State::Hi,
                    State::Free if l < lo => State::Lo,
                    State::Hi if u > vt => State::Free,
                    State::Lo if u < -vt => State::Free,
                    _ => st,
                },
                RowKind::Bilateral | RowKind::Tangent => st,
            };
            if next != st {
                changed = true;
                self.state[p] = next;
            }
            if let RowKind::Normal { friction: 2, mu } = kind[self.rows[p]] {
                if (only != usize::MAX && p != only) || (friction_first && !self.friction_out(p, mu, lt)) {
                    continue;
                }
                changed |= self.next_friction(p, mu, vt, lt);
            }
        }
        changed
    }

    /// The friction of the contact whose normal is island row `p` in the next set (its
    /// normal's state already the next one); whether it changed.
    fn next_friction(&mut self, p: usize, mu: f64, vt: f64, lt: f64) -> bool {
        let (t1, t2) = (p + 1, p + 2);
        let st = self.state[t1];
        let (l1, l2) = (self.lambda[t1], self.lambda[t2]);
        let (u1, u2) = (self.u[t1], self.u[t2]);
        let ln = self.lambda[p];
        let next = if self.state[p] == State::Zero {
            State::Zero
        } else if st == State::Zero {
            State::Free
        } else if st == State::Free {
            let nt = (l1 * l1 + l2 * l2).sqrt();
            if nt > mu * ln.max(0.0) * (1.0 + 1e-9) + lt {
                self.dir[t1] = l1 / nt;
                self.dir[t2] = l2 / nt;
                self.slip[t1] = (u1 * u1 + u2 * u2).sqrt() / (mu * ln).max(lt);
                State::Slide
            } else {
                State::Free
            }
        } else {
            // sliding: the friction must oppose the slip, and lie on the cone (no `λ_e`)
            let (d1, d2) = (self.dir[t1], self.dir[t2]);
            let nu = (u1 * u1 + u2 * u2).sqrt();
            let le = -d2 * l1 + d1 * l2;
            let w = self.w[t1 * self.rows.len() + t1].max(self.w[t2 * self.rows.len() + t2]);
            if u1 * d1 + u2 * d2 > vt {
                State::Free
            } else if nu > vt {
                let (e1, e2) = (-u1 / nu, -u2 / nu);
                // the Newton step's compliance across the slip at this iterate
                self.slip[t1] = nu / (mu * ln).max(lt);
                // the friction impulse's change if `d` turned, and its part off the cone, as
                // row velocities
                let moved = (mu * ln.abs() * ((e1 - d1).powi(2) + (e2 - d2).powi(2)).sqrt() + le.abs()) * w;
                if moved > 100.0 * vt {
                    self.dir[t1] = e1;
                    self.dir[t2] = e2;
                    return true;
                }
                State::Slide
            } else if le.abs() * w > 100.0 * vt {
                // not slipping, its friction off the cone: `d` turns to the friction's
                // direction (sticking there would put it outside the cone again: the sets
                // would cycle between the two)
                let nt = (l1 * l1 + l2 * l2).sqrt();
                self.dir[t1] = l1 / nt;
                self.dir[t2] = l2 / nt;
                return true;
            } else {
                State::Slide
            }
        };
        let changed = next != st;
        self.state[t1] = next;
        self.state[t2] = next;
        changed
    }
}

impl Dense {
    /// Whether some contact's friction leaves its cone by [`Dense::friction_out`].
    fn friction_leaves(&self, kind: &[RowKind], lt: f64) -> bool {
        (0..self.rows.len()).any(|p| match kind[self.rows[p]] {
            RowKind::Normal { friction: 2, mu } => self.friction_out(p, mu, lt),
            _ => false,
        })
    }

    /// Whether the contact whose normal is island row `p` is active and sticking with its
    /// friction outside the cone of its normal impulse's magnitude (`|λ_t| > μ |λ_n|`): a
    /// pressing contact that must slide, or a pulling one whose pull comes from a friction no
    /// contact can give (it slides rather than lets go).
    fn friction_out(&self, p: usize, mu: f64, lt: f64) -> bool {
        let (ln, l1, l2) = (self.lambda[p], self.lambda[p + 1], self.lambda[p + 2]);
        let out = (l1 * l1 + l2 * l2).sqrt() > mu * ln.abs() * (1.0 + 1e-9) + lt;
        self.state[p] == State::Free && self.state[p + 1] == State::Free && out
    }
}

/// How an unknown's column is made of `W`'s rows ([`Dense::column`]).
#[derive(Clone, Copy)]
enum Column {
    /// The unknown's own row.
    Plain,
    /// A sliding normal: its row plus `μ d` of its tangent rows (`μ`, `d₁`, `d₂`).
    SlidingNormal(f64, f64, f64),
    /// A slide's `e` unknown: its tangent rows along `e = (−d₂, d₁)` (`d₁`, `d₂`).
    Across(f64, f64),
}

/// Writes `entry(rows[j])` into column `y` of `cols`' row `j` (`n` columns) for each `j`.
#[inline(always)]
fn fill(cols: &mut [f64], (rows, n, y): (&[usize], usize, usize), entry: impl Fn(usize) -> f64) {
    assert!(y < n);
    cols.chunks_exact_mut(n).zip(rows).for_each(|(c, &i)| c[y] = entry(i));
}

/// The impulse of a row held in state `st` (a bounded row at a bound), else 0.
pub(super) fn held(st: State, kind: RowKind) -> f64 {
    match (st, kind) {
        (State::Lo, RowKind::Bounded { lo, .. }) => lo,
        (State::Hi, RowKind::Bounded { hi, .. }) => hi,
        _ => 0.0,
    }
}
