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
//! This module holds what describes the rows ([`RowKind`]), the settings of a solve
//! ([`Settings`]) and its statistics ([`SolveStats`]). There is one row store: `Problem`
//! (`problem.rs`), whose compact blocks over the trees a row touches every row is written
//! into (contacts, loops, limits, velocity servos, joint friction: the core's row writer,
//! `karakuri::constraints::rows`), and one solver, which solves them island by island (the
//! velocity problem, the split-impulse pass, the impact passes and SHAKE alike).

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
    /// A large articulated island the sweeps leave above `tolerance` is solved again by
    /// Newton's method (`engine.solver: newton`, `newton.rs`).
    pub newton: bool,
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
