//! cudarc memory as a display target's show reads it
//! ([`DisplayTarget::show_cudarc`](crate::display::DisplayTarget::show_cudarc)): its address and
//! size, with cudarc's read recorded once the copy is queued. Only the conversion: the show is
//! the display target's.

use super::memory::{CudarcSource, checked_bytes, record_after_copy};
use crate::context::Context;
use crate::error::Result;
use crate::memory::DevicePtr;
use cudarc::driver::{CudaStream, SyncOnDrop};
use std::sync::Arc;

/// cudarc memory read on `stream`: its address and size in bytes, and cudarc's guard, whose
/// read event [`done`](Self::done) records after the work that reads the memory.
pub(crate) struct CudarcRead<'a> {
    /// The first byte.
    pub(crate) ptr: DevicePtr<'a>,
    /// The memory's bytes.
    pub(crate) bytes: usize,
    guard: SyncOnDrop<'a>,
    stream: &'a CudaStream,
}

impl<'a> CudarcRead<'a> {
    /// `src` read on `stream`, which must be of `src`'s cudarc context; `owner` names the
    /// reader in errors. `stream` waits for cudarc's earlier writes of `src` (cudarc's event
    /// protocol), so it is asked only once the caller checked `stream` against its own context.
    ///
    /// # Errors
    /// As `checked_bytes`: [`UsageError::WrongCudaContext`](crate::UsageError::WrongCudaContext)
    /// for memory of another cudarc context, [`UsageError::TooLarge`](crate::UsageError::TooLarge).
    pub(crate) fn new<T, S: CudarcSource<T>>(
        src: &'a S,
        stream: &'a Arc<CudaStream>,
        owner: &str,
    ) -> Result<CudarcRead<'a>> {
        let bytes = checked_bytes(src, stream, owner)?;
        let (ptr, guard) = src.device_ptr(stream);
        Ok(CudarcRead {
            ptr: DevicePtr::new(ptr),
            bytes,
            guard,
            stream,
        })
    }

    /// Records cudarc's read event after the work that reads the memory, all queued on
    /// `ctx`'s private stream (the copy, or the colour map's kernel), so that cudarc orders its
    /// later writes and frees after it (`record_after_copy`).
    ///
    /// # Errors
    /// As `record_after_copy`: the driver's error or the timeout of its fallback wait.
    pub(crate) fn done(self, ctx: &Context) -> Result<()> {
        record_after_copy(ctx, self.stream, self.guard)
    }
}
