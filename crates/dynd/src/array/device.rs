//! Arrays on a device (DESIGN §14): where an array's data lives, the
//! copies between the host and a device, arrays over foreign device
//! memory, and the check every host path makes before it reads data.
//!
//! A device array is an ordinary [`Array`]: its type and arrmeta are on the
//! host as always, and its data pointer is a device address inside a
//! memory block of kind `Device`. Only fixed dims of fixed-size plain
//! elements (numbers, bool, their option types) live on a device so far;
//! views of one (slices, negative steps, permutes) stay views, on the
//! device. The host never dereferences a device address: functions that
//! read data refuse a device array with an `InvalidArgument` error naming
//! the device, except [`Array::to_json`] and display, which copy it to the
//! host first.

use super::Array;
use super::external::{byte_span, c_strides, from_external_block};
use crate::error::{Error, Result};
use crate::exec;
use crate::kernels::assign::ErrorMode;
use crate::memblock::{DeviceId, MemBlock};
use crate::types::Type;
use std::sync::{Arc, RwLock};

/// What a device runtime does with assignments on its arrays
/// ([`Array::assign`] and [`Array::cast`] of device arrays).
pub trait DeviceAssign: Send + Sync {
    /// Assigns `src` (an array on `dst`'s device, or a 0-d host scalar)
    /// into `dst`, converting under `mode` and broadcasting as the host
    /// does.
    ///
    /// # Errors
    /// The host's errors for the same values (naming the first failing
    /// element's index); `Type` for types the device does not convert.
    fn assign(&self, dst: &Array, src: &Array, mode: ErrorMode) -> Result<()>;

    /// `ix` (an integer or a slice) applied within each row of var level
    /// `level` of `rows`, an array `[fixed dims] * var * E` (`?var * E`
    /// too) or `[fixed dims] * var * var * E` on this runtime's device
    /// (level 0 is the var dim after the fixed dims; `axis` is its axis in
    /// the array the user indexed, for messages): an integer drops the
    /// dim (`[fixed dims] * E` of a ragged array, a new array); a slice
    /// keeps it, new descriptors over `rows`' values (a view of them, as
    /// on the host).
    ///
    /// # Errors
    /// The host's errors (an integer out of range of a row is an `Index`
    /// error naming the row); `Type` when the runtime cannot index these
    /// rows (the default: it indexes none).
    fn index_rows(
        &self,
        rows: &Array,
        level: usize,
        ix: crate::Index,
        axis: usize,
    ) -> Result<Array> {
        let _ = (level, ix, axis);
        Err(Error::type_error(format!(
            "indexing into the rows of a {} array on {} is not supported by its runtime; copy it \
             with to_host() first",
            rows.tp(),
            rows.device()
        )))
    }

    /// The array of type `tp` (`[fixed dims] * ?var * E`) on the device of
    /// `rows` (`[fixed dims] * var * E`) and `present` (`[fixed dims] *
    /// bool`): [`Array::from_option_rows`] there. The default refuses.
    ///
    /// # Errors
    /// `Type` when the runtime cannot; the runtime's errors.
    fn assemble_option_rows(&self, tp: &Type, rows: &Array, present: &Array) -> Result<Array> {
        let _ = present;
        Err(Error::type_error(format!(
            "{tp} cannot be assembled on {} by its runtime",
            rows.device()
        )))
    }
}

static ASSIGN: RwLock<Option<Arc<dyn DeviceAssign>>> = RwLock::new(None);

/// Makes `assign` the runtime of assignments on device arrays, for the
/// rest of the process (replacing the one before).
pub fn register_assign(assign: Arc<dyn DeviceAssign>) {
    *ASSIGN.write().unwrap_or_else(|e| e.into_inner()) = Some(assign);
}

/// [`DeviceAssign::assemble_option_rows`] of the registered runtime.
///
/// # Errors
/// `External` when no runtime is registered; the runtime's errors.
pub(super) fn assemble_option_rows(tp: &Type, rows: &Array, present: &Array) -> Result<Array> {
    let runtime = ASSIGN.read().unwrap_or_else(|e| e.into_inner()).clone();
    match runtime {
        Some(r) => r.assemble_option_rows(tp, rows, present),
        None => Err(Error::external(format!(
            "{tp} on {} needs a device runtime, and none is loaded",
            rows.device()
        ))),
    }
}

