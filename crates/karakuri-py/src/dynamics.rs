//! The algorithms as module functions over `(model, data, q, ...)`, Pinocchio's shape. Each
//! checks that `data` belongs to `model`, reads its arguments into `data`'s buffers, calls
//! the one karakuri function and returns a new array with the result.

use crate::convert::{array1, array2, in_call, read_dvector, vector};
use crate::model::{joint_id, stale, PyData, PyModel};
use karakuri::algorithms::{self as alg, DerivativesWorkspace, HybridMethod, HybridWorkspace, ReferenceFrame, SplitMix64};
use karakuri::FrameId;
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// The frame a Jacobian is expressed in (Pinocchio's ``pin.ReferenceFrame``). Rows are
/// ``[linear; angular]``; ``J @ v`` is, for
///
/// * ``WORLD``: the spatial velocity at the world origin in world axes;
/// * ``LOCAL``: the spatial velocity in the joint's (frame's) own frame;
/// * ``LOCAL_WORLD_ALIGNED``: the velocity of the joint (frame) origin and the angular
///   velocity, both in world axes (what a controller tracking a point usually wants).
///
/// Functions taking a frame also accept the strings ``"world"``, ``"local"``,
/// ``"local_world_aligned"``.
#[pyclass(name = "ReferenceFrame", module = "karakuri", eq, eq_int, frozen)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PyReferenceFrame {
    /// World origin, world axes.
    #[pyo3(name = "WORLD")]
    World,
    /// The joint or frame itself.
    #[pyo3(name = "LOCAL")]
    Local,
    /// The joint or frame origin, world axes.
    #[pyo3(name = "LOCAL_WORLD_ALIGNED")]
    LocalWorldAligned,
}

fn reference_frame(obj: &Bound<'_, PyAny>) -> PyResult<ReferenceFrame> {
    if let Ok(rf) = obj.cast::<PyReferenceFrame>() {
        return Ok(match *rf.get() {
            PyReferenceFrame::World => ReferenceFrame::World,
            PyReferenceFrame::Local => ReferenceFrame::Local,
            PyReferenceFrame::LocalWorldAligned => ReferenceFrame::LocalWorldAligned,
        });
    }
    match obj.extract::<String>().map(|s| s.to_ascii_lowercase()).as_deref() {
        Ok("world") => Ok(ReferenceFrame::World),
        Ok("local") => Ok(ReferenceFrame::Local),
        Ok("local_world_aligned") => Ok(ReferenceFrame::LocalWorldAligned),
        _ => Err(PyValueError::new_err(
            "argument 'frame' must be a ReferenceFrame (WORLD, LOCAL, LOCAL_WORLD_ALIGNED) or one of \
             'world', 'local', 'local_world_aligned'",
        )),
    }
}

/// Reads the arguments into `data`'s buffers after checking `data` belongs to `model`.
macro_rules! prologue {
    ($what:expr, $model:ident, $data:ident $(, $buf:ident = ($arg:ident, $size:expr))*) => {{
        let d: &mut PyData = &mut *$data;
        d.check_model(&$model.get().inner, $what)?;
        $( read_dvector(stringify!($arg), $size, $arg, &mut d.$buf).map_err(in_call($what))?; )*
        d
    }};
}

/// Pinocchio-shaped functions `name(model, data, arrays...)`: each checks that `data` belongs to
/// `model`, reads each array argument into `data`'s buffer of the same name (of size `nq` or
/// `nv`, the errors naming the function and the argument), then runs the body with `d` the data
/// and `py` the interpreter token.
macro_rules! over_data {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $size:literal),*) -> $ret:ty, |$py:ident, $d:ident| $body:block)*) => {$(
        $(#[$doc])*
        #[pyfunction]
        pub fn $name<'py>(
            $py: Python<'py>,
            model: &Bound<'py, PyModel>,
            mut data: PyRefMut<'py, PyData>,
            $($arg: &Bound<'py, PyAny>,)*
        ) -> PyResult<$ret> {
            let $d = prologue!(stringify!($name), model, data $(, $arg = ($arg, $size))*);
            $body
        }
    )*};
}

