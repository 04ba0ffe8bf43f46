//! The solve: a feasible warm start, the islands, then each island by the strategy that fits
//! it (an exact active-set solve, Gauss–Seidel with subspace steps, or Gauss–Seidel
//! accelerated by conjugate gradients).

use super::cone::project;
use super::exact::{gather_island, Later};
use super::problem::{Problem, NONE};
use super::rows::{RowKind, Settings, SolveStats};
use super::solution::Solution;
use super::workspace::{Solve, Workspace, EXACT_MAX_ROWS};

/// Sweeps of Gauss–Seidel between two checks of an island that has not converged.
const SWEEPS_PER_SUBSPACE_STEP: usize = 6;

/// An island stalls when its residual fell by less than this factor since the last check
/// (the first check compares with the first sweep): then it gets a subspace step.
const STALL: f64 = 0.25;

/// Active-set solves with friction (`active.rs`) a small island gets in one solve: after
/// its first sweep, then every [`SWEEPS_PER_SUBSPACE_STEP`] sweeps while it has not
/// converged, each kept only when the sweep after it moves less than the one before (a
/// refused one is undone and the sweeps go on to the next try).
const SET_TRIES: usize = 10;

impl Problem {
    /// Solves the problem (prepared by [`Problem::prepare`]) island by island from its warm
    /// start; on exit `sol.lambda` holds the impulses and `sol.vel` the velocity
    /// `v_free + qH⁻¹ Jᵀ λ`. Each island: an exact active-set solve when it is small and
    /// frictionless (and `settings.exact`), else block Gauss–Seidel from the warm start
    /// (each contact's normal and friction as one 3 x 3 block projected on the friction cone),
    /// with a subspace step every few sweeps for a small island that has not converged (the
    /// remedy for mass ratios, where Gauss–Seidel's rate tends to 1), and a large island's
    /// sweeps accelerated by nonsmooth conjugate gradients (`accel.rs`), and a large
    /// articulated island they leave above the tolerance, under `solver: newton`, solved by Newton's method
    /// (`newton.rs`) and swept again. The statistics are
    /// the most sweeps and the largest final residual over the islands. Reads the problem;
    /// writes `work` and `sol`.
    pub fn solve(&self, v_free: &[f64], settings: &Settings, work: &mut Workspace, sol: &mut Solution) -> SolveStats {
        self.solve_from(&self.b, Some(&self.warm), v_free, settings, (work, sol))
    }

    /// [`Problem::solve`] of a problem of its own on these rows: the same blocks, `J`, kinds
    /// and what prepare formed, other targets `b` `(rows)`, from no impulse (the split-impulse
    /// pass's pseudo-velocity problem).
    pub fn solve_targets(
        &self,
        b: &[f64],
        v_free: &[f64],
        settings: &Settings,
        work: &mut Workspace,
        sol: &mut Solution,
    ) -> SolveStats {
        self.solve_from(b, None, v_free, settings, (work, sol))
    }

    /// The solve for targets `b` from the impulses `warm` (None: zero).
    fn solve_from(
        &self,
        b: &[f64],
        warm: Option<&[f64]>,
        v_free: &[f64],
        settings: &Settings,
        (work, sol): (&mut Workspace, &mut Solution),
    ) -> SolveStats {
        debug_assert_eq!(self.diag.len(), self.rows(), "a solve before prepare");
        sol.vel.copy_from_slice(v_free);
        sol.lambda.clear();
        match warm {
            Some(warm) => sol.lambda.extend_from_slice(warm),
            None => sol.lambda.resize(self.rows(), 0.0),
        }
        let scale = self.diag.iter().cloned().fold(0.0, f64::max);
        let tiny = 1e-12 * scale.max(1e-300);
        work.dense.try_first = self.try_first && warm.is_some();
        let mut solve = Solve { p: self, b, work, sol, scale, tiny, warm };
        solve.feasible_start();
        solve.work.islands.number(self);
        let mut stats = SolveStats::default();
        for isl in 0..solve.work.islands.count {
            solve.island(isl, v_free, settings, &mut stats);
        }
        solve.sol.try_first = solve.work.dense.try_first;
        stats
    }
}

