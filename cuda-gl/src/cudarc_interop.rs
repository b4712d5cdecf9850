//! Interop with [cudarc](https://docs.rs/cudarc) 0.19 (feature `cudarc`): register GL objects in a
//! cudarc context, map them on a cudarc stream, and hand mapped buffers to cudarc as device
//! slices.
//!
//! - [`Context::from_cudarc`](crate::Context::from_cudarc) shares a cudarc
//!   [`CudaContext`]; [`cuda_context_for_current_gl`] makes one on the GPU of the current GL
//!   context.
//! - cudarc's [`CudaStream`] and `Arc<CudaStream>` implement [`AsStream`], so
//!   [`RegisteredBuffer::map`](crate::RegisteredBuffer::map), `RegisteredImage::map` and
//!   [`map_all`](crate::map_all) take them, and the unmap runs on that stream.
//! - [`MappedBuffer::as_cudarc_slice`] and [`MappedBuffer::as_cudarc_slice_mut`] (and, for a
//!   buffer of a batch, [`MappedAll::as_cudarc_slice_mut`]) view a buffer mapped on an `Arc<CudaStream>` as [`MappedView`] /
//!   [`MappedViewMut`]: typed device slices that implement cudarc's [`DevicePtr`],
//!   [`DevicePtrMut`] and [`PushKernelArg`], so cudarc copies into and out of them and passes
//!   them to kernels. They borrow the mapping guard, so they cannot outlive the mapping.
//!
//! Both crates open the driver library at run time (`libcuda.so.1`; cudarc also tries
//! `libcuda.so`, a link to the same file), and the dynamic loader opens one file once per process,
//! so their handles are the same objects: a `CUcontext` or `CUstream` of one is valid in the
//! other.
//!
//! cudarc needs exactly one CUDA version feature (such as `cuda-12000`), which the application's
//! own `cudarc` dependency selects; cuda-gl selects none, so the two never conflict.
//!
//! The whole flow is in `cuda-gl/examples/cudarc_interop.rs`.

use crate::context::Context;
use crate::device::{GlDeviceList, gl_devices};
use crate::error::{Error, Result, UsageError};
use crate::graphics::{MappedAll, MappedBuffer, Surface, SurfaceObject, Tex, TexObject, ViewSet};
use crate::memory::DeviceCopy;
use crate::result::CudaError;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use cudarc::driver::sys as rc;
use cudarc::driver::{
    CudaContext, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice, DriverError,
    LaunchArgs, PushKernelArg, SyncOnDrop,
};
mod array_copy;
#[cfg(all(test, feature = "egl"))]
pub(crate) mod event_tests;
mod memory;
mod read;
#[cfg(all(test, feature = "egl"))]
mod unordered_tests;

pub use memory::{CudarcDest, CudarcSource};
pub(crate) use read::CudarcRead;
use std::marker::PhantomData;
use std::sync::Arc;

// SAFETY: the handle is the stream's own, valid for as long as the stream is borrowed (cudarc
// destroys owned streams only in Drop), and belongs to the stream's context.
unsafe impl AsStream for CudaStream {
    fn raw_stream(&self) -> sys::CUstream {
        self.cu_stream().cast()
    }
    fn raw_context(&self) -> sys::CUcontext {
        self.context().cu_ctx().cast()
    }
}

