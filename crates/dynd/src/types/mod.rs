//! Runtime types.
//!
//! A [`Type`] is a value: builtin scalars are plain ids (no allocation, no
//! reference count) and every other type is an immutable node shared by
//! `Arc`, with its layout (data size, alignment, arrmeta size, field offsets)
//! computed once when it is built. Types print as canonical datashape
//! ([`std::fmt::Display`]) and parse from it ([`Type::parse`], [`str::parse`]).
//!
//! ```
//! use dynd::types::Type;
//! let t: Type = "3 * var * {x: int32, name: string}".parse().unwrap();
//! assert_eq!(t.to_string(), "3 * var * {x: int32, name: string}");
//! assert_eq!(t.data_size(), 3 * 16);
//! assert_eq!(t.arrmeta_size(), 16 + 24 + 8);
//! ```

mod builtin;
mod datashape;
pub mod native;
mod print;

pub use builtin::{BUILTIN_TYPE_ID_LIMIT, BuiltinType, FLOAT128_TYPE_ID};
pub use native::{B8, NativeType};
pub(crate) use print::{Quoting, is_identifier, write_escaped};

use crate::error::{Error, Result};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock};

/// Arrmeta of a fixed dim: `{intptr_t dim_size; intptr_t stride;}` (DESIGN §4).
pub const FIXED_DIM_ARRMETA_SIZE: usize = 16;
/// Arrmeta of a var dim: `{blockref; intptr_t stride; intptr_t offset;}`.
pub const VAR_DIM_ARRMETA_SIZE: usize = 24;
/// Arrmeta of string and bytes: `{blockref}`.
pub const BLOCKREF_ARRMETA_SIZE: usize = 8;
/// Arrmeta of a pointer: `{blockref; intptr_t offset;}`.
pub const POINTER_ARRMETA_SIZE: usize = 16;

/// A text encoding of `fixed_string` and `char`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// 7-bit ascii, one byte per character.
    Ascii,
    /// utf-8 (the default).
    Utf8,
    /// utf-16, two-byte code units, surrogate pairs allowed.
    Utf16,
    /// utf-32, one four-byte code unit per character.
    Utf32,
    /// ucs-2: two-byte code units, no surrogates (the basic plane only).
    Ucs2,
}

impl Encoding {
    /// Size of one code unit in bytes (also the data alignment).
    pub fn unit_size(self) -> usize {
        match self {
            Encoding::Ascii | Encoding::Utf8 => 1,
            Encoding::Utf16 | Encoding::Ucs2 => 2,
            Encoding::Utf32 => 4,
        }
    }

    /// The name used in datashape (`'utf8'`).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Ascii => "ascii",
            Encoding::Utf8 => "utf8",
            Encoding::Utf16 => "utf16",
            Encoding::Utf32 => "utf32",
            Encoding::Ucs2 => "ucs2",
        }
    }

    /// The encoding named `name` (`utf8`, also spelled `utf-8`, ...).
    pub fn from_name(name: &str) -> Option<Encoding> {
        Some(match name {
            "ascii" | "us-ascii" => Encoding::Ascii,
            "utf8" | "utf-8" => Encoding::Utf8,
            "utf16" | "utf-16" => Encoding::Utf16,
            "utf32" | "utf-32" => Encoding::Utf32,
            "ucs2" | "ucs-2" | "ucs_2" => Encoding::Ucs2,
            _ => return None,
        })
    }
}

/// A dimension that stands for a set of dimensions, in a pattern type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SymbolicDim {
    /// `Fixed * T`: any fixed dim.
    Fixed,
    /// `Dim * T`: any dim, fixed or var.
    Any,
    /// `N * T`: a dim variable; every `N` in a signature is the same size.
    Named(String),
    /// `... * T` or `Dims... * T`: zero or more dims.
    Ellipsis(Option<String>),
}

/// The fields of a struct or a tuple, with their C struct layout.
#[derive(Debug, Clone)]
pub struct Fields {
    names: Vec<String>,
    types: Vec<Type>,
    data_offsets: Vec<usize>,
    arrmeta_offsets: Vec<usize>,
}

