//! The rows of the velocity-level constraint problem.
//!
//! Every constraint is a row `J_i` of the world's joint-space Jacobian (contact normal,
//! friction tangents, loop closure, joint limit). With `v_free` the velocity after the smooth
//! forces and `λ` the impulses, `v⁺ = v_free + M⁻¹ Jᵀ λ` and each row's velocity is
//! `u_i = J_i v⁺`. Rows ask:
//!
//! | kind | condition |
//! | --- | --- |
//! | bilateral | `u_i = b_i`, λ free |
//! | unilateral (normal, limit) | `u_i ≥ b_i`, `λ_i ≥ 0`, complementary |
//! | friction pair (t1, t2) after its normal | `u_t = b_t` (0, or a track surface's velocity) unless `|λ_t| = μ λ_n` (circular cone) |
//! | bounded (velocity servo) | `u_i = b_i` unless λ is at a bound of `[lo, hi]` |
//!
//! This module holds what describes the rows ([`RowKind`]), the dense builder of the rows that
//! are not contacts ([`Rows`]: loops, limits, velocity servos, joint friction, written over all
//! `nv` dofs by their kinematics), the settings of a solve ([`Settings`]) and its statistics
//! ([`SolveStats`]). There is one solver: `Problem` (`problem.rs`), which takes these rows
//! through `Problem::push_rows` as compact blocks over the trees
//! they touch, next to the contact blocks, and solves them island by island (the velocity
//! problem, the split-impulse pass, the impact passes and SHAKE alike).

/// What a row asks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RowKind {
    /// `u = b`.
    Bilateral,
    /// `u ≥ b`, `λ ≥ 0`.
    Unilateral,
    /// A contact normal, followed by `friction` (0 or 2) tangent rows bounded by `mu λ_n`.
    Normal {
        /// Number of tangent rows after it.
        friction: usize,
        /// Friction coefficient of this step.
        mu: f64,
    },
    /// A tangent row (handled with its normal).
    Tangent,
    /// `u = b` while `lo < λ < hi`, else λ at its bound (a velocity servo: `±` its effort
    /// limit times dt).
    Bounded {
        /// Lower impulse bound.
        lo: f64,
        /// Upper impulse bound.
        hi: f64,
    },
}

/// Rows of one step, dense over the `nv` velocity variables: how loops, limits, servos and
/// joint friction write their Jacobians before
/// `Problem::push_rows` makes compact blocks of them.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    /// Number of velocity variables.
    pub nv: usize,
    /// `J`, row-major `(m x nv)`.
    pub j: Vec<f64>,
    /// Row targets `b` `(m)`.
    pub b: Vec<f64>,
    /// Row kinds `(m)`.
    pub kind: Vec<RowKind>,
    /// Impulses (warm start on entry, solution on exit) `(m)`.
    pub lambda: Vec<f64>,
    /// The (at most two) contiguous dof ranges outside which the row's `J` is zero: the
    /// kinematic trees it touches `(m)`.
    pub ranges: Vec<[(usize, usize); 2]>,
}

impl Rows {
    /// Removes every row.
    pub fn clear(&mut self, nv: usize) {
        self.nv = nv;
        self.j.clear();
        self.b.clear();
        self.kind.clear();
        self.lambda.clear();
        self.ranges.clear();
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.b.len()
    }
    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
    /// Appends a row with a zero Jacobian to fill; returns its index.
    pub fn push(&mut self, kind: RowKind, b: f64, warm: f64) -> usize {
        let nv = self.nv;
        self.push_ranged(kind, b, warm, [(0, nv), (0, 0)])
    }
    /// [`Rows::push`] for a row touching only the dofs in `ranges` (sorted, disjoint).
    pub fn push_ranged(
        &mut self,
        kind: RowKind,
        b: f64,
        warm: f64,
        ranges: [(usize, usize); 2],
    ) -> usize {
        self.ranges.push(ranges);
        self.j.extend(std::iter::repeat_n(0.0, self.nv));
        self.b.push(b);
        self.kind.push(kind);
        self.lambda.push(warm);
        self.b.len() - 1
    }
    /// Row `i` of `J`.
    pub fn j_row(&self, i: usize) -> &[f64] {
        &self.j[i * self.nv..(i + 1) * self.nv]
    }
    /// Row `i` of `J`, mutable.
    pub fn j_row_mut(&mut self, i: usize) -> &mut [f64] {
        let nv = self.nv;
        &mut self.j[i * nv..(i + 1) * nv]
    }
    /// Makes room for `m` rows without allocating (no-op when there is room).
    pub fn reserve(&mut self, m: usize) {
        let nv = self.nv;
        ensure(&mut self.j, m * nv);
        ensure(&mut self.b, m);
        ensure(&mut self.kind, m);
        ensure(&mut self.lambda, m);
        ensure(&mut self.ranges, m);
    }
}

/// Solver settings of one solve (the engine makes them of its scene settings).
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

/// Result of a solve.
#[derive(Clone, Copy, Debug, Default)]
pub struct SolveStats {
    /// Sweeps (PGS) or active-set iterations (direct).
    pub iterations: usize,
    /// Largest row velocity change in the last sweep (PGS), 0 for an exact solve.
    pub residual: f64,
    /// Whether the direct solver was used.
    pub direct: bool,
    /// Largest `|λ_n u_n|` over the contacts (`measures.rs`; 0 until measured).
    pub signorini: f64,
    /// Largest friction impulse outside its cone, `|λ_t| − μ λ_n` (`measures.rs`).
    pub coulomb: f64,
    /// Largest maximal-dissipation violation `|λ_t · u_t + μ λ_n |u_t||` (`measures.rs`).
    pub dissipation: f64,
}

/// Grows `v`'s capacity to at least `cap`.
pub fn ensure<T>(v: &mut Vec<T>, cap: usize) {
    if v.capacity() < cap {
        v.reserve(cap - v.len());
    }
}
