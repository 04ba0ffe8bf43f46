//! `karakuri.batch`: the dynamics of many states at once (`karakuri::batch`), `(N, nq)` and
//! `(N, nv)` arrays in, `(N, nv)` or `(N, nv, nv)` arrays out, run with the GIL released on
//! `threads` Rust threads. Registered in `_native` under `_batch_*` names; the Python module
//! `karakuri/batch.py` gives them their public names and docstrings.
//!
//! Each model's workspace is kept (a small cache keyed by the model) and taken out for the
//! length of a call, so a second call on the same model reuses its buffers, and two Python
//! threads calling at once each get one of their own.

use crate::model::PyModel;
use karakuri::batch::{self, BatchError, BatchWorkspace};
use karakuri::Model;
use numpy::ndarray::IxDyn;
use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// Kept workspaces: the model they belong to (by its `Arc`) and the buffers.
static CACHE: Mutex<Vec<(Weak<Model>, BatchWorkspace)>> = Mutex::new(Vec::new());
/// At most this many workspaces are kept (the oldest dropped first).
const CACHE_LEN: usize = 8;

/// A workspace for `model` on `threads` threads: a kept one, or a new one.
fn take_workspace(model: &Arc<Model>, threads: usize) -> BatchWorkspace {
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    cache.retain(|(w, _)| w.strong_count() > 0);
    let ws = match cache.iter().position(|(w, _)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(model))) {
        Some(k) => cache.remove(k).1,
        None => BatchWorkspace::new(model, threads),
    };
    drop(cache);
    let mut ws = ws;
    if ws.threads() != threads {
        // the workspace was made for this model: resizing cannot fail
        let _ = ws.set_threads(model, threads);
    }
    ws
}

fn give_back(model: &Arc<Model>, ws: BatchWorkspace) {
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if cache.len() >= CACHE_LEN {
        cache.remove(0);
    }
    cache.push((Arc::downgrade(model), ws));
}

/// `threads=None`: every core the process may use.
fn threads(t: Option<usize>) -> PyResult<usize> {
    match t {
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        Some(0) => Err(PyValueError::new_err("argument 'threads' must be at least 1")),
        Some(t) => Ok(t),
    }
}

/// An input: its name, the array, its columns per state and what they are (`"nq"`).
type Arg<'a, 'py> = (&'static str, &'a Bound<'py, PyAny>, usize, &'static str);

/// Reads `(N, cols)` float64 arrays (converted when they are not), all of the same `N`;
/// refuses other shapes and NaN or infinite entries, naming the argument.
fn read_inputs<'py, const I: usize>(what: &str, args: [Arg<'_, 'py>; I]) -> PyResult<(usize, [PyReadonlyArrayDyn<'py, f64>; I])> {
    let mut n: Option<(usize, &str)> = None;
    let mut arrays = Vec::with_capacity(I);
    for (name, obj, cols, size) in args {
        let np = obj.py().import("numpy")?;
        let err = |got: String| PyValueError::new_err(format!("{what}: argument '{name}' must be a float64 array of shape (N, {size}) = (N, {cols}), got {got}"));
        let array = np.call_method1("ascontiguousarray", (obj, "float64")).map_err(|_| err(type_name(obj)))?;
        let array = array.cast_into::<PyArrayDyn<f64>>().map_err(|e| err(type_name(e.into_inner().as_any())))?;
        let shape = array.shape().to_vec();
        if shape.len() != 2 || shape[1] != cols {
            return Err(err(format!("shape ({})", shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "))));
        }
        match n {
            Some((rows, first)) if rows != shape[0] => {
                return Err(PyValueError::new_err(format!(
                    "{what}: argument '{name}' has {} rows (states) and '{first}' has {rows}: one row per state in each",
                    shape[0]
                )))
            }
            _ => n = Some((shape[0], name)),
        }
        let ro = array.readonly();
        if let Some(bad) = ro.as_slice().ok().and_then(|s| s.iter().position(|x| !x.is_finite())) {
            return Err(PyValueError::new_err(format!("{what}: argument '{name}' has a NaN or infinite entry in row {}", bad / cols.max(1))));
        }
        arrays.push(ro);
    }
    let arrays: [PyReadonlyArrayDyn<'py, f64>; I] = arrays.try_into().unwrap_or_else(|_| unreachable!("I arrays pushed"));
    Ok((n.map_or(0, |(rows, _)| rows), arrays))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "an unknown object".into())
}

/// The shared body of every function: inputs read, `O` outputs of shape `(N, *dims[o])` made,
/// `f` run with the GIL released on the model's workspace.
fn call<'py, const I: usize, const O: usize>(
    py: Python<'py>,
    what: &str,
    model: &Bound<'py, PyModel>,
    args: [Arg<'_, 'py>; I],
    dims: [&[usize]; O],
    threads_arg: Option<usize>,
    f: impl Fn(&Model, &mut BatchWorkspace, [&[f64]; I], [&mut [f64]; O]) -> Result<(), BatchError> + Send + Sync,
) -> PyResult<[Bound<'py, PyArrayDyn<f64>>; O]> {
    let t = threads(threads_arg)?;
    let (n, inputs) = read_inputs(what, args)?;
    let outputs: [Bound<'py, PyArrayDyn<f64>>; O] = std::array::from_fn(|o| {
        let shape: Vec<usize> = std::iter::once(n).chain(dims[o].iter().copied()).collect();
        PyArrayDyn::<f64>::zeros(py, IxDyn(&shape), false)
    });
    let model = model.get().inner.clone();
    {
        let ins: [&[f64]; I] = std::array::from_fn(|i| inputs[i].as_slice().expect("ascontiguousarray is contiguous"));
        let mut rw: Vec<_> = outputs.iter().map(|o| o.readwrite()).collect();
        let mut it = rw.iter_mut();
        let outs: [&mut [f64]; O] = std::array::from_fn(|_| it.next().expect("O outputs").as_slice_mut().expect("a new array is contiguous"));
        py.detach(|| {
            let mut ws = take_workspace(&model, t);
            let r = f(&model, &mut ws, ins, outs);
            give_back(&model, ws);
            r
        })
        .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))?;
    }
    Ok(outputs)
}