impl Fields {
    fn new(names: Vec<String>, types: Vec<Type>) -> Fields {
        let mut data_offsets = Vec::with_capacity(types.len());
        let mut arrmeta_offsets = Vec::with_capacity(types.len());
        let (mut data, mut meta) = (0usize, 0usize);
        // Saturating: a type too large for memory keeps a size no
        // allocation can satisfy, so making an array of it is an Alloc error.
        for t in &types {
            data = align_up(data, t.data_alignment());
            data_offsets.push(data);
            data = data.saturating_add(t.data_size());
            arrmeta_offsets.push(meta);
            meta = meta.saturating_add(t.arrmeta_size());
        }
        Fields {
            names,
            types,
            data_offsets,
            arrmeta_offsets,
        }
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.types.len()
    }
    /// `true` when there are no fields.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }
    /// The field names (empty for a tuple).
    pub fn names(&self) -> &[String] {
        &self.names
    }
    /// The field types.
    pub fn types(&self) -> &[Type] {
        &self.types
    }
    /// Byte offset of each field in the data (C struct layout).
    pub fn data_offsets(&self) -> &[usize] {
        &self.data_offsets
    }
    /// Byte offset of each field's arrmeta inside the struct's arrmeta.
    pub fn arrmeta_offsets(&self) -> &[usize] {
        &self.arrmeta_offsets
    }
    /// The position of the field called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

impl PartialEq for Fields {
    fn eq(&self, other: &Fields) -> bool {
        self.names == other.names && self.types == other.types
    }
}
impl Eq for Fields {}
impl Hash for Fields {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.names.hash(state);
        self.types.hash(state);
    }
}

/// The signature of a callable: `(A, x: B) -> C`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallableSignature {
    /// Positional argument types.
    pub positional: Vec<Type>,
    /// Keyword arguments, by name.
    pub keywords: Vec<(String, Type)>,
    /// The return type.
    pub ret: Type,
}

/// What a type is. Builtins are [`TypeKind::Builtin`]; the rest are nodes
/// whose children are shared [`Type`]s.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// A builtin scalar.
    Builtin(BuiltinType),
    /// `string`: utf-8 text of any length, `{begin, end}` into a blockref.
    String,
    /// `bytes`: bytes of any length, `{begin, end}` into a blockref.
    Bytes,
    /// `char`: one unicode scalar value, stored as utf-32.
    Char,
    /// `fixed_string[N, 'enc']`: N code units, zero padded.
    FixedString {
        /// Number of code units.
        size: usize,
        /// The encoding.
        encoding: Encoding,
    },
    /// `fixed_bytes[N, align=A]`.
    FixedBytes {
        /// Number of bytes.
        size: usize,
        /// Alignment (a power of two dividing `size`).
        align: usize,
    },
    /// `N * T`.
    FixedDim {
        /// The dim size.
        size: usize,
        /// The element type.
        elem: Type,
    },
    /// `var * T`.
    VarDim {
        /// The element type.
        elem: Type,
    },
    /// A symbolic dim of a pattern: `Fixed * T`, `Dim * T`, `N * T`, `... * T`.
    SymbolicDim {
        /// Which dims it stands for.
        dim: SymbolicDim,
        /// The element type.
        elem: Type,
    },
    /// `{x: A, y: B}`.
    Struct(Fields),
    /// `(A, B)`.
    Tuple(Fields),
    /// `pointer[T]`.
    Pointer(Type),
    /// `?T`: T or missing.
    Option(Type),
    /// A type variable (`T`) of a pattern.
    TypeVar(String),
    /// `Any`: any type, dims included.
    Any,
    /// A callable type `(A, x: B) -> C`.
    Callable(CallableSignature),
}

/// A node with its layout, computed once.
#[derive(Debug)]
struct Node {
    kind: TypeKind,
    data_size: usize,
    data_alignment: usize,
    arrmeta_size: usize,
    symbolic: bool,
    blockref: bool,
}

#[derive(Debug, Clone)]
enum Repr {
    Builtin(BuiltinType),
    Node(Arc<Node>),
}

/// A runtime type. Cheap to clone (a builtin id, or one `Arc`).
#[derive(Clone)]
pub struct Type(Repr);

