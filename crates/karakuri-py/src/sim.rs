//! `World`: a scene file stepped by karakuri's simulator, through `karakuri_sim::World`'s
//! public API only: stepping with the GIL released, joint states, sensor readings, commands,
//! contacts, body states and Python controllers called every control period.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::control::{joint_view_methods, JointView, Layout, PyControlIo};
use crate::convert::{array2, fill2, read_vector};
use crate::model::homogeneous;
use crate::errors::{sim_error, ControllerError};
use crate::snapshot::PySnapshot;
use karakuri_sim::{JointState, SimError, StepDerivatives, World};
use nalgebra::DMatrix;
use numpy::{PyArray1, PyArray2, PyArray3};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A Python controller: the callable and its period in steps.
struct PyController {
    callback: Py<PyAny>,
    every: u64,
}

/// Steps per GIL release when no controller is due sooner (Ctrl-C is checked between them).
const CHUNK: u64 = 1024;

/// A simulated world loaded from a scene file (JSON or YAML, docs/SCENE_FORMAT.md): free
/// bodies, static bodies, URDF robots, actuators, sensors, contacts.
///
/// Joint arrays are over :attr:`joint_names` (the one-dof joints, ``robot/joint`` for
/// robots), command arrays over :attr:`actuator_names`, sensor arrays over
/// :attr:`sensor_names`, body states over :attr:`body_names` in world axes.
/// A world can be handed to another thread; :meth:`step` releases the GIL.
#[pyclass(name = "World", module = "karakuri")]
pub struct PyWorld {
    // A `Mutex` only to make the class `Sync` as PyO3 requires (`karakuri_sim::World` is
    // `Send`, not `Sync`): `&mut self` methods reach it without locking.
    world: Mutex<World>,
    layout: Arc<Layout>,
    controllers: Vec<PyController>,
    /// The step derivatives' matrices, made at the first :meth:`step_derivatives`.
    derivs: Option<StepDerivatives>,
}

impl PyWorld {
    /// A Python world around a built simulator world.
    pub fn new(world: World) -> PyWorld {
        PyWorld {
            layout: Arc::new(Layout::of(&world)),
            world: Mutex::new(world),
            controllers: Vec::new(),
            derivs: None,
        }
    }
    pub(crate) fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(PoisonError::into_inner)
    }
    pub(crate) fn world_mut(&mut self) -> &mut World {
        self.world.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
    fn rows3(&self, f: impl Fn(&karakuri_sim::BodyState) -> [f64; 3]) -> DMatrix<f64> {
        let w = self.world();
        let s = w.states();
        DMatrix::from_fn(s.len(), 3, |i, k| f(&s[i])[k])
    }

    /// Calls the controllers due at the current step, then applies their commands.
    fn control(&mut self, py: Python<'_>) -> PyResult<()> {
        let steps = self.world().steps();
        for c in 0..self.controllers.len() {
            if !steps.is_multiple_of(self.controllers[c].every) {
                continue;
            }
            let io = Py::new(py, PyControlIo::new(&self.world(), &self.layout))?;
            if let Err(e) = self.controllers[c].callback.call1(py, (io.clone_ref(py),)) {
                let err = ControllerError::new_err(format!(
                    "controller {c} raised at t = {} s (step {steps}): {}",
                    self.world().time(),
                    e.value(py)
                ));
                err.set_cause(py, Some(e));
                return Err(err);
            }
            io.borrow(py).apply(self.world_mut()).map_err(sim_error)?;
        }
        Ok(())
    }
}

impl JointView for PyWorld {
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn clock(&self) -> (f64, u64) {
        let w = self.world();
        (w.time(), w.steps())
    }
    fn joint_states(&self) -> Cow<'_, [JointState]> {
        let mut out = vec![JointState::default(); self.layout.joints.len()];
        self.world().write_joint_states(&mut out);
        Cow::Owned(out)
    }
    fn readings(&self) -> Cow<'_, [[f64; 6]]> {
        Cow::Owned(self.world().readings().to_vec())
    }
}