// SAFETY: as for `CudaStream`, which the `Arc` keeps alive while borrowed; `as_any`
// returns this very stream.
unsafe impl AsStream for Arc<CudaStream> {
    fn raw_stream(&self) -> sys::CUstream {
        self.cu_stream().cast()
    }
    fn raw_context(&self) -> sys::CUcontext {
        self.context().cu_ctx().cast()
    }
    fn as_any(&self, _: crate::stream::adapter::Token) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl Context {
    /// Shares the context of a cudarc [`CudaContext`]: GL resources registered in the returned
    /// `Context` live in cudarc's context, so cudarc's streams can map them and cudarc's kernels
    /// can use them.
    ///
    /// The returned `Context` holds a clone of the `Arc`, so the cudarc context stays alive for as
    /// long as anything of cuda-gl uses it. It adds no retain of its own: the cudarc context's
    /// retain of the primary context (or its ownership of a non-primary one) is the only one, and
    /// cudarc releases it when its last `Arc` goes, after the cuda-gl handles.
    ///
    /// The context is bound to the calling thread and checked: cuda-gl's driver library must see
    /// it as a context of the device cudarc reports, which holds when both opened the same
    /// `libcuda.so.1` (both load it by that name or `libcuda.so`).
    ///
    /// # Errors
    /// [`Error::Load`] without a driver; [`Error::InvalidArgument`] for a destroyed cudarc
    /// context (no `CUcontext`); [`Error::DriverLibraryMismatch`] when the context belongs to
    /// another device in cuda-gl's driver (two different driver libraries were loaded); the
    /// driver's error from `cuCtxSetCurrent` or `cuCtxGetDevice`.
    #[doc(alias = "cuCtxGetDevice")]
    pub fn from_cudarc(cudarc: &Arc<CudaContext>) -> Result<Arc<Context>> {
        let raw: sys::CUcontext = cudarc.cu_ctx().cast();
        if raw.is_null() {
            return Err(Error::InvalidArgument(
                "the cudarc context has no CUcontext handle (it was destroyed).\nhelp: pass a \
                 live CudaContext"
                    .into(),
            ));
        }
        // SAFETY: (1) cudarc's live context, which the owner (a clone of its `Arc`) keeps alive:
        // cudarc releases it only when its last `Arc` goes.
        unsafe { Context::from_raw_shared(raw, cudarc.cu_device(), Box::new(cudarc.clone())) }
    }

    /// The cudarc context this one shares, when it was made by [`Context::from_cudarc`].
    pub fn cudarc_context(&self) -> Option<&Arc<CudaContext>> {
        self.owner()?.downcast_ref()
    }
}

/// A cudarc error becomes [`Error::Cuda`], with the call named `cudarc`.
impl From<DriverError> for Error {
    fn from(e: DriverError) -> Self {
        Error::Cuda(CudaError::new("cudarc", sys::CUresult(e.0 as u32)))
    }
}

/// A cudarc context on the first CUDA device behind the GL context current on this thread: the
/// context to register that GL context's objects in (through
/// [`Context::from_cudarc`](crate::Context::from_cudarc)). It retains the device's primary
/// context, like `CudaContext::new`.
///
/// # Errors
/// As [`gl_devices`]; [`Error::NotNvidiaGl`] when the GL context is on no CUDA device; cudarc's
/// error from `CudaContext::new`.
pub fn cuda_context_for_current_gl() -> Result<Arc<CudaContext>> {
    let devices = gl_devices(GlDeviceList::All)?;
    let Some(device) = devices.first() else {
        return Err(Error::NotNvidiaGl {
            source: CudaError::new("cuGLGetDevices", sys::CUresult::CUDA_ERROR_NO_DEVICE),
        });
    };
    Ok(CudaContext::new(device.ordinal())?)
}

/// The number of `T` in `bytes` bytes at `address`, when they fit exactly and aligned.
fn element_count<T>(address: u64, bytes: usize) -> Result<usize> {
    let (size, align) = (size_of::<T>(), align_of::<T>());
    if size == 0 || !bytes.is_multiple_of(size) || !address.is_multiple_of(align as u64) {
        return Err(Error::SliceLayout {
            type_name: std::any::type_name::<T>(),
            type_size: size,
            type_align: align,
            bytes,
            address,
        });
    }
    Ok(bytes / size)
}

/// The cudarc stream a mapping was made on, found through the stream object the guard kept
/// ([`AsStream::as_any`]), and checked to be the stream of handle `raw`.
fn cudarc_stream_of(
    object: Option<&dyn std::any::Any>,
    raw: sys::CUstream,
    ctx: sys::CUcontext,
) -> Result<&Arc<CudaStream>> {
    // Both the handle and the context: the special handles (null, legacy, per-thread) are the
    // same value in every context.
    object
        .and_then(|o| o.downcast_ref::<Arc<CudaStream>>())
        .filter(|s| {
            s.cu_stream().cast::<std::ffi::c_void>() == raw.cast()
                && s.context().cu_ctx().cast::<std::ffi::c_void>() == ctx.cast()
        })
        .ok_or_else(|| UsageError::NeedsCudarcStream.into())
}

/// Orders work about to be queued on `stream` with the mapping on `mapped_on`.
///
/// On another stream the work first waits for the map (an event). On every stream the returned
/// guard synchronizes `stream` when cudarc drops it, right after queuing the work: the work is
/// finished before the view can be dropped and the mapping unmapped, and a capture still open
/// then (which took the work instead of running it) is invalidated, since synchronizing a
/// capturing stream is illegal: its `end_capture` fails and no graph holds the mapping's
/// address. A stream that captures already has its capture invalidated here, before cudarc
/// queues anything (cudarc's call then fails). The driver is called directly, not through
/// cudarc, whose calls report (and so consume) errors recorded on its context first.
fn order_on<'s>(mapped_on: &CudaStream, stream: &'s CudaStream) -> SyncOnDrop<'s> {
    let bound = bind_raw(stream);
    let capturing = |s: &CudaStream| {
        // SAFETY: a live cudarc stream of the context bound above (both streams are of the
        // view's context, checked when the view was made).
        bound.is_err()
            || unsafe { crate::result::stream::is_capturing(s.cu_stream().cast()) }.unwrap_or(true)
    };
    for s in [stream, mapped_on] {
        if capturing(s) {
            // SAFETY: a live stream; the error is the point (illegal during a capture, which it
            // invalidates).
            let _ = unsafe { crate::result::stream::synchronize(s.cu_stream().cast()) };
        }
    }
    if stream.cu_stream() != mapped_on.cu_stream() || stream.context() != mapped_on.context() {
        let waited = mapped_on
            .record_event(None)
            .and_then(|event| stream.wait(&event));
        if waited.is_err() {
            // The work cannot wait for the map on the GPU: the map is finished first, with no
            // limit on purpose: cudarc's `device_ptr` cannot fail, so a wait that gave up would
            // let the work run before the map (and only work queued on the guard's own stream
            // before the map holds it up).
            // SAFETY: a live stream of the bound context.
            let _ = unsafe { crate::result::stream::synchronize(mapped_on.cu_stream().cast()) };
        }
    }
    SyncOnDrop::sync_stream(stream)
}

