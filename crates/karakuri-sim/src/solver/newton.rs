//! The Newton solve of a large articulated island (a robot on many contacts): the primal
//! problem over the island's velocities, as MuJoCo's default solver poses it,
//!
//! `min_v ½ (v − v_free)ᵀ qH (v − v_free) + Σ_blocks s(J v − b)`,
//!
//! each block's term `s` its rows' regularised law (`law.rs`: a contact's friction cone, a
//! unilateral, bilateral or bounded row) with a compliance of [`REG`] times its `W`
//! diagonal and a proximal centre `c`, the impulses of the last pass: the passes (the
//! proximal point method) end at the hard rows' impulses whatever the compliance.
//! The cost is convex and piecewise smooth; each Newton step solves
//! `(I + qH⁻¹ Jᵀ D J) dv = −qH⁻¹ g` (the Hessian `qH + Jᵀ D J` times `qH⁻¹`, formed from the
//! blocks' `J` and `qH⁻¹ Jᵀ`, so no factor of qH is needed: dense over the island's dofs, at
//! most [`NEWTON_MAX_DOFS`]) and an exact line search follows the step (1-D Newton on the
//! cost's slope, bracketed).
//!
//! That problem is the convex relaxation of Coulomb's law (a sliding contact separates at
//! `μ |u_t|`); the solve meets Coulomb's law itself by De Saxcé's fixed point: each contact's
//! normal target is shifted by `μ |u_t|` of the last pass (a sticking contact's is 0), with
//! the centres. A pass ends when the velocity defect is below [`THETA`] times the last
//! pass's move, the solve when defect and move are below [`STOP`] times the tolerance (or
//! after [`MAX_STEPS`] evaluations). Where redundant contacts' impulses drift along `W`'s null
//! space the passes are many (record 0081).
//!
//! The island's sweeps then take over from the solution (`accel.rs`): they check it against
//! `engine.tolerance` as they check their own, and finish what the Newton solve left.

use super::kernels::dot;
use super::problem::{Block, Problem, NONE};
use super::law::{law, Newton, NEWTON_MAX_DOFS};
use super::rows::RowKind;
use super::workspace::Solve;


/// A block's compliance: this times its largest `W` diagonal entry. The proximal term makes
/// the solution exact whatever its size; smaller, each pass gains more and its Newton steps
/// cross more kinks of the law (measured on the Go2: 1e-1 to 1e-6, record 0081).
const REG: f64 = 1e-2;

/// A pass ends when the Newton steps' velocity defect is below this fraction of the last
/// pass's move (inexact proximal point)...
const THETA: f64 = 0.1;

/// ...and the solve when both the defect and the last move are below this fraction of
/// `engine.tolerance`.
const STOP: f64 = 0.1;

/// Successive moves of the centres this aligned (cosine) are over-relaxed, by a factor that
/// doubles from 1 up to [`MAX_OMEGA`] while they stay so (the drift of redundant rows'
/// impulses toward their bounds, a constant step per pass).
const ALIGNED: f64 = 0.9;

/// See [`ALIGNED`].
const MAX_OMEGA: f64 = 64.0;

/// Evaluations (a Newton step or a new pass each) of one solve.
const MAX_STEPS: usize = 200;

/// Slope evaluations of one line search.
const LINE_ITERS: usize = 30;

impl Newton {
    /// Block `bl`'s proximal centre (the impulses of the last pass).
    #[inline]
    fn centre(&self, bl: &Block) -> [f64; 3] {
        let mut c = [0.0; 3];
        c[..bl.n].copy_from_slice(&self.lp[bl.row..bl.row + bl.n]);
        c
    }

    /// The island dofs of block `bl`'s two sides.
    #[inline]
    fn offs(&self, bl: &Block) -> (usize, usize) {
        let o1 = if bl.trees[1] == NONE { 0 } else { self.tree_off[bl.trees[1] as usize] };
        (self.tree_off[bl.trees[0] as usize], o1)
    }
}