/// `TypeKind::Builtin(b)` for each `b` of [`BuiltinType::ALL`], in order.
static BUILTIN_KINDS: [TypeKind; BuiltinType::ALL.len()] = {
    let mut kinds = [const { TypeKind::Builtin(BuiltinType::Bool) }; BuiltinType::ALL.len()];
    let mut i = 0;
    while i < kinds.len() {
        // A builtin kind owns nothing: forgetting the one replaced leaks nothing.
        std::mem::forget(std::mem::replace(
            &mut kinds[i],
            TypeKind::Builtin(BuiltinType::ALL[i]),
        ));
        i += 1;
    }
    kinds
};

static STRING: LazyLock<Type> = LazyLock::new(|| Type::from_kind(TypeKind::String));
static BYTES: LazyLock<Type> = LazyLock::new(|| Type::from_kind(TypeKind::Bytes));
static CHAR: LazyLock<Type> = LazyLock::new(|| Type::from_kind(TypeKind::Char));

/// `value` rounded up to a multiple of `align` (a power of two),
/// saturating at the largest such multiple.
pub(crate) fn align_up(value: usize, align: usize) -> usize {
    debug_assert!(align.is_power_of_two());
    value.saturating_add(align - 1) & !(align - 1)
}

impl Type {
    fn from_kind(kind: TypeKind) -> Type {
        use TypeKind as K;
        let (data_size, data_alignment, arrmeta_size, symbolic, blockref) = match &kind {
            K::Builtin(b) => return Type(Repr::Builtin(*b)),
            K::String | K::Bytes => (16, 8, BLOCKREF_ARRMETA_SIZE, false, true),
            K::Char => (4, 4, 0, false, false),
            K::FixedString { size, encoding } => (
                size.saturating_mul(encoding.unit_size()),
                encoding.unit_size(),
                0,
                false,
                false,
            ),
            K::FixedBytes { size, align } => (*size, *align, 0, false, false),
            K::FixedDim { size, elem } => (
                size.saturating_mul(elem.data_size()),
                elem.data_alignment(),
                FIXED_DIM_ARRMETA_SIZE.saturating_add(elem.arrmeta_size()),
                elem.is_symbolic(),
                elem.has_blockref(),
            ),
            K::VarDim { elem } => (
                16,
                8,
                VAR_DIM_ARRMETA_SIZE.saturating_add(elem.arrmeta_size()),
                elem.is_symbolic(),
                true,
            ),
            K::SymbolicDim { .. } | K::TypeVar(_) | K::Any | K::Callable(_) => {
                (0, 1, 0, true, false)
            }
            K::Struct(fields) | K::Tuple(fields) => {
                let align = fields
                    .types
                    .iter()
                    .map(Type::data_alignment)
                    .max()
                    .unwrap_or(1);
                let end = match (fields.data_offsets.last(), fields.types.last()) {
                    (Some(off), Some(t)) => off.saturating_add(t.data_size()),
                    _ => 0,
                };
                (
                    align_up(end, align),
                    align,
                    fields
                        .types
                        .iter()
                        .fold(0usize, |a, t| a.saturating_add(t.arrmeta_size())),
                    fields.types.iter().any(Type::is_symbolic),
                    fields.types.iter().any(Type::has_blockref),
                )
            }
            K::Pointer(target) => (
                8,
                8,
                POINTER_ARRMETA_SIZE.saturating_add(target.arrmeta_size()),
                target.is_symbolic(),
                true,
            ),
            K::Option(value) => (
                // A value without an NA sentinel is followed by its flag
                // byte, the whole padded to the value's alignment (§4).
                if has_na_sentinel(value) || value.is_symbolic() {
                    value.data_size()
                } else {
                    align_up(value.data_size().saturating_add(1), value.data_alignment())
                },
                value.data_alignment(),
                value.arrmeta_size(),
                value.is_symbolic(),
                value.has_blockref(),
            ),
        };
        Type(Repr::Node(Arc::new(Node {
            kind,
            data_size,
            data_alignment,
            arrmeta_size,
            symbolic,
            blockref,
        })))
    }

