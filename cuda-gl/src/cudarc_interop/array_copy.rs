//! Copies between a mapped image's array and cudarc device memory:
//! [`MappedArray::copy_from_cudarc`] and [`MappedArray::copy_to_cudarc`], the cudarc forms of
//! `copy_from_device` and `copy_to_device`.

use super::memory::{CudarcDest, CudarcEvent, CudarcSource, checked_bytes};
use crate::error::{Result, UsageError};
use crate::graphics::MappedArray;
use cudarc::driver::{CudaStream, DeviceSlice};
use std::sync::Arc;

impl MappedArray<'_> {
    /// Refuses `stream` unless the image was mapped on it: the copy is ordered on the map's
    /// stream, and cudarc's events on `stream`.
    fn check_cudarc_stream(&self, stream: &CudaStream) -> Result<()> {
        let (mapped_on, ctx) = self.map_stream();
        if stream.cu_stream().cast::<std::ffi::c_void>() != mapped_on.cast()
            || stream.context().cu_ctx().cast::<std::ffi::c_void>() != ctx.raw().cast()
        {
            return Err(UsageError::NeedsCudarcStream.into());
        }
        Ok(())
    }

    /// What both cudarc copies check before cudarc is asked for the memory's address: `stream`
    /// is the map's ([`check_cudarc_stream`](Self::check_cudarc_stream)) and `memory` of its
    /// cudarc context (`checked_bytes`); the bytes to copy.
    fn cudarc_bytes<T>(&self, memory: &impl DeviceSlice<T>, stream: &CudaStream) -> Result<usize> {
        self.check_cudarc_stream(stream)?;
        checked_bytes(memory, stream, "the mapped image")
    }

    /// What both cudarc copies do once theirs is queued, with cudarc's `event` recorded in the
    /// copy's run (or not: `CudarcEvent::done`): then the copy's result, `copied`.
    fn after_cudarc_copy(
        &self,
        event: CudarcEvent<'_>,
        stream: &CudaStream,
        copied: Result<()>,
    ) -> Result<()> {
        event.done(self.map_stream().1, stream)?;
        copied
    }

    /// Queues a copy of cudarc memory `src` (a `CudaSlice`, a `CudaView`, or a mapped view)
    /// into the whole array on the map's stream, `stream` (the `Arc<CudaStream>` the image was
    /// mapped on), after cudarc's own writes of `src`; cudarc's later writes or frees of `src`
    /// wait for it (with cudarc's event tracking on, its default). The layout of `src` is that
    /// of [`copy_to_host`](Self::copy_to_host).
    ///
    /// # Errors
    /// [`UsageError::NeedsCudarcStream`] when `stream` is not the stream the image was mapped
    /// on; [`UsageError::WrongCudaContext`] for memory of another cudarc context; otherwise as
    /// [`copy_from_device`](Self::copy_from_device).
    #[doc(alias = "cuMemcpy2DAsync")]
    pub fn copy_from_cudarc<T, S: CudarcSource<T>>(
        &self,
        src: &S,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let bytes = self.cudarc_bytes(src, stream)?;
        // cudarc's read event is recorded right after the copy, in its run.
        let (ptr, read) = src.device_ptr(stream);
        let mut read = CudarcEvent::take(read);
        let mut record = |p| read.record(p);
        // SAFETY: (1) `src` holds `bytes` bytes of device memory of the mapping's context
        // (`CudarcSource`, its context checked), which cudarc neither frees nor writes before
        // its read event, recorded after the copy on cuda-gl's private stream.
        let copied = unsafe { self.copy_from_raw(ptr, bytes, "cudarc memory", Some(&mut record)) };
        self.after_cudarc_copy(read, stream, copied)
    }

    /// Queues a copy of the whole array into cudarc memory `dst` (a `CudaSlice`, a
    /// `CudaViewMut`, or a writable mapped view) on the map's stream, `stream`, after cudarc's
    /// own reads and writes of `dst`; cudarc's later uses of `dst` wait for it.
    ///
    /// # Errors
    /// As [`copy_from_cudarc`](Self::copy_from_cudarc), less the read-only refusal; otherwise
    /// as [`copy_to_device`](Self::copy_to_device).
    #[doc(alias = "cuMemcpy2DAsync")]
    pub fn copy_to_cudarc<T, D: CudarcDest<T>>(
        &self,
        dst: &mut D,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let bytes = self.cudarc_bytes(dst, stream)?;
        // cudarc's write event is recorded right after the copy, in its run.
        let (ptr, write) = dst.device_ptr_mut(stream);
        let mut write = CudarcEvent::take(write);
        let mut record = |p| write.record(p);
        // SAFETY: (1) `dst` holds `bytes` bytes of device memory of the mapping's context,
        // borrowed mutably, which cudarc neither frees, reads nor writes before its write
        // event, recorded after the copy on cuda-gl's private stream.
        let copied = unsafe { self.copy_to_raw(ptr, bytes, "cudarc memory", Some(&mut record)) };
        self.after_cudarc_copy(write, stream, copied)
    }
}
