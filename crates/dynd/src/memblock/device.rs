//! Device blocks (DESIGN §14): memory on an accelerator, owned by the
//! device runtime or by a foreign producer (DLPack, the CUDA array
//! interface), released by a callback exactly once when the last reference
//! goes. The host never reads or writes these bytes: the block only says
//! which device they live on, so that every host path can refuse them (or
//! copy through the device, see [`crate::exec::Device`]).

use super::{
    BlockPrefix, BlockStruct, BlockVTable, MemBlock, MemoryBlockHeader, MemoryBlockKind, block_as,
    boxed_block,
};
use std::fmt;
use std::ptr::NonNull;

/// Where an array's data lives: [`crate::Array::device`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceId {
    /// Host memory, readable by the CPU.
    Cpu,
    /// The memory of CUDA device `ordinal`.
    Cuda(u32),
}

impl DeviceId {
    /// `true` for host memory.
    pub fn is_cpu(self) -> bool {
        self == DeviceId::Cpu
    }

    /// Parses `"cpu"`, `"cuda"` (device 0) or `"cuda:N"`.
    ///
    /// # Errors
    /// `invalid_argument` naming the text for anything else.
    pub fn parse(text: &str) -> crate::error::Result<DeviceId> {
        let bad = || {
            crate::error::Error::invalid_argument(format!(
                "unknown device {text:?}: expected \"cpu\", \"cuda\" or \"cuda:N\""
            ))
        };
        match text.trim() {
            "cpu" => Ok(DeviceId::Cpu),
            "cuda" => Ok(DeviceId::Cuda(0)),
            t => {
                let n = t.strip_prefix("cuda:").ok_or_else(bad)?;
                n.parse::<u32>().map(DeviceId::Cuda).map_err(|_| bad())
            }
        }
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceId::Cpu => f.write_str("cpu"),
            DeviceId::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

#[repr(C)]
struct DeviceBlock {
    prefix: BlockPrefix,
    device: DeviceId,
    /// The bytes the block holds (address, length), when a runtime
    /// allocated them (foreign blocks do not say).
    span: Option<(usize, usize)>,
    release: Option<Box<dyn FnOnce() + Send>>,
}

// SAFETY: `#[repr(C)]` with its BlockPrefix first, made with this kind by
// `new` below; the only struct of kind Device.
unsafe impl BlockStruct for DeviceBlock {
    const KIND: MemoryBlockKind = MemoryBlockKind::Device;
}

static DEVICE_VTABLE: BlockVTable = BlockVTable { free: free_device };

/// # Safety
/// See [`BlockVTable::free`].
unsafe fn free_device(block: NonNull<MemoryBlockHeader>) {
    // SAFETY: made by `new` as a Box<DeviceBlock>; ours alone now.
    let block = unsafe { Box::from_raw(block.cast::<DeviceBlock>().as_ptr()) };
    if let Some(release) = block.release {
        release();
    }
}

pub(super) fn new(
    device: DeviceId,
    span: Option<(usize, usize)>,
    release: Box<dyn FnOnce() + Send>,
) -> MemBlock {
    boxed_block(Box::new(DeviceBlock {
        prefix: BlockPrefix::new(MemoryBlockKind::Device, &DEVICE_VTABLE),
        device,
        span,
        release: Some(release),
    }))
}

pub(super) fn device_of(block: &MemBlock) -> DeviceId {
    block_as::<DeviceBlock>(block).map_or(DeviceId::Cpu, |b| b.device)
}

pub(super) fn span_of(block: &MemBlock) -> Option<(usize, usize)> {
    block_as::<DeviceBlock>(block).and_then(|b| b.span)
}
