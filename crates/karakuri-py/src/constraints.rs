//! `ConstraintSet`: contacts, frame welds and loop constraints on one model, constrained
//! forward dynamics and impulses by the four methods (karakuri's `constraints` module, after
//! RBDL's ConstraintSet).

use crate::convert::{array1, array2, in_call, matrix, read_dvector, vector};
use crate::model::{joint_id, PyData, PyModel};
use karakuri::constraints::{ConstraintSet, Method};
use karakuri::spatial::{Mat3, Se3, Vec3, Vec6};
use karakuri::{JointId, Model};
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

pyo3::create_exception!(
    karakuri,
    ConstraintError,
    pyo3::exceptions::PyValueError,
    "Constraints that cannot all hold (conflicting rows) or that are malformed; after a \
     conflicting solve the least-squares answer is still in the set's outputs."
);

fn method(name: &str) -> PyResult<Method> {
    match name {
        "direct" => Ok(Method::Direct),
        "range_space_sparse" | "range_space" => Ok(Method::RangeSpaceSparse),
        "null_space" => Ok(Method::NullSpace),
        "kokkevis" => Ok(Method::Kokkevis),
        other => Err(PyValueError::new_err(format!(
            "method must be 'direct', 'range_space_sparse', 'null_space' or 'kokkevis', got '{other}'"
        ))),
    }
}

fn method_name(m: Method) -> &'static str {
    match m {
        Method::Direct => "direct",
        Method::RangeSpaceSparse => "range_space_sparse",
        Method::NullSpace => "null_space",
        Method::Kokkevis => "kokkevis",
    }
}

fn vec3(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec3> {
    let v = vector(name, "3", obj, 3)?;
    if !v.iter().all(|x| x.is_finite()) {
        return Err(PyValueError::new_err(format!("argument '{name}' must be finite")));
    }
    Ok(Vec3::new(v[0], v[1], v[2]))
}

/// A placement from a 4x4 homogeneous matrix (`None`: the identity).
fn placement(name: &str, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Se3> {
    let Some(obj) = obj else { return Ok(Se3::identity()) };
    let m = matrix(name, obj, Some(4), 4)?;
    let r = Mat3::from_fn(|i, j| m[(i, j)]);
    if (r.transpose() * r - Mat3::identity()).amax() > 1e-9 || r.determinant() < 0.0 {
        return Err(PyValueError::new_err(format!("argument '{name}': the top-left 3x3 block is not a rotation")));
    }
    Ok(Se3::new(r, Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)])))
}

fn axes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Vec6>> {
    let m = matrix("axes", obj, None, 6)?;
    let rows: Vec<Vec6> = (0..m.nrows()).map(|i| Vec6::from_fn(|k, _| m[(i, k)])).collect();
    if rows.is_empty() || rows.iter().any(|a| !a.iter().all(|x| x.is_finite()) || a.norm() == 0.0) {
        return Err(PyValueError::new_err("argument 'axes' must hold at least one nonzero, finite row [linear; angular]"));
    }
    Ok(rows)
}

/// Constraints on one :class:`Model`: point contacts (along a normal or in 3-D), 6-D frame
/// contacts (welds), loop constraints on chosen spatial axes; constrained forward dynamics
/// ``M ddq + C = tau + Gᵀ λ, G ddq = γ`` and collision impulses by four methods, all exact:
/// ``"direct"`` (KKT), ``"range_space_sparse"``, ``"null_space"``, ``"kokkevis"``.
/// Joints are given by name or id; points in the joint frame; placements as 4x4 homogeneous
/// matrices (joint_from_frame).
#[pyclass(name = "ConstraintSet", module = "karakuri")]
pub struct PyConstraintSet {
    model: Arc<Model>,
    set: ConstraintSet,
    /// Constraints were added since the last `bind`.
    dirty: bool,
}

