//! Copies between the CUDA arrays of a mapped image and host memory, device memory or another
//! array, queued on the stream of the map.
//!
//! Sizes are checked before the driver is called: a copy always moves the whole array, tightly
//! packed (rows of `width * channels * bytes-per-channel` bytes, no padding), and the other end
//! must hold exactly that many bytes. Host copies wait for the stream before returning, because
//! the slice is only borrowed for the call; device copies are only queued.

use super::array::MappedArray;
use super::buffer::MappedBuffer;
use crate::error::{Error, Result, UsageError};
use crate::memory::{DeviceBuffer, DeviceCopy};
use crate::queue::{AfterWork, run_borrowing, then};
use crate::result;
use cuda_gl_sys as sys;
use std::ffi::c_void;

/// One end of a copy.
#[derive(Debug, Clone, Copy)]
enum End {
    /// Host memory (pageable or pinned).
    Host(*mut c_void),
    /// Linear device memory.
    Device(sys::CUdeviceptr),
    /// A CUDA array.
    Array(sys::CUarray),
}

impl End {
    /// The memory type, host address, device address and array of the descriptor fields.
    fn fields(
        self,
    ) -> (
        sys::CUmemorytype,
        *mut c_void,
        sys::CUdeviceptr,
        sys::CUarray,
    ) {
        use sys::CUmemorytype as M;
        let (null, none) = (std::ptr::null_mut(), std::ptr::null_mut());
        match self {
            End::Host(p) => (M::CU_MEMORYTYPE_HOST, p, 0, none),
            End::Device(d) => (M::CU_MEMORYTYPE_DEVICE, null, d, none),
            End::Array(a) => (M::CU_MEMORYTYPE_ARRAY, null, 0, a),
        }
    }
}

/// The extent of an array, tightly packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Extent {
    /// Bytes per row: `width * channels * bytes-per-channel`.
    row_bytes: usize,
    /// Rows per slice: the height, at least 1.
    rows: usize,
    /// Slices (3-D depth or layers), 0 for a 2-D array.
    depth: usize,
}

impl Extent {
    fn of(array: &MappedArray<'_>) -> Result<Extent> {
        let bpc = array
            .format
            .bytes_per_channel()
            .ok_or(UsageError::UncopyableFormat {
                format: array.format.0,
            })?;
        let extent = Extent {
            row_bytes: array
                .width
                .checked_mul(array.channels as usize)
                .and_then(|n| n.checked_mul(bpc))
                .ok_or_else(|| overflow(array))?,
            rows: array.height.max(1),
            depth: array.depth,
        };
        extent.bytes().ok_or_else(|| overflow(array))?;
        Ok(extent)
    }

    /// The size in bytes, `None` on overflow.
    fn bytes(&self) -> Option<usize> {
        self.row_bytes
            .checked_mul(self.rows)?
            .checked_mul(self.depth.max(1))
    }
}

/// A mapped array whose size in bytes overflows `usize`: the sizes come from the driver
/// (`cuArrayGetDescriptor`), so this is an impossible answer of it, not the caller's input.
fn overflow(array: &MappedArray<'_>) -> Error {
    Error::Internal {
        what: format!(
            "the driver described a mapped array ({}) whose size in bytes overflows usize",
            describe(array)
        ),
    }
}

fn describe(array: &MappedArray<'_>) -> String {
    format!(
        "{} x {} x {}{} elements of {} x {:?}",
        array.width,
        array.height,
        array.depth,
        if array.is_layered() { " (layered)" } else { "" },
        array.channels,
        array.format.0
    )
}