/// Assigns on a device: `dst` or `src` is a device array. Both must be on
/// one device, or `src` a 0-d host scalar.
///
/// # Errors
/// `InvalidArgument` naming both places when they differ; `External`
/// without a device runtime; the runtime's errors.
pub(super) fn assign(dst: &Array, src: &Array, mode: ErrorMode) -> Result<()> {
    let (to, from) = (dst.device(), src.device());
    let host_scalar = from.is_cpu() && src.ndim() == 0;
    if to != from && !host_scalar {
        return Err(Error::invalid_argument(format!(
            "assign: the destination ({}) is on {to} and the source ({}) on {from}; nothing \
             moves implicitly: copy with to_device / to_host",
            dst.tp(),
            src.tp()
        )));
    }
    let runtime = ASSIGN.read().unwrap_or_else(|e| e.into_inner()).clone();
    match runtime {
        Some(r) => r.assign(dst, src, mode),
        None => Err(Error::external(format!(
            "assign on {to} arrays needs a device runtime, and none is loaded \
             (dynd_cuda::install() in Rust; `import dynd` loads it in Python when a CUDA \
             driver and device are present)"
        ))),
    }
}

/// `ix` within each row of the ragged device array `head`, whose var dim
/// follows `kept` dims (axis `axis` of the array indexed): the result and
/// how many of its dims the rest of an index expression starts after, as
/// the host's row-by-row indexing returns them.
///
/// # Errors
/// `Index` for a zero slice step; `External` without a device runtime;
/// the runtime's errors.
pub(super) fn index_rows(
    head: &Array,
    kept: usize,
    ix: crate::Index,
    axis: usize,
) -> Result<(Array, usize)> {
    let slice = match ix {
        crate::Index::Slice { step: 0, .. } => {
            return Err(Error::index(format!(
                "slice step cannot be zero (axis {axis})"
            )));
        }
        crate::Index::Slice { .. } => true,
        _ => false,
    };
    let runtime = ASSIGN.read().unwrap_or_else(|e| e.into_inner()).clone();
    let Some(r) = runtime else {
        return Err(Error::external(format!(
            "indexing into the var dim (axis {axis}) of a {} array on {} needs a device runtime, \
             and none is loaded",
            head.tp(),
            head.device()
        )));
    };
    // The var level indexed: the dims kept before it, less the fixed dims
    // at the head of `head`.
    let mut fixed = 0;
    let mut t = head.tp();
    while let crate::types::TypeKind::FixedDim { elem, .. } = t.kind() {
        fixed += 1;
        t = elem;
    }
    let out = r.index_rows(head, kept.saturating_sub(fixed), ix, axis)?;
    if slice {
        // The rows reach head's elements: no more writable than head.
        Ok((out.with_flags(head.flags()), kept + 1))
    } else {
        Ok((out, kept))
    }
}

impl Array {
    /// Where the array's data lives: [`DeviceId::Cpu`], or the device of
    /// its data block.
    ///
    /// ```
    /// use dynd::{Array, memblock::DeviceId};
    /// assert_eq!(Array::from(vec![1i32, 2]).device(), DeviceId::Cpu);
    /// ```
    pub fn device(&self) -> DeviceId {
        self.data_ref().device()
    }

    /// `Ok` when the data is host memory; for a device array, the
    /// `InvalidArgument` error of `what`, which reads data on the host: the
    /// check every host path that reads data makes first (Arrow, ndarray and
    /// buffer-protocol exports included).
    ///
    /// # Errors
    /// `InvalidArgument` naming `what`, the type and the device.
    pub fn check_host(&self, what: &str) -> Result<()> {
        match self.device() {
            DeviceId::Cpu => Ok(()),
            dev => Err(Error::invalid_argument(format!(
                "{what} reads data on the host, but this {} array is on {dev}; copy it to the \
                 host first (Array::to_host, or a.cpu() in Python)",
                self.tp()
            ))),
        }
    }

