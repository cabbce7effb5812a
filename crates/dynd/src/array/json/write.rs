//! JSON out, for every type.

use crate::array::Array;
use crate::layout::arrmeta::{self, FixedDimMeta, PointerMeta, StringData, VarDimData, VarDimMeta};
use crate::layout::na;
// fixed_string encoding and decoding are shared with the text assignment
// kernels, so JSON and casts validate alike.
use crate::layout::text::decode;
use crate::types::{BuiltinType, Type, TypeKind};
use half::f16;
use std::fmt::{self, Write};
use std::mem::size_of;

/// Writes `s` as a JSON string.
pub(crate) fn write_json_string(s: &str, out: &mut impl Write) -> fmt::Result {
    out.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\r' => out.write_str("\\r")?,
            '\t' => out.write_str("\\t")?,
            '\u{8}' => out.write_str("\\b")?,
            '\u{c}' => out.write_str("\\f")?,
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32)?,
            c => out.write_char(c)?,
        }
    }
    out.write_char('"')
}

fn write_f64(v: f64, out: &mut String) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        let _ = write!(out, "{v:?}");
    }
}

fn write_f32(v: f32, out: &mut String) {
    if v.is_nan() || v.is_infinite() {
        write_f64(v as f64, out);
    } else {
        let _ = write!(out, "{v:?}");
    }
}

pub(in crate::array) fn to_json(a: &Array, pretty: bool) -> String {
    let mut out = String::new();
    let w = Writer { pretty };
    // SAFETY: `a` is a valid array: data and arrmeta match its type.
    unsafe { w.value(a.tp(), a.arrmeta_ptr(), a.data_ptr(), &mut out) };
    out
}

struct Writer {
    pretty: bool,
}

impl Writer {
    fn sep(&self, out: &mut String) {
        out.push_str(if self.pretty { ", " } else { "," });
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
                    if na::is_na(v, data) {
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
                    out.push('[');
                    for i in 0..m.dim_size {
                        if i > 0 {
                            self.sep(out);
                        }
                        self.value(
                            elem,
                            meta.add(size_of::<FixedDimMeta>()),
                            data.offset(i * m.stride),
                            out,
                        );
                    }
                    out.push(']');
                }
                TypeKind::VarDim { elem } => {
                    let m: VarDimMeta = arrmeta::read(meta);
                    let d: VarDimData = arrmeta::read(data);
                    out.push('[');
                    for i in 0..d.size as isize {
                        if i > 0 {
                            self.sep(out);
                        }
                        self.value(
                            elem,
                            meta.add(size_of::<VarDimMeta>()),
                            d.begin.offset(m.offset + i * m.stride),
                            out,
                        );
                    }
                    out.push(']');
                }
                TypeKind::Struct(fields) => {
                    out.push('{');
                    for i in 0..fields.len() {
                        if i > 0 {
                            self.sep(out);
                        }
                        let _ = write_json_string(&fields.names()[i], out);
                        out.push_str(if self.pretty { ": " } else { ":" });
                        self.value(
                            &fields.types()[i],
                            meta.add(fields.arrmeta_offsets()[i]),
                            data.add(fields.data_offsets()[i]),
                            out,
                        );
                    }
                    out.push('}');
                }
                TypeKind::Tuple(fields) => {
                    out.push('[');
                    for i in 0..fields.len() {
                        if i > 0 {
                            self.sep(out);
                        }
                        self.value(
                            &fields.types()[i],
                            meta.add(fields.arrmeta_offsets()[i]),
                            data.add(fields.data_offsets()[i]),
                            out,
                        );
                    }
                    out.push(']');
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
    use BuiltinType::*;
    // SAFETY: (caller) one value of `b` at `data`.
    unsafe {
        let _ = match b {
            Bool => write!(out, "{}", *data != 0),
            Int8 => write!(out, "{}", arrmeta::read::<i8>(data)),
            Int16 => write!(out, "{}", arrmeta::read::<i16>(data)),
            Int32 => write!(out, "{}", arrmeta::read::<i32>(data)),
            Int64 => write!(out, "{}", arrmeta::read::<i64>(data)),
            Int128 => write!(out, "{}", arrmeta::read::<i128>(data)),
            UInt8 => write!(out, "{}", *data),
            UInt16 => write!(out, "{}", arrmeta::read::<u16>(data)),
            UInt32 => write!(out, "{}", arrmeta::read::<u32>(data)),
            UInt64 => write!(out, "{}", arrmeta::read::<u64>(data)),
            UInt128 => write!(out, "{}", arrmeta::read::<u128>(data)),
            Float16 => {
                write_f32(arrmeta::read::<f16>(data).to_f32(), out);
                Ok(())
            }
            Float32 => {
                write_f32(arrmeta::read::<f32>(data), out);
                Ok(())
            }
            Float64 => {
                write_f64(arrmeta::read::<f64>(data), out);
                Ok(())
            }
            Complex64 => {
                out.push('[');
                write_f32(arrmeta::read::<f32>(data), out);
                out.push_str(sep);
                write_f32(arrmeta::read::<f32>(data.add(4)), out);
                out.push(']');
                Ok(())
            }
            Complex128 => {
                out.push('[');
                write_f64(arrmeta::read::<f64>(data), out);
                out.push_str(sep);
                write_f64(arrmeta::read::<f64>(data.add(8)), out);
                out.push(']');
                Ok(())
            }
            Void => write!(out, "null"),
        };
    }
}
