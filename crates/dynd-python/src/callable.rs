//! `dynd.Callable`: registry callables, and kernels from C function
//! pointers (numba.cfunc, ctypes) made into deferred ckernels.

use crate::convert::as_array;
use crate::errors::{OrRaise, invalid, type_error};
use crate::pyarray::PyArray;
use dynd::callable::deferred::Deferred;
use dynd::callable::{Callable, lookup, names};
use dynd::kernels::CKernelBuilder;
use dynd::kernels::{CKernelPrefix, ExprSingle, ExprStrided};
use dynd::types::TypeKind;
use dynd::{Array, Type};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::ffi::c_void;

/// The most sources a kernel takes (dynd's lifter's limit).
const MAX_SOURCES: usize = 4;

/// A dynd callable: `f(a, b)` broadcasts over fixed and var dims, with
/// missing values propagated, the GIL released while it runs.
#[pyclass(name = "Callable", module = "dynd", frozen)]
pub struct PyCallable {
    /// The callable.
    pub c: Callable,
}

#[pymethods]
impl PyCallable {
    #[pyo3(signature = (*args))]
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let arrays: Vec<Array> = args
            .iter()
            .map(|a| as_array(py, &a))
            .collect::<PyResult<_>>()?;
        let refs: Vec<&Array> = arrays.iter().collect();
        let out =
            crate::gil::run(py, crate::gil::is_small(&refs), || self.c.call(&refs)).or_raise(py)?;
        PyArray::wrap(py, out)
    }

    /// The registry name (or the kernel's name).
    #[getter]
    fn name(&self) -> String {
        self.c.name().to_string()
    }

    /// The signature, as a callable type.
    #[getter]
    fn signature(&self) -> String {
        self.c.signature().to_string()
    }

    fn __repr__(&self) -> String {
        format!("<dynd.Callable {} : {}>", self.c.name(), self.c.signature())
    }
}

/// `dynd.callable(name)`: the registered callable.
#[pyfunction]
pub fn callable(py: Python<'_>, name: &str) -> PyResult<PyCallable> {
    Ok(PyCallable {
        c: lookup(name).or_raise(py)?,
    })
}

/// The registered callable names, sorted.
#[pyfunction]
pub fn callable_names() -> Vec<String> {
    names()
}

/// The kernel functions a deferred ckernel from C function pointers
/// builds, and the Python object that owns their machine code.
struct CFuncData {
    single: Option<ExprSingle>,
    strided: Option<ExprStrided>,
    nsrc: usize,
    owner: Option<Py<PyAny>>,
}

/// The strided function of a kernel made from a single one: the single
/// function's address is the word after the prefix.
unsafe extern "C" fn strided_from_single(
    dst: *mut u8,
    dst_stride: isize,
    src: *const *const u8,
    src_stride: *const isize,
    count: usize,
    self_: *mut CKernelPrefix,
) -> i32 {
    // SAFETY: `self_` is a kernel `instantiate` wrote: the prefix, then
    // the single function; the ranges are the strided prototype's promise.
    unsafe {
        let f: ExprSingle = adapter_word(self_, 0);
        let n: usize = adapter_word(self_, 1);
        let mut s = [std::ptr::null::<u8>(); MAX_SOURCES];
        for (k, p) in s.iter_mut().enumerate().take(n) {
            *p = *src.add(k);
        }
        let mut d = dst;
        for _ in 0..count {
            let r = f(d, s.as_ptr(), self_);
            if r != 0 {
                return r;
            }
            d = d.wrapping_offset(dst_stride);
            for (k, p) in s.iter_mut().enumerate().take(n) {
                *p = p.wrapping_offset(*src_stride.add(k));
            }
        }
        0
    }
}

/// The single function of a kernel made from a strided one (a run of 1).
unsafe extern "C" fn single_from_strided(
    dst: *mut u8,
    src: *const *const u8,
    self_: *mut CKernelPrefix,
) -> i32 {
    // SAFETY: as `strided_from_single`, with the strided function after
    // the prefix; strides are never read for a run of one element.
    unsafe {
        let f: ExprStrided = adapter_word(self_, 0);
        let zeros = [0isize; MAX_SOURCES];
        f(dst, 0, src, zeros.as_ptr(), 1, self_)
    }
}

/// Word `i` after the prefix of an adapter kernel: the adapted function
/// (0), then the number of sources (1).
///
/// # Safety
/// `k` is a kernel `instantiate_cfunc` wrote with an adapter, and `T` is
/// the type of its word `i` (`ExprSingle` or `ExprStrided` for 0, `usize`
/// for 1).
unsafe fn adapter_word<T: Copy>(k: *mut CKernelPrefix, i: usize) -> T {
    // SAFETY: (caller) words 2 and 3 of the kernel hold these values.
    unsafe {
        std::ptr::read(
            k.cast::<u8>()
                .add(size_of::<CKernelPrefix>() + i * size_of::<usize>())
                .cast::<T>(),
        )
    }
}