/// Binds the context of cudarc stream `s` through cuda-gl's own driver calls.
fn bind_raw(s: &CudaStream) -> Result<()> {
    // SAFETY: the context of a live cudarc stream is live while the stream is.
    Ok(unsafe { crate::result::ctx::set_current(s.context().cu_ctx().cast()) }?)
}

/// A mapped GL buffer viewed as a cudarc device slice of `T`, borrowed from the mapping guard:
/// [`MappedView`] (read-only, from [`MappedBuffer::as_cudarc_slice`]) or [`MappedViewMut`]
/// (writable, from [`MappedBuffer::as_cudarc_slice_mut`]); `A` is [`ReadOnly`] or
/// [`ReadWrite`].
///
/// It implements cudarc's [`DevicePtr`] (so `stream.clone_dtoh(&view)` and `memcpy_dtod` read
/// it) and [`PushKernelArg`] (`builder.arg(&view)` passes its address); the writable one also
/// [`DevicePtrMut`], so `stream.memcpy_htod(&data, &mut view)`, `memset_zeros` and
/// `memcpy_dtod` write it, and `builder.arg(&mut view)` passes it to a kernel. Copies on another
/// stream of the same context wait for the map and finish before they return. A kernel must be
/// launched on the stream the buffer was mapped on: cudarc's `launch` is `unsafe`, and that is
/// one of its conditions here, as the launch builder does not say which stream it is for.
///
/// Neither `Send` nor `Sync`, like the guard it borrows.
#[derive(Debug)]
pub struct MappedSlice<'a, T, A> {
    ptr: rc::CUdeviceptr,
    len: usize,
    stream: &'a Arc<CudaStream>,
    _data: PhantomData<SliceMarker<'a, T, A>>,
}

