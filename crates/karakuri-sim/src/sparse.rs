//! The constraint problem of a step as its solvers see it: **blocks** of rows over the
//! kinematic trees they touch, grouped into **islands**, solved island by island.
//!
//! * A *tree* is the subtree of one child of the universe (a free body, a robot): a contiguous
//!   range of dofs, and M (so qH) is block-diagonal over trees.
//! * A *block* is a contact (its normal and two friction rows, or the normal alone) or one
//!   other row (loop, limit, velocity servo). It touches at most two trees, and its Jacobian
//!   `J` and `qH⁻¹ Jᵀ` are stored only over them (`rows x width`, `width` the two trees' dof
//!   counts): a contact between two free bodies is 3 x 12 numbers, never 3 x nv.
//! * An *island* is a set of trees linked by blocks (the static world links nothing). Islands
//!   are independent problems: each is iterated until it alone converges, so a settled island
//!   costs one or two sweeps while an active one iterates. Islands are numbered in the order
//!   of their first block and blocks keep their order inside an island, so the result does not
//!   depend on anything but the rows (deterministic).
//!
//! The Delassus operator `W = J qH⁻¹ Jᵀ` is never formed over all rows: projected Gauss–Seidel
//! applies it through the compact factors (a block's velocity `J_i v` reads only its trees'
//! dofs of the working velocity `v = v_free + qH⁻¹ Jᵀ λ`, and its impulse change updates only
//! them), with the 3 x 3 diagonal block `W_ii` of each contact formed and inverted once per
//! step. Only a small island that needs an exact solve forms its own dense `W` (see
//! [`Problem::solve`]).

use karakuri::linalg::dense::ldlt_semidefinite_solve;
use karakuri::linalg::Factorization;
use karakuri::Model;

use crate::solver::{ensure, RowKind, Rows, SolveStats};

/// No tree (a block side on the static world, an unused slot).
pub const NONE: u32 = u32::MAX;

/// Islands of at most this many rows get exact solves: frictionless ones an active-set
/// solve (the one exact solve of the crate: the impact passes and SHAKE get it too), ones with friction a subspace step when
/// Gauss–Seidel stalls (mass ratios). Larger islands (piles) stay with Gauss–Seidel.
pub const EXACT_MAX_ROWS: usize = 64;

/// Diagonal regularisation of the subspace step's `W_AA`, relative to W's largest diagonal
/// entry: of the many impulses of redundant rows (four corners of a face, their friction) it
/// picks the one of least norm, spread evenly, instead of a vertex of the solution set that
/// the friction cones would cut.
const REGULARIZATION: f64 = 1e-9;

/// Sweeps of Gauss–Seidel between two checks of an island that has not converged.
const SWEEPS_PER_SUBSPACE_STEP: usize = 6;

/// An island stalls when its residual fell by less than this factor since the last check
/// (the first check compares with the first sweep): then it gets a subspace step.
const STALL: f64 = 0.25;

/// Active sets a subspace step tries before it gives up (each one a factorisation).
const SUBSPACE_ACTIVE_SETS: usize = 8;

/// Sweeps per conjugate-gradient step of a large island ([`Problem::solve_cg`]): a forward
/// and a backward sweep, the symmetric pair being the map it accelerates (after every sweep:
/// half the gain on the pile).
const CG_PERIOD: usize = 2;

/// Sweeps between two stall checks of a large island ([`Problem::solve_cg`]); a multiple of
/// [`CG_PERIOD`]. At 10 the pile needed half the sweeps but a stack of 20 boxes drifted 11 mm.
const STALL_WINDOW: usize = 20;

/// A block of a large island is parked (skipped until the next full sweep, see
/// [`Problem::solve_cg`]) when its normal slack exceeds this many times the residual of the
/// sweep before (see [`idle`]). On the pile at 10 no parked block took an impulse at the next
/// full sweep (at 1: 19–42 in a run; at 0: 1827).
const PARK_MARGIN: f64 = 10.0;

/// [`Problem::sweep_blocks`] over every block of the island.
const SWEEP_ALL: u8 = 0;
/// [`Problem::sweep_blocks`] over every block of the island, sorting them into live and parked.
const SWEEP_SORT: u8 = 1;
/// [`Problem::sweep_blocks`] over the live blocks only.
const SWEEP_LIVE: u8 = 2;

/// The kinematic trees of a world model (read-only after [`Trees::new`]).
#[derive(Clone, Debug, Default)]
pub struct Trees {
    /// First dof of each tree `(trees)`.
    pub start: Vec<usize>,
    /// Number of dofs of each tree `(trees)`.
    pub len: Vec<usize>,
    /// The tree of each joint, [`NONE`] for the universe `(njoints)`.
    pub of_joint: Vec<u32>,
}

impl Trees {
    /// The trees of `model` (each child of the universe with its subtree).
    pub fn new(model: &Model) -> Trees {
        let mut t = Trees {
            of_joint: vec![NONE; model.njoints],
            ..Trees::default()
        };
        for j in 1..model.njoints {
            let p = model.parents[j];
            if p == 0 {
                t.of_joint[j] = t.start.len() as u32;
                t.start.push(model.idx_v[j]);
                t.len.push(model.subtree_end_v[j] - model.idx_v[j]);
            } else {
                t.of_joint[j] = t.of_joint[p];
            }
        }
        t
    }

    /// The tree whose dof range contains `dof`.
    pub fn of_dof(&self, dof: usize) -> u32 {
        // trees are in dof order
        let i = self.start.partition_point(|&s| s <= dof);
        (i - 1) as u32
    }

    /// The largest tree's dof count.
    pub fn max_len(&self) -> usize {
        self.len.iter().copied().max().unwrap_or(0)
    }
}

/// One block: rows `row..row + n` over trees `trees` (the second [`NONE`] when one), its `J`
/// and `qH⁻¹ Jᵀ` at `off` in [`Problem::j`] / [`Problem::mj`], `n x width` row-major with the
/// first tree's dofs then the second's.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    /// First row.
    pub row: usize,
    /// Rows (1 or 3).
    pub n: usize,
    /// The trees, ascending (`[NONE, NONE]`: the row touches nothing and gets no impulse).
    pub trees: [u32; 2],
    /// Dofs of the first tree (the second's are `width - n0`).
    pub n0: usize,
    /// Columns of the block.
    pub width: usize,
    /// Offset of its values.
    pub off: usize,
    /// A contact that was not slipping at the step's start (static friction): its block
    /// update may take the exact 3 x 3 solve. A slipping one goes normal first, so that a
    /// sliding box is not stopped at one corner by a large normal impulse (a solution of the
    /// contact problem too, but a box tipping over its own corner).
    pub resting: bool,
}

/// A contact block between free bodies (two: `W = 12`; one, the other side static: `W = 6`)
/// laid out for the Gauss–Seidel sweep, formed on the first sweep after
/// [`Problem::prepare`]: its numbers in the order the block update reads them, so that the
/// update runs on packed pairs (SSE2, which every x86-64 has); its `qH⁻¹ Jᵀ` is read where it
/// is, in [`Problem::mj`] (row-major, which is how the update runs over it; a copy costs more
/// than it saves on scenes that converge in a few sweeps). Each sum of the update keeps its
/// order: a row velocity `u_a` is summed over the columns in order from 0, a dof's velocity
/// change is `δ_0 m_0 + δ_1 m_1 + δ_2 m_2` (Rust never fuses a multiply and an add, so
/// packing does not change a bit).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
struct FreeContact<const W: usize> {
    /// `J` column by column: the three rows' entries of column `q` side by side, so that
    /// `u += J[:, q] v_q` is a packed and a scalar multiply-add.
    jt: [[f64; 3]; W],
    /// Offset of its `qH⁻¹ Jᵀ` in [`Problem::mj`] (`3 x W`, row-major).
    off: u32,
    /// `W_ii`, row-major.
    w: [f64; 9],
    /// `W_ii⁻¹` (zeros: singular).
    winv: [f64; 9],
    /// First dof of each body (the second unused when `W = 6`).
    start: [u32; 2],
    /// First row (the normal).
    row: u32,
    /// Whether the contact was resting at the step's start (see [`Block::resting`]).
    resting: bool,
    /// Friction coefficient.
    mu: f64,
}

