//! Prepare: what the sweeps and the exact solves read of a problem, formed once per problem
//! from its `J` and the factors of qH: `qH⁻¹ Jᵀ` of every block (tree by tree: qH is
//! block-diagonal over trees), the diagonal of `W = J qH⁻¹ Jᵀ` and each block's `W_ii` (and
//! its inverse for contacts). Free bodies keep their 6 x 6 `qH⁻¹` in the workspace from step
//! to step ([`TreeInverse`]).

use karakuri::linalg::Factorization;

use super::kernels::{contact_w, contact_w_any, contact_w_runs, dot, inverse3, lanes_to_rows, rows_to_lanes, scale_columns, solve_tree, solve_tree_batch, solve_tree_columns, BATCH};
use super::problem::{Block, Problem, Run, Trees, NONE};
use super::workspace::{TreeInverse, Workspace};

impl Problem {
    /// `qH⁻¹ Jᵀ` of every block into `mj`, the diagonal of W and each block's `W_ii` (and its
    /// inverse for contacts). Reads `fact` and `j`; writes `mj` (every entry of the blocks'
    /// range), `diag`, `wii`, `winv`, the free bodies' inverses in `work` when their factors
    /// changed, and counts the call in `work` (the name of this preparation, see
    /// `Problem::prepared`).
    ///
    /// A free body (a six-dof tree) applies its 6 x 6 `qH⁻¹`, kept from step to step while
    /// its factors are bit for bit the same; when that inverse is diagonal (the body frame at
    /// the centre of mass on principal axes: a box, a ball) each entry is one product, the
    /// dense sum's only non-zero term.
    pub fn prepare(&mut self, fact: &Factorization, work: &mut Workspace) {
        // every entry of `mj` is written below, from `j` (no copy of `j` first); with `copied`
        // (a block not a contact on free bodies) the tree solves go through `solve_batched`
        let copied = self.blocks.iter().any(|bl| !free_contact(bl));
        self.mj.resize(self.j.len(), 0.0);
        self.diag.clear();
        self.wii.clear();
        self.winv.clear();
        work.prepared = work.prepared.wrapping_add(1);
        self.prepared = work.prepared;
        let (tree_inv, tree_inv_of, stamp) = (&mut work.tree_inv, &mut work.tree_inv_of, work.prepared);
        for bl in self.blocks.iter().filter(|bl| bl.width > 0) {
            // (a block on no tree, an inactive limit's, has no `qH⁻¹ Jᵀ` to form)
            let (j, mj) = (
                &self.j[bl.off..bl.off + bl.n * bl.width],
                &mut self.mj[bl.off..bl.off + bl.n * bl.width],
            );
            block_mj(bl, (j, mj, copied), (&self.trees, fact), (&mut tree_inv[..], &mut tree_inv_of[..], stamp));
        }
        if copied {
            solve_batched(&self.blocks, &self.trees, fact, (&self.j, &mut self.mj), &mut work.batch);
        }
        for bl in &self.blocks {
            let (j, mj) = (&self.j[bl.off..bl.off + bl.n * bl.width], &self.mj[bl.off..bl.off + bl.n * bl.width]);
            let w = block_w(bl, (j, mj, &self.runs[bl.runs[0] as usize..bl.runs[1] as usize]), &mut self.diag);
            self.winv.push(if bl.n == 3 { inverse3(&w) } else { [0.0; 9] });
            self.wii.push(w);
        }
    }
}

/// A contact block on free bodies (three rows over one or two six-dof trees): the candidate
/// for the diagonal inverses' products and the sweep's packed layout.
#[inline(always)]
fn free_contact(bl: &Block) -> bool {
    bl.n == 3 && bl.n0 == 6 && (bl.width == 6 || bl.width == 12)
}

/// `qH⁻¹ Jᵀ` of block `bl` into `mj`: a contact on free bodies of diagonal inverses column by
/// column (column k of `mj` is `scale[k]` times column k of `j`), any other block by
/// [`general_mj`]. Makes the free bodies' kept inverses current (see [`TreeInverse`]).
#[inline(always)]
fn block_mj(
    bl: &Block,
    (j, mj, copied): (&[f64], &mut [f64], bool),
    (trees, fact): (&Trees, &Factorization),
    (tree_inv, tree_inv_of, stamp): (&mut [f64], &mut [TreeInverse], u64),
) {
    let candidate = free_contact(bl);
    let mut scale = [0.0; 12];
    let mut scaled = candidate;
    for (slot, t) in bl.trees.into_iter().enumerate().take(if candidate { 2 } else { 0 }) {
        if t == NONE {
            continue;
        }
        let (s, tu) = (trees.start[t as usize], t as usize);
        let inv = &mut tree_inv[36 * tu..36 * (tu + 1)];
        if tree_inv_of[tu].update(fact, s, inv, stamp) {
            for k in 0..6 {
                scale[6 * slot + k] = inv[7 * k];
            }
        } else {
            scaled = false;
        }
    }
    match (scaled, bl.width) {
        (true, 6) => scale_columns::<6>(j, mj, &scale),
        (true, 12) => scale_columns::<12>(j, mj, &scale),
        _ => general_mj(bl, (j, mj, copied), (trees, fact), (tree_inv, tree_inv_of, stamp)),
    }
}