/// What a [`MappedSlice`] holds without storing: elements of `T` borrowed for `'a`, its access
/// `A`, and a raw pointer, so that it is neither `Send` nor `Sync`.
type SliceMarker<'a, T, A> = (&'a mut [T], fn() -> A, *const ());

/// The access of a [`MappedView`]: reads only.
#[derive(Debug)]
pub enum ReadOnly {}

/// The access of a [`MappedViewMut`]: reads and writes.
#[derive(Debug)]
pub enum ReadWrite {}

/// A mapped GL buffer viewed as a read-only cudarc device slice of `T` ([`MappedSlice`]).
pub type MappedView<'a, T> = MappedSlice<'a, T, ReadOnly>;

/// A mapped GL buffer viewed as a writable cudarc device slice of `T` ([`MappedSlice`]),
/// borrowed mutably from the mapping guard.
pub type MappedViewMut<'a, T> = MappedSlice<'a, T, ReadWrite>;

impl<'a, T, A> MappedSlice<'a, T, A> {
    /// The view of the `size` bytes at `ptr`, mapped on `stream`.
    ///
    /// # Errors
    /// [`Error::SliceLayout`] when `size` is not a multiple of `size_of::<T>()` or `ptr` is not
    /// aligned for `T`.
    fn new(ptr: rc::CUdeviceptr, size: usize, stream: &'a Arc<CudaStream>) -> Result<Self> {
        Ok(Self {
            ptr,
            len: element_count::<T>(ptr, size)?,
            stream,
            _data: PhantomData,
        })
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements (never: a mapped buffer has at least one byte).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The cudarc stream the buffer was mapped on.
    pub fn stream(&self) -> &'a Arc<CudaStream> {
        self.stream
    }
}

impl<T, A> DeviceSlice<T> for MappedSlice<'_, T, A> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.stream
    }
}

impl<T, A> DevicePtr<T> for MappedSlice<'_, T, A> {
    fn device_ptr<'s>(&'s self, stream: &'s CudaStream) -> (rc::CUdeviceptr, SyncOnDrop<'s>) {
        (self.ptr, order_on(self.stream, stream))
    }
}

impl<T> MappedViewMut<'_, T> {
    /// A read-only view of the same elements, borrowed from this one.
    pub fn as_view(&self) -> MappedView<'_, T> {
        MappedSlice {
            ptr: self.ptr,
            len: self.len,
            stream: self.stream,
            _data: PhantomData,
        }
    }
}

impl<T> DevicePtrMut<T> for MappedViewMut<'_, T> {
    fn device_ptr_mut<'s>(
        &'s mut self,
        stream: &'s CudaStream,
    ) -> (rc::CUdeviceptr, SyncOnDrop<'s>) {
        (self.ptr, order_on(self.stream, stream))
    }
}

// SAFETY: pushes the address of `arg.ptr`, a `CUdeviceptr` (a `u64`, which cudarc passes by
// reference itself) that lives for `'b`, which outlives the launch builder `'a`; the kernel gets
// the buffer's device address, as for cudarc's own views.
unsafe impl<'a, 'b: 'a, 'c: 'b, T, A> PushKernelArg<&'b MappedSlice<'c, T, A>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b MappedSlice<'c, T, A>) -> &mut Self {
        <Self as PushKernelArg<&'b rc::CUdeviceptr>>::arg(self, &arg.ptr)
    }
}

// SAFETY: as for `&MappedSlice`; the mutable borrow keeps other views of the mapping from
// being passed at the same time.
unsafe impl<'a, 'b: 'a, 'c: 'b, T> PushKernelArg<&'b mut MappedViewMut<'c, T>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b mut MappedViewMut<'c, T>) -> &mut Self {
        <Self as PushKernelArg<&'b rc::CUdeviceptr>>::arg(self, &arg.ptr)
    }
}

