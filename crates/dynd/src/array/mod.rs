//! Arrays: a memory block holding a preamble plus the type's arrmeta, over
//! data that lives in another, shared memory block (DESIGN §1.3).
//!
//! An [`Array`] is a handle: cloning it shares the same array. Views
//! ([`Array::index`], [`Array::field`], [`Array::permute`]) make a new
//! preamble and arrmeta over the same data — never a copy — so a write
//! through a view is seen through the original. [`Array::copy`] makes a
//! fresh array with the default layout. A few operations copy where a view
//! cannot express the result, and say so: an integer index into a var dim
//! under a kept dim (`x[:, 0]` of `N * var * T` picks element 0 of every
//! row: see [`Array::index`]); indexing or taking a field through an option
//! type (`x[:, 0]` of `N * ?var * T` and field `a` of `N * ?{a: T}` are
//! `N * ?T`, missing where the row or record is: see [`Array::index`],
//! [`Array::field`]); and [`Array::reshape`] of data that is not
//! C-contiguous.
//!
//! # Rust conveniences
//! - [`Array::len`], [`Array::is_empty`], [`Array::iter`] and `for row in
//!   &array`: the outermost dim (fixed or var) as a collection of views;
//! - `==` compares types and values element by element ([`eq`](#equality));
//! - [`Array::to_vec`] (any layout, type-checked against `T`) and
//!   [`Array::as_slice`] (a borrow of immutable C-contiguous data);
//! - [`Array::reshape`] of fixed dims, with one `-1` inferred;
//! - `Display` is NumPy's repr, summarising big arrays (see [`display`]).
//!
//! ```
//! use dynd::{Array, Index};
//! let x = Array::from_json("3 * var * float64", "[[1, 2, 3], [4], [5, 6]]").unwrap();
//! assert_eq!(x.len().unwrap(), 3);
//! let firsts = x.index(&[Index::ALL, 0.into()]).unwrap();
//! assert_eq!(firsts.to_vec::<f64>().unwrap(), vec![1.0, 4.0, 5.0]);
//! let tails = x.index(&[Index::ALL, (1..).into()]).unwrap();
//! assert_eq!(tails, Array::from_json("3 * var * float64", "[[2, 3], [], [6]]").unwrap());
//! assert_eq!(x.iter().map(|row| row.len().unwrap()).collect::<Vec<_>>(), [3, 1, 2]);
//! ```
//!
//! # Equality
//! Two arrays are equal when their types are equal and so are their
//! values, compared over the data in any layouts (never through text):
//! floats by IEEE rules (NaN is not equal to itself), strings by content,
//! var dims row by row, options by presence and then value.
//!
//! # Sharing and threads
//! Like NumPy arrays, arrays are shared, mutable buffers: every view and
//! clone of an array can write to the same bytes (when the array is
//! writable). Arrays can be sent and shared between threads, and reading
//! from many threads at once is fine, but writing to elements that another
//! thread reads or writes at the same time is a data race: dynd's own
//! executors split their outputs so that never happens, and code that
//! shares writable arrays between threads must do the same (or make the
//! array immutable with [`Array::into_immutable`]).

mod assign;
mod copy;
mod device;
mod device_nested;
mod device_records;
mod device_var;
pub mod display;
mod eq;
mod external;
mod flat_assign;
mod index;
mod iter;
mod json;
mod reshape;
mod scalar;
mod values;
mod visit;

pub use crate::layout::{
    BlockrefMeta, FixedDimMeta, PointerMeta, StringData, VarDimData, VarDimMeta,
};
pub use device::{DeviceAssign, register_assign};
pub use device_nested::NestedLayout;
pub use device_var::RaggedLayout;
pub use display::{ArrayDisplay, print_threshold, set_print_threshold};
pub use index::Index;
pub use iter::Iter;
pub use json::{infer_type, infer_type_lines};
pub use visit::{ScalarValue, ValueVisitor};

use crate::error::{Error, Result};
use crate::layout::{arrmeta, string_bytes};
use crate::memblock::{BlockPrefix, BlockVTable, MemBlock, MemoryBlockHeader, MemoryBlockKind};
use crate::types::{NativeType, Type, TypeKind};
use std::alloc::Layout;
use std::fmt;
use std::ptr::NonNull;