impl PyConstraintSet {
    fn joint(&self, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<JointId> {
        joint_id(&self.model, obj, what)
    }

    fn added(&mut self, index: usize) -> usize {
        self.dirty = true;
        index
    }

    /// Checks `data` and binds the set if constraints were added since.
    fn prepare(&mut self, data: &PyData, what: &str) -> PyResult<()> {
        data.check_model(&self.model, what)?;
        if self.set.constraints().is_empty() {
            return Err(PyValueError::new_err(format!("{what}: the constraint set is empty")));
        }
        if self.dirty {
            self.set.bind(&self.model).map_err(|e| ConstraintError::new_err(e.to_string()))?;
            self.dirty = false;
        }
        Ok(())
    }
}

#[pymethods]
impl PyConstraintSet {
    /// An empty set of constraints on ``model``.
    #[new]
    fn new(model: &Bound<'_, PyModel>) -> Self {
        PyConstraintSet { model: model.get().inner.clone(), set: ConstraintSet::new(), dirty: true }
    }

    /// A one-row contact: the velocity of ``point`` (in ``joint``'s frame) along the world
    /// ``normal`` is zero. Returns the constraint index. Alias: ``AddContactConstraint``.
    #[pyo3(signature = (joint, point, normal, name = None))]
    fn add_contact(&mut self, joint: &Bound<'_, PyAny>, point: &Bound<'_, PyAny>, normal: &Bound<'_, PyAny>, name: Option<&str>) -> PyResult<usize> {
        let j = self.joint(joint, "add_contact")?;
        let (p, n) = (vec3("point", point)?, vec3("normal", normal)?);
        if n.norm() == 0.0 {
            return Err(PyValueError::new_err("argument 'normal' must be nonzero"));
        }
        let i = self.set.add_contact(j, p, n, name);
        Ok(self.added(i))
    }

    /// A 3-D point contact at ``point`` (in ``joint``'s frame): three rows along the world
    /// axes; its λ is the force on the body in world axes.
    #[pyo3(signature = (joint, point = None, name = None))]
    fn add_point_contact_3d(&mut self, joint: &Bound<'_, PyAny>, point: Option<&Bound<'_, PyAny>>, name: Option<&str>) -> PyResult<usize> {
        let j = self.joint(joint, "add_point_contact_3d")?;
        let p = match point {
            Some(p) => vec3("point", p)?,
            None => Vec3::zeros(),
        };
        let i = self.set.add_point_contact_3d(j, p, name);
        Ok(self.added(i))
    }

    /// A 6-D contact welding the frame at ``placement`` (4x4, joint_from_frame; default the
    /// joint frame) on ``joint``; its λ is the wrench ``[force; torque]`` in that frame.
    #[pyo3(signature = (joint, placement = None, name = None))]
    fn add_frame_contact_6d(&mut self, joint: &Bound<'_, PyAny>, placement: Option<&Bound<'_, PyAny>>, name: Option<&str>) -> PyResult<usize> {
        let j = self.joint(joint, "add_frame_contact_6d")?;
        let x = self::placement("placement", placement)?;
        let i = self.set.add_frame_contact_6d(j, x, name);
        Ok(self.added(i))
    }

    /// A loop constraint between a frame on ``predecessor`` and one on ``successor`` (4x4
    /// placements in their joint frames): their relative motion along each row of ``axes``
    /// (shape ``(k, 6)``, ``[linear; angular]`` in the predecessor frame) is zero. Alias:
    /// ``AddLoopConstraint``.
    #[pyo3(signature = (predecessor, predecessor_frame, successor, successor_frame, axes, name = None))]
    #[allow(clippy::too_many_arguments)]
    fn add_loop_constraint(
        &mut self,
        predecessor: &Bound<'_, PyAny>,
        predecessor_frame: Option<&Bound<'_, PyAny>>,
        successor: &Bound<'_, PyAny>,
        successor_frame: Option<&Bound<'_, PyAny>>,
        axes: &Bound<'_, PyAny>,
        name: Option<&str>,
    ) -> PyResult<usize> {
        let p = self.joint(predecessor, "add_loop_constraint: predecessor")?;
        let s = self.joint(successor, "add_loop_constraint: successor")?;
        let (xp, xs) = (placement("predecessor_frame", predecessor_frame)?, placement("successor_frame", successor_frame)?);
        let ax = self::axes(axes)?;
        let i = self.set.add_loop_constraint(p, xp, s, xs, &ax, name);
        Ok(self.added(i))
    }

