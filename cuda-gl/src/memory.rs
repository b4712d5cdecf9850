//! Device and pinned host memory: for kernels' scratch data, tests and baselines.

use crate::context::Context;
use crate::error::{Result, UsageError};
use crate::fresh::fill_fresh;
use crate::module::KernelParam;
use crate::queue::run_borrowing;
use crate::result;
use crate::stream::{AsStream, check_same_context};
use cuda_gl_sys as sys;
use std::marker::PhantomData;
use std::sync::Arc;

mod pinned;

pub use pinned::PinnedBuffer;

/// Plain data that may be copied to and from the device byte for byte.
///
/// # Safety
/// 1. Every bit pattern is a valid value of the type.
/// 2. The type has no padding bytes and holds no pointers or references.
pub unsafe trait DeviceCopy: Copy + 'static {}

macro_rules! device_copy {
    ($($t:ty),*) => { $(
        // SAFETY: a primitive whose every bit pattern is valid and which has no padding.
        unsafe impl DeviceCopy for $t {}
    )* };
}
device_copy!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);
// SAFETY: arrays of plain data are plain data.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}

/// The size in bytes of `len` values of `T` for `what` (e.g. `a device buffer`), rejecting zero
/// and overflow before the driver sees them.
fn allocation_bytes<T>(len: usize, what: &'static str) -> Result<usize> {
    match len.checked_mul(size_of::<T>()) {
        Some(0) => Err(UsageError::ZeroSize { what }.into()),
        Some(bytes) => Ok(bytes),
        None => Err(UsageError::TooLarge {
            what: "the size of the allocation in bytes",
            value: len as u128 * size_of::<T>() as u128,
            max: usize::MAX as u128,
        }
        .into()),
    }
}

/// A device address. One from an owner of device memory ([`DeviceBuffer::device_ptr`], a mapped
/// buffer) borrows that owner and cannot outlive it; one from [`from_raw`](Self::from_raw)
/// borrows nothing. Either way a `DevicePtr` proves nothing about the memory (that it is live,
/// of a context, of a size): every call that reads or writes through one is `unsafe` and says
/// what it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct DevicePtr<'a> {
    raw: sys::CUdeviceptr,
    _owner: PhantomData<&'a ()>,
}

impl DevicePtr<'_> {
    /// Wraps a raw address for the lifetime of its owner.
    pub(crate) fn new(raw: sys::CUdeviceptr) -> Self {
        Self {
            raw,
            _owner: PhantomData,
        }
    }

    /// An address of device memory that cuda-gl does not own: a decoder's output surface, a
    /// pointer from another CUDA library. For
    /// [`DeviceImage::new`](crate::display::DeviceImage::new) and
    /// [`VideoFrame::new`](crate::video::VideoFrame::new).
    ///
    /// Nothing is checked (null, alignment, context, size) and nothing is promised, so making
    /// one is safe: every call that reads or writes through a `DevicePtr` is `unsafe`, and its
    /// `# Safety` carries the whole contract: the targets' `show_raw` and `show_video_raw`
    /// ([`DisplayTarget`](crate::display::DisplayTarget::show_raw), and the wgpu target's),
    /// the planes' `upload_raw` ([`VideoPlanes`](crate::video::VideoPlanes::upload_raw), and
    /// the wgpu planes'), [`Converter::convert`](crate::video::Converter::convert),
    /// [`Function::launch`](crate::Function::launch) (and cudarc's launches, with the `cudarc`
    /// feature). The lifetime is the caller's to choose, `'static` included, and is not
    /// checked: the memory's owner is not cuda-gl. (A compile-fail test keeps every such reader
    /// `unsafe`.)
    ///
    /// ```
    /// use cuda_gl::video::{VideoFormat, VideoFrame, VideoLayout};
    /// use cuda_gl::DevicePtr;
    /// # fn surface() -> (u64, usize) { (0x7f00_0000_0000, 2048) }
    /// // NVDEC's NV12 output surface of a 1080p stream, as `cuvidMapVideoFrame64` gives it:
    /// // the coded picture's 1088 luma rows, then the chroma rows.
    /// let (address, pitch) = surface();
    /// let chroma = pitch * 1088;
    /// let nv12 = VideoFormat::Nv12;
    /// let layout = VideoLayout::with_chroma((1920, 1080), nv12, pitch, chroma, pitch)?;
    /// let frame = VideoFrame::new(DevicePtr::from_raw(address), layout);
    /// assert_eq!(frame.ptr().as_raw(), address);
    /// # Ok::<(), cuda_gl::Error>(())
    /// ```
    pub fn from_raw(raw: sys::CUdeviceptr) -> Self {
        Self::new(raw)
    }

    /// The raw address. It is only valid while the memory is allocated (and, for a mapping,
    /// stays mapped); keeping it longer is the caller's responsibility.
    pub fn as_raw(&self) -> sys::CUdeviceptr {
        self.raw
    }

    /// The address `bytes` further on.
    ///
    /// Only the arithmetic is checked: the result may lie past the end of the owner's memory,
    /// and a kernel that uses such an address faults (the caller of the unsafe
    /// [`Function::launch`](crate::Function::launch) vouches for the addresses it passes).
    ///
    /// # Errors
    /// [`UsageError::AddressOverflow`] when the address would overflow 64 bits.
    pub fn byte_add(self, bytes: usize) -> Result<Self> {
        u64::try_from(bytes)
            .ok()
            .and_then(|b| self.raw.checked_add(b))
            .map(Self::new)
            .ok_or_else(|| {
                UsageError::AddressOverflow {
                    address: self.raw,
                    bytes,
                }
                .into()
            })
    }
}