/// Batched ``forward_kinematics``: ``(N, njoints, 4, 4)`` world placements.
#[pyfunction(name = "_batch_forward_kinematics")]
#[pyo3(signature = (model, q, threads = None))]
pub fn forward_kinematics<'py>(py: Python<'py>, model: &Bound<'py, PyModel>, q: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let (nq, nj) = (model.get().inner.nq, model.get().inner.njoints);
    let [o] = call(py, "batch.forward_kinematics", model, [("q", q, nq, "nq")], [&[nj, 4, 4]], threads, |m, ws, [q], [o]| {
        batch::forward_kinematics(m, ws, q, o)
    })?;
    Ok(o)
}

/// Batched ``rnea``: ``(N, nv)``.
#[pyfunction(name = "_batch_rnea")]
#[pyo3(signature = (model, q, v, a, threads = None))]
pub fn rnea<'py>(py: Python<'py>, model: &Bound<'py, PyModel>, q: &Bound<'py, PyAny>, v: &Bound<'py, PyAny>, a: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let (nq, nv) = (model.get().inner.nq, model.get().inner.nv);
    let args = [("q", q, nq, "nq"), ("v", v, nv, "nv"), ("a", a, nv, "nv")];
    let [o] = call(py, "batch.rnea", model, args, [&[nv]], threads, |m, ws, [q, v, a], [o]| batch::rnea(m, ws, q, v, a, o))?;
    Ok(o)
}

/// Batched ``nle``: ``(N, nv)``.
#[pyfunction(name = "_batch_nle")]
#[pyo3(signature = (model, q, v, threads = None))]
pub fn nle<'py>(py: Python<'py>, model: &Bound<'py, PyModel>, q: &Bound<'py, PyAny>, v: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let (nq, nv) = (model.get().inner.nq, model.get().inner.nv);
    let args = [("q", q, nq, "nq"), ("v", v, nv, "nv")];
    let [o] = call(py, "batch.nle", model, args, [&[nv]], threads, |m, ws, [q, v], [o]| batch::nonlinear_effects(m, ws, q, v, o))?;
    Ok(o)
}

/// Batched ``gravity``: ``(N, nv)``.
#[pyfunction(name = "_batch_gravity")]
#[pyo3(signature = (model, q, threads = None))]
pub fn gravity<'py>(py: Python<'py>, model: &Bound<'py, PyModel>, q: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let (nq, nv) = (model.get().inner.nq, model.get().inner.nv);
    let [o] = call(py, "batch.gravity", model, [("q", q, nq, "nq")], [&[nv]], threads, |m, ws, [q], [o]| batch::gravity_torques(m, ws, q, o))?;
    Ok(o)
}

/// Batched ``crba``: ``(N, nv, nv)``.
#[pyfunction(name = "_batch_crba")]
#[pyo3(signature = (model, q, threads = None))]
pub fn crba<'py>(py: Python<'py>, model: &Bound<'py, PyModel>, q: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let (nq, nv) = (model.get().inner.nq, model.get().inner.nv);
    let [o] = call(py, "batch.crba", model, [("q", q, nq, "nq")], [&[nv, nv]], threads, |m, ws, [q], [o]| batch::crba(m, ws, q, o))?;
    Ok(o)
}