impl<const W: usize> FreeContact<W> {
    /// The layout of 3-row block `bl` of `W` columns (its `J` in `j`, row-major).
    fn new(bl: &Block, j: &[f64], w: [f64; 9], winv: [f64; 9], start: [usize; 2], mu: f64) -> Self {
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

    /// The block update of [`Problem::contact_update`] on this layout: `u = J v` over the
    /// bodies' dofs of `vel`, the new impulses into `lambda`, `vel += qH⁻¹ Jᵀ Δλ`. Returns the
    /// largest row velocity change and whether the block is idle at `margin` (see
    /// [`idle`]).
    #[inline(always)]
    fn update(&self, vel: &mut [f64], lambda: &mut [f64], b: &[f64], mj: &[f64], (tiny, margin): (f64, f64)) -> (f64, bool) {
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

/// How the sweep updates a block.
#[derive(Clone, Copy, Debug)]
enum Kernel {
    /// Through [`Problem::blocks`] (rows other than contacts, contacts on robots).
    General,
    /// A contact between two free bodies: [`Problem::free2`]`[i]`.
    Free2(u32),
    /// A contact between a free body and the static world: [`Problem::free1`]`[i]`.
    Free1(u32),
}

/// Island scratch for exact solves (dense over one island's rows, at most
/// [`EXACT_MAX_ROWS`]).
#[derive(Clone, Debug, Default)]
struct Dense {
    /// The island's rows (problem row indices) `(k)`.
    rows: Vec<usize>,
    /// `W` of the island `(k x k)`.
    w: Vec<f64>,
    /// `J v_free` `(k)`.
    c: Vec<f64>,
    /// Active rows (direct solve) / rows solved for (subspace step) `(k)`.
    active: Vec<bool>,
    /// Impulses of the current set `(k)`.
    lambda: Vec<f64>,
    /// Indices of the rows solved for `(≤ k)`.
    idx: Vec<usize>,
    /// `W_AA` and its factors `(≤ k x k)`.
    a: Vec<f64>,
    /// Right-hand side, then solution `(≤ k)`.
    r: Vec<f64>,
    /// Dependent rows of the LDLᵀ `(≤ k)`.
    skip: Vec<bool>,
    /// Rows held at their impulse `(k)`.
    held: Vec<bool>,
    /// Sign-free rows `(k)`.
    free: Vec<bool>,
    /// The island's impulses before a subspace step `(k)`.
    saved: Vec<f64>,
}

/// The constraint problem of a step (see the module documentation). Built by the constraint
/// stage (contacts through [`Problem::push_block`], the dense loop / limit / servo rows through
/// [`Problem::push_rows`]), then [`Problem::prepare`] and [`Problem::solve`].
#[derive(Clone, Debug, Default)]
pub struct Problem {
    /// The world's trees.
    pub trees: Trees,
    /// The blocks `(blocks)`.
    pub blocks: Vec<Block>,
    /// Row kinds `(rows)`.
    pub kind: Vec<RowKind>,
    /// Row targets `(rows)`.
    pub b: Vec<f64>,
    /// Impulses: warm start on entry, solution on exit `(rows)`.
    pub lambda: Vec<f64>,
    /// Diagonal of W `(rows)`.
    pub diag: Vec<f64>,
    /// The blocks' Jacobians (see [`Block`]).
    pub j: Vec<f64>,
    /// The blocks' `qH⁻¹ Jᵀ`, same layout.
    pub mj: Vec<f64>,
    /// Each block's `W_ii` (row-major `n x n` in the leading entries) `(blocks)`.
    wii: Vec<[f64; 9]>,
    /// Each 3-row block's `W_ii⁻¹` (zeros: singular, the block goes row by row) `(blocks)`.
    winv: Vec<[f64; 9]>,
    /// The working velocity `v_free + qH⁻¹ Jᵀ λ` `(nv)`.
    pub vel: Vec<f64>,
    /// Union-find parent of each tree, then its island `(trees)`.
    uf: Vec<u32>,
    /// Island of each tree's root, [`NONE`] before numbering `(trees)`.
    island_of_root: Vec<u32>,
    /// Island of each block `(blocks)`.
    block_island: Vec<u32>,
    /// Blocks in island order `(blocks)`.
    order: Vec<u32>,
    /// Start of each island in `order`, then the end `(islands + 1)`.
    island_start: Vec<usize>,
    /// Exact-solve scratch.
    dense: Dense,
    /// `qH⁻¹` of each six-dof tree (a free body), column-major 6 x 6 (the columns as solved,
    /// so that a product runs down them), formed on first use and kept while the tree's
    /// factors stay the same (a free body's qH is constant) `(36 trees)`.
    tree_inv: Vec<f64>,
    /// What each tree's `tree_inv` was formed from and how it applies `(trees)`.
    tree_inv_of: Vec<TreeInverse>,
    /// Calls of [`Problem::prepare`] (the stamp of its checks of `tree_inv_of`).
    prepared: u64,
    /// Islands of the last solve.
    pub islands: usize,
    /// How the sweep updates each block `(blocks)`; empty until the first sweep after
    /// [`Problem::prepare`].
    kernel: Vec<Kernel>,
    /// Contacts between two free bodies, laid out for the sweep.
    free2: Vec<FreeContact<12>>,
    /// Contacts between a free body and the static world, laid out for the sweep.
    free1: Vec<FreeContact<6>>,
    /// Scratch of the conjugate-gradient acceleration of large islands' sweeps.
    cg: Cg,
}

/// Solver settings of one solve.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Sweep cap per island.
    pub max_iterations: usize,
    /// An island stops when no row's velocity changes more than this in a sweep.
    pub tolerance: f64,
    /// Exact solves of small islands allowed (`engine.solver: auto`).
    pub exact: bool,
    /// Largest frictionless island given to the active-set solve.
    pub direct_max_rows: usize,
}

impl Problem {
    /// An empty problem over `model`'s trees.
    pub fn new(model: &Model) -> Problem {
        let trees = Trees::new(model);
        let nt = trees.start.len();
        let mut p = Problem {
            trees,
            vel: vec![0.0; model.nv],
            tree_inv: vec![0.0; 36 * nt],
            tree_inv_of: vec![TreeInverse::default(); nt],
            ..Problem::default()
        };
        ensure(&mut p.uf, nt);
        ensure(&mut p.island_of_root, nt);
        ensure(&mut p.island_start, nt + 1);
        let d = &mut p.dense;
        let k = EXACT_MAX_ROWS;
        ensure(&mut d.rows, k);
        ensure(&mut d.w, k * k);
        ensure(&mut d.c, k);
        ensure(&mut d.active, k);
        ensure(&mut d.lambda, k);
        ensure(&mut d.idx, k);
        ensure(&mut d.a, k * k);
        ensure(&mut d.r, k);
        ensure(&mut d.skip, k);
        ensure(&mut d.saved, k);
        ensure(&mut d.held, k);
        ensure(&mut d.free, k);
        ensure(&mut p.cg.dofs, nt);
        p.cg.seen = vec![false; nt];
        p.cg.vel0 = vec![0.0; model.nv];
        p.cg.q = vec![0.0; model.nv];
        p
    }

    /// Makes room for `blocks` blocks of `rows` rows in all (so the steps that stay within
    /// allocate nothing).
    pub fn reserve(&mut self, blocks: usize, rows: usize) {
        let w = 2 * self.trees.max_len();
        ensure(&mut self.blocks, blocks);
        ensure(&mut self.block_island, blocks);
        ensure(&mut self.order, blocks);
        ensure(&mut self.wii, blocks);
        ensure(&mut self.winv, blocks);
        ensure(&mut self.kernel, blocks);
        ensure(&mut self.free2, blocks);
        ensure(&mut self.free1, blocks);
        for v in [&mut self.b, &mut self.lambda, &mut self.diag] {
            ensure(v, rows);
        }
        ensure(&mut self.kind, rows);
        ensure(&mut self.cg.rows, blocks);
        ensure(&mut self.cg.live, blocks);
        ensure(&mut self.cg.dropped, blocks);
        ensure(&mut self.cg.parked, blocks);
        ensure(&mut self.cg.lambda0, rows);
        ensure(&mut self.cg.p, rows);
        ensure(&mut self.j, rows * w);
        ensure(&mut self.mj, rows * w);
    }

    /// Removes every block.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.kind.clear();
        self.b.clear();
        self.lambda.clear();
        self.diag.clear();
        self.j.clear();
        self.wii.clear();
        self.winv.clear();
        self.kernel.clear();
        self.free2.clear();
        self.free1.clear();
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.b.len()
    }

    /// Appends a block of `kinds.len()` rows over trees `ta`, `tb` (either may be [`NONE`];
    /// equal trees are one) with targets `b` and warm impulses `warm`, its Jacobian zero;
    /// returns its index. Fill it through [`Problem::j_block_mut`].
    pub fn push_block(&mut self, kinds: &[RowKind], ta: u32, tb: u32, b: &[f64], warm: &[f64]) -> usize {
        let (t0, t1) = match (ta.min(tb), ta.max(tb)) {
            (x, y) if x == y => (x, NONE),
            (x, NONE) => (x, NONE),
            (x, y) => (x, y),
        };
        let len = |t: u32| if t == NONE { 0 } else { self.trees.len[t as usize] };
        let (n0, n1) = (len(t0), len(t1));
        let n = kinds.len();
        let block = Block {
            row: self.b.len(),
            n,
            trees: [t0, t1],
            n0,
            width: n0 + n1,
            off: self.j.len(),
            resting: false,
        };
        self.kind.extend_from_slice(kinds);
        self.b.extend_from_slice(b);
        self.lambda.extend_from_slice(warm);
        self.j.extend(std::iter::repeat_n(0.0, n * (n0 + n1)));
        self.blocks.push(block);
        self.blocks.len() - 1
    }

    /// Drops the last rows of the last block so that it keeps `n` (a contact found
    /// frictionless after its rows were written).
    pub fn truncate_last(&mut self, n: usize) {
        let bl = self.blocks.last_mut().expect("a block");
        bl.n = n;
        let rows = bl.row + n;
        let vals = bl.off + n * bl.width;
        self.kind.truncate(rows);
        self.b.truncate(rows);
        self.lambda.truncate(rows);
        self.j.truncate(vals);
    }

    /// Where dof `k` of tree `t` sits in block `bi`'s columns (None: not its tree).
    pub fn column(&self, bi: usize, t: u32, k: usize) -> Option<usize> {
        let bl = &self.blocks[bi];
        let i = self.trees.start[t as usize];
        if bl.trees[0] == t {
            Some(k - i)
        } else if bl.trees[1] == t {
            Some(bl.n0 + k - i)
        } else {
            None
        }
    }

    /// Block `bi`'s Jacobian, `n x width` row-major.
    pub fn j_block_mut(&mut self, bi: usize) -> &mut [f64] {
        let bl = self.blocks[bi];
        &mut self.j[bl.off..bl.off + bl.n * bl.width]
    }

    /// `J_r · v` for row `r` of block `bi` (`v` over all dofs).
    pub fn row_dot(&self, bi: usize, r: usize, v: &[f64]) -> f64 {
        let bl = &self.blocks[bi];
        let row = &self.j[bl.off + r * bl.width..bl.off + (r + 1) * bl.width];
        piece_dot(&self.trees, bl, row, v)
    }

    /// `J_r · v` for every row `r` of block `bi` (the first `n` entries; `v` over all dofs):
    /// [`Problem::row_dot`] of each row, the trees' slices of `v` looked up once.
    pub fn block_dots(&self, bi: usize, v: &[f64]) -> [f64; 3] {
        let bl = &self.blocks[bi];
        if bl.trees[0] == NONE {
            return [0.0; 3];
        }
        let s0 = self.trees.start[bl.trees[0] as usize];
        let v0 = &v[s0..s0 + bl.n0];
        let v1 = (bl.trees[1] != NONE).then(|| {
            let s1 = self.trees.start[bl.trees[1] as usize];
            &v[s1..s1 + bl.width - bl.n0]
        });
        let vals = &self.j[bl.off..bl.off + bl.n * bl.width];
        if bl.n == 3 && bl.n0 == 6 {
            // a contact on free bodies: fixed sizes, the same sums
            let v0: &[f64; 6] = v0.try_into().expect("six dofs");
            return match (bl.width, v1) {
                (6, _) => rows_dot::<6>(vals, 0, v0),
                (12, Some(v1)) => {
                    let mut out = rows_dot::<12>(vals, 0, v0);
                    let x1 = rows_dot::<12>(vals, 6, v1.try_into().expect("six dofs"));
                    for (o, x) in out.iter_mut().zip(x1) {
                        *o += x;
                    }
                    out
                }
                _ => self.block_dots_any(bl, vals, v0, v1),
            };
        }
        self.block_dots_any(bl, vals, v0, v1)
    }

    /// [`Problem::block_dots`] of any block, its values `vals` and the trees' slices of `v`.
    fn block_dots_any(&self, bl: &Block, vals: &[f64], v0: &[f64], v1: Option<&[f64]>) -> [f64; 3] {
        // the rows side by side, column by column: each sum in `dot`'s order (from -0.0)
        let sums = |c0: usize, v: &[f64]| {
            let mut acc = [-0.0; 3];
            for (k, &vk) in v.iter().enumerate() {
                for (r, a) in acc.iter_mut().enumerate().take(bl.n) {
                    *a += vals[r * bl.width + c0 + k] * vk;
                }
            }
            acc
        };
        let mut out = sums(0, v0);
        if let Some(v1) = v1 {
            let x1 = sums(bl.n0, v1);
            for (o, x) in out.iter_mut().zip(x1) {
                *o += x;
            }
        }
        for o in out.iter_mut().skip(bl.n) {
            *o = 0.0;
        }
        out
    }

    /// Appends the rows of `rows` (dense over nv: loops, limits, servos) as one-row blocks,
    /// each over the trees where its Jacobian is not zero (a row touching none gets no
    /// impulse). Row `i` of `rows` becomes problem row `first + i`, `first` returned.
    pub fn push_rows(&mut self, rows: &Rows) -> usize {
        let first = self.rows();
        let nv = rows.nv;
        for i in 0..rows.len() {
            let jr = rows.j_row(i);
            // the trees with a non-zero coefficient, within the row's ranges
            let (mut ta, mut tb) = (NONE, NONE);
            for &(lo, hi) in &rows.ranges[i] {
                let mut k = lo;
                while k < hi.min(nv) {
                    let t = self.trees.of_dof(k);
                    let (s, l) = (self.trees.start[t as usize], self.trees.len[t as usize]);
                    if jr[s..s + l].iter().any(|&x| x != 0.0) && t != ta && t != tb {
                        if ta == NONE {
                            ta = t;
                        } else {
                            debug_assert!(tb == NONE, "a row over more than two trees");
                            tb = t;
                        }
                    }
                    k = s + l;
                }
            }
            let bi = self.push_block(&[rows.kind[i]], ta, tb, &[rows.b[i]], &[rows.lambda[i]]);
            let bl = self.blocks[bi];
            for (slot, t) in bl.trees.into_iter().enumerate() {
                if t == NONE {
                    continue;
                }
                let (s, l) = (self.trees.start[t as usize], self.trees.len[t as usize]);
                let c = if slot == 0 { 0 } else { bl.n0 };
                self.j[bl.off + c..bl.off + c + l].copy_from_slice(&jr[s..s + l]);
            }
        }
        first
    }

    /// `qH⁻¹ Jᵀ` of every block into `mj` (tree by tree: qH is block-diagonal over trees), the
    /// diagonal of W and each block's `W_ii` (and its inverse for contacts). Reads `fact`
    /// and `j`; writes `mj` (every entry of the blocks' range), `diag`, `wii`, `winv`, and
    /// the free bodies' inverses `tree_inv` when their factors changed.
    ///
    /// A free body (a six-dof tree) applies its 6 x 6 `qH⁻¹`, kept from step to step while
    /// its factors are bit for bit the same; when that inverse is diagonal (the body frame at
    /// the centre of mass on principal axes: a box, a ball) each entry is one product, the
    /// dense sum's only non-zero term.
    pub fn prepare(&mut self, fact: &Factorization) {
        // a problem of contacts on free bodies writes every entry of `mj` below; any other
        // block solves in place in a copy of `j` (one copy for all: cheaper than a copy per row)
        let copied = self.blocks.iter().any(|bl| !(bl.n == 3 && bl.n0 == 6 && (bl.width == 6 || bl.width == 12)));
        if copied {
            self.mj.clear();
            self.mj.extend_from_slice(&self.j);
        } else {
            self.mj.resize(self.j.len(), 0.0);
        }
        self.diag.clear();
        self.wii.clear();
        self.winv.clear();
        self.kernel.clear();
        self.prepared = self.prepared.wrapping_add(1);
        for bl in &self.blocks {
            let (j, mj) = (
                &self.j[bl.off..bl.off + bl.n * bl.width],
                &mut self.mj[bl.off..bl.off + bl.n * bl.width],
            );
            // a contact on free bodies of diagonal inverses: column k of `mj` is `scale[k]`
            // times column k of `j`
            let candidate = bl.n == 3 && bl.n0 == 6 && (bl.width == 6 || bl.width == 12);
            let mut scale = [0.0; 12];
            let mut scaled = candidate;
            for (slot, t) in bl.trees.into_iter().enumerate().take(if candidate { 2 } else { 0 }) {
                if t == NONE {
                    continue;
                }
                let (s, tu) = (self.trees.start[t as usize], t as usize);
                let inv = &mut self.tree_inv[36 * tu..36 * (tu + 1)];
                if self.tree_inv_of[tu].update(fact, s, inv, self.prepared) {
                    for k in 0..6 {
                        scale[6 * slot + k] = inv[7 * k];
                    }
                } else {
                    scaled = false;
                }
            }
            let kept = (&mut self.tree_inv[..], &mut self.tree_inv_of[..], self.prepared);
            match (scaled, bl.width) {
                (true, 6) => scale_columns::<6>(j, mj, &scale),
                (true, 12) => scale_columns::<12>(j, mj, &scale),
                _ => general_mj(bl, (j, mj, copied), (&self.trees, fact), kept),
            }
            let mut w = [0.0; 9];
            if bl.n == 3 {
                // a contact: the six entries of the lower triangle in one pass over the
                // columns, each sum in `dot`'s order (from -0.0), mirrored below
                let acc = match bl.width {
                    6 => contact_w::<6>(j, mj),
                    12 => contact_w::<12>(j, mj),
                    wd => contact_w_any(j, mj, wd),
                };
                w = [
                    acc[0], acc[1], acc[3], //
                    acc[1], acc[2], acc[4], //
                    acc[3], acc[4], acc[5],
                ];
                self.diag.extend_from_slice(&[acc[0], acc[2], acc[5]]);
            } else {
                for r in 0..bl.n {
                    for q in 0..=r {
                        let x = dot(
                            &j[r * bl.width..(r + 1) * bl.width],
                            &mj[q * bl.width..(q + 1) * bl.width],
                        );
                        w[r * bl.n + q] = x;
                        w[q * bl.n + r] = x;
                    }
                    self.diag.push(w[r * bl.n + r]);
                }
            }
            self.winv.push(if bl.n == 3 { inverse3(&w) } else { [0.0; 9] });
            self.wii.push(w);
        }
    }

    /// Numbers the islands: union-find over the trees linked by blocks, islands in the order
    /// of their first block, `order` the blocks island by island (their order kept).
    fn islands(&mut self) {
        let nt = self.trees.start.len();
        self.uf.clear();
        self.uf.extend(0..nt as u32);
        for bl in &self.blocks {
            if bl.trees[1] != NONE {
                let (a, b) = (find(&mut self.uf, bl.trees[0]), find(&mut self.uf, bl.trees[1]));
                if a != b {
                    // the smaller root wins (any fixed rule would do)
                    let (lo, hi) = (a.min(b), a.max(b));
                    self.uf[hi as usize] = lo;
                }
            }
        }
        self.island_of_root.clear();
        self.island_of_root.resize(nt, NONE);
        self.block_island.clear();
        let mut islands = 0u32;
        for bi in 0..self.blocks.len() {
            let t = self.blocks[bi].trees[0];
            let isl = if t == NONE {
                NONE
            } else {
                let root = find(&mut self.uf, t) as usize;
                if self.island_of_root[root] == NONE {
                    self.island_of_root[root] = islands;
                    islands += 1;
                }
                self.island_of_root[root]
            };
            self.block_island.push(isl);
        }
        // counting sort of the blocks by island (stable)
        self.island_start.clear();
        self.island_start.resize(islands as usize + 1, 0);
        for &i in &self.block_island {
            if i != NONE {
                self.island_start[i as usize + 1] += 1;
            }
        }
        for i in 0..islands as usize {
            self.island_start[i + 1] += self.island_start[i];
        }
        self.order.clear();
        self.order.resize(self.island_start[islands as usize], 0);
        // uf is free again: use it as each island's fill position
        self.uf.clear();
        self.uf.extend(self.island_start[..islands as usize].iter().map(|&s| s as u32));
        for (bi, &i) in self.block_island.iter().enumerate() {
            if i != NONE {
                let p = &mut self.uf[i as usize];
                self.order[*p as usize] = bi as u32;
                *p += 1;
            }
        }
        self.islands = islands as usize;
    }

    /// Solves the problem island by island; on exit `lambda` holds the impulses and `vel` the
    /// velocity `v_free + qH⁻¹ Jᵀ λ`. Each island: an exact active-set solve when it is small
    /// and frictionless (and `settings.exact`), else block Gauss–Seidel from the warm start
    /// (each contact's normal and friction as one 3 x 3 block projected on the friction cone),
    /// with a subspace step every few sweeps for a small island that has not converged (the
    /// remedy for mass ratios, where Gauss–Seidel's rate tends to 1), and a large island's
    /// sweeps accelerated by nonsmooth conjugate gradients ([`Problem::solve_cg`]). The
    /// statistics are the most sweeps and the largest final residual over the islands.
    pub fn solve(&mut self, v_free: &[f64], settings: &Settings) -> SolveStats {
        self.vel.copy_from_slice(v_free);
        let scale = self.diag.iter().cloned().fold(0.0, f64::max);
        let tiny = 1e-12 * scale.max(1e-300);
        // feasible warm start, and rows that cannot act get nothing
        for bi in 0..self.blocks.len() {
            let bl = self.blocks[bi];
            if bl.trees[0] == NONE {
                self.lambda[bl.row..bl.row + bl.n].fill(0.0);
                continue;
            }
            project(&self.kind, &mut self.lambda, bl.row, bl.n);
            for r in 0..bl.n {
                if self.diag[bl.row + r] <= tiny {
                    self.lambda[bl.row + r] = 0.0;
                }
            }
            for r in 0..bl.n {
                let l = self.lambda[bl.row + r];
                if l != 0.0 {
                    self.apply(bi, r, l);
                }
            }
        }
        self.islands();
        let mut stats = SolveStats::default();
        for isl in 0..self.islands {
            let (s, e) = (self.island_start[isl], self.island_start[isl + 1]);
            let nrows: usize = self.order[s..e].iter().map(|&b| self.blocks[b as usize].n).sum();
            let frictionless = self.order[s..e].iter().all(|&b| {
                let k = self.kind[self.blocks[b as usize].row];
                !matches!(k, RowKind::Normal { friction: 2, .. } | RowKind::Bounded { .. })
            });
            if settings.exact && frictionless && nrows <= settings.direct_max_rows.min(EXACT_MAX_ROWS) {
                if let Some(it) = self.direct(s, e, v_free, scale, false) {
                    stats.iterations = stats.iterations.max(it);
                    stats.direct = true;
                    continue;
                }
            }
            let small = settings.exact && nrows <= EXACT_MAX_ROWS;
            if !small {
                let (it, residual) = self.solve_cg(s, e, settings, tiny);
                stats.iterations = stats.iterations.max(it);
                stats.residual = stats.residual.max(residual);
                continue;
            }
            let mut residual = 0.0;
            // residual at the last check (INFINITY: no more subspace steps in this solve)
            let mut checked = 0.0;
            let mut it = 0;
            while it < settings.max_iterations {
                residual = self.sweep(s, e, it % 2 == 1, tiny);
                it += 1;
                if residual <= settings.tolerance {
                    break;
                }
                if it == 1 {
                    checked = residual;
                }
                if it % SWEEPS_PER_SUBSPACE_STEP == 0 && it < settings.max_iterations {
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
                    self.subspace_step(s, e, v_free, scale);
                    let after = self.sweep(s, e, it % 2 == 1, tiny);
                    it += 1;
                    if after < residual {
                        residual = after;
                        if residual <= settings.tolerance {
                            break;
                        }
                    } else {
                        self.restore_island(s, e);
                        // it did not help this island: no second try in this step
                        checked = f64::INFINITY;
                    }
                }
            }
            stats.iterations = stats.iterations.max(it);
            stats.residual = stats.residual.max(residual);
        }
        stats
    }

    /// `vel += λ · (qH⁻¹ Jᵀ)_r` of row `r` of block `bi`.
    #[inline]
    fn apply(&mut self, bi: usize, r: usize, l: f64) {
        let bl = self.blocks[bi];
        let base = bl.off + r * bl.width;
        let mj = &self.mj[base..base + bl.width];
        let t = &self.trees;
        let s0 = t.start[bl.trees[0] as usize];
        for (v, x) in self.vel[s0..s0 + bl.n0].iter_mut().zip(&mj[..bl.n0]) {
            *v += l * x;
        }
        if bl.trees[1] != NONE {
            let s1 = t.start[bl.trees[1] as usize];
            for (v, x) in self.vel[s1..].iter_mut().zip(&mj[bl.n0..]) {
                *v += l * x;
            }
        }
    }

    /// Forms [`Problem::kernel`] and the sweep's copies of the free-body contacts
    /// ([`FreeContact`]) from the blocks, `j`, `W_ii` and its inverse, on the first sweep after
    /// [`Problem::prepare`] (a step whose islands all get exact solves, or none, pays nothing).
    #[cold]
    #[inline(never)]
    fn sweep_layout(&mut self) {
        self.free2.clear();
        self.free1.clear();
        self.kernel.clear();
        for (bi, bl) in self.blocks.iter().enumerate() {
            let kernel = match (self.kind[bl.row], bl.n, bl.n0, bl.width) {
                (RowKind::Normal { friction: 2, mu }, 3, 6, w0) if w0 == 6 || w0 == 12 => {
                    let (w, winv) = (self.wii[bi], self.winv[bi]);
                    let s0 = self.trees.start[bl.trees[0] as usize];
                    if w0 == 12 {
                        let s1 = self.trees.start[bl.trees[1] as usize];
                        let c = FreeContact::new(bl, &self.j, w, winv, [s0, s1], mu);
                        self.free2.push(c);
                        Kernel::Free2(self.free2.len() as u32 - 1)
                    } else {
                        let c = FreeContact::new(bl, &self.j, w, winv, [s0, 0], mu);
                        self.free1.push(c);
                        Kernel::Free1(self.free1.len() as u32 - 1)
                    }
                }
                _ => Kernel::General,
            };
            self.kernel.push(kernel);
        }
    }

    /// One Gauss–Seidel sweep over the island's blocks `order[s..e]` (backwards when
    /// `reverse`: alternating, a stack passes its weight down in one sweep and up in the
    /// next); returns the largest row velocity change.
    fn sweep(&mut self, s: usize, e: usize, reverse: bool, tiny: f64) -> f64 {
        if self.kernel.len() != self.blocks.len() {
            self.sweep_layout();
        }
        self.sweep_blocks::<SWEEP_ALL>(s, e, reverse, (tiny, f64::INFINITY))
    }

    /// [`Problem::sweep`] once the sweep's layout is formed, over the blocks `MODE` says
    /// ([`SWEEP_ALL`]: `order[s..e]`; [`SWEEP_SORT`]: those too, `cg.live` rebuilt of the
    /// blocks not idle at `margin` (see [`idle`]) in `order`'s order, and the idle ones with a
    /// part in the conjugate-gradient direction added to `cg.dropped`; [`SWEEP_LIVE`]:
    /// `cg.live`, the island's blocks `order[s..e]` ignored).
    #[inline(never)]
    fn sweep_blocks<const MODE: u8>(&mut self, s: usize, e: usize, reverse: bool, (tiny, margin): (f64, f64)) -> f64 {
        if MODE == SWEEP_SORT {
            self.cg.live.clear();
        }
        let n = if MODE == SWEEP_LIVE { self.cg.live.len() } else { e - s };
        let mut change: f64 = 0.0;
        for p in 0..n {
            let k = if reverse { n - 1 - p } else { p };
            let bi = if MODE == SWEEP_LIVE { self.cg.live[k] } else { self.order[s + k] } as usize;
            let (c, idle) = self.visit(bi, tiny, margin);
            // `c` is never NaN (a maximum from 0), `change` neither: `max` without its NaN
            // handling
            if c > change {
                change = c;
            }
            if MODE == SWEEP_SORT {
                if !idle {
                    self.cg.live.push(bi as u32);
                    self.cg.parked[bi] = false;
                } else if !self.cg.parked[bi] {
                    self.cg.parked[bi] = true;
                    self.cg.dropped.push(bi as u32);
                }
            }
        }
        if MODE == SWEEP_SORT && reverse {
            self.cg.live.reverse();
        }
        change
    }

    /// The Gauss–Seidel update of block `bi`: its largest row velocity change, and whether it
    /// is idle at `margin` (a contact or a unilateral row, see [`idle`]; any other row never
    /// is).
    #[inline(always)]
    fn visit(&mut self, bi: usize, tiny: f64, margin: f64) -> (f64, bool) {
        match self.kernel[bi] {
            Kernel::Free2(x) => {
                let k = &self.free2[x as usize];
                return k.update(&mut self.vel, &mut self.lambda, &self.b, &self.mj, (tiny, margin));
            }
            Kernel::Free1(x) => {
                let k = &self.free1[x as usize];
                return k.update(&mut self.vel, &mut self.lambda, &self.b, &self.mj, (tiny, margin));
            }
            Kernel::General => {}
        }
        let bl = self.blocks[bi];
        let i = bl.row;
        match self.kind[i] {
            RowKind::Normal { friction: 2, mu } => self.contact_update(bi, mu, (tiny, margin)),
            kind => {
                let d = self.diag[i];
                if d <= tiny {
                    return (0.0, false);
                }
                let u = self.row_dot(bi, 0, &self.vel);
                let old = self.lambda[i];
                let mut new = old + (self.b[i] - u) / d;
                match kind {
                    RowKind::Bilateral => {}
                    RowKind::Bounded { lo, hi } => new = new.clamp(lo, hi),
                    _ => new = new.max(0.0),
                }
                let one_sided = matches!(kind, RowKind::Normal { .. } | RowKind::Unilateral);
                let idle = one_sided && old == 0.0 && new == 0.0 && u - self.b[i] > margin;
                if new != old {
                    self.lambda[i] = new;
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
        let bl = self.blocks[bi];
        let u = self.dots3(&bl);
        let i = bl.row;
        let old = [self.lambda[i], self.lambda[i + 1], self.lambda[i + 2]];
        let b = [self.b[i], self.b[i + 1], self.b[i + 2]];
        let (new, delta, change) = impulses(&self.wii[bi], &self.winv[bi], bl.resting, old, b, u, mu, tiny);
        self.lambda[i..i + 3].copy_from_slice(&new);
        if delta != [0.0; 3] {
            self.apply3(&bl, &delta);
        }
        (change, idle(old, new, u[0] - b[0], margin))
    }

    /// `J v` of the three rows of a contact block, in one pass over its dofs of `vel`.
    #[inline]
    fn dots3(&self, bl: &Block) -> [f64; 3] {
        let w = bl.width;
        let j = &self.j[bl.off..bl.off + 3 * w];
        let mut u = [0.0; 3];
        let mut piece = |c: usize, v: &[f64]| {
            for (q, &x) in v.iter().enumerate() {
                u[0] += j[c + q] * x;
                u[1] += j[w + c + q] * x;
                u[2] += j[2 * w + c + q] * x;
            }
        };
        let s0 = self.trees.start[bl.trees[0] as usize];
        piece(0, &self.vel[s0..s0 + bl.n0]);
        if bl.trees[1] != NONE {
            let s1 = self.trees.start[bl.trees[1] as usize];
            piece(bl.n0, &self.vel[s1..s1 + w - bl.n0]);
        }
        u
    }

    /// `vel += Σ_a δ_a (qH⁻¹ Jᵀ)_a` over the three rows of a contact block, in one pass.
    #[inline]
    fn apply3(&mut self, bl: &Block, delta: &[f64; 3]) {
        let w = bl.width;
        let mj = &self.mj[bl.off..bl.off + 3 * w];
        let piece = |c: usize, v: &mut [f64]| {
            for (q, x) in v.iter_mut().enumerate() {
                *x += delta[0] * mj[c + q] + delta[1] * mj[w + c + q] + delta[2] * mj[2 * w + c + q];
            }
        };
        let s0 = self.trees.start[bl.trees[0] as usize];
        piece(0, &mut self.vel[s0..s0 + bl.n0]);
        if bl.trees[1] != NONE {
            let s1 = self.trees.start[bl.trees[1] as usize];
            piece(bl.n0, &mut self.vel[s1..s1 + w - bl.n0]);
        }
    }

    /// Forms the island's dense `W` and `c = J v_free` over its rows into `self.dense`.
    fn form_dense(&mut self, s: usize, e: usize, v_free: &[f64]) {
        let d = &mut self.dense;
        d.rows.clear();
        for &b in &self.order[s..e] {
            let bl = self.blocks[b as usize];
            d.rows.extend(bl.row..bl.row + bl.n);
        }
        let k = d.rows.len();
        d.w.clear();
        d.w.resize(k * k, 0.0);
        d.c.clear();
        // row -> (block, row in block) by walking the island's blocks
        let mut pa = 0;
        for &ba in &self.order[s..e] {
            let bla = self.blocks[ba as usize];
            for ra in 0..bla.n {
                d.c.push(piece_dot(
                    &self.trees,
                    &bla,
                    &self.j[bla.off + ra * bla.width..bla.off + (ra + 1) * bla.width],
                    v_free,
                ));
                let mut pb = 0;
                for &bb in &self.order[s..e] {
                    let blb = self.blocks[bb as usize];
                    for rb in 0..blb.n {
                        if pb <= pa {
                            let x = cross_dot(&self.trees, &self.j, &self.mj, (&bla, ra), (&blb, rb));
                            d.w[pa * k + pb] = x;
                            d.w[pb * k + pa] = x;
                        }
                        pb += 1;
                    }
                }
                pa += 1;
            }
        }
    }

    /// The island's exact frictionless solve (active set over its unilateral rows, each set
    /// by a semidefinite LDLᵀ that gives dependent rows no impulse); None when the set does
    /// not settle (Gauss–Seidel takes over). With `hold`, the friction and bounded rows keep
    /// their impulses (they enter the right-hand side) and only the others are solved for.
    /// Writes `lambda` and `vel` of the island.
    fn direct(&mut self, s: usize, e: usize, v_free: &[f64], scale: f64, hold: bool) -> Option<usize> {
        self.form_dense(s, e, v_free);
        let d = &mut self.dense;
        let k = d.rows.len();
        let scale = scale.max(1e-300);
        // sign-free rows: bilateral ones, and with `hold` the friction rows of sticking
        // contacts; held rows keep their impulse (sliding friction, bounded rows)
        let bilateral = |kind: RowKind| kind == RowKind::Bilateral;
        d.active.clear();
        d.lambda.clear();
        d.held.clear();
        d.free.clear();
        for p in 0..k {
            let i = d.rows[p];
            let kind = self.kind[i];
            let (held, free) = match kind {
                RowKind::Tangent => {
                    // the contact's normal is the row before the tangents
                    let n = if matches!(self.kind[i - 1], RowKind::Tangent) { i - 2 } else { i - 1 };
                    let RowKind::Normal { mu, .. } = self.kind[n] else { unreachable!() };
                    let (ln, t1, t2) = (self.lambda[n], self.lambda[n + 1], self.lambda[n + 2]);
                    let stick = ln > 0.0 && (t1 * t1 + t2 * t2).sqrt() < mu * ln * (1.0 - 1e-9);
                    (!stick, stick)
                }
                RowKind::Bounded { .. } => (true, false),
                _ => (false, bilateral(kind)),
            };
            let held = hold && held;
            d.held.push(held);
            d.free.push(free);
            d.active.push(!held && (free || self.lambda[i] > 0.0 || d.c[p] < self.b[i]));
            d.lambda.push(if held { self.lambda[i] } else { 0.0 });
        }
        let eps = if hold { REGULARIZATION * scale } else { 0.0 };
        let tries = if hold { SUBSPACE_ACTIVE_SETS } else { 3 * k + 10 };
        for it in 0..tries {
            d.idx.clear();
            d.idx.extend((0..k).filter(|&p| d.active[p]));
            let n = d.idx.len();
            d.a.clear();
            d.a.resize(n * n, 0.0);
            d.r.clear();
            d.r.resize(n, 0.0);
            for (x, &p) in d.idx.iter().enumerate() {
                let mut rhs = self.b[d.rows[p]] - d.c[p];
                for q in 0..k {
                    if d.held[q] {
                        rhs -= d.w[p * k + q] * d.lambda[q];
                    }
                }
                d.r[x] = rhs;
                for (y, &q) in d.idx.iter().enumerate() {
                    d.a[x * n + y] = d.w[p * k + q];
                }
                d.a[x * n + x] += eps;
            }
            d.skip.clear();
            d.skip.resize(n, false);
            ldlt_semidefinite_solve(&mut d.a, &mut d.r, &mut d.skip, n, 1e-10 * scale);
            for p in 0..k {
                if !d.held[p] {
                    d.lambda[p] = 0.0;
                }
            }
            for (x, &p) in d.idx.iter().enumerate() {
                d.lambda[p] = d.r[x];
            }
            let worst = d
                .idx
                .iter()
                .filter(|&&p| !d.free[p] && d.lambda[p] < -1e-12 * scale)
                .min_by(|&&p, &&q| d.lambda[p].total_cmp(&d.lambda[q]).then(p.cmp(&q)));
            if let Some(&p) = worst {
                d.active[p] = false;
                // a normal that lets go takes its friction with it
                if hold && matches!(self.kind[d.rows[p]], RowKind::Normal { friction: 2, .. }) {
                    for q in [p + 1, p + 2] {
                        d.active[q] = false;
                        d.held[q] = true;
                        d.lambda[q] = 0.0;
                    }
                }
                continue;
            }
            let mut viol: Option<(usize, f64)> = None;
            for p in (0..k).filter(|&p| !d.active[p] && !d.held[p] && !d.free[p]) {
                let g = d.c[p] + (0..k).map(|q| d.w[p * k + q] * d.lambda[q]).sum::<f64>()
                    - self.b[d.rows[p]];
                if g < -1e-12 * (1.0 + scale) && viol.is_none_or(|(_, h)| g < h) {
                    viol = Some((p, g));
                }
            }
            if let Some((p, _)) = viol {
                d.active[p] = true;
                continue;
            }
            if hold {
                // friction back inside the cones of the new normal impulses
                let mut p = 0;
                while p < k {
                    let i = d.rows[p];
                    let n = match self.kind[i] {
                        RowKind::Normal { friction, .. } => 1 + friction,
                        _ => 1,
                    };
                    project(&self.kind[i..i + n], &mut d.lambda[p..p + n], 0, n);
                    p += n;
                }
            }
            self.set_island(s, e);
            return Some(it + 1);
        }
        None
    }

    /// The subspace step of an island with friction that Gauss–Seidel has not finished (mass
    /// ratios, where its rate tends to 1; after Silcowitz, Niebe & Erleben's PGS with subspace
    /// minimisation): the current impulses name the sticking contacts, whose normal and friction
    /// rows are solved exactly together with the other unilateral and bilateral rows (the
    /// active set of [`Problem::direct`], on `W_AA` slightly regularised), sliding friction and
    /// bounded rows held at their impulses; the friction is then projected on the new cones.
    /// Gauss–Seidel goes on from there.
    fn subspace_step(&mut self, s: usize, e: usize, v_free: &[f64], scale: f64) {
        let _ = self.direct(s, e, v_free, scale, true);
    }

    /// Keeps the island's impulses in `dense.saved`.
    fn save_island(&mut self, s: usize, e: usize) {
        self.dense.saved.clear();
        for x in s..e {
            let bl = self.blocks[self.order[x] as usize];
            self.dense.saved.extend_from_slice(&self.lambda[bl.row..bl.row + bl.n]);
        }
    }

    /// Puts back the impulses [`Problem::save_island`] kept (and `vel` with them).
    fn restore_island(&mut self, s: usize, e: usize) {
        std::mem::swap(&mut self.dense.lambda, &mut self.dense.saved);
        self.set_island(s, e);
        std::mem::swap(&mut self.dense.lambda, &mut self.dense.saved);
    }

    /// Writes `dense.lambda` into the island's impulses and updates `vel` by the change.
    fn set_island(&mut self, s: usize, e: usize) {
        let mut p = 0;
        for x in s..e {
            let bi = self.order[x] as usize;
            let bl = self.blocks[bi];
            for r in 0..bl.n {
                let delta = self.dense.lambda[p] - self.lambda[bl.row + r];
                if delta != 0.0 {
                    self.lambda[bl.row + r] = self.dense.lambda[p];
                    self.apply(bi, r, delta);
                }
                p += 1;
            }
        }
    }
}

/// Scratch of [`Problem::solve_cg`], sized at [`Problem::new`] (trees, dofs) and
/// [`Problem::reserve`] (blocks, rows).
#[derive(Clone, Debug, Default)]
struct Cg {
    /// The island's rows as runs `start..end` of consecutive rows `(≤ blocks)`.
    rows: Vec<(usize, usize)>,
    /// The island's dofs as runs `start..end` `(≤ trees)`.
    dofs: Vec<(usize, usize)>,
    /// Whether a tree is in the island (all false between solves) `(trees)`.
    seen: Vec<bool>,
    /// The impulses at the start of the period `(rows)`.
    lambda0: Vec<f64>,
    /// The direction `p` `(rows)`.
    p: Vec<f64>,
    /// The velocity at the start of the period `(nv)`.
    vel0: Vec<f64>,
    /// `qH⁻¹ Jᵀ p` `(nv)`.
    q: Vec<f64>,
    /// The blocks the last full sweep found not idle, in the island's order `(≤ blocks)`.
    live: Vec<u32>,
    /// Whether each block was idle at the last full sweep (the island's blocks false at the
    /// start of a solve) `(blocks)`.
    parked: Vec<bool>,
    /// Blocks parked since the last CG step, to be dropped from its direction
    /// ([`Problem::cg_drop_parked`]) `(≤ blocks)`.
    dropped: Vec<u32>,
}

impl Problem {
    /// Block Gauss–Seidel over a large island (more than [`EXACT_MAX_ROWS`] rows, or any under
    /// `solver: pgs`) accelerated by nonsmooth nonlinear conjugate gradients (Silcowitz, Niebe
    /// & Erleben 2010), the map accelerated being a pair of sweeps (forward, then backward):
    /// after a pair that moved the island's impulses by `r_k`, with `ρ = |r_k|² / |r_{k-1}|²`,
    /// `β = ρ` when `ρ ≤ 1` and `max(0, 2 − ρ)` above (the paper restarts with `β = 0` there;
    /// that jump made the solve's result jump with its input, see docs/decisions/0031),
    /// `λ += β p_{k-1}` and `p_k = r_k + β p_{k-1}`. The velocity follows through
    /// `q = qH⁻¹ Jᵀ p`, kept over the island's dofs from the sweeps' own velocity changes (no
    /// Jacobian product). The solve ends on a sweep's iterate (feasible), at the tolerance, the
    /// cap, or when it stalls: every [`STALL_WINDOW`] sweeps the residual is compared with the
    /// window's start and the island stops when it did not fall or when at that rate the
    /// tolerance is out of reach within the cap.
    ///
    /// *Parking.* Full sweeps (the first pair, every stall check, the last sweep at the cap,
    /// and the sweep after a partial one that reached the tolerance) visit every block and
    /// list the live ones; the sweeps between visit only those. A block is parked when it is
    /// idle (see [`idle`]: zero impulses before and after its update, its normal slack above
    /// [`PARK_MARGIN`] times the residual of the sweep before), an update that would change
    /// nothing while its slack stays positive; a newly parked block's rows are dropped from
    /// the CG direction ([`Problem::cg_drop_parked`]) so that the CG step leaves them at zero
    /// too. The tolerance stop, the stall checks and the returned residual thus cover every
    /// row. Reads `order[s..e]`, the blocks, `lambda` and `vel`; writes `lambda`, `vel` and
    /// `cg`. Returns the sweeps and the last sweep's residual.
    fn solve_cg(&mut self, s: usize, e: usize, settings: &Settings, tiny: f64) -> (usize, f64) {
        if self.kernel.len() != self.blocks.len() {
            self.sweep_layout();
        }
        self.cg_runs(s, e);
        self.cg_keep();
        self.cg.dropped.clear();
        self.cg.parked.resize(self.blocks.len(), false);
        for &b in &self.order[s..e] {
            self.cg.parked[b as usize] = false;
        }
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
            let all = full || self.cg.live.len() == e - s;
            confirm = !all && residual <= settings.tolerance;
            if (all && residual <= settings.tolerance) || it == settings.max_iterations {
                break;
            }
            if it % STALL_WINDOW == 0 {
                if it > STALL_WINDOW {
                    let rate = residual / window_start;
                    // sweeps to the tolerance at this rate
                    let log_gap = STALL_WINDOW as f64 * (settings.tolerance / residual).ln();
                    let needed = log_gap / rate.ln();
                    if rate >= 1.0 || it as f64 + needed > settings.max_iterations as f64 {
                        break;
                    }
                }
                window_start = residual;
            }
            if it % CG_PERIOD != 0 {
                continue;
            }
            let rr = self.cg_rr();
            let beta = if it == CG_PERIOD {
                0.0
            } else {
                let ratio = rr / rr_prev;
                if ratio <= 1.0 {
                    ratio
                } else {
                    (2.0 - ratio).max(0.0)
                }
            };
            if beta != 0.0 {
                self.cg_drop_parked();
            }
            self.cg_step(beta);
            self.cg_drop_parked();
            self.cg.dropped.clear();
            rr_prev = rr;
        }
        (it, residual)
    }

    /// Drops the newly parked blocks' rows from the direction: `q −= qH⁻¹ Jᵀ p` over them,
    /// then their `p = 0` (so that `q = qH⁻¹ Jᵀ p` still holds and a CG step leaves their zero
    /// impulses as they are, which it must: the partial sweeps skip them). Called before a CG
    /// step (for its `λ += β p`) and after it (for its new `p = r`, `r = −λ0` on these rows);
    /// a block parked longer has `p = 0` and `λ0 = 0` already (its impulses stayed zero),
    /// and keeps them. Reads `cg.dropped`, the blocks and `mj`; writes `cg.p`, `cg.q`.
    fn cg_drop_parked(&mut self) {
        let cg = &mut self.cg;
        for &bi in &cg.dropped {
            let bl = &self.blocks[bi as usize];
            let p = &mut cg.p[bl.row..bl.row + bl.n];
            if p.iter().all(|&x| x == 0.0) {
                continue;
            }
            for (r, pr) in p.iter_mut().enumerate() {
                let mj = &self.mj[bl.off + r * bl.width..bl.off + (r + 1) * bl.width];
                let s0 = self.trees.start[bl.trees[0] as usize];
                for (q, x) in cg.q[s0..s0 + bl.n0].iter_mut().zip(&mj[..bl.n0]) {
                    *q -= *pr * x;
                }
                if bl.trees[1] != NONE {
                    let s1 = self.trees.start[bl.trees[1] as usize];
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
        let cg = &mut self.cg;
        let rows = self.lambda.len();
        cg.lambda0.resize(rows, 0.0);
        cg.p.resize(rows, 0.0);
        cg.rows.clear();
        for &b in &self.order[s..e] {
            let bl = &self.blocks[b as usize];
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
                let (a, l) = (self.trees.start[t], self.trees.len[t]);
                match cg.dofs.last_mut() {
                    Some(run) if run.1 == a => run.1 += l,
                    _ => cg.dofs.push((a, a + l)),
                }
            }
        }
    }

    /// `cg.lambda0 = λ`, `cg.vel0 = v` over the island.
    fn cg_keep(&mut self) {
        let cg = &mut self.cg;
        for &(a, b) in &cg.rows {
            cg.lambda0[a..b].copy_from_slice(&self.lambda[a..b]);
        }
        for &(a, b) in &cg.dofs {
            cg.vel0[a..b].copy_from_slice(&self.vel[a..b]);
        }
    }

    /// `|r|²` of the impulse change `r = λ − cg.lambda0` of the period.
    fn cg_rr(&self) -> f64 {
        let mut rr = 0.0;
        for &(a, b) in &self.cg.rows {
            for (l, l0) in self.lambda[a..b].iter().zip(&self.cg.lambda0[a..b]) {
                rr += (l - l0) * (l - l0);
            }
        }
        rr
    }

    /// With `r = λ − λ0`, `Δv = v − v0` of the period: `λ += β p`, `v += β q`, `p = r + β p`,
    /// `q = Δv + β q`; then `λ0 = λ`, `v0 = v` for the next period.
    fn cg_step(&mut self, beta: f64) {
        let cg = &mut self.cg;
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
            step(&mut self.lambda[a..b], &mut cg.lambda0[a..b], &mut cg.p[a..b]);
        }
        for &(a, b) in &cg.dofs {
            step(&mut self.vel[a..b], &mut cg.vel0[a..b], &mut cg.q[a..b]);
        }
    }
}

/// Makes the impulses of the block at `lambda[i..i + n]` (kinds `kind[i..]`) feasible: a
/// normal non-negative with its friction in the disk, a unilateral row non-negative, a
/// bounded row within its bounds.
fn project(kind: &[RowKind], lambda: &mut [f64], i: usize, n: usize) {
    match kind[i] {
        RowKind::Normal { friction, mu } => {
            lambda[i] = lambda[i].max(0.0);
            if friction == 2 && n == 3 {
                let lim = mu * lambda[i];
                let (a, b) = (lambda[i + 1], lambda[i + 2]);
                let nrm = (a * a + b * b).sqrt();
                if nrm > lim {
                    let s = if nrm > 0.0 { lim / nrm } else { 0.0 };
                    lambda[i + 1] = a * s;
                    lambda[i + 2] = b * s;
                }
            }
        }
        RowKind::Unilateral => lambda[i] = lambda[i].max(0.0),
        RowKind::Bounded { lo, hi } => lambda[i] = lambda[i].clamp(lo, hi),
        _ => {}
    }
}

/// The new impulses of a contact block (`W_ii` `w`, its inverse `winv`, `resting` as in
/// [`Block::resting`]) from its impulses `old`, targets `b` and row velocities `u`: the exact
/// 3 x 3 solve when the contact was resting and the result sticks inside the cone; else
/// (sliding, or a singular block) the normal row first, then both friction rows with one step
/// length, projected on the disk `|λ_t| ≤ μ λ_n`. Returns the new impulses, their change and
/// the largest row velocity change.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn impulses(
    w: &[f64; 9],
    winv: &[f64; 9],
    resting: bool,
    old: [f64; 3],
    b: [f64; 3],
    u: [f64; 3],
    mu: f64,
    tiny: f64,
) -> ([f64; 3], [f64; 3], f64) {
    // the friction rows' targets: a track surface's no-slip velocity, else 0
    let r = [b[0] - u[0], b[1] - u[1], b[2] - u[2]];
    let mut new = [0.0; 3];
    let mut done = false;
    if resting && winv[0] != 0.0 {
        for a in 0..3 {
            new[a] = old[a] + winv[3 * a] * r[0] + winv[3 * a + 1] * r[1] + winv[3 * a + 2] * r[2];
        }
        if new[0] <= 0.0 {
            new = [0.0; 3];
            done = true;
        } else if new[1] * new[1] + new[2] * new[2] <= mu * mu * new[0] * new[0] {
            done = true;
        }
    }
    if !done {
        // sliding (or a singular block): normal first, then the tangents with its change
        let dn = w[0];
        new[0] = if dn > tiny { (old[0] + r[0] / dn).max(0.0) } else { 0.0 };
        let delta = new[0] - old[0];
        let r1 = r[1] - w[3] * delta;
        let r2 = r[2] - w[6] * delta;
        // one step length for both tangents: the fixed point of the projection then has the
        // friction opposite the slip (maximal dissipation); the 2 x 2 inverse would turn it
        // towards the block's stiffer direction
        let dt = w[4].max(w[8]);
        let (mut t1, mut t2) = if dt > tiny {
            (old[1] + r1 / dt, old[2] + r2 / dt)
        } else {
            (0.0, 0.0)
        };
        let lim = mu * new[0];
        let nrm = (t1 * t1 + t2 * t2).sqrt();
        if nrm > lim {
            let s = if nrm > 0.0 { lim / nrm } else { 0.0 };
            t1 *= s;
            t2 *= s;
        }
        new[1] = t1;
        new[2] = t2;
    }
    let mut change: f64 = 0.0;
    let mut delta = [0.0; 3];
    for a in 0..3 {
        delta[a] = new[a] - old[a];
        change = change.max((delta[a] * w[4 * a]).abs());
    }
    (new, delta, change)
}

/// Whether a block is idle at `margin`: its impulses were zero before its update (`old`)
/// and are after it (`new`), and its normal row's slack `u_n − b_n` (before the update)
/// exceeds `margin`. An idle block's update leaves it at zero while the slack stays positive
/// (a sliding update then clamps the normal at zero and the friction with it), so skipping
/// it changes nothing until its neighbours' impulses have moved `u_n` by the margin.
#[inline(always)]
fn idle(old: [f64; 3], new: [f64; 3], slack: f64, margin: f64) -> bool {
    old == [0.0; 3] && new == [0.0; 3] && slack > margin
}

/// Union-find root of `t` with path halving.
fn find(uf: &mut [u32], mut t: u32) -> u32 {
    while uf[t as usize] != t {
        let g = uf[uf[t as usize] as usize];
        uf[t as usize] = g;
        t = g;
    }
    t
}

#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A block row (compact, `width`) dotted with a vector over all dofs.
#[inline]
fn piece_dot(trees: &Trees, bl: &Block, row: &[f64], v: &[f64]) -> f64 {
    if bl.trees[0] == NONE {
        return 0.0;
    }
    let s0 = trees.start[bl.trees[0] as usize];
    if bl.n0 == 6 && (bl.width == 6 || bl.width == 12) {
        // free bodies: fixed sizes, the same sums
        let six = |r: &[f64], s: usize| -> f64 {
            let (r, v): (&[f64; 6], &[f64; 6]) =
                (r.try_into().expect("six"), v[s..s + 6].try_into().expect("six"));
            r.iter().zip(v).map(|(x, y)| x * y).sum()
        };
        let mut x = six(&row[..6], s0);
        if bl.width == 12 {
            x += six(&row[6..12], trees.start[bl.trees[1] as usize]);
        }
        return x;
    }
    let mut x = dot(&row[..bl.n0], &v[s0..s0 + bl.n0]);
    if bl.trees[1] != NONE {
        let s1 = trees.start[bl.trees[1] as usize];
        x += dot(&row[bl.n0..], &v[s1..s1 + bl.width - bl.n0]);
    }
    x
}

/// The three rows of a `3 x W` block (`vals`, row-major) over columns `c0..c0 + 6` dotted
/// with `v`, side by side: each sum in `dot`'s order (from -0.0).
#[inline]
fn rows_dot<const W: usize>(vals: &[f64], c0: usize, v: &[f64; 6]) -> [f64; 3] {
    let [r0, r1, r2]: &[[f64; W]; 3] = vals[..3 * W].as_chunks::<W>().0.try_into().expect("3 rows");
    let mut acc = [-0.0; 3];
    for (k, &vk) in v.iter().enumerate() {
        acc[0] += r0[c0 + k] * vk;
        acc[1] += r1[c0 + k] * vk;
        acc[2] += r2[c0 + k] * vk;
    }
    acc
}

/// `W` entry `J_a · (qH⁻¹ Jᵀ)_b` of row `ra` of block `a` and row `rb` of block `b`: the sum
/// over the trees they share.
fn cross_dot(trees: &Trees, j: &[f64], mj: &[f64], (a, ra): (&Block, usize), (b, rb): (&Block, usize)) -> f64 {
    let ja = &j[a.off + ra * a.width..a.off + (ra + 1) * a.width];
    let mb = &mj[b.off + rb * b.width..b.off + (rb + 1) * b.width];
    let mut x = 0.0;
    for (sa, &t) in a.trees.iter().enumerate() {
        if t == NONE {
            continue;
        }
        let Some(sb) = b.trees.iter().position(|&u| u == t) else { continue };
        let l = trees.len[t as usize];
        let ca = if sa == 0 { 0 } else { a.n0 };
        let cb = if sb == 0 { 0 } else { b.n0 };
        x += dot(&ja[ca..ca + l], &mb[cb..cb + l]);
    }
    x
}

/// `qH⁻¹ Jᵀ` of block `bl` (its `J` rows `j`; `copied`: `mj` holds them already) into `mj`,
/// tree by tree (the pieces are apart:
/// the order does not change a bit): a free body through its kept inverse in `tree_inv`
/// (made current first, see [`TreeInverse`]), a one-dof tree on the universe by `1 / D`, any
/// other tree by its LᵀDL solve.
fn general_mj(
    bl: &Block,
    (j, mj, copied): (&[f64], &mut [f64], bool),
    (trees, fact): (&Trees, &Factorization),
    (tree_inv, tree_inv_of, stamp): (&mut [f64], &mut [TreeInverse], u64),
) {
    for (slot, t) in bl.trees.into_iter().enumerate() {
        if t == NONE {
            continue;
        }
        let c = if slot == 0 { 0 } else { bl.n0 };
        let (s, l) = (trees.start[t as usize], trees.len[t as usize]);
        let rows = j.chunks_exact(bl.width).zip(mj.chunks_exact_mut(bl.width));
        if l == 6 {
            let inv = &mut tree_inv[36 * t as usize..36 * (t as usize + 1)];
            tree_inv_of[t as usize].update(fact, s, inv, stamp);
            for (x, y) in rows {
                // column by column: each entry's sum in the order of `dot` (from -0.0, as
                // `Sum` of f64), all six at once
                let y = &mut y[c..c + 6];
                y.fill(-0.0);
                for (inv_k, &xk) in inv.chunks_exact(6).zip(&x[c..c + 6]) {
                    for (yr, &a) in y.iter_mut().zip(inv_k) {
                        *yr += a * xk;
                    }
                }
            }
        } else if l == 1 {
            // one dof on the universe (a pendulum): no ancestor, qH⁻¹ is 1 / D
            let d = fact.d(s);
            for (x, y) in rows {
                y[c] = x[c] / d;
            }
        } else if copied {
            for y in mj.chunks_exact_mut(bl.width) {
                solve_tree(fact, &mut y[c..c + l], s);
            }
        } else {
            for (x, y) in rows {
                y[c..c + l].copy_from_slice(&x[c..c + l]);
                solve_tree(fact, &mut y[c..c + l], s);
            }
        }
    }
}

/// `mj = J scale` for a `3 x W` block (row-major): each entry one product, what the dense
/// product with a diagonal inverse sums to (its other terms are zeros).
#[inline]
fn scale_columns<const W: usize>(j: &[f64], mj: &mut [f64], scale: &[f64; 12]) {
    let x: &[[f64; W]; 3] = j[..3 * W].as_chunks::<W>().0.try_into().expect("3 rows");
    let y: &mut [[f64; W]; 3] = mj[..3 * W].as_chunks_mut::<W>().0.try_into().expect("3 rows");
    for (xr, yr) in x.iter().zip(y.iter_mut()) {
        for k in 0..W {
            yr[k] = scale[k] * xr[k];
        }
    }
}

/// The lower triangle `[W00, W10, W11, W20, W21, W22]` of a 3-row block's `W_ii = J (qH⁻¹
/// Jᵀ)ᵀ` from its `J` and `qH⁻¹ Jᵀ` (`3 x W`, row-major), in one pass over the columns, each
/// sum in `dot`'s order (from -0.0). Fixed `W`: unrolled, no bounds checks.
#[inline]
fn contact_w<const W: usize>(j: &[f64], mj: &[f64]) -> [f64; 6] {
    let [j0, j1, j2]: &[[f64; W]; 3] = j[..3 * W].as_chunks::<W>().0.try_into().expect("3 rows");
    let [m0, m1, m2]: &[[f64; W]; 3] = mj[..3 * W].as_chunks::<W>().0.try_into().expect("3 rows");
    let mut acc = [-0.0; 6];
    for k in 0..W {
        acc[0] += j0[k] * m0[k];
        acc[1] += j1[k] * m0[k];
        acc[2] += j1[k] * m1[k];
        acc[3] += j2[k] * m0[k];
        acc[4] += j2[k] * m1[k];
        acc[5] += j2[k] * m2[k];
    }
    acc
}

/// [`contact_w`] for any width `wd`.
fn contact_w_any(j: &[f64], mj: &[f64], wd: usize) -> [f64; 6] {
    let mut acc = [-0.0; 6];
    for k in 0..wd {
        let (j0, j1, j2) = (j[k], j[wd + k], j[2 * wd + k]);
        let (m0, m1, m2) = (mj[k], mj[wd + k], mj[2 * wd + k]);
        acc[0] += j0 * m0;
        acc[1] += j1 * m0;
        acc[2] += j1 * m1;
        acc[3] += j2 * m0;
        acc[4] += j2 * m1;
        acc[5] += j2 * m2;
    }
    acc
}

/// What a six-dof tree's kept `qH⁻¹` ([`Problem::prepare`]) was formed from: the bits of the
/// tree's factors (its rows of L and its D, at most 15 + 6), and whether the inverse is
/// diagonal. Workspace: a new or cloned problem forms the inverse again on first use.
#[derive(Clone, Copy, Debug, Default)]
struct TreeInverse {
    /// The factors' bits, as many as `len`.
    key: [u64; 21],
    /// Entries of `key` in use; 0: nothing formed yet.
    len: usize,
    /// The inverse's off-diagonal entries are all zero.
    diagonal: bool,
    /// The [`Problem::prepare`] call that last checked it (once per call is enough).
    checked: u64,
}

impl TreeInverse {
    /// Makes `inv` (column-major 6 x 6) the inverse of the tree at dofs `s..s + 6` of `fact`
    /// unless it already is (same factor bits; checked once per `stamp`, the prepare call);
    /// returns whether it is diagonal.
    fn update(&mut self, fact: &Factorization, s: usize, inv: &mut [f64], stamp: u64) -> bool {
        if self.checked == stamp && self.len > 0 {
            return self.diagonal;
        }
        self.checked = stamp;
        let mut key = [0u64; 21];
        let mut len = 0;
        for k in s..s + 6 {
            let (_, l) = fact.row(k);
            for &x in l.iter().chain([&fact.d(k)]) {
                if len < key.len() {
                    key[len] = x.to_bits();
                }
                len += 1;
            }
        }
        if len == self.len && len <= key.len() && key[..len] == self.key[..len] {
            return self.diagonal;
        }
        inv.fill(0.0);
        for col in 0..6 {
            inv[7 * col] = 1.0;
        }
        solve_tree_columns::<6>(fact, inv, s);
        self.diagonal = (0..36).all(|i| i % 7 == 0 || inv[i] == 0.0);
        // a tree with more factors than the key holds (none of six dofs has) is never kept
        (self.key, self.len) = (key, if len <= key.len() { len } else { 0 });
        self.diagonal
    }
}

/// Solves `qH x = b` for an `x` that is zero outside one tree (its dofs `s..s + x.len()`):
/// the tree's ancestors all lie in it, so the LᵀDL solve runs over its dofs only.
fn solve_tree(f: &Factorization, x: &mut [f64], s: usize) {
    let n = x.len();
    for k in (0..n).rev() {
        let xk = x[k];
        if xk != 0.0 {
            let (anc, l) = f.row(s + k);
            for (&a, &lv) in anc.iter().zip(l) {
                x[a - s] -= lv * xk;
            }
        }
    }
    for (k, xk) in x.iter_mut().enumerate() {
        *xk /= f.d(s + k);
    }
    for k in 0..n {
        let (anc, l) = f.row(s + k);
        let mut acc = x[k];
        for (&a, &lv) in anc.iter().zip(l) {
            acc -= lv * x[a - s];
        }
        x[k] = acc;
    }
}

/// [`solve_tree`] of each of the `x.len() / N` columns of `x` (each `N` long, column-major)
/// over tree dofs `s..s + N`: the factor's rows are looked up once for all of them, and each
/// column's arithmetic is that of [`solve_tree`] alone.
fn solve_tree_columns<const N: usize>(f: &Factorization, x: &mut [f64], s: usize) {
    for k in (0..N).rev() {
        let (anc, lk) = f.row(s + k);
        for col in x.chunks_exact_mut(N) {
            let xk = col[k];
            if xk != 0.0 {
                for (&a, &lv) in anc.iter().zip(lk) {
                    col[a - s] -= lv * xk;
                }
            }
        }
    }
    for k in 0..N {
        let d = f.d(s + k);
        for col in x.chunks_exact_mut(N) {
            col[k] /= d;
        }
    }
    for k in 0..N {
        let (anc, lk) = f.row(s + k);
        for col in x.chunks_exact_mut(N) {
            let mut acc = col[k];
            for (&a, &lv) in anc.iter().zip(lk) {
                acc -= lv * col[a - s];
            }
            col[k] = acc;
        }
    }
}

/// The inverse of a symmetric positive definite 3 x 3 matrix, or zeros when it is singular
/// (relative to its diagonal).
fn inverse3(w: &[f64; 9]) -> [f64; 9] {
    let c00 = w[4] * w[8] - w[5] * w[7];
    let c01 = w[5] * w[6] - w[3] * w[8];
    let c02 = w[3] * w[7] - w[4] * w[6];
    let det = w[0] * c00 + w[1] * c01 + w[2] * c02;
    let scale = w[0] * w[4] * w[8];
    // a NaN determinant counts as singular too
    if det.is_nan() || det <= 1e-9 * scale || scale <= 0.0 {
        return [0.0; 9];
    }
    let inv = 1.0 / det;
    [
        c00 * inv,
        (w[2] * w[7] - w[1] * w[8]) * inv,
        (w[1] * w[5] - w[2] * w[4]) * inv,
        c01 * inv,
        (w[0] * w[8] - w[2] * w[6]) * inv,
        (w[2] * w[3] - w[0] * w[5]) * inv,
        c02 * inv,
        (w[1] * w[6] - w[0] * w[7]) * inv,
        (w[0] * w[4] - w[1] * w[3]) * inv,
    ]
}

impl Settings {
    /// The settings of the engine's solver: its sweep cap and tolerance, exact solves under
    /// `solver: auto`.
    pub fn of(e: &crate::scene::EngineParams) -> Settings {
        Settings {
            max_iterations: e.max_iterations,
            tolerance: e.tolerance,
            exact: e.solver == crate::scene::SolverKind::Auto,
            direct_max_rows: e.direct_max_rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse3_inverts_and_refuses_singular_blocks() {
        let w = [4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0];
        let i = inverse3(&w);
        for r in 0..3 {
            for c in 0..3 {
                let x: f64 = (0..3).map(|k| w[3 * r + k] * i[3 * k + c]).sum();
                assert!((x - f64::from(u8::from(r == c))).abs() < 1e-12);
            }
        }
        assert_eq!(inverse3(&[1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]), [0.0; 9]);
    }
}
