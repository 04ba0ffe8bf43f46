//! `Batch`: N worlds of one scene stepped in Rust threads (`karakuri_sim::Batch`, rayon) with
//! the GIL released; actions in and observations out as `(n, k)` arrays.

use std::sync::{Arc, Mutex, PoisonError};

use crate::control::Layout;
use crate::errors::sim_error;
use crate::model::homogeneous;
use karakuri_sim::scene::ActuatorMode;
use karakuri_sim::{Batch, BatchError, JointState, Scene, World};
use numpy::ndarray::Array2;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The worlds and the buffers a step reads actions from and writes observations to (sized
/// once).
struct Inner {
    batch: Batch,
    /// `(n, nactuators)` row-major.
    actions: Vec<f64>,
    /// `(n, obs_dim)` row-major.
    obs: Vec<f64>,
    /// Joint-state scratch of the observation.
    joints: Vec<JointState>,
    /// The episode each world is in (0 from the start or a reseed; its perturbation stream).
    episodes: Vec<u64>,
}

/// N independent worlds of one scene stepped in parallel on Rust threads (one per core;
/// ``RAYON_NUM_THREADS`` sets how many) with the GIL released. World ``i`` of a batch follows
/// bit for bit the trajectory of a single :class:`World` of the same scene given the same
/// commands, whatever the number of threads.
///
/// ``seed``: when given (and ``perturb`` is true), world ``i`` starts from karakuri's seeded
/// perturbation of the scene's initial state (free bodies' and floating bases' positions by up
/// to ±1 mm, hinge and slider ``q0`` by up to ±1 mrad / ±1 mm; world 0 of the first episode is
/// the scene itself); without a seed all worlds start identical.
///
/// Actions are actuator targets, an ``(n, len(actuator_names))`` array; observations are an
/// ``(n, obs_dim)`` array laid out as ``q`` (one per joint), ``dq`` (one per joint), each
/// sensor's values, then 13 per floating base (named by its robot) and free body: world
/// position, quaternion ``x y z w`` (``w ≥ 0``), world linear and angular velocity; all named by
/// :attr:`observation_names` (sensor values are those of the last step: zeros in a world not
/// stepped yet).
#[pyclass(name = "Batch", module = "karakuri")]
pub struct PyBatch {
    inner: Mutex<Inner>,
    layout: Arc<Layout>,
    scene: Scene,
    seed: Option<u64>,
    dt: f64,
}

impl PyBatch {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh world `i` for its episode `e`.
    fn build(scene: &Scene, seed: Option<u64>, n: usize, i: usize, e: u64) -> Result<World, karakuri_sim::SimError> {
        let mut s = scene.clone();
        if let Some(seed) = seed {
            // episode e of world i draws stream i + n e: the first episode is Batch::perturbed's
            karakuri_sim::batch::perturb(&mut s, seed, i + n * e as usize);
        }
        World::new(s)
    }

    fn write_observations<'py>(py: Python<'py>, layout: &Layout, inner: &mut Inner) -> Bound<'py, PyArray2<f64>> {
        let d = layout.obs_dim();
        let Inner { batch, obs, joints, .. } = inner;
        for (w, out) in batch.worlds().iter().zip(obs.chunks_exact_mut(d.max(1))) {
            layout.observe(w, joints, out);
        }
        let a = Array2::from_shape_vec((batch.len(), d), obs.clone()).expect("n * obs_dim observations");
        PyArray2::from_owned_array(py, a)
    }
}

impl PyBatch {
    /// Three numbers per body per world, shape `(n, nbodies, 3)`.
    fn per_body<'py>(&self, py: Python<'py>, f: impl Fn(&karakuri_sim::BodyState) -> Vec<f64>) -> Bound<'py, numpy::PyArray3<f64>> {
        let inner = self.inner();
        let worlds = inner.batch.worlds();
        let nb = worlds[0].states().len();
        let flat: Vec<f64> = worlds.iter().flat_map(|w| w.states().iter().flat_map(&f)).collect();
        numpy::PyArray3::from_owned_array(py, numpy::ndarray::Array3::from_shape_vec((worlds.len(), nb, 3), flat).expect("3 per body"))
    }
}