/// Access flags of an array.
pub mod flags {
    /// The data may be read.
    pub const READ: u64 = 1;
    /// The data may be written through this array.
    pub const WRITE: u64 = 2;
    /// Nobody writes the data, through any array.
    pub const IMMUTABLE: u64 = 4;
}

/// The array memory block: the preamble, then `tp.arrmeta_size()` bytes of
/// arrmeta (8-aligned, right after the struct).
#[repr(C)]
struct ArrayBlock {
    prefix: BlockPrefix,
    tp: Type,
    data: *mut u8,
    flags: u64,
    data_ref: MemBlock,
}

const PREAMBLE_SIZE: usize = std::mem::size_of::<ArrayBlock>();
const _: () = assert!(PREAMBLE_SIZE.is_multiple_of(8));
const _: () = assert!(std::mem::offset_of!(ArrayBlock, prefix) == 0);

fn block_layout(arrmeta_size: usize) -> Layout {
    // The arrmeta of any type is at most a few KiB; the sum cannot overflow
    // for a type that was built in memory.
    Layout::from_size_align(
        PREAMBLE_SIZE + arrmeta_size,
        std::mem::align_of::<ArrayBlock>().max(8),
    )
    .unwrap_or_else(|_| Layout::new::<ArrayBlock>())
}

static ARRAY_VTABLE: BlockVTable = BlockVTable { free: free_array };

/// # Safety
/// See [`BlockVTable::free`].
unsafe fn free_array(block: NonNull<MemoryBlockHeader>) {
    let p = block.cast::<ArrayBlock>().as_ptr();
    // SAFETY: (1) made by `Array::from_parts` as an ArrayBlock followed by
    // its arrmeta; (2) ours alone now, so its fields are dropped once here.
    unsafe {
        let tp = std::ptr::read(&(*p).tp);
        let meta = (p as *mut u8).add(PREAMBLE_SIZE);
        arrmeta::destroy(&tp, meta);
        let layout = block_layout(tp.arrmeta_size());
        drop(tp);
        std::ptr::drop_in_place(&mut (*p).data_ref);
        std::alloc::dealloc(p as *mut u8, layout);
    }
}

/// An n-dimensional, typed array (see the [module docs](self)).
#[derive(Clone)]
pub struct Array {
    block: MemBlock,
}

impl Array {
    /// Builds an array block. `init_meta` fills the zeroed arrmeta; every
    /// blockref it writes must be an owned reference.
    ///
    /// # Safety
    /// 1. `data` points at data laid out as `tp` with the arrmeta that
    ///    `init_meta` writes, kept alive by `data_ref`.
    /// 2. `init_meta` writes valid arrmeta for `tp` (it receives
    ///    `tp.arrmeta_size()` zeroed bytes).
    pub(crate) unsafe fn from_parts(
        tp: Type,
        data: *mut u8,
        data_ref: MemBlock,
        flags: u64,
        init_meta: impl FnOnce(*mut u8),
    ) -> Array {
        let arrmeta_size = tp.arrmeta_size();
        let layout = block_layout(arrmeta_size);
        // Not alloc_zeroed: the preamble is written whole below and only the
        // arrmeta is zeroed (glibc's calloc skips its per-thread cache,
        // which made it a tenth of a small call's time).
        // SAFETY: the layout has a non-zero size (the preamble).
        let raw = unsafe { std::alloc::alloc(layout) } as *mut ArrayBlock;
        if raw.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // SAFETY: `raw` is a fresh allocation big enough for the preamble
        // and the arrmeta (zeroed here, as init_meta expects); (2) is the
        // caller's promise about init_meta.
        unsafe {
            let meta = (raw as *mut u8).add(PREAMBLE_SIZE);
            std::ptr::write_bytes(meta, 0, arrmeta_size);
            init_meta(meta);
            std::ptr::write(
                raw,
                ArrayBlock {
                    prefix: BlockPrefix::new(MemoryBlockKind::Array, &ARRAY_VTABLE),
                    tp,
                    data,
                    flags,
                    data_ref,
                },
            );
        }
        // SAFETY: `raw` is non-null and starts with a BlockPrefix whose use
        // count is 1, which the MemBlock now owns.
        let block = unsafe { MemBlock::from_raw(NonNull::new_unchecked(raw).cast()) };
        Array { block }
    }

