//! The exact solve of a small island (at most [`EXACT_MAX_ROWS`](super::EXACT_MAX_ROWS)
//! rows): its dense `W` and `c = J v_free` ([`Dense::form`]), an active set over its
//! unilateral rows with each set solved by a semidefinite LDLᵀ ([`Solve::direct`]: the whole
//! frictionless island), and the subspace step of an island with friction that Gauss–Seidel
//! has not finished ([`Solve::subspace_step`]). Its scratch is the workspace's [`Dense`].

use karakuri::linalg::dense::ldlt_semidefinite_solve;

use super::cone::project_set;
use super::kernels::{add_rows, add_scaled, rows_to_lanes, w_lower};
use super::problem::{piece_dot, Block, Problem, Trees, NONE};
use super::rows::RowKind;
use super::workspace::{Dense, Solve};

/// Diagonal regularisation of the subspace step's `W_AA`, relative to W's largest diagonal
/// entry: of the many impulses of redundant rows (four corners of a face, their friction) it
/// picks the one of least norm, spread evenly, instead of a vertex of the solution set that
/// the friction cones would cut.
const REGULARIZATION: f64 = 1e-9;

/// Active sets a subspace step tries before it gives up (each one a factorisation).
const SUBSPACE_ACTIVE_SETS: usize = 8;

