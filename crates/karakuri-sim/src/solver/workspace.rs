//! The solver's one workspace ([`Workspace`]: scratch every solve and prepare uses, sized at
//! load, shared by all the problems of a step) and the view a solve in progress has of its
//! parts ([`Solve`]: the problem read, its targets, the workspace and the solution written).
//!
//! The scratch is data only here, each part next to the job that fills it: the islands
//! ([`Islands`], `islands.rs`), the sweep's packed copies of the blocks ([`Layout`],
//! `sweep.rs`), the conjugate-gradient state ([`Cg`], `accel.rs`), the dense island of an
//! exact solve ([`Dense`], `exact.rs`), and the free bodies' kept `qH⁻¹` ([`TreeInverse`],
//! `prepare.rs`).

use karakuri::Model;

use super::kernels::BATCH;
use super::problem::{Problem, Trees};
use super::rows::ensure;
use super::solution::Solution;

/// Islands of at most this many rows get exact solves: frictionless ones an active-set
/// solve (the one exact solve of the crate: the impact passes and SHAKE get it too), ones
/// with friction a subspace step when Gauss–Seidel stalls (mass ratios). Larger islands
/// (piles) stay with Gauss–Seidel. The exact solve's scratch (`Dense`) is sized for it.
pub const EXACT_MAX_ROWS: usize = 64;

/// The scratch of every solve (see the module documentation). One workspace serves every
/// problem over the same model (the velocity problem, its split-impulse pass, the impact
/// passes, SHAKE): nothing in it outlives a solve but caches named by what they were formed
/// from (the sweep layout by its prepare call, a free body's inverse by its factors' bits).
#[derive(Clone, Debug, Default)]
pub struct Workspace {
    /// The islands of the last solve.
    pub(super) islands: Islands,
    /// The sweep's layout of the last prepared problem it swept.
    pub(super) layout: Layout,
    /// Scratch of the conjugate-gradient acceleration of large islands' sweeps.
    pub(super) cg: Cg,
    /// Exact-solve scratch.
    pub(super) dense: Dense,
    /// `qH⁻¹` of each six-dof tree (a free body), column-major 6 x 6 (the columns as solved,
    /// so that a product runs down them), formed on first use and kept while the tree's
    /// factors stay the same (a free body's qH is constant) `(36 trees)`.
    pub(super) tree_inv: Vec<f64>,
    /// What each tree's `tree_inv` was formed from and how it applies `(trees)`.
    pub(super) tree_inv_of: Vec<TreeInverse>,
    /// Right-hand sides of the tree solves of [`Problem::prepare`], dof-major, [`BATCH`] at a
    /// time `(largest tree's dofs x BATCH)`.
    pub(super) batch: Vec<f64>,
    /// Scratch of the Newton solve of large articulated islands (`newton.rs`).
    pub(super) newton: super::law::Newton,
    /// Calls of [`Problem::prepare`] with this workspace: the stamp of its checks of
    /// `tree_inv_of`, and the name of the problem prepared last ([`Problem`]'s `prepared`).
    pub(super) prepared: u64,
}

impl Workspace {
    /// A workspace for the problems over `model`'s trees.
    pub fn new(model: &Model) -> Workspace {
        let trees = Trees::new(model);
        let nt = trees.start.len();
        let mut w = Workspace {
            batch: vec![0.0; trees.max_len() * BATCH],
            tree_inv: vec![0.0; 36 * nt],
            tree_inv_of: vec![TreeInverse::default(); nt],
            newton: super::law::Newton::new(model.nv, nt),
            ..Workspace::default()
        };
        let isl = &mut w.islands;
        ensure(&mut isl.uf, nt);
        ensure(&mut isl.island_of_root, nt);
        ensure(&mut isl.start, nt + 1);
        let d = &mut w.dense;
        let k = EXACT_MAX_ROWS;
        for v in [&mut d.rows, &mut d.idx, &mut d.perm, &mut d.servo, &mut d.ss_perm, &mut d.row_off, &mut d.ctr] {
            ensure(v, k);
        }
        for v in [&mut d.w, &mut d.cols, &mut d.ss, &mut d.wr, &mut d.z, &mut d.zt] {
            ensure(v, k * k);
        }
        // a set's LU keeps its `L` by columns after the matrix (`lu::lu_factor`)
        ensure(&mut d.a, 2 * k * k);
        ensure(&mut d.state, k);
        ensure(&mut d.nz, k * model.nv);
        ensure(&mut d.mt, k * model.nv);
        ensure(&mut d.nz_start, k + 1);
        for v in [&mut d.c, &mut d.lambda, &mut d.r, &mut d.saved, &mut d.dir, &mut d.slip, &mut d.u, &mut d.proj, &mut d.best, &mut d.rhs, &mut d.g, &mut d.rs, &mut d.ys, &mut d.gr, &mut d.crow, &mut d.start] {
            ensure(v, k);
        }
        for v in [&mut d.active, &mut d.skip, &mut d.held, &mut d.free, &mut d.in_servo] {
            ensure(v, k);
        }
        ensure(&mut d.eqrows, k);
        ensure(&mut d.uproj, k);
        ensure(&mut w.cg.dofs, nt);
        w.cg.seen = vec![false; nt];
        w.cg.vel0 = vec![0.0; model.nv];
        w.cg.q = vec![0.0; model.nv];
        w.layout.formed_from = u64::MAX;
        w
    }

