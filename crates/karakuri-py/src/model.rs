//! `Model` (the immutable description, shared) and `Data` (every buffer of the algorithms and
//! the argument buffers, allocated once), as Python classes.

use crate::convert::{array1, array2};
use karakuri::algorithms::{DerivativesWorkspace, HybridWorkspace};
use karakuri::io::urdf::{self, Root};
use karakuri::spatial::Se3;
use karakuri::spatial::{Motion, Vec3};
use karakuri::{JointId, Model, Stale};
use nalgebra::{DMatrix, DVector};
use numpy::{PyArray1, PyArray2, PyArray3};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::sync::Arc;

pyo3::create_exception!(
    karakuri,
    UrdfError,
    pyo3::exceptions::PyValueError,
    "A URDF file that cannot be loaded; the message says file:line: <element>: reason."
);

/// A kinematic tree: joints, bodies, inertias, limits (immutable). Load one with
/// :func:`load_urdf`; make its work buffers with :meth:`create_data`.
///
/// Joint 0 is the universe; joint ``i`` moves body ``i``; configuration ``q`` has ``nq``
/// entries (a free flyer takes ``[x, y, z, qx, qy, qz, qw]``), velocities ``nv``.
#[pyclass(name = "Model", module = "karakuri", frozen)]
pub struct PyModel {
    pub(crate) inner: Arc<Model>,
}

impl PyModel {
    /// Joint `obj` (a name or an index) of this model.
    pub(crate) fn joint(&self, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<JointId> {
        joint_id(&self.inner, obj, what)
    }
}

/// The joint named or numbered by `obj`.
pub(crate) fn joint_id(model: &Model, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<JointId> {
    if let Ok(name) = obj.extract::<String>() {
        return model.joint_id(&name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "{what}: no joint named '{name}' (joints: {})",
                model.joint_names[1..].join(", ")
            ))
        });
    }
    match obj.extract::<i64>() {
        Ok(i) if i >= 0 && (i as usize) < model.njoints => Ok(JointId(i as usize)),
        Ok(i) => Err(PyValueError::new_err(format!(
            "{what}: joint index {i} out of range (the model has joints 0..{})",
            model.njoints
        ))),
        Err(_) => Err(PyValueError::new_err(format!("{what}: expected a joint name (str) or index (int)"))),
    }
}

#[pymethods]
impl PyModel {
    /// A new :class:`Data` for this model: every buffer of every algorithm, allocated once.
    /// Alias: ``createData``.
    fn create_data(slf: &Bound<'_, Self>) -> PyData {
        PyData::new(slf.get().inner.clone())
    }

    /// Alias of :meth:`create_data` (Pinocchio's name).
    #[pyo3(name = "createData")]
    fn create_data_alias(slf: &Bound<'_, Self>) -> PyData {
        Self::create_data(slf)
    }
    /// Alias of :meth:`get_joint_id` (Pinocchio's name).
    #[pyo3(name = "getJointId")]
    fn get_joint_id_alias(&self, name: &Bound<'_, PyAny>) -> PyResult<usize> {
        self.get_joint_id(name)
    }