impl Solve<'_> {
    /// The island's exact frictionless solve (active set over its unilateral rows, each set
    /// by a semidefinite LDLᵀ that gives dependent rows no impulse); None when the set does
    /// not settle (Gauss–Seidel takes over). With `hold`, the friction and bounded rows keep
    /// their impulses (they enter the right-hand side) and only the others are solved for.
    /// Writes `lambda` and `vel` of the island, and `dense`.
    pub(super) fn direct(&mut self, s: usize, e: usize, v_free: &[f64], hold: bool) -> Option<usize> {
        let (p, b) = (self.p, self.b);
        let d = &mut self.work.dense;
        d.form(p, &self.work.islands.order[s..e], v_free);
        d.active_set_start(&p.kind, &self.sol.lambda, b, hold);
        let k = d.rows.len();
        let scale = self.scale.max(1e-300);
        let eps = if hold { REGULARIZATION * scale } else { 0.0 };
        let tries = if hold { SUBSPACE_ACTIVE_SETS } else { 3 * k + 10 };
        for it in 0..tries {
            d.solve_active_set(b, eps, scale);
            if d.drop_most_negative(&p.kind, hold, scale) || d.add_most_violated(b, scale) {
                continue;
            }
            if hold {
                d.project(&p.kind);
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
    /// active set of [`Solve::direct`], on `W_AA` slightly regularised), sliding friction and
    /// bounded rows held at their impulses; the friction is then projected on the new cones.
    /// Gauss–Seidel goes on from there.
    pub(super) fn subspace_step(&mut self, s: usize, e: usize, v_free: &[f64]) {
        let _ = self.direct(s, e, v_free, true);
    }

    /// Keeps the island's impulses in `dense.saved`.
    pub(super) fn save_island(&mut self, s: usize, e: usize) {
        gather_island(self.p, &self.work.islands.order[s..e], &self.sol.lambda, &mut self.work.dense.saved);
    }

    /// Puts back the impulses [`Solve::save_island`] kept (and `vel` with them).
    pub(super) fn restore_island(&mut self, s: usize, e: usize) {
        let d = &mut self.work.dense;
        std::mem::swap(&mut d.lambda, &mut d.saved);
        self.set_island(s, e);
        let d = &mut self.work.dense;
        std::mem::swap(&mut d.lambda, &mut d.saved);
    }

    /// Writes `dense.lambda` into the island's impulses and updates `vel` by the change.
    pub(super) fn set_island(&mut self, s: usize, e: usize) {
        let mut later = Later::new();
        let mut p = 0;
        for x in s..e {
            let bi = self.work.islands.order[x] as usize;
            let bl = self.p.blocks[bi];
            let mut delta = [0.0; 3];
            for r in 0..bl.n {
                delta[r] = self.work.dense.lambda[p] - self.sol.lambda[bl.row + r];
                if delta[r] != 0.0 {
                    self.sol.lambda[bl.row + r] = self.work.dense.lambda[p];
                }
                p += 1;
            }
            self.apply_later(&mut later, bi, &delta[..bl.n]);
        }
        self.apply_kept(&mut later);
    }

    /// [`Solve::apply`] of `delta[r]` on each row `r` of block `bi` (a zero skipped), its
    /// pieces on an articulated tree (more than six dofs) kept in `later` and applied
    /// together with the next ones on the same tree ([`Solve::apply_kept`]): each entry of
    /// `vel` takes the same terms in the same order as row by row (the same bits), the rows'
    /// pieces summed in registers ([`add_rows`]) instead of `vel` read and written for each.
    #[inline(always)]
    pub(super) fn apply_later(&mut self, later: &mut Later, bi: usize, delta: &[f64]) {
        let bl = &self.p.blocks[bi];
        let (t, w) = (bl.trees[0], bl.width);
        if bl.trees[1] == NONE && bl.n0 == w && w > 6 {
            // one articulated tree (a robot's row): every piece kept
            if later.n + bl.n > LATER || (later.n > 0 && (later.tree != t || later.w != w)) {
                self.apply_kept(later);
            }
            (later.tree, later.s, later.w) = (t, self.p.trees.start[t as usize], w);
            for (r, &l) in delta.iter().enumerate() {
                if l != 0.0 {
                    (later.off[later.n], later.lam[later.n]) = (bl.off + r * w, l);
                    later.n += 1;
                }
            }
            return;
        }
        for (r, &l) in delta.iter().enumerate() {
            if l != 0.0 {
                self.apply_piece_later(later, bi, r, l);
            }
        }
    }

    /// [`Solve::apply_later`] of one row of a block on two trees or a free body.
    fn apply_piece_later(&mut self, later: &mut Later, bi: usize, r: usize, l: f64) {
        let bl = self.p.blocks[bi];
        for (slot, t) in bl.trees.into_iter().enumerate() {
            if t == NONE {
                continue;
            }
            let (c, w) = if slot == 0 { (0, bl.n0) } else { (bl.n0, bl.width - bl.n0) };
            let (o, s) = (bl.off + r * bl.width + c, self.p.trees.start[t as usize]);
            // the kept pieces go first where this one adds to their entries (a piece on
            // another tree touches other dofs: the order between them changes no bit)
            let keep = w > 6;
            if (later.n > 0 && (later.tree == t) != keep) || later.n == LATER || (keep && later.w != w) {
                self.apply_kept(later);
            }
            if keep {
                (later.tree, later.s, later.w) = (t, s, w);
                (later.off[later.n], later.lam[later.n]) = (o, l);
                later.n += 1;
            } else {
                add_scaled(&mut self.sol.vel[s..s + w], l, &self.p.mj[o..o + w]);
            }
        }
    }

    /// Applies the pieces [`Solve::apply_later`] kept and empties `later`.
    #[inline]
    pub(super) fn apply_kept(&mut self, later: &mut Later) {
        let n = std::mem::take(&mut later.n);
        if n > 0 {
            add_rows(&mut self.sol.vel[later.s..later.s + later.w], &self.p.mj, &later.off[..n], &later.lam[..n]);
        }
    }
}

/// Pieces of rows kept by [`Solve::apply_later`] at most (an exact island's rows).
const LATER: usize = 64;

/// Row pieces on one tree whose impulse changes wait to be applied together (see
/// [`Solve::apply_later`]).
pub(super) struct Later {
    /// Pieces kept.
    n: usize,
    /// Their tree, its first dof, their length.
    tree: u32,
    s: usize,
    w: usize,
    /// Each piece's offset in `mj` and its impulse change.
    off: [usize; LATER],
    lam: [f64; LATER],
}

impl Later {
    /// None kept.
    pub(super) fn new() -> Later {
        Later { n: 0, tree: NONE, s: 0, w: 0, off: [0; LATER], lam: [0.0; LATER] }
    }
}

/// The impulses `lambda` of `p`'s blocks `island` into `out`, in the island's row order.
pub(super) fn gather_island(p: &Problem, island: &[u32], lambda: &[f64], out: &mut Vec<f64>) {
    out.clear();
    for &b in island {
        let bl = p.blocks[b as usize];
        out.extend_from_slice(&lambda[bl.row..bl.row + bl.n]);
    }
}

impl Dense {
    /// Forms the island's dense `W` and `c = J v_free` over its rows (`rows`), the island
    /// being `p`'s blocks `island` (`J` and `qH⁻¹ Jᵀ` read). Each entry runs over the nonzero
    /// entries of one row's `J` only (a servo's row has one, a foot's contact its leg's and
    /// the base's), in `dot`'s order: a skipped term adds a zero. They are looked for within
    /// the block's runs of columns (kept by the row writer, `runs.rs`; the whole row where it
    /// has none): a servo's row is one column to test, a foot's its chain's.
    #[inline]
    pub(super) fn form(&mut self, p: &Problem, island: &[u32], v_free: &[f64]) {
        self.rows.clear();
        self.nz.clear();
        self.nz_start.clear();
        self.nz_start.push(0);
        for &b in island {
            let bl = p.blocks[b as usize];
            self.rows.extend(bl.row..bl.row + bl.n);
            let runs = p.runs_of(&bl);
            for ra in 0..bl.n {
                let row = &p.j[bl.off + ra * bl.width..bl.off + (ra + 1) * bl.width];
                if runs.is_empty() {
                    nonzero_columns(&mut self.nz, row, 0);
                } else {
                    // the row writer's runs: `J` is zero outside them (`runs.rs`)
                    for &[c, _, n] in runs {
                        let c = c as usize;
                        nonzero_columns(&mut self.nz, &row[c..c + n as usize], c);
                    }
                }
                self.nz_start.push(self.nz.len());
            }
        }
        let k = self.rows.len();
        // every entry is written below (no zeros to clear)
        self.w.resize(k * k, 0.0);
        self.c.clear();
        if self.form_one_tree(p, island, v_free) {
            return;
        }
        // row -> (block, row in block) by walking the island's blocks
        let mut pa = 0;
        for &ba in island {
            let bla = p.blocks[ba as usize];
            for ra in 0..bla.n {
                let row = &p.j[bla.off + ra * bla.width..bla.off + (ra + 1) * bla.width];
                self.c.push(piece_dot(&p.trees, &bla, row, v_free));
                let nz = &self.nz[self.nz_start[pa]..self.nz_start[pa + 1]];
                let mut pb = 0;
                for &bb in island {
                    let blb = p.blocks[bb as usize];
                    for rb in 0..blb.n {
                        if pb <= pa {
                            let x = cross_dot(&p.trees, (&p.j, &p.mj, nz), (&bla, ra), (&blb, rb));
                            self.w[pa * k + pb] = x;
                            self.w[pb * k + pa] = x;
                        }
                        pb += 1;
                    }
                }
                pa += 1;
            }
        }
    }

    /// [`Dense::form`]'s `W` and `c` of an island on one tree (a robot on the static world:
    /// every block on that tree alone, over all its dofs), where [`cross_dot`]'s sum is the
    /// one over `nz` of `J_a`'s row against `qH⁻¹ Jᵀ`'s row of `b`, the same sum in the same
    /// order without the search for the shared tree; false (nothing written) for any other
    /// island. Reads `rows`, `nz`, `nz_start`; writes `w`, `c`, `row_off` and `mt`.
    #[inline]
    fn form_one_tree(&mut self, p: &Problem, island: &[u32], v_free: &[f64]) -> bool {
        let t = p.blocks[island[0] as usize].trees[0];
        let one = |bl: &Block| bl.trees == [t, NONE] && bl.n0 == bl.width && t != NONE && bl.width == p.trees.len[t as usize];
        if !island.iter().all(|&b| one(&p.blocks[b as usize])) {
            return false;
        }
        let (k, l) = (self.rows.len(), p.trees.len[t as usize]);
        let v = &v_free[p.trees.start[t as usize]..][..l];
        // `piece_dot`'s full sum adds `0 · v_c` (±0) for a zero entry, which leaves a nonzero
        // sum as it is: over `nz` it is the same number, unless it is zero (its sign may
        // differ) or some entry is not finite (`0 · ∞`), where the full sum is taken
        let finite = v.iter().all(|x| x.is_finite());
        self.row_off.clear();
        for &b in island {
            let bl = p.blocks[b as usize];
            for ra in 0..bl.n {
                let o = bl.off + ra * bl.width;
                let pa = self.row_off.len();
                self.row_off.push(o);
                let row = &p.j[o..o + l];
                let mut y = -0.0;
                for &c in &self.nz[self.nz_start[pa]..self.nz_start[pa + 1]] {
                    y += row[c as usize] * v[c as usize];
                }
                if !(finite && y != 0.0 && y.is_finite()) {
                    y = piece_dot(&p.trees, &bl, row, v_free);
                }
                self.c.push(y);
            }
        }
        // `qH⁻¹ Jᵀ` of the island's rows dof-major (`mt[c k + pb]`, every entry written):
        // row pa's entries against all rows pb at once, each sum still over `nz` in order
        self.mt.resize(l * k, 0.0);
        rows_to_lanes(&p.mj, &self.row_off, l, &mut self.mt, k);
        w_lower(&mut self.w, (&self.mt, &p.j), (&self.row_off, &self.nz, &self.nz_start), k);
        true
    }

    /// The first active set of [`Solve::direct`]: which rows are sign-free (bilateral ones,
    /// and with `hold` the friction rows of sticking contacts), held at their impulse (with
    /// `hold`: sliding friction, bounded rows) and active (not held, and sign-free, pushing
    /// or violated at `v_free`), from the problem's kinds, the targets `b` and the impulses
    /// `lambda`. Reads `rows`, `c`; writes `held`, `free`, `active`, `lambda`.
    #[inline]
    fn active_set_start(&mut self, kind: &[RowKind], lambda: &[f64], b: &[f64], hold: bool) {
        let k = self.rows.len();
        let bilateral = |kind: RowKind| kind == RowKind::Bilateral;
        self.active.clear();
        self.lambda.clear();
        self.held.clear();
        self.free.clear();
        for p in 0..k {
            let i = self.rows[p];
            let (held, free) = match kind[i] {
                RowKind::Tangent => {
                    // the contact's normal is the row before the tangents
                    let n = if matches!(kind[i - 1], RowKind::Tangent) { i - 2 } else { i - 1 };
                    let RowKind::Normal { mu, .. } = kind[n] else { unreachable!() };
                    let (ln, t1, t2) = (lambda[n], lambda[n + 1], lambda[n + 2]);
                    let stick = ln > 0.0 && (t1 * t1 + t2 * t2).sqrt() < mu * ln * (1.0 - 1e-9);
                    (!stick, stick)
                }
                RowKind::Bounded { .. } => (true, false),
                other => (false, bilateral(other)),
            };
            let held = hold && held;
            self.held.push(held);
            self.free.push(free);
            self.active.push(!held && (free || lambda[i] > 0.0 || self.c[p] < b[i]));
            self.lambda.push(if held { lambda[i] } else { 0.0 });
        }
    }

    /// Solves `(W_AA + eps I) λ_A = b_A − c_A − W_AH λ_H` for the active rows (A; held rows
    /// H keep their impulses) by the semidefinite LDLᵀ; the other rows not held get 0.
    #[inline]
    fn solve_active_set(&mut self, b: &[f64], eps: f64, scale: f64) {
        let k = self.rows.len();
        self.idx.clear();
        self.idx.extend((0..k).filter(|&p| self.active[p]));
        let n = self.idx.len();
        self.a.clear();
        self.a.resize(n * n, 0.0);
        self.r.clear();
        self.r.resize(n, 0.0);
        for (x, &p) in self.idx.iter().enumerate() {
            let mut rhs = b[self.rows[p]] - self.c[p];
            for q in 0..k {
                if self.held[q] {
                    rhs -= self.w[p * k + q] * self.lambda[q];
                }
            }
            self.r[x] = rhs;
            for (y, &q) in self.idx.iter().enumerate() {
                self.a[x * n + y] = self.w[p * k + q];
            }
            self.a[x * n + x] += eps;
        }
        self.skip.clear();
        self.skip.resize(n, false);
        ldlt_semidefinite_solve(&mut self.a, &mut self.r, &mut self.skip, n, 1e-10 * scale);
        for p in 0..k {
            if !self.held[p] {
                self.lambda[p] = 0.0;
            }
        }
        for (x, &p) in self.idx.iter().enumerate() {
            self.lambda[p] = self.r[x];
        }
    }

    /// Drops the active row of most negative impulse from the set (with `hold`, a normal
    /// takes its friction rows with it, held at zero); whether there was one.
    #[inline]
    fn drop_most_negative(&mut self, kind: &[RowKind], hold: bool, scale: f64) -> bool {
        let worst = self
            .idx
            .iter()
            .filter(|&&p| !self.free[p] && self.lambda[p] < -1e-12 * scale)
            .min_by(|&&p, &&q| self.lambda[p].total_cmp(&self.lambda[q]).then(p.cmp(&q)));
        let Some(&p) = worst else { return false };
        self.active[p] = false;
        // a normal that lets go takes its friction with it
        if hold && matches!(kind[self.rows[p]], RowKind::Normal { friction: 2, .. }) {
            for q in [p + 1, p + 2] {
                self.active[q] = false;
                self.held[q] = true;
                self.lambda[q] = 0.0;
            }
        }
        true
    }

    /// Adds the most violated inactive one-sided row (`c + W λ < b`) to the set; whether
    /// there was one.
    #[inline]
    fn add_most_violated(&mut self, b: &[f64], scale: f64) -> bool {
        let k = self.rows.len();
        let mut viol: Option<(usize, f64)> = None;
        for p in (0..k).filter(|&p| !self.active[p] && !self.held[p] && !self.free[p]) {
            let g = self.c[p] + (0..k).map(|q| self.w[p * k + q] * self.lambda[q]).sum::<f64>() - b[self.rows[p]];
            if g < -1e-12 * (1.0 + scale) && viol.is_none_or(|(_, h)| g < h) {
                viol = Some((p, g));
            }
        }
        let Some((p, _)) = viol else { return false };
        self.active[p] = true;
        true
    }

    /// The friction of `lambda` back inside the cones of the new normal impulses.
    #[inline]
    pub(super) fn project(&mut self, kind: &[RowKind]) {
        project_set(&self.rows, kind, &mut self.lambda);
    }
}

/// `W` entry `J_a · (qH⁻¹ Jᵀ)_b` of row `ra` of block `a` and row `rb` of block `b`: the sum
/// over the trees they share, each tree's in `dot`'s order over `nz`, the nonzero entries of
/// `J_a`'s row (ascending).
#[inline]
fn cross_dot(trees: &Trees, (j, mj, nz): (&[f64], &[f64], &[u32]), (a, ra): (&Block, usize), (b, rb): (&Block, usize)) -> f64 {
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
        // the first tree's columns come first in `nz`
        let split = nz.partition_point(|&c| (c as usize) < a.n0);
        let cols = if sa == 0 { &nz[..split] } else { &nz[split..] };
        let (ja, mb) = (&ja[ca..ca + l], &mb[cb..cb + l]);
        let mut y = -0.0;
        for &c in cols {
            let c = c as usize - ca;
            y += ja[c] * mb[c];
        }
        x += y;
    }
    x
}

/// Appends the columns `c0 + i` of `row`'s nonzero entries `row[i]` onto `nz`, ascending, four
/// entries a test.
#[inline(always)]
fn nonzero_columns(nz: &mut Vec<u32>, row: &[f64], c0: usize) {
    let (quads, tail) = row.as_chunks::<4>();
    for (q, quad) in quads.iter().enumerate() {
        if (quad[0] != 0.0) | (quad[1] != 0.0) | (quad[2] != 0.0) | (quad[3] != 0.0) {
            nz.extend((0..4).filter(|&i| quad[i] != 0.0).map(|i| (c0 + 4 * q + i) as u32));
        }
    }
    let t0 = c0 + 4 * quads.len();
    nz.extend((0..tail.len()).filter(|&i| tail[i] != 0.0).map(|i| (t0 + i) as u32));
}