over_data! {
    /// Inverse dynamics by the recursive Newton–Euler algorithm: the torques ``tau`` (shape
    /// ``(nv,)``) with ``M(q) a + C(q, v) v + g(q) = tau`` (also in ``data.tau``). Aliases:
    /// ``inverse_dynamics``.
    fn rnea(q: "nq", v: "nv", a: "nv") -> Bound<'py, PyArray1<f64>>, |py, d| {
        d.last.tau.copy_from(alg::inverse_dynamics(&d.model, &mut d.data, &d.q, &d.v, &d.a));
        Ok(array1(py, d.last.tau.as_slice()))
    }

    /// Nonlinear effects ``C(q, v) v + g(q)`` (RNEA with zero acceleration), shape ``(nv,)``.
    /// Aliases: ``nonlinear_effects``, ``nonLinearEffects``.
    fn nle(q: "nq", v: "nv") -> Bound<'py, PyArray1<f64>>, |py, d| {
        d.last.tau.copy_from(alg::nonlinear_effects(&d.model, &mut d.data, &d.q, &d.v));
        Ok(array1(py, d.last.tau.as_slice()))
    }

    /// Generalized gravity ``g(q)``, shape ``(nv,)``. Aliases: ``gravity_torques``,
    /// ``compute_generalized_gravity``, ``computeGeneralizedGravity``.
    fn gravity(q: "nq") -> Bound<'py, PyArray1<f64>>, |py, d| {
        d.last.tau.copy_from(alg::gravity_torques(&d.model, &mut d.data, &d.q));
        Ok(array1(py, d.last.tau.as_slice()))
    }

    /// Joint-space inertia matrix ``M(q)`` by the composite rigid body algorithm, full symmetric,
    /// shape ``(nv, nv)`` (also in ``data.M``). Alias: ``mass_matrix``.
    fn crba(q: "nq") -> Bound<'py, PyArray2<f64>>, |py, d| {
        Ok(array2(py, alg::mass_matrix(&d.model, &mut d.data, &d.q)))
    }

    /// Forward dynamics by the articulated-body algorithm: the accelerations ``ddq`` (shape
    /// ``(nv,)``) with ``M(q) ddq + C(q, v) v + g(q) = tau`` (also in ``data.ddq``). Alias:
    /// ``forward_dynamics``.
    fn aba(q: "nq", v: "nv", tau: "nv") -> Bound<'py, PyArray1<f64>>, |py, d| {
        d.last.ddq.copy_from(alg::forward_dynamics(&d.model, &mut d.data, &d.q, &d.v, &d.tau));
        Ok(array1(py, d.last.ddq.as_slice()))
    }

    /// Inverse of the mass matrix ``M(q)⁻¹``, full symmetric, shape ``(nv, nv)`` (also in
    /// ``data.Minv``). Aliases: ``mass_matrix_inverse``, ``compute_minverse``, ``computeMinverse``.
    fn minverse(q: "nq") -> Bound<'py, PyArray2<f64>>, |py, d| {
        Ok(array2(py, alg::mass_matrix_inverse(&d.model, &mut d.data, &d.q)))
    }
}

/// Forward kinematics: placements of every joint (``data.oMi``, ``data.liMi``), with ``v``
/// the body velocities (``data.v``), with ``a`` too the body accelerations (``data.a``).
/// Alias: ``forwardKinematics``.
#[pyfunction]
#[pyo3(signature = (model, data, q, v = None, a = None))]
pub fn forward_kinematics<'py>(
    model: &Bound<'py, PyModel>,
    mut data: PyRefMut<'py, PyData>,
    q: &Bound<'py, PyAny>,
    v: Option<&Bound<'py, PyAny>>,
    a: Option<&Bound<'py, PyAny>>,
) -> PyResult<()> {
    let d = prologue!("forward_kinematics", model, data, q = (q, "nq"));
    match (v, a) {
        (None, None) => alg::forward_kinematics(&d.model, &mut d.data, &d.q),
        (Some(v), None) => {
            read_dvector("v", "nv", v, &mut d.v).map_err(in_call("forward_kinematics"))?;
            alg::forward_kinematics_velocity(&d.model, &mut d.data, &d.q, &d.v)
        }
        (Some(v), Some(a)) => {
            read_dvector("v", "nv", v, &mut d.v).map_err(in_call("forward_kinematics"))?;
            read_dvector("a", "nv", a, &mut d.a).map_err(in_call("forward_kinematics"))?;
            alg::forward_kinematics_acceleration(&d.model, &mut d.data, &d.q, &d.v, &d.a)
        }
        (None, Some(_)) => return Err(PyValueError::new_err("forward_kinematics: 'a' given without 'v'")),
    }
    Ok(())
}

