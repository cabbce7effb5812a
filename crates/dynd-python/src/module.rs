//! The module's functions and its registration.

use crate::callable::{_callable_from_kernel, PyCallable, callable, callable_names};
use crate::convert::{array_from_py, as_array};
use crate::errors::{OrRaise, invalid};
use crate::interop::{from_arrow, from_buffer_strict, from_dlpack};
use crate::pyarray::PyArray;
use crate::types::{PyDType, type_arg};
use dynd::compute;
use dynd::memblock::DeviceId;
use dynd::{Array, Type};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyString, PyTuple};

/// `dynd.array(obj, type=None, device=None)`: a new array holding a copy
/// of `obj`, on `device` (`"cpu"`, `"cuda"`, `"cuda:N"`) when given.
#[pyfunction]
#[pyo3(signature = (obj, r#type = None, device = None))]
fn array(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    r#type: Option<&Bound<'_, PyAny>>,
    device: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let tp = r#type.map(|t| type_arg(py, t)).transpose()?;
    let dev = device.map(DeviceId::parse).transpose().or_raise(py)?;
    // Onto a device, a host buffer (NumPy) is read in place: the device's
    // copy is the new array, so no host copy is made first.
    let viewed = match (&dev, &tp) {
        (Some(d), None) if !d.is_cpu() => crate::interop::from_buffer(py, obj)?,
        _ => None,
    };
    let a = match viewed {
        Some(a) => a,
        None => array_from_py(py, obj, tp)?,
    };
    match dev {
        Some(dev) if !dev.is_cpu() => {
            crate::cuda::ensure(dev).or_raise(py)?;
            let moved = py.detach(move || a.to_device(dev)).or_raise(py)?;
            PyArray::wrap(py, moved)
        }
        _ => PyArray::wrap(py, a),
    }
}

/// `dynd.cuda.is_available()`.
#[pyfunction]
fn _cuda_is_available() -> bool {
    dynd_cuda::is_available()
}

/// `dynd.cuda.device_count()`.
#[pyfunction]
fn _cuda_device_count() -> usize {
    dynd_cuda::device_count()
}

/// `dynd.cuda._emulate(ordinal)`: installs the host emulator of the CUDA
/// device as `cuda:ordinal` (dynd_cuda::emulator: the generated CUDA C
/// compiled by the C++ compiler), for tests of the device paths on
/// machines without a GPU.
#[pyfunction]
fn _cuda_emulate(py: Python<'_>, ordinal: u32) -> PyResult<()> {
    py.detach(|| dynd_cuda::emulator::Emulator::install(ordinal).map(drop))
        .or_raise(py)
}

/// `dynd.asarray(obj)`: `obj` without a copy where possible (dynd arrays,
/// the buffer protocol, DLPack), else a new array.
#[pyfunction]
fn asarray(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if obj.cast::<PyArray>().is_ok() {
        return Ok(obj.clone().unbind());
    }
    if obj.hasattr("__cuda_array_interface__")? {
        // CuPy arrays, CUDA torch tensors, Numba device arrays: zero-copy
        // device arrays (DESIGN §14).
        let a = crate::interop::from_cuda_array_interface(py, obj)?;
        let _ = crate::cuda::install();
        return PyArray::wrap(py, a);
    }
    if let Some(a) = from_buffer_strict(py, obj, obj.hasattr("__array_interface__")?)? {
        return PyArray::wrap(py, a);
    }
    if obj.hasattr("__dlpack__")? {
        return from_dlpack(py, obj);
    }
    PyArray::wrap(py, as_array(py, obj)?)
}

/// `dynd.from_json(text, type=None, lines=False)`.
#[pyfunction]
#[pyo3(signature = (text, r#type = None, lines = false))]
fn from_json(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    r#type: Option<&Bound<'_, PyAny>>,
    lines: bool,
) -> PyResult<Py<PyAny>> {
    // bytes and str are read where they lie (both are immutable and held
    // by the caller for the whole call); other buffers are copied.
    let owned: String;
    let text: &str = if let Ok(b) = text.cast::<PyBytes>() {
        std::str::from_utf8(b.as_bytes())
            .map_err(|e| invalid(py, format!("JSON bytes are not utf-8: {e}")))?
    } else if let Ok(s) = text.cast::<PyString>() {
        s.to_str()?
    } else if let Ok(b) = text.extract::<Vec<u8>>() {
        owned = String::from_utf8(b)
            .map_err(|e| invalid(py, format!("JSON bytes are not utf-8: {e}")))?;
        &owned
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "from_json: the text must be str, bytes or a bytes-like object, not {}",
            text.get_type().name()?
        )));
    };
    let tp = r#type.map(|t| type_arg(py, t)).transpose()?;
    let a = py
        .detach(|| -> dynd::Result<Array> {
            if lines {
                let tp = match tp {
                    Some(t) => t,
                    None => dynd::infer_type_lines(text)?,
                };
                Array::from_json_lines(tp, text)
            } else {
                let tp = match tp {
                    Some(t) => t,
                    None => dynd::infer_type(text)?,
                };
                Array::from_json(tp, text)
            }
        })
        .or_raise(py)?;
    PyArray::wrap(py, a)
}

