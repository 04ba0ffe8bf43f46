//! The solver's settings of a scene: the one place the scene's `engine` block becomes the
//! constraint solver's [`Settings`] (the solver, a lower layer, reads no scene type).

use crate::scene::{EngineParams, SolverKind};
use crate::solver::Settings;

/// The settings of the engine's solver: its sweep cap and tolerance, exact solves under
/// `solver: auto`.
pub fn solver_settings(e: &EngineParams) -> Settings {
    Settings {
        max_iterations: e.max_iterations,
        tolerance: e.tolerance,
        exact: e.solver == SolverKind::Auto,
        direct_max_rows: e.direct_max_rows,
    }
}