    /// A new `N * var * dtype` array with the rows of `src` (`N * var * T`,
    /// T one element of `dtype`'s size): it shares `src`'s row descriptors
    /// (and holds `src`'s data alive), and its values are a new buffer of
    /// `total` elements laid out as `src`'s values from `first` on — the var
    /// dim's arrmeta offset maps each row's `begin` into the new buffer
    /// (DESIGN §4: an element lies at `begin + offset + i * stride`), as
    /// awkward-array shares the offsets of an elementwise result. Returns
    /// the array and the new buffer's start, whose `total` elements the
    /// caller writes before reading the array.
    ///
    /// Errors: `Type` when `src` is not `N * var * T` of `dtype`'s size.
    ///
    /// # Safety
    /// 1. Every row of `src` has a non-null `begin`, and its elements lie in
    ///    the `total` elements of `dtype.data_size()` bytes from `first`.
    pub(crate) unsafe fn with_rows_of(
        src: &Array,
        dtype: &Type,
        first: *const u8,
        total: usize,
    ) -> Result<(Array, *mut u8)> {
        let (TypeKind::FixedDim { size: n, elem }, esize) = (src.tp().kind(), dtype.data_size())
        else {
            return Err(Error::type_error(format!(
                "{} has no var rows to share",
                src.tp()
            )));
        };
        if !matches!(elem.kind(), TypeKind::VarDim { elem } if elem.data_size() == esize && !elem.is_dim())
            || dtype.arrmeta_size() != 0
        {
            return Err(Error::type_error(format!(
                "the rows of {} cannot hold {dtype} values",
                src.tp()
            )));
        }
        // SAFETY: `N * var * T` arrmeta: the fixed dim's, then the var dim's.
        let (fm, vm): (FixedDimMeta, VarDimMeta) = unsafe {
            let m = src.arrmeta_ptr();
            (
                arrmeta::read(m),
                arrmeta::read(m.add(size_of::<FixedDimMeta>())),
            )
        };
        let bytes = total
            .checked_mul(esize)
            .ok_or_else(|| Error::alloc(format!("{total} elements of {dtype} are too large")))?;
        let values = MemBlock::new_pod_allocator(0);
        let base = values
            .pod_allocator()
            .ok_or_else(|| Error::alloc("a POD allocator block without an allocator"))?
            .allocate_for_overwrite(bytes, dtype.data_alignment())?;
        let tp = Type::fixed_dim(*n, Type::var_dim(dtype.clone()));
        let var = VarDimMeta {
            blockref: values.into_raw().as_ptr(),
            stride: esize as isize,
            // begin + offset was `first` + k elements in src; it is `base` +
            // k elements here.
            offset: vm
                .offset
                .wrapping_add((base as isize).wrapping_sub(first as isize)),
        };
        // SAFETY: (1) the data is src's row descriptors, laid out as the
        // fixed dim `fm` says and kept alive by src's data reference; the
        // arrmeta written is the fixed dim's and the var dim's, whose
        // blockref is the owned reference to the new values (dtype has no
        // arrmeta).
        let out = unsafe {
            Array::from_parts(
                tp,
                src.data_ptr(),
                src.data_ref().clone(),
                flags::READ | flags::WRITE,
                |m| {
                    arrmeta::write(m, fm);
                    arrmeta::write(m.add(size_of::<FixedDimMeta>()), var);
                },
            )
        };
        Ok((out, base))
    }

    fn preamble(&self) -> &ArrayBlock {
        // SAFETY: an Array's block is always an ArrayBlock (from_parts is
        // the only constructor), alive while `self` holds its reference.
        unsafe { self.block.as_ptr().cast::<ArrayBlock>().as_ref() }
    }

    /// An array of type `tp` with the default layout (C order), its data
    /// zero-filled: numbers are 0, strings and var dims empty, pointers null.
    pub fn empty(tp: impl TypeArg) -> Result<Array> {
        Array::new_default(tp.into_type()?, true)
    }

    /// An array of type `tp` whose data the caller overwrites in full
    /// before reading it: for plain types (no strings, var dims or
    /// pointers) the bytes are zero or those of a freed array — never
    /// uninitialized memory — which spares a large output the zeroing and
    /// page faults of fresh memory. Other types get [`Array::empty`]'s
    /// zeroed data, which their arrmeta needs.
    pub fn empty_for_overwrite(tp: impl TypeArg) -> Result<Array> {
        Array::new_default(tp.into_type()?, false)
    }

