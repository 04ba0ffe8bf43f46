//! What Python sees of a world's joints and sensors ([`Layout`]: names, actuated joints, the
//! observation vector) and the `ControlIo` a Python controller reads and writes.

use std::sync::Arc;

use crate::convert::{array2, read_vector};
use karakuri_sim::scene::SensorKind;
use karakuri_sim::{JointInfo, JointState, SimError, World};
use nalgebra::DMatrix;
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The names and sizes every array of a world is laid out by (fixed at load).
#[derive(Clone, Debug)]
pub struct Layout {
    /// The one-dof joints, the order of joint arrays.
    pub joints: Vec<String>,
    /// Indices (into `joints`) of the joints with an actuator, the order of command arrays.
    pub actuated: Vec<usize>,
    /// Limits and actuator of each joint.
    pub infos: Vec<JointInfo>,
    /// The sensors, the order of readings.
    pub sensors: Vec<String>,
    /// Values each sensor reads: 3 (accelerometer, rate gyro) or 6 (force).
    pub sensor_sizes: Vec<usize>,
}

impl Layout {
    /// The layout of `world`.
    pub fn of(world: &World) -> Layout {
        let infos = world.joint_infos();
        Layout {
            joints: world.one_dof_joints().to_vec(),
            actuated: (0..infos.len()).filter(|&k| infos[k].actuator.is_some()).collect(),
            infos,
            sensors: world.sensors().iter().map(|s| s.name.clone()).collect(),
            sensor_sizes: world
                .sensors()
                .iter()
                .map(|s| if s.kind == SensorKind::Force { 6 } else { 3 })
                .collect(),
        }
    }

    /// Index of a joint by name, or `ValueError`.
    pub fn joint(&self, name: &str) -> PyResult<usize> {
        self.joints
            .iter()
            .position(|j| j == name)
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

    /// Length of the observation vector: `q`, `dq`, then the sensors' values.
    pub fn obs_dim(&self) -> usize {
        2 * self.joints.len() + self.sensor_sizes.iter().sum::<usize>()
    }

    /// Names of the observation entries: `q:<joint>`, `dq:<joint>`, `<sensor>:<axis>`.
    pub fn obs_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.joints.iter().map(|j| format!("q:{j}")).collect();
        names.extend(self.joints.iter().map(|j| format!("dq:{j}")));
        for (s, &n) in self.sensors.iter().zip(&self.sensor_sizes) {
            let axes: &[&str] = if n == 6 { &["fx", "fy", "fz", "tx", "ty", "tz"] } else { &["x", "y", "z"] };
            names.extend(axes.iter().map(|a| format!("{s}:{a}")));
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
        for (r, &n) in world.readings().iter().zip(&self.sensor_sizes) {
            out[i..i + n].copy_from_slice(&r[..n]);
            i += n;
        }
    }
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
                world.set_joint_torque(&self.layout.joints[k], *t)?;
            }
        }
        for (a, t) in self.targets.iter().enumerate() {
            if let Some(t) = t {
                world.set_one_dof_target(self.layout.actuated[a], *t)?;
            }
        }
        Ok(())
    }

    fn column<'py>(&self, py: Python<'py>, f: impl Fn(&JointState) -> f64) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.states.iter().map(f).collect())
    }
}

#[pymethods]
impl PyControlIo {
    /// Simulated time (s).
    #[getter]
    fn time(&self) -> f64 {
        self.time
    }
    /// Steps taken.
    #[getter]
    fn steps(&self) -> u64 {
        self.steps
    }
    /// Names of the one-dof joints, the order of :attr:`q`, :attr:`dq`, :attr:`tau`.
    #[getter]
    fn joint_names(&self) -> Vec<String> {
        self.layout.joints.clone()
    }
    /// Names of the actuated joints, the order of :meth:`set_targets`.
    #[getter]
    fn actuator_names(&self) -> Vec<String> {
        self.layout.actuated.iter().map(|&k| self.layout.joints[k].clone()).collect()
    }
    /// Names of the sensors, the order of :attr:`readings`.
    #[getter]
    fn sensor_names(&self) -> Vec<String> {
        self.layout.sensors.clone()
    }
    /// Index of a one-dof joint in the joint arrays (``ValueError`` if none).
    fn joint_index(&self, name: &str) -> PyResult<usize> {
        self.layout.joint(name)
    }
    /// Joint positions (rad or m).
    #[getter]
    fn q<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.column(py, |s| s.q)
    }
    /// Joint velocities (rad/s or m/s).
    #[getter]
    fn dq<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.column(py, |s| s.dq)
    }
    /// Torque (force) that drove each joint over the last step.
    #[getter]
    fn tau<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.column(py, |s| s.tau)
    }
    /// ``(q, dq, tau)`` of one joint by name.
    fn joint_state(&self, joint: &str) -> PyResult<(f64, f64, f64)> {
        let s = self.states[self.layout.joint(joint)?];
        Ok((s.q, s.dq, s.tau))
    }
    /// A sensor's reading by name (3 or 6 values, sensor axes).
    fn sensor<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let i = self.layout.sensors.iter().position(|s| s == name).ok_or_else(|| {
            PyValueError::new_err(SimError::UnknownSensor { sensor: name.to_string() }.to_string())
        })?;
        Ok(PyArray1::from_slice(py, &self.readings[i][..self.layout.sensor_sizes[i]]))
    }
    /// Every sensor's reading, shape ``(nsensors, 6)`` (3-value sensors padded with zeros).
    #[getter]
    fn readings<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        let r = &self.readings;
        array2(py, &DMatrix::from_fn(r.len(), 6, |i, k| r[i][k]))
    }
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
}