    /// Parses datashape text. Errors are `Parse` errors naming the line, the
    /// column and what was expected there.
    pub fn parse(text: &str) -> Result<Type> {
        datashape::parse(text)
    }

    /// A builtin type.
    pub fn builtin(b: BuiltinType) -> Type {
        Type(Repr::Builtin(b))
    }
    /// `bool`.
    pub fn bool() -> Type {
        Type::builtin(BuiltinType::Bool)
    }
    /// `int32`.
    pub fn int32() -> Type {
        Type::builtin(BuiltinType::Int32)
    }
    /// `int64`.
    pub fn int64() -> Type {
        Type::builtin(BuiltinType::Int64)
    }
    /// `float64`.
    pub fn float64() -> Type {
        Type::builtin(BuiltinType::Float64)
    }
    /// `string` (utf-8).
    pub fn string() -> Type {
        STRING.clone()
    }
    /// `bytes`.
    pub fn bytes() -> Type {
        BYTES.clone()
    }
    /// `char`.
    pub fn char() -> Type {
        CHAR.clone()
    }

    /// `fixed_string[size, 'encoding']`. A size of 0 is an error.
    pub fn fixed_string(size: usize, encoding: Encoding) -> Result<Type> {
        if size == 0 {
            return Err(Error::type_error(
                "fixed_string size must be at least 1, got 0",
            ));
        }
        Ok(Type::from_kind(TypeKind::FixedString { size, encoding }))
    }

    /// `fixed_bytes[size, align=align]`. The alignment must be a power of two
    /// no larger than 16 that divides the size; a size of 0 is an error.
    pub fn fixed_bytes(size: usize, align: usize) -> Result<Type> {
        if size == 0 {
            return Err(Error::type_error(
                "fixed_bytes size must be at least 1, got 0",
            ));
        }
        if !align.is_power_of_two() || align > 16 {
            return Err(Error::type_error(format!(
                "fixed_bytes alignment must be 1, 2, 4, 8 or 16, got {align}"
            )));
        }
        if !size.is_multiple_of(align) {
            return Err(Error::type_error(format!(
                "fixed_bytes size {size} is not a multiple of its alignment {align}"
            )));
        }
        Ok(Type::from_kind(TypeKind::FixedBytes { size, align }))
    }

    /// `size * elem`. The element may not be a callable type.
    pub fn fixed_dim(size: usize, elem: Type) -> Type {
        Type::from_kind(TypeKind::FixedDim { size, elem })
    }

    /// `var * elem`.
    pub fn var_dim(elem: Type) -> Type {
        Type::from_kind(TypeKind::VarDim { elem })
    }