    fn new_default(tp: Type, zero: bool) -> Result<Array> {
        tp.require_concrete("an array")?;
        let data_ref = if zero || tp.has_blockref() {
            MemBlock::new_fixed(tp.data_size(), tp.data_alignment())?
        } else {
            MemBlock::new_fixed_for_overwrite(tp.data_size(), tp.data_alignment())?
        };
        let (data, _) = data_ref
            .fixed_data()
            .ok_or_else(|| Error::alloc("fixed data block has no data"))?;
        let t2 = tp.clone();
        // SAFETY: (1) the zeroed data is a valid default value of any
        // concrete type with default arrmeta; (2) construct_default fills
        // the zeroed arrmeta.
        Ok(unsafe {
            Array::from_parts(tp, data, data_ref, flags::READ | flags::WRITE, |meta| {
                arrmeta::construct_default(&t2, meta)
            })
        })
    }

    /// Parses `json` as an array of type `tp` (datashape text or a
    /// [`Type`]). See the [`json`](self#json) conventions.
    pub fn from_json(tp: impl TypeArg, json: &str) -> Result<Array> {
        let a = Array::empty(tp)?;
        json::parse_str_into(&a, json)?;
        Ok(a)
    }

    /// Like [`Array::from_json`], for bytes (which must be utf-8).
    pub fn from_json_bytes(tp: impl TypeArg, json: &[u8]) -> Result<Array> {
        let a = Array::empty(tp)?;
        json::parse_into(&a, json)?;
        Ok(a)
    }

    /// Parses `json` into this array's existing data (in place).
    pub fn assign_json(&self, json: &str) -> Result<()> {
        self.check_writable()?;
        self.check_host("assign_json")?;
        json::parse_str_into(self, json)
    }

    /// The array as compact JSON (DESIGN §8). A device array is copied to
    /// the host first; when that fails (no runtime for its device), the
    /// text is `<TYPE on DEVICE: why>`, which is not JSON.
    pub fn to_json(&self) -> String {
        match self.on_host_for_reading() {
            Ok(a) => json::to_json(&a, false),
            Err(why) => why,
        }
    }

    /// `self` on the host (copied there when it is a device array), or the
    /// text saying why it cannot be: what display and JSON show instead.
    pub(crate) fn on_host_for_reading(&self) -> std::result::Result<Array, String> {
        if self.device().is_cpu() {
            return Ok(self.clone());
        }
        self.to_host()
            .map_err(|e| format!("<{} on {}: {}>", self.tp(), self.device(), e.message()))
    }

    /// The array's type.
    pub fn tp(&self) -> &Type {
        &self.preamble().tp
    }

    /// Pointer to the array's data.
    pub fn data_ptr(&self) -> *mut u8 {
        self.preamble().data
    }

    /// Pointer to the arrmeta (`tp().arrmeta_size()` bytes).
    pub fn arrmeta_ptr(&self) -> *const u8 {
        // SAFETY: the arrmeta directly follows the preamble in the block.
        unsafe { (self.block.as_ptr().as_ptr() as *const u8).add(PREAMBLE_SIZE) }
    }

    /// The block that owns the data.
    pub fn data_ref(&self) -> &MemBlock {
        &self.preamble().data_ref
    }

    /// The array's own memory block (kind `Array`).
    pub fn memblock(&self) -> &MemBlock {
        &self.block
    }

    /// The array whose own memory block is `block` — the way back from
    /// [`Array::memblock`], for the C ABI, where an array *is* its block.
    /// Gives the block back when it is not an array block.
    pub fn from_memblock(block: MemBlock) -> std::result::Result<Array, MemBlock> {
        // SAFETY: a MemBlock's reference keeps its block alive.
        let kind = unsafe { block.as_ptr().as_ref() }.kind;
        // Only `from_parts` makes blocks of kind Array, always as an
        // ArrayBlock, which is what `preamble` relies on.
        if kind == MemoryBlockKind::Array as u32 {
            Ok(Array { block })
        } else {
            Err(block)
        }
    }

    /// The access flags ([`flags`]).
    pub fn flags(&self) -> u64 {
        self.preamble().flags
    }

