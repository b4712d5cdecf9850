//! [`PinnedBuffer`]: page-locked host memory, the staging area of copies between host and
//! device, with the event that keeps safe code off it while a copy writes it.

use super::{DeviceBuffer, DeviceCopy, allocation_bytes};
use crate::context::Context;
use crate::error::{Error, Result, UsageError};
use crate::queue::wait_within;
use crate::result;
use crate::stream::{AsStream, Event, check_same_context, wait_limit};
use cuda_gl_sys as sys;
use std::sync::Arc;
use std::time::Duration;

/// Page-locked host memory: the fast staging area for copies between host and device.
///
/// Asynchronous copies into it ([`PinnedBuffer::copy_from_device_async`]) return while the DMA
/// still runs. The buffer therefore owns a CUDA event, recorded after every such copy (and each
/// copy waits on the stream for the one before it, whatever its stream), and
/// [`PinnedBuffer::as_slice`], [`PinnedBuffer::as_mut_slice`] and `Drop` wait for it, so safe code
/// never sees or frees the memory while a copy writes it. When nothing is pending the wait is one
/// `cuEventQuery`. The waits give up after the [wait limit](crate::wait_limit) (10 s by default)
/// with [`Error::Timeout`] (the `_within` forms take a limit of your choosing); a `Drop` that gives
/// up (or fails) leaks the memory instead of freeing it under the DMA, and records the error for
/// [`Context::take_drop_errors`](crate::Context::take_drop_errors).
#[derive(Debug)]
pub struct PinnedBuffer<T: DeviceCopy> {
    ctx: Arc<Context>,
    ptr: *mut T,
    len: usize,
    /// Recorded after every asynchronous operation on the buffer.
    event: Event,
    /// Set when a copy was queued but recording `event` after it failed, and the stream could
    /// not be synchronized either: when that copy ends is unknown, so the memory is never read
    /// or freed again.
    untracked: bool,
}

