//! The columns of each block's `J` that its rows can touch, as runs of consecutive dofs, kept
//! by the row writer as it writes them (record 0129), and the row sums over them. A block's `J`
//! is stored over its trees' whole dofs (`width` columns), but a robot's rows touch few: a
//! servo's row one dof of TALOS's 38, a foot's contact the base and its leg (the writer's walk
//! from the body to the root, [`Trees`]' chains). The sweep's row velocities (`J v`), the row
//! products of [`Problem::row_dot`] and [`Problem::block_dots`] and prepare's `W_ii` read only
//! the runs; a block whose runs are empty is read whole (its runs cover every column, or it
//! was written other than by the writer: [`Problem::j_block_mut`]).
//!
//! *The same bits* (record 0126). A column outside the runs is zero in every row, so its
//! product is `±0` (the other factor finite). Adding `±0` to a sum changes it only when the
//! sum is zero (then at most its sign). A sum from `+0` is never `−0` (round to nearest: `x +
//! y = −0` only for `x = y = −0`), so the sweep's sums over the runs are bit for bit its sums
//! over all columns. A sum from `−0` (`dot`'s) may end `−0` where the whole one ends `+0`: one
//! over the runs and the whole one are equal or both zero, so a zero result is summed again
//! over every column.

use karakuri::Model;

use super::problem::{Block, Problem, Run, Trees, NONE};

impl Trees {
    /// Each joint's chain to the root (the dofs the row writer writes for a body on it) as runs
    /// `[column, length]` of its tree's columns, ascending: `chain[chain_at[j]..chain_at[j + 1]]`.
    pub(super) fn form_chains(&mut self, model: &Model) {
        self.chain_at = Vec::with_capacity(model.njoints + 1);
        self.chain.clear();
        let mut cols: Vec<(usize, usize)> = Vec::new();
        for j in 0..model.njoints {
            let at = self.chain.len();
            self.chain_at.push(at as u32);
            let t = self.of_joint[j];
            if t == NONE {
                continue;
            }
            let s = self.start[t as usize];
            cols.clear();
            let mut a = j;
            while a > 0 {
                if model.nvs[a] > 0 {
                    cols.push((model.idx_v[a] - s, model.nvs[a]));
                }
                a = model.parents[a];
            }
            cols.sort_unstable();
            for &(c, n) in &cols {
                match self.chain[at..].last_mut() {
                    Some(r) if r[0] + r[1] == c as u32 => r[1] += n as u32,
                    _ => self.chain.push([c as u32, n as u32]),
                }
            }
        }
        self.chain_at.push(self.chain.len() as u32);
        self.max_chain = self.chain_at.windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0);
    }
}

impl Problem {
    /// Notes that the writer writes block `bi`'s columns `col0..` (its tree's, dof `first` at
    /// `col0`) of `joint`'s chain: adds them to the block's runs, in column order, merged.
    /// The runs of a block other than the last, or that cover every column, are dropped (the
    /// block is read whole).
    #[inline]
    pub(super) fn note_chain(&mut self, bi: usize, joint: usize, col0: usize, first: usize) {
        let bl = &mut self.blocks[bi];
        if bl.whole {
            return;
        }
        let at = bl.runs[0] as usize;
        if bl.runs[1] as usize != self.runs.len() {
            (bl.whole, bl.runs[1]) = (true, bl.runs[0]);
            return;
        }
        let fresh = at == self.runs.len();
        let chain = &self.trees.chain[self.trees.chain_at[joint] as usize..self.trees.chain_at[joint + 1] as usize];
        let (c0, d0) = (col0 as u32, first as u32);
        let mut covered = 0;
        for &[c, n] in chain {
            self.runs.push([c0 + c, d0 + c, n]);
            covered += n;
        }
        if !fresh {
            merge_runs(&mut self.runs, at, bl.n0);
            covered = self.runs[at..].iter().map(|r| r[2]).sum();
        }
        if covered as usize == bl.width {
            self.runs.truncate(at);
            bl.whole = true;
        }
        bl.runs[1] = self.runs.len() as u32;
    }

    /// Drops block `bi`'s runs: it is read whole from now on (written other than by the
    /// writer).
    #[inline]
    pub(super) fn drop_runs(&mut self, bi: usize) {
        let bl = &mut self.blocks[bi];
        if bl.runs[1] as usize == self.runs.len() {
            self.runs.truncate(bl.runs[0] as usize);
        }
        (bl.whole, bl.runs[1]) = (true, bl.runs[0]);
    }

    /// Block `bl`'s runs (empty: read it whole).
    #[inline(always)]
    pub(super) fn runs_of(&self, bl: &Block) -> &[Run] {
        &self.runs[bl.runs[0] as usize..bl.runs[1] as usize]
    }

    /// `J_r · v` of row `r` of block `bl` over its runs (`runs`, not empty), or `None` where
    /// the sum is zero (then [`Problem::row_dot`]'s whole sum decides its sign).
    #[inline(always)]
    pub(super) fn row_dot_runs(&self, bl: &Block, r: usize, runs: &[Run], v: &[f64]) -> Option<f64> {
        let row = &self.j[bl.off + r * bl.width..bl.off + (r + 1) * bl.width];
        let x = row_runs(row, bl.n0, runs, v);
        (x != 0.0).then_some(x)
    }