    /// `true` when the data may be written through this array.
    pub fn is_writable(&self) -> bool {
        self.flags() & flags::WRITE != 0
    }

    /// An error unless the array is writable.
    pub fn check_writable(&self) -> Result<()> {
        if self.is_writable() {
            Ok(())
        } else {
            Err(Error::invalid_argument(format!(
                "array of type {} is read-only",
                self.tp()
            )))
        }
    }

    /// A view of the same data that cannot be written through.
    pub fn read_only(&self) -> Array {
        self.with_flags(self.flags() & !flags::WRITE)
    }

    /// This array, marked immutable: nobody may write its data again. Fails
    /// when other handles or views can still write it (the data block or
    /// this array is shared).
    pub fn into_immutable(self) -> Result<Array> {
        if self.block.use_count() != 1 || self.data_ref().use_count() != 1 {
            return Err(Error::invalid_argument(
                "cannot make the array immutable: other arrays share its data",
            ));
        }
        Ok(self.with_flags(flags::READ | flags::IMMUTABLE))
    }

    fn with_flags(&self, flags: u64) -> Array {
        let tp = self.tp().clone();
        let src = self.arrmeta_ptr();
        let t2 = tp.clone();
        // SAFETY: same data, type and arrmeta (copied with new references).
        unsafe {
            Array::from_parts(tp, self.data_ptr(), self.data_ref().clone(), flags, |m| {
                arrmeta::copy(&t2, m, src)
            })
        }
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.tp().ndim()
    }

    /// The sizes of the leading dims; a var dim is `None` (unless it is the
    /// outermost dim of a host array, whose one element's size is known).
    pub fn shape(&self) -> Vec<Option<usize>> {
        index::shape(self)
    }

    /// Reads a 0-d array of exactly type `T` (`i32` for `int32`, ...).
    pub fn as_scalar<T: NativeType>(&self) -> Result<T> {
        scalar::check::<T>(self.tp())?;
        self.check_host("as_scalar")?;
        // SAFETY: the type is T's builtin, so the data holds one T.
        Ok(unsafe { T::load(self.data_ptr()) })
    }

    /// Writes a 0-d array of exactly type `T`.
    pub fn set_scalar<T: NativeType>(&self, value: T) -> Result<()> {
        scalar::check::<T>(self.tp())?;
        self.check_writable()?;
        self.check_host("set_scalar")?;
        // SAFETY: the type is T's builtin and the array is writable.
        unsafe { value.store(self.data_ptr()) };
        Ok(())
    }

    /// The string value of a 0-d `string` array.
    pub fn as_str(&self) -> Result<&str> {
        if !matches!(self.tp().kind(), crate::types::TypeKind::String) {
            return Err(Error::type_error(format!(
                "as_str needs a string array, got {}",
                self.tp()
            )));
        }
        // SAFETY: a string's data is {begin, end} over validated utf-8 in a
        // block kept alive by the arrmeta, which `self` keeps alive.
        unsafe {
            let s: StringData = arrmeta::read(self.data_ptr());
            let bytes = string_bytes(s);
            std::str::from_utf8(bytes)
                .map_err(|e| Error::parse(format!("string data is not valid utf-8: {e}")))
        }
    }

    /// A copy of the array with the default layout and its own data.
    pub fn copy(&self) -> Result<Array> {
        self.check_host("copy")?;
        if !self.tp().has_blockref() && self.c_contiguous_parts().is_some() {
            let bytes = self.tp().data_size();
            // Plain data in C order: one memcpy into memory that needs no
            // zeroing first.
            let dst = Array::empty_for_overwrite(self.tp().clone())?;
            // SAFETY: both arrays hold `bytes` contiguous bytes of the same
            // plain type in default layout; `dst` is fresh, so they do not
            // overlap.
            unsafe { std::ptr::copy_nonoverlapping(self.data_ptr(), dst.data_ptr(), bytes) };
            return Ok(dst);
        }
        if !self.tp().has_blockref() && self.tp().dtype().as_builtin().is_some() {
            // Plain numbers in another layout (strided, transposed): the
            // assignment kernel's loops, which write every element of the
            // output, so it needs no zeroing first.
            let dst = Array::empty_for_overwrite(self.tp().clone())?;
            dst.assign(self, crate::kernels::assign::ErrorMode::NoCheck)?;
            return Ok(dst);
        }
        let dst = Array::empty(self.tp().clone())?;
        copy::copy_value(&dst, self)?;
        Ok(dst)
    }