impl<'m> MappedBuffer<'m> {
    /// Views the mapped buffer as a read-only cudarc device slice of `T`, for as long as this
    /// guard is borrowed. The buffer must have been mapped on an `Arc<cudarc::driver::CudaStream>`.
    ///
    /// # Errors
    /// [`Error::SliceLayout`] when the buffer's size is not a multiple of `size_of::<T>()` or its
    /// address is not aligned for `T`; [`UsageError::NeedsCudarcStream`] when it was mapped on a
    /// stream that is not an `Arc<CudaStream>`.
    ///
    /// # Safety
    /// cudarc's copies and memsets take the view through its `DevicePtr` traits and queue the
    /// work themselves, so cuda-gl cannot queue it on a stream only it reaches:
    /// 1. No thread begins *and ends* a CUDA graph capture on the stream of a cudarc call that
    ///    uses the view while that call runs (a graph ended then would hold the mapping's
    ///    address, for a launch after the unmap). A capture that is still open when the call
    ///    returns is invalidated by cuda-gl (the view synchronizes its stream), and one open
    ///    before the call is refused.
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    pub unsafe fn as_cudarc_slice<T: DeviceCopy>(&self) -> Result<MappedView<'_, T>> {
        let stream = cudarc_stream_of(self.stream_any(), self.raw_stream(), self.context().raw())?;
        MappedView::new(self.device_ptr().as_raw(), self.size(), stream)
    }

    /// Views the mapped buffer as a writable cudarc device slice of `T`, for as long as this
    /// guard is borrowed mutably. The buffer must have been mapped on an
    /// `Arc<cudarc::driver::CudaStream>`.
    ///
    /// # Errors
    /// As [`MappedBuffer::as_cudarc_slice`]; [`UsageError::ReadOnlyMapping`] when the buffer was
    /// registered or mapped read-only (CUDA must not write it).
    ///
    /// # Safety
    /// cudarc's copies and memsets take the view through its `DevicePtr` traits and queue the
    /// work themselves, so cuda-gl cannot queue it on a stream only it reaches:
    /// 1. No thread begins *and ends* a CUDA graph capture on the stream of a cudarc call that
    ///    uses the view while that call runs (a graph ended then would hold the mapping's
    ///    address, for a launch after the unmap). A capture that is still open when the call
    ///    returns is invalidated by cuda-gl (the view synchronizes its stream), and one open
    ///    before the call is refused.
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    pub unsafe fn as_cudarc_slice_mut<T: DeviceCopy>(&mut self) -> Result<MappedViewMut<'_, T>> {
        self.check_writable("a mutable cudarc view")?;
        let stream = cudarc_stream_of(self.stream_any(), self.raw_stream(), self.context().raw())?;
        MappedViewMut::new(self.device_ptr().as_raw(), self.size(), stream)
    }
}

impl<'a, V: ViewSet<'a>> MappedAll<'a, V> {
    /// Views the buffer that `pick` chooses among the batch's views (e.g. `|v| &v.0`) as a
    /// writable cudarc device slice of `T`, for as long as the batch is borrowed mutably (so one
    /// writable view at a time). A read-only view needs no method of the batch:
    /// [`MappedBuffer::as_cudarc_slice`] of the buffer's view. The batch must have been mapped
    /// on an `Arc<cudarc::driver::CudaStream>`.
    ///
    /// # Errors
    /// [`UsageError::NotOfThisBatch`] when `pick` returns a buffer that is not of this batch; otherwise as [`MappedBuffer::as_cudarc_slice_mut`].
    ///
    /// # Safety
    /// cudarc's copies and memsets take the view through its `DevicePtr` traits and queue the
    /// work themselves, so cuda-gl cannot queue it on a stream only it reaches:
    /// 1. No thread begins *and ends* a CUDA graph capture on the stream of a cudarc call that
    ///    uses the view while that call runs (a graph ended then would hold the mapping's
    ///    address, for a launch after the unmap). A capture that is still open when the call
    ///    returns is invalidated by cuda-gl (the view synchronizes its stream), and one open
    ///    before the call is refused.
    #[cfg_attr(docsrs, doc(cfg(feature = "cudarc")))]
    pub unsafe fn as_cudarc_slice_mut<T: DeviceCopy>(
        &mut self,
        pick: impl for<'v> FnOnce(&'v V) -> &'v MappedBuffer<'a>,
    ) -> Result<MappedViewMut<'_, T>> {
        let buffer = pick(self.views());
        if !self.holds(buffer.resource_raw()) || buffer.raw_stream() != self.raw_stream() {
            return Err(UsageError::NotOfThisBatch {
                what: "mutable cudarc view",
            }
            .into());
        }
        buffer.check_writable("a mutable cudarc view")?;
        let ctx = buffer.context().raw();
        let stream = cudarc_stream_of(buffer.stream_any(), buffer.raw_stream(), ctx)?;
        MappedViewMut::new(buffer.device_ptr().as_raw(), buffer.size(), stream)
    }
}