/// Queues a copy of `extent` from `src` to `dst` on `stream`: `cuMemcpy2DAsync` for a 2-D
/// array, `cuMemcpy3DAsync` for a 3-D or layered one.
///
/// # Safety
/// 1. `src` and `dst` are live and span `extent` (linear memory tightly packed: `row_bytes`
///    pitch, `rows` rows per slice) until the copy has completed on `stream`; `dst` may be
///    written.
/// 2. `stream` is a live stream of the current context.
unsafe fn queue(src: End, dst: End, extent: Extent, stream: sys::CUstream) -> Result<()> {
    let (src_type, src_host, src_device, src_array) = src.fields();
    let (dst_type, dst_host, dst_device, dst_array) = dst.fields();
    if extent.depth == 0 {
        let copy = sys::CUDA_MEMCPY2D {
            srcMemoryType: src_type,
            srcHost: src_host,
            srcDevice: src_device,
            srcArray: src_array,
            srcPitch: extent.row_bytes,
            dstMemoryType: dst_type,
            dstHost: dst_host,
            dstDevice: dst_device,
            dstArray: dst_array,
            dstPitch: extent.row_bytes,
            WidthInBytes: extent.row_bytes,
            Height: extent.rows,
            ..Default::default()
        };
        // SAFETY: (1), (2); the descriptor describes exactly `extent`.
        Ok(unsafe { result::array::copy_2d_async(&copy, stream) }?)
    } else {
        let copy = sys::CUDA_MEMCPY3D {
            srcMemoryType: src_type,
            srcHost: src_host,
            srcDevice: src_device,
            srcArray: src_array,
            srcPitch: extent.row_bytes,
            srcHeight: extent.rows,
            dstMemoryType: dst_type,
            dstHost: dst_host,
            dstDevice: dst_device,
            dstArray: dst_array,
            dstPitch: extent.row_bytes,
            dstHeight: extent.rows,
            WidthInBytes: extent.row_bytes,
            Height: extent.rows,
            Depth: extent.depth,
            ..Default::default()
        };
        // SAFETY: as above.
        Ok(unsafe { result::array::copy_3d_async(&copy, stream) }?)
    }
}

