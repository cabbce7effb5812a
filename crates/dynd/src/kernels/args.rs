//! What a kernel is built for: the destination's and each source's type and
//! arrmeta, and the request ([`KernelArgs`]).

use super::KernelRequest;
use crate::error::{Error, Result};
use crate::types::Type;

/// The operands a kernel is instantiated for: the destination's type and
/// arrmeta, each source's type and arrmeta (in order), and the request
/// (single or strided). Callables, the lifter and its leaves all take their
/// operands as one `KernelArgs`.
///
/// The arrmeta pointers are raw: whoever builds a kernel from a
/// `KernelArgs` promises (in that function's `# Safety`) that each points at
/// valid arrmeta of its type for as long as the built kernel runs.
///
/// ```
/// use dynd::Type;
/// use dynd::kernels::{KernelArgs, KernelRequest};
/// let (f64_tp, srcs) = (Type::float64(), [Type::float64(), Type::float64()]);
/// let metas = [std::ptr::null(); 2]; // scalars have no arrmeta
/// let args = KernelArgs::new(&f64_tp, std::ptr::null(), &srcs, &metas, KernelRequest::Strided);
/// assert_eq!(args.nsrc(), 2);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct KernelArgs<'a> {
    /// The destination's type.
    pub dst_tp: &'a Type,
    /// The destination's arrmeta.
    pub dst_meta: *const u8,
    /// Each source's type.
    pub src_tps: &'a [Type],
    /// Each source's arrmeta, parallel to `src_tps`.
    pub src_metas: &'a [*const u8],
    /// Which function the kernel provides.
    pub req: KernelRequest,
}

impl<'a> KernelArgs<'a> {
    /// The operands, in the ABI's order.
    pub fn new(
        dst_tp: &'a Type,
        dst_meta: *const u8,
        src_tps: &'a [Type],
        src_metas: &'a [*const u8],
        req: KernelRequest,
    ) -> KernelArgs<'a> {
        KernelArgs {
            dst_tp,
            dst_meta,
            src_tps,
            src_metas,
            req,
        }
    }

    /// The number of sources.
    pub fn nsrc(&self) -> usize {
        self.src_tps.len()
    }

    /// Checks that there is one arrmeta pointer per source type; the error
    /// names `name`, the callable or kernel being built.
    pub fn check_counts(&self, name: &str) -> Result<()> {
        if self.src_tps.len() == self.src_metas.len() {
            return Ok(());
        }
        Err(Error::invalid_argument(format!(
            "{name}: {} argument types but {} arrmeta pointers",
            self.src_tps.len(),
            self.src_metas.len()
        )))
    }

    /// The same operands for another request.
    pub fn with_req(self, req: KernelRequest) -> KernelArgs<'a> {
        KernelArgs { req, ..self }
    }
}
