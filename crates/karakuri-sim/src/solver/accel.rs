//! Acceleration of a large island's sweeps: nonsmooth nonlinear conjugate gradients over
//! pairs of sweeps, and *parking* (the sweeps between two full ones skip the blocks that are
//! idle, see [`Solve::solve_cg`]). Its state is the workspace's [`Cg`](super::workspace::Cg).

use super::problem::NONE;
use super::rows::Settings;
use super::sweep::{SWEEP_LIVE, SWEEP_SORT};
use super::workspace::Solve;

/// Sweeps per conjugate-gradient step of a large island ([`Solve::solve_cg`]): a forward
/// and a backward sweep, the symmetric pair being the map it accelerates (after every sweep:
/// half the gain on the pile).
const CG_PERIOD: usize = 2;

/// Sweeps between two stall checks of a large island ([`Solve::solve_cg`]); a multiple of
/// [`CG_PERIOD`]. At 10 the pile needed half the sweeps but a stack of 20 boxes drifted 11 mm.
const STALL_WINDOW: usize = 20;

/// A block of a large island is parked (skipped until the next full sweep, see [`Solve::solve_cg`])
/// when its normal slack exceeds this many times the residual of the sweep before (see
/// [`idle`](super::cone::idle)). On the pile at 10 no parked block took an impulse at the next full
/// sweep (at 1: 19–42 in a run; at 0: 1827).
const PARK_MARGIN: f64 = 10.0;

