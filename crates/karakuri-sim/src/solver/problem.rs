//! The problem: **blocks** of rows over the kinematic trees they touch, with their Jacobian
//! `J`, targets `b`, row kinds and warm start, and what [`Problem::prepare`] forms of them.
//!
//! * A *tree* is the subtree of one child of the universe (a free body, a robot): a contiguous
//!   range of dofs, and M (so qH) is block-diagonal over trees.
//! * A *block* is a contact (its normal and two friction rows, or the normal alone) or one
//!   other row (loop, limit, velocity servo). It touches at most two trees, and its Jacobian
//!   `J` and `qH⁻¹ Jᵀ` are stored only over them (`rows x width`, `width` the two trees' dof
//!   counts): a contact between two free bodies is 3 x 12 numbers, never 3 x nv.

use karakuri::constraints::rows::{RowLayout, RowSink};
use karakuri::Model;

use super::kernels::dot;
use super::rows::{ensure, RowKind};

/// A run of a block's columns (`runs.rs`): columns `column..column + length` of the block, dofs
/// `dof..dof + length` of `v` (`[column, dof, length]`); a run never crosses from one tree to
/// the other.
pub(super) type Run = [u32; 3];

/// No tree (a block side on the static world, an unused slot).
pub const NONE: u32 = u32::MAX;

/// The kinematic trees of a world model (read-only after [`Trees::new`]).
#[derive(Clone, Debug, Default)]
pub struct Trees {
    /// First dof of each tree `(trees)`.
    pub start: Vec<usize>,
    /// Number of dofs of each tree `(trees)`.
    pub len: Vec<usize>,
    /// The tree of each joint, [`NONE`] for the universe `(njoints)`.
    pub of_joint: Vec<u32>,
    /// Where each joint's chain begins in `chain` `(njoints + 1)` (see `runs.rs`).
    pub(super) chain_at: Vec<u32>,
    /// The joints' chains to the root as runs `[column, length]` of their trees' columns.
    pub(super) chain: Vec<[u32; 2]>,
    /// The most runs of one chain.
    pub(super) max_chain: usize,
}

