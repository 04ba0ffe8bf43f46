//! MJCF: `load_mjcf` (Pinocchio's `buildModelFromMJCF`) and MuJoCo's qpos/qvel to karakuri's
//! q/v and back (`karakuri::io::mjcf`; docs/MJCF.md has the conventions). Choreonoid's `.body`
//! files: `load_body` (`karakuri::io::body`; docs/BODY.md).

use std::sync::Arc;

use karakuri::io::mjcf;
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::{array1, vector};
use crate::model::PyModel;

pyo3::create_exception!(
    karakuri,
    MjcfError,
    pyo3::exceptions::PyValueError,
    "An MJCF file that cannot be loaded; the message says file:line: <element>: reason."
);

pyo3::create_exception!(
    karakuri,
    BodyError,
    pyo3::exceptions::PyValueError,
    "A Choreonoid .body file that cannot be loaded; the message says file:line: key: reason."
);

/// Loads a Choreonoid ``.body`` file (links depth first, fixed links merged into their parent).
/// Raises :class:`BodyError`.
#[pyfunction]
pub fn load_body(path: std::path::PathBuf) -> PyResult<PyModel> {
    let model = karakuri::io::body::load(&path).map_err(|e| BodyError::new_err(e.to_string()))?;
    Ok(PyModel { inner: Arc::new(model) })
}

fn value_error(e: mjcf::MjcfError) -> PyErr {
    PyValueError::new_err(e.reason)
}

/// Loads a MuJoCo MJCF file: joints and dofs in MuJoCo's order, names as in the file.
/// Raises :class:`MjcfError`. Alias: ``buildModelFromMJCF``.
#[pyfunction]
pub fn load_mjcf(path: std::path::PathBuf) -> PyResult<PyModel> {
    // mesh geoms weigh their meshes, read by the simulator's mesh reader
    let (model, _) = mjcf::load_with(&path, &karakuri_sim::mesh::MeshFiles).map_err(|e| MjcfError::new_err(e.to_string()))?;
    Ok(PyModel { inner: Arc::new(model) })
}

/// karakuri's ``q`` from MuJoCo's ``qpos`` (quaternions ``[w x y z]`` → ``[x y z w]``).
#[pyfunction]
pub fn from_mujoco_qpos<'py>(py: Python<'py>, model: &PyModel, qpos: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let m = &model.inner;
    let qpos = vector("qpos", "nq", qpos, m.nq)?;
    let q = mjcf::from_mujoco_qpos(m, qpos.as_slice()).map_err(value_error)?;
    Ok(array1(py, q.as_slice()))
}

/// karakuri's ``v`` from MuJoCo's ``qpos`` and ``qvel`` (a free joint's linear velocity from
/// world to body axes).
#[pyfunction]
pub fn from_mujoco_qvel<'py>(
    py: Python<'py>,
    model: &PyModel,
    qpos: &Bound<'py, PyAny>,
    qvel: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let m = &model.inner;
    let qpos = vector("qpos", "nq", qpos, m.nq)?;
    let qvel = vector("qvel", "nv", qvel, m.nv)?;
    let v = mjcf::from_mujoco_qvel(m, qpos.as_slice(), qvel.as_slice()).map_err(value_error)?;
    Ok(array1(py, v.as_slice()))
}

/// MuJoCo's ``qpos`` from karakuri's ``q``.
#[pyfunction]
pub fn to_mujoco_qpos<'py>(py: Python<'py>, model: &PyModel, q: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let m = &model.inner;
    let q = vector("q", "nq", q, m.nq)?;
    let qpos = mjcf::to_mujoco_qpos(m, q.as_slice()).map_err(value_error)?;
    Ok(array1(py, qpos.as_slice()))
}

/// MuJoCo's ``qvel`` from karakuri's ``q`` and ``v``.
#[pyfunction]
pub fn to_mujoco_qvel<'py>(
    py: Python<'py>,
    model: &PyModel,
    q: &Bound<'py, PyAny>,
    v: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let m = &model.inner;
    let q = vector("q", "nq", q, m.nq)?;
    let v = vector("v", "nv", v, m.nv)?;
    let qvel = mjcf::to_mujoco_qvel(m, q.as_slice(), v.as_slice()).map_err(value_error)?;
    Ok(array1(py, qvel.as_slice()))
}

/// Adds this module's functions, its exception and the alias ``buildModelFromMJCF``.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MjcfError", m.py().get_type::<MjcfError>())?;
    m.add_function(wrap_pyfunction!(load_mjcf, m)?)?;
    m.add_function(wrap_pyfunction!(from_mujoco_qpos, m)?)?;
    m.add_function(wrap_pyfunction!(from_mujoco_qvel, m)?)?;
    m.add_function(wrap_pyfunction!(to_mujoco_qpos, m)?)?;
    m.add_function(wrap_pyfunction!(to_mujoco_qvel, m)?)?;
    m.add("buildModelFromMJCF", m.getattr("load_mjcf")?)?;
    m.add("BodyError", m.py().get_type::<BodyError>())?;
    m.add_function(wrap_pyfunction!(load_body, m)?)?;
    Ok(())
}