    /// A symbolic dim (`Fixed`, `Dim`, `N`, `...`) over `elem`.
    ///
    /// # Panics
    /// When a dim name is not a valid pattern name (an identifier starting
    /// with an upper-case letter, other than `Fixed`, `Dim` and `Any`); use
    /// [`Type::try_symbolic_dim`] to get an error instead.
    pub fn symbolic_dim(dim: SymbolicDim, elem: Type) -> Type {
        Type::try_symbolic_dim(dim, elem).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A symbolic dim, checking its name.
    pub fn try_symbolic_dim(dim: SymbolicDim, elem: Type) -> Result<Type> {
        match &dim {
            SymbolicDim::Named(n) | SymbolicDim::Ellipsis(Some(n)) => {
                check_pattern_name(n, "dim variable")?
            }
            _ => {}
        }
        Ok(Type::from_kind(TypeKind::SymbolicDim { dim, elem }))
    }

    /// `{name: type, ...}`. Duplicate field names are an error.
    pub fn struct_of<S: Into<String>>(fields: impl IntoIterator<Item = (S, Type)>) -> Result<Type> {
        let (names, types): (Vec<String>, Vec<Type>) =
            fields.into_iter().map(|(n, t)| (n.into(), t)).unzip();
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                return Err(Error::type_error(format!(
                    "duplicate field name '{n}' in struct"
                )));
            }
        }
        Ok(Type::from_kind(TypeKind::Struct(Fields::new(names, types))))
    }

    /// `(A, B, ...)`.
    pub fn tuple_of(types: impl IntoIterator<Item = Type>) -> Type {
        Type::from_kind(TypeKind::Tuple(Fields::new(
            Vec::new(),
            types.into_iter().collect(),
        )))
    }

    /// `pointer[target]`.
    pub fn pointer(target: Type) -> Type {
        Type::from_kind(TypeKind::Pointer(target))
    }

    /// `?value`: `value` or missing (DESIGN §4). A value type with an NA
    /// sentinel (bool, the numbers, string, bytes, char, pointers) marks a
    /// missing value with it; any other concrete value type (struct,
    /// tuple, fixed and var dims, fixed_string, fixed_bytes) is followed by
    /// a flag byte, 1 present and 0 missing, at
    /// [`Type::option_flag_offset`]. Type variables and `Any` are checked
    /// when they are resolved. An option of an option, of `void`, of a
    /// symbolic dim or of a callable type is an error.
    ///
    /// ```
    /// use dynd::types::Type;
    /// let t = Type::option(Type::parse("{a: int32, b: int8}").unwrap()).unwrap();
    /// // the struct's 8 bytes (5 and padding), the flag, padding to 4
    /// assert_eq!((t.data_size(), t.data_alignment()), (12, 4));
    /// assert_eq!(t.option_flag_offset(), Some(8));
    /// assert_eq!(Type::option(Type::int32()).unwrap().option_flag_offset(), None);
    /// ```
    pub fn option(value: Type) -> Result<Type> {
        let ok = match value.kind() {
            TypeKind::Builtin(b) => *b != BuiltinType::Void,
            TypeKind::Option(_) | TypeKind::SymbolicDim { .. } | TypeKind::Callable(_) => false,
            _ => true,
        };
        if !ok {
            let why = match value.kind() {
                TypeKind::Option(_) => "an option cannot be optional again",
                TypeKind::Builtin(_) => "void has no values to be missing",
                TypeKind::SymbolicDim { .. } => "a symbolic dim has no layout",
                _ => "a callable type has no data",
            };
            return Err(Error::type_error(format!(
                "option type ?{value} is not supported: {why}"
            )));
        }
        Ok(Type::from_kind(TypeKind::Option(value)))
    }

    /// For an option type whose value has no NA sentinel, the byte offset
    /// of its flag byte (the value's data size: the flag follows the
    /// value); `None` for a sentinel option and for any other type.
    pub fn option_flag_offset(&self) -> Option<usize> {
        match self.kind() {
            TypeKind::Option(v) if !has_na_sentinel(v) && !v.is_symbolic() => Some(v.data_size()),
            _ => None,
        }
    }

    /// A type variable. Its name must start with an upper-case letter.
    pub fn type_var(name: impl Into<String>) -> Result<Type> {
        let name = name.into();
        check_pattern_name(&name, "type variable")?;
        Ok(Type::from_kind(TypeKind::TypeVar(name)))
    }

    /// `Any`.
    pub fn any() -> Type {
        Type::from_kind(TypeKind::Any)
    }

    /// A callable type.
    pub fn callable(sig: CallableSignature) -> Type {
        Type::from_kind(TypeKind::Callable(sig))
    }

    /// What this type is.
    pub fn kind(&self) -> &TypeKind {
        match &self.0 {
            Repr::Builtin(b) => {
                // ALL lists ids 1..=14 then 16..=18 (15 is float128, unsupported).
                let id = b.id() as usize;
                &BUILTIN_KINDS[if id < 15 { id - 1 } else { id - 2 }]
            }
            Repr::Node(n) => &n.kind,
        }
    }

    /// The builtin id, when this is a builtin scalar.
    pub fn as_builtin(&self) -> Option<BuiltinType> {
        match &self.0 {
            Repr::Builtin(b) => Some(*b),
            Repr::Node(_) => None,
        }
    }

    /// Size of one element's data in bytes (0 for symbolic types).
    pub fn data_size(&self) -> usize {
        match &self.0 {
            Repr::Builtin(b) => b.data_size(),
            Repr::Node(n) => n.data_size,
        }
    }

    /// Alignment of the data in bytes.
    pub fn data_alignment(&self) -> usize {
        match &self.0 {
            Repr::Builtin(b) => b.data_alignment(),
            Repr::Node(n) => n.data_alignment,
        }
    }

    /// Size of the arrmeta in bytes (DESIGN §4).
    pub fn arrmeta_size(&self) -> usize {
        match &self.0 {
            Repr::Builtin(_) => 0,
            Repr::Node(n) => n.arrmeta_size,
        }
    }

    /// `true` when the type is (or contains) a pattern: symbolic dims, type
    /// variables, `Any`, or a callable type. Symbolic types have no layout.
    pub fn is_symbolic(&self) -> bool {
        match &self.0 {
            Repr::Builtin(_) => false,
            Repr::Node(n) => n.symbolic,
        }
    }

    /// `true` when the arrmeta holds memory block references (string,
    /// bytes, var dims, pointers anywhere inside).
    pub fn has_blockref(&self) -> bool {
        match &self.0 {
            Repr::Builtin(_) => false,
            Repr::Node(n) => n.blockref,
        }
    }

    /// `true` for a fixed, var or symbolic dim.
    pub fn is_dim(&self) -> bool {
        matches!(
            self.kind(),
            TypeKind::FixedDim { .. } | TypeKind::VarDim { .. } | TypeKind::SymbolicDim { .. }
        )
    }

    /// The element type of a dim, or `None` for a scalar.
    pub fn dim_elem(&self) -> Option<&Type> {
        match self.kind() {
            TypeKind::FixedDim { elem, .. }
            | TypeKind::VarDim { elem }
            | TypeKind::SymbolicDim { elem, .. } => Some(elem),
            _ => None,
        }
    }

    /// Number of leading dims (fixed, var or symbolic; an ellipsis counts 1).
    pub fn ndim(&self) -> usize {
        let mut n = 0;
        let mut t = self;
        while let Some(e) = t.dim_elem() {
            n += 1;
            t = e;
        }
        n
    }

    /// The type under all leading dims.
    pub fn dtype(&self) -> &Type {
        let mut t = self;
        while let Some(e) = t.dim_elem() {
            t = e;
        }
        t
    }

    /// The `Fields` of a struct or tuple.
    pub fn fields(&self) -> Option<&Fields> {
        match self.kind() {
            TypeKind::Struct(f) | TypeKind::Tuple(f) => Some(f),
            _ => None,
        }
    }

    /// The value type of an option, or `None`.
    pub fn option_value(&self) -> Option<&Type> {
        match self.kind() {
            TypeKind::Option(v) => Some(v),
            _ => None,
        }
    }

    /// An error unless the type is concrete (has a layout).
    pub fn require_concrete(&self, what: &str) -> Result<()> {
        if self.is_symbolic() {
            Err(Error::type_error(format!(
                "{what} needs a concrete type, but {self} is symbolic"
            )))
        } else {
            Ok(())
        }
    }
}