    /// Size of the configuration vector ``q``.
    #[getter]
    fn nq(&self) -> usize {
        self.inner.nq
    }
    /// Number of degrees of freedom (size of ``v``, ``a``, ``tau``).
    #[getter]
    fn nv(&self) -> usize {
        self.inner.nv
    }
    /// Number of joints, the universe included.
    #[getter]
    fn njoints(&self) -> usize {
        self.inner.njoints
    }
    /// The model's name (URDF robot name).
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }
    /// Joint names, ``"universe"`` first (index = joint id), as Pinocchio's ``model.names``.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.inner.joint_names.clone()
    }
    /// Body (link) names, index = the joint that moves the body.
    #[getter]
    fn body_names(&self) -> Vec<String> {
        self.inner.body_names.clone()
    }
    /// Parent joint of each joint (the universe is its own parent).
    #[getter]
    fn parents(&self) -> Vec<usize> {
        self.inner.parents.clone()
    }
    /// First configuration index of each joint (Pinocchio's ``idx_qs``).
    #[getter]
    fn idx_qs(&self) -> Vec<usize> {
        self.inner.idx_q.clone()
    }
    /// First velocity index of each joint (Pinocchio's ``idx_vs``).
    #[getter]
    fn idx_vs(&self) -> Vec<usize> {
        self.inner.idx_v.clone()
    }
    /// Configuration size of each joint.
    #[getter]
    fn nqs(&self) -> Vec<usize> {
        self.inner.nqs.clone()
    }
    /// Velocity size of each joint.
    #[getter]
    fn nvs(&self) -> Vec<usize> {
        self.inner.nvs.clone()
    }
    /// Lower position limits, shape ``(nq,)`` (``-inf`` where none).
    #[getter]
    fn lower_position_limit<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, &self.inner.lower_position_limit)
    }
    /// Upper position limits, shape ``(nq,)`` (``+inf`` where none).
    #[getter]
    fn upper_position_limit<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, &self.inner.upper_position_limit)
    }
    /// Velocity limits, shape ``(nv,)`` (``+inf`` where none).
    #[getter]
    fn velocity_limit<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, &self.inner.velocity_limit)
    }
    /// Effort limits, shape ``(nv,)`` (``+inf`` where none).
    #[getter]
    fn effort_limit<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, &self.inner.effort_limit)
    }
    /// Gravity's linear part in the world, shape ``(3,)``.
    #[getter]
    fn gravity<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.inner.gravity_vector().as_slice())
    }
    /// Total mass of the moving bodies (kg).
    #[getter]
    fn total_mass(&self) -> f64 {
        self.inner.total_mass()
    }

    /// Id of the joint named ``name`` (``ValueError`` if none). Alias: ``getJointId``.
    fn get_joint_id(&self, name: &Bound<'_, PyAny>) -> PyResult<usize> {
        Ok(self.joint(name, "get_joint_id")?.0)
    }
    /// First index in ``q`` of the joint ``joint`` (a name or an id).
    fn idx_q(&self, joint: &Bound<'_, PyAny>) -> PyResult<usize> {
        Ok(self.inner.idx_q[self.joint(joint, "idx_q")?.0])
    }
    /// First index in ``v`` (and ``a``, ``tau``) of the joint ``joint`` (a name or an id).
    fn idx_v(&self, joint: &Bound<'_, PyAny>) -> PyResult<usize> {
        Ok(self.inner.idx_v[self.joint(joint, "idx_v")?.0])
    }

    fn __repr__(&self) -> String {
        format!(
            "karakuri.Model('{}', nq={}, nv={}, njoints={})",
            self.inner.name, self.inner.nq, self.inner.nv, self.inner.njoints
        )
    }
}

/// Loads a URDF file.
///
/// ``floating=True`` puts a free-flyer joint at the root (``q[:7] = [x, y, z, qx, qy, qz,
/// qw]``, Pinocchio's ``JointModelFreeFlyer``); otherwise the root link is fixed to the world.
/// Raises :class:`UrdfError` (a ``ValueError``) with ``file:line: <element>: reason`` when the
/// file cannot be read or is malformed. Alias: ``buildModelFromUrdf`` (with
/// ``floating`` instead of a root joint object).
#[pyfunction]
#[pyo3(signature = (path, floating = false))]
pub fn load_urdf(path: std::path::PathBuf, floating: bool) -> PyResult<PyModel> {
    let root = if floating { Root::FreeFlyer } else { Root::Fixed };
    let model = urdf::load(&path, root).map_err(|e| UrdfError::new_err(e.to_string()))?;
    Ok(PyModel { inner: Arc::new(model) })
}

