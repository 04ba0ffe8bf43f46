//! What Python sees of a world's joints and sensors ([`Layout`]: names, actuated joints, the
//! observation vector) and the `ControlIo` a Python controller reads and writes.

use std::borrow::Cow;
use std::sync::Arc;

use crate::convert::read_vector;
use karakuri_sim::{JointState, SimError, World};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The components of a floating base's or free body's observation: world position of its
/// frame origin, orientation quaternion (`x y z w`, `w ≥ 0`), world linear velocity of the
/// origin, world angular velocity.
pub const FREE_BODY_STATE: [&str; 13] = ["x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz"];

/// The names and sizes every array of a world is laid out by (fixed at load): the world's
/// [`karakuri_sim::Layout`] (joints with their limits and actuators, actuated joints, sensor
/// slots; its fields read through `Deref`).
#[derive(Clone, Debug)]
pub struct Layout {
    /// The world's layout: the order of joint, command and sensor arrays.
    pub base: karakuri_sim::Layout,
}

impl std::ops::Deref for Layout {
    type Target = karakuri_sim::Layout;
    fn deref(&self) -> &karakuri_sim::Layout {
        &self.base
    }
}

impl Layout {
    /// The layout of `world`.
    pub fn of(world: &World) -> Layout {
        Layout { base: world.layout().clone() }
    }

    /// Index of a joint by name, or `ValueError`.
    pub fn joint(&self, name: &str) -> PyResult<usize> {
        self.base
            .joint(name)
            .ok_or_else(|| PyValueError::new_err(format!("no one-dof joint named '{name}' (joints: {:?})", self.joints)))
    }

    /// Index of an actuated joint by name in the command arrays, or `ValueError`.
    pub fn actuator(&self, name: &str) -> PyResult<usize> {
        let k = self.joint(name)?;
        self.actuated
            .iter()
            .position(|&a| a == k)
            .ok_or_else(|| PyValueError::new_err(SimError::NoActuator { joint: name.to_string() }.to_string()))
    }

    /// Length of the observation vector: `q`, `dq`, the sensors' values, then 13 per floating
    /// base or free body.
    pub fn obs_dim(&self) -> usize {
        2 * self.joints.len() + self.sensor_values() + FREE_BODY_STATE.len() * self.free_bodies.len()
    }

    /// Names of the observation entries: `q:<joint>`, `dq:<joint>`, `<sensor>:<axis>`, then
    /// `base:<name>:<component>` for each floating base (named by its robot) and free body.
    pub fn obs_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.joints.iter().map(|j| format!("q:{j}")).collect();
        names.extend(self.joints.iter().map(|j| format!("dq:{j}")));
        names.extend(self.sensor_components().map(|(s, a)| format!("{s}:{a}")));
        for b in &self.free_bodies {
            names.extend(FREE_BODY_STATE.iter().map(|c| format!("base:{}:{c}", b.name)));
        }
        names
    }

    /// Writes `world`'s observation into `out` (`obs_dim` long), using `joints` (one per
    /// joint) as scratch. Allocates nothing.
    pub fn observe(&self, world: &World, joints: &mut [JointState], out: &mut [f64]) {
        let nj = self.joints.len();
        world.write_joint_states(joints);
        for (k, s) in joints.iter().enumerate() {
            out[k] = s.q;
            out[nj + k] = s.dq;
        }
        let mut i = 2 * nj;
        for (r, s) in world.readings().iter().zip(&self.sensors) {
            out[i..i + s.width].copy_from_slice(&r[..s.width]);
            i += s.width;
        }
        let states = world.states();
        for (b, o) in self.free_bodies.iter().zip(out[i..].chunks_exact_mut(FREE_BODY_STATE.len())) {
            let s = &states[b.body];
            o[0..3].copy_from_slice(s.pose.translation.as_slice());
            o[3..7].copy_from_slice(&karakuri::spatial::quat_to_xyzw(&s.pose.rotation));
            o[7..10].copy_from_slice(s.linear.as_slice());
            o[10..13].copy_from_slice(s.angular.as_slice());
        }
    }
}