// cuda-gl's kernel arguments as cudarc kernel arguments: `launch_builder(&f).arg(&surface)`.
// cudarc passes a `DeviceRepr` value by reference to its bytes, which the driver copies as the
// parameter; the launch itself stays `unsafe` in cudarc, and its conditions (the handle's
// mapping outlives the kernel's work, on the map's stream or ordered before the unmap) are the
// caller's, as for `Function::launch`.

// SAFETY: `Surface` is `repr(transparent)` over a `CUsurfObject` (a `u64`): its bytes are the
// `cudaSurfaceObject_t` a kernel takes. Its lifetime ties it to the mapping.
unsafe impl DeviceRepr for Surface<'_> {}
// SAFETY: as for `Surface`, over a `CUtexObject` (`cudaTextureObject_t`).
unsafe impl DeviceRepr for Tex<'_> {}
// SAFETY: `DevicePtr` is `repr(transparent)` over a `CUdeviceptr` (a `u64`): the address a
// kernel's pointer parameter takes.
unsafe impl DeviceRepr for crate::memory::DevicePtr<'_> {}

// SAFETY: pushes the address of `arg.raw`, a `CUsurfObject` (a `u64`, passed by reference as
// cudarc does for its own values) that lives for `'b`, which outlives the launch builder `'a`.
unsafe impl<'a, 'b: 'a, 'c: 'b> PushKernelArg<&'b SurfaceObject<'c>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b SurfaceObject<'c>) -> &mut Self {
        <Self as PushKernelArg<&'b u64>>::arg(self, &arg.raw)
    }
}

// SAFETY: as for `&SurfaceObject`, with a `CUtexObject`.
unsafe impl<'a, 'b: 'a, 'c: 'b> PushKernelArg<&'b TexObject<'c>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b TexObject<'c>) -> &mut Self {
        <Self as PushKernelArg<&'b u64>>::arg(self, &arg.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size, alignment, byte count and address of the `SliceLayout` error that
    /// `element_count::<T>` returns, or `None` when it accepts the layout.
    fn refused<T>(address: u64, bytes: usize) -> Option<(usize, usize, usize, u64)> {
        match element_count::<T>(address, bytes) {
            Err(Error::SliceLayout {
                type_size,
                type_align,
                bytes,
                address,
                ..
            }) => Some((type_size, type_align, bytes, address)),
            _ => None,
        }
    }

    #[test]
    fn element_count_checks_size_and_alignment() {
        assert_eq!(element_count::<u32>(0x1000, 64).ok(), Some(16));
        assert_eq!(element_count::<u8>(0x1001, 3).ok(), Some(3));
        assert_eq!(element_count::<[f32; 4]>(0x1000, 32).ok(), Some(2));
        assert_eq!(refused::<u32>(0x1000, 10), Some((4, 4, 10, 0x1000)));
        assert_eq!(refused::<u64>(0x1004, 16), Some((8, 8, 16, 0x1004)));
        let text = element_count::<u64>(0x1004, 16)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(text.contains("help:") && text.contains("u64"), "{text}");
    }

    #[test]
    fn driver_errors_keep_their_code() {
        let e = Error::from(DriverError(rc::CUresult::CUDA_ERROR_INVALID_VALUE));
        assert_eq!(e.code(), Some(sys::CUresult::CUDA_ERROR_INVALID_VALUE));
        assert!(matches!(&e, Error::Cuda(c) if c.call == "cudarc"));
    }
}
