//! JSON out, for every type.

use crate::array::Array;
use crate::layout::arrmeta::{self, FixedDimMeta, PointerMeta, StringData, VarDimData, VarDimMeta};
use crate::layout::na;
// fixed_string encoding and decoding are shared with the text assignment
// kernels, so JSON and casts validate alike.
use crate::layout::text::decode;
use crate::types::{BuiltinType, Fields, NativeType, Quoting, Type, TypeKind, write_escaped};
use crate::with_native;
use std::fmt::{self, Write};
use std::mem::size_of;

/// Writes `s` as a JSON string.
pub(crate) fn write_json_string(s: &str, out: &mut impl Write) -> fmt::Result {
    write_escaped(s, Quoting::Json, out)
}

pub(in crate::array) fn to_json(a: &Array, pretty: bool) -> String {
    let mut out = String::new();
    let w = Writer { pretty };
    // SAFETY: `a` is a valid array: data and arrmeta match its type.
    unsafe { w.value(a.tp(), a.arrmeta_ptr(), a.data_ptr(), &mut out) };
    out
}

/// Writes one value of `tp` as JSON (`pretty`: with a space after each
/// `,` and `:`, as the repr shows it).
///
/// # Safety
/// 1. `data` / `meta` are valid data and arrmeta of `tp`.
pub(in crate::array) unsafe fn write_value(
    tp: &Type,
    meta: *const u8,
    data: *const u8,
    pretty: bool,
    out: &mut String,
) {
    // SAFETY: (1).
    unsafe { Writer { pretty }.value(tp, meta, data, out) }
}

struct Writer {
    pretty: bool,
}

impl Writer {
    fn sep(&self, out: &mut String) {
        out.push_str(if self.pretty { ", " } else { "," });
    }

    /// Writes `n` items between the two characters of `brackets`, with
    /// separators.
    fn seq(
        &self,
        brackets: &str,
        n: usize,
        out: &mut String,
        mut item: impl FnMut(usize, &mut String),
    ) {
        let mut b = brackets.chars();
        out.extend(b.next());
        for i in 0..n {
            if i > 0 {
                self.sep(out);
            }
            item(i, out);
        }
        out.extend(b.next());
    }

    /// Writes field `i` of a struct or tuple.
    ///
    /// # Safety
    /// 1. `data` / `meta` are valid data and arrmeta of the struct or tuple
    ///    whose fields are `fields`.
    unsafe fn field(
        &self,
        fields: &Fields,
        i: usize,
        meta: *const u8,
        data: *const u8,
        out: &mut String,
    ) {
        // SAFETY: (1): the field's data and arrmeta lie at its offsets.
        unsafe {
            self.value(
                &fields.types()[i],
                meta.add(fields.arrmeta_offsets()[i]),
                data.add(fields.data_offsets()[i]),
                out,
            )
        }
    }

    /// # Safety
    /// 1. `data` / `meta` are valid data and arrmeta of `tp`.
    unsafe fn value(&self, tp: &Type, meta: *const u8, data: *const u8, out: &mut String) {
        // SAFETY: each arm reads within the layouts (1) promises.
        unsafe {
            match tp.kind() {
                TypeKind::Builtin(b) => {
                    write_builtin(*b, data, if self.pretty { ", " } else { "," }, out)
                }
                TypeKind::Option(v) => {
                    if na::is_missing(tp, data) {
                        out.push_str("null");
                    } else {
                        self.value(v, meta, data, out);
                    }
                }
                TypeKind::String => {
                    let s = crate::layout::string_bytes(arrmeta::read::<StringData>(data));
                    let _ = write_json_string(&String::from_utf8_lossy(s), out);
                }
                TypeKind::Bytes => write_hex(
                    crate::layout::string_bytes(arrmeta::read::<StringData>(data)),
                    out,
                ),
                TypeKind::Char => {
                    let c = char::from_u32(arrmeta::read::<u32>(data)).unwrap_or('\u{fffd}');
                    let _ = write_json_string(c.encode_utf8(&mut [0; 4]), out);
                }
                TypeKind::FixedString { size, encoding } => {
                    let bytes = std::slice::from_raw_parts(data, size * encoding.unit_size());
                    let s = decode(bytes, *encoding)
                        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned());
                    let _ = write_json_string(&s, out);
                }
                TypeKind::FixedBytes { size, .. } => {
                    write_hex(std::slice::from_raw_parts(data, *size), out)
                }
                TypeKind::FixedDim { elem, .. } => {
                    let m: FixedDimMeta = arrmeta::read(meta);
                    let em = meta.add(size_of::<FixedDimMeta>());
                    self.seq("[]", m.dim_size as usize, out, |i, out| {
                        self.value(elem, em, data.offset(i as isize * m.stride), out)
                    });
                }
                TypeKind::VarDim { elem } => {
                    let m: VarDimMeta = arrmeta::read(meta);
                    let d: VarDimData = arrmeta::read(data);
                    let em = meta.add(size_of::<VarDimMeta>());
                    self.seq("[]", d.size, out, |i, out| {
                        let at = d.begin.wrapping_offset(m.offset + i as isize * m.stride);
                        self.value(elem, em, at, out)
                    });
                }
                TypeKind::Struct(fields) => {
                    self.seq("{}", fields.len(), out, |i, out| {
                        let _ = write_json_string(&fields.names()[i], out);
                        out.push_str(if self.pretty { ": " } else { ":" });
                        self.field(fields, i, meta, data, out)
                    });
                }
                TypeKind::Tuple(fields) => {
                    self.seq("[]", fields.len(), out, |i, out| {
                        self.field(fields, i, meta, data, out)
                    });
                }
                TypeKind::Pointer(target) => {
                    let p: usize = arrmeta::read(data);
                    if p == 0 {
                        out.push_str("null");
                    } else {
                        let pm: PointerMeta = arrmeta::read(meta);
                        self.value(
                            target,
                            meta.add(size_of::<PointerMeta>()),
                            (p as *const u8).wrapping_offset(pm.offset),
                            out,
                        );
                    }
                }
                _ => out.push_str("null"),
            }
        }
    }
}

fn write_hex(bytes: &[u8], out: &mut String) {
    out.push('"');
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out.push('"');
}

/// # Safety
/// `data` is readable data of `b`.
unsafe fn write_builtin(b: BuiltinType, data: *const u8, sep: &str, out: &mut String) {
    let complex = with_native!(b, complex => |T| {
        // SAFETY: (caller) one value of `b` at `data`.
        let v = unsafe { T::load(data) };
        out.push('[');
        let _ = v.re.write_value(out);
        out.push_str(sep);
        let _ = v.im.write_value(out);
        out.push(']');
    });
    if complex.is_some() {
        return;
    }
    let written = with_native!(b, |T| {
        // SAFETY: (caller) one value of `b` at `data`.
        let v = unsafe { T::load(data) };
        v.write_value(out)
    });
    if written.is_none() {
        // void
        out.push_str("null");
    }
}