/// What the getters both Python classes share ([`joint_view_methods!`]: names, indices,
/// `q` / `dq` / `tau`, sensors, time) read: a world now (`World`) or a snapshot of it taken for
/// a controller (`ControlIo`).
pub trait JointView {
    /// The world's layout.
    fn layout(&self) -> &Layout;
    /// Simulated time (s) and steps taken.
    fn clock(&self) -> (f64, u64);
    /// The state of each joint of `layout().joints`.
    fn joint_states(&self) -> Cow<'_, [JointState]>;
    /// Each sensor's reading (the first 3 or 6 values used), over `layout().sensors`.
    fn readings(&self) -> Cow<'_, [[f64; 6]]>;
}

/// `#[pymethods] impl $class { ... }` with the getters every [`JointView`] shows Python (the
/// same names, arguments and docs on `World` and `ControlIo`), then the class's own methods
/// given as `$own`. (PyO3 takes one `#[pymethods]` block per class without its
/// `multiple-pymethods` feature, hence a macro over the whole block.)
macro_rules! joint_view_methods {
    ($class:ty { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            /// Simulated time (s).
            #[getter]
            fn time(&self) -> f64 {
                $crate::control::JointView::clock(self).0
            }
            /// Steps taken.
            #[getter]
            fn steps(&self) -> u64 {
                $crate::control::JointView::clock(self).1
            }
            /// Names of the one-dof joints (``robot/joint`` for robots), the order of
            /// :attr:`q`, :attr:`dq`, :attr:`tau`.
            #[getter]
            fn joint_names(&self) -> Vec<String> {
                $crate::control::JointView::layout(self).joints.clone()
            }
            /// Names of the joints that have an actuator, the order of :meth:`set_targets`.
            #[getter]
            fn actuator_names(&self) -> Vec<String> {
                let layout = $crate::control::JointView::layout(self);
                layout.actuated.iter().map(|&k| layout.joints[k].clone()).collect()
            }
            /// Names of the sensors, the order of :attr:`readings`.
            #[getter]
            fn sensor_names(&self) -> Vec<String> {
                $crate::control::JointView::layout(self).sensor_names()
            }
            /// Index of a one-dof joint in the joint arrays (``ValueError`` if none).
            fn joint_index(&self, name: &str) -> PyResult<usize> {
                $crate::control::JointView::layout(self).joint(name)
            }
            /// Joint positions (rad or m), over :attr:`joint_names`.
            #[getter]
            fn q<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<f64>> {
                $crate::control::joint_column(self, py, |s| s.q)
            }
            /// Joint velocities (rad/s or m/s), over :attr:`joint_names`.
            #[getter]
            fn dq<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<f64>> {
                $crate::control::joint_column(self, py, |s| s.dq)
            }
            /// Torque (force) that drove each joint over the last step, the user's plus its
            /// actuator's, over :attr:`joint_names`.
            #[getter]
            fn tau<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<f64>> {
                $crate::control::joint_column(self, py, |s| s.tau)
            }
            /// ``(q, dq, tau)`` of one joint by name.
            fn joint_state(&self, joint: &str) -> PyResult<(f64, f64, f64)> {
                let k = $crate::control::JointView::layout(self).joint(joint)?;
                let s = $crate::control::JointView::joint_states(self)[k];
                Ok((s.q, s.dq, s.tau))
            }
            /// A sensor's reading by name after the last step, sensor axes: 3 values
            /// (accelerometer m/s², rate gyro rad/s) or 6 (force sensor: fx, fy, fz, tx, ty, tz).
            fn sensor<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
                $crate::control::sensor_reading(self, py, name)
            }
            /// Every sensor's reading, shape ``(nsensors, 6)`` over :attr:`sensor_names`
            /// (accelerometers and gyros fill the first 3 columns, zeros after).
            #[getter]
            fn readings<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray2<f64>> {
                let r = $crate::control::JointView::readings(self);
                $crate::convert::array2(py, &nalgebra::DMatrix::from_fn(r.len(), 6, |i, k| r[i][k]))
            }

            $($own)*
        }
    };
}
pub(crate) use joint_view_methods;