    /// [`Problem::block_dots`] over block `bl`'s runs (`runs`, not empty), or `None` where a
    /// row's sum is zero.
    #[inline]
    pub(super) fn block_dots_runs(&self, bl: &Block, runs: &[Run], v: &[f64]) -> Option<[f64; 3]> {
        match bl.n {
            1 => return Some([self.row_dot_runs(bl, 0, runs, v)?, 0.0, 0.0]),
            3 => {}
            _ => return None,
        }
        // the three rows in one pass, each tree's part from −0 (`row_runs`' sums)
        let (w, n0) = (bl.width, bl.n0);
        let j = &self.j[bl.off..bl.off + 3 * w];
        let mut acc = [[-0.0; 3]; 2];
        for &[c, d, n] in runs {
            let (c, d, n) = (c as usize, d as usize, n as usize);
            let part = &mut acc[usize::from(c >= n0)];
            let (j0, j1, j2) = (&j[c..c + n], &j[w + c..w + c + n], &j[2 * w + c..2 * w + c + n]);
            for (((&x, &a0), &a1), &a2) in v[d..d + n].iter().zip(j0).zip(j1).zip(j2) {
                part[0] += a0 * x;
                part[1] += a1 * x;
                part[2] += a2 * x;
            }
        }
        let out: [f64; 3] = std::array::from_fn(|r| acc[0][r] + acc[1][r]);
        out.iter().all(|&x| x != 0.0).then_some(out)
    }
}

/// Sorts the runs `runs[at..]` (a block's) by column and merges those that overlap or follow
/// on within one tree (`n0`: the first tree's columns).
#[cold]
fn merge_runs(runs: &mut Vec<Run>, at: usize, n0: usize) {
    let v = &mut runs[at..];
    v.sort_unstable_by_key(|r| r[0]);
    let side = |c: u32| (c as usize) < n0;
    let mut k = 0;
    for i in 1..v.len() {
        let r = v[i];
        let cur = &mut v[k];
        if side(r[0]) == side(cur[0]) && r[0] <= cur[0] + cur[2] {
            cur[2] = cur[2].max(r[0] + r[2] - cur[0]);
        } else {
            k += 1;
            v[k] = r;
        }
    }
    runs.truncate(at + k + 1);
}

/// `J v` of the three rows of contact block `bl` (its values `j`, `3 x width`) over `runs`,
/// each sum from `+0` over the columns in order: the sweep's sums over all columns.
#[inline(always)]
pub(super) fn dots3(j: &[f64], bl: &Block, runs: &[Run], v: &[f64]) -> [f64; 3] {
    let w = bl.width;
    let mut u = [0.0; 3];
    for &[c, d, n] in runs {
        let (c, d, n) = (c as usize, d as usize, n as usize);
        let (j0, j1, j2) = (&j[c..c + n], &j[w + c..w + c + n], &j[2 * w + c..2 * w + c + n]);
        for (q, &x) in v[d..d + n].iter().enumerate() {
            u[0] += j0[q] * x;
            u[1] += j1[q] * x;
            u[2] += j2[q] * x;
        }
    }
    u
}

/// Row `row` of a block (`n0` its first tree's columns) over `runs`: each tree's part summed
/// from `−0` as `dot` sums it, then added; equal to the whole row's sum unless zero (see the
/// module documentation).
#[inline(always)]
fn row_runs(row: &[f64], n0: usize, runs: &[Run], v: &[f64]) -> f64 {
    let (mut x0, mut x1) = (-0.0, -0.0);
    for &[c, d, n] in runs {
        let (c, d, n) = (c as usize, d as usize, n as usize);
        let part = if c < n0 { &mut x0 } else { &mut x1 };
        for (a, b) in row[c..c + n].iter().zip(&v[d..d + n]) {
            *part += a * b;
        }
    }
    x0 + x1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::kernels::dot;

    /// Sums over the runs give the sums over every column: the sweep's from `+0` bit for bit,
    /// `dot`'s whenever not zero; with zeros and `−0`s in `J` and `v`; and merged runs of two
    /// chains cover their union once.
    #[test]
    fn sums_over_the_runs_are_the_whole_sums() {
        let w = 38;
        let mut j = vec![0.0; 3 * w];
        for (c, x) in [(0, 0.5), (3, -1.25), (5, -0.0), (7, 2.0), (20, 0.125), (21, -3.0), (37, 1.5)] {
            j[c] = x;
            j[w + c] = -x * 0.5;
            j[2 * w + c] = if c % 2 == 0 { 0.0 } else { x };
        }
        let mut runs: Vec<Run> = vec![[20, 20, 2], [0, 0, 4], [37, 37, 1], [2, 2, 6]];
        merge_runs(&mut runs, 0, w);
        assert_eq!(runs, vec![[0, 0, 8], [20, 20, 2], [37, 37, 1]]);
        let bl = Block { row: 0, n: 3, trees: [0, NONE], n0: w, width: w, off: 0, resting: false, runs: [0, 3], whole: false };
        for v in [
            (0..w).map(|i| (i as f64 * 0.37).sin()).collect::<Vec<_>>(),
            (0..w).map(|i| if i % 3 == 0 { -0.0 } else { 0.0 }).collect(),
            (0..w).map(|i| if i == 7 { 1e-300 } else { -0.0 }).collect(),
        ] {
            let u = dots3(&j, &bl, &runs, &v);
            for (a, ua) in u.iter().enumerate() {
                let whole = j[a * w..(a + 1) * w].iter().zip(&v).fold(0.0, |s, (x, y)| s + x * y);
                assert_eq!(ua.to_bits(), whole.to_bits());
                let r = row_runs(&j[a * w..(a + 1) * w], w, &runs, &v);
                let d = dot(&j[a * w..(a + 1) * w], &v);
                assert!(r == d && (r == 0.0 || r.to_bits() == d.to_bits()));
            }
        }
    }
}