/// Raw handles for the C ABI (`dynd_type`, DESIGN §3, §5): a builtin is its
/// id (below [`BUILTIN_TYPE_ID_LIMIT`]); any other type is the address of its
/// shared node, whose reference count is the `Arc`'s strong count. A handle
/// is stable for as long as one reference to the node lives, so a borrowed
/// handle ([`Type::as_raw`]) needs no table and no allocation.
impl Type {
    /// Gives up this reference and returns the raw handle: the builtin id,
    /// or the node's address (which now owns the reference). Take it back
    /// with [`Type::from_raw`] or drop it with [`Type::decref_raw`].
    #[doc(hidden)]
    pub fn into_raw(self) -> usize {
        match self.0 {
            Repr::Builtin(b) => b.id() as usize,
            Repr::Node(n) => Arc::into_raw(n) as usize,
        }
    }

    /// The raw handle of this type, borrowed: valid while `self` (or any
    /// other reference to the same node) lives.
    #[doc(hidden)]
    pub fn as_raw(&self) -> usize {
        match &self.0 {
            Repr::Builtin(b) => b.id() as usize,
            Repr::Node(n) => Arc::as_ptr(n) as usize,
        }
    }

    /// The type for a raw handle, taking over one reference to it. `None`
    /// for a value below [`BUILTIN_TYPE_ID_LIMIT`] that is not a builtin id
    /// (0, 15 = float128, 19..=63). To borrow instead, wrap the result in
    /// `ManuallyDrop`.
    ///
    /// # Safety
    /// 1. `raw` is below [`BUILTIN_TYPE_ID_LIMIT`], or it came from
    ///    [`Type::into_raw`] or [`Type::as_raw`] and its node is alive.
    /// 2. For a node, the caller owns one reference to it, which the returned
    ///    `Type` now owns (or the caller keeps the `Type` from being dropped).
    #[doc(hidden)]
    pub unsafe fn from_raw(raw: usize) -> Option<Type> {
        if raw < BUILTIN_TYPE_ID_LIMIT {
            return BuiltinType::from_id(raw as u32).map(Type::builtin);
        }
        // SAFETY: (1) `raw` is the address of a live `Arc<Node>`'s node;
        // (2) the caller hands over the reference `Arc::from_raw` assumes.
        Some(Type(Repr::Node(unsafe {
            Arc::from_raw(raw as *const Node)
        })))
    }