over_data! {
    /// Placements and the world Jacobian columns of every dof: returns ``data.J`` (shape
    /// ``(6, nv)``, rows ``[linear; angular]``). Read one joint's Jacobian with
    /// :func:`get_joint_jacobian`. Aliases: ``joint_jacobians``, ``computeJointJacobians``.
    fn compute_joint_jacobians(q: "nq") -> Bound<'py, PyArray2<f64>>, |py, d| {
        Ok(array2(py, alg::joint_jacobians(&d.model, &mut d.data, &d.q)))
    }
}

/// The Jacobian of ``joint`` (a name or an id) expressed in ``frame`` (a
/// :class:`ReferenceFrame`), shape ``(6, nv)``, rows ``[linear; angular]``; columns of dofs
/// that do not move the joint are zero. Needs :func:`compute_joint_jacobians` first, with no
/// other call on ``data`` since (raises ``RuntimeError`` otherwise). Alias: ``getJointJacobian``.
#[pyfunction]
pub fn get_joint_jacobian<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyModel>,
    mut data: PyRefMut<'py, PyData>,
    joint: &Bound<'py, PyAny>,
    frame: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let d: &mut PyData = &mut data;
    d.check_model(&model.get().inner, "get_joint_jacobian")?;
    let j = joint_id(&d.model, joint, "get_joint_jacobian")?;
    alg::joint_jacobian(&d.model, &d.data, j, reference_frame(frame)?, &mut d.jacobian_out)
        .map_err(|e| stale("get_joint_jacobian", e))?;
    Ok(array2(py, &d.jacobian_out))
}

/// The Jacobian of the frame ``frame_name`` (a URDF link or joint name, fixed ones included)
/// expressed in ``frame``, shape ``(6, nv)``; ``LOCAL`` and ``LOCAL_WORLD_ALIGNED`` refer to
/// the frame's own origin. Needs :func:`compute_joint_jacobians` first. Alias:
/// ``getFrameJacobian`` (by name instead of frame id).
#[pyfunction]
pub fn get_frame_jacobian<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyModel>,
    mut data: PyRefMut<'py, PyData>,
    frame_name: &str,
    frame: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let d: &mut PyData = &mut data;
    d.check_model(&model.get().inner, "get_frame_jacobian")?;
    let f: FrameId = d
        .model
        .frame_id(frame_name)
        .ok_or_else(|| PyValueError::new_err(format!("get_frame_jacobian: no frame named '{frame_name}'")))?;
    alg::frame_jacobian(&d.model, &d.data, f, reference_frame(frame)?, &mut d.jacobian_out)
        .map_err(|e| stale("get_frame_jacobian", e))?;
    Ok(array2(py, &d.jacobian_out))
}

/// Centre of mass of the whole model in the world, shape ``(3,)`` (also ``data.com``); with
/// ``v`` also its velocity (``data.vcom``). Alias: ``centerOfMass``.
#[pyfunction]
#[pyo3(signature = (model, data, q, v = None))]
pub fn center_of_mass<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyModel>,
    mut data: PyRefMut<'py, PyData>,
    q: &Bound<'py, PyAny>,
    v: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let d = prologue!("center_of_mass", model, data, q = (q, "nq"));
    if let Some(v) = v {
        read_dvector("v", "nv", v, &mut d.v).map_err(in_call("center_of_mass"))?;
        d.last.vcom = alg::center_of_mass_velocity(&d.model, &mut d.data, &d.q, &d.v);
    }
    d.last.com = alg::center_of_mass(&d.model, &mut d.data, &d.q);
    Ok(array1(py, d.last.com.as_slice()))
}

