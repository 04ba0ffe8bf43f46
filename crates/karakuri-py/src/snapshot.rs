//! `Snapshot`: a world's full state (`karakuri_sim::World::snapshot`), opaque to Python,
//! restorable into the same world and picklable (its JSON, whose numbers read back bit for bit).

use karakuri_sim::snapshot::Snapshot;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::errors::sim_error;

/// A world's full state at one step (:meth:`World.snapshot`): the engine's state and the
/// Rust-side controllers', with the fingerprint of the world it came from, so it restores only
/// into a world of the same scene (:meth:`World.restore`). Picklable; :meth:`to_json` /
/// :meth:`from_json` give the checkpoint file format. Python controllers are not in it: they
/// are Python objects, and a controller with state of its own must be saved with it.
#[pyclass(name = "Snapshot", module = "karakuri", frozen)]
pub struct PySnapshot {
    pub(crate) inner: Snapshot,
}

#[pymethods]
impl PySnapshot {
    /// Simulated time of the snapshot (s).
    #[getter]
    fn time(&self) -> f64 {
        self.inner.time
    }
    /// Steps taken when it was taken.
    #[getter]
    fn steps(&self) -> u64 {
        self.inner.steps
    }
    /// The snapshot as JSON text (the checkpoint file format; numbers exact).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }
    /// A snapshot from :meth:`to_json`'s text; ``ValueError`` if it is not one.
    #[classmethod]
    fn from_json(_cls: &Bound<'_, PyType>, text: &str) -> PyResult<PySnapshot> {
        Ok(PySnapshot {
            inner: Snapshot::from_json(text, "<json>").map_err(sim_error)?,
        })
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let from_json = slf.get_type().getattr("from_json")?;
        Ok((from_json, (slf.get().inner.to_json(),)))
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PySnapshot>().is_ok_and(|o| o.get().inner == self.inner)
    }
    fn __repr__(&self) -> String {
        format!("karakuri.Snapshot(scene='{}', t={} s, steps={})", self.inner.scene, self.inner.time, self.inner.steps)
    }
}
