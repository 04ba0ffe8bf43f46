//! `World`: a scene file stepped by karakuri's simulator, through `karakuri_sim::World`'s
//! public API only (the controllable, batched simulator waits for the control-loop issue).

use crate::convert::array2;
use crate::model::homogeneous;
use karakuri_sim::{SimError, World};
use nalgebra::DMatrix;
use numpy::{PyArray2, PyArray3};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

pyo3::create_exception!(
    karakuri,
    SceneError,
    pyo3::exceptions::PyValueError,
    "A scene file that cannot be loaded; the message says file: path.inside: reason."
);

fn sim_error(e: SimError) -> PyErr {
    match e {
        SimError::Scene { .. } => SceneError::new_err(e.to_string()),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// A simulated world loaded from a scene file (JSON or YAML, docs/SCENE_FORMAT.md): free
/// bodies, static bodies, URDF robots, contacts. Body states are arrays over
/// :attr:`body_names`, in world axes.
#[pyclass(name = "World", module = "karakuri", unsendable)]
pub struct PyWorld {
    world: World,
}

impl PyWorld {
    fn rows3(&self, f: impl Fn(&karakuri_sim::BodyState) -> [f64; 3]) -> DMatrix<f64> {
        let s = self.world.states();
        DMatrix::from_fn(s.len(), 3, |i, k| f(&s[i])[k])
    }
}

#[pymethods]
impl PyWorld {
    /// Loads a scene file. Raises :class:`SceneError` (a ``ValueError``) with the file, the
    /// path inside it and the reason.
    #[staticmethod]
    fn from_file(path: std::path::PathBuf) -> PyResult<Self> {
        Ok(PyWorld { world: World::from_file(&path).map_err(sim_error)? })
    }

    /// Advances ``n`` time steps. Raises ``RuntimeError`` if the simulation diverges (the
    /// world stays at the last good step); Ctrl-C interrupts between steps.
    #[pyo3(signature = (n = 1))]
    fn step(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        for i in 0..n {
            self.world.step().map_err(sim_error)?;
            if i % 1024 == 1023 {
                py.check_signals()?;
            }
        }
        Ok(())
    }

    /// Sets the torque (N·m, or force in N for a prismatic joint) of a robot joint by name,
    /// applied from the next step on.
    fn set_joint_torque(&mut self, joint: &str, torque: f64) -> PyResult<()> {
        if !torque.is_finite() {
            return Err(PyValueError::new_err("argument 'torque' must be finite"));
        }
        self.world.set_joint_torque(joint, torque).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self) -> f64 {
        self.world.time()
    }
    /// The time step (s).
    #[getter]
    fn dt(&self) -> f64 {
        self.world.engine().dt()
    }
    /// Steps taken.
    #[getter]
    fn steps(&self) -> u64 {
        self.world.steps()
    }
    /// Total mechanical energy, kinetic + gravitational (J).
    #[getter]
    fn energy(&self) -> f64 {
        self.world.energy()
    }
    /// Body names (``robot/link`` for robot links), the order of every state array.
    #[getter]
    fn body_names(&self) -> Vec<String> {
        self.world.bodies().iter().map(|b| b.name.clone()).collect()
    }
    /// Index of the body named ``name`` in the state arrays (``ValueError`` if none).
    fn body_index(&self, name: &str) -> PyResult<usize> {
        self.world.body_index(name).ok_or_else(|| PyValueError::new_err(format!("no body named '{name}'")))
    }
    /// World position of every body frame origin, shape ``(nbodies, 3)``.
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        array2(py, &self.rows3(|s| s.pose.translation.into()))
    }
    /// World placement of every body frame as 4x4 homogeneous matrices, shape ``(nbodies, 4, 4)``.
    #[getter]
    fn poses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray3<f64>> {
        let s = self.world.states();
        let flat: Vec<f64> = s.iter().flat_map(|b| homogeneous(&b.pose)).collect();
        PyArray3::from_owned_array(py, numpy::ndarray::Array3::from_shape_vec((s.len(), 4, 4), flat).expect("16 per body"))
    }
    /// World velocity of every body frame origin, shape ``(nbodies, 3)``.
    #[getter]
    fn linear_velocities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        array2(py, &self.rows3(|s| s.linear.into()))
    }
    /// World angular velocity of every body, shape ``(nbodies, 3)``.
    #[getter]
    fn angular_velocities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        array2(py, &self.rows3(|s| s.angular.into()))
    }
    /// Contacts of the last step: a list of dicts with ``bodies`` (two names), ``point``,
    /// ``normal`` (from the first body to the second), ``depth`` (m) and ``force`` (mean
    /// force on the second body over the step, N, world axes).
    #[getter]
    fn contacts<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let bodies = self.world.bodies();
        self.world
            .contacts()
            .iter()
            .map(|c| {
                let d = PyDict::new(py);
                d.set_item("bodies", (bodies[c.body_a].name.as_str(), bodies[c.body_b].name.as_str()))?;
                d.set_item("point", c.point.as_slice().to_vec())?;
                d.set_item("normal", c.normal.as_slice().to_vec())?;
                d.set_item("depth", c.depth)?;
                d.set_item("force", c.force.as_slice().to_vec())?;
                Ok(d)
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("karakuri.World(bodies={}, t={} s, dt={} s)", self.world.bodies().len(), self.world.time(), self.world.engine().dt())
    }
}