over_data! {
    /// Jacobian of the centre of mass, shape ``(3, nv)``. Alias: ``jacobianCenterOfMass``.
    fn center_of_mass_jacobian(q: "nq") -> Bound<'py, PyArray2<f64>>, |py, d| {
        Ok(array2(py, alg::center_of_mass_jacobian(&d.model, &mut d.data, &d.q)))
    }

    /// Kinetic energy ``½ vᵀ M(q) v`` (J). Alias: ``computeKineticEnergy``.
    fn kinetic_energy(q: "nq", v: "nv") -> f64, |_py, d| {
        d.last.kinetic_energy = alg::kinetic_energy(&d.model, &mut d.data, &d.q, &d.v);
        Ok(d.last.kinetic_energy)
    }

    /// Potential energy ``-Σ mᵢ g·cᵢ`` (J; zero at z = 0). Alias: ``computePotentialEnergy``.
    fn potential_energy(q: "nq") -> f64, |_py, d| {
        d.last.potential_energy = alg::potential_energy(&d.model, &mut d.data, &d.q);
        Ok(d.last.potential_energy)
    }
}

/// `(q̈, τ)` of hybrid dynamics.
type ArrayPair<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// Hybrid dynamics: joints in ``forward_joints`` (names or ids) have a known torque and a
/// sought acceleration, the others a known acceleration and a sought torque. ``known``
/// (shape ``(nv,)``) holds tau on the dofs of forward joints and ddq on the others. Returns
/// ``(ddq, tau)``, both full, with ``M ddq + C v + g = tau``. ``method`` is ``"aba"`` (the
/// articulated-body route, O(n)) or ``"crba"`` (the mass-matrix route); both give the same
/// answer.
#[pyfunction]
#[pyo3(signature = (model, data, q, v, known, forward_joints, method = "aba"))]
#[allow(clippy::too_many_arguments)]
pub fn hybrid_dynamics<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyModel>,
    mut data: PyRefMut<'py, PyData>,
    q: &Bound<'py, PyAny>,
    v: &Bound<'py, PyAny>,
    known: &Bound<'py, PyAny>,
    forward_joints: &Bound<'py, PyAny>,
    method: &str,
) -> PyResult<ArrayPair<'py>> {
    let method = match method {
        "aba" => HybridMethod::ArticulatedBody,
        "crba" => HybridMethod::Crba,
        other => return Err(PyValueError::new_err(format!("hybrid_dynamics: method must be 'aba' or 'crba', got '{other}'"))),
    };
    let d = prologue!("hybrid_dynamics", model, data, q = (q, "nq"), v = (v, "nv"), tau = (known, "nv"));
    let m = d.model.clone();
    let (ws, is_forward) = d.hybrid.get_or_insert_with(|| (HybridWorkspace::new(&m), vec![false; m.njoints]));
    is_forward.fill(false);
    for j in forward_joints.try_iter().map_err(|_| {
        PyValueError::new_err("hybrid_dynamics: 'forward_joints' must be a sequence of joint names or ids")
    })? {
        is_forward[joint_id(&m, &j?, "hybrid_dynamics: forward_joints")?.0] = true;
    }
    let (qdd, tau) = alg::hybrid_dynamics(&m, &mut d.data, ws, &d.q, &d.v, &d.tau, is_forward, method);
    Ok((array1(py, qdd.as_slice()), array1(py, tau.as_slice())))
}

/// Three `(nv, nv)` matrices.
type MatrixTriple<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>);

