//! JSON in and out, for every type (DESIGN §8 conventions).
//!
//! Parsing is streaming and type-directed: the text is read once, straight
//! into the array's memory (no intermediate value tree); var dims grow
//! their allocation geometrically and trim it at the end. Errors name the
//! position (line, column) and the path in the value (`[1][0].x`).
//!
//! Conventions: NaN and infinities are the bare tokens `NaN`, `Infinity`,
//! `-Infinity`; a missing option value is `null`; complex numbers are
//! `[re, im]` (a plain number reads as `[x, 0]`); int128 and uint64
//! extremes are plain integer literals, read exactly; integers may be
//! written as `1.0` or `1e3` when the value is integral (`1.5` into an
//! integer is a `fractional` error); `bytes` and `fixed_bytes` are hex
//! strings (`"00ff"`); structs come from objects (extra keys are ignored, a
//! field the object lacks is missing when its type is an option and an
//! error otherwise) or from arrays in field order. `null` is a missing
//! value of every option type, of either kind (DESIGN §4).
//!
//! - `parse`: the streaming, type-directed reader.
//! - `number`: number tokens into every number type, with a one-pass
//!   quick path for the common shape.
//! - `write`: the printer.
//! - `lines`: JSON Lines in and out (one element of the outermost dim per
//!   line), read in parallel for large inputs.
//! - `infer`: the type of a JSON text (DESIGN §8's inference rules).
//! - `cursor`: what `parse` and `infer` share: scanning the text's bytes,
//!   and naming an error's place.

mod cursor;
mod infer;
mod lines;
mod number;
mod parse;
mod write;

pub use infer::{infer_type, infer_type_lines};
pub(super) use parse::{parse_into, parse_str_into};
pub(crate) use write::write_json_string;
pub(super) use write::{to_json, write_value};

#[cfg(test)]
mod tests;
