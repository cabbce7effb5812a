//! Python objects ↔ dynd arrays: nested lists, dicts and scalars in (with
//! the type inference of DESIGN §8 when no type is given), `to_list` out.

use crate::errors::{OrRaise, invalid, to_py};
use crate::pyarray::PyArray;
use dynd::array::{ScalarValue, ValueVisitor};
use dynd::types::{BuiltinType, Fields, TypeKind};
use dynd::{Array, Type};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyComplex, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::fmt::Write;

/// How deep nested lists may go (a list that contains itself stops here).
const MAX_DEPTH: usize = 256;

/// An array holding a copy of `obj` (nested lists/tuples, dicts, scalars,
/// `None` for missing, dynd arrays, NumPy arrays), of type `tp` or, without
/// one, the type DESIGN §8 infers from the values.
pub fn array_from_py(py: Python<'_>, obj: &Bound<'_, PyAny>, tp: Option<Type>) -> PyResult<Array> {
    if let Ok(a) = obj.cast::<PyArray>() {
        let a = &a.get().a;
        return match tp {
            Some(tp) => a.cast(with_dims_of(a, tp), Default::default()).or_raise(py),
            None => a.copy().or_raise(py),
        };
    }
    if let Some(a) = crate::interop::from_buffer(py, obj)? {
        return match tp {
            Some(tp) => a
                .cast(with_dims_of(&a, tp), Default::default())
                .or_raise(py),
            None => a.copy().or_raise(py),
        };
    }
    let mut json = String::new();
    write_json(py, obj, &mut json, 0)?;
    py.detach(|| {
        let tp = match tp {
            Some(tp) => tp,
            None => dynd::infer_type(&json)?,
        };
        Array::from_json(tp, &json)
    })
    .or_raise(py)
}

/// The array `obj` is, without copying where it can be: a dynd array is
/// itself, a NumPy array (anything with the buffer protocol) is viewed in
/// place, anything else is converted as [`array_from_py`] does.
pub fn as_array(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Array> {
    if let Ok(a) = obj.cast::<PyArray>() {
        return Ok(a.get().a.clone());
    }
    if let Some(a) = crate::interop::from_buffer(py, obj)? {
        return Ok(a);
    }
    array_from_py(py, obj, None)
}

/// `tp` as the type of a cast of `a`: a type without dims is the element
/// type, and `a`'s dims are kept (DESIGN §11 `a.cast("int32")`).
pub fn with_dims_of(a: &Array, tp: Type) -> Type {
    if tp.is_dim() {
        return tp;
    }
    let mut dims = Vec::new();
    let mut t = a.tp();
    while let Some(elem) = t.dim_elem() {
        dims.push(t.clone());
        t = elem;
    }
    dims.into_iter()
        .rev()
        .fold(tp, |inner, dim| match dim.kind() {
            TypeKind::FixedDim { size, .. } => Type::fixed_dim(*size, inner),
            _ => Type::var_dim(inner),
        })
}

/// A 0-d array for a Python scalar next to an array of element type
/// `like`, as NumPy 2 treats Python scalars (NEP 50): an int takes an
/// integer or real element type (an int that does not fit is a
/// `dynd.ValueOverflowError`), a float takes a real element type, else they
/// are int64 / float64. `None` when `obj` is not a Python scalar.
pub fn weak_scalar(py: Python<'_>, obj: &Bound<'_, PyAny>, like: &Type) -> PyResult<Option<Array>> {
    let elem = like.dtype();
    let elem = elem.option_value().unwrap_or(elem);
    let b = elem.as_builtin();
    use BuiltinType::*;
    let is_int = |b: BuiltinType| {
        matches!(
            b,
            Int8 | Int16 | Int32 | Int64 | Int128 | UInt8 | UInt16 | UInt32 | UInt64 | UInt128
        )
    };
    let is_real = |b: BuiltinType| matches!(b, Float16 | BFloat16 | Float32 | Float64);
    let is_complex = |b: BuiltinType| matches!(b, Complex64 | Complex128);
    if obj.is_instance_of::<PyBool>() {
        return Ok(Some(Array::from(obj.extract::<bool>()?)));
    }
    if obj.is_instance_of::<PyInt>() {
        let text = obj.str()?.to_string();
        let target = match b {
            Some(b) if is_int(b) || is_real(b) || is_complex(b) => Type::builtin(b),
            _ => Type::int64(),
        };
        if let Some(b) = target.as_builtin().filter(|b| is_int(*b)) {
            // Parsed as the target type: out of range is an overflow error
            // naming the value, as NumPy's OverflowError does.
            return Array::from_json(Type::builtin(b), &text)
                .map(Some)
                .map_err(|_| {
                    to_py(
                        py,
                        dynd::Error::new(
                            dynd::ErrorKind::Overflow,
                            format!("Python integer {text} out of bounds for {target}"),
                        ),
                    )
                });
        }
        let v: f64 = obj.extract()?;
        return Array::from(v)
            .cast(&target, dynd::kernels::assign::ErrorMode::NoCheck)
            .map(Some)
            .or_raise(py);
    }
    if obj.is_instance_of::<PyFloat>() {
        let v: f64 = obj.extract()?;
        let target = match b {
            Some(b) if is_real(b) || is_complex(b) => Type::builtin(b),
            _ => Type::float64(),
        };
        return Array::from(v)
            .cast(&target, dynd::kernels::assign::ErrorMode::NoCheck)
            .map(Some)
            .or_raise(py);
    }
    if let Ok(c) = obj.cast::<PyComplex>() {
        let v = num_complex::Complex::new(c.real(), c.imag());
        let target = match b {
            Some(b) if is_complex(b) => Type::builtin(b),
            _ => Type::builtin(Complex128),
        };
        return Array::from(v)
            .cast(&target, dynd::kernels::assign::ErrorMode::NoCheck)
            .map(Some)
            .or_raise(py);
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(Some(Array::from(obj.extract::<&str>()?)));
    }
    Ok(None)
}

/// Writes `obj` as JSON text for dynd's parser.
fn write_json(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    out: &mut String,
    depth: usize,
) -> PyResult<()> {
    if depth > MAX_DEPTH {
        return Err(invalid(
            py,
            format!("values nest deeper than {MAX_DEPTH} levels (a list that contains itself?)"),
        ));
    }
    if obj.is_none() {
        out.push_str("null");
    } else if let Ok(b) = obj.cast::<PyBool>() {
        out.push_str(if b.is_true() { "true" } else { "false" });
    } else if obj.is_instance_of::<PyInt>() {
        out.push_str(&obj.str()?.to_string());
    } else if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        if v.is_nan() {
            out.push_str("NaN");
        } else if v.is_infinite() {
            out.push_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
        } else {
            let _ = write!(out, "{v:?}");
        }
    } else if let Ok(s) = obj.cast::<PyString>() {
        write_json_string(s.to_str()?, out);
    } else if let Ok(c) = obj.cast::<PyComplex>() {
        let _ = write!(out, "[{:?},{:?}]", c.real(), c.imag());
    } else if let Ok(b) = obj.cast::<PyBytes>() {
        out.push('"');
        for byte in b.as_bytes() {
            let _ = write!(out, "{byte:02x}");
        }
        out.push('"');
    } else if let Ok(d) = obj.cast::<PyDict>() {
        out.push('{');
        for (i, (k, v)) in d.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let Ok(k) = k.cast::<PyString>() else {
                return Err(invalid(
                    py,
                    format!(
                        "dict keys must be str to become struct fields, got {}",
                        k.repr()?
                    ),
                ));
            };
            write_json_string(k.to_str()?, out);
            out.push(':');
            write_json(py, &v, out, depth + 1)?;
        }
        out.push('}');
    } else if let Ok(a) = obj.cast::<PyArray>() {
        out.push_str(&a.get().a.to_json());
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        out.push('[');
        for (i, v) in obj.try_iter()?.enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_json(py, &v?, out, depth + 1)?;
        }
        out.push(']');
    } else if obj.hasattr("tolist")? {
        // NumPy arrays and scalars (np.int64 is no Python int).
        write_json(py, &obj.call_method0("tolist")?, out, depth + 1)?;
    } else {
        return Err(invalid(
            py,
            format!(
                "cannot make a dynd value of {} ({}); give lists, dicts, str, int, float, bool, None or arrays",
                obj.get_type().name()?,
                obj.repr()?
            ),
        ));
    }
    Ok(())
}

fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// What goes wrong while building Python values.
pub enum VisitError {
    Dynd(dynd::Error),
    Py(PyErr),
}

impl From<dynd::Error> for VisitError {
    fn from(e: dynd::Error) -> Self {
        VisitError::Dynd(e)
    }
}

impl From<PyErr> for VisitError {
    fn from(e: PyErr) -> Self {
        VisitError::Py(e)
    }
}

/// Builds Python values: lists for dims, dicts for structs, tuples for
/// tuples, `None` for missing values.
pub struct ToPython<'py> {
    pub py: Python<'py>,
}

impl<'py> ValueVisitor for ToPython<'py> {
    type Value = Bound<'py, PyAny>;
    type Error = VisitError;

    fn scalar(&mut self, v: ScalarValue<'_>) -> Result<Self::Value, VisitError> {
        let py = self.py;
        Ok(match v {
            ScalarValue::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
            ScalarValue::Int(i) => match i.into_pyobject(py) {
                Ok(v) => v.into_any(),
                Err(e) => match e {},
            },
            ScalarValue::UInt(u) => match u.into_pyobject(py) {
                Ok(v) => v.into_any(),
                Err(e) => match e {},
            },
            ScalarValue::Float(f) => PyFloat::new(py, f).into_any(),
            ScalarValue::Complex(re, im) => PyComplex::from_doubles(py, re, im).into_any(),
            ScalarValue::Str(s) => PyString::new(py, &s).into_any(),
            ScalarValue::Bytes(b) => PyBytes::new(py, b).into_any(),
            ScalarValue::Void => py.None().into_bound(py),
        })
    }
    fn missing(&mut self) -> Result<Self::Value, VisitError> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn list(&mut self, items: Vec<Self::Value>) -> Result<Self::Value, VisitError> {
        Ok(PyList::new(self.py, items)?.into_any())
    }
    fn record(
        &mut self,
        fields: &Fields,
        values: Vec<Self::Value>,
    ) -> Result<Self::Value, VisitError> {
        let d = PyDict::new(self.py);
        for (name, v) in fields.names().iter().zip(values) {
            d.set_item(name, v)?;
        }
        Ok(d.into_any())
    }
    fn tuple(&mut self, values: Vec<Self::Value>) -> Result<Self::Value, VisitError> {
        Ok(PyTuple::new(self.py, values)?.into_any())
    }
}

/// `a`'s values as Python objects.
pub fn to_list<'py>(py: Python<'py>, a: &Array) -> PyResult<Bound<'py, PyAny>> {
    a.visit(&mut ToPython { py }).map_err(|e| match e {
        VisitError::Dynd(e) => to_py(py, e),
        VisitError::Py(e) => e,
    })
}
