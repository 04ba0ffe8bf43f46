//! numpy in, numpy out: reading vector and matrix arguments into preallocated buffers (with
//! errors that name the argument and the expected shape) and making the result arrays.

use nalgebra::{DMatrix, DVector};
use numpy::ndarray::{Array2, ArrayView2, ShapeBuilder};
use numpy::{PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Copies the 1-D argument `obj` (`name`, `n` entries; `size` says what `n` is, e.g. `"nq"`)
/// into `dst`. A contiguous float64 array is copied as a slice into the preallocated buffer;
/// other real-number arrays and sequences are converted; anything
/// else, and NaN or infinite entries, raise `ValueError` naming the argument and the
/// expected shape.
pub fn read_vector(name: &str, size: &str, obj: &Bound<'_, PyAny>, dst: &mut [f64]) -> PyResult<()> {
    let n = dst.len();
    if let Ok(array) = obj.cast::<PyArray1<f64>>() {
        if array.len() != n {
            return Err(shape_error(name, size, n, &format!("({},)", array.len())));
        }
        // `to_vec` copies under the GIL without numpy's dynamic borrow tracking, which costs
        // more than the allocation (a hash-map entry made and dropped per array: measured
        // 1.2k instructions per argument with `try_readonly().as_slice()`, 0.5k this way, by
        // callgrind on rnea from Python).
        match array.to_vec() {
            Ok(v) => dst.copy_from_slice(&v),
            Err(_) => dst.iter_mut().zip(array.to_owned_array().iter()).for_each(|(d, x)| *d = *x),
        }
        return check_finite(name, dst);
    }
    if let Ok(array) = obj.cast::<PyUntypedArray>() {
        let kind = array.dtype().kind();
        let shape = format!("{:?}", array.shape());
        if array.ndim() != 1 {
            return Err(shape_error(name, size, n, &shape_tuple(array.shape())));
        }
        if !matches!(kind, b'b' | b'i' | b'u' | b'f') {
            let dtype: String = array.dtype().str()?.extract().unwrap_or_else(|_| shape.clone());
            return Err(PyValueError::new_err(format!(
                "argument '{name}' must be a real (float64) array of shape ({size},) = ({n},), got dtype {dtype}"
            )));
        }
        let converted = array.call_method1("astype", ("float64",))?;
        return read_vector(name, size, &converted, dst);
    }
    match obj.extract::<Vec<f64>>() {
        Ok(v) if v.len() == n => {
            dst.copy_from_slice(&v);
            check_finite(name, dst)
        }
        Ok(v) => Err(shape_error(name, size, n, &format!("a sequence of {} numbers", v.len()))),
        Err(_) => Err(PyValueError::new_err(format!(
            "argument '{name}' must be a float64 array of shape ({size},) = ({n},), got {}",
            type_name(obj)
        ))),
    }
}

/// [`read_vector`] into a `DVector`.
#[inline]
pub fn read_dvector(name: &str, size: &str, obj: &Bound<'_, PyAny>, dst: &mut DVector<f64>) -> PyResult<()> {
    read_vector(name, size, obj, dst.as_mut_slice())
}

/// A fresh length-`n` vector from `obj` (for the calls that own no buffer).
pub fn vector(name: &str, size: &str, obj: &Bound<'_, PyAny>, n: usize) -> PyResult<DVector<f64>> {
    let mut v = DVector::zeros(n);
    read_dvector(name, size, obj, &mut v)?;
    Ok(v)
}

/// A `rows x cols` float matrix argument (numpy array or nested sequence), row-major.
pub fn matrix(name: &str, obj: &Bound<'_, PyAny>, rows: Option<usize>, cols: usize) -> PyResult<DMatrix<f64>> {
    let expected = match rows {
        Some(r) => format!("({r}, {cols})"),
        None => format!("(k, {cols})"),
    };
    let err = |got: String| PyValueError::new_err(format!("argument '{name}' must have shape {expected}, got {got}"));
    let np = obj.py().import("numpy")?;
    let array = np
        .call_method1("asarray", (obj, "float64"))
        .map_err(|_| err(type_name(obj)))?;
    let array = array.cast::<PyUntypedArray>().map_err(|_| err(type_name(obj)))?;
    let shape = array.shape().to_vec();
    if shape.len() != 2 || shape[1] != cols || rows.is_some_and(|r| r != shape[0]) {
        return Err(err(shape_tuple(&shape)));
    }
    let array = array.cast::<PyArray2<f64>>().map_err(|_| err(type_name(obj)))?;
    let view = array.readonly();
    let a = view.as_array();
    Ok(DMatrix::from_fn(shape[0], cols, |i, j| a[[i, j]]))
}

/// NaN or infinite entries would come out as NaN results: refused at the door.
#[inline]
fn check_finite(name: &str, x: &[f64]) -> PyResult<()> {
    if x.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!("argument '{name}' has NaN or infinite entries")))
    }
}

fn shape_error(name: &str, size: &str, n: usize, got: &str) -> PyErr {
    PyValueError::new_err(format!("argument '{name}' must have shape ({size},) = ({n},), got {got}"))
}

fn shape_tuple(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "an unknown object".into())
}

/// A new 1-D array holding `v`.
#[inline]
pub fn array1<'py>(py: Python<'py>, v: &[f64]) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_slice(py, v)
}

/// A new 2-D array holding `m` (column-major storage: the array is Fortran-ordered, no transpose).
pub fn array2<'py>(py: Python<'py>, m: &DMatrix<f64>) -> Bound<'py, PyArray2<f64>> {
    let a = Array2::from_shape_vec((m.nrows(), m.ncols()).f(), m.as_slice().to_vec())
        .expect("a DMatrix's storage has nrows * ncols entries");
    PyArray2::from_owned_array(py, a)
}

/// Copies `m` into the numpy array `out` of its shape (any strides), an error naming `what`
/// when the shape differs or the array is not writeable.
pub fn fill2(what: &str, out: &Bound<'_, PyArray2<f64>>, m: &DMatrix<f64>) -> PyResult<()> {
    let mut rw = out.try_readwrite().map_err(|e| PyValueError::new_err(format!("{what}: {e}")))?;
    let mut view = rw.as_array_mut();
    if view.dim() != (m.nrows(), m.ncols()) {
        let (r, c) = view.dim();
        return Err(PyValueError::new_err(format!("{what}: shape ({r}, {c}), needs ({}, {})", m.nrows(), m.ncols())));
    }
    let src = ArrayView2::from_shape((m.nrows(), m.ncols()).f(), m.as_slice()).expect("a DMatrix's storage has nrows * ncols entries");
    view.assign(&src);
    Ok(())
}

/// Prefixes an argument error with the function it came from (`"rnea: argument 'q' ..."`).
pub fn in_call(what: &'static str) -> impl FnOnce(PyErr) -> PyErr {
    move |e| Python::attach(|py| PyValueError::new_err(format!("{what}: {}", e.value(py))))
}