/// What the Newton solve reads: the problem, its targets, the island's blocks, the rows that
/// get nothing.
struct Ctx<'a> {
    p: &'a Problem,
    b: &'a [f64],
    order: &'a [u32],
    tiny: f64,
}

impl Ctx<'_> {
    /// Whether block `bi` takes part (it touches a tree and its first row can act).
    #[inline]
    fn live(&self, bi: usize) -> bool {
        let bl = &self.p.blocks[bi];
        bl.trees[0] != NONE && self.p.diag[bl.row] > self.tiny
    }

    /// The island's blocks that take part ([`Ctx::live`]), in its order, with their indices.
    fn live_blocks(&self) -> impl Iterator<Item = (usize, Block)> + '_ {
        self.order.iter().map(|&bi| bi as usize).filter(|&bi| self.live(bi)).map(|bi| (bi, self.p.blocks[bi]))
    }
}

/// `row · x` over the island's dofs (`o` the sides' first island dofs).
#[inline]
fn ldot(bl: &Block, o: (usize, usize), row: &[f64], x: &[f64]) -> f64 {
    let mut s = dot(&row[..bl.n0], &x[o.0..o.0 + bl.n0]);
    if bl.width > bl.n0 {
        s += dot(&row[bl.n0..bl.width], &x[o.1..o.1 + bl.width - bl.n0]);
    }
    s
}

/// `x += a row` over the island's dofs.
#[inline]
fn laxpy(bl: &Block, o: (usize, usize), row: &[f64], a: f64, x: &mut [f64]) {
    for (xi, ri) in x[o.0..o.0 + bl.n0].iter_mut().zip(&row[..bl.n0]) {
        *xi += a * ri;
    }
    if bl.width > bl.n0 {
        for (xi, ri) in x[o.1..o.1 + bl.width - bl.n0].iter_mut().zip(&row[bl.n0..bl.width]) {
            *xi += a * ri;
        }
    }
}

impl Solve<'_> {
    /// The Newton solve of island `order[s..e]` (see the module documentation) from the warm
    /// start in `sol`, with `tol` the tolerance its stop is a fraction of; writes the
    /// island's impulses and velocity. None (nothing written) when the island has more than
    /// [`NEWTON_MAX_DOFS`] dofs or a step fails (a singular or non-finite system); else the
    /// Newton steps taken.
    pub(super) fn newton(&mut self, s: usize, e: usize, v_free: &[f64], tol: f64) -> Option<usize> {
        let ctx = Ctx { p: self.p, b: self.b, order: &self.work.islands.order[s..e], tiny: self.tiny };
        let nw = &mut self.work.newton;
        let nd = nw.island(&ctx)?;
        let out = nw.run(&ctx, nd, (v_free, &self.sol.vel, &self.sol.lambda), tol);
        for &t in &nw.trees {
            nw.tree_off[t as usize] = usize::MAX;
        }
        let steps = out?;
        // the impulses, and the velocity they give (as the sweeps keep it)
        for &t in &nw.trees {
            let (st, l) = (self.p.trees.start[t as usize], self.p.trees.len[t as usize]);
            self.sol.vel[st..st + l].copy_from_slice(&v_free[st..st + l]);
        }
        for k in s..e {
            let bi = self.work.islands.order[k];
            let bl = self.p.blocks[bi as usize];
            for r in 0..bl.n {
                let live = bl.trees[0] != NONE && self.p.diag[bl.row] > self.tiny && self.p.diag[bl.row + r] > self.tiny;
                let l = if live { self.work.newton.lam[bl.row + r] } else { 0.0 };
                self.sol.lambda[bl.row + r] = l;
                if l != 0.0 {
                    self.apply(bi as usize, r, l);
                }
            }
        }
        Some(steps)
    }
}

impl Newton {
    /// Numbers the island's trees' dofs; their count, None above [`NEWTON_MAX_DOFS`] (the
    /// marks are then already cleared).
    fn island(&mut self, ctx: &Ctx) -> Option<usize> {
        self.trees.clear();
        let mut nd = 0;
        for &bi in ctx.order {
            for t in ctx.p.blocks[bi as usize].trees {
                if t != NONE && self.tree_off[t as usize] == usize::MAX {
                    self.tree_off[t as usize] = nd;
                    self.trees.push(t);
                    nd += ctx.p.trees.len[t as usize];
                }
            }
        }
        if nd > self.v.len() || nd == 0 {
            for &t in &self.trees {
                self.tree_off[t as usize] = usize::MAX;
            }
            return None;
        }
        Some(nd)
    }