fn batch_error(e: BatchError) -> PyErr {
    let err = sim_error(e.error.clone());
    Python::attach(|py| {
        let msg = format!("world {}: {}", e.world, err.value(py));
        PyErr::from_type(err.get_type(py), msg)
    })
}

#[pymethods]
impl PyBatch {
    /// Loads the scene file once and builds ``n`` worlds of it (in parallel). Raises
    /// :class:`SceneError` for a scene that does not load.
    #[new]
    #[pyo3(signature = (scene, n, seed = None, perturb = true))]
    fn new(py: Python<'_>, scene: std::path::PathBuf, n: usize, seed: Option<u64>, perturb: bool) -> PyResult<Self> {
        if n == 0 {
            return Err(PyValueError::new_err("argument 'n' must be at least 1"));
        }
        let scene = Scene::from_file(&scene).map_err(sim_error)?;
        let seed = seed.filter(|_| perturb);
        let batch = py
            .detach(|| match seed {
                Some(seed) => Batch::perturbed(&scene, n, seed),
                None => (0..n).map(|_| World::new(scene.clone())).collect::<Result<Vec<_>, _>>().map(Batch::new),
            })
            .map_err(sim_error)?;
        let layout = Arc::new(Layout::of(&batch.worlds()[0]));
        let dt = batch.worlds()[0].dt();
        let inner = Inner {
            actions: vec![0.0; n * layout.actuated.len()],
            obs: vec![0.0; n * layout.obs_dim()],
            joints: vec![JointState::default(); layout.joints.len()],
            episodes: vec![0; n],
            batch,
        };
        Ok(PyBatch {
            inner: Mutex::new(inner),
            layout,
            scene,
            seed,
            dt,
        })
    }

