//! The sweep: projected block Gauss–Seidel over one island. The Delassus operator
//! `W = J qH⁻¹ Jᵀ` is never formed: a block's velocity `J_i v` reads only its trees' dofs of
//! the working velocity `v = v_free + qH⁻¹ Jᵀ λ`, and its impulse change updates only them,
//! with the 3 x 3 diagonal block `W_ii` of each contact formed and inverted once per step
//! (by prepare). Contacts between free bodies go through a packed copy of their numbers
//! ([`FreeContact`], formed on the first sweep after a prepare: the [`Layout`]).
//!
//! A sweep visits the island's blocks in order (or backwards), or only the live ones (see
//! *parking* in `accel.rs`: [`SWEEP_SORT`] sorts the blocks into live and parked,
//! [`SWEEP_LIVE`] visits the live ones).

use super::cone::{idle, impulses};
use super::kernels::{add_scaled, add_scaled3};
use super::problem::{piece_dot, Block, Problem, NONE};
use super::rows::RowKind;
use super::runs::dots3;
use super::workspace::{FreeContact, Kernel, Layout, Solve};

/// [`Solve::sweep_blocks`] over every block of the island.
pub(super) const SWEEP_ALL: u8 = 0;
/// [`Solve::sweep_blocks`] over every block of the island, sorting them into live and parked.
pub(super) const SWEEP_SORT: u8 = 1;
/// [`Solve::sweep_blocks`] over the live blocks only.
pub(super) const SWEEP_LIVE: u8 = 2;

impl<const W: usize> FreeContact<W> {
    /// The layout of 3-row block `bl` of `W` columns (its `J` in `j`, row-major).
    pub(super) fn new(bl: &Block, j: &[f64], w: [f64; 9], winv: [f64; 9], start: [usize; 2], mu: f64) -> Self {
        let mut jt = [[0.0; 3]; W];
        let rows = j[bl.off..bl.off + 3 * W].as_chunks::<W>().0;
        let [j0, j1, j2]: &[[f64; W]; 3] = rows.try_into().expect("3 rows");
        for (q, c) in jt.iter_mut().enumerate() {
            *c = [j0[q], j1[q], j2[q]];
        }
        FreeContact {
            jt,
            off: bl.off as u32,
            w,
            winv,
            start: [start[0] as u32, start[1] as u32],
            row: bl.row as u32,
            resting: bl.resting,
            mu,
        }
    }

    /// The block update of [`Solve::contact_update`] on this layout: `u = J v` over the
    /// bodies' dofs of `vel`, the new impulses into `lambda`, `vel += qH⁻¹ Jᵀ Δλ`. Returns the
    /// largest row velocity change and whether the block is idle at `margin` (see
    /// [`idle`]).
    #[inline(always)]
    pub(super) fn update(&self, vel: &mut [f64], lambda: &mut [f64], b: &[f64], mj: &[f64], (tiny, margin): (f64, f64)) -> (f64, bool) {
        let s0 = self.start[0] as usize;
        let s1 = self.start[1] as usize;
        let mut v = [0.0; W];
        v[..6].copy_from_slice(&vel[s0..s0 + 6]);
        if W == 12 {
            v[6..].copy_from_slice(&vel[s1..s1 + 6]);
        }
        let mut u = [0.0; 3];
        for (c, &vq) in self.jt.iter().zip(&v) {
            for (ua, &ja) in u.iter_mut().zip(c) {
                *ua += ja * vq;
            }
        }
        let i = self.row as usize;
        let old: [f64; 3] = lambda[i..i + 3].try_into().expect("3 rows");
        let b: [f64; 3] = b[i..i + 3].try_into().expect("3 rows");
        let (new, d, change) =
            impulses(&self.w, &self.winv, self.resting, old, b, u, self.mu, tiny);
        lambda[i..i + 3].copy_from_slice(&new);
        let idle = idle(old, new, u[0] - b[0], margin);
        if d != [0.0; 3] {
            let o = self.off as usize;
            let [m0, m1, m2]: &[[f64; W]; 3] =
                mj[o..o + 3 * W].as_chunks::<W>().0.try_into().expect("3 rows");
            for q in 0..W {
                v[q] += d[0] * m0[q] + d[1] * m1[q] + d[2] * m2[q];
            }
            vel[s0..s0 + 6].copy_from_slice(&v[..6]);
            if W == 12 {
                vel[s1..s1 + 6].copy_from_slice(&v[6..]);
            }
        }
        (change, idle)
    }
}