    /// The solve over `nd` island dofs from the warm start's velocity `vel` and impulses
    /// `lambda` (`vel = v_free + qH⁻¹ Jᵀ λ`) with free velocity `v_free`; leaves the impulses
    /// of the last velocity in `lam`.
    fn run(&mut self, ctx: &Ctx, nd: usize, (v_free, vel, lambda): (&[f64], &[f64], &[f64]), tol: f64) -> Option<usize> {
        self.start(ctx, nd, (v_free, vel, lambda));
        let mut steps = 0;
        let mut moved = f64::INFINITY;
        let mut evals = 0;
        while evals < MAX_STEPS {
            evals += 1;
            self.eval(ctx, nd);
            let df = self.defect(ctx);
            if df <= STOP * tol && moved <= STOP * tol {
                break;
            }
            if df <= STOP * tol || (moved.is_finite() && df <= THETA * moved) {
                // the pass's problem is solved well enough: the next pass
                let (m1, m2) = self.next_pass(ctx);
                moved = m1.max(m2);
                continue;
            }
            steps += 1;
            if !self.step(ctx, nd) {
                return None;
            }
            let alpha = self.line_search(ctx, nd);
            if alpha == 0.0 {
                let (m1, m2) = self.next_pass(ctx);
                moved = m1.max(m2);
                continue;
            }
            for k in 0..nd {
                self.v[k] += alpha * self.dv[k];
                self.y[k] += alpha * self.mdv[k];
            }
        }
        self.eval(ctx, nd);
        let finite = ctx.order.iter().all(|&bi| {
            let bl = &ctx.p.blocks[bi as usize];
            self.lam[bl.row..bl.row + bl.n].iter().all(|l| l.is_finite())
        });
        finite.then_some(steps)
    }

    /// The starting point: the warm start's velocity, `y = Jᵀ λ_warm` (so that
    /// `y = qH (v − v_free)`), each block's compliance, no shifts.
    fn start(&mut self, ctx: &Ctx, nd: usize, (v_free, vel, lambda): (&[f64], &[f64], &[f64])) {
        let p = ctx.p;
        for &t in &self.trees {
            let (st, l, o) = (p.trees.start[t as usize], p.trees.len[t as usize], self.tree_off[t as usize]);
            self.v[o..o + l].copy_from_slice(&vel[st..st + l]);
            self.vf[o..o + l].copy_from_slice(&v_free[st..st + l]);
        }
        self.y[..nd].fill(0.0);
        let rows = p.rows();
        self.omega = 0.0;
        for v in [&mut self.x, &mut self.lam, &mut self.jdv, &mut self.lp, &mut self.dl] {
            v.clear();
            v.resize(rows, 0.0);
        }
        self.d.clear();
        self.d.resize(p.blocks.len(), [0.0; 9]);
        self.r.clear();
        self.r.resize(p.blocks.len(), 0.0);
        self.shift.clear();
        self.shift.resize(p.blocks.len(), 0.0);
        for (bi, bl) in ctx.live_blocks() {
            let o = self.offs(&bl);
            let wmax = p.diag[bl.row..bl.row + bl.n].iter().cloned().fold(0.0, f64::max);
            self.r[bi] = REG * wmax;
            for r in 0..bl.n {
                let l = lambda[bl.row + r];
                self.lp[bl.row + r] = l;
                let row = &p.j[bl.off + r * bl.width..bl.off + (r + 1) * bl.width];
                laxpy(&bl, o, row, l, &mut self.y);
            }
        }
    }
}