impl Trees {
    /// The trees of `model`: each child of the universe with its subtree, as a range of dofs.
    /// A model numbered depth-first has one range per root; where joints are not (a static
    /// body's children become roots after the bodies before them), roots whose ranges overlap
    /// share one tree, so that every tree is one contiguous range of whole subtrees.
    pub fn new(model: &Model) -> Trees {
        let mut t = Trees {
            of_joint: vec![NONE; model.njoints],
            ..Trees::default()
        };
        for j in 1..model.njoints {
            let p = model.parents[j];
            if p == 0 {
                let (start, end) = (model.idx_v[j], model.subtree_end_v[j]);
                match (t.start.last(), t.len.last_mut()) {
                    // overlaps the last tree's range: the same tree, widened
                    (Some(&s0), Some(l0)) if start < s0 + *l0 => *l0 = (*l0).max(end - s0),
                    _ => {
                        t.start.push(start);
                        t.len.push(end - start);
                    }
                }
                t.of_joint[j] = t.start.len() as u32 - 1;
            } else {
                t.of_joint[j] = t.of_joint[p];
            }
        }
        t.form_chains(model);
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
/// and `qH⁻¹ Jᵀ` at `off` in [`Problem::j`] / `Problem::mj`, `n x width` row-major with the
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
    /// Its runs of columns (`[first, end)` in the problem's runs, see `runs.rs`; empty: read
    /// it whole).
    pub runs: [u32; 2],
    /// Read whole: its runs were dropped (written other than by the writer, or covering
    /// every column); the writer adds none.
    pub whole: bool,
}

/// The constraint problem of a step (see the module documentation): what is solved, never
/// written by a solve. Built by the constraint stage (every row through
/// [`Problem::push_block`], written by the core's row writer through [`BlockRows`] or, for
/// a single dof's row, [`Problem::push_dof_row`]), then [`Problem::prepare`] forms `qH⁻¹ Jᵀ` and the blocks' `W_ii`,
/// and [`Problem::solve`] writes a `Solution` (through a `Workspace`).
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
    /// Warm start: the impulses a solve starts from `(rows)`.
    pub warm: Vec<f64>,
    /// With the warm start: whether the last solve of these rows kept an active-set try on a
    /// robot island, so this one tries before its first sweep (record 0128); the caller
    /// carries it from the last [`Solution::try_first`](super::Solution::try_first) (the
    /// engine's state, so a restored state solves as the run it came from). Kept by `clear`.
    pub try_first: bool,
    /// The blocks' Jacobians (see [`Block`]).
    pub j: Vec<f64>,
    /// The blocks' `qH⁻¹ Jᵀ`, same layout (formed by [`Problem::prepare`]).
    pub(super) mj: Vec<f64>,
    /// Diagonal of W `(rows)` (formed by [`Problem::prepare`]).
    pub(super) diag: Vec<f64>,
    /// Each block's `W_ii` (row-major `n x n` in the leading entries) `(blocks)` (formed by
    /// [`Problem::prepare`]).
    pub(super) wii: Vec<[f64; 9]>,
    /// Each 3-row block's `W_ii⁻¹` (zeros: singular, the block goes row by row) `(blocks)`
    /// (formed by [`Problem::prepare`]).
    pub(super) winv: Vec<[f64; 9]>,
    /// The workspace's count of prepare calls when this problem was last prepared (0: not
    /// since it was cleared): names the sweep layout formed from it.
    pub(super) prepared: u64,
    /// The blocks' runs of columns, noted by the row writer as it writes `j` (see `runs.rs`
    /// and [`Block::runs`]: a writer of `j` other than [`BlockRows`], [`Problem::sink`] and
    /// [`Problem::push_dof_row`] goes through [`Problem::j_block_mut`]).
    pub(super) runs: Vec<Run>,
}

impl Problem {
    /// An empty problem over `model`'s trees.
    pub fn new(model: &Model) -> Problem {
        Problem {
            trees: Trees::new(model),
            ..Problem::default()
        }
    }

    /// Makes room for `blocks` blocks of `rows` rows in all (so the steps that stay within
    /// allocate nothing).
    pub fn reserve(&mut self, blocks: usize, rows: usize) {
        let w = 2 * self.trees.max_len();
        ensure(&mut self.blocks, blocks);
        ensure(&mut self.wii, blocks);
        ensure(&mut self.winv, blocks);
        for v in [&mut self.b, &mut self.warm, &mut self.diag] {
            ensure(v, rows);
        }
        ensure(&mut self.kind, rows);
        ensure(&mut self.runs, 2 * blocks * self.trees.max_chain);
        ensure(&mut self.j, rows * w);
        ensure(&mut self.mj, rows * w);
    }

