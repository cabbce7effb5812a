//! Walking an array's values in order: [`Array::visit`] hands every value
//! to a [`ValueVisitor`], which builds its own representation of them (the
//! Python package builds lists and dicts this way; a test can build a
//! `serde_json::Value`-like tree).
//!
//! ```
//! use dynd::Array;
//! use dynd::array::{ScalarValue, ValueVisitor};
//! use dynd::types::Fields;
//!
//! /// Sums every number; counts the missing.
//! #[derive(Default)]
//! struct Total { sum: f64, missing: usize }
//! impl ValueVisitor for Total {
//!     type Value = ();
//!     type Error = dynd::Error;
//!     fn scalar(&mut self, v: ScalarValue<'_>) -> dynd::Result<()> {
//!         if let ScalarValue::Int(i) = v { self.sum += i as f64 }
//!         Ok(())
//!     }
//!     fn missing(&mut self) -> dynd::Result<()> { self.missing += 1; Ok(()) }
//!     fn list(&mut self, _: Vec<()>) -> dynd::Result<()> { Ok(()) }
//!     fn record(&mut self, _: &Fields, _: Vec<()>) -> dynd::Result<()> { Ok(()) }
//!     fn tuple(&mut self, _: Vec<()>) -> dynd::Result<()> { Ok(()) }
//! }
//! let a = Array::from_json("2 * var * ?int32", "[[1, null, 3], [4]]").unwrap();
//! let mut t = Total::default();
//! a.visit(&mut t).unwrap();
//! assert_eq!((t.sum, t.missing), (8.0, 1));
//! ```

use super::Array;
use crate::layout::arrmeta::{self, FixedDimMeta, PointerMeta, StringData, VarDimData, VarDimMeta};
use crate::layout::na;
use crate::layout::text::decode;
use crate::types::{BuiltinType, Fields, NativeType, Type, TypeKind};
use crate::with_native;
use std::borrow::Cow;
use std::mem::size_of;