/// Work buffers and results of the algorithms for one :class:`Model` (make it with
/// ``model.create_data()``). Results are read as attributes (``data.tau``, ``data.M``,
/// ``data.oMi``, ...); each read returns a new array (a copy), so keeping one never sees it
/// change under a later call.
#[pyclass(name = "Data", module = "karakuri")]
pub struct PyData {
    pub(crate) model: Arc<Model>,
    pub(crate) data: karakuri::Data,
    /// Argument buffers: numpy arguments are copied here (no allocation per call).
    pub(crate) q: DVector<f64>,
    pub(crate) v: DVector<f64>,
    pub(crate) a: DVector<f64>,
    pub(crate) tau: DVector<f64>,
    /// Output of `get_joint_jacobian` (6 x nv).
    pub(crate) jacobian_out: DMatrix<f64>,
    /// The last results that the core returns rather than keeps readable (`data.tau`, ...).
    pub(crate) last: LastResults,
    /// Hybrid dynamics' workspace and forward-joint mask, made on first use.
    pub(crate) hybrid: Option<(HybridWorkspace, Vec<bool>)>,
    /// Derivatives' workspace (∂τ/∂(q, v), ∂q̈/∂(q, v) and their buffers), made on first use:
    /// data that never asks for derivatives pays nothing for them.
    pub(crate) derivatives: Option<DerivativesWorkspace>,
}

impl PyData {
    pub(crate) fn new(model: Arc<Model>) -> Self {
        let (nq, nv) = (model.nq, model.nv);
        PyData {
            data: karakuri::Data::new(&model),
            q: DVector::zeros(nq),
            v: DVector::zeros(nv),
            a: DVector::zeros(nv),
            tau: DVector::zeros(nv),
            jacobian_out: DMatrix::zeros(6, nv),
            last: LastResults { tau: DVector::zeros(nv), ddq: DVector::zeros(nv), ..LastResults::default() },
            hybrid: None,
            derivatives: None,
            model,
        }
    }

    /// `ValueError` unless this data was made by `model`.
    #[inline]
    pub(crate) fn check_model(&self, model: &Arc<Model>, what: &str) -> PyResult<()> {
        if Arc::ptr_eq(model, &self.model) {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!(
                "{what}: data was created by another model (use model.create_data())"
            )))
        }
    }

    fn placements<'py>(&self, py: Python<'py>, which: Result<&[Se3], Stale>, what: &str) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let which = which.map_err(|e| stale(what, e))?;
        let mut out = Vec::with_capacity(which.len() * 16);
        for m in which {
            out.extend_from_slice(&homogeneous(m));
        }
        let a = numpy::ndarray::Array3::from_shape_vec((which.len(), 4, 4), out).expect("16 entries per placement");
        Ok(PyArray3::from_owned_array(py, a))
    }
}

/// Results the core's functions return (kept here so that `data.tau`, `data.com`, ... read the
/// last one, as in Pinocchio).
#[derive(Default)]
pub(crate) struct LastResults {
    pub(crate) tau: DVector<f64>,
    pub(crate) ddq: DVector<f64>,
    pub(crate) com: Vec3,
    pub(crate) vcom: Vec3,
    pub(crate) kinetic_energy: f64,
    pub(crate) potential_energy: f64,
}

/// The core's [`Stale`] as a `RuntimeError` naming the Python call to make first.
pub(crate) fn stale(read: &str, e: Stale) -> PyErr {
    let call = match e.call {
        "forward_kinematics" => "forward_kinematics(model, data, q)",
        "forward_kinematics_velocity" => "forward_kinematics(model, data, q, v)",
        "forward_kinematics_acceleration or inverse_dynamics" => "forward_kinematics(model, data, q, v, a) or rnea",
        "inverse_dynamics or forward_dynamics" => "rnea or aba",
        "joint_jacobians" => "compute_joint_jacobians(model, data, q)",
        "mass_matrix" => "crba(model, data, q)",
        "mass_matrix_inverse" => "minverse(model, data, q)",
        other => other,
    };
    PyRuntimeError::new_err(format!(
        "{read} needs {}, which data does not hold for the last inputs it was given: call {call} first",
        e.needs
    ))
}

/// Row-major 4x4 homogeneous matrix of a placement.
pub(crate) fn homogeneous(m: &Se3) -> [f64; 16] {
    let (r, p) = (&m.rotation, &m.translation);
    [
        r[(0, 0)], r[(0, 1)], r[(0, 2)], p[0],
        r[(1, 0)], r[(1, 1)], r[(1, 2)], p[1],
        r[(2, 0)], r[(2, 1)], r[(2, 2)], p[2],
        0.0, 0.0, 0.0, 1.0,
    ]
}