    /// Makes room for problems of up to `blocks` blocks of `rows` rows in all (so the steps
    /// that stay within allocate nothing).
    pub fn reserve(&mut self, blocks: usize, rows: usize) {
        ensure(&mut self.islands.block_island, blocks);
        ensure(&mut self.islands.order, blocks);
        let l = &mut self.layout;
        ensure(&mut l.kernel, blocks);
        ensure(&mut l.free2, blocks);
        ensure(&mut l.free1, blocks);
        let cg = &mut self.cg;
        ensure(&mut cg.rows, blocks);
        ensure(&mut cg.live, blocks);
        ensure(&mut cg.dropped, blocks);
        ensure(&mut cg.parked, blocks);
        ensure(&mut cg.lambda0, rows);
        ensure(&mut cg.p, rows);
        self.newton.reserve(blocks, rows);
    }

    /// Islands of the last solve.
    pub fn islands(&self) -> usize {
        self.islands.count
    }
}

/// One solve in progress: the problem and its targets (read), the workspace and the solution
/// (written), and the solve's thresholds. The strategies (`sweep.rs`, `accel.rs`, `exact.rs`)
/// are its methods, each over one island (`islands.order[s..e]`).
pub(super) struct Solve<'a> {
    /// The problem: blocks, `J`, `qH⁻¹ Jᵀ`, kinds, `W_ii`.
    pub p: &'a Problem,
    /// The targets solved for `(rows)`: the problem's own, or another pass's on its rows.
    pub b: &'a [f64],
    /// The workspace.
    pub work: &'a mut Workspace,
    /// Impulses and velocity: the warm start on entry, the solution on exit.
    pub sol: &'a mut Solution,
    /// W's largest diagonal entry.
    pub scale: f64,
    /// A row whose diagonal entry is at most this gets no impulse (`1e-12` of `scale`).
    pub tiny: f64,
    /// The warm start the solve began from (the last step's impulses), None from nothing.
    pub warm: Option<&'a [f64]>,
}

/// The islands of a solve (see `islands.rs`), read by every strategy.
#[derive(Clone, Debug, Default)]
pub(super) struct Islands {
    /// Union-find parent of each tree, then each island's fill position `(trees)`.
    pub uf: Vec<u32>,
    /// Island of each tree's root, [`super::NONE`] before numbering `(trees)`.
    pub island_of_root: Vec<u32>,
    /// Island of each block `(blocks)`.
    pub block_island: Vec<u32>,
    /// Blocks in island order `(blocks)`.
    pub order: Vec<u32>,
    /// Start of each island in `order`, then the end `(islands + 1)`.
    pub start: Vec<usize>,
    /// Islands.
    pub count: usize,
}

/// How the sweep updates a block.
#[derive(Clone, Copy, Debug)]
pub(super) enum Kernel {
    /// Through the problem's blocks (rows other than contacts, contacts on robots).
    General,
    /// A contact between two free bodies: [`Layout::free2`]`[i]`.
    Free2(u32),
    /// A contact between a free body and the static world: [`Layout::free1`]`[i]`.
    Free1(u32),
}

/// A contact block between free bodies (two: `W = 12`; one, the other side static: `W = 6`)
/// laid out for the Gauss–Seidel sweep, formed on the first sweep after
/// [`Problem::prepare`]: its numbers in the order the block update reads them, so that the
/// update runs on packed pairs (SSE2, which every x86-64 has); its `qH⁻¹ Jᵀ` is read where it
/// is, in the problem's `mj` (row-major, which is how the update runs over it; a copy costs
/// more than it saves on scenes that converge in a few sweeps). Each sum of the update keeps
/// its order: a row velocity `u_a` is summed over the columns in order from 0, a dof's
/// velocity change is `δ_0 m_0 + δ_1 m_1 + δ_2 m_2` (Rust never fuses a multiply and an add,
/// so packing does not change a bit).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
pub(super) struct FreeContact<const W: usize> {
    /// `J` column by column: the three rows' entries of column `q` side by side, so that
    /// `u += J[:, q] v_q` is a packed and a scalar multiply-add.
    pub jt: [[f64; 3]; W],
    /// Offset of its `qH⁻¹ Jᵀ` in the problem's `mj` (`3 x W`, row-major).
    pub off: u32,
    /// `W_ii`, row-major.
    pub w: [f64; 9],
    /// `W_ii⁻¹` (zeros: singular).
    pub winv: [f64; 9],
    /// First dof of each body (the second unused when `W = 6`).
    pub start: [u32; 2],
    /// First row (the normal).
    pub row: u32,
    /// Whether the contact was resting at the step's start (see
    /// [`Block::resting`](super::Block::resting)).
    pub resting: bool,
    /// Friction coefficient.
    pub mu: f64,
}