// SAFETY: a device address is passed to kernels as a 64-bit pointer, which is its layout.
unsafe impl KernelParam for DevicePtr<'_> {}

/// Device memory holding `len` values of `T`, freed on drop.
///
/// # Kernels that write it
///
/// A kernel writes the buffer through [`device_ptr`](Self::device_ptr), a shared borrow; there
/// is no `device_ptr_mut`, since `&mut` would order nothing: the borrow ends when
/// [`Function::launch`](crate::Function::launch) returns, before the GPU runs the kernel. What
/// orders GPU work on the memory is the stream: the caller of the `unsafe` launch vouches that
/// the kernel does not race with other work on it (its condition 2), by queueing the buffer's
/// readers and writers on one stream or ordering streams with an [`Event`](crate::Event). The
/// safe copies in and out are stream-ordered too ([`to_vec`](Self::to_vec) and
/// [`copy_from_slice`](Self::copy_from_slice) wait for the whole context first, the `_on`
/// forms for their stream), and they copy between the buffer and host memory of their own, so
/// a kernel left running on an unordered stream can only give them torn values of `T` (any
/// bytes are a valid `T`: [`DeviceCopy`]), never undefined behaviour.
#[derive(Debug)]
pub struct DeviceBuffer<T: DeviceCopy> {
    ctx: Arc<Context>,
    raw: sys::CUdeviceptr,
    len: usize,
    _t: PhantomData<T>,
}