    /// An array of `shape` elements of `tp` over memory on `device` that
    /// someone else owns (DLPack, the CUDA array interface): for
    /// [`DeviceId::Cpu`] exactly [`Array::from_external`], for a device an
    /// array whose data block records the device, so the host never reads
    /// it. `owner` is called once, when the last array or view over the
    /// data is dropped — also when this call fails. `data` is the address
    /// of element `[0, 0, …]`; `strides` are in bytes.
    ///
    /// # Errors
    /// As [`Array::from_external`]'s.
    ///
    /// # Safety
    /// 1. For every index in the shape, the `tp.data_size()` bytes at
    ///    `data + Σ i[k] * strides[k]` are memory of `device` holding a valid
    ///    value of `tp`, for as long as `owner` has not been called.
    /// 2. When `writable` is true, those bytes may be written (by the
    ///    device, for device memory), and nothing else uses them meanwhile.
    pub unsafe fn from_foreign(
        device: DeviceId,
        tp: Type,
        data: *mut u8,
        shape: &[usize],
        strides: &[isize],
        owner: impl FnOnce() + Send + 'static,
        writable: bool,
    ) -> Result<Array> {
        let block = match device {
            DeviceId::Cpu => MemBlock::new_external(owner),
            _ => MemBlock::new_device(device, owner),
        };
        // SAFETY: (1) and (2) are from_external_block's, with the block as
        // the owner; a device block records the device, so no host path
        // reads the data.
        unsafe { from_external_block(tp, data, shape, strides, block, writable) }
    }

    /// The array in host memory: `self` when it is there already, otherwise
    /// a copy with the same shape and strides (the bytes the array spans,
    /// copied in one transfer by the device's runtime).
    ///
    /// # Errors
    /// `External` when no runtime is loaded for the array's device or the
    /// copy fails.
    pub fn to_host(&self) -> Result<Array> {
        let dev = self.device();
        if dev.is_cpu() {
            return Ok(self.clone());
        }
        let runtime = exec::device(dev)?;
        if let Some(a) = self.nested_to_host(&*runtime)? {
            return Ok(a);
        }
        if let Some(a) = self.records_to_host(&*runtime)? {
            return Ok(a);
        }
        if let Some(a) = self.var_to_host(&*runtime)? {
            return Ok(a);
        }
        let (shape, strides, elem) = self.strided_layout()?;
        let elem = elem.clone();
        let block = MemBlock::new_fixed_for_overwrite(1, 64)?;
        if shape.contains(&0) {
            let host = block.fixed_data().map_or(std::ptr::null_mut(), |(p, _)| p);
            // SAFETY: an empty array never reaches its data.
            return unsafe { from_external_block(elem, host, &shape, &strides, block, true) };
        }
        let (lo, hi) = byte_span(&elem, &shape, &strides)?;
        let bytes = (hi - lo) as usize;
        let block = MemBlock::new_fixed_for_overwrite(bytes, elem.data_alignment().max(64))?;
        let (host, _) = block
            .fixed_data()
            .ok_or_else(|| Error::external("a fixed block without data"))?;
        // SAFETY: `host` is a fresh buffer of `bytes` bytes that only this
        // function references yet.
        let dst = unsafe { std::slice::from_raw_parts_mut(host, bytes) };
        // SAFETY: (1) the array's elements span [data + lo, data + hi) on
        // its device (the array's invariant, checked when it was made), kept
        // alive by `self` for the call.
        unsafe { runtime.copy_to_host(dst, self.data_ptr().wrapping_offset(lo))? };
        let first = host.wrapping_offset(-lo);
        // SAFETY: (1) the host buffer holds the same bytes at the same
        // offsets from `first` as the device held from the data pointer, and
        // `block` keeps it alive; (2) the copy is ours alone.
        unsafe { from_external_block(elem, first, &shape, &strides, block, true) }
    }

    /// The array on `device`: `self` when it is there already, otherwise a
    /// C-contiguous copy (through the host when both ends are devices).
    ///
    /// # Errors
    /// - `Type`: the type cannot live on a device yet (var dims, strings and
    ///   other types that hold memory block references).
    /// - `External`: no runtime is loaded for `device` (the message says
    ///   how to load one), or the allocation or copy fails.
    pub fn to_device(&self, device: DeviceId) -> Result<Array> {
        let here = self.device();
        if here == device {
            return Ok(self.clone());
        }
        if device.is_cpu() {
            return self.to_host();
        }
        if !here.is_cpu() {
            return self.to_host()?.to_device(device);
        }
        if let Some(a) = self.nested_to_device(device)? {
            return Ok(a);
        }
        if let Some(a) = self.records_to_device(device)? {
            return Ok(a);
        }
        if let Some(a) = self.var_to_device(device)? {
            return Ok(a);
        }
        let runtime = exec::device(device)?;
        let (shape, _, elem) = self.strided_layout()?;
        let elem = elem.clone();
        if elem.has_blockref() {
            return Err(Error::type_error(format!(
                "{} cannot live on a device yet: its elements refer to memory blocks \
                 (strings, var dims, pointers); only fixed dims of fixed-size elements can",
                self.tp()
            )));
        }
        let host = self.contiguous()?;
        let size = elem.data_size();
        let n: usize = shape.iter().product();
        let bytes = n * size;
        let strides = c_strides(&shape, size)?;
        let (block, ptr) = runtime.alloc(bytes.max(1))?;
        if bytes > 0 {
            // SAFETY: `host` is C-contiguous host memory of n elements of
            // `size` bytes, kept alive by `host` for the borrow.
            let src = unsafe { std::slice::from_raw_parts(host.data_ptr(), bytes) };
            // SAFETY: (1) `ptr` is a fresh device allocation of at least
            // `bytes` bytes, kept alive by `block`.
            unsafe { runtime.copy_to_device(ptr, src)? };
        }
        // SAFETY: (1) the device buffer holds the n elements in C order
        // from `ptr`, kept alive by `block`; (2) it is ours alone.
        unsafe { from_external_block(elem, ptr, &shape, &strides, block, true) }
    }