/// One value of every joint's state, over the layout's joints.
pub fn joint_column<'py>(
    view: &impl JointView,
    py: Python<'py>,
    f: impl Fn(&JointState) -> f64,
) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_vec(py, view.joint_states().iter().map(f).collect())
}

/// A sensor's reading by name (its 3 or 6 values), or `ValueError`.
pub fn sensor_reading<'py>(view: &impl JointView, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let layout = view.layout();
    let i = layout.sensor(name).ok_or_else(|| {
        PyValueError::new_err(SimError::UnknownSensor { sensor: name.to_string() }.to_string())
    })?;
    Ok(PyArray1::from_slice(py, &view.readings()[i][..layout.sensors[i].width]))
}

/// What a Python controller reads and writes in one call (a snapshot of the world taken just
/// before the call; the commands are applied when the controller returns).
///
/// Joint arrays are over :attr:`joint_names`, command arrays over :attr:`actuator_names`.
#[pyclass(name = "ControlIo", module = "karakuri")]
pub struct PyControlIo {
    layout: Arc<Layout>,
    time: f64,
    steps: u64,
    states: Vec<JointState>,
    readings: Vec<[f64; 6]>,
    /// New actuator targets, per entry of `layout.actuated`.
    targets: Vec<Option<f64>>,
    /// New joint torques, per joint.
    torques: Vec<Option<f64>>,
}

impl PyControlIo {
    /// The controller's view of `world` now.
    pub fn new(world: &World, layout: &Arc<Layout>) -> PyControlIo {
        let mut states = vec![JointState::default(); layout.joints.len()];
        world.write_joint_states(&mut states);
        PyControlIo {
            layout: layout.clone(),
            time: world.time(),
            steps: world.steps(),
            states,
            readings: world.readings().to_vec(),
            targets: vec![None; layout.actuated.len()],
            torques: vec![None; layout.joints.len()],
        }
    }

    /// Applies the commands written (torques, then targets; the world checks each target).
    pub fn apply(&self, world: &mut World) -> Result<(), SimError> {
        for (k, t) in self.torques.iter().enumerate() {
            if let Some(t) = t {
                world.set_one_dof_torque(k, *t)?;
            }
        }
        for (a, t) in self.targets.iter().enumerate() {
            if let Some(t) = t {
                world.set_one_dof_target(self.layout.actuated[a], *t)?;
            }
        }
        Ok(())
    }
}

impl JointView for PyControlIo {
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn clock(&self) -> (f64, u64) {
        (self.time, self.steps)
    }
    fn joint_states(&self) -> Cow<'_, [JointState]> {
        Cow::Borrowed(&self.states)
    }
    fn readings(&self) -> Cow<'_, [[f64; 6]]> {
        Cow::Borrowed(&self.readings)
    }
}

joint_view_methods!(PyControlIo {
    /// Sets the target of a joint's actuator (torque, position or speed by its mode).
    fn set_target(&mut self, joint: &str, target: f64) -> PyResult<()> {
        let a = self.layout.actuator(joint)?;
        self.targets[a] = Some(target);
        Ok(())
    }
    /// Sets every actuator's target, an array over :attr:`actuator_names`.
    fn set_targets(&mut self, targets: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut x = vec![0.0; self.targets.len()];
        read_vector("targets", "nactuators", targets, &mut x)?;
        self.targets.iter_mut().zip(x).for_each(|(t, x)| *t = Some(x));
        Ok(())
    }
    /// Sets a joint's torque (force), added to its actuator's.
    fn set_torque(&mut self, joint: &str, torque: f64) -> PyResult<()> {
        if !torque.is_finite() {
            return Err(PyValueError::new_err("argument 'torque' must be finite"));
        }
        let k = self.layout.joint(joint)?;
        self.torques[k] = Some(torque);
        Ok(())
    }
    /// Sets every joint's torque, an array over :attr:`joint_names`.
    fn set_torques(&mut self, torques: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut x = vec![0.0; self.torques.len()];
        read_vector("torques", "njoints", torques, &mut x)?;
        self.torques.iter_mut().zip(x).for_each(|(t, x)| *t = Some(x));
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!("karakuri.ControlIo(t={} s, joints={})", self.time, self.layout.joints.len())
    }
});