impl Layout {
    /// Forms the kernel of each block and the sweep's copies of the free-body contacts
    /// ([`FreeContact`]) from `p`'s blocks, `j`, `W_ii` and its inverse, on the first sweep
    /// after [`Problem::prepare`] (a step whose islands all get exact solves, or none, pays
    /// nothing).
    #[cold]
    #[inline(never)]
    pub(super) fn form(&mut self, p: &Problem) {
        self.free2.clear();
        self.free1.clear();
        self.kernel.clear();
        for (bi, bl) in p.blocks.iter().enumerate() {
            let kernel = match (p.kind[bl.row], bl.n, bl.n0, bl.width) {
                (RowKind::Normal { friction: 2, mu }, 3, 6, w0) if w0 == 6 || w0 == 12 => {
                    let (w, winv) = (p.wii[bi], p.winv[bi]);
                    let s0 = p.trees.start[bl.trees[0] as usize];
                    if w0 == 12 {
                        let s1 = p.trees.start[bl.trees[1] as usize];
                        let c = FreeContact::new(bl, &p.j, w, winv, [s0, s1], mu);
                        self.free2.push(c);
                        Kernel::Free2(self.free2.len() as u32 - 1)
                    } else {
                        let c = FreeContact::new(bl, &p.j, w, winv, [s0, 0], mu);
                        self.free1.push(c);
                        Kernel::Free1(self.free1.len() as u32 - 1)
                    }
                }
                _ => Kernel::General,
            };
            self.kernel.push(kernel);
        }
        self.formed_from = p.prepared;
    }
}