joint_view_methods!(PyWorld {
    /// Loads a scene file. Raises :class:`SceneError` (a ``ValueError``) with the file, the
    /// path inside it and the reason.
    #[staticmethod]
    fn from_file(path: std::path::PathBuf) -> PyResult<Self> {
        Ok(PyWorld::new(World::from_file(&path).map_err(sim_error)?))
    }

    /// Advances ``n`` time steps with the GIL released, calling the Python controllers on
    /// their periods (before the step, with the GIL). Raises :class:`SimulationError` if the
    /// simulation diverges (the world stays at the last good step), :class:`ControllerError`
    /// if a controller raises, ``ValueError`` for a bad command; Ctrl-C interrupts between
    /// steps.
    #[pyo3(signature = (n = 1))]
    fn step(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        let mut done = 0;
        while done < n {
            let mut k = CHUNK.min(n - done);
            if !self.controllers.is_empty() {
                self.control(py)?;
                let s = self.world().steps();
                for c in &self.controllers {
                    k = k.min(c.every - s % c.every);
                }
            }
            let world = self.world_mut();
            py.detach(|| (0..k).try_for_each(|_| world.step())).map_err(sim_error)?;
            done += k;
            py.check_signals()?;
        }
        Ok(())
    }

    /// Registers ``controller(io)``, called every ``period`` seconds (a whole number of time
    /// steps) before the step, first before the next step; controllers run in the order
    /// they were added. ``io`` is a :class:`ControlIo`: it reads time, joint states and
    /// sensor readings and takes commands, applied when the controller returns.
    fn add_controller(&mut self, controller: Bound<'_, PyAny>, period: f64) -> PyResult<()> {
        if !controller.is_callable() {
            return Err(PyValueError::new_err("argument 'controller' must be callable: controller(io)"));
        }
        let dt = self.world().dt();
        let every = (period / dt).round();
        if !(every >= 1.0 && (every * dt - period).abs() <= 1e-9 * period.abs().max(dt)) {
            return Err(sim_error(SimError::BadControlPeriod { period, dt }));
        }
        self.controllers.push(PyController {
            callback: controller.unbind(),
            every: every as u64,
        });
        Ok(())
    }

    /// The world's full state now, a :class:`Snapshot` (picklable) that :meth:`restore`
    /// returns this world, or another world of the same scene, to: the steps that follow a
    /// restore are bit for bit those that followed the snapshot. Python controllers keep
    /// their registration but their own state (Python objects) is not in the snapshot.
    fn snapshot(&self) -> PyResult<PySnapshot> {
        Ok(PySnapshot {
            inner: self.world().snapshot().map_err(sim_error)?,
        })
    }

    /// Sets the world to ``snapshot`` (taken from a world of the same scene and time step);
    /// ``ValueError`` with the reason otherwise, the world then left as it was.
    fn restore(&mut self, snapshot: PyRef<'_, PySnapshot>) -> PyResult<()> {
        self.world_mut().restore(&snapshot.inner).map_err(sim_error)
    }

    /// Sets the torque (N·m, or force in N for a prismatic joint) of a one-dof joint by name,
    /// added to its actuator's from the next step on.
    fn set_joint_torque(&mut self, joint: &str, torque: f64) -> PyResult<()> {
        if !torque.is_finite() {
            return Err(PyValueError::new_err("argument 'torque' must be finite"));
        }
        self.world_mut().set_joint_torque(joint, torque).map_err(sim_error)
    }

    /// Sets the torque of every one-dof joint, an array over :attr:`joint_names`.
    fn set_joint_torques(&mut self, torques: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut tau = vec![0.0; self.layout.joints.len()];
        read_vector("torques", "njoints", torques, &mut tau)?;
        let PyWorld { world, .. } = self;
        let world = world.get_mut().unwrap_or_else(PoisonError::into_inner);
        for (k, t) in tau.into_iter().enumerate() {
            world.set_one_dof_torque(k, t).map_err(sim_error)?;
        }
        Ok(())
    }

    /// Sets every one-dof joint's position (rad or m), an array over :attr:`joint_names`;
    /// velocities and the rest of the state are kept, the next step starts from it.
    fn set_joint_positions(&mut self, q: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut x = vec![0.0; self.layout.joints.len()];
        read_vector("q", "njoints", q, &mut x)?;
        self.world_mut().set_joint_positions(&x).map_err(sim_error)
    }

    /// Sets every one-dof joint's velocity (rad/s or m/s), an array over :attr:`joint_names`.
    fn set_joint_velocities(&mut self, dq: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut x = vec![0.0; self.layout.joints.len()];
        read_vector("dq", "njoints", dq, &mut x)?;
        self.world_mut().set_joint_velocities(&x).map_err(sim_error)
    }

    /// The derivatives of the next step at the state now, ``(A, B)``: ``A = ∂x⁺/∂x``, shape
    /// ``(2 nv, 2 nv)``, and ``B = ∂x⁺/∂u``, ``(2 nv, nactuators)``, with the state ``x = (δq,
    /// δv)`` in the tangent space — the one-dof joints in :attr:`joint_names` order, then each
    /// free body or floating base as position and rotation vector (velocities: linear and
    /// angular, body axes), a ball joint as a rotation vector — and ``u`` the targets
    /// :meth:`set_targets` takes, over :attr:`actuator_names` (README, "Derivatives of the
    /// step"). The world does not change; controllers are not part of it. Contacts of a box,
    /// ball or capsule with a static plane are gone through by the solve's active set (record
    /// 0078). Raises ``ValueError`` naming what the derivatives do not go through yet
    /// (redundant sliding contacts, other shape pairs, loops, joint limits the step holds,
    /// velocity servos, ...). ``out=(A, B)``: float64 arrays of those shapes (any layout;
    /// Fortran order copies fastest) that are filled and returned instead of new ones, for a
    /// loop that calls this often.
    #[pyo3(signature = (out=None))]
    #[allow(clippy::type_complexity)]
    fn step_derivatives<'py>(
        &mut self,
        py: Python<'py>,
        out: Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    ) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>)> {
        let need = |what: &str, x: Bound<'py, PyAny>| {
            x.cast_into::<PyArray2<f64>>().map_err(|_| PyValueError::new_err(format!("step_derivatives: {what}: a 2-D float64 numpy array is needed")))
        };
        let out = match out {
            Some((a, b)) => Some((need("out[0] (A)", a)?, need("out[1] (B)", b)?)),
            None => None,
        };
        let PyWorld { world, derivs, .. } = self;
        let world = world.get_mut().unwrap_or_else(PoisonError::into_inner);
        let d = derivs.get_or_insert_with(|| {
            let (nv, nu) = world.step_derivative_sizes();
            StepDerivatives::new(nv, nu)
        });
        world.step_derivatives(d).map_err(sim_error)?;
        match out {
            None => Ok((array2(py, &d.a), array2(py, &d.b))),
            Some((a, b)) => {
                fill2("step_derivatives: out[0] (A)", &a, &d.a)?;
                fill2("step_derivatives: out[1] (B)", &b, &d.b)?;
                Ok((a, b))
            }
        }
    }

    /// Sets the target of a joint's actuator by name (a torque, position or speed by its
    /// mode), used from the next step on. ``ValueError`` if the joint has no actuator or
    /// the target is outside its limits.
    fn set_joint_target(&mut self, joint: &str, target: f64) -> PyResult<()> {
        self.world_mut().set_joint_target(joint, target).map_err(sim_error)
    }

    /// Sets every actuator's target, an array over :attr:`actuator_names`.
    fn set_targets(&mut self, targets: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut x = vec![0.0; self.layout.actuated.len()];
        read_vector("targets", "nactuators", targets, &mut x)?;
        let PyWorld { world, layout, .. } = self;
        let world = world.get_mut().unwrap_or_else(PoisonError::into_inner);
        for (&k, t) in layout.actuated.iter().zip(x) {
            world.set_one_dof_target(k, t).map_err(sim_error)?;
        }
        Ok(())
    }

    /// The track surfaces by name (scene bodies with ``track``, ``robot/link`` for a robot's
    /// tracks and a ``.body`` file's ``pseudo_continuous_track`` links).
    #[getter]
    fn track_names(&self) -> Vec<String> {
        self.layout.tracks.clone()
    }

    /// A track's surface speed command (m/s) by name.
    fn track_speed(&self, track: &str) -> PyResult<f64> {
        self.world().track_speed(track).map_err(sim_error)
    }

    /// Sets a track's surface speed (m/s) by name, used from the next step on (a positive
    /// speed turns the surface positively about the track's axis). ``ValueError`` for an
    /// unknown track or a speed that is not finite.
    fn set_track_speed(&mut self, track: &str, speed: f64) -> PyResult<()> {
        self.world_mut().set_track_speed(track, speed).map_err(sim_error)
    }

    /// The time step (s).
    #[getter]
    fn dt(&self) -> f64 {
        self.world().dt()
    }
    /// Total mechanical energy, kinetic + gravitational (J).
    #[getter]
    fn energy(&self) -> f64 {
        self.world().energy()
    }
    /// Non-fatal remarks of the load (e.g. a URDF's repaired inertias).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.world().warnings().to_vec()
    }

    /// The observation vector of :class:`Batch` for this world: ``q``, ``dq``, every sensor's
    /// values, then 13 per floating base and free body (position, quaternion ``x y z w``,
    /// linear and angular velocity, world axes; names in :attr:`observation_names`).
    fn observation<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let mut out = vec![0.0; self.layout.obs_dim()];
        let mut joints = vec![JointState::default(); self.layout.joints.len()];
        self.layout.observe(&self.world(), &mut joints, &mut out);
        PyArray1::from_vec(py, out)
    }
    /// Names of the entries of :meth:`observation`: ``q:<joint>``, ``dq:<joint>``,
    /// ``<sensor>:<axis>`` (axes x, y, z, and fx … tz for force sensors), then
    /// ``base:<name>:<x y z qx qy qz qw vx vy vz wx wy wz>`` (a floating base is named by its
    /// robot, a free body by itself).
    #[getter]
    fn observation_names(&self) -> Vec<String> {
        self.layout.obs_names()
    }

    /// Body names (``robot/link`` for robot links), the order of every state array.
    #[getter]
    fn body_names(&self) -> Vec<String> {
        self.world().bodies().iter().map(|b| b.name.clone()).collect()
    }
    /// Index of the body named ``name`` in the state arrays (``ValueError`` if none).
    fn body_index(&self, name: &str) -> PyResult<usize> {
        self.world().body_index(name).ok_or_else(|| PyValueError::new_err(format!("no body named '{name}'")))
    }
    /// World position of every body frame origin, shape ``(nbodies, 3)``.
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        array2(py, &self.rows3(|s| s.pose.translation.into()))
    }
    /// World placement of every body frame as 4x4 homogeneous matrices, shape ``(nbodies, 4, 4)``.
    #[getter]
    fn poses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray3<f64>> {
        let w = self.world();
        let s = w.states();
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
        let w = self.world();
        let bodies = w.bodies();
        w.contacts()
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
    /// Net contact wrench on each body over the last step, world axes: ``(forces, torques)``,
    /// each of shape ``(nbodies, 3)``, torques about the body-frame origin.
    #[getter]
    fn contact_wrenches<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>) {
        let w = self.world().contact_wrenches();
        let f = DMatrix::from_fn(w.len(), 3, |i, k| w[i].0[k]);
        let t = DMatrix::from_fn(w.len(), 3, |i, k| w[i].1[k]);
        (array2(py, &f), array2(py, &t))
    }

    /// Gravity now (m/s², world axes).
    #[getter]
    fn gravity(&self) -> [f64; 3] {
        self.world().gravity().into()
    }
    /// Sets gravity (m/s², a sequence of 3, world axes) from the next step on; ``ValueError``
    /// when not finite or beyond the scene format's bound (the world unchanged).
    fn set_gravity(&mut self, g: [f64; 3]) -> PyResult<()> {
        self.world_mut().set_gravity(g.into()).map_err(sim_error)
    }
    /// Sets the contact mode of every pair of a body of ``a`` with a body of ``b`` from the
    /// next step on: ``"none"``, ``"lcp"`` (the constraint model) or ``"penalty"`` (with
    /// ``stiffness`` N/m and ``damping`` N·s/m). ``a`` and ``b`` are a name or a list of
    /// names: a body (``robot/link``), a robot (all its links) or ``"*"`` (every body), so
    /// ``set_contact_mode("box", "*", "none")`` is one body against all. Pairs the scene never
    /// collides (parent and child, excluded pairs) stay off. Returns how many collision shape
    /// pairs it reached.
    #[pyo3(signature = (a, b, mode, stiffness = None, damping = None))]
    fn set_contact_mode(&mut self, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, mode: &str, stiffness: Option<f64>, damping: Option<f64>) -> PyResult<usize> {
        use karakuri_sim::scene::ContactMode;
        let mode = match (mode, stiffness) {
            ("none", None) => ContactMode::None,
            ("lcp", None) => ContactMode::Lcp,
            ("penalty", Some(stiffness)) => ContactMode::Penalty { stiffness, damping: damping.unwrap_or(0.0) },
            ("penalty", None) => return Err(PyValueError::new_err("mode 'penalty' needs a stiffness (N/m)")),
            ("none" | "lcp", Some(_)) => return Err(PyValueError::new_err("only mode 'penalty' takes a stiffness")),
            (m, _) => return Err(PyValueError::new_err(format!("unknown contact mode '{m}' (none, lcp, penalty)"))),
        };
        if damping.is_some() && stiffness.is_none() {
            return Err(PyValueError::new_err("only mode 'penalty' takes a damping"));
        }
        let (a, b) = (names(a)?, names(b)?);
        let (a, b): (Vec<&str>, Vec<&str>) = (a.iter().map(String::as_str).collect(), b.iter().map(String::as_str).collect());
        self.world_mut().set_contact_mode(&a, &b, mode).map_err(sim_error)
    }
    /// Sets the material of every collision shape of ``bodies`` (a name or a list, as in
    /// :meth:`set_contact_mode`) from the next step on (``dynamic_friction`` defaults to
    /// ``static_friction``); a contact takes the mean of its two shapes' materials.
    #[pyo3(signature = (bodies, static_friction, dynamic_friction = None, restitution = 0.0))]
    fn set_material(&mut self, bodies: &Bound<'_, PyAny>, static_friction: f64, dynamic_friction: Option<f64>, restitution: f64) -> PyResult<()> {
        let material = karakuri_sim::scene::Material { static_friction, dynamic_friction: dynamic_friction.unwrap_or(static_friction), restitution };
        let bodies = names(bodies)?;
        let bodies: Vec<&str> = bodies.iter().map(String::as_str).collect();
        self.world_mut().set_material(&bodies, material).map_err(sim_error)
    }
    /// The contact block's numbers now: a dict of ``error_correction_rate``,
    /// ``penetration_tolerance``, ``restitution_threshold_velocity``,
    /// ``friction_threshold_velocity``, ``prediction_distance``, ``max_depenetration_speed``.
    #[getter]
    fn contact_params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.world().contact_params().clone();
        let d = PyDict::new(py);
        for (k, v) in contact_numbers(&c) {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    /// Sets some of the contact block's numbers by keyword (those of :attr:`contact_params`)
    /// from the next step on; ``ValueError`` naming the key for an unknown key or a bad value
    /// (negative, NaN), the world then unchanged.
    #[pyo3(signature = (**numbers))]
    fn set_contact_params(&mut self, numbers: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        let mut c = self.world().contact_params().clone();
        for (k, v) in numbers.into_iter().flatten() {
            let (k, v): (String, f64) = (k.extract()?, v.extract()?);
            let slot = match k.as_str() {
                "error_correction_rate" => &mut c.error_correction_rate,
                "penetration_tolerance" => &mut c.penetration_tolerance,
                "restitution_threshold_velocity" => &mut c.restitution_threshold_velocity,
                "friction_threshold_velocity" => &mut c.friction_threshold_velocity,
                "prediction_distance" => &mut c.prediction_distance,
                "max_depenetration_speed" => &mut c.max_depenetration_speed,
                _ => return Err(PyValueError::new_err(format!("unknown contact parameter '{k}' (one of {})", contact_numbers(&c).map(|(k, _)| k).collect::<Vec<_>>().join(", ")))),
            };
            *slot = v;
        }
        self.world_mut().set_contact_params(c).map_err(sim_error)
    }
    /// Turns a robot's self-collision (the pairs among its links) off or back on from the next
    /// step on; returns how many collision shape pairs it reached.
    fn set_self_collision(&mut self, robot: &str, on: bool) -> PyResult<usize> {
        self.world_mut().set_self_collision(robot, on).map_err(sim_error)
    }
    /// Each one-dof joint's acceleration over the last step, ``(dq⁺ − dq)/dt`` (rad/s² or
    /// m/s²), an array over :attr:`joint_names`: with the default semi-implicit step, the
    /// acceleration solved at the step's start (Choreonoid's ``ddq``), contact impulses
    /// included. ``ValueError`` before the first step and after a restore.
    #[getter]
    fn joint_accelerations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mut out = vec![0.0; self.layout.joints.len()];
        self.world().write_joint_accelerations(&mut out).map_err(sim_error)?;
        Ok(PyArray1::from_vec(py, out))
    }
    /// Every body's acceleration over the last step (Choreonoid's ``dv``, ``dw``): the change
    /// of its frame origin's world velocity and of its angular velocity over ``dt``, as
    /// ``(linear, angular)``, each of shape ``(nbodies, 3)`` (m/s², rad/s², world axes). A
    /// free-falling body reads gravity.
    #[getter]
    fn body_accelerations<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>)> {
        let w = self.world();
        let acc = w.bodies().iter().map(|b| w.body_acceleration(&b.name)).collect::<Result<Vec<_>, _>>().map_err(sim_error)?;
        let lin = DMatrix::from_fn(acc.len(), 3, |i, k| acc[i].0[k]);
        let ang = DMatrix::from_fn(acc.len(), 3, |i, k| acc[i].1[k]);
        Ok((array2(py, &lin), array2(py, &ang)))
    }

    fn __repr__(&self) -> String {
        let w = self.world();
        format!("karakuri.World(bodies={}, joints={}, t={} s, dt={} s)", w.bodies().len(), self.layout.joints.len(), w.time(), w.dt())
    }
});

/// A name or a list of names.
fn names(x: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    match x.extract::<String>() {
        Ok(s) => Ok(vec![s]),
        Err(_) => x.extract::<Vec<String>>().map_err(|_| PyValueError::new_err("expected a name or a list of names")),
    }
}

/// The contact block's numbers by key.
fn contact_numbers(c: &karakuri_sim::scene::ContactParams) -> impl Iterator<Item = (&'static str, f64)> {
    [
        ("error_correction_rate", c.error_correction_rate),
        ("penetration_tolerance", c.penetration_tolerance),
        ("restitution_threshold_velocity", c.restitution_threshold_velocity),
        ("friction_threshold_velocity", c.friction_threshold_velocity),
        ("prediction_distance", c.prediction_distance),
        ("max_depenetration_speed", c.max_depenetration_speed),
    ]
    .into_iter()
}