impl Solve<'_> {
    /// Block Gauss–Seidel over a large island (more than
    /// [`EXACT_MAX_ROWS`](super::EXACT_MAX_ROWS) rows, or any under `solver: pgs`) accelerated
    /// by nonsmooth nonlinear conjugate gradients (Silcowitz, Niebe & Erleben 2010), the map
    /// accelerated being a pair of sweeps (forward, then backward): after a pair that moved the
    /// island's impulses by `r_k`, with `ρ = |r_k|² / |r_{k-1}|²`, `β = ρ` when `ρ ≤ 1` and
    /// `max(0, 2 − ρ)` above (the paper restarts with `β = 0` there; that jump made the solve's
    /// result jump with its input, see docs/decisions/0031), `λ += β p_{k-1}` and
    /// `p_k = r_k + β p_{k-1}`. The velocity follows through `q = qH⁻¹ Jᵀ p`, kept over the
    /// island's dofs from the sweeps' own velocity changes (no Jacobian product). The solve ends
    /// on a sweep's iterate (feasible), at the tolerance, the cap, or when it stalls: every
    /// [`STALL_WINDOW`] sweeps the residual is compared with the window's start and the island
    /// stops when it did not fall or when at that rate the tolerance is out of reach within the
    /// cap.
    ///
    /// *Parking.* Full sweeps (the first pair, every stall check, the last sweep at the cap, and
    /// the sweep after a partial one that reached the tolerance) visit every block and list the
    /// live ones; the sweeps between visit only those. A block is parked when it is idle (see
    /// [`idle`](super::cone::idle): zero impulses before and after its update, its normal slack
    /// above [`PARK_MARGIN`] times the residual of the sweep before), an update that would change
    /// nothing while its slack stays positive; a newly parked block's rows are dropped from the CG
    /// direction ([`Solve::cg_drop_parked`]) so that the CG step leaves them at zero too. The
    /// tolerance stop, the stall checks and the returned residual thus cover every row. Reads
    /// `order[s..e]`, the blocks, `lambda` and `vel`; writes `lambda`, `vel` and `cg`. Returns the
    /// sweeps and the last sweep's residual.
    pub(super) fn solve_cg(&mut self, s: usize, e: usize, settings: &Settings) -> (usize, f64) {
        self.ensure_layout();
        let tiny = self.tiny;
        self.cg_start(s, e);
        let mut rr_prev = 0.0;
        let mut window_start = 0.0;
        let mut residual = f64::INFINITY;
        // a partial sweep reached the tolerance: the next one is full
        let mut confirm = false;
        let mut it = 0;
        while it < settings.max_iterations {
            let k = it + 1;
            let reverse = it % 2 == 1;
            let full = k <= CG_PERIOD
                || confirm
                || k % STALL_WINDOW == 0
                || k == settings.max_iterations;
            residual = if full {
                // (the first sweep, after INFINITY, parks nothing)
                let margin = PARK_MARGIN * residual.max(settings.tolerance);
                self.sweep_blocks::<SWEEP_SORT>(s, e, reverse, (tiny, margin))
            } else {
                self.sweep_blocks::<SWEEP_LIVE>(s, e, reverse, (tiny, 0.0))
            };
            it = k;
            // (a partial sweep with nothing parked was a full one)
            let all = full || self.work.cg.live.len() == e - s;
            confirm = !all && residual <= settings.tolerance;
            if (all && residual <= settings.tolerance) || it == settings.max_iterations {
                break;
            }
            if it % STALL_WINDOW == 0 {
                if it > STALL_WINDOW && stalled(it, residual, window_start, settings) {
                    break;
                }
                window_start = residual;
            }
            if it % CG_PERIOD != 0 {
                continue;
            }
            let rr = self.cg_rr();
            let beta = if it == CG_PERIOD { 0.0 } else { beta(rr / rr_prev) };
            if beta != 0.0 {
                self.cg_drop_parked();
            }
            self.cg_step(beta);
            self.cg_drop_parked();
            self.work.cg.dropped.clear();
            rr_prev = rr;
        }
        (it, residual)
    }

    /// The scratch of a large island's solve: its rows and dofs as runs, the impulses and
    /// velocity at the start of the first period, nothing dropped or parked.
    fn cg_start(&mut self, s: usize, e: usize) {
        self.cg_runs(s, e);
        self.cg_keep();
        self.work.cg.dropped.clear();
        self.work.cg.parked.resize(self.p.blocks.len(), false);
        for &b in &self.work.islands.order[s..e] {
            self.work.cg.parked[b as usize] = false;
        }
    }

    /// Drops the newly parked blocks' rows from the direction: `q −= qH⁻¹ Jᵀ p` over them,
    /// then their `p = 0` (so that `q = qH⁻¹ Jᵀ p` still holds and a CG step leaves their zero
    /// impulses as they are, which it must: the partial sweeps skip them). Called before a CG
    /// step (for its `λ += β p`) and after it (for its new `p = r`, `r = −λ0` on these rows);
    /// a block parked longer has `p = 0` and `λ0 = 0` already (its impulses stayed zero),
    /// and keeps them. Reads `cg.dropped`, the blocks and `mj`; writes `cg.p`, `cg.q`.
    fn cg_drop_parked(&mut self) {
        let cg = &mut self.work.cg;
        for &bi in &cg.dropped {
            let bl = &self.p.blocks[bi as usize];
            let p = &mut cg.p[bl.row..bl.row + bl.n];
            if p.iter().all(|&x| x == 0.0) {
                continue;
            }
            for (r, pr) in p.iter_mut().enumerate() {
                let mj = &self.p.mj[bl.off + r * bl.width..bl.off + (r + 1) * bl.width];
                let s0 = self.p.trees.start[bl.trees[0] as usize];
                for (q, x) in cg.q[s0..s0 + bl.n0].iter_mut().zip(&mj[..bl.n0]) {
                    *q -= *pr * x;
                }
                if bl.trees[1] != NONE {
                    let s1 = self.p.trees.start[bl.trees[1] as usize];
                    for (q, x) in cg.q[s1..].iter_mut().zip(&mj[bl.n0..]) {
                        *q -= *pr * x;
                    }
                }
                *pr = 0.0;
            }
        }
    }

    /// The island's rows and dofs as runs (`cg.rows`, `cg.dofs`), its scratch sized.
    fn cg_runs(&mut self, s: usize, e: usize) {
        let cg = &mut self.work.cg;
        let rows = self.sol.lambda.len();
        cg.lambda0.resize(rows, 0.0);
        cg.p.resize(rows, 0.0);
        cg.rows.clear();
        for &b in &self.work.islands.order[s..e] {
            let bl = &self.p.blocks[b as usize];
            match cg.rows.last_mut() {
                Some(run) if run.1 == bl.row => run.1 += bl.n,
                _ => cg.rows.push((bl.row, bl.row + bl.n)),
            }
            for t in bl.trees {
                if t != NONE {
                    cg.seen[t as usize] = true;
                }
            }
        }
        cg.dofs.clear();
        for (t, seen) in cg.seen.iter_mut().enumerate() {
            if std::mem::take(seen) {
                let (a, l) = (self.p.trees.start[t], self.p.trees.len[t]);
                match cg.dofs.last_mut() {
                    Some(run) if run.1 == a => run.1 += l,
                    _ => cg.dofs.push((a, a + l)),
                }
            }
        }
    }

    /// `cg.lambda0 = λ`, `cg.vel0 = v` over the island.
    fn cg_keep(&mut self) {
        let cg = &mut self.work.cg;
        for &(a, b) in &cg.rows {
            cg.lambda0[a..b].copy_from_slice(&self.sol.lambda[a..b]);
        }
        for &(a, b) in &cg.dofs {
            cg.vel0[a..b].copy_from_slice(&self.sol.vel[a..b]);
        }
    }

    /// `|r|²` of the impulse change `r = λ − cg.lambda0` of the period.
    fn cg_rr(&self) -> f64 {
        let mut rr = 0.0;
        for &(a, b) in &self.work.cg.rows {
            for (l, l0) in self.sol.lambda[a..b].iter().zip(&self.work.cg.lambda0[a..b]) {
                rr += (l - l0) * (l - l0);
            }
        }
        rr
    }

    /// With `r = λ − λ0`, `Δv = v − v0` of the period: `λ += β p`, `v += β q`, `p = r + β p`,
    /// `q = Δv + β q`; then `λ0 = λ`, `v0 = v` for the next period.
    fn cg_step(&mut self, beta: f64) {
        let cg = &mut self.work.cg;
        let step = |x: &mut [f64], x0: &mut [f64], p: &mut [f64]| {
            for ((x, x0), p) in x.iter_mut().zip(x0.iter_mut()).zip(p.iter_mut()) {
                let r = *x - *x0;
                if beta != 0.0 {
                    *x += beta * *p;
                    *p = r + beta * *p;
                } else {
                    *p = r;
                }
                *x0 = *x;
            }
        };
        for &(a, b) in &cg.rows {
            step(&mut self.sol.lambda[a..b], &mut cg.lambda0[a..b], &mut cg.p[a..b]);
        }
        for &(a, b) in &cg.dofs {
            step(&mut self.sol.vel[a..b], &mut cg.vel0[a..b], &mut cg.q[a..b]);
        }
    }
}

/// Whether a large island's solve stops at the stall check of sweep `it`: its residual did not
/// fall over the window (from `window_start`), or at this rate the tolerance is out of reach
/// within the sweep cap.
fn stalled(it: usize, residual: f64, window_start: f64, settings: &Settings) -> bool {
    let rate = residual / window_start;
    // sweeps to the tolerance at this rate
    let log_gap = STALL_WINDOW as f64 * (settings.tolerance / residual).ln();
    let needed = log_gap / rate.ln();
    rate >= 1.0 || it as f64 + needed > settings.max_iterations as f64
}

/// The conjugate-gradient `β` of the ratio `ρ = |r_k|² / |r_{k-1}|²`: `ρ` up to 1, then
/// `max(0, 2 − ρ)` (see [`Solve::solve_cg`]).
fn beta(ratio: f64) -> f64 {
    if ratio <= 1.0 {
        ratio
    } else {
        (2.0 - ratio).max(0.0)
    }
}