/// One scalar value, as [`Array::visit`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum ScalarValue<'a> {
    /// `bool`.
    Bool(bool),
    /// A signed integer (`int8` … `int128`).
    Int(i128),
    /// An unsigned integer (`uint8` … `uint128`).
    UInt(u128),
    /// A real number (`float16`, `bfloat16`, `float32`, `float64`), widened.
    Float(f64),
    /// A complex number (`complex[float32]`, `complex[float64]`), widened.
    Complex(f64, f64),
    /// Text: `string` (lossy for invalid utf-8), `char`, `fixed_string`.
    Str(Cow<'a, str>),
    /// `bytes` and `fixed_bytes`.
    Bytes(&'a [u8]),
    /// `void`, and types without values (a symbolic type cannot be data).
    Void,
}

/// What [`Array::visit`] calls, innermost values first: a list's items are
/// built before the list.
pub trait ValueVisitor {
    /// What one value becomes.
    type Value;
    /// The visitor's error; a dynd error converts into it.
    type Error: From<crate::Error>;
    /// A scalar.
    fn scalar(&mut self, v: ScalarValue<'_>) -> Result<Self::Value, Self::Error>;
    /// A missing value of an option type, or a null pointer.
    fn missing(&mut self) -> Result<Self::Value, Self::Error>;
    /// The elements of one fixed or var dim, in order.
    fn list(&mut self, items: Vec<Self::Value>) -> Result<Self::Value, Self::Error>;
    /// A struct's field values, in the order of `fields`.
    fn record(
        &mut self,
        fields: &Fields,
        values: Vec<Self::Value>,
    ) -> Result<Self::Value, Self::Error>;
    /// A tuple's values.
    fn tuple(&mut self, values: Vec<Self::Value>) -> Result<Self::Value, Self::Error>;
}

impl Array {
    /// Hands every value of the array to `v`, in C order, and returns what
    /// `v` built of the whole. Stops at the first error `v` returns.
    ///
    /// A device array is copied to the host first; when it cannot be, the
    /// visitor sees no value and the copy's error is returned.
    pub fn visit<V: ValueVisitor>(&self, v: &mut V) -> Result<V::Value, V::Error> {
        if !self.device().is_cpu() {
            return match self.to_host() {
                Ok(host) => host.visit(v),
                Err(e) => Err(e.into()),
            };
        }
        // SAFETY: the array is valid: its data and arrmeta match its type.
        unsafe { walk(self.tp(), self.arrmeta_ptr(), self.data_ptr(), v) }
    }
}

impl Array {
    /// The bytes this array's values take: the inline data of its type
    /// ([`Type::data_size`]) plus what it reaches through var dims,
    /// strings, bytes and pointers (each row's elements, each string's
    /// bytes). A view counts what it reaches, not the whole of the memory
    /// it shares. O(1) when the type holds no such references, else one
    /// pass over the rows and strings (rows of plain elements are counted
    /// by their size, not walked). This is what `dask.sizeof` reports for
    /// a partition.
    ///
    /// A device array with references is copied to the host to be counted.
    ///
    /// ```
    /// use dynd::Array;
    /// let a = Array::from_json("2 * var * int32", "[[1, 2, 3], []]").unwrap();
    /// // two row descriptors of 16 bytes, three int32 values
    /// assert_eq!(a.data_bytes().unwrap(), 2 * 16 + 3 * 4);
    /// let s = Array::from_json("2 * string", r#"["ab", "cde"]"#).unwrap();
    /// assert_eq!(s.data_bytes().unwrap(), 2 * 16 + 5);
    /// ```
    pub fn data_bytes(&self) -> crate::Result<usize> {
        let tp = self.tp();
        if !tp.has_blockref() {
            return Ok(tp.data_size());
        }
        if !self.device().is_cpu() {
            return self.to_host()?.data_bytes();
        }
        // SAFETY: the array is valid: its data and arrmeta match its type.
        Ok(tp.data_size() + unsafe { reached_bytes(tp, self.arrmeta_ptr(), self.data_ptr()) })
    }
}

/// The bytes reached from one value of `tp` outside its inline data.
///
/// # Safety
/// 1. `data` / `meta` are valid data and arrmeta of `tp`.
unsafe fn reached_bytes(tp: &Type, meta: *const u8, data: *const u8) -> usize {
    if !tp.has_blockref() {
        return 0;
    }
    // SAFETY: each arm reads within the layouts (1) promises (DESIGN §4).
    unsafe {
        match tp.kind() {
            TypeKind::String | TypeKind::Bytes => {
                crate::layout::string_bytes(arrmeta::read::<StringData>(data)).len()
            }
            TypeKind::Option(inner) => {
                if na::is_missing(tp, data) {
                    0
                } else {
                    reached_bytes(inner, meta, data)
                }
            }
            TypeKind::FixedDim { elem, .. } => {
                let m: FixedDimMeta = arrmeta::read(meta);
                let inner = meta.add(size_of::<FixedDimMeta>());
                (0..m.dim_size)
                    .map(|i| reached_bytes(elem, inner, data.offset(i * m.stride)))
                    .sum()
            }
            TypeKind::VarDim { elem } => {
                let m: VarDimMeta = arrmeta::read(meta);
                let d: VarDimData = arrmeta::read(data);
                let own = d.size * elem.data_size();
                if !elem.has_blockref() {
                    return own;
                }
                let inner = meta.add(size_of::<VarDimMeta>());
                own + (0..d.size as isize)
                    .map(|i| {
                        let p = d.begin.wrapping_offset(m.offset + i * m.stride);
                        reached_bytes(elem, inner, p)
                    })
                    .sum::<usize>()
            }
            TypeKind::Struct(fields) | TypeKind::Tuple(fields) => (0..fields.len())
                .map(|i| {
                    reached_bytes(
                        &fields.types()[i],
                        meta.add(fields.arrmeta_offsets()[i]),
                        data.add(fields.data_offsets()[i]),
                    )
                })
                .sum(),
            TypeKind::Pointer(target) => {
                let p: usize = arrmeta::read(data);
                if p == 0 {
                    0
                } else {
                    let pm: PointerMeta = arrmeta::read(meta);
                    let target_data = (p as *const u8).wrapping_offset(pm.offset);
                    target.data_size()
                        + reached_bytes(target, meta.add(size_of::<PointerMeta>()), target_data)
                }
            }
            _ => 0,
        }
    }
}

/// # Safety
/// 1. `data` / `meta` are valid data and arrmeta of `tp`.
unsafe fn walk<V: ValueVisitor>(
    tp: &Type,
    meta: *const u8,
    data: *const u8,
    v: &mut V,
) -> Result<V::Value, V::Error> {
    // SAFETY: each arm reads within the layouts (1) promises (DESIGN §4).
    unsafe {
        match tp.kind() {
            TypeKind::Builtin(b) => v.scalar(builtin(*b, data)),
            TypeKind::Option(inner) => {
                if na::is_missing(tp, data) {
                    v.missing()
                } else {
                    walk(inner, meta, data, v)
                }
            }
            TypeKind::String => {
                let s = crate::layout::string_bytes(arrmeta::read::<StringData>(data));
                v.scalar(ScalarValue::Str(String::from_utf8_lossy(s)))
            }
            TypeKind::Bytes => {
                let s = crate::layout::string_bytes(arrmeta::read::<StringData>(data));
                v.scalar(ScalarValue::Bytes(s))
            }
            TypeKind::Char => {
                let c = char::from_u32(arrmeta::read::<u32>(data)).unwrap_or('\u{fffd}');
                v.scalar(ScalarValue::Str(Cow::Owned(c.to_string())))
            }
            TypeKind::FixedString { size, encoding } => {
                let bytes = std::slice::from_raw_parts(data, size * encoding.unit_size());
                let s = decode(bytes, *encoding)
                    .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned());
                v.scalar(ScalarValue::Str(Cow::Owned(s)))
            }
            TypeKind::FixedBytes { size, .. } => {
                v.scalar(ScalarValue::Bytes(std::slice::from_raw_parts(data, *size)))
            }
            TypeKind::FixedDim { elem, .. } => {
                let m: FixedDimMeta = arrmeta::read(meta);
                let inner = meta.add(size_of::<FixedDimMeta>());
                let mut items = Vec::with_capacity(m.dim_size.max(0) as usize);
                for i in 0..m.dim_size {
                    items.push(walk(elem, inner, data.offset(i * m.stride), v)?);
                }
                v.list(items)
            }
            TypeKind::VarDim { elem } => {
                let m: VarDimMeta = arrmeta::read(meta);
                let d: VarDimData = arrmeta::read(data);
                let inner = meta.add(size_of::<VarDimMeta>());
                let mut items = Vec::with_capacity(d.size);
                for i in 0..d.size as isize {
                    let p = d.begin.wrapping_offset(m.offset + i * m.stride);
                    items.push(walk(elem, inner, p, v)?);
                }
                v.list(items)
            }
            TypeKind::Struct(fields) => {
                let values = fields_of(fields, meta, data, v)?;
                v.record(fields, values)
            }
            TypeKind::Tuple(fields) => {
                let values = fields_of(fields, meta, data, v)?;
                v.tuple(values)
            }
            TypeKind::Pointer(target) => {
                let p: usize = arrmeta::read(data);
                if p == 0 {
                    v.missing()
                } else {
                    let pm: PointerMeta = arrmeta::read(meta);
                    let target_data = (p as *const u8).wrapping_offset(pm.offset);
                    walk(target, meta.add(size_of::<PointerMeta>()), target_data, v)
                }
            }
            _ => v.scalar(ScalarValue::Void),
        }
    }
}

/// # Safety
/// As [`walk`], for a struct's or tuple's `fields`.
unsafe fn fields_of<V: ValueVisitor>(
    fields: &Fields,
    meta: *const u8,
    data: *const u8,
    v: &mut V,
) -> Result<Vec<V::Value>, V::Error> {
    let mut values = Vec::with_capacity(fields.len());
    for i in 0..fields.len() {
        // SAFETY: (caller) each field lies at its offsets inside the record.
        values.push(unsafe {
            walk(
                &fields.types()[i],
                meta.add(fields.arrmeta_offsets()[i]),
                data.add(fields.data_offsets()[i]),
                v,
            )?
        });
    }
    Ok(values)
}

/// # Safety
/// `data` is readable data of `b`.
unsafe fn builtin(b: BuiltinType, data: *const u8) -> ScalarValue<'static> {
    let v = with_native!(b, |T| {
        // SAFETY: (caller) one value of `b`, whose Rust type is `T`, at `data`.
        let v = unsafe { T::load(data) };
        Widen::widen(v)
    });
    v.unwrap_or(ScalarValue::Void)
}