/// The sweep's layout of a prepared problem (see `sweep.rs`).
#[derive(Clone, Debug, Default)]
pub(super) struct Layout {
    /// The prepare call of the problem it was formed from (`u64::MAX`: none).
    pub formed_from: u64,
    /// How the sweep updates each block `(blocks)`.
    pub kernel: Vec<Kernel>,
    /// Contacts between two free bodies, laid out for the sweep.
    pub free2: Vec<FreeContact<12>>,
    /// Contacts between a free body and the static world, laid out for the sweep.
    pub free1: Vec<FreeContact<6>>,
}

/// Scratch of the conjugate-gradient acceleration (`accel.rs`), sized at
/// [`Workspace::new`] (trees, dofs) and [`Workspace::reserve`] (blocks, rows).
#[derive(Clone, Debug, Default)]
pub(super) struct Cg {
    /// The island's rows as runs `start..end` of consecutive rows `(≤ blocks)`.
    pub rows: Vec<(usize, usize)>,
    /// The island's dofs as runs `start..end` `(≤ trees)`.
    pub dofs: Vec<(usize, usize)>,
    /// Whether a tree is in the island (all false between solves) `(trees)`.
    pub seen: Vec<bool>,
    /// The impulses at the start of the period `(rows)`.
    pub lambda0: Vec<f64>,
    /// The direction `p` `(rows)`.
    pub p: Vec<f64>,
    /// The velocity at the start of the period `(nv)`.
    pub vel0: Vec<f64>,
    /// `qH⁻¹ Jᵀ p` `(nv)`.
    pub q: Vec<f64>,
    /// The blocks the last full sweep found not idle, in the island's order `(≤ blocks)`.
    pub live: Vec<u32>,
    /// Whether each block was idle at the last full sweep (the island's blocks false at the
    /// start of a solve) `(blocks)`.
    pub parked: Vec<bool>,
    /// Blocks parked since the last CG step, to be dropped from its direction `(≤ blocks)`.
    pub dropped: Vec<u32>,
}

/// What a row is in the current set of the active-set solve with friction (`active.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) enum State {
    /// No impulse: a separated contact (normal and friction), an inactive one-sided row.
    #[default]
    Zero,
    /// Solved for `u = b`: a bilateral row, an active one-sided row or normal, a sticking
    /// contact's friction, a bounded row inside its bounds.
    Free,
    /// A bounded row held at its lower bound.
    Lo,
    /// A bounded row held at its upper bound.
    Hi,
    /// A sliding contact's friction row: `λ_t = μ λ_n d` (`d` in `Dense::dir`).
    Slide,
}