impl Newton {
    /// At the velocity `v`: each block's shifted row velocities less targets `x`, impulses
    /// `lam` and `D`, the gradient `g = y − Jᵀ λ*` and `mg = qH⁻¹ g = v − v_free − qH⁻¹ Jᵀ λ*`.
    fn eval(&mut self, ctx: &Ctx, nd: usize) {
        let p = ctx.p;
        self.g[..nd].copy_from_slice(&self.y[..nd]);
        for k in 0..nd {
            self.mg[k] = self.v[k] - self.vf[k];
        }
        for (bi, bl) in ctx.live_blocks() {
            let o = self.offs(&bl);
            let mut x = [0.0; 3];
            for (r, xr) in x.iter_mut().enumerate().take(bl.n) {
                let row = &p.j[bl.off + r * bl.width..bl.off + (r + 1) * bl.width];
                *xr = ldot(&bl, o, row, &self.v) - ctx.b[bl.row + r];
            }
            x[0] += self.shift[bi];
            let lp = self.centre(&bl);
            let (lam, d) = law(p.kind[bl.row], bl.n, x, lp, self.r[bi]);
            self.d[bi] = d;
            for r in 0..bl.n {
                self.x[bl.row + r] = x[r];
                self.lam[bl.row + r] = lam[r];
                if lam[r] != 0.0 {
                    let (j, mj) = block_rows(p, &bl, r);
                    laxpy(&bl, o, j, -lam[r], &mut self.g);
                    laxpy(&bl, o, mj, -lam[r], &mut self.mg);
                }
            }
        }
    }

    /// The largest row velocity of `mg` (how far `v` is from the velocity its impulses give).
    fn defect(&self, ctx: &Ctx) -> f64 {
        let p = ctx.p;
        let mut worst: f64 = 0.0;
        for (_, bl) in ctx.live_blocks() {
            let o = self.offs(&bl);
            for r in 0..bl.n {
                let (j, _) = block_rows(p, &bl, r);
                worst = worst.max(ldot(&bl, o, j, &self.mg).abs());
            }
        }
        worst
    }

    /// The Newton step: `dv` of `(I + qH⁻¹ Jᵀ D J) dv = −mg`, `J dv` of each row and
    /// `mdv = qH dv = −g − Jᵀ D J dv`. False when the system is singular.
    fn step(&mut self, ctx: &Ctx, nd: usize) -> bool {
        let p = ctx.p;
        let a = &mut self.a[..nd * nd];
        a.fill(0.0);
        for k in 0..nd {
            a[k * nd + k] = 1.0;
        }
        for (bi, bl) in ctx.live_blocks() {
            if self.d[bi] == [0.0; 9] {
                continue;
            }
            let o = (self.tree_off[bl.trees[0] as usize], if bl.trees[1] == NONE { 0 } else { self.tree_off[bl.trees[1] as usize] });
            add_block(a, nd, &bl, o, p, &self.d[bi]);
        }
        if !lu(a, nd, &mut self.piv[..nd]) {
            return false;
        }
        for k in 0..nd {
            self.dv[k] = -self.mg[k];
        }
        lu_solve(a, nd, &self.piv[..nd], &mut self.dv[..nd]);
        self.mdv[..nd].copy_from_slice(&self.g[..nd]);
        for k in 0..nd {
            self.mdv[k] = -self.mdv[k];
        }
        for (bi, bl) in ctx.live_blocks() {
            let o = self.offs(&bl);
            let mut jd = [0.0; 3];
            for (r, v) in jd.iter_mut().enumerate().take(bl.n) {
                let (j, _) = block_rows(p, &bl, r);
                *v = ldot(&bl, o, j, &self.dv);
                self.jdv[bl.row + r] = *v;
            }
            let d = &self.d[bi];
            for r in 0..bl.n {
                let f: f64 = (0..bl.n).map(|q| d[3 * r + q] * jd[q]).sum();
                if f != 0.0 {
                    let (j, _) = block_rows(p, &bl, r);
                    laxpy(&bl, o, j, -f, &mut self.mdv);
                }
            }
        }
        self.dv[..nd].iter().all(|x| x.is_finite())
    }

