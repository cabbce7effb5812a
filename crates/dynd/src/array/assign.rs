//! Assignment between arrays of any types: [`Array::assign`] and
//! [`Array::cast`], through the assignment kernels.

use super::Array;
use crate::error::Result;
use crate::kernels::assign::{ErrorMode, make_assignment_kernel};
use crate::kernels::{CKernelBuilder, KernelRequest};
use crate::types::Type;
use std::pin::pin;

impl Array {
    /// Assigns `src` into this array's data, converting each value under
    /// `mode` and broadcasting `src` to this array's shape (DESIGN §6). A
    /// `src` that aliases this array ([`Array::aliases`]: a reversed or
    /// shifted view of it) is read from a copy.
    ///
    /// On error the destination is partly written: elements before the
    /// failing one may hold new values (numeric loops work in chunks of 256
    /// and write none of the failing chunk); the failing element and those
    /// after it keep their old values, except that a large assignment split
    /// across threads (`dynd::exec`) may also have written elements that
    /// other threads reached past it. The error is the one a serial run
    /// reports.
    ///
    /// ```
    /// use dynd::{Array, kernels::assign::ErrorMode};
    /// let dst = Array::from_json("2 * 3 * int32", "[[0,0,0],[0,0,0]]").unwrap();
    /// let src = Array::from_json("2 * var * float64", "[[1,2,3],[4]]").unwrap();
    /// dst.assign(&src, ErrorMode::Default).unwrap();
    /// assert_eq!(dst.to_json(), "[[1,2,3],[4,4,4]]");
    /// ```
    ///
    /// On a device (DESIGN §14) the destination and the source must be on
    /// the same device (or the source a 0-d host scalar), and the device
    /// runtime assigns: the same values and errors.
    pub fn assign(&self, src: &Array, mode: ErrorMode) -> Result<()> {
        self.check_writable()?;
        if !self.device().is_cpu() || !src.device().is_cpu() {
            return super::device::assign(self, src, mode);
        }
        // A source aliasing the destination (the same memory in another
        // layout) is read from a copy: as if it were read before any write.
        let copy;
        let src = if self.aliases(src) {
            copy = src.copy()?;
            &copy
        } else {
            src
        };
        if let Some(r) = super::flat_assign::try_split_assign(self, src, mode) {
            return r;
        }
        if let Some(r) = super::flat_assign::try_flat_assign(self, src, mode) {
            return r;
        }
        let mut ckb = pin!(CKernelBuilder::new());
        // SAFETY: 0 is a free slot of a new builder; both arrmeta pointers
        // are valid for their arrays' types, which outlive the call.
        unsafe {
            make_assignment_kernel(
                ckb.as_mut(),
                0,
                self.tp(),
                self.arrmeta_ptr(),
                src.tp(),
                src.arrmeta_ptr(),
                KernelRequest::Single,
                mode,
            )?;
            // SAFETY: the kernel was built for Single, for these types and
            // arrmeta; the destination is writable.
            ckb.call_single(self.data_ptr(), &[src.data_ptr() as *const u8])
        }
    }

    /// A new array of type `tp` holding this array's values converted under
    /// `mode`; for a device array, a new array on its device.
    pub fn cast(&self, tp: impl super::TypeArg, mode: ErrorMode) -> Result<Array> {
        let tp: Type = tp.into_type()?;
        if !self.device().is_cpu() {
            let out = Array::empty_on(self.device(), tp)?;
            out.assign(self, mode)?;
            return Ok(out);
        }
        // Fixed dims of a builtin scalar: the assignment writes every
        // element (broadcasting repeats the source), so the new data needs
        // no zeroing — which for a large output is a whole extra pass. On
        // error the output is dropped unread.
        let out = if !tp.has_blockref() && tp.dtype().as_builtin().is_some() {
            Array::empty_for_overwrite(tp)?
        } else {
            Array::empty(tp)?
        };
        out.assign(self, mode)?;
        Ok(out)
    }
}