    /// The shape, element type and element arrmeta of the array when its
    /// fixed dims are in C order (size-1 dims with any stride) over a
    /// non-dim element, so its data is one run of `tp().data_size()` bytes;
    /// `None` for var dims or any other layout.
    pub(crate) fn c_contiguous_parts(
        &self,
    ) -> Option<(smallvec::SmallVec<[usize; 4]>, &Type, *const u8)> {
        let mut shape = smallvec::SmallVec::new();
        let mut strides: smallvec::SmallVec<[isize; 4]> = smallvec::SmallVec::new();
        let mut tp = self.tp();
        let mut meta = self.arrmeta_ptr();
        while let TypeKind::FixedDim { size, elem } = tp.kind() {
            // SAFETY: a fixed dim's arrmeta starts with its FixedDimMeta, and
            // the element's arrmeta follows (DESIGN §4).
            let m = unsafe { std::ptr::read_unaligned(meta as *const FixedDimMeta) };
            shape.push(*size);
            strides.push(m.stride);
            // SAFETY: a fixed dim's arrmeta starts with its FixedDimMeta, and the element's
            // arrmeta follows (DESIGN §4).
            meta = unsafe { meta.add(size_of::<FixedDimMeta>()) };
            tp = elem;
        }
        if tp.is_dim() {
            return None;
        }
        let mut expect = tp.data_size() as isize;
        for (&n, &s) in shape.iter().zip(&strides).rev() {
            if n != 1 && s != expect {
                return None;
            }
            expect = expect.checked_mul(n as isize)?;
        }
        Some((shape, tp, meta))
    }

    /// `true` when both arrays view data in the same memory block.
    pub fn shares_data_with(&self, other: &Array) -> bool {
        self.data_ref().ptr_eq(other.data_ref())
    }

    /// `true` when writing this array element by element while reading
    /// `other` could read elements already written: both view the same
    /// memory block, and not in the same layout (the same address, type
    /// and strides, where each element is read before it is written).
    /// Calls into an output and assignments read such an argument from a
    /// copy, so the result is as if every argument had been read first
    /// (NumPy's rule).
    ///
    /// ```
    /// use dynd::{Array, Index};
    /// let a = Array::from(vec![1i32, 2, 3, 4]);
    /// let tail = a.index(&[Index::slice(Some(1), None, 1)]).unwrap();
    /// let head = a.index(&[Index::slice(None, Some(3), 1)]).unwrap();
    /// assert!(tail.aliases(&head));
    /// assert!(!a.aliases(&a.clone()));
    /// assert!(!a.aliases(&Array::from(vec![1i32, 2, 3, 4])));
    /// ```
    pub fn aliases(&self, other: &Array) -> bool {
        if !self.shares_data_with(other) {
            return false;
        }
        if self.data_ptr() != other.data_ptr() || self.tp() != other.tp() {
            return true;
        }
        match (self.strided_layout(), other.strided_layout()) {
            (Ok((s, st, _)), Ok((t, tt, _))) => s != t || st != tt,
            // Not strided (var dims): the same address and type is the
            // same array only when the arrmeta is the same.
            _ => self.arrmeta_ptr() != other.arrmeta_ptr(),
        }
    }
}

/// Something that names a type: a [`Type`] or datashape text.
pub trait TypeArg {
    /// The type (parsing text).
    fn into_type(self) -> Result<Type>;
}
impl TypeArg for Type {
    fn into_type(self) -> Result<Type> {
        Ok(self)
    }
}
impl TypeArg for &Type {
    fn into_type(self) -> Result<Type> {
        Ok(self.clone())
    }
}
impl TypeArg for &str {
    fn into_type(self) -> Result<Type> {
        Type::parse(self)
    }
}
impl TypeArg for crate::types::BuiltinType {
    fn into_type(self) -> Result<Type> {
        Ok(Type::builtin(self))
    }
}

impl fmt::Display for Array {
    /// The readable repr: `array([[1, 2], [3]], type="2 * var * int32")`,
    /// summarised NumPy's way when the array is big (see [`display`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.display(), f)
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests;