    /// Baumgarte stabilisation of constraint ``constraint`` (an index or a name) with time
    /// constant ``time_constant`` seconds (``None`` disables it); ``constraint=None``: all.
    #[pyo3(signature = (time_constant, constraint = None))]
    fn set_baumgarte(&mut self, time_constant: Option<f64>, constraint: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        if time_constant.is_some_and(|t| !(t > 0.0 && t.is_finite())) {
            return Err(PyValueError::new_err("argument 'time_constant' must be positive and finite"));
        }
        match constraint {
            None => self.set.set_baumgarte_all(time_constant),
            Some(c) => {
                let i = self.index(c)?;
                self.set.set_baumgarte(i, time_constant)
            }
        }
        Ok(())
    }

    /// Holds every contact and frame constraint where it is at configuration ``q`` (their
    /// position-error targets become the current world positions).
    fn set_anchors_to_current(&mut self, mut data: PyRefMut<'_, PyData>, q: &Bound<'_, PyAny>) -> PyResult<()> {
        let d: &mut PyData = &mut data;
        d.check_model(&self.model, "set_anchors_to_current")?;
        read_dvector("q", "nq", q, &mut d.q).map_err(in_call("ConstraintSet"))?;
        self.set.set_anchors_to_current(&self.model, &mut d.data, &d.q);
        Ok(())
    }

    /// Index of the constraint named ``name`` (``ValueError`` if none).
    fn find(&self, name: &str) -> PyResult<usize> {
        self.set.find(name).ok_or_else(|| PyValueError::new_err(format!("no constraint named '{name}'")))
    }

    /// Constrained forward dynamics: returns ``ddq`` (shape ``(nv,)``); the constraint forces
    /// are in ``lambda_`` (one per row) and ``forces``. Raises :class:`ConstraintError` for
    /// conflicting constraints (least-squares answer left in the outputs). Alias:
    /// ``ForwardDynamicsConstraints``.
    #[pyo3(signature = (data, q, v, tau, method = "direct"))]
    fn forward_dynamics<'py>(
        &mut self,
        py: Python<'py>,
        mut data: PyRefMut<'py, PyData>,
        q: &Bound<'py, PyAny>,
        v: &Bound<'py, PyAny>,
        tau: &Bound<'py, PyAny>,
        method: &str,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let m = self::method(method)?;
        let d: &mut PyData = &mut data;
        self.prepare(d, "forward_dynamics")?;
        read_dvector("q", "nq", q, &mut d.q).map_err(in_call("ConstraintSet"))?;
        read_dvector("v", "nv", v, &mut d.v).map_err(in_call("ConstraintSet"))?;
        read_dvector("tau", "nv", tau, &mut d.tau).map_err(in_call("ConstraintSet"))?;
        self.set
            .forward_dynamics(&self.model, &mut d.data, &d.q, &d.v, &d.tau, m)
            .map_err(|e| ConstraintError::new_err(e.to_string()))?;
        Ok(array1(py, self.set.qdd.as_slice()))
    }