    /// Sets every world's actuator targets from ``actions`` (shape ``(n, len(actuator_names))``;
    /// ``None`` keeps the current ones), advances every world ``steps`` time steps in parallel
    /// with the GIL released, and returns the observations, shape ``(n, obs_dim)``. A world
    /// that fails (diverges, or a target outside its actuator's limits) raises with its index;
    /// the others have taken their steps.
    #[pyo3(signature = (actions = None, steps = 1))]
    fn step<'py>(&mut self, py: Python<'py>, actions: Option<&Bound<'py, PyAny>>, steps: u64) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let layout = self.layout.clone();
        let inner = self.inner.get_mut().unwrap_or_else(PoisonError::into_inner);
        let (n, m) = (inner.batch.len(), layout.actuated.len());
        if let Some(a) = actions {
            read_rows("actions", a, n, m, &mut inner.actions)?;
        }
        let has_actions = actions.is_some();
        let Inner { batch, actions, .. } = &mut *inner;
        py.detach(|| -> Result<(), BatchError> {
            if has_actions {
                for (i, w) in batch.worlds_mut().iter_mut().enumerate() {
                    for (a, &k) in layout.actuated.iter().enumerate() {
                        w.set_one_dof_target(k, actions[i * m + a]).map_err(|error| BatchError { world: i, error })?;
                    }
                }
            }
            batch.run_steps(steps)
        })
        .map_err(batch_error)?;
        Ok(PyBatch::write_observations(py, &layout, inner))
    }

    /// The observations now, shape ``(n, obs_dim)``.
    fn observations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        PyBatch::write_observations(py, &self.layout, &mut self.inner())
    }

    /// Starts new episodes: rebuilds the worlds listed in ``indices`` (all when ``None``) at
    /// the scene's initial state, each perturbed by a stream of its own when the batch is
    /// seeded (``seed`` reseeds and restarts the episode count). Returns the observations.
    #[pyo3(signature = (indices = None, seed = None))]
    fn reset<'py>(&mut self, py: Python<'py>, indices: Option<Vec<usize>>, seed: Option<u64>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let inner = self.inner.get_mut().unwrap_or_else(PoisonError::into_inner);
        let n = inner.batch.len();
        if let Some(s) = seed {
            self.seed = Some(s);
        }
        let indices = indices.unwrap_or_else(|| (0..n).collect());
        if let Some(&bad) = indices.iter().find(|&&i| i >= n) {
            return Err(PyValueError::new_err(format!("world index {bad} is out of range for a batch of {n}")));
        }
        let (scene, seed, seed_given) = (&self.scene, self.seed, seed.is_some());
        let Inner { batch, episodes, .. } = &mut *inner;
        py.detach(|| -> PyResult<()> {
            for &i in &indices {
                // reseeded: the first episode's streams again; else the next episode's
                episodes[i] = if seed_given { 0 } else { episodes[i] + 1 };
                batch.worlds_mut()[i] = PyBatch::build(scene, seed, n, i, episodes[i]).map_err(sim_error)?;
            }
            Ok(())
        })?;
        Ok(PyBatch::write_observations(py, &self.layout, inner))
    }

    /// Number of worlds.
    fn __len__(&self) -> usize {
        self.inner().batch.len()
    }
    /// Number of worlds.
    #[getter]
    fn num_worlds(&self) -> usize {
        self.inner().batch.len()
    }
    /// The time step (s).
    #[getter]
    fn dt(&self) -> f64 {
        self.dt
    }
    /// Each world's simulated time (s), shape ``(n,)``.
    #[getter]
    fn times<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.inner().batch.worlds().iter().map(|w| w.time()).collect())
    }
    /// Names of the one-dof joints (the ``q`` and ``dq`` blocks of an observation).
    #[getter]
    fn joint_names(&self) -> Vec<String> {
        self.layout.joints.clone()
    }
    /// Names of the actuated joints, the columns of ``actions``.
    #[getter]
    fn actuator_names(&self) -> Vec<String> {
        self.layout.actuated.iter().map(|&k| self.layout.joints[k].clone()).collect()
    }
    /// Names of the sensors.
    #[getter]
    fn sensor_names(&self) -> Vec<String> {
        self.layout.sensor_names()
    }
    /// Names of the observation columns: ``q:<joint>``, ``dq:<joint>``, ``<sensor>:<axis>``.
    #[getter]
    fn observation_names(&self) -> Vec<String> {
        self.layout.obs_names()
    }
    /// Length of an observation row.
    #[getter]
    fn obs_dim(&self) -> usize {
        self.layout.obs_dim()
    }
    /// Number of actuators (columns of ``actions``).
    #[getter]
    fn num_actuators(&self) -> usize {
        self.layout.actuated.len()
    }
    /// ``(low, high)`` of each action column: ±effort limit for torque actuators, the joint's
    /// limits for position actuators, ±velocity limit for velocity actuators (±inf where the
    /// scene sets none).
    #[getter]
    fn action_bounds<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>) {
        let (lo, hi): (Vec<f64>, Vec<f64>) = self
            .layout
            .actuated
            .iter()
            .map(|&k| {
                let info = &self.layout.joint_infos[k];
                let a = info.actuator.expect("actuated joints have an actuator");
                match a.mode {
                    ActuatorMode::Torque => (-a.effort_limit, a.effort_limit),
                    ActuatorMode::Velocity => (-a.velocity_limit, a.velocity_limit),
                    ActuatorMode::Position | ActuatorMode::Prescribed => info.limits.map_or((f64::NEG_INFINITY, f64::INFINITY), |[l, h]| (l, h)),
                }
            })
            .unzip();
        (PyArray1::from_vec(py, lo), PyArray1::from_vec(py, hi))
    }
    /// ``(low, high)`` of each joint's position (±inf for joints without limits).
    #[getter]
    fn joint_limits<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>) {
        let (lo, hi): (Vec<f64>, Vec<f64>) = self
            .layout
            .joint_infos
            .iter()
            .map(|i| i.limits.map_or((f64::NEG_INFINITY, f64::INFINITY), |[l, h]| (l, h)))
            .unzip();
        (PyArray1::from_vec(py, lo), PyArray1::from_vec(py, hi))
    }
    /// Body names, the order of :attr:`positions`.
    #[getter]
    fn body_names(&self) -> Vec<String> {
        self.inner().batch.worlds()[0].bodies().iter().map(|b| b.name.clone()).collect()
    }
    /// World position of every body frame origin in every world, shape ``(n, nbodies, 3)``.
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray3<f64>> {
        self.per_body(py, |s| s.pose.translation.as_slice().to_vec())
    }
    /// World placement of every body frame in every world as 4x4 homogeneous matrices, shape
    /// ``(n, nbodies, 4, 4)`` (as :attr:`World.poses`).
    #[getter]
    fn poses<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray4<f64>> {
        let inner = self.inner();
        let worlds = inner.batch.worlds();
        let nb = worlds[0].states().len();
        let flat: Vec<f64> = worlds.iter().flat_map(|w| w.states().iter().flat_map(|s| homogeneous(&s.pose))).collect();
        let a = numpy::ndarray::Array4::from_shape_vec((worlds.len(), nb, 4, 4), flat).expect("16 per body");
        numpy::PyArray4::from_owned_array(py, a)
    }
    /// World velocity of every body frame origin in every world, shape ``(n, nbodies, 3)``.
    #[getter]
    fn linear_velocities<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray3<f64>> {
        self.per_body(py, |s| s.linear.as_slice().to_vec())
    }
    /// World angular velocity of every body in every world, shape ``(n, nbodies, 3)``.
    #[getter]
    fn angular_velocities<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray3<f64>> {
        self.per_body(py, |s| s.angular.as_slice().to_vec())
    }

    fn __repr__(&self) -> String {
        format!(
            "karakuri.Batch(n={}, actuators={}, obs_dim={}, dt={} s)",
            self.inner().batch.len(),
            self.layout.actuated.len(),
            self.layout.obs_dim(),
            self.dt
        )
    }
}