impl Solve<'_> {
    /// Makes the warm start feasible (each block's impulses projected, rows that cannot act
    /// get nothing) and applies it to `vel`.
    fn feasible_start(&mut self) {
        let p = self.p;
        let mut later = Later::new();
        for bi in 0..p.blocks.len() {
            let bl = p.blocks[bi];
            if bl.trees[0] == NONE {
                self.sol.lambda[bl.row..bl.row + bl.n].fill(0.0);
                continue;
            }
            project(&p.kind, &mut self.sol.lambda, bl.row, bl.n);
            for r in 0..bl.n {
                if p.diag[bl.row + r] <= self.tiny {
                    self.sol.lambda[bl.row + r] = 0.0;
                }
            }
            let mut l = [0.0; 3];
            l[..bl.n].copy_from_slice(&self.sol.lambda[bl.row..bl.row + bl.n]);
            self.apply_later(&mut later, bi, &l[..bl.n]);
        }
        self.apply_kept(&mut later);
    }

    /// Solves island `isl` by the strategy that fits it (see [`Problem::solve`]) and adds its
    /// sweeps and residual to `stats`.
    fn island(&mut self, isl: usize, v_free: &[f64], settings: &Settings, stats: &mut SolveStats) {
        let p = self.p;
        let islands = &self.work.islands;
        let (s, e) = (islands.start[isl], islands.start[isl + 1]);
        let blocks = &islands.order[s..e];
        let nrows: usize = blocks.iter().map(|&b| p.blocks[b as usize].n).sum();
        let frictionless = blocks.iter().all(|&b| {
            let k = p.kind[p.blocks[b as usize].row];
            !matches!(k, RowKind::Normal { friction: 2, .. } | RowKind::Bounded { .. })
        });
        // a tree other than a free body (a robot, a chain) with no loop closure or equality (a
        // bilateral row), or with one and a contact with friction: the active set's islands
        // (its sets refuse a loop whose rows cannot all be met, `active.rs`). A loop without
        // contacts (Choreonoid's ClosedLinkSample, a piston loop under servos) stays with the
        // sweeps.
        let contact = blocks.iter().any(|&b| matches!(p.kind[p.blocks[b as usize].row], RowKind::Normal { friction: 2, .. }));
        let articulated = blocks.iter().any(|&b| {
            p.blocks[b as usize].trees.iter().any(|&t| t != NONE && p.trees.len[t as usize] != 6)
        }) && (contact
            || blocks.iter().all(|&b| {
                let bl = &p.blocks[b as usize];
                p.kind[bl.row..bl.row + bl.n].iter().all(|k| !matches!(k, RowKind::Bilateral))
            }));
        if settings.exact && frictionless && nrows <= settings.direct_max_rows.min(EXACT_MAX_ROWS) {
            if let Some(it) = self.direct(s, e, v_free, false) {
                stats.iterations = stats.iterations.max(it);
                stats.direct = true;
                return;
            }
        }
        let small = settings.exact && nrows <= EXACT_MAX_ROWS;
        let (mut it, mut residual) = if small {
            self.solve_small(s, e, v_free, settings, articulated)
        } else {
            self.solve_cg(s, e, settings)
        };
        // a large robot island the sweeps left, under `solver: newton`: the Newton solve
        // (`newton.rs`) from where they got to, checked and finished by the sweeps
        if residual > settings.tolerance && settings.newton && !small && articulated {
            if let Some(steps) = self.newton(s, e, v_free, settings.tolerance) {
                let (more, last) = self.solve_cg(s, e, settings);
                (it, residual) = (it + steps + more, last);
            }
        }
        stats.iterations = stats.iterations.max(it);
        stats.residual = stats.residual.max(residual);
    }

    /// Gauss–Seidel over a small island (at most [`EXACT_MAX_ROWS`] rows), alternating
    /// forward and backward sweeps; an `articulated` island (one with a tree other than a
    /// free body) that the first sweep does not finish gets up to [`SET_TRIES`] active-set
    /// solves with friction ([`Solve::contact_set`]), then a subspace step
    /// ([`Solve::subspace_step`]) every [`SWEEPS_PER_SUBSPACE_STEP`] sweeps where the sweeps
    /// stall; each kept only when the sweep after it moves less than the one before. Returns
    /// the sweeps and the last residual.
    fn solve_small(&mut self, s: usize, e: usize, v_free: &[f64], settings: &Settings, articulated: bool) -> (usize, f64) {
        let mut residual = 0.0;
        // residual at the last check (INFINITY: no more subspace steps in this solve)
        let mut checked = 0.0;
        let mut it = 0;
        let mut tries = 0;
        let set_tries = if articulated { SET_TRIES } else { 0 };
        // whether a try started from the warm start's set (the first one that did)
        let mut warm_tried = false;
        let warm = set_tries > 0 && self.warm.is_some();
        if warm && std::mem::take(&mut self.work.dense.try_first) && settings.max_iterations > 3 {
            // a warm-started island whose last solve kept a try: its first try before any
            // sweep (its set is the last step's, which a standing robot keeps, 0111), and
            // the sweep after it is often the step's only one
            let kept;
            (tries, it, residual, kept) = self.warm_first(s, e, v_free, settings.tolerance);
            self.work.dense.try_first = kept;
            warm_tried = it > 0;
            if it > 0 && residual <= settings.tolerance {
                return (it, residual);
            }
            checked = if it > 0 { residual } else { 0.0 };
        }
        while it < settings.max_iterations {
            let mut refused = false;
            residual = self.sweep(s, e, it % 2 == 1);
            it += 1;
            if residual <= settings.tolerance {
                break;
            }
            if it == 1 {
                checked = residual;
            }
            if tries < set_tries && (it == 1 || it % SWEEPS_PER_SUBSPACE_STEP == 0) && it < settings.max_iterations {
                tries += 1;
                self.save_island(s, e);
                let cs = self.contact_set(s, e, v_free, settings.tolerance, (tries > 1, !warm_tried));
                warm_tried |= cs.is_some();
                if cs.is_some() && self.keep_if_better(s, e, &mut it, &mut residual) {
                    self.work.dense.try_first |= warm;
                    if residual <= settings.tolerance {
                        break;
                    }
                    continue;
                }
                // a refused try's sweep moved `it` off the period: the subspace step (below)
                // still gets its turn where the sweeps stall
                refused = it > 1;
                // refused or not settled: the sweeps go on, and the next try starts from
                // where they got to (a set that did not settle from the first sweep's impulses
                // often does from later ones: the ragdoll's landings)
            }
            if (it % SWEEPS_PER_SUBSPACE_STEP == 0 || refused) && it < settings.max_iterations {
                // only where the sweeps stall (a rate worse than STALL per period)
                let stalled = residual > STALL * checked;
                if checked != f64::INFINITY {
                    checked = residual;
                }
                if !stalled {
                    continue;
                }
                // kept only when the sweep after it moves less than the one before
                self.save_island(s, e);
                self.subspace_step(s, e, v_free);
                if !self.keep_if_better(s, e, &mut it, &mut residual) {
                    // it did not help this island: no second try in this step
                    checked = f64::INFINITY;
                } else if residual <= settings.tolerance {
                    break;
                }
            }
        }
        (it, residual)
    }

    /// The first try of a warm-started island, before any sweep, and the forward sweep after
    /// it; when that sweep is above `tol`, the try is kept only when it moves less than a
    /// sweep from the warm start (as the tries after a sweep are), else a try from the warm
    /// start's set again from that sweep's impulses (the proximal terms centred there), kept
    /// by [`Solve::keep_if_better`]. The tries, the sweeps (0: the try wrote nothing), the
    /// last residual, and whether the next solve should try first (a try was kept).
    fn warm_first(&mut self, s: usize, e: usize, v_free: &[f64], tol: f64) -> (usize, usize, f64, bool) {
        self.save_island(s, e);
        if self.contact_set(s, e, v_free, tol, (false, true)).is_none() {
            return (1, 0, 0.0, false);
        }
        let after = self.sweep(s, e, false);
        if after <= tol {
            // the next solve tries first again unless the impulses moved from the warm start
            // by less than the tolerance (as row velocities, `Δλ W_ii`): then a sweep alone
            // would likely have done (a robot at rest, Solo's steps)
            let (p, saved) = (self.p, &self.work.dense.saved);
            let mut moved: f64 = 0.0;
            let mut x = 0;
            for &b in &self.work.islands.order[s..e] {
                let bl = p.blocks[b as usize];
                for r in bl.row..bl.row + bl.n {
                    moved = moved.max((self.sol.lambda[r] - saved[x]).abs() * p.diag[r]);
                    x += 1;
                }
            }
            return (1, 1, after, moved > tol);
        }
        let (mut residual, kept) = self.keep_try_or_sweep(s, e, after);
        let mut it = 2;
        if kept || residual <= tol {
            return (1, it, residual, kept);
        }
        self.save_island(s, e);
        let again = self.contact_set(s, e, v_free, tol, (true, true)).is_some() && self.keep_if_better(s, e, &mut it, &mut residual);
        (2, it, residual, again)
    }

    /// After [`Solve::warm_first`]'s try and its sweep (`after`, above the tolerance; the warm start
    /// in `dense.saved`): a forward sweep from the warm start, the try's impulses put back when
    /// that sweep moves more than `after`. The residual of the impulses kept, and whether
    /// they are the try's.
    fn keep_try_or_sweep(&mut self, s: usize, e: usize, after: f64) -> (f64, bool) {
        // the try's impulses into `best` (free between tries)
        gather_island(self.p, &self.work.islands.order[s..e], &self.sol.lambda, &mut self.work.dense.best);
        self.restore_island(s, e);
        let warm = self.sweep(s, e, false);
        if warm <= after {
            return (warm, false);
        }
        let d = &mut self.work.dense;
        std::mem::swap(&mut d.saved, &mut d.best);
        self.restore_island(s, e);
        (after, true)
    }

    /// The sweep after a try (an active set, a subspace step; the impulses before it kept by
    /// [`Solve::save_island`]), sweep `it` of the island: the try is kept when that sweep
    /// moves less than `residual`, the last one before it (then `residual` is the new one),
    /// else the impulses before it are put back. Counts the sweep in `it`; whether it kept.
    fn keep_if_better(&mut self, s: usize, e: usize, it: &mut usize, residual: &mut f64) -> bool {
        let after = self.sweep(s, e, *it % 2 == 1);
        *it += 1;
        if after < *residual {
            *residual = after;
            return true;
        }
        self.restore_island(s, e);
        false
    }
}