    /// Removes every block.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.kind.clear();
        self.b.clear();
        self.warm.clear();
        self.diag.clear();
        self.j.clear();
        self.wii.clear();
        self.winv.clear();
        self.runs.clear();
        self.prepared = 0;
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.b.len()
    }

    /// Appends a block of `kinds.len()` rows over trees `ta`, `tb` (either may be [`NONE`];
    /// equal trees are one) with targets `b` and warm impulses `warm`, its Jacobian zero;
    /// returns its index. Fill it through [`Problem::j_block_mut`].
    #[inline]
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
            runs: [self.runs.len() as u32; 2],
            whole: false,
        };
        self.kind.extend_from_slice(kinds);
        self.b.extend_from_slice(b);
        self.warm.extend_from_slice(warm);
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
        self.warm.truncate(rows);
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

    /// Block `bi`'s Jacobian, `n x width` row-major (the block is read whole from now on).
    pub fn j_block_mut(&mut self, bi: usize) -> &mut [f64] {
        self.drop_runs(bi);
        let bl = self.blocks[bi];
        &mut self.j[bl.off..bl.off + bl.n * bl.width]
    }

    /// `J_r · v` for row `r` of block `bi` (`v` over all dofs).
    pub fn row_dot(&self, bi: usize, r: usize, v: &[f64]) -> f64 {
        let bl = &self.blocks[bi];
        let runs = self.runs_of(bl);
        if !runs.is_empty() {
            if let Some(x) = self.row_dot_runs(bl, r, runs, v) {
                return x;
            }
        }
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
        let runs = self.runs_of(bl);
        if !runs.is_empty() {
            if let Some(x) = self.block_dots_runs(bl, runs, v) {
                return x;
            }
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
                _ => block_dots_any(bl, vals, v0, v1),
            };
        }
        block_dots_any(bl, vals, v0, v1)
    }

    /// Block `bi`'s first `N` rows over the columns of `joint`'s tree, for the core's row
    /// writer (None for the universe).
    #[inline(always)]
    pub fn sink<const N: usize>(&mut self, bi: usize, joint: usize) -> Option<RowSink<'_, N>> {
        let t = self.trees.of_joint[joint];
        if t == NONE {
            return None;
        }
        let (first, len) = (self.trees.start[t as usize], self.trees.len[t as usize]);
        let bl = self.blocks[bi];
        let col0 = if bl.trees[0] == t {
            0
        } else {
            assert_eq!(bl.trees[1], t, "the block is over the joint's tree");
            bl.n0
        };
        self.note_chain(bi, joint, col0, first);
        // the first N rows, each cut to the tree's columns (no division by the width)
        let mut rest = &mut self.j[bl.off..bl.off + N * bl.width];
        let rows = std::array::from_fn(|_| {
            let (row, tail) = std::mem::take(&mut rest).split_at_mut(bl.width);
            rest = tail;
            &mut row[col0..col0 + len]
        });
        Some(RowSink { rows, first })
    }

    /// Appends a one-row block `coef · v_dof` over the dof's tree (a limit, servo or
    /// joint-friction row); returns its row.
    pub fn push_dof_row(&mut self, kind: RowKind, b: f64, warm: f64, (dof, coef): (usize, f64)) -> usize {
        let t = self.trees.of_dof(dof);
        let bi = self.push_block(&[kind], t, NONE, &[b], &[warm]);
        let bl = self.blocks[bi];
        let c = dof - self.trees.start[t as usize];
        self.j[bl.off + c] = coef;
        if bl.width > 1 {
            // its one column, the run the writer would note
            self.runs.push([c as u32, dof as u32, 1]);
            self.blocks[bi].runs[1] += 1;
        }
        bl.row
    }

    /// Drops the trees of the last block, a one-row block, on which its Jacobian is zero (a
    /// loop row that does not move one of its bodies gets no impulse there: the block is the
    /// one [`Problem::push_dense_row`] makes of the same row).
    pub fn trim_last(&mut self) {
        let bi = self.blocks.len().checked_sub(1).expect("a block");
        let bl = self.blocks[bi];
        debug_assert_eq!(bl.n, 1);
        let vals = &self.j[bl.off..bl.off + bl.width];
        let moves = |t: u32, v: &[f64]| t != NONE && v.iter().any(|&x| x != 0.0);
        let keep = [moves(bl.trees[0], &vals[..bl.n0]), moves(bl.trees[1], &vals[bl.n0..])];
        let n1 = bl.width - bl.n0;
        if keep != [true, true] {
            // (its columns move: read whole)
            self.drop_runs(bi);
        }
        let bl = &mut self.blocks[bi];
        match keep {
            [true, true] => return,
            [true, false] => (bl.trees[1], bl.width) = (NONE, bl.n0),
            [false, true] => {
                self.j.copy_within(bl.off + bl.n0..bl.off + bl.width, bl.off);
                (bl.trees, bl.n0, bl.width) = ([bl.trees[1], NONE], n1, n1);
            }
            [false, false] => (bl.trees, bl.n0, bl.width) = ([NONE, NONE], 0, 0),
        }
        self.j.truncate(bl.off + bl.width);
    }

    /// Appends the row `jr` (dense over nv) as a one-row block over the trees where it is not
    /// zero (a row touching none gets no impulse); returns its row.
    pub fn push_dense_row(&mut self, kind: RowKind, b: f64, warm: f64, jr: &[f64]) -> usize {
        let (mut ta, mut tb) = (NONE, NONE);
        for (t, (&s, &l)) in self.trees.start.iter().zip(&self.trees.len).enumerate() {
            if jr[s..s + l].iter().any(|&x| x != 0.0) {
                debug_assert!(tb == NONE, "a row over more than two trees");
                (ta, tb) = if ta == NONE { (t as u32, NONE) } else { (ta, t as u32) };
            }
        }
        let bi = self.push_block(&[kind], ta, tb, &[b], &[warm]);
        let bl = self.blocks[bi];
        for (slot, t) in bl.trees.into_iter().enumerate().filter(|&(_, t)| t != NONE) {
            let (s, l) = (self.trees.start[t as usize], self.trees.len[t as usize]);
            let c = if slot == 0 { 0 } else { bl.n0 };
            self.j[bl.off + c..bl.off + c + l].copy_from_slice(&jr[s..s + l]);
        }
        bl.row
    }

    /// Appends copies of `from`'s blocks `blocks` (a problem over the same trees); returns the
    /// first new row.
    pub fn push_copies(&mut self, from: &Problem, blocks: std::ops::Range<usize>) -> usize {
        let first = self.rows();
        for bl in &from.blocks[blocks] {
            let r = bl.row..bl.row + bl.n;
            let bi = self.push_block(&from.kind[r.clone()], bl.trees[0], bl.trees[1], &from.b[r.clone()], &from.warm[r]);
            let to = self.blocks[bi];
            self.j[to.off..to.off + bl.n * bl.width].copy_from_slice(&from.j[bl.off..bl.off + bl.n * bl.width]);
            // the same columns over the same trees: the same runs
            self.runs.extend_from_slice(from.runs_of(bl));
            let new = &mut self.blocks[bi];
            (new.runs[1], new.whole) = (self.runs.len() as u32, bl.whole);
        }
        first
    }
}