    /// A new C-contiguous array of type `tp` on `device`, its data
    /// uninitialised (device memory is never read by the host; a device
    /// runtime writes every element before anyone reads it).
    ///
    /// # Errors
    /// `Type` for a type that cannot live on a device (symbolic, var dims,
    /// strings); `External` without a runtime for `device` or when the
    /// allocation fails; `InvalidArgument` for [`DeviceId::Cpu`].
    pub fn empty_on(device: DeviceId, tp: impl super::TypeArg) -> Result<Array> {
        let tp: Type = tp.into_type()?;
        if device.is_cpu() {
            return Err(Error::invalid_argument(
                "empty_on was given the cpu; host arrays come from Array::empty",
            ));
        }
        let mut shape = Vec::new();
        let mut elem = &tp;
        while let crate::types::TypeKind::FixedDim { size, elem: e } = elem.kind() {
            shape.push(*size);
            elem = e;
        }
        let elem = elem.clone();
        if elem.is_dim() || elem.has_blockref() {
            return Err(Error::type_error(format!(
                "{tp} cannot live on a device yet: only fixed dims of fixed-size elements can"
            )));
        }
        elem.require_concrete("an array on a device")?;
        let runtime = exec::device(device)?;
        let strides = c_strides(&shape, elem.data_size())?;
        let bytes = shape
            .iter()
            .try_fold(elem.data_size(), |acc, &n| acc.checked_mul(n))
            .ok_or_else(|| Error::invalid_argument(format!("{tp} has too many bytes")))?;
        let (block, ptr) = runtime.alloc(bytes.max(1))?;
        // SAFETY: (1) a fresh device allocation of `bytes` bytes laid out
        // in C order, kept alive by `block`; the host never reads it;
        // (2) it is ours alone.
        unsafe { from_external_block(elem, ptr, &shape, &strides, block, true) }
    }

