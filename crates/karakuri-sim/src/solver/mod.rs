//! The constraint solver: the velocity-level problem of a step as **blocks** of rows over the
//! kinematic trees they touch, grouped into **islands**, solved island by island.
//!
//! Its data is in three parts, as Drake's SAP keeps problem, solver and results apart:
//!
//! * the **problem** ([`Problem`]: `J` as compact blocks, targets `b`, row kinds, warm start,
//!   and what [`Problem::prepare`] forms of them: `qH⁻¹ Jᵀ`, the diagonal of `W`, each
//!   block's `W_ii`), never written by a solve;
//! * one **workspace** ([`Workspace`]: islands, the sweep's packed layout, the
//!   conjugate-gradient state, the exact solve's dense island, the free bodies' kept `qH⁻¹`),
//!   shared by every problem over the same model;
//! * the **solution** ([`Solution`]: impulses `λ` and the velocity `v_free + qH⁻¹ Jᵀ λ`),
//!   one per pass: the split-impulse pass solves other targets on the velocity problem's rows
//!   ([`Problem::solve_targets`]) into a solution of its own.
//!
//! The Delassus operator `W = J qH⁻¹ Jᵀ` is never formed over all rows: projected
//! Gauss–Seidel applies it through the compact factors; only a small island that needs an
//! exact solve forms its own dense `W`. The engine makes the [`Settings`] of a solve; the
//! solver reads nothing of scenes or engines.
//!
//! | file | job | symbols |
//! | --- | --- | --- |
//! | `rows.rs` | what a row asks; settings, statistics | [`RowKind`], [`Settings`], [`SolveStats`], [`ensure`] |
//! | `problem.rs` | trees, blocks, building the problem (the row writer's compact layout), row products | [`Trees`], [`Block`], [`BlockRows`], [`Problem`], [`NONE`] |
//! | `runs.rs` | each block's columns the row writer writes, as runs; row sums over them | |
//! | `solution.rs` | impulses and velocity | [`Solution`] |
//! | `workspace.rs` | the scratch of every solve, the view a solve has of the three parts | [`Workspace`], [`EXACT_MAX_ROWS`] |
//! | `prepare.rs` | `qH⁻¹ Jᵀ`, `W_ii`, the free bodies' kept inverses | [`Problem::prepare`] |
//! | `islands.rs` | union-find over trees, blocks sorted by island | |
//! | `solve.rs` | warm start, the per-island choice, small islands' sweeps with subspace steps | [`Problem::solve`], [`Problem::solve_targets`] |
//! | `sweep.rs` | block Gauss–Seidel, the packed free-body contacts | |
//! | `accel.rs` | conjugate-gradient acceleration and parking of large islands | |
//! | `exact.rs` | dense `W` of an island, active-set solve, subspace step | |
//! | `active.rs` | active-set solve with friction of a small articulated island | |
//! | `newton.rs` | primal Newton solve of a large articulated island the sweeps leave | |
//! | `law.rs` | the Newton solve's regularised law of a block and its derivative | |
//! | `cone.rs` | projection on the friction cone and bounds, a contact's block update | |
//! | `measures.rs` | ContactBench's contact measures of a solution (Signorini, Coulomb, dissipation) | [`Problem::contact_measures`] |
//! | `kernels.rs` | dots, `W_ii` entries, one tree's LᵀDL solves, 3 x 3 inverse | |

/// Compiles a function's body twice on x86-64, for AVX2 (chosen at run time) and portable,
/// the same bits either way (0071, 0103): the core crate's [`karakuri::twice!`] (record 0118),
/// named here so that the solver's files reach it by textual scope.
macro_rules! twice {
    ($($item:tt)*) => {
        karakuri::twice! { $($item)* }
    };
}

mod accel;
mod active;
mod condense;
mod cone;
mod exact;
mod islands;
mod kernels;
mod law;
mod lu;
mod measures;
mod newton;
mod prepare;
mod problem;
mod rows;
mod runs;
mod solution;
mod solve;
mod sweep;
mod workspace;

pub use problem::{Block, BlockRows, Problem, Trees, NONE};
pub use rows::{ensure, RowKind, Settings, SolveStats};
pub use solution::Solution;
pub use workspace::{Workspace, EXACT_MAX_ROWS};