/// `dynd.infer_type(text, lines=False)`: the type DESIGN §8 infers.
#[pyfunction]
#[pyo3(signature = (text, lines = false))]
fn infer_type(py: Python<'_>, text: &str, lines: bool) -> PyResult<PyDType> {
    let tp = if lines {
        dynd::infer_type_lines(text)
    } else {
        dynd::infer_type(text)
    }
    .or_raise(py)?;
    Ok(PyDType { tp })
}

fn axes_arg(py: Python<'_>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<isize>>> {
    let Some(axis) = axis.filter(|a| !a.is_none()) else {
        return Ok(None);
    };
    if axis.is_instance_of::<PyInt>() {
        return Ok(Some(vec![axis.extract()?]));
    }
    if let Ok(t) = axis.cast::<PyTuple>() {
        return t
            .iter()
            .map(|a| a.extract::<isize>())
            .collect::<PyResult<Vec<_>>>()
            .map(Some);
    }
    if let Ok(v) = axis.extract::<Vec<isize>>() {
        return Ok(Some(v));
    }
    Err(invalid(
        py,
        format!(
            "axis must be None, an int or a tuple of ints, not {}",
            axis.repr()?
        ),
    ))
}

/// `_reduce(name, a, axis, keepdims)`: a reduction.
#[pyfunction]
#[pyo3(signature = (name, a, axis = None, keepdims = false))]
fn _reduce(
    py: Python<'_>,
    name: &str,
    a: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<Py<PyAny>> {
    let f = match name {
        "sum" => compute::sum,
        "prod" => compute::prod,
        "min" => compute::min,
        "max" => compute::max,
        "mean" => compute::mean,
        "all" => compute::all,
        "any" => compute::any,
        "count" => compute::count,
        "argmin" => compute::argmin,
        "argmax" => compute::argmax,
        "var" => compute::var,
        "std" => compute::std,
        _ => return Err(invalid(py, format!("no reduction named '{name}'"))),
    };
    let a = as_array(py, a)?;
    let axes = axes_arg(py, axis)?;
    let out = py
        .detach(|| f(&a, axes.as_deref(), keepdims))
        .or_raise(py)?;
    PyArray::wrap(py, out)
}

/// `_call(name, *args)`: the registered callable `name` on `args`.
#[pyfunction]
#[pyo3(signature = (name, *args))]
fn _call(py: Python<'_>, name: &str, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let arrays: Vec<Array> = args
        .iter()
        .map(|a| as_array(py, &a))
        .collect::<PyResult<_>>()?;
    let refs: Vec<&Array> = arrays.iter().collect();
    let out = crate::gil::run(py, crate::gil::is_small(&refs), || {
        compute::call(name, &refs)
    })
    .or_raise(py)?;
    PyArray::wrap(py, out)
}

/// `_sort(x, descending, arg)`: sort / argsort along the innermost dim.
#[pyfunction]
#[pyo3(signature = (x, descending = false, arg = false))]
fn _sort(py: Python<'_>, x: &Bound<'_, PyAny>, descending: bool, arg: bool) -> PyResult<Py<PyAny>> {
    let a = as_array(py, x)?;
    let options = compute::SortOptions { descending };
    let out = py
        .detach(|| {
            if arg {
                compute::argsort_by(&a, options)
            } else {
                compute::sort_by(&a, options)
            }
        })
        .or_raise(py)?;
    PyArray::wrap(py, out)
}

/// `_concatenate(arrays)`.
#[pyfunction]
fn _concatenate(py: Python<'_>, arrays: Vec<Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
    let arrays: Vec<Array> = arrays
        .iter()
        .map(|a| as_array(py, a))
        .collect::<PyResult<_>>()?;
    let refs: Vec<&Array> = arrays.iter().collect();
    let out = py.detach(|| compute::concatenate(&refs)).or_raise(py)?;
    PyArray::wrap(py, out)
}

/// `_signature_parts(signature)`: `(return type, [argument types])` as
/// datashape text, for the Numba decorator.
#[pyfunction]
fn _signature_parts(py: Python<'_>, signature: &str) -> PyResult<(String, Vec<String>)> {
    let t = Type::parse(signature).or_raise(py)?;
    match t.kind() {
        dynd::types::TypeKind::Callable(s) => Ok((
            s.ret.to_string(),
            s.positional.iter().map(|t| t.to_string()).collect(),
        )),
        _ => Err(crate::errors::type_error(
            py,
            format!("'{signature}' is not a callable signature '(T, ...) -> R'"),
        )),
    }
}

/// Sets the number of elements above which reprs summarise.
#[pyfunction]
fn set_print_threshold(n: usize) {
    dynd::array::set_print_threshold(n);
}

/// `n` as a thread count: an int, 0 (the default) or a positive count up
/// to `dynd::exec::MAX_THREADS`; a `TypeError` for anything but an int
/// (a bool included), an `InvalidArgumentError` naming any other int.
fn thread_count(py: Python<'_>, what: &str, n: &Bound<'_, PyAny>) -> PyResult<usize> {
    if !n.is_instance_of::<pyo3::types::PyInt>() || n.is_instance_of::<pyo3::types::PyBool>() {
        return Err(crate::errors::type_error(
            py,
            format!("{what} takes an int thread count, got {}", n.repr()?),
        ));
    }
    n.extract::<i64>()
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= dynd::exec::MAX_THREADS)
        .ok_or_else(|| {
            let shown = n.repr().map(|r| r.to_string()).unwrap_or_default();
            crate::errors::invalid(
                py,
                format!(
                    "{what}: {shown} is not a thread count (0 for the default, 1 to {})",
                    dynd::exec::MAX_THREADS
                ),
            )
        })
}