/// A builtin's value as the widest [`ScalarValue`] of its kind.
trait Widen {
    fn widen(self) -> ScalarValue<'static>;
}

impl Widen for bool {
    fn widen(self) -> ScalarValue<'static> {
        ScalarValue::Bool(self)
    }
}

macro_rules! widen {
    ($variant:ident, $wide:ty; $($t:ty),*) => {$(
        impl Widen for $t {
            fn widen(self) -> ScalarValue<'static> {
                ScalarValue::$variant(<$wide>::from(self))
            }
        }
    )*};
}
crate::for_each_native!(signed => widen!(Int, i128;));
crate::for_each_native!(unsigned => widen!(UInt, u128;));
crate::for_each_native!(ieee => widen!(Float, f64;));

macro_rules! widen_half {
    ($($t:ty),*) => {$(
        impl Widen for $t {
            fn widen(self) -> ScalarValue<'static> {
                ScalarValue::Float(self.to_f64())
            }
        }
    )*};
}
crate::for_each_native!(half => widen_half);

macro_rules! widen_complex {
    ($($t:ty),*) => {$(
        impl Widen for $t {
            fn widen(self) -> ScalarValue<'static> {
                ScalarValue::Complex(f64::from(self.re), f64::from(self.im))
            }
        }
    )*};
}
crate::for_each_native!(complex => widen_complex);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    /// Builds a JSON-like text with Python's spelling, so every kind of
    /// value shows.
    struct Show;
    impl ValueVisitor for Show {
        type Value = String;
        type Error = Error;
        fn scalar(&mut self, v: ScalarValue<'_>) -> crate::Result<String> {
            Ok(match v {
                ScalarValue::Bool(b) => if b { "True" } else { "False" }.into(),
                ScalarValue::Int(i) => format!("{i}"),
                ScalarValue::UInt(u) => format!("{u}u"),
                ScalarValue::Float(f) => format!("{f:?}"),
                ScalarValue::Complex(re, im) => format!("({re:?}+{im:?}j)"),
                ScalarValue::Str(s) => format!("'{s}'"),
                ScalarValue::Bytes(b) => format!("b{b:?}"),
                ScalarValue::Void => "void".into(),
            })
        }
        fn missing(&mut self) -> crate::Result<String> {
            Ok("None".into())
        }
        fn list(&mut self, items: Vec<String>) -> crate::Result<String> {
            Ok(format!("[{}]", items.join(", ")))
        }
        fn record(&mut self, f: &Fields, values: Vec<String>) -> crate::Result<String> {
            let parts: Vec<String> = f
                .names()
                .iter()
                .zip(values)
                .map(|(n, v)| format!("'{n}': {v}"))
                .collect();
            Ok(format!("{{{}}}", parts.join(", ")))
        }
        fn tuple(&mut self, values: Vec<String>) -> crate::Result<String> {
            Ok(format!("({})", values.join(", ")))
        }
    }

    fn show(tp: &str, json: &str) -> String {
        Array::from_json(tp, json)
            .unwrap()
            .visit(&mut Show)
            .unwrap()
    }

    #[test]
    fn every_kind_of_value() {
        assert_eq!(
            show(
                "2 * {a: ?int8, b: var * float32, c: string, d: (bool, uint64)}",
                r#"[{"a": -3, "b": [0.5], "c": "hé", "d": [true, 7]},
                    {"a": null, "b": [], "c": "", "d": [false, 18446744073709551615]}]"#
            ),
            "[{'a': -3, 'b': [0.5], 'c': 'hé', 'd': (True, 7u)}, \
             {'a': None, 'b': [], 'c': '', 'd': (False, 18446744073709551615u)}]"
        );
        assert_eq!(
            show("int128", "-170141183460469231731687303715884105728"),
            "-170141183460469231731687303715884105728"
        );
        assert_eq!(
            show("2 * complex[float64]", "[[1, 2], [3, -4]]"),
            "[(1.0+2.0j), (3.0+-4.0j)]"
        );
        assert_eq!(show("float16", "1.5"), "1.5");
        assert_eq!(show("bytes", r#""ff00""#), "b[255, 0]");
        assert_eq!(show("fixed_string[4, 'utf16']", r#""ab""#), "'ab'");
        assert_eq!(show("?var * int32", "null"), "None");
    }

    #[test]
    fn views_walk_their_own_elements() {
        let a = Array::from_json("2 * 3 * int32", "[[1,2,3],[4,5,6]]").unwrap();
        let col = a
            .index(&[crate::Index::ALL, crate::Index::slice(None, None, -2)])
            .unwrap();
        assert_eq!(col.visit(&mut Show).unwrap(), "[[3, 1], [6, 4]]");
    }

    #[test]
    fn a_visitor_error_stops_the_walk() {
        struct Refuse(usize);
        impl ValueVisitor for Refuse {
            type Value = ();
            type Error = Error;
            fn scalar(&mut self, _: ScalarValue<'_>) -> crate::Result<()> {
                self.0 += 1;
                if self.0 == 2 {
                    Err(Error::invalid_argument("second value refused"))
                } else {
                    Ok(())
                }
            }
            fn missing(&mut self) -> crate::Result<()> {
                Ok(())
            }
            fn list(&mut self, _: Vec<()>) -> crate::Result<()> {
                Ok(())
            }
            fn record(&mut self, _: &Fields, _: Vec<()>) -> crate::Result<()> {
                Ok(())
            }
            fn tuple(&mut self, _: Vec<()>) -> crate::Result<()> {
                Ok(())
            }
        }
        let a = Array::from_json("3 * int32", "[1,2,3]").unwrap();
        let mut r = Refuse(0);
        assert_eq!(
            a.visit(&mut r).unwrap_err().message(),
            "second value refused"
        );
        assert_eq!(r.0, 2);
    }
}