// SAFETY: device memory may be used from any thread; `T` is plain data.
unsafe impl<T: DeviceCopy> Send for DeviceBuffer<T> {}
// SAFETY: `&self` methods only read the handle.
unsafe impl<T: DeviceCopy> Sync for DeviceBuffer<T> {}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Allocates `len` values, zero-filled, and waits until the zeroing has finished.
    ///
    /// The new memory is known to no other work, so the zeroing waits for none: it runs on a
    /// non-blocking stream of its own, and the host waits for that stream alone, at most the [wait
    /// limit](crate::wait_limit) (10 s by default; a kernel on any stream of yours, blocking or
    /// not, does not hold it up). Work queued afterwards, on any stream, sees zeroes.
    /// [`DeviceBuffer::zeroed_on`] queues the zeroing on a stream of yours instead and does not
    /// wait.
    ///
    /// # Errors
    /// [`UsageError::ZeroSize`] for a zero length ([`UsageError::TooLarge`] when the size in bytes
    /// overflows); the driver's error from `cuMemAlloc` (e.g. `CUDA_ERROR_OUT_OF_MEMORY`),
    /// `cuStreamCreate`, `cuMemsetD8Async` or `cuStreamQuery`;
    /// [`Error::Timeout`](crate::Error::Timeout) when the zeroing has not finished within the wait
    /// limit (only a GPU kept full by other work delays it that long): the allocation is then
    /// leaked, not freed under the memset, which may still run. The same holds after an error of
    /// `cuStreamQuery`.
    #[doc(alias = "cuMemAlloc")]
    pub fn zeroed(ctx: &Arc<Context>, len: usize) -> Result<Self> {
        let mut buf = Self::alloc(ctx, len)?;
        let (raw, bytes) = (buf.raw, buf.byte_len());
        let filled = fill_fresh(ctx, "the zeroing of a new device buffer", |s| {
            // SAFETY: the allocation is `bytes` long and stays allocated until the memset has
            // run (leaked otherwise, below); `s` is a live stream of the bound context.
            Ok(unsafe { result::mem::memset_d8_async(raw, 0, bytes, s) }?)
        });
        filled.map_err(|e| e.leaking(|| buf.leak()))?;
        Ok(buf)
    }

    /// Allocates `len` values and queues their zeroing on `stream`, without waiting.
    ///
    /// Work queued on `stream` after this sees zeroes. Work on other streams must be ordered
    /// after it (e.g. with an [`Event`](crate::Event) that the other stream waits for); the simple copies
    /// ([`DeviceBuffer::to_vec`], [`DeviceBuffer::copy_from_slice`]) wait for the whole context
    /// and so see it.
    ///
    /// # Errors
    /// [`UsageError::ZeroSize`] for a zero length; [`UsageError::WrongCudaContext`] for a
    /// stream of another context; the driver's error from `cuMemAlloc` (e.g.
    /// `CUDA_ERROR_OUT_OF_MEMORY`) or `cuMemsetD8Async`.
    #[doc(alias = "cuMemAlloc")]
    #[doc(alias = "cuMemsetD8Async")]
    pub fn zeroed_on(ctx: &Arc<Context>, len: usize, stream: &impl AsStream) -> Result<Self> {
        check_same_context(ctx, stream, "the device buffer")?;
        let buf = Self::alloc(ctx, len)?;
        let (raw, bytes) = (buf.raw, buf.byte_len());
        // SAFETY: the stream is live while borrowed and of `ctx` (checked); the allocation is
        // `bytes` long, and freed with cuMemFree, which waits for the work that uses it.
        unsafe {
            ctx.run_now(stream.raw_stream(), "cuMemsetD8Async (not called)", |p| {
                Ok(result::mem::memset_d8_async(raw, 0, bytes, p)?)
            })
        }?;
        Ok(buf)
    }

    /// Gives the allocation up: it is never freed, for work that may still use it (a wait for
    /// that work failed; the caller returns why).
    fn leak(&mut self) {
        self.raw = 0;
    }

    /// Allocates `len` values, uninitialised, with `ctx` bound.
    fn alloc(ctx: &Arc<Context>, len: usize) -> Result<Self> {
        let bytes = allocation_bytes::<T>(len, "a device buffer")?;
        ctx.bind()?;
        let raw = result::mem::alloc(bytes)?;
        Ok(Self {
            ctx: ctx.clone(),
            raw,
            len,
            _t: PhantomData,
        })
    }

    /// Allocates and copies `data` in, as [`DeviceBuffer::copy_from_slice`] does (so the copy
    /// is ordered after all work queued in the context so far, and has finished on return).
    ///
    /// # Errors
    /// [`UsageError::ZeroSize`] for an empty `data`; the driver's error from `cuMemAlloc`
    /// (e.g. `CUDA_ERROR_OUT_OF_MEMORY`), and as [`DeviceBuffer::copy_from_slice`].
    #[doc(alias = "cuMemcpyHtoD")]
    pub fn from_slice(ctx: &Arc<Context>, data: &[T]) -> Result<Self> {
        let mut buf = Self::alloc(ctx, data.len())?;
        buf.copy_from_slice(data)?;
        Ok(buf)
    }

    /// Copies `data` (exactly `len` values) in, after all work queued in the context so far,
    /// and waits until the copy has finished.
    ///
    /// The copy runs on the legacy default stream, which work on
    /// [`NonBlocking`](crate::StreamFlags::NonBlocking) streams is not ordered with. So that a
    /// kernel still running on such a stream does not see the buffer change under it, and one
    /// queued afterwards sees the new contents, this waits for the whole context before and
    /// after the copy (`cuCtxSynchronize`): the host waits for every stream of the context.
    /// [`DeviceBuffer::copy_from_slice_on`] orders the copy on one stream instead.
    ///
    /// # Errors
    /// [`UsageError::SizeMismatch`] for a length mismatch; the driver's error from
    /// `cuCtxSynchronize` (including errors of earlier kernels) or `cuMemcpyHtoD`.
    #[doc(alias = "cuMemcpyHtoD")]
    pub fn copy_from_slice(&mut self, data: &[T]) -> Result<()> {
        self.check_len(data.len())?;
        self.ctx.bind()?;
        result::ctx::synchronize()?;
        // SAFETY: both ranges are `byte_len` long; `T` is plain data. For pageable memory the
        // call returns once `data` has been read (staged), so the borrow may end after it.
        unsafe { result::mem::copy_htod(self.raw, data.as_ptr().cast(), self.byte_len()) }?;
        Ok(result::ctx::synchronize()?)
    }

    /// Queues a copy of `data` (exactly `len` values) in on `stream`, after the work queued on
    /// it so far, and waits until that stream reaches the end of the copy
    /// (`cuStreamSynchronize`; other streams are not waited for).
    ///
    /// # Errors
    /// [`UsageError::SizeMismatch`] for a length mismatch; [`UsageError::WrongCudaContext`] for
    /// a stream of another context; the driver's error from `cuMemcpyHtoDAsync` or
    /// `cuStreamSynchronize` (including errors of earlier kernels on the stream).
    #[doc(alias = "cuMemcpyHtoDAsync")]
    pub fn copy_from_slice_on(&mut self, data: &[T], stream: &impl AsStream) -> Result<()> {
        self.check_len(data.len())?;
        check_same_context(&self.ctx, stream, "the device buffer")?;
        let (raw, bytes) = (self.raw, self.byte_len());
        // SAFETY: the stream is live while borrowed and of this context (checked). In the
        // work: both ranges are `bytes` long; `T` is plain data. `run_borrowing` waits for the
        // copy before the borrow of `data` ends (with no limit on purpose: a wait that gave up
        // would leave the DMA reading a slice the caller may free); in the relaxed capture
        // mode, that wait fails only when the context is lost, and then no DMA runs.
        let copied = unsafe {
            run_borrowing(
                &*self.ctx,
                stream.raw_stream(),
                "cuMemcpyHtoDAsync (not called)",
                |p| {
                    Ok(result::mem::copy_htod_async(
                        raw,
                        data.as_ptr().cast(),
                        bytes,
                        p,
                    )?)
                },
            )
        };
        copied.waited?;
        copied.out
    }

    /// Copies the contents out, after all work queued in the context so far.
    ///
    /// The copy runs on the legacy default stream, which work on
    /// [`NonBlocking`](crate::StreamFlags::NonBlocking) streams is not ordered with, so this
    /// first waits for the whole context (`cuCtxSynchronize`): the host waits for every stream
    /// of the context. [`DeviceBuffer::to_vec_on`] waits for one stream instead.
    ///
    /// # Errors
    /// The driver's error from `cuCtxSynchronize` (including errors of earlier kernels) or
    /// `cuMemcpyDtoH`.
    #[doc(alias = "cuMemcpyDtoH")]
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.ctx.bind()?;
        result::ctx::synchronize()?;
        let mut out = Vec::<T>::with_capacity(self.len);
        // SAFETY: the destination has capacity for `len` values; `T` accepts any bytes; the
        // copy to pageable memory has finished when the call returns.
        unsafe {
            result::mem::copy_dtoh(out.as_mut_ptr().cast(), self.raw, self.byte_len())?;
            out.set_len(self.len);
        }
        Ok(out)
    }

    /// Queues a copy of the contents out on `stream`, after the work queued on it so far, and
    /// waits for it (other streams are not waited for).
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] for a stream of another context; the driver's error
    /// from `cuMemcpyDtoHAsync` or `cuStreamSynchronize` (including errors of earlier kernels
    /// on the stream).
    #[doc(alias = "cuMemcpyDtoHAsync")]
    pub fn to_vec_on(&self, stream: &impl AsStream) -> Result<Vec<T>> {
        check_same_context(&self.ctx, stream, "the device buffer")?;
        let mut out = Vec::<T>::with_capacity(self.len);
        let (dst, raw, bytes) = (out.as_mut_ptr().cast(), self.raw, self.byte_len());
        // SAFETY: the stream is live while borrowed and of this context (checked). In the
        // work: the destination has capacity for `len` values. `run_borrowing` waits for the
        // copy with no limit on purpose, as the copy in does: `out` is freed or handed out
        // only after it.
        let copied = unsafe {
            run_borrowing(
                &*self.ctx,
                stream.raw_stream(),
                "cuMemcpyDtoHAsync (not called)",
                |p| Ok(result::mem::copy_dtoh_async(dst, raw, bytes, p)?),
            )
        };
        if let Err(e) = copied.waited {
            // Whether the copy into `out` still runs is unknown: leak the allocation rather
            // than free memory the DMA may write.
            std::mem::forget(out);
            return Err(e);
        }
        copied.out?;
        // SAFETY: the copy has finished and wrote `len` values; `T` accepts any bytes.
        unsafe { out.set_len(self.len) };
        Ok(out)
    }

    /// Sets every byte to `value`, in stream order.
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] for a stream of another context; the driver's error
    /// from `cuMemsetD8Async`.
    #[doc(alias = "cuMemsetD8Async")]
    pub fn memset_async(&mut self, value: u8, stream: &impl AsStream) -> Result<()> {
        check_same_context(&self.ctx, stream, "the device buffer")?;
        let (raw, bytes) = (self.raw, self.byte_len());
        // SAFETY: the stream is live while borrowed and of this context (checked); the range
        // is the allocation.
        unsafe {
            self.ctx
                .run_now(stream.raw_stream(), "cuMemsetD8Async (not called)", |p| {
                    Ok(result::mem::memset_d8_async(raw, value, bytes, p)?)
                })
        }?;
        Ok(())
    }

    /// The context the memory was allocated in.
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The device address, for kernel arguments: kernels read and write the buffer through it
    /// (why a shared borrow suffices: [Kernels that write it](Self#kernels-that-write-it)).
    pub fn device_ptr(&self) -> DevicePtr<'_> {
        DevicePtr::new(self.raw)
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no values (never true: zero-length buffers are rejected).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The size in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * size_of::<T>()
    }

    fn check_len(&self, given: usize) -> Result<()> {
        if given == self.len {
            Ok(())
        } else {
            Err(UsageError::SizeMismatch {
                what: "the device buffer",
                expected: self.len,
                given,
            }
            .into())
        }
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.raw == 0 {
            // Given up on (`leak`): cuMemAlloc never returns address 0.
            return;
        }
        self.ctx
            .release_in_drop("free device memory", "cuMemFree", || {
                // SAFETY: the allocation came from cuMemAlloc and is not used after this.
                unsafe { result::mem::free(self.raw) }
            });
    }
}