    /// `self` when its data is C-contiguous, else a C-contiguous copy.
    pub(super) fn contiguous(&self) -> Result<Array> {
        if self.c_contiguous_parts().is_some() {
            Ok(self.clone())
        } else {
            self.copy()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Index;
    use crate::exec::testing::HostBackedDevice;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn device_ids_parse_and_print() {
        assert_eq!(DeviceId::parse("cpu").unwrap(), DeviceId::Cpu);
        assert_eq!(DeviceId::parse("cuda").unwrap(), DeviceId::Cuda(0));
        assert_eq!(DeviceId::parse("cuda:3").unwrap(), DeviceId::Cuda(3));
        assert_eq!(DeviceId::Cuda(3).to_string(), "cuda:3");
        for bad in ["gpu", "cuda:", "cuda:-1", "cuda:x", ""] {
            let e = DeviceId::parse(bad).unwrap_err();
            assert!(e.message().contains("unknown device"), "{bad}: {e}");
        }
    }

    #[test]
    fn round_trips_through_a_device_keep_values_and_views() {
        let dev = HostBackedDevice::install(11);
        let a = Array::from_json("2 * 3 * ?int32", "[[1,null,3],[4,5,6]]").unwrap();
        let d = a.to_device(DeviceId::Cuda(11)).unwrap();
        assert_eq!(d.device(), DeviceId::Cuda(11));
        assert_eq!(
            d.data_ref().kind(),
            crate::memblock::MemoryBlockKind::Device
        );
        assert_eq!(dev.to_device.load(Ordering::SeqCst), 1);
        // A view of a device array stays on the device, and copies back
        // with its own layout.
        let v = d
            .index(&[Index::slice(None, None, -1), Index::slice(None, None, 2)])
            .unwrap();
        assert_eq!(v.device(), DeviceId::Cuda(11));
        assert_eq!(v.to_host().unwrap().to_json(), "[[4,6],[1,3]]");
        assert_eq!(d.to_json(), "[[1,null,3],[4,5,6]]");
        // Already there: no copy.
        let again = d.to_device(DeviceId::Cuda(11)).unwrap();
        assert!(again.data_ref().ptr_eq(d.data_ref()));
        assert_eq!(dev.to_device.load(Ordering::SeqCst), 1);
        // Empty arrays travel too.
        let e = Array::from_json("0 * float64", "[]").unwrap();
        let de = e.to_device(DeviceId::Cuda(11)).unwrap();
        assert_eq!(de.to_host().unwrap().to_json(), "[]");
    }

    #[test]
    fn host_paths_refuse_device_data() {
        let _dev = HostBackedDevice::install(12);
        let d = Array::from(vec![1.5f64, 2.5])
            .to_device(DeviceId::Cuda(12))
            .unwrap();
        let msg = |e: Error| {
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
            assert!(e.message().contains("cuda:12"), "{e}");
            e.message().to_string()
        };
        msg(d.to_vec::<f64>().unwrap_err());
        msg(d.as_slice::<f64>().unwrap_err());
        msg(d.copy().unwrap_err());
        msg(d.assign_json("[1, 2]").unwrap_err());
        // A cast of a device array is the device's (no runtime here).
        let e = d
            .cast("2 * float32", crate::kernels::assign::ErrorMode::Default)
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::External, "{e}");
        assert!(e.message().contains("needs a device runtime"), "{e}");
        // Host and device arrays do not mix.
        let host = Array::from(vec![0.0f64, 0.0]);
        msg(host
            .assign(&d, crate::kernels::assign::ErrorMode::Default)
            .unwrap_err());
        msg(d
            .assign(&host, crate::kernels::assign::ErrorMode::Default)
            .unwrap_err());
        let s = d.index(&[Index::At(0)]).unwrap();
        msg(s.as_scalar::<f64>().unwrap_err());
        msg(s.set_scalar(1.0f64).unwrap_err());
        assert_eq!(
            format!("{d}"),
            r#"array([1.5, 2.5], type="2 * float64", device="cuda:12")"#
        );
    }

    #[test]
    fn strings_stay_on_the_host() {
        let _dev = HostBackedDevice::install(13);
        for (tp, json) in [
            ("2 * string", r#"["a","b"]"#),
            ("2 * var * string", r#"[["a"],[]]"#),
            ("2 * var * 2 * var * int8", "[[[[1],[]]],[]]"),
        ] {
            let a = Array::from_json(tp, json).unwrap();
            let e = a.to_device(DeviceId::Cuda(13)).unwrap_err();
            assert!(matches!(e.kind(), crate::ErrorKind::Type), "{tp}: {e}");
        }
    }

    #[test]
    fn nested_ragged_arrays_round_trip_through_a_device() {
        let dev = HostBackedDevice::install(15);
        let on = DeviceId::Cuda(15);
        for (tp, json) in [
            ("2 * var * var * int32", "[[[1]],[]]"),
            (
                "3 * var * var * ?float64",
                "[[[1.5,null],[]],[],[[2.5],[3.5,4.5,5.5]]]",
            ),
            ("var * var * var * int8", "[[[1,2],[]],[[3],[4,5]]]"),
            (
                "2 * 2 * var * var * uint16",
                "[[[[1]],[]],[[[],[2,3]],[[4]]]]",
            ),
        ] {
            let a = Array::from_json(tp, json).unwrap();
            let d = a.to_device(on).unwrap();
            assert_eq!(d.device(), on, "{tp}");
            assert_eq!(d.tp().to_string(), tp);
            assert_eq!(d.to_host().unwrap().to_json(), json, "{tp}");
            assert_eq!(
                d.nested_layout().unwrap().elem,
                a.nested_layout().unwrap().elem
            );
        }
        // Views: reversed outer rows, reversed and strided inner rows.
        let a = Array::from_json(
            "3 * var * var * int64",
            "[[[1,2],[3]],[],[[4],[5,6,7],[8]]]",
        )
        .unwrap();
        for ix in [
            vec![Index::slice(None, None, -1)],
            vec![Index::ALL, Index::slice(None, None, -1)],
            vec![Index::ALL, Index::slice(None, None, 2)],
        ] {
            let v = a.index(&ix).unwrap();
            let d = v.to_device(on).unwrap();
            assert_eq!(d.to_host().unwrap().to_json(), v.to_json(), "{ix:?}");
            // And back through a view of the device array.
            let back = d.index(&[Index::slice(None, None, -1)]).unwrap();
            let host = v.index(&[Index::slice(None, None, -1)]).unwrap();
            assert_eq!(back.to_host().unwrap().to_json(), host.to_json(), "{ix:?}");
        }
        // One copy per level each way: values, inner rows, outer rows.
        let before = dev.to_device.load(Ordering::SeqCst);
        let d = a.to_device(on).unwrap();
        assert_eq!(dev.to_device.load(Ordering::SeqCst) - before, 3);
        let before = dev.to_host.load(Ordering::SeqCst);
        d.to_host().unwrap();
        assert_eq!(dev.to_host.load(Ordering::SeqCst) - before, 3);
        // Not a nested layout: refused by name.
        let e = Array::from(vec![1i8]).nested_layout().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Type, "{e}");
    }

    #[test]
    fn records_with_var_fields_round_trip_through_a_device() {
        let dev = HostBackedDevice::install(16);
        let on = DeviceId::Cuda(16);
        let json = r#"[{"a":[1,2],"b":1.5},{"a":[],"b":2.5},{"a":[3],"b":null}]"#;
        let a = Array::from_json("3 * {a: var * int32, b: ?float64}", json).unwrap();
        let d = a.to_device(on).unwrap();
        assert_eq!(d.device(), on);
        assert_eq!(d.to_host().unwrap().to_json(), json);
        // One copy per var field and one for the records, each way.
        let before = dev.to_device.load(Ordering::SeqCst);
        let d = a.to_device(on).unwrap();
        assert_eq!(dev.to_device.load(Ordering::SeqCst) - before, 2);
        let before = dev.to_host.load(Ordering::SeqCst);
        d.to_host().unwrap();
        assert_eq!(dev.to_host.load(Ordering::SeqCst) - before, 2);
        // A field is a device view: the var field a ragged device array.
        let f = d.field("a").unwrap();
        assert_eq!(
            (f.device(), f.tp().to_string()),
            (on, "3 * var * int32".into())
        );
        assert_eq!(f.to_host().unwrap().to_json(), "[[1,2],[],[3]]");
        assert_eq!(d.field("b").unwrap().to_json(), "[1.5,2.5,null]");
        // Views of the records, several var fields, fixed dims.
        let two = Array::from_json(
            "2 * 2 * {x: var * int8, y: int16, z: var * ?float32}",
            r#"[[{"x":[1],"y":2,"z":[]},{"x":[],"y":3,"z":[null,1.5]}],[{"x":[4,5],"y":6,"z":[2]},{"x":[7],"y":8,"z":[]}]]"#,
        )
        .unwrap();
        for v in [
            two.clone(),
            two.index(&[Index::slice(None, None, -1), Index::slice(None, None, -1)])
                .unwrap(),
            two.permute(&[1, 0]).unwrap(),
        ] {
            let d = v.to_device(on).unwrap();
            assert_eq!(d.to_host().unwrap().to_json(), v.to_json());
            let back = d.index(&[Index::At(1)]).unwrap();
            assert_eq!(back.to_json(), v.index(&[Index::At(1)]).unwrap().to_json());
        }
    }

    #[test]
    fn ragged_arrays_round_trip_through_a_device() {
        let dev = HostBackedDevice::install(14);
        let on = DeviceId::Cuda(14);
        for (tp, json) in [
            ("4 * var * ?int32", "[[1,null,3],[],[4],[5,6,7,8]]"),
            ("2 * 2 * var * float64", "[[[1.5],[]],[[2.5,3.5],[4.5]]]"),
            ("var * int16", "[7,8,9]"),
            ("3 * var * bool", "[[],[],[]]"),
            ("0 * var * int8", "[]"),
        ] {
            let a = Array::from_json(tp, json).unwrap();
            let d = a.to_device(on).unwrap();
            assert_eq!(d.device(), on, "{tp}");
            assert_eq!(d.tp().to_string(), tp);
            assert_eq!(d.to_host().unwrap().to_json(), json, "{tp}");
            assert_eq!(d.to_json(), json, "{tp}");
            // Host paths refuse it.
            assert!(d.copy().is_err(), "{tp}");
        }
        // Rows out of order (a reversed view) are gathered; rows in order
        // are one copy of the values (plus the descriptors).
        let a = Array::from_json("3 * var * int64", "[[1,2],[3],[4,5,6]]").unwrap();
        let before = dev.to_device.load(Ordering::SeqCst);
        let d = a.to_device(on).unwrap();
        assert_eq!(dev.to_device.load(Ordering::SeqCst) - before, 2);
        let r = a.index(&[Index::slice(None, None, -1)]).unwrap();
        let dr = r.to_device(on).unwrap();
        assert_eq!(dr.to_json(), "[[4,5,6],[3],[1,2]]");
        // Back to the host: the descriptors in one copy (a reversed view's
        // too), then the values in one.
        for v in [&d, &dr.index(&[Index::slice(None, None, -1)]).unwrap()] {
            let before = dev.to_host.load(Ordering::SeqCst);
            assert_eq!(v.to_host().unwrap().to_json(), "[[1,2],[3],[4,5,6]]");
            assert_eq!(dev.to_host.load(Ordering::SeqCst) - before, 2);
        }
        // Picking within the rows is the device runtime's (none here: the
        // host never reads device descriptors).
        let e = d.index(&[Index::At(0), Index::At(1)]).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::External, "{e}");
        assert!(e.message().contains("needs a device runtime"), "{e}");
        let e = d
            .index(&[Index::ALL, Index::slice(None, None, 0)])
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Index, "{e}");
        // A top-level var dim's size is not read from the device.
        let top = Array::from_json("var * int8", "[1, 2]").unwrap();
        assert_eq!(top.shape(), vec![Some(2)]);
        assert_eq!(top.to_device(on).unwrap().shape(), vec![None]);
        // A view of a device ragged array copies back with its rows.
        let v = d.index(&[Index::slice(Some(1), None, 1)]).unwrap();
        assert_eq!(v.device(), on);
        assert_eq!(v.to_host().unwrap().to_json(), "[[3],[4,5,6]]");
        // The host copy is an ordinary ragged array: host paths read it.
        let h = d.to_host().unwrap();
        assert_eq!(h.copy().unwrap().to_json(), "[[1,2],[3],[4,5,6]]");
    }