/// Island scratch for exact solves (`exact.rs`: dense over one island's rows, at most
/// [`EXACT_MAX_ROWS`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Dense {
    /// The island's rows (problem row indices) `(k)`.
    pub rows: Vec<usize>,
    /// `W` of the island `(k x k)`.
    pub w: Vec<f64>,
    /// `J v_free` `(k)`.
    pub c: Vec<f64>,
    /// Active rows (direct solve) / rows solved for (subspace step) `(k)`.
    pub active: Vec<bool>,
    /// Impulses of the current set `(k)`.
    pub lambda: Vec<f64>,
    /// Indices of the rows solved for `(≤ k)`.
    pub idx: Vec<usize>,
    /// `W_AA` and its factors (an LU's `L` also by columns after them) `(≤ 2 k x k)`.
    pub a: Vec<f64>,
    /// Right-hand side, then solution `(≤ k)`.
    pub r: Vec<f64>,
    /// Dependent rows of the LDLᵀ `(≤ k)`.
    pub skip: Vec<bool>,
    /// Rows held at their impulse `(k)`.
    pub held: Vec<bool>,
    /// Sign-free rows `(k)`.
    pub free: Vec<bool>,
    /// The island's impulses before a subspace step `(k)`.
    pub saved: Vec<f64>,
    /// What each row is in the friction active set (`active.rs`) `(k)`.
    pub state: Vec<State>,
    /// A sliding contact's friction direction, on its tangent rows (`active.rs`) `(k)`.
    pub dir: Vec<f64>,
    /// A sliding contact's slip compliance `|u_t| / (μ λ_n)` across its direction (the
    /// Newton step's), on its first tangent row (`active.rs`) `(k)`.
    pub slip: Vec<f64>,
    /// Row velocities `c + W λ − b` of the last set solved (`active.rs`) `(k)`.
    pub u: Vec<f64>,
    /// A set's impulses made feasible, for its residual (`active.rs`) `(k)`.
    pub proj: Vec<f64>,
    /// The feasible impulses of least residual among the sets solved (`active.rs`) `(k)`.
    pub best: Vec<f64>,
    /// The set's right-hand side before its solve (`active.rs`) `(≤ k)`.
    pub rhs: Vec<f64>,
    /// The LU factorisation's row swaps (`active.rs`) `(≤ k)`.
    pub perm: Vec<usize>,
    /// The set's matrix by rows of `W`: row `eqrows[j]`'s entry for each unknown in row `j`,
    /// before the slides' rows are combined (`active.rs`) `(≤ k x ≤ k)`.
    pub cols: Vec<f64>,
    /// Each row's target less `c` and the held rows' velocity (`active.rs`) `(k)`.
    pub g: Vec<f64>,
    /// The nonzero columns of each row's `J`, row after row (`exact.rs`) `(≤ k x nv)`.
    pub nz: Vec<u32>,
    /// Where each row's nonzero columns start in `nz`, then the end `(k + 1)`.
    pub nz_start: Vec<usize>,
    /// Each row's offset in the problem's `J` and `qH⁻¹ Jᵀ` (`exact.rs`, an island on one
    /// tree) `(k)`.
    pub row_off: Vec<usize>,
    /// The servo rows condensed out of this try's sets, empty when none are
    /// (`active.rs`'s Schur complement) `(≤ k)`.
    pub servo: Vec<usize>,
    /// Whether each island row is one of `servo` `(k)`.
    pub in_servo: Vec<bool>,
    /// `W_SS + eps I` of the servo rows, LU-factored `(≤ k x k)`.
    pub ss: Vec<f64>,
    /// Its row swaps `(≤ k)`.
    pub ss_perm: Vec<usize>,
    /// `W_CC − W_CS (W_SS + eps I)⁻¹ W_SC` over the other rows, in `W`'s layout `(k x k)`.
    pub wr: Vec<f64>,
    /// The rows not condensed out (C) that a set of the try read, ascending (`condense.rs`) `(≤ k)`.
    pub ctr: Vec<usize>,
    /// A row over C: of `wr`, `gr` or the impulses while they are formed `(≤ k)`.
    pub crow: Vec<f64>,
    /// `(W_SS + eps I)⁻¹ W_SC`: `servo.len()` rows over C `(≤ k x k)`.
    pub z: Vec<f64>,
    /// The servo rows' right-hand side of the set `(≤ k)`.
    pub rs: Vec<f64>,
    /// `(W_SS + eps I)⁻¹` of `rs`, then the servo rows' impulses `(≤ k)`.
    pub ys: Vec<f64>,
    /// `g` with the servo rows condensed out `(k)`.
    pub gr: Vec<f64>,
    /// The impulses a try's first set is read from, then those each set starts from
    /// (`active.rs`) `(k)`.
    pub start: Vec<f64>,
    /// `qH⁻¹ Jᵀ` of an island on one tree, dof-major: `mt[c k + b]` is row `b`'s entry at
    /// dof `c` (`exact.rs`) `(≤ nv x k)`.
    pub mt: Vec<f64>,
    /// The rows a set's equations read, ascending (`active.rs`) `(≤ k)`.
    pub eqrows: Vec<usize>,
    /// Row velocities at a set's impulses made feasible (`active.rs`'s residual) `(k)`.
    pub uproj: Vec<f64>,
    /// `z` transposed: C's rows over the servo rows (`condense.rs`) `(≤ k x k)`.
    pub zt: Vec<f64>,
    /// Whether `a` holds a Cholesky factor (a set without slides) rather than an LU
    /// (`active.rs`).
    pub chol: bool,
    /// Within one solve: whether the next warm-started articulated island tries before its
    /// first sweep (`solve.rs`); set from [`Problem::try_first`] when the solve starts,
    /// written to [`Solution::try_first`](super::Solution::try_first) when it ends.
    pub try_first: bool,
}

/// What a six-dof tree's kept `qH⁻¹` ([`Problem::prepare`]) was formed from: the bits of the
/// tree's factors (its rows of L and its D, at most 15 + 6), and whether the inverse is
/// diagonal. A new or cloned workspace forms the inverse again on first use.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TreeInverse {
    /// The factors' bits, as many as `len`.
    pub key: [u64; 21],
    /// Entries of `key` in use; 0: nothing formed yet.
    pub len: usize,
    /// The inverse's off-diagonal entries are all zero.
    pub diagonal: bool,
    /// The [`Problem::prepare`] call that last checked it (once per call is enough).
    pub checked: u64,
}