impl MappedArray<'_> {
    /// The size of the whole array in bytes, tightly packed: what a copy in or out moves.
    ///
    /// # Errors
    /// [`UsageError::UncopyableFormat`] for a format without a plain texel layout
    /// (block-compressed or video formats); [`Error::Internal`] for a size that overflows
    /// `usize`.
    pub fn byte_len(&self) -> Result<usize> {
        Extent::of(self).and_then(|e| e.bytes().ok_or_else(|| overflow(self)))
    }

    /// The extent, after checking that the other end holds `given` bytes.
    fn checked(
        &self,
        direction: &'static str,
        other: &'static str,
        given: usize,
    ) -> Result<Extent> {
        let extent = Extent::of(self)?;
        let array_bytes = extent.bytes().ok_or_else(|| overflow(self))?;
        if given != array_bytes {
            return Err(Error::CopySize {
                direction,
                array: describe(self),
                array_bytes,
                other,
                given_bytes: given,
            });
        }
        Ok(extent)
    }

    /// Refuses a copy into an image CUDA may only read.
    fn check_writable(&self) -> Result<()> {
        self.origin.reg.check_writable("a copy into it")
    }

    /// Queues `src` to `dst` in the order of the map's stream, on cuda-gl's private stream
    /// joined to it (so a capture begun on the map's stream by any thread never captures it:
    /// see `crate::queue`). With `host`, waits for the copy: a host end is borrowed only for
    /// the call, so returning while the copy may run would let the DMA outlive the borrow (the
    /// wait has no limit on purpose). `after` runs right after the copy, in the same run (see
    /// [`AfterWork`]).
    fn queue_on_map_stream(
        &self,
        src: End,
        dst: End,
        extent: Extent,
        host: bool,
        after: AfterWork<'_>,
    ) -> Result<()> {
        const CALL: &str = "cuMemcpy2DAsync (not called)";
        let (ctx, stream) = (&self.origin.reg.ctx, self.origin.stream);
        // SAFETY: the map's stream is live while the mapping is, in the registration's
        // context. In the work: the callers checked both ends against `extent` and keep them
        // live until the copy completes (host ends are waited for by `run_borrowing`, outside
        // the private queue's lock; device ends are freed or unmapped only after work ordered
        // after the copy: the unmap is queued on the map's stream, which waits for the copy).
        unsafe {
            if host {
                let work = then(|p| queue(src, dst, extent, p), after);
                let copied = run_borrowing(&**ctx, stream, CALL, work);
                copied.waited?;
                copied.out
            } else {
                ctx.run_now(stream, CALL, then(|p| queue(src, dst, extent, p), after))
            }
        }
    }

    /// Copies the whole array into `dst`, in the order of the map's stream, and waits for it.
    ///
    /// `dst` holds the texels row after row with no padding, each of
    /// [`channels`](Self::channels) values of the array's [`format`](Self::format): for an
    /// RGBA8 texture of `w x h`, `w * h` `u32` (or `4 * w * h` `u8`, or `[u8; 4]`). The copy
    /// runs after the work queued on the map's stream before it (e.g. the kernel that wrote
    /// the texture), and this returns when it is done.
    ///
    /// # Errors
    /// [`Error::CopySize`] when `dst` is not exactly [`byte_len`](Self::byte_len) bytes
    /// (nothing is copied); [`UsageError::UncopyableFormat`] for a format that cannot be copied;
    /// the
    /// driver's error from `cuMemcpy2DAsync` / `cuMemcpy3DAsync` or `cuStreamSynchronize`
    /// (including the errors of earlier work on the stream).
    #[doc(alias = "cuMemcpy2DAsync")]
    #[doc(alias = "cuMemcpy3DAsync")]
    pub fn copy_to_host<T: DeviceCopy>(&self, dst: &mut [T]) -> Result<()> {
        let extent = self.checked("out of", "host memory", size_of_val(dst))?;
        let host = End::Host(dst.as_mut_ptr().cast());
        self.queue_on_map_stream(End::Array(self.raw), host, extent, true, None)
    }

    /// Copies `src` into the whole array, in the order of the map's stream, and waits for it.
    ///
    /// The layout of `src` is that of [`copy_to_host`](Self::copy_to_host). Kernels and GL
    /// commands ordered after the copy (queued later on the stream, or after the unmap) see the
    /// new texels.
    ///
    /// # Errors
    /// As [`copy_to_host`](Self::copy_to_host); [`UsageError::ReadOnlyMapping`] when the image
    /// was registered or mapped read-only.
    #[doc(alias = "cuMemcpy2DAsync")]
    #[doc(alias = "cuMemcpy3DAsync")]
    pub fn copy_from_host<T: DeviceCopy>(&self, src: &[T]) -> Result<()> {
        self.check_writable()?;
        let extent = self.checked("into", "host memory", size_of_val(src))?;
        // The driver only reads through a source pointer; the descriptor field is `*const`.
        let host = End::Host(src.as_ptr().cast_mut().cast());
        self.queue_on_map_stream(host, End::Array(self.raw), extent, true, None)
    }

    /// Queues a copy of the whole array into `dst` on the map's stream; returns without waiting.
    ///
    /// Work queued later on the same stream sees the copy; synchronize that stream before
    /// reading `dst` from the host.
    ///
    /// # Errors
    /// [`Error::CopySize`] when `dst` is not exactly [`byte_len`](Self::byte_len) bytes;
    /// [`UsageError::UncopyableFormat`] for a format that cannot be copied;
    /// [`UsageError::WrongCudaContext`] for a buffer of another context; the driver's error from `cuMemcpy2DAsync` / `cuMemcpy3DAsync`.
    #[doc(alias = "cuMemcpy2DAsync")]
    #[doc(alias = "cuMemcpy3DAsync")]
    pub fn copy_to_device<T: DeviceCopy>(&self, dst: &mut DeviceBuffer<T>) -> Result<()> {
        self.check_same_context(dst.context(), "device buffer")?;
        // SAFETY: the buffer's `byte_len` bytes of this context (checked), borrowed mutably;
        // freeing it (cuMemFree) waits for the copy.
        unsafe {
            self.copy_to_raw(
                dst.device_ptr().as_raw(),
                dst.byte_len(),
                "a device buffer",
                None,
            )
        }
    }

    /// Queues a copy of the whole array into the `bytes` bytes of device memory at `ptr` on
    /// the map's stream (see [`copy_to_device`](Self::copy_to_device)), `other` naming them in
    /// errors; `after` runs right after the copy, in the same run (see [`AfterWork`]).
    ///
    /// # Safety
    /// 1. `ptr` is `bytes` bytes of device memory of the registration's context, which nothing
    ///    else reads or writes, and which stay allocated, until the work queued on the map's
    ///    stream after this call has run.
    pub(crate) unsafe fn copy_to_raw(
        &self,
        ptr: sys::CUdeviceptr,
        bytes: usize,
        other: &'static str,
        after: AfterWork<'_>,
    ) -> Result<()> {
        let extent = self.checked("out of", other, bytes)?;
        self.queue_on_map_stream(End::Array(self.raw), End::Device(ptr), extent, false, after)
    }

    /// Queues a copy of the `bytes` bytes of device memory at `ptr` into the whole array on
    /// the map's stream (see [`copy_from_device`](Self::copy_from_device)), `other` naming them
    /// in errors; `after` runs right after the copy, in the same run (see [`AfterWork`]).
    ///
    /// # Safety
    /// 1. `ptr` is `bytes` bytes of device memory of the registration's context, which nothing
    ///    writes, and which stay allocated, until the work queued on the map's stream after
    ///    this call has run.
    pub(crate) unsafe fn copy_from_raw(
        &self,
        ptr: sys::CUdeviceptr,
        bytes: usize,
        other: &'static str,
        after: AfterWork<'_>,
    ) -> Result<()> {
        self.check_writable()?;
        let extent = self.checked("into", other, bytes)?;
        self.queue_on_map_stream(End::Device(ptr), End::Array(self.raw), extent, false, after)
    }

    /// The copy of the rows at `ptr`, `pitch` bytes apart, into the whole 2-D array (array row
    /// `y` takes the first [`byte_len`](Self::byte_len) / height bytes of source row `y`),
    /// checked, not queued: for a caller that queues it on cuda-gl's private stream inside a
    /// run of its own (`graphics::on_private_stream`; a run cannot queue through another).
    ///
    /// # Errors
    /// [`UsageError::ReadOnlyMapping`] for an image CUDA may only read; `Error::Internal` for
    /// a layered or 3-D array, or a pitch below the row (the callers check both);
    /// [`UsageError::UncopyableFormat`].
    pub(crate) fn pitched_copy(
        &self,
        ptr: sys::CUdeviceptr,
        pitch: usize,
    ) -> Result<sys::CUDA_MEMCPY2D> {
        self.check_writable()?;
        let extent = Extent::of(self)?;
        if extent.depth != 0 || pitch < extent.row_bytes {
            return Err(Error::Internal {
                what: format!(
                    "a pitched copy of {pitch}-byte rows into a mapped array ({})",
                    describe(self)
                ),
            });
        }
        Ok(sys::CUDA_MEMCPY2D {
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcDevice: ptr,
            srcPitch: pitch,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
            dstArray: self.raw,
            WidthInBytes: extent.row_bytes,
            Height: extent.rows,
            ..Default::default()
        })
    }

    /// The raw stream the array's image was mapped on, and the context of its registration.
    #[allow(dead_code, reason = "used by the optional cudarc adapter only")]
    pub(crate) fn map_stream(&self) -> (sys::CUstream, &crate::context::Context) {
        (self.origin.stream, &self.origin.reg.ctx)
    }

    /// Queues a copy of `src` into the whole array on the map's stream; returns without waiting.
    ///
    /// # Errors
    /// As [`copy_to_device`](Self::copy_to_device); [`UsageError::ReadOnlyMapping`] when the
    /// image was registered or mapped read-only.
    #[doc(alias = "cuMemcpy2DAsync")]
    #[doc(alias = "cuMemcpy3DAsync")]
    pub fn copy_from_device<T: DeviceCopy>(&self, src: &DeviceBuffer<T>) -> Result<()> {
        self.check_same_context(src.context(), "device buffer")?;
        // SAFETY: the buffer's `byte_len` bytes of this context (checked), borrowed; freeing
        // it (cuMemFree) waits for the copy, and safe code writes it only on streams ordered
        // after the map's or through copies that wait for it.
        unsafe {
            self.copy_from_raw(
                src.device_ptr().as_raw(),
                src.byte_len(),
                "a device buffer",
                None,
            )
        }
    }

    /// Queues a copy of the whole array into the mapped GL buffer `dst` (e.g. a pixel buffer),
    /// on the map's stream. Both must be mapped on the same stream (map them with
    /// [`map_all`](crate::map_all), or map both on one stream), so that each unmap comes after
    /// the copy.
    ///
    /// # Errors
    /// [`UsageError::MappedOnOtherStream`] when `dst` is mapped on another stream or in another
    /// context; [`UsageError::ReadOnlyMapping`] when it was registered or mapped read-only;
    /// otherwise as [`copy_to_device`](Self::copy_to_device).
    #[doc(alias = "cuMemcpy2DAsync")]
    #[doc(alias = "cuMemcpy3DAsync")]
    pub fn copy_to_buffer(&self, dst: &MappedBuffer<'_>) -> Result<()> {
        dst.check_writable("a copy into it")?;
        let (ptr, size) = self.same_stream_buffer(dst)?;
        let extent = self.checked("out of", "a mapped buffer", size)?;
        self.queue_on_map_stream(End::Array(self.raw), End::Device(ptr), extent, false, None)
    }

    /// Queues a copy of the mapped GL buffer `src` into the whole array, on the map's stream
    /// (the GL `glTexSubImage2D`-from-PBO upload, done by CUDA). Both must be mapped on the
    /// same stream.
    ///
    /// # Errors
    /// As [`copy_to_buffer`](Self::copy_to_buffer); [`UsageError::ReadOnlyMapping`] when the
    /// image was registered or mapped read-only.
    #[doc(alias = "cuMemcpy2DAsync")]
    #[doc(alias = "cuMemcpy3DAsync")]
    pub fn copy_from_buffer(&self, src: &MappedBuffer<'_>) -> Result<()> {
        self.check_writable()?;
        let (ptr, size) = self.same_stream_buffer(src)?;
        let extent = self.checked("into", "a mapped buffer", size)?;
        self.queue_on_map_stream(End::Device(ptr), End::Array(self.raw), extent, false, None)
    }

    /// Queues a copy of the whole array into `dst`, an array of the same byte size (e.g. the
    /// same level of another texture of the same size and format), on the map's stream. Both
    /// must be mapped on the same stream.
    ///
    /// # Errors
    /// [`UsageError::OverlappingCopy`] when `dst` is this same array (or shares its storage);
    /// [`UsageError::MappedOnOtherStream`] when it is mapped on another stream or in another
    /// context; [`UsageError::ReadOnlyMapping`] when it was registered or mapped read-only; [`Error::CopySize`] when the
    /// sizes differ; the driver's error from `cuMemcpy2DAsync` / `cuMemcpy3DAsync` (such as
    /// `CUDA_ERROR_INVALID_VALUE` when the shapes differ although the sizes agree).
    #[doc(alias = "cuMemcpy2DAsync")]
    #[doc(alias = "cuMemcpy3DAsync")]
    pub fn copy_to_array(&self, dst: &MappedArray<'_>) -> Result<()> {
        dst.check_writable()?;
        if dst.raw == self.raw || dst.overlaps(self) {
            return Err(UsageError::OverlappingCopy.into());
        }
        self.check_same_stream(dst.origin.reg.ctx.raw(), dst.origin.stream, "array")?;
        let dst_extent = Extent::of(dst)?;
        let given = dst_extent.bytes().ok_or_else(|| overflow(dst))?;
        let extent = self.checked("out of", "another mapped array", given)?;
        self.queue_on_map_stream(
            End::Array(self.raw),
            End::Array(dst.raw),
            extent,
            false,
            None,
        )
    }

    /// The address and size of `buffer`, after checking that it is mapped on this map's stream.
    fn same_stream_buffer(&self, buffer: &MappedBuffer<'_>) -> Result<(sys::CUdeviceptr, usize)> {
        let (ctx, stream, ptr, size) = buffer.parts();
        self.check_same_stream(ctx, stream, "buffer")?;
        Ok((ptr, size))
    }

    fn check_same_context(&self, ctx: &crate::context::Context, what: &'static str) -> Result<()> {
        if ctx.raw() == self.origin.reg.ctx.raw() {
            Ok(())
        } else {
            Err(UsageError::WrongCudaContext {
                what,
                owner: "the mapped image".into(),
            }
            .into())
        }
    }

    fn check_same_stream(
        &self,
        ctx: sys::CUcontext,
        stream: sys::CUstream,
        what: &'static str,
    ) -> Result<()> {
        if ctx == self.origin.reg.ctx.raw() && stream == self.origin.stream {
            Ok(())
        } else {
            Err(UsageError::MappedOnOtherStream { what }.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_are_tightly_packed_and_checked() {
        let e = Extent {
            row_bytes: 64 * 4,
            rows: 32,
            depth: 0,
        };
        assert_eq!(e.bytes(), Some(64 * 4 * 32));
        let layered = Extent { depth: 4, ..e };
        assert_eq!(layered.bytes(), Some(64 * 4 * 32 * 4));
        let huge = Extent {
            row_bytes: usize::MAX,
            rows: 2,
            depth: 0,
        };
        assert_eq!(huge.bytes(), None);
    }

    #[test]
    fn ends_fill_only_their_own_fields() {
        use sys::CUmemorytype as M;
        let (t, h, d, a) = End::Device(0x1000).fields();
        assert_eq!(t, M::CU_MEMORYTYPE_DEVICE);
        assert!(h.is_null() && a.is_null());
        assert_eq!(d, 0x1000);
        let mut byte = 0u8;
        let (t, h, d, _) = End::Host((&raw mut byte).cast()).fields();
        assert_eq!((t, d), (M::CU_MEMORYTYPE_HOST, 0));
        assert!(!h.is_null());
    }
}