/// Batched ``aba``: ``(N, nv)``.
#[pyfunction(name = "_batch_aba")]
#[pyo3(signature = (model, q, v, tau, threads = None))]
pub fn aba<'py>(py: Python<'py>, model: &Bound<'py, PyModel>, q: &Bound<'py, PyAny>, v: &Bound<'py, PyAny>, tau: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let (nq, nv) = (model.get().inner.nq, model.get().inner.nv);
    let args = [("q", q, nq, "nq"), ("v", v, nv, "nv"), ("tau", tau, nv, "nv")];
    let [o] = call(py, "batch.aba", model, args, [&[nv]], threads, |m, ws, [q, v, t], [o]| batch::aba(m, ws, q, v, t, o))?;
    Ok(o)
}

/// Batched ``minverse``: ``(N, nv, nv)``.
#[pyfunction(name = "_batch_minverse")]
#[pyo3(signature = (model, q, threads = None))]
pub fn minverse<'py>(py: Python<'py>, model: &Bound<'py, PyModel>, q: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let (nq, nv) = (model.get().inner.nq, model.get().inner.nv);
    let [o] = call(py, "batch.minverse", model, [("q", q, nq, "nq")], [&[nv, nv]], threads, |m, ws, [q], [o]| batch::mass_matrix_inverse(m, ws, q, o))?;
    Ok(o)
}

/// Batched ``compute_joint_jacobians``: ``(N, 6, nv)``.
#[pyfunction(name = "_batch_joint_jacobians")]
#[pyo3(signature = (model, q, threads = None))]
pub fn joint_jacobians<'py>(py: Python<'py>, model: &Bound<'py, PyModel>, q: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    let (nq, nv) = (model.get().inner.nq, model.get().inner.nv);
    let [o] = call(py, "batch.joint_jacobians", model, [("q", q, nq, "nq")], [&[6, nv]], threads, |m, ws, [q], [o]| batch::joint_jacobians(m, ws, q, o))?;
    Ok(o)
}

type Triple<'py> = (Bound<'py, PyArrayDyn<f64>>, Bound<'py, PyArrayDyn<f64>>, Bound<'py, PyArrayDyn<f64>>);

/// Batched ``compute_rnea_derivatives``: ``(dtau_dq, dtau_dv, M)``, each ``(N, nv, nv)``.
#[pyfunction(name = "_batch_rnea_derivatives")]
#[pyo3(signature = (model, q, v, a, threads = None))]
pub fn rnea_derivatives<'py>(py: Python<'py>, model: &Bound<'py, PyModel>, q: &Bound<'py, PyAny>, v: &Bound<'py, PyAny>, a: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Triple<'py>> {
    let (nq, nv) = (model.get().inner.nq, model.get().inner.nv);
    let args = [("q", q, nq, "nq"), ("v", v, nv, "nv"), ("a", a, nv, "nv")];
    let d: &[usize] = &[nv, nv];
    let [x, y, z] = call(py, "batch.rnea_derivatives", model, args, [d, d, d], threads, |m, ws, [q, v, a], [x, y, z]| {
        batch::rnea_derivatives(m, ws, q, v, a, x, y, z)
    })?;
    Ok((x, y, z))
}

/// Batched ``compute_aba_derivatives``: ``(ddq_dq, ddq_dv, Minv)``, each ``(N, nv, nv)``.
#[pyfunction(name = "_batch_aba_derivatives")]
#[pyo3(signature = (model, q, v, tau, threads = None))]
pub fn aba_derivatives<'py>(py: Python<'py>, model: &Bound<'py, PyModel>, q: &Bound<'py, PyAny>, v: &Bound<'py, PyAny>, tau: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Triple<'py>> {
    let (nq, nv) = (model.get().inner.nq, model.get().inner.nv);
    let args = [("q", q, nq, "nq"), ("v", v, nv, "nv"), ("tau", tau, nv, "nv")];
    let d: &[usize] = &[nv, nv];
    let [x, y, z] = call(py, "batch.aba_derivatives", model, args, [d, d, d], threads, |m, ws, [q, v, t], [x, y, z]| {
        batch::aba_derivatives(m, ws, q, v, t, x, y, z)
    })?;
    Ok((x, y, z))
}

/// Registers the `_batch_*` functions in `_native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(forward_kinematics, m)?)?;
    m.add_function(wrap_pyfunction!(rnea, m)?)?;
    m.add_function(wrap_pyfunction!(nle, m)?)?;
    m.add_function(wrap_pyfunction!(gravity, m)?)?;
    m.add_function(wrap_pyfunction!(crba, m)?)?;
    m.add_function(wrap_pyfunction!(aba, m)?)?;
    m.add_function(wrap_pyfunction!(minverse, m)?)?;
    m.add_function(wrap_pyfunction!(joint_jacobians, m)?)?;
    m.add_function(wrap_pyfunction!(rnea_derivatives, m)?)?;
    m.add_function(wrap_pyfunction!(aba_derivatives, m)?)?;
    Ok(())
}
