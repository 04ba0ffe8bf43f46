//! Python bindings of karakuri (the `karakuri._native` extension module of the `karakuri`
//! package): Pinocchio-shaped dynamics over numpy arrays, and the simulator (`World`,
//! `Batch`, Python controllers).
//!
//! A thin layer: each function checks and reads its arguments into buffers allocated once per
//! `Data`, calls one function of the `karakuri` crate, and returns a new numpy array. Every
//! error is a Python exception (`ValueError` for bad arguments, naming the argument and the
//! expected shape; `UrdfError` with the loader's located message; `RuntimeError` for a read
//! that needs an earlier call).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod batch;
mod batch_dynamics;
mod constraints;
mod control;
mod convert;
mod dynamics;
mod errors;
mod mjcf;
mod model;
mod sim;
mod snapshot;
mod viewer;

use pyo3::prelude::*;

/// Descriptive names and Pinocchio's names for the same functions: (alias, function).
const ALIASES: &[(&str, &str)] = &[
    ("buildModelFromUrdf", "load_urdf"),
    ("inverse_dynamics", "rnea"),
    ("nonlinear_effects", "nle"),
    ("nonLinearEffects", "nle"),
    ("gravity_torques", "gravity"),
    ("compute_generalized_gravity", "gravity"),
    ("computeGeneralizedGravity", "gravity"),
    ("mass_matrix", "crba"),
    ("forward_dynamics", "aba"),
    ("mass_matrix_inverse", "minverse"),
    ("compute_minverse", "minverse"),
    ("computeMinverse", "minverse"),
    ("forwardKinematics", "forward_kinematics"),
    ("joint_jacobians", "compute_joint_jacobians"),
    ("computeJointJacobians", "compute_joint_jacobians"),
    ("getJointJacobian", "get_joint_jacobian"),
    ("getFrameJacobian", "get_frame_jacobian"),
    ("centerOfMass", "center_of_mass"),
    ("jacobianCenterOfMass", "center_of_mass_jacobian"),
    ("computeKineticEnergy", "kinetic_energy"),
    ("computePotentialEnergy", "potential_energy"),
    ("randomConfiguration", "random_configuration"),
    ("computeRNEADerivatives", "compute_rnea_derivatives"),
    ("computeABADerivatives", "compute_aba_derivatives"),
];

/// karakuri: rigid-body dynamics in Rust, Pinocchio's conventions, numpy in and out.
///
/// >>> import karakuri, numpy as np
/// >>> model = karakuri.load_urdf("ur5.urdf")
/// >>> data = model.create_data()
/// >>> q = karakuri.neutral(model); v = np.zeros(model.nv)
/// >>> tau = karakuri.rnea(model, data, q, v, v)      # gravity compensation
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<model::PyModel>()?;
    m.add_class::<model::PyData>()?;
    m.add_class::<dynamics::PyReferenceFrame>()?;
    m.add_class::<constraints::PyConstraintSet>()?;
    m.add_class::<sim::PyWorld>()?;
    m.add_class::<control::PyControlIo>()?;
    m.add_class::<batch::PyBatch>()?;
    m.add_class::<snapshot::PySnapshot>()?;
    m.add_class::<viewer::PyLiveViewer>()?;
    m.add("SceneError", m.py().get_type::<errors::SceneError>())?;
    m.add("SimulationError", m.py().get_type::<errors::SimulationError>())?;
    m.add("ControllerError", m.py().get_type::<errors::ControllerError>())?;
    m.add("UrdfError", m.py().get_type::<model::UrdfError>())?;
    m.add("ConstraintError", m.py().get_type::<constraints::ConstraintError>())?;
    m.add_function(wrap_pyfunction!(model::load_urdf, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::rnea, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::nle, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::gravity, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::crba, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::aba, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::minverse, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::forward_kinematics, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::compute_joint_jacobians, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::get_joint_jacobian, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::get_frame_jacobian, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::center_of_mass, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::center_of_mass_jacobian, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::kinetic_energy, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::potential_energy, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::hybrid_dynamics, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::compute_rnea_derivatives, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::compute_aba_derivatives, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::neutral, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::random_configuration, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::integrate, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::difference, m)?)?;
    m.add_function(wrap_pyfunction!(dynamics::normalize, m)?)?;
    mjcf::register(m)?;
    batch_dynamics::register(m)?;
    for (alias, name) in ALIASES {
        m.add(*alias, m.getattr(*name)?)?;
    }
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