/// Copies an `(n, m)` float array argument into `dst` (row-major), one copy when it is a
/// C-contiguous float64 array; `ValueError` naming the argument and the shape otherwise.
fn read_rows(name: &str, obj: &Bound<'_, PyAny>, n: usize, m: usize, dst: &mut [f64]) -> PyResult<()> {
    let err = |got: String| PyValueError::new_err(format!("argument '{name}' must have shape ({n}, {m}), got {got}"));
    let array = match obj.cast::<PyArray2<f64>>() {
        Ok(a) => a.clone(),
        Err(_) => {
            let np = obj.py().import("numpy")?;
            let a = np.call_method1("asarray", (obj, "float64")).map_err(|_| err("an object numpy cannot read as numbers".into()))?;
            let shape = a.cast::<PyUntypedArray>().map(|u| format!("{:?}", u.shape())).unwrap_or_default();
            a.cast_into::<PyArray2<f64>>().map_err(|_| err(shape))?
        }
    };
    if array.shape() != [n, m] {
        return Err(err(format!("{:?}", array.shape())));
    }
    let view = array.readonly();
    match view.as_slice() {
        Ok(s) => dst.copy_from_slice(s),
        Err(_) => dst.iter_mut().zip(view.as_array().iter()).for_each(|(d, x)| *d = *x),
    }
    if dst.iter().any(|x| !x.is_finite()) {
        return Err(PyValueError::new_err(format!("argument '{name}' has NaN or infinite entries")));
    }
    Ok(())
}