// SAFETY: the memory is owned by this value; `T` is plain data; the event is `Send`.
unsafe impl<T: DeviceCopy> Send for PinnedBuffer<T> {}
// SAFETY: shared access only reads, and only after the pending copies have finished (`&self`
// cannot start one: that takes `&mut self`).
unsafe impl<T: DeviceCopy> Sync for PinnedBuffer<T> {}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// Allocates `len` zero-filled values of page-locked host memory, and the event that
    /// tracks copies into it.
    ///
    /// # Errors
    /// [`UsageError::ZeroSize`] for a zero length; the driver's error from `cuMemAllocHost`
    /// or `cuEventCreate`.
    #[doc(alias = "cuMemAllocHost")]
    pub fn zeroed(ctx: &Arc<Context>, len: usize) -> Result<Self> {
        let bytes = allocation_bytes::<T>(len, "a pinned buffer")?;
        let event = Event::new(ctx, false)?;
        ctx.bind()?;
        let ptr = result::mem::alloc_host(bytes)?;
        // SAFETY: the allocation is `bytes` long and suitably aligned for any primitive.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
        Ok(Self {
            ctx: ctx.clone(),
            ptr: ptr.cast(),
            len,
            event,
            untracked: false,
        })
    }

    /// The contents, once every asynchronous copy into the buffer has finished.
    ///
    /// Waits for the copies queued by [`PinnedBuffer::copy_from_device_async`] (one
    /// `cuEventQuery` when none is pending), polling for at most the wait limit;
    /// [`as_slice_within`](Self::as_slice_within) waits as long as you choose.
    ///
    /// # Errors
    /// [`Error::Timeout`] when a copy has not finished within the wait limit (the buffer stays
    /// usable: call it again, or [`as_slice_within`](Self::as_slice_within) with a longer limit);
    /// the driver's error from `cuEventQuery` (including errors of the work before the copy);
    /// [`UsageError::PinnedBufferUntracked`] when the end of an earlier copy could not be tracked
    /// (see [`PinnedBuffer::copy_from_device_async`]).
    #[doc(alias = "cuEventQuery")]
    pub fn as_slice(&self) -> Result<&[T]> {
        self.as_slice_within(wait_limit())
    }

    /// [`as_slice`](Self::as_slice), waiting at most `limit` for the copies instead of the wait
    /// limit: for a copy queued behind kernels that run longer, or for a caller that waits for
    /// several buffers under one deadline. A zero limit only asks (one `cuEventQuery`).
    ///
    /// # Errors
    /// As [`PinnedBuffer::as_slice`], with [`Error::Timeout`] past `limit`.
    #[doc(alias = "cuEventQuery")]
    pub fn as_slice_within(&self, limit: Duration) -> Result<&[T]> {
        self.wait_for_copies_within(limit)?;
        // SAFETY: `ptr` holds `len` initialised values for the lifetime of `self`, and no copy
        // writes them any more (waited for above; a new one needs `&mut self`).
        Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// The contents, mutably, once every asynchronous copy into the buffer has finished.
    ///
    /// # Errors
    /// As [`PinnedBuffer::as_slice`].
    #[doc(alias = "cuEventQuery")]
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.as_mut_slice_within(wait_limit())
    }

    /// [`as_mut_slice`](Self::as_mut_slice), waiting at most `limit` for the copies instead of
    /// the wait limit (see [`as_slice_within`](Self::as_slice_within)).
    ///
    /// # Errors
    /// As [`PinnedBuffer::as_slice`], with [`Error::Timeout`] past `limit`.
    #[doc(alias = "cuEventQuery")]
    pub fn as_mut_slice_within(&mut self, limit: Duration) -> Result<&mut [T]> {
        self.wait_for_copies_within(limit)?;
        // SAFETY: as in `as_slice_within`, and `&mut self` makes the access unique.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// The address of the memory, without waiting for pending copies.
    ///
    /// For handing the memory to another API. Reading through it while a copy into the buffer
    /// is in flight reads bytes the DMA is writing (a data race): call
    /// [`PinnedBuffer::as_slice`] first, or order the reader after the copy's stream.
    pub fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// Waits (at most the [wait limit](crate::wait_limit)) until every queued copy into the buffer
    /// has finished.
    fn wait_for_copies(&self) -> Result<()> {
        self.wait_for_copies_within(wait_limit())
    }

    fn wait_for_copies_within(&self, limit: Duration) -> Result<()> {
        if self.untracked {
            return Err(UsageError::PinnedBufferUntracked.into());
        }
        self.event.wait_for(limit)
    }

    /// Queues a copy of `src` (same length) into this buffer on `stream`.
    ///
    /// The copy is ordered after the earlier copies into the buffer, even on other streams
    /// (the stream waits for the buffer's event), and the event is recorded after it:
    /// [`PinnedBuffer::as_slice`] and [`PinnedBuffer::as_mut_slice`] wait for it. The device
    /// buffer may be dropped at once: freeing device memory waits for the copies that read it.
    ///
    /// # Errors
    /// [`UsageError::SizeMismatch`] for a length mismatch; [`UsageError::WrongCudaContext`] when
    /// `stream` or `src` belongs to another context than the buffer; the driver's error from `cuStreamWaitEvent`,
    /// `cuMemcpyDtoHAsync` or `cuEventRecord`. When recording fails after the copy was queued,
    /// the stream is synchronized instead; if that fails too, the buffer is marked untracked:
    /// reads return [`UsageError::PinnedBufferUntracked`] and `Drop` leaks the memory.
    #[doc(alias = "cuMemcpyDtoHAsync")]
    pub fn copy_from_device_async(
        &mut self,
        src: &DeviceBuffer<T>,
        stream: &impl AsStream,
    ) -> Result<()> {
        if src.len() != self.len {
            return Err(UsageError::SizeMismatch {
                what: "the pinned buffer",
                expected: self.len,
                given: src.len(),
            }
            .into());
        }
        if src.ctx.raw() != self.ctx.raw() {
            return Err(UsageError::WrongCudaContext {
                what: "device buffer",
                owner: "the pinned buffer".into(),
            }
            .into());
        }
        let device = src.device_ptr().as_raw();
        // SAFETY: `device` is `len` values of this context's memory (checked), freed with
        // cuMemFree, which waits for pending copies.
        unsafe {
            self.copy_in_async(
                stream,
                "cuMemcpyDtoHAsync (not called)",
                |host, bytes, p| result::mem::copy_dtoh_async(host, device, bytes, p),
            )
        }
    }

    /// Queues `copy` on cuda-gl's private stream, in `stream`'s order, to write the whole
    /// buffer (`copy` gets the host address, the byte length and the private stream), with the
    /// tracking of [`copy_from_device_async`](Self::copy_from_device_async): it waits for the
    /// previous copy and is covered by the buffer's event.
    ///
    /// # Safety
    /// 1. What `copy` queues writes at most the bytes it is given, from memory of this buffer's
    ///    context that stays live until that work has run.
    ///
    /// # Errors
    /// As [`copy_from_device_async`](Self::copy_from_device_async), with the error of `copy`.
    pub(crate) unsafe fn copy_in_async(
        &mut self,
        stream: &impl AsStream,
        call: &'static str,
        copy: impl FnOnce(*mut std::ffi::c_void, usize, sys::CUstream) -> result::Result<()>,
    ) -> Result<()> {
        // SAFETY: (1), for the one buffer.
        unsafe { Self::copy_all_in_async([self], stream, call, |[(h, n)], p| copy(h, n, p)) }
    }

    /// [`copy_in_async`](Self::copy_in_async) of several buffers in one run: `copy` gets each
    /// buffer's host address and byte length, and the private stream; the run waits for each
    /// buffer's previous copy first and records each buffer's event after `copy`'s work.
    ///
    /// # Safety
    /// 1. What `copy` queues writes at most the bytes it is given of each buffer, from memory of
    ///    the buffers' context that stays live until that work has run.
    ///
    /// # Errors
    /// As [`copy_in_async`](Self::copy_in_async); [`UsageError::WrongCudaContext`] for buffers
    /// of several contexts.
    pub(crate) unsafe fn copy_all_in_async<const N: usize>(
        mut buffers: [&mut Self; N],
        stream: &impl AsStream,
        call: &'static str,
        copy: impl FnOnce([(*mut std::ffi::c_void, usize); N], sys::CUstream) -> result::Result<()>,
    ) -> Result<()> {
        let Some(ctx) = buffers.first().map(|b| b.ctx.clone()) else {
            return Ok(());
        };
        for buffer in &buffers {
            check_same_context(&buffer.ctx, stream, "the pinned buffer")?;
        }
        for buffer in &buffers {
            if buffer.untracked {
                return buffer.wait_for_copies();
            }
        }
        let hosts = buffers
            .each_ref()
            .map(|b| (b.ptr.cast(), b.len * size_of::<T>()));
        let events = buffers.each_ref().map(|b| b.event.raw());
        // Set by the work, so that it holds whatever `run_now` returns (a wait of its own may
        // give up after the work's answer).
        let mut untracked = false;
        // SAFETY: the stream is live while borrowed and of the buffers' context (checked). In
        // the work: the events are of that context; each buffer's pinned memory is its bytes
        // long and freed only after its event recorded here; the sources are live until the
        // copies have run ((1)); the private stream first waits for each previous copy's event.
        let recorded = unsafe {
            ctx.run_now(stream.raw_stream(), call, |p| {
                for event in events {
                    result::stream::wait_event(p, event)?;
                }
                copy(hosts, p)?;
                let mut recorded = Ok(());
                for event in events {
                    recorded = recorded.and(result::stream::event_record(event, p));
                }
                Ok(match recorded {
                    Ok(()) => Ok(()),
                    // A copy is queued but not covered by its event: wait for it now, at most
                    // the wait limit (past it the buffers are untracked: refused, and leaked).
                    // `p` is the private stream of the bound context, as `wait_within` requires.
                    Err(e) => {
                        untracked = wait_within(p).is_err();
                        Err(Error::from(e))
                    }
                })
            })
        };
        for buffer in &mut buffers {
            buffer.untracked = untracked;
        }
        recorded?
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no values (never true).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: DeviceCopy> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        const LEAKED: &str = "the pinned memory is leaked, not freed under a running copy";
        if self.untracked {
            log::error!(
                "cuda-gl: dropping a pinned buffer whose last copy could not be tracked; {LEAKED}"
            );
            return;
        }
        if !self.ctx.bind_for_drop("free pinned memory") {
            return;
        }
        if let Err(e) = self.event.wait_for(wait_limit()) {
            let what = format!("waiting for the copies into a pinned buffer ({LEAKED})");
            self.ctx.record_drop_wait(&what, "cuEventQuery", e);
            return;
        }
        // SAFETY: the memory came from cuMemAllocHost, and no copy writes it any more (the
        // event recorded after the last one has completed); it is not used after this.
        if let Err(e) = unsafe { result::mem::free_host(self.ptr.cast()) } {
            self.ctx.record_drop_error("cuMemFreeHost", e);
        }
    }
}
