//! Islands: sets of trees linked by blocks (the static world links nothing). Islands are
//! independent problems: each is iterated until it alone converges, so a settled island costs
//! one or two sweeps while an active one iterates. Islands are numbered in the order of their
//! first block and blocks keep their order inside an island, so the result does not depend on
//! anything but the rows (deterministic).

use super::problem::{Problem, NONE};
use super::workspace::Islands;

impl Islands {
    /// Numbers the islands of `p`: union-find over the trees linked by blocks, islands in the
    /// order of their first block, `order` the blocks island by island (their order kept),
    /// `start` where each island begins in it. Reads `p`'s trees and blocks; writes every
    /// field.
    pub(super) fn number(&mut self, p: &Problem) {
        let nt = p.trees.start.len();
        self.uf.clear();
        self.uf.extend(0..nt as u32);
        for bl in &p.blocks {
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
        for bl in &p.blocks {
            let t = bl.trees[0];
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
        self.count = islands as usize;
        self.sort_blocks();
    }

    /// `order` and `start` from `block_island` and `count`: a counting sort of the blocks by
    /// island (stable). Uses `uf` as each island's fill position.
    fn sort_blocks(&mut self) {
        let islands = self.count;
        self.start.clear();
        self.start.resize(islands + 1, 0);
        for &i in &self.block_island {
            if i != NONE {
                self.start[i as usize + 1] += 1;
            }
        }
        for i in 0..islands {
            self.start[i + 1] += self.start[i];
        }
        self.order.clear();
        self.order.resize(self.start[islands], 0);
        // uf is free again: use it as each island's fill position
        self.uf.clear();
        self.uf.extend(self.start[..islands].iter().map(|&s| s as u32));
        for (bi, &i) in self.block_island.iter().enumerate() {
            if i != NONE {
                let p = &mut self.uf[i as usize];
                self.order[*p as usize] = bi as u32;
                *p += 1;
            }
        }
    }
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
