//! The Python exceptions of the simulator (`SceneError`, `SimulationError`, `ControllerError`)
//! and [`sim_error`], the one mapping from a `karakuri_sim::SimError` to them; below every
//! module that steps or loads a world (`sim`, `batch`, `snapshot`).

use karakuri_sim::SimError;
use pyo3::exceptions::PyValueError;
use pyo3::PyErr;

pyo3::create_exception!(
    karakuri,
    SceneError,
    pyo3::exceptions::PyValueError,
    "A scene file that cannot be loaded; the message says file: path.inside: reason."
);

pyo3::create_exception!(
    karakuri,
    SimulationError,
    pyo3::exceptions::PyRuntimeError,
    "The simulation cannot go on (it diverged); the message says the step, the time, the body and why. The world stays at its last good step."
);

pyo3::create_exception!(
    karakuri,
    ControllerError,
    pyo3::exceptions::PyRuntimeError,
    "A Python controller raised; the message says which controller and the simulated time, and __cause__ is the controller's exception."
);

/// The Python exception of a simulator error, with the simulator's message: `SceneError` for a
/// scene that does not load, `SimulationError` when the run cannot go on, `ValueError` for a
/// bad name, command or argument.
pub fn sim_error(e: SimError) -> PyErr {
    match e {
        SimError::Scene { .. } => SceneError::new_err(e.to_string()),
        SimError::Diverged { .. } | SimError::Stale(_) | SimError::Output(_) => SimulationError::new_err(e.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