/// The compact layout of the core's row writer: block `block` of `problem`, each side over
/// its tree's columns.
pub struct BlockRows<'a> {
    /// The problem.
    pub problem: &'a mut Problem,
    /// The block.
    pub block: usize,
}

impl<const N: usize> RowLayout<N> for BlockRows<'_> {
    #[inline]
    fn sink(&mut self, joint: usize) -> Option<RowSink<'_, N>> {
        self.problem.sink(self.block, joint)
    }
}

/// A block row (compact, `width`) dotted with a vector over all dofs.
#[inline]
pub(super) fn piece_dot(trees: &Trees, bl: &Block, row: &[f64], v: &[f64]) -> f64 {
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

/// The rows of block `bl` (its values `vals`, `n x width` row-major) dotted with the trees'
/// slices `v0`, `v1` of a vector: row by row, each sum in
/// `dot`'s order (from -0.0); rows beyond `n` are 0 (see [`super::Problem::block_dots`]).
fn block_dots_any(bl: &Block, vals: &[f64], v0: &[f64], v1: Option<&[f64]>) -> [f64; 3] {
    // row by row over the columns `c0..c0 + v.len()`: each sum in `dot`'s order (from -0.0),
    // the rows' sums independent of each other (one slice a row: no bounds checks inside)
    let sums = |c0: usize, v: &[f64]| {
        let mut acc = [-0.0; 3];
        for (r, a) in acc.iter_mut().enumerate().take(bl.n) {
            let row = &vals[r * bl.width + c0..r * bl.width + c0 + v.len()];
            *a = row.iter().zip(v).fold(-0.0, |s, (x, y)| s + x * y);
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