/// Block `bl`'s `W_ii = J (qH⁻¹ Jᵀ)ᵀ` (row-major `n x n` in the leading entries) from its
/// `J`, `qH⁻¹ Jᵀ` and runs (`runs.rs`: a contact's sums over them where none is zero, the
/// same bits; a one-dof row's one product where not zero, record 0139; any other one-row
/// block's whole, cheaper than its runs as measured, record 0129); pushes its diagonal onto
/// `diag`.
#[inline(always)]
fn block_w(bl: &Block, (j, mj, runs): (&[f64], &[f64], &[Run]), diag: &mut Vec<f64>) -> [f64; 9] {
    let mut w = [0.0; 9];
    if bl.n == 3 {
        // a contact: the six entries of the lower triangle in one pass over the
        // columns, each sum in `dot`'s order (from -0.0), mirrored below
        let acc = match bl.width {
            6 => contact_w::<6>(j, mj),
            12 => contact_w::<12>(j, mj),
            wd => Some(runs)
                .filter(|r| !r.is_empty())
                .map(|r| contact_w_runs(j, mj, wd, r))
                .filter(|acc| acc.iter().all(|&x| x != 0.0))
                .unwrap_or_else(|| contact_w_any(j, mj, wd)),
        };
        w = [
            acc[0], acc[1], acc[3], //
            acc[1], acc[2], acc[4], //
            acc[3], acc[4], acc[5],
        ];
        diag.extend_from_slice(&[acc[0], acc[2], acc[5]]);
    } else if let (1, &[[c, _, 1]]) = (bl.n, runs) {
        // a one-dof row (a servo's, a joint friction's): `dot`'s sum is its one product
        // where that is not zero (the others `±0`, `runs.rs`), else the whole sum decides
        let x = Some(j[c as usize] * mj[c as usize]).filter(|&x| x != 0.0).unwrap_or_else(|| dot(j, mj));
        w[0] = x;
        diag.push(x);
    } else {
        for r in 0..bl.n {
            for q in 0..=r {
                let x = dot(&j[r * bl.width..(r + 1) * bl.width], &mj[q * bl.width..(q + 1) * bl.width]);
                w[r * bl.n + q] = x;
                w[q * bl.n + r] = x;
            }
            diag.push(w[r * bl.n + r]);
        }
    }
    w
}

/// `qH⁻¹ Jᵀ` of block `bl` (its `J` rows `j`; `copied`: its articulated trees are left to [`solve_batched`]) into `mj`,
/// tree by tree (the pieces are apart:
/// the order does not change a bit): a free body through its kept inverse in `tree_inv`
/// (made current first, see [`TreeInverse`]), a one-dof tree on the universe by `1 / D`, any
/// other tree by its LᵀDL solve (with `copied`, later, by [`solve_batched`]).
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
            // solved with the other rows on the tree: `solve_batched`
        } else {
            for (x, y) in rows {
                y[c..c + l].copy_from_slice(&x[c..c + l]);
                solve_tree(fact, &mut y[c..c + l], s);
            }
        }
    }
}

/// The LᵀDL solves [`general_mj`] left (with `copied`), from `j` into `mj`: every row piece of a
/// block on a tree of more than six dofs and more than one (an articulated robot), taken
/// [`BATCH`] pieces of one tree at a time into `batch` (dof-major) and solved together by
/// [`solve_tree_batch`], each piece's arithmetic that of [`solve_tree`] alone.
fn solve_batched(blocks: &[Block], trees: &Trees, fact: &Factorization, (j, mj): (&[f64], &mut [f64]), batch: &mut [f64]) {
    // the pieces gathered: their offsets in `j` and `mj`, and their tree
    let mut at = [0usize; BATCH];
    let (mut nb, mut tree) = (0, NONE);
    for bl in blocks {
        for (slot, t) in bl.trees.into_iter().enumerate() {
            if t == NONE {
                continue;
            }
            let l = trees.len[t as usize];
            // a free body's and a one-dof tree's pieces were done by `general_mj`
            if l == 1 || l == 6 {
                continue;
            }
            let c = if slot == 0 { 0 } else { bl.n0 };
            for r in 0..bl.n {
                if nb == BATCH || (nb > 0 && t != tree) {
                    flush(trees, fact, tree, (j, mj), batch, &at[..nb]);
                    nb = 0;
                }
                tree = t;
                assert!(nb < BATCH);
                at[nb] = bl.off + r * bl.width + c;
                nb += 1;
            }
        }
    }
    if nb > 0 {
        flush(trees, fact, tree, (j, mj), batch, &at[..nb]);
    }
}

/// Solves the pieces at offsets `at` of `j` (tree `t`, `at.len()` of them) in `batch` and
/// writes them at the same offsets in `mj`.
fn flush(trees: &Trees, fact: &Factorization, t: u32, (j, mj): (&[f64], &mut [f64]), batch: &mut [f64], at: &[usize]) {
    let (s, l) = (trees.start[t as usize], trees.len[t as usize]);
    let batch = &mut batch[..l * BATCH];
    rows_to_lanes(j, at, l, batch, BATCH);
    // the lanes computed but not in use hold zeros (no stale numbers growing from batch to
    // batch): up to 8 or 16 (see `solve_tree_batch`)
    let lanes = if at.len() <= 8 { 8 } else { BATCH };
    if at.len() < lanes {
        for row in batch.chunks_exact_mut(BATCH) {
            row[at.len()..lanes].fill(0.0);
        }
    }
    solve_tree_batch(fact, batch, s, at.len());
    lanes_to_rows(batch, BATCH, mj, at, l);
}

impl TreeInverse {
    /// Makes `inv` (column-major 6 x 6) the inverse of the tree at dofs `s..s + 6` of `fact`
    /// unless it already is (same factor bits; checked once per `stamp`, the prepare call);
    /// returns whether it is diagonal.
    pub(super) fn update(&mut self, fact: &Factorization, s: usize, inv: &mut [f64], stamp: u64) -> bool {
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