    /// The exact line search along `dv`: the root of the cost's slope
    /// `α dvᵀ qH dv + dvᵀ y − Σ λ*(x + α J dv) · J dv`, by Newton's method in a bracket
    /// (bisection where a Newton step leaves it). 0 when `dv` does not descend.
    fn line_search(&self, ctx: &Ctx, nd: usize) -> f64 {
        let dmd = dot(&self.dv[..nd], &self.mdv[..nd]);
        let dy = dot(&self.dv[..nd], &self.y[..nd]);
        let (d0, _) = self.slope(ctx, 0.0, dmd, dy);
        if !(d0 < 0.0) {
            return 0.0;
        }
        let (mut lo, mut hi) = (0.0, f64::INFINITY);
        let mut alpha = 1.0;
        for _ in 0..LINE_ITERS {
            let (d1, d2) = self.slope(ctx, alpha, dmd, dy);
            if d1.abs() <= 1e-12 * -d0 {
                break;
            }
            if d1 < 0.0 {
                lo = alpha;
            } else {
                hi = alpha;
            }
            if hi - lo <= 1e-14 * hi {
                break;
            }
            let mut next = alpha - d1 / d2;
            if !(d2 > 0.0 && next > lo && next < hi) {
                next = if hi.is_finite() { 0.5 * (lo + hi) } else { 2.0 * alpha };
            }
            alpha = next;
        }
        alpha
    }

    /// The cost's slope and curvature along `dv` at `alpha` (see [`Newton::line_search`]).
    fn slope(&self, ctx: &Ctx, alpha: f64, dmd: f64, dy: f64) -> (f64, f64) {
        let p = ctx.p;
        let (mut d1, mut d2) = (alpha * dmd + dy, dmd);
        for (bi, bl) in ctx.live_blocks() {
            let mut x = [0.0; 3];
            let mut jd = [0.0; 3];
            for r in 0..bl.n {
                jd[r] = self.jdv[bl.row + r];
                x[r] = self.x[bl.row + r] + alpha * jd[r];
            }
            if jd == [0.0; 3] {
                continue;
            }
            let (lam, d) = law(p.kind[bl.row], bl.n, x, self.centre(&bl), self.r[bi]);
            for r in 0..bl.n {
                d1 -= lam[r] * jd[r];
                for q in 0..bl.n {
                    d2 += jd[r] * d[3 * r + q] * jd[q];
                }
            }
        }
        (d1, d2)
    }

    /// The next pass: De Saxcé's shifts and the proximal centres moved to the last
    /// solution; their largest moves.
    fn next_pass(&mut self, ctx: &Ctx) -> (f64, f64) {
        (self.reshift(ctx), self.recentre(ctx))
    }

    /// Moves the proximal centres to the impulses at `v`; returns the largest change of a
    /// row's velocity it makes alone (`W_rr |Δλ|`).
    fn recentre(&mut self, ctx: &Ctx) -> f64 {
        let p = ctx.p;
        let mut moved: f64 = 0.0;
        let (mut mm, mut md, mut dd) = (0.0, 0.0, 0.0);
        for &bi in ctx.order {
            let bl = p.blocks[bi as usize];
            if !ctx.live(bi as usize) {
                continue;
            }
            for i in bl.row..bl.row + bl.n {
                let m = self.lam[i] - self.lp[i];
                moved = moved.max(p.diag[i] * m.abs());
                mm += m * m;
                md += m * self.dl[i];
                dd += self.dl[i] * self.dl[i];
            }
        }
        let cos = md / (mm * dd).sqrt().max(1e-300);
        self.omega = if cos > ALIGNED { (2.0 * self.omega).clamp(1.0, MAX_OMEGA) } else { 0.0 };
        for &bi in ctx.order {
            let bl = p.blocks[bi as usize];
            if !ctx.live(bi as usize) {
                continue;
            }
            for i in bl.row..bl.row + bl.n {
                let m = self.lam[i] - self.lp[i];
                self.dl[i] = m;
                self.lp[i] = self.lam[i] + self.omega * m;
            }
        }
        moved
    }