over_data! {
    /// Analytical derivatives of inverse dynamics (Carpentier & Mansard 2018): returns
    /// ``(dtau_dq, dtau_dv, M)`` of ``tau = rnea(q, v, a)``, each of shape ``(nv, nv)``, with
    /// ``M = dtau_da`` full symmetric (also in ``data.M``; ``tau`` in ``data.tau``). The
    /// q-derivative is in the tangent space, as Pinocchio's: column j is
    /// ``d/de rnea(integrate(q, e * e_j), v, a)`` at ``e = 0``. The workspace lives in ``data``
    /// (allocated on the first call). Alias: ``computeRNEADerivatives``.
    fn compute_rnea_derivatives(q: "nq", v: "nv", a: "nv") -> MatrixTriple<'py>, |py, d| {
        let ws = d.derivatives.get_or_insert_with(|| DerivativesWorkspace::new(&d.model));
        alg::rnea_derivatives(&d.model, &mut d.data, ws, &d.q, &d.v, &d.a);
        d.last.tau.copy_from(&ws.tau);
        let m = d.data.mass_matrix().map_err(|e| stale("compute_rnea_derivatives", e))?;
        Ok((array2(py, &ws.dtau_dq), array2(py, &ws.dtau_dv), array2(py, m)))
    }

    /// Analytical derivatives of forward dynamics (Carpentier & Mansard 2018): returns
    /// ``(ddq_dq, ddq_dv, Minv)`` of ``ddq = aba(q, v, tau)``, each of shape ``(nv, nv)``, with
    /// ``Minv = dddq_dtau`` full symmetric (also in ``data.Minv``; ``ddq`` in ``data.ddq``, ``M``
    /// in ``data.M``). The q-derivative is in the tangent space, as Pinocchio's. The workspace
    /// lives in ``data`` (allocated on the first call). Alias: ``computeABADerivatives``.
    fn compute_aba_derivatives(q: "nq", v: "nv", tau: "nv") -> MatrixTriple<'py>, |py, d| {
        let ws = d.derivatives.get_or_insert_with(|| DerivativesWorkspace::new(&d.model));
        alg::aba_derivatives(&d.model, &mut d.data, ws, &d.q, &d.v, &d.tau);
        d.last.ddq.copy_from(&ws.qdd);
        let minv = d.data.mass_matrix_inverse().map_err(|e| stale("compute_aba_derivatives", e))?;
        Ok((array2(py, &ws.dqdd_dq), array2(py, &ws.dqdd_dv), array2(py, minv)))
    }
}

/// The neutral configuration: zero angles and translations, identity quaternions.
#[pyfunction]
pub fn neutral<'py>(py: Python<'py>, model: &Bound<'py, PyModel>) -> Bound<'py, PyArray1<f64>> {
    array1(py, alg::neutral(&model.get().inner).as_slice())
}

static SEED: AtomicU64 = AtomicU64::new(0x6b61_7261_6b75_7269);

/// A random configuration within the position limits (angles in [-π, π] and translations in
/// [-1, 1] where a limit is infinite; quaternions uniform). ``seed`` makes it reproducible;
/// without one each call draws a new configuration. Alias: ``randomConfiguration``.
#[pyfunction]
#[pyo3(signature = (model, seed = None))]
pub fn random_configuration<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyModel>,
    seed: Option<u64>,
) -> Bound<'py, PyArray1<f64>> {
    let seed = seed.unwrap_or_else(|| SEED.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed));
    array1(py, alg::random_configuration(&model.get().inner, &mut SplitMix64::new(seed)).as_slice())
}

/// ``q ⊕ v``: the configuration reached from ``q`` moving with velocity ``v`` for unit time
/// (scale ``v`` by ``dt`` to integrate a step); quaternions stay unit.
#[pyfunction]
pub fn integrate<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyModel>,
    q: &Bound<'py, PyAny>,
    v: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let m = &model.get().inner;
    let ctx = || in_call("integrate");
    let (q, v) = (vector("q", "nq", q, m.nq).map_err(ctx())?, vector("v", "nv", v, m.nv).map_err(ctx())?);
    Ok(array1(py, alg::integrate(m, &q, &v).as_slice()))
}

/// ``q1 ⊖ q0``: the velocity that integrates ``q0`` to ``q1`` in unit time, shape ``(nv,)``.
#[pyfunction]
pub fn difference<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyModel>,
    q0: &Bound<'py, PyAny>,
    q1: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let m = &model.get().inner;
    let ctx = || in_call("difference");
    let (q0, q1) = (vector("q0", "nq", q0, m.nq).map_err(ctx())?, vector("q1", "nq", q1, m.nq).map_err(ctx())?);
    Ok(array1(py, alg::difference(m, &q0, &q1).as_slice()))
}

/// ``q`` with every quaternion renormalised (a new array).
#[pyfunction]
pub fn normalize<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyModel>,
    q: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let m = &model.get().inner;
    let mut q = vector("q", "nq", q, m.nq).map_err(in_call("normalize"))?;
    alg::normalize(m, &mut q);
    Ok(array1(py, q.as_slice()))
}