unsafe extern "C" fn instantiate_cfunc(
    data: *mut c_void,
    ckb: *mut CKernelBuilder,
    offset: isize,
    arrmeta: *const *const u8,
    kernreq: u32,
) -> isize {
    let _ = arrmeta;
    // SAFETY: `data` is the CFuncData this callable was made with; `ckb`
    // is a builder dynd passes with a free slot at `offset`. The kernel is
    // 2 words (the foreign function is the kernel) or 4 (an adapter, the
    // foreign function, the source count); it owns nothing.
    unsafe {
        let d = &*data.cast::<CFuncData>();
        let words: [usize; 4] = match (kernreq, d.single, d.strided) {
            (0, Some(f), _) => [f as usize, 0, 0, 0],
            (1, _, Some(f)) => [f as usize, 0, 0, 0],
            (0, None, Some(f)) => [
                single_from_strided as *const () as usize,
                0,
                f as usize,
                d.nsrc,
            ],
            (1, Some(f), None) => [
                strided_from_single as *const () as usize,
                0,
                f as usize,
                d.nsrc,
            ],
            _ => {
                dynd::error::set_last_error(&dynd::Error::invalid_argument(format!(
                    "kernel request {kernreq} is neither single (0) nor strided (1)"
                )));
                return -1;
            }
        };
        let len = if words[2] == 0 { 2 } else { 4 };
        let end = offset + (len * size_of::<usize>()) as isize;
        if let Err(e) = CKernelBuilder::ensure_capacity_leaf_raw(ckb, end) {
            dynd::error::set_last_error(&e);
            return -1;
        }
        let base = CKernelBuilder::raw_data(ckb)
            .add(offset as usize)
            .cast::<usize>();
        for (i, w) in words.iter().take(len).enumerate() {
            base.add(i).write(*w);
        }
        end
    }
}

unsafe extern "C" fn free_cfunc(data: *mut c_void) {
    // SAFETY: `data` is the boxed CFuncData, freed once (the deferred
    // ckernel's contract); the owner is dropped with the GIL attached.
    unsafe {
        let d = Box::from_raw(data.cast::<CFuncData>());
        if let Some(owner) = d.owner
            && pyo3::ffi::Py_IsInitialized() != 0
        {
            Python::attach(|_| drop(owner));
        }
    }
}

/// `_callable_from_kernel(single, strided, signature, owner, name)`: a
/// callable from the addresses of a kernel's single and/or strided
/// function (0 = not given; DESIGN §5 prototypes) for the concrete
/// `signature`, lifted over dims like dynd's own. `owner` (the numba
/// cfunc or ctypes object) is kept alive as long as the callable.
///
/// The addresses are trusted: they must be functions of the prototype for
/// those types, callable from any thread (`dynd.callable_from_cfunc` checks
/// what Python can check before calling this).
#[pyfunction]
#[pyo3(signature = (single, strided, signature, owner = None, name = "cfunc"))]
pub fn _callable_from_kernel(
    py: Python<'_>,
    single: usize,
    strided: usize,
    signature: &str,
    owner: Option<Py<PyAny>>,
    name: &str,
) -> PyResult<PyCallable> {
    if single == 0 && strided == 0 {
        return Err(invalid(
            py,
            "a kernel needs a single or a strided function address (both are 0)",
        ));
    }
    let sig = Type::parse(signature).or_raise(py)?;
    let TypeKind::Callable(s) = sig.kind() else {
        return Err(type_error(
            py,
            format!("a kernel signature is '(T, ...) -> R', not '{signature}'"),
        ));
    };
    if !s.keywords.is_empty() {
        return Err(type_error(
            py,
            format!(
                "kernel signature '{signature}' has keyword arguments; kernels take positional ones only"
            ),
        ));
    }
    if s.positional.is_empty() || s.positional.len() > MAX_SOURCES {
        return Err(type_error(
            py,
            format!(
                "kernel signature '{signature}' has {} arguments; kernels take 1 to {MAX_SOURCES}",
                s.positional.len()
            ),
        ));
    }
    let mut types = vec![s.ret.clone()];
    types.extend(s.positional.iter().cloned());
    for t in &types {
        if t.is_dim() {
            return Err(type_error(
                py,
                format!(
                    "kernel signature '{signature}' has the dim type {t}; kernels are scalar (dynd lifts them over dims)"
                ),
            ));
        }
    }
    let data = Box::new(CFuncData {
        single: (single != 0).then(|| {
            // SAFETY: a nonzero address of the caller's single function.
            unsafe { std::mem::transmute::<usize, ExprSingle>(single) }
        }),
        strided: (strided != 0).then(|| {
            // SAFETY: a nonzero address of the caller's strided function.
            unsafe { std::mem::transmute::<usize, ExprStrided>(strided) }
        }),
        nsrc: types.len() - 1,
        owner,
    });
    let d = Deferred {
        name: name.to_string(),
        types,
        data: Box::into_raw(data).cast(),
        instantiate: instantiate_cfunc,
        free: Some(free_cfunc),
    };
    // SAFETY: `instantiate_cfunc` writes a kernel of the §5 prototypes from
    // the caller's functions; `free_cfunc` frees the data once, from any
    // thread (it attaches to Python to drop the owner).
    let c = unsafe { Callable::from_deferred(d) }.or_raise(py)?;
    Ok(PyCallable { c })
}