    /// De Saxcé's shift of each contact's normal target, `μ |u_t − b_t|` at `v`; returns the
    /// largest change.
    fn reshift(&mut self, ctx: &Ctx) -> f64 {
        let p = ctx.p;
        let mut moved: f64 = 0.0;
        for &bi in ctx.order {
            let bi = bi as usize;
            let bl = p.blocks[bi];
            let RowKind::Normal { friction: 2, mu } = p.kind[bl.row] else { continue };
            if bl.n != 3 || !ctx.live(bi) {
                continue;
            }
            let (t1, t2) = (self.x[bl.row + 1], self.x[bl.row + 2]);
            let s = mu * (t1 * t1 + t2 * t2).sqrt();
            if self.lam[bl.row] > 0.0 {
                moved = moved.max((s - self.shift[bi]).abs());
            }
            self.shift[bi] = s;
        }
        moved
    }
}

/// Row `r` of block `bl`'s `J` and `qH⁻¹ Jᵀ`.
#[inline]
fn block_rows<'a>(p: &'a Problem, bl: &Block, r: usize) -> (&'a [f64], &'a [f64]) {
    let at = bl.off + r * bl.width..bl.off + (r + 1) * bl.width;
    (&p.j[at.clone()], &p.mj[at])
}

/// `a += (qH⁻¹ J_bᵀ) D J_b` of block `bl` (island dofs `o` of its sides) into the `nd x nd`
/// row-major `a`.
fn add_block(a: &mut [f64], nd: usize, bl: &Block, o: (usize, usize), p: &Problem, d: &[f64; 9]) {
    // e_q = Σ_r D_rq (qH⁻¹ J_r) over the block's columns
    let w = bl.width;
    let mut e = [[0.0; 2 * NEWTON_MAX_DOFS]; 3];
    for q in 0..bl.n {
        for r in 0..bl.n {
            let drq = d[3 * r + q];
            if drq != 0.0 {
                let (_, mj) = block_rows(p, bl, r);
                for (ek, m) in e[q][..w].iter_mut().zip(mj) {
                    *ek += drq * m;
                }
            }
        }
    }
    let local = |c: usize| if c < bl.n0 { o.0 + c } else { o.1 + c - bl.n0 };
    for q in 0..bl.n {
        let (j, _) = block_rows(p, bl, q);
        for (ci, &ei) in e[q][..w].iter().enumerate() {
            if ei == 0.0 {
                continue;
            }
            let row = &mut a[local(ci) * nd..(local(ci) + 1) * nd];
            for (ck, &jk) in j.iter().enumerate() {
                row[local(ck)] += ei * jk;
            }
        }
    }
}

/// LU factors of the `n x n` row-major `a` in place with partial pivoting (`piv[k]` the row
/// swapped with `k`); false when a pivot is zero or not finite.
fn lu(a: &mut [f64], n: usize, piv: &mut [usize]) -> bool {
    for k in 0..n {
        let mut best = k;
        for i in k + 1..n {
            if a[i * n + k].abs() > a[best * n + k].abs() {
                best = i;
            }
        }
        piv[k] = best;
        if best != k {
            for c in 0..n {
                a.swap(k * n + c, best * n + c);
            }
        }
        let pk = a[k * n + k];
        if !(pk.abs() > 0.0) || !pk.is_finite() {
            return false;
        }
        for i in k + 1..n {
            let f = a[i * n + k] / pk;
            a[i * n + k] = f;
            if f != 0.0 {
                for c in k + 1..n {
                    a[i * n + c] -= f * a[k * n + c];
                }
            }
        }
    }
    true
}

/// Solves `a x = rhs` in place with the factors of [`lu`].
fn lu_solve(a: &[f64], n: usize, piv: &[usize], x: &mut [f64]) {
    for k in 0..n {
        x.swap(k, piv[k]);
    }
    for i in 0..n {
        let s: f64 = (0..i).map(|c| a[i * n + c] * x[c]).sum();
        x[i] -= s;
    }
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|c| a[i * n + c] * x[c]).sum();
        x[i] = (x[i] - s) / a[i * n + i];
    }
}