#[pymethods]
impl PyData {
    /// Joint torques of the last ``rnea`` / ``nle`` / ``gravity`` / ``compute_rnea_derivatives``,
    /// shape ``(nv,)``.
    #[getter]
    fn tau<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.last.tau.as_slice())
    }
    /// Joint accelerations of the last ``aba`` / ``compute_aba_derivatives``, shape ``(nv,)``.
    #[getter]
    fn ddq<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.last.ddq.as_slice())
    }
    /// Joint-space inertia matrix of the last ``crba`` (or ``compute_rnea_derivatives``,
    /// ``compute_aba_derivatives``; full symmetric), shape ``(nv, nv)``.
    #[getter(M)]
    fn mass_matrix<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(array2(py, self.data.mass_matrix().map_err(|e| stale("data.M", e))?))
    }
    /// Inverse of the mass matrix of the last ``minverse`` (or ``compute_aba_derivatives``; full
    /// symmetric), shape ``(nv, nv)``.
    #[getter(Minv)]
    fn mass_matrix_inverse<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(array2(py, self.data.mass_matrix_inverse().map_err(|e| stale("data.Minv", e))?))
    }
    /// World Jacobian columns of every dof from ``compute_joint_jacobians``, shape ``(6, nv)``
    /// (rows ``[linear; angular]``).
    #[getter(J)]
    fn jacobian<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(array2(py, self.data.jacobians().map_err(|e| stale("data.J", e))?))
    }
    /// World placement of every joint (``oMi``) as 4x4 homogeneous matrices, shape
    /// ``(njoints, 4, 4)``. Needs ``forward_kinematics`` (or ``rnea``, ``aba``, ...) first.
    #[getter(oMi)]
    fn o_m_i<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<f64>>> {
        self.placements(py, self.data.joint_placements(), "data.oMi")
    }
    /// Placement of every joint in its parent joint's frame (``liMi``), shape ``(njoints, 4, 4)``.
    #[getter(liMi)]
    fn li_m_i<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<f64>>> {
        self.placements(py, self.data.parent_placements(), "data.liMi")
    }
    /// Spatial velocity of every body in its own joint frame, ``[linear; angular]``, shape
    /// ``(njoints, 6)``. Needs ``forward_kinematics(model, data, q, v)`` first.
    #[getter]
    fn v<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(motions(py, self.data.joint_velocities().map_err(|e| stale("data.v", e))?))
    }
    /// Spatial acceleration of every body in its own joint frame (gravity not included),
    /// shape ``(njoints, 6)``. Needs ``forward_kinematics(model, data, q, v, a)`` first.
    #[getter]
    fn a<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(motions(py, self.data.joint_accelerations().map_err(|e| stale("data.a", e))?))
    }
    /// Centre of mass of the last ``center_of_mass``, shape ``(3,)``.
    #[getter]
    fn com<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.last.com.as_slice())
    }
    /// Velocity of the centre of mass of the last ``center_of_mass(model, data, q, v)``.
    #[getter]
    fn vcom<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.last.vcom.as_slice())
    }
    /// Kinetic energy of the last ``kinetic_energy`` (J).
    #[getter]
    fn kinetic_energy(&self) -> f64 {
        self.last.kinetic_energy
    }
    /// Potential energy of the last ``potential_energy`` (J).
    #[getter]
    fn potential_energy(&self) -> f64 {
        self.last.potential_energy
    }

    fn __repr__(&self) -> String {
        format!("karakuri.Data(model='{}', nv={})", self.model.name, self.model.nv)
    }
}

fn motions<'py>(py: Python<'py>, rows: &[Motion]) -> Bound<'py, PyArray2<f64>> {
    let mut out = Vec::with_capacity(rows.len() * 6);
    for r in rows {
        out.extend_from_slice(r.to_vec6().as_slice());
    }
    PyArray2::from_owned_array(py, numpy::ndarray::Array2::from_shape_vec((rows.len(), 6), out).expect("6 entries per row"))
}