    /// Adds one reference to the type behind a raw handle (nothing for a
    /// builtin id).
    ///
    /// # Safety
    /// 1. As for [`Type::from_raw`] (1): a builtin value, or a live node.
    #[doc(hidden)]
    pub unsafe fn incref_raw(raw: usize) {
        if raw >= BUILTIN_TYPE_ID_LIMIT {
            // SAFETY: (1) a live node made by `Arc`; aborts on overflow.
            unsafe { Arc::increment_strong_count(raw as *const Node) }
        }
    }

    /// Drops one reference to the type behind a raw handle, freeing the
    /// node with the last (nothing for a builtin id).
    ///
    /// # Safety
    /// 1. As for [`Type::from_raw`] (1).
    /// 2. The caller owns one reference, which this call consumes.
    #[doc(hidden)]
    pub unsafe fn decref_raw(raw: usize) {
        if raw >= BUILTIN_TYPE_ID_LIMIT {
            // SAFETY: (1) a live node made by `Arc`; (2) ours to drop.
            unsafe { Arc::decrement_strong_count(raw as *const Node) }
        }
    }
}

/// `true` when `value` has an NA value of its own (DESIGN §4): builtin
/// scalars other than void, string, bytes, char and pointers. Options of
/// every other type carry a flag byte.
fn has_na_sentinel(value: &Type) -> bool {
    match value.kind() {
        TypeKind::Builtin(b) => *b != BuiltinType::Void,
        TypeKind::String | TypeKind::Bytes | TypeKind::Char | TypeKind::Pointer(_) => true,
        _ => false,
    }
}

/// Names of type and dim variables: identifiers starting with an upper-case
/// letter, other than the reserved `Fixed`, `Dim` and `Any`.
fn check_pattern_name(name: &str, what: &str) -> Result<()> {
    if !name.starts_with(|c: char| c.is_ascii_uppercase())
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(Error::type_error(format!(
            "{what} name '{name}' must be an identifier starting with an upper-case letter"
        )));
    }
    if matches!(name, "Fixed" | "Dim" | "Any") {
        return Err(Error::type_error(format!(
            "{what} name '{name}' is reserved"
        )));
    }
    Ok(())
}

impl PartialEq for Type {
    fn eq(&self, other: &Type) -> bool {
        match (&self.0, &other.0) {
            (Repr::Builtin(a), Repr::Builtin(b)) => a == b,
            (Repr::Node(a), Repr::Node(b)) => Arc::ptr_eq(a, b) || a.kind == b.kind,
            _ => false,
        }
    }
}
impl Eq for Type {}

impl Hash for Type {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.kind().hash(state)
    }
}

impl From<BuiltinType> for Type {
    fn from(b: BuiltinType) -> Type {
        Type::builtin(b)
    }
}

impl std::str::FromStr for Type {
    type Err = Error;
    fn from_str(s: &str) -> Result<Type> {
        Type::parse(s)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        print::write_type(self, f)
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Type(\"{self}\")")
    }
}

#[cfg(test)]
mod tests;