/// `set_num_threads(n)`: the process default's thread count (DESIGN §13);
/// 0 goes back to `DYND_NUM_THREADS`, `RAYON_NUM_THREADS` or the cores.
#[pyfunction]
fn set_num_threads(py: Python<'_>, n: &Bound<'_, PyAny>) -> PyResult<()> {
    let n = thread_count(py, "set_num_threads", n)?;
    dynd::exec::set_num_threads(n).or_raise(py)
}

/// `get_num_threads()`: the threads a call made now, on this thread, uses.
#[pyfunction]
fn get_num_threads() -> usize {
    dynd::exec::num_threads()
}

/// `_replace_thread_scope(n)`: this thread's scope becomes `n` threads
/// (`None`: the process default); returns the scope it replaces, as
/// `_replace_thread_scope` takes it (`dynd.threads` puts it back).
#[pyfunction]
fn _replace_thread_scope(py: Python<'_>, n: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    use dynd::exec::Executor;
    let scope = match n {
        None => None,
        Some(n) => Some(Executor::with_threads(thread_count(py, "dynd.threads", n)?).or_raise(py)?),
    };
    Ok(dynd::exec::replace_scope(scope).map(|e| match e {
        Executor::Threads(n) => n,
        other => other.threads(),
    }))
}

#[pymodule]
fn _dynd(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDType>()?;
    m.add_class::<PyArray>()?;
    m.add_class::<PyCallable>()?;
    m.add_function(wrap_pyfunction!(array, m)?)?;
    m.add_function(wrap_pyfunction!(asarray, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_is_available, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_device_count, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_emulate, m)?)?;
    m.add_function(wrap_pyfunction!(from_json, m)?)?;
    m.add_function(wrap_pyfunction!(infer_type, m)?)?;
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(from_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(callable, m)?)?;
    m.add_function(wrap_pyfunction!(callable_names, m)?)?;
    m.add_function(wrap_pyfunction!(_callable_from_kernel, m)?)?;
    crate::lowlevel::register(m)?;
    crate::pickle::register(m)?;
    crate::json_block::register(m)?;
    m.add_function(wrap_pyfunction!(_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(_call, m)?)?;
    m.add_function(wrap_pyfunction!(_sort, m)?)?;
    m.add_function(wrap_pyfunction!(_concatenate, m)?)?;
    m.add_function(wrap_pyfunction!(_signature_parts, m)?)?;
    m.add_function(wrap_pyfunction!(set_print_threshold, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(_replace_thread_scope, m)?)?;
    Ok(())
}