impl Solve<'_> {
    /// Forms the workspace's [`Layout`] of this problem unless it holds it already (formed
    /// since the problem's last prepare).
    #[inline]
    pub(super) fn ensure_layout(&mut self) {
        if self.work.layout.formed_from != self.p.prepared {
            self.work.layout.form(self.p);
        }
    }

    /// `vel += λ · (qH⁻¹ Jᵀ)_r` of row `r` of block `bi`.
    #[inline]
    pub(super) fn apply(&mut self, bi: usize, r: usize, l: f64) {
        let bl = self.p.blocks[bi];
        let base = bl.off + r * bl.width;
        let mj = &self.p.mj[base..base + bl.width];
        let t = &self.p.trees;
        let s0 = t.start[bl.trees[0] as usize];
        add_scaled(&mut self.sol.vel[s0..s0 + bl.n0], l, &mj[..bl.n0]);
        if bl.trees[1] != NONE {
            let s1 = t.start[bl.trees[1] as usize];
            add_scaled(&mut self.sol.vel[s1..s1 + bl.width - bl.n0], l, &mj[bl.n0..]);
        }
    }

    /// One Gauss–Seidel sweep over the island's blocks `order[s..e]` (backwards when
    /// `reverse`: alternating, a stack passes its weight down in one sweep and up in the
    /// next); returns the largest row velocity change.
    pub(super) fn sweep(&mut self, s: usize, e: usize, reverse: bool) -> f64 {
        self.ensure_layout();
        self.sweep_blocks::<SWEEP_ALL>(s, e, reverse, (self.tiny, f64::INFINITY))
    }

    /// [`Solve::sweep`] once the sweep's layout is formed, over the blocks `MODE` says
    /// ([`SWEEP_ALL`]: `order[s..e]`; [`SWEEP_SORT`]: those too, `cg.live` rebuilt of the
    /// blocks not idle at `margin` (see [`idle`]) in `order`'s order, and the idle ones with a
    /// part in the conjugate-gradient direction added to `cg.dropped`; [`SWEEP_LIVE`]:
    /// `cg.live`, the island's blocks `order[s..e]` ignored).
    #[inline(never)]
    pub(super) fn sweep_blocks<const MODE: u8>(&mut self, s: usize, e: usize, reverse: bool, (tiny, margin): (f64, f64)) -> f64 {
        if MODE == SWEEP_SORT {
            self.work.cg.live.clear();
        }
        let n = if MODE == SWEEP_LIVE { self.work.cg.live.len() } else { e - s };
        let mut change: f64 = 0.0;
        for p in 0..n {
            let k = if reverse { n - 1 - p } else { p };
            let bi = if MODE == SWEEP_LIVE { self.work.cg.live[k] } else { self.work.islands.order[s + k] } as usize;
            let (c, idle) = self.visit(bi, tiny, margin);
            // `c` is never NaN (a maximum from 0), `change` neither: `max` without its NaN
            // handling
            if c > change {
                change = c;
            }
            if MODE == SWEEP_SORT {
                if !idle {
                    self.work.cg.live.push(bi as u32);
                    self.work.cg.parked[bi] = false;
                } else if !self.work.cg.parked[bi] {
                    self.work.cg.parked[bi] = true;
                    self.work.cg.dropped.push(bi as u32);
                }
            }
        }
        if MODE == SWEEP_SORT && reverse {
            self.work.cg.live.reverse();
        }
        change
    }

    /// The Gauss–Seidel update of block `bi`: its largest row velocity change, and whether it
    /// is idle at `margin` (a contact or a unilateral row, see [`idle`]; any other row never
    /// is).
    #[inline(always)]
    fn visit(&mut self, bi: usize, tiny: f64, margin: f64) -> (f64, bool) {
        match self.work.layout.kernel[bi] {
            Kernel::Free2(x) => {
                let k = &self.work.layout.free2[x as usize];
                return k.update(&mut self.sol.vel, &mut self.sol.lambda, self.b, &self.p.mj, (tiny, margin));
            }
            Kernel::Free1(x) => {
                let k = &self.work.layout.free1[x as usize];
                return k.update(&mut self.sol.vel, &mut self.sol.lambda, self.b, &self.p.mj, (tiny, margin));
            }
            Kernel::General => {}
        }
        let bl = self.p.blocks[bi];
        let i = bl.row;
        match self.p.kind[i] {
            RowKind::Normal { friction: 2, mu } => self.contact_update(bi, mu, (tiny, margin)),
            kind => {
                let d = self.p.diag[i];
                if d <= tiny {
                    return (0.0, false);
                }
                // over its runs (a servo's: its one column), whole where that sum is zero
                // (`Problem::row_dot`'s rule, here without its call and second look-up of the
                // block: +10 % on TALOS's sweeps through it)
                let runs = self.p.runs_of(&bl);
                let over_runs = if runs.is_empty() { None } else { self.p.row_dot_runs(&bl, 0, runs, &self.sol.vel) };
                let u = over_runs.unwrap_or_else(|| piece_dot(&self.p.trees, &bl, &self.p.j[bl.off..bl.off + bl.width], &self.sol.vel));
                let old = self.sol.lambda[i];
                let mut new = old + (self.b[i] - u) / d;
                match kind {
                    RowKind::Bilateral => {}
                    RowKind::Bounded { lo, hi } => new = new.clamp(lo, hi),
                    _ => new = new.max(0.0),
                }
                let one_sided = matches!(kind, RowKind::Normal { .. } | RowKind::Unilateral);
                let idle = one_sided && old == 0.0 && new == 0.0 && u - self.b[i] > margin;
                if new != old {
                    self.sol.lambda[i] = new;
                    self.apply(bi, 0, new - old);
                    return (((new - old) * d).abs(), idle);
                }
                (0.0, idle)
            }
        }
    }

    /// The block update of a contact with friction (on robots: free bodies go through
    /// [`FreeContact::update`]): the exact 3 x 3 solve when it sticks inside the cone; else the
    /// normal row, then the two friction rows together with one step length, projected on the
    /// disk `|λ_t| ≤ μ λ_n` (see [`impulses`]). Returns the largest row velocity change and
    /// whether the block is idle at `margin` (see [`idle`]).
    fn contact_update(&mut self, bi: usize, mu: f64, (tiny, margin): (f64, f64)) -> (f64, bool) {
        let bl = self.p.blocks[bi];
        let runs = self.p.runs_of(&bl);
        let u = if runs.is_empty() { self.dots3(&bl) } else { dots3(&self.p.j[bl.off..], &bl, runs, &self.sol.vel) };
        let i = bl.row;
        let old = [self.sol.lambda[i], self.sol.lambda[i + 1], self.sol.lambda[i + 2]];
        let b = [self.b[i], self.b[i + 1], self.b[i + 2]];
        let (new, delta, change) = impulses(&self.p.wii[bi], &self.p.winv[bi], bl.resting, old, b, u, mu, tiny);
        self.sol.lambda[i..i + 3].copy_from_slice(&new);
        if delta != [0.0; 3] {
            self.apply3(&bl, &delta);
        }
        (change, idle(old, new, u[0] - b[0], margin))
    }

    /// `J v` of the three rows of a contact block, in one pass over its dofs of `vel`.
    #[inline]
    fn dots3(&self, bl: &Block) -> [f64; 3] {
        let w = bl.width;
        let j = &self.p.j[bl.off..bl.off + 3 * w];
        let mut u = [0.0; 3];
        let mut piece = |c: usize, v: &[f64]| {
            for (q, &x) in v.iter().enumerate() {
                u[0] += j[c + q] * x;
                u[1] += j[w + c + q] * x;
                u[2] += j[2 * w + c + q] * x;
            }
        };
        let s0 = self.p.trees.start[bl.trees[0] as usize];
        piece(0, &self.sol.vel[s0..s0 + bl.n0]);
        if bl.trees[1] != NONE {
            let s1 = self.p.trees.start[bl.trees[1] as usize];
            piece(bl.n0, &self.sol.vel[s1..s1 + w - bl.n0]);
        }
        u
    }

    /// `vel += Σ_a δ_a (qH⁻¹ Jᵀ)_a` over the three rows of a contact block, in one pass.
    #[inline]
    fn apply3(&mut self, bl: &Block, delta: &[f64; 3]) {
        let w = bl.width;
        let mj = &self.p.mj[bl.off..bl.off + 3 * w];
        let piece = |c: usize, v: &mut [f64]| {
            let n = v.len();
            add_scaled3(v, *delta, (&mj[c..c + n], &mj[w + c..w + c + n], &mj[2 * w + c..2 * w + c + n]));
        };
        let s0 = self.p.trees.start[bl.trees[0] as usize];
        piece(0, &mut self.sol.vel[s0..s0 + bl.n0]);
        if bl.trees[1] != NONE {
            let s1 = self.p.trees.start[bl.trees[1] as usize];
            piece(bl.n0, &mut self.sol.vel[s1..s1 + w - bl.n0]);
        }
    }
}