    /// Collision impulses: returns the velocities after impact ``v_plus`` (shape ``(nv,)``)
    /// with ``G v_plus = impulse_target`` (zero by default); impulses in ``impulses``.
    /// Alias: ``ComputeConstraintImpulses``.
    #[pyo3(signature = (data, q, v_minus, method = "direct"))]
    fn compute_impulses<'py>(
        &mut self,
        py: Python<'py>,
        mut data: PyRefMut<'py, PyData>,
        q: &Bound<'py, PyAny>,
        v_minus: &Bound<'py, PyAny>,
        method: &str,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let m = self::method(method)?;
        let d: &mut PyData = &mut data;
        self.prepare(d, "compute_impulses")?;
        read_dvector("q", "nq", q, &mut d.q).map_err(in_call("ConstraintSet"))?;
        read_dvector("v_minus", "nv", v_minus, &mut d.v).map_err(in_call("ConstraintSet"))?;
        self.set
            .compute_impulses(&self.model, &mut d.data, &d.q, &d.v, m)
            .map_err(|e| ConstraintError::new_err(e.to_string()))?;
        Ok(array1(py, self.set.v_plus.as_slice()))
    }

    /// Number of constraints.
    fn __len__(&self) -> usize {
        self.set.constraints().len()
    }
    /// Number of scalar rows (size of ``lambda_``).
    #[getter]
    fn rows(&mut self) -> PyResult<usize> {
        if self.dirty && !self.set.constraints().is_empty() {
            self.set.bind(&self.model).map_err(|e| ConstraintError::new_err(e.to_string()))?;
            self.dirty = false;
        }
        Ok(self.set.rows())
    }
    /// Constraint forces of the last ``forward_dynamics``, one per row.
    #[getter]
    fn lambda_<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.set.lambda.as_slice())
    }
    /// Impulses of the last ``compute_impulses``, one per row.
    #[getter]
    fn impulses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.set.impulses.as_slice())
    }
    /// Accelerations of the last ``forward_dynamics``.
    #[getter]
    fn qdd<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.set.qdd.as_slice())
    }
    /// Velocities of the last ``compute_impulses``.
    #[getter]
    fn v_plus<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.set.v_plus.as_slice())
    }
    /// Constraint Jacobian ``G`` of the last solve, shape ``(rows, nv)``.
    #[getter(G)]
    fn jacobian<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        array2(py, &self.set.g)
    }
    /// Acceleration bias ``γ`` of the last solve (Baumgarte terms included), shape ``(rows,)``.
    #[getter]
    fn gamma<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.set.gamma.as_slice())
    }
    /// Target velocities after an impact, one per row (default zero).
    #[getter]
    fn impulse_target<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.set.impulse_target.as_slice())
    }
    #[setter]
    fn set_impulse_target(&mut self, target: &Bound<'_, PyAny>) -> PyResult<()> {
        self.rows()?;
        read_dvector("impulse_target", "rows", target, &mut self.set.impulse_target)
    }
    /// Total force of each constraint on its (successor) body as a spatial force
    /// ``[force; torque]`` at the world origin in world axes, shape ``(len(set), 6)``.
    #[getter]
    fn forces<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        let mut m = nalgebra::DMatrix::zeros(self.set.forces.len(), 6);
        for (i, f) in self.set.forces.iter().enumerate() {
            for k in 0..3 {
                m[(i, k)] = f.linear[k];
                m[(i, k + 3)] = f.angular[k];
            }
        }
        array2(py, &m)
    }
    /// What the last solve found: ``{"method", "rows", "rank", "fallback", "residual"}``.
    #[getter]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.set.report;
        let d = PyDict::new(py);
        d.set_item("method", method_name(r.method))?;
        d.set_item("rows", r.rows)?;
        d.set_item("rank", r.rank)?;
        d.set_item("fallback", r.fallback)?;
        d.set_item("residual", r.residual)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!("karakuri.ConstraintSet(model='{}', constraints={})", self.model.name, self.set.constraints().len())
    }
}

impl PyConstraintSet {
    fn index(&self, c: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(name) = c.extract::<String>() {
            return self.find(&name);
        }
        match c.extract::<usize>() {
            Ok(i) if i < self.set.constraints().len() => Ok(i),
            _ => Err(PyValueError::new_err(format!(
                "argument 'constraint' must be a name or an index below {}",
                self.set.constraints().len()
            ))),
        }
    }
}