    #[test]
    fn a_device_without_a_runtime_says_what_is_missing() {
        let a = Array::from(vec![1i32]);
        let e = a.to_device(DeviceId::Cuda(99)).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::External);
        assert!(e.message().contains("no runtime for cuda:99"), "{e}");
        // Foreign device memory: the owner runs once, the host never reads
        // the (bogus) address, and copying back says what is missing.
        let released = Arc::new(AtomicUsize::new(0));
        let r = released.clone();
        // SAFETY: the address is never dereferenced by the host; nothing
        // but the device runtime (absent here) would read it.
        let d = unsafe {
            Array::from_foreign(
                DeviceId::Cuda(99),
                Type::float64(),
                0x1000 as *mut u8,
                &[4],
                &[8],
                move || {
                    r.fetch_add(1, Ordering::SeqCst);
                },
                true,
            )
        }
        .unwrap();
        assert_eq!(d.device(), DeviceId::Cuda(99));
        assert_eq!(d.to_host().unwrap_err().kind(), crate::ErrorKind::External);
        assert!(d.to_vec::<f64>().is_err());
        let shown = d.to_json();
        assert!(shown.contains("cuda:99"), "{shown}");
        drop(d);
        assert_eq!(released.load(Ordering::SeqCst), 1);
        // On the cpu it is host memory, read as usual.
        let host = [1.5f64, 2.5];
        let r = released.clone();
        // SAFETY: `host` outlives the array (dropped below, first).
        let h = unsafe {
            Array::from_foreign(
                DeviceId::Cpu,
                Type::float64(),
                host.as_ptr() as *mut u8,
                &[2],
                &[8],
                move || {
                    r.fetch_add(1, Ordering::SeqCst);
                },
                false,
            )
        }
        .unwrap();
        assert_eq!(h.to_json(), "[1.5,2.5]");
        drop(h);
        assert_eq!(released.load(Ordering::SeqCst), 2);
    }
}
