//! Device memory shown on a target in one call, the same for every kind of target (GL's
//! [`DisplayTarget`](super::DisplayTarget), wgpu's `WgpuTarget`): the image is copied into a
//! frame, or mapped into one through the target's colour map, and the frame presented.

use super::colormap::{ColorMap, Mapper};
use super::mode::Frame;
use crate::context::Context;
use crate::error::{Result, UsageError};
use crate::image::{DeviceImage, Format, Layout};
use crate::memory::DevicePtr;
use crate::queue::{AfterWork, then};
use crate::result;
use crate::source::{ShowSource, memory_of};
use crate::stream::{AsStream, check_same_context};
use crate::video::{ColorSpace, Converter, VideoFrame, VideoLayout};
use cuda_gl_sys as sys;
use std::sync::Arc;

mod methods;
pub(crate) use methods::show_methods;

/// A stream found to be of a target's CUDA context ([`check_stream`]): what a show passes on
/// instead of checking it again.
#[derive(Debug)]
pub(crate) struct CheckedStream<'s, S: AsStream>(pub(crate) &'s S);

impl<S: AsStream> Clone for CheckedStream<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: AsStream> Copy for CheckedStream<'_, S> {}

/// Refuses `stream` unless it is of `ctx`, a target's CUDA context.
///
/// # Errors
/// [`UsageError::WrongCudaContext`].
fn check_stream<'s, S: AsStream>(
    ctx: &Arc<Context>,
    stream: &'s S,
) -> Result<CheckedStream<'s, S>> {
    check_same_context(ctx, stream, "the display target")?;
    Ok(CheckedStream(stream))
}

/// Refuses a buffer or a stream of another context than `ctx`, a target's; the buffer's first
/// byte and length.
///
/// # Errors
/// [`UsageError::WrongCudaContext`].
fn check_buffer<'a, 's, Src: ShowSource + ?Sized, S: AsStream>(
    ctx: &Arc<Context>,
    src: &'a Src,
    stream: &'s S,
) -> Result<(DevicePtr<'a>, usize, CheckedStream<'s, S>)> {
    let (ptr, bytes, owner) = memory_of(src);
    if owner.raw() != ctx.raw() {
        return Err(UsageError::WrongCudaContext {
            what: "device buffer",
            owner: "the display target".into(),
        }
        .into());
    }
    Ok((ptr, bytes, check_stream(ctx, stream)?))
}

/// The kernels of a target's shows, each loaded in the target's context when first needed and
/// kept across resizes: the colour map of one-channel images, and the video conversion.
#[derive(Debug, Default)]
pub(crate) struct Kernels {
    mapper: Option<Mapper>,
    video: Option<Converter>,
}

impl Kernels {
    /// Sets `map` (loading the kernel in `ctx` the first time one is set).
    ///
    /// # Errors
    /// [`DisplayError::ColorMapRange`](crate::display::DisplayError::ColorMapRange) for a map
    /// whose range is not finite and increasing; the driver's errors loading the kernel.
    pub(crate) fn set(&mut self, ctx: &Arc<Context>, map: Option<ColorMap>) -> Result<()> {
        if let Some(map) = &map {
            map.check()?;
        }
        match &mut self.mapper {
            Some(mapper) => mapper.map = map,
            None if map.is_some() => self.mapper = Some(Mapper::load(ctx, map)?),
            None => {}
        }
        Ok(())
    }

    /// The map set.
    pub(crate) fn map(&self) -> Option<ColorMap> {
        self.mapper.as_ref().and_then(|m| m.map)
    }

    /// The video converter, loaded in `ctx` at the first call.
    fn converter(&mut self, ctx: &Arc<Context>) -> Result<Converter> {
        match self.video.take() {
            Some(converter) => Ok(converter),
            None => Converter::load(ctx),
        }
    }
}

/// What a show needs of a target.
pub(crate) trait ShowTarget {
    /// The target's CUDA context.
    fn cuda(&self) -> &Arc<Context>;

    /// Gives the target `layout`'s size and format, tightly packed (nothing when it has them).
    ///
    /// # Errors
    /// The target's errors of making its objects anew.
    fn reconfigure(&mut self, layout: Layout) -> Result<()>;

    /// Begins a frame on a stream of the target's context.
    ///
    /// # Errors
    /// The mode's.
    fn begin<'t, S: AsStream>(&'t mut self, stream: CheckedStream<'t, S>) -> Result<Frame<'t, S>>;

    /// Puts the frames presented so far on the texture (a mode whose presents lag).
    ///
    /// # Errors
    /// The mode's.
    fn flush(&mut self) -> Result<()>;

    /// The target's colour map.
    fn kernels(&mut self) -> &mut Kernels;
}

/// A target's `frame`: begins a frame on `stream`, refused unless it is of the target's
/// context.
///
/// # Errors
/// [`UsageError::WrongCudaContext`]; as the target's `begin`.
pub(crate) fn frame<'t, S: AsStream>(
    target: &'t mut impl ShowTarget,
    stream: &'t S,
) -> Result<Frame<'t, S>> {
    let stream = check_stream(target.cuda(), stream)?;
    target.begin(stream)
}

/// A target's `show` of a [`ShowSource`].
///
/// # Errors
/// [`UsageError::WrongCudaContext`] for a buffer or stream of another context; as
/// [`show_given`].
pub(crate) fn show_buffer<Src: ShowSource + ?Sized>(
    target: &mut impl ShowTarget,
    src: &Src,
    layout: Layout,
    stream: &impl AsStream,
) -> Result<()> {
    let (ptr, bytes, stream) = check_buffer(target.cuda(), src, stream)?;
    let image = DeviceImage::new(ptr, layout);
    // SAFETY: (1) the buffer holds `bytes` bytes of this context (checked), borrowed until
    // the copy has been queued before a present that the caller's stream orders after it;
    // freeing the buffer waits for the copies that read it.
    unsafe { show_given(target, image, bytes, stream, None) }
}

/// A target's `show_cudarc`: `src` through cudarc's read tracking ([`read_cudarc`]).
///
/// # Errors
/// As [`read_cudarc`]; as [`show_given`].
#[cfg(feature = "cudarc")]
pub(crate) fn show_cudarc<T, Src: crate::cudarc_interop::CudarcSource<T>>(
    target: &mut impl ShowTarget,
    src: &Src,
    layout: Layout,
    stream: &Arc<cudarc::driver::CudaStream>,
) -> Result<()> {
    let fits = |bytes| layout.check_fits("the device memory", bytes);
    read_cudarc(
        target,
        src,
        stream,
        fits,
        |target, ptr, bytes, checked, after| {
            // SAFETY: (1) `ptr` is the first of `bytes` bytes of device memory of the target's
            // context, which cudarc neither frees nor writes before `after` runs (`read_cudarc`).
            unsafe { show_given(target, DeviceImage::new(ptr, layout), bytes, checked, after) }
        },
    )
}

/// A target's `show_video_cudarc`: the frame at the start of `src`, through cudarc's read
/// tracking ([`read_cudarc`]).
///
/// # Errors
/// As [`read_cudarc`];
/// [`VideoError::FrameTooSmall`](crate::video::VideoError::FrameTooSmall) when `src` holds
/// fewer bytes than `layout` spans; as [`show_video_given`].
#[cfg(feature = "cudarc")]
pub(crate) fn show_video_cudarc<T, Src: crate::cudarc_interop::CudarcSource<T>>(
    target: &mut impl ShowTarget,
    src: &Src,
    layout: VideoLayout,
    color: ColorSpace,
    stream: &Arc<cudarc::driver::CudaStream>,
) -> Result<()> {
    let fits = |bytes| layout.check_fits("show_video_cudarc", "the cudarc memory", bytes);
    read_cudarc(
        target,
        src,
        stream,
        fits,
        |target, ptr, _, checked, after| {
            let frame = VideoFrame::new(ptr, layout);
            // SAFETY: (1) the frame lies in the bytes at `ptr` (`fits`, checked by `read_cudarc`),
            // device memory of the target's context, which cudarc neither frees nor writes before
            // `after` runs (`read_cudarc`), right after the conversion, in its run.
            unsafe { show_video_given(target, &frame, color, checked, after) }
        },
    )
}

/// `show` given cudarc memory `src` read on `stream`: its first byte, its length in bytes, the
/// stream checked, and the [`AfterWork`] that records cudarc's read event, which `show` must
/// run right after the work that reads the memory, in its run (as `show_given` and
/// `show_video_given` do). Then what is left of cudarc's guard (`CudarcRead::done`). `fits`
/// refuses memory of too few bytes before cudarc is asked for its address (see
/// `CudarcRead::new`).
///
/// # Errors
/// [`UsageError::WrongCudaContext`] when `stream` is not of the target's context or `src` is
/// not of `stream`'s cudarc context (checked before cudarc is asked for anything: its read
/// queues a wait on `stream`); [`UsageError::TooLarge`](crate::UsageError::TooLarge); `fits`'s;
/// `show`'s; then the timeout or driver's error of `CudarcRead::done`'s fallback wait, which
/// comes after the frame was shown (when `show` failed too, `show`'s error is returned).
#[cfg(feature = "cudarc")]
fn read_cudarc<T, Src, Tg>(
    target: &mut Tg,
    src: &Src,
    stream: &Arc<cudarc::driver::CudaStream>,
    fits: impl FnOnce(usize) -> Result<()>,
    show: impl FnOnce(
        &mut Tg,
        DevicePtr<'_>,
        usize,
        CheckedStream<'_, Arc<cudarc::driver::CudaStream>>,
        AfterWork<'_>,
    ) -> Result<()>,
) -> Result<()>
where
    Src: crate::cudarc_interop::CudarcSource<T>,
    Tg: ShowTarget,
{
    let checked = check_stream(target.cuda(), stream)?;
    let owner = "the display target";
    let mut read = crate::cudarc_interop::CudarcRead::new(src, stream, owner, fits)?;
    let (ptr, bytes) = (read.ptr, read.bytes);
    let mut record = |p| read.record(p);
    let shown = show(target, ptr, bytes, checked, Some(&mut record));
    read.done(target.cuda(), shown)
}

/// A target's `show_raw`: `src` in memory that holds its image, on a stream refused unless it
/// is of the target's context.
///
/// # Safety
/// 1. `src.ptr()` points to `src.layout().bytes()` bytes of device memory of the target's CUDA
///    context, which stay allocated and are not written until the work queued on `stream`
///    before this returns has run.
///
/// # Errors
/// [`UsageError::WrongCudaContext`]; as [`show_given`].
pub(crate) unsafe fn show_raw(
    target: &mut impl ShowTarget,
    src: DeviceImage<'_>,
    stream: &impl AsStream,
) -> Result<()> {
    let stream = check_stream(target.cuda(), stream)?;
    let given = src.layout().bytes();
    // SAFETY: (1), forwarded: the memory holds the image's bytes.
    unsafe { show_given(target, src, given, stream, None) }
}

/// Shows `src`, in memory known to hold `given` bytes, which the image must fit in, on a
/// stream checked already; `after` runs right after the work that reads `src`, in its run
/// (see [`AfterWork`]).
///
/// # Safety
/// 1. `src.ptr()` points to `given` bytes of device memory of the target's CUDA context,
///    which stay allocated and are not written until the work queued on `stream` before this
///    returns has run.
///
/// # Errors
/// [`DisplayError::PitchedSource`](crate::display::DisplayError::PitchedSource) when the image
/// does not fit in `given` bytes; as [`present_filled`]; for an image mapped through a colour
/// map, the driver's error launching cuda-gl's kernel.
unsafe fn show_given<S: AsStream>(
    target: &mut impl ShowTarget,
    src: DeviceImage<'_>,
    given: usize,
    stream: CheckedStream<'_, S>,
    after: AfterWork<'_>,
) -> Result<()> {
    let layout = src.layout();
    layout.check_fits("the device memory", given)?;
    let mapped = layout.packed_as(Format::Rgba8)?;
    let kernels = target.kernels();
    if layout.format().one_channel()
        && let Some(map) = kernels.map()
        && let Some(mapper) = kernels.mapper.take()
    {
        // Out of the target while it is borrowed for the frame; put back whatever happens.
        let shown = present_filled(target, mapped, stream, |dst| {
            // SAFETY: `src` holds its image until the work queued on `stream` has run (the
            // caller's (1), and it fits: checked); `dst` is the frame's pixels, RGBA8 of
            // `src`'s size, written only by this kernel until the present and live until the
            // kernel has run (`present_filled`); `stream` is of the mapper's context (the
            // target's).
            unsafe { mapper.draw(&map, &src, dst, stream.0, after) }
        });
        target.kernels().mapper = Some(mapper);
        return shown;
    }
    let ctx = target.cuda().clone();
    present_filled(target, layout.packed_as(layout.format())?, stream, |dst| {
        let copy = sys::CUDA_MEMCPY2D {
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcDevice: src.ptr().as_raw(),
            srcPitch: layout.pitch(),
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstDevice: dst.ptr().as_raw(),
            dstPitch: dst.layout().pitch(),
            WidthInBytes: layout.row_bytes(),
            Height: layout.height() as usize,
            ..Default::default()
        };
        // SAFETY: the stream is live while borrowed and of this context (checked). In the
        // work: the source holds the image ((1), and it fits: checked); the destination is the
        // frame's pixels, rows of `row_bytes` bytes `dst`'s pitch apart (`present_filled` gave
        // the target this size and format), live until the copy has run (`present_filled`).
        unsafe {
            let work = |p| Ok(result::array::copy_2d_async(&copy, p)?);
            ctx.run_now(
                stream.0.raw_stream(),
                "cuMemcpy2DAsync (not called)",
                then(work, after),
            )
        }
    })
}

/// A target's `show_video` of a frame at the start of a [`ShowSource`].
///
/// # Errors
/// [`UsageError::WrongCudaContext`] for a buffer or stream of another context;
/// [`VideoError::FrameTooSmall`](crate::video::VideoError::FrameTooSmall) when `src` holds
/// fewer bytes than `layout` spans; as [`show_video_given`].
pub(crate) fn show_video_buffer<Src: ShowSource + ?Sized>(
    target: &mut impl ShowTarget,
    src: &Src,
    layout: VideoLayout,
    color: ColorSpace,
    stream: &impl AsStream,
) -> Result<()> {
    let (ptr, bytes, stream) = check_buffer(target.cuda(), src, stream)?;
    layout.check_fits("show_video", "the device buffer", bytes)?;
    let frame = VideoFrame::new(ptr, layout);
    // SAFETY: (1) the frame lies in the buffer (checked), of this context (checked), borrowed
    // until the conversion has been queued in the caller's stream order; freeing the buffer
    // waits for the work that reads it.
    unsafe { show_video_given(target, &frame, color, stream, None) }
}

/// A target's `show_video_raw`: `src` on a stream refused unless it is of the target's
/// context.
///
/// # Safety
/// 1. As [`show_video_given`]'s (1).
///
/// # Errors
/// [`UsageError::WrongCudaContext`]; as [`show_video_given`].
pub(crate) unsafe fn show_video_raw(
    target: &mut impl ShowTarget,
    src: &VideoFrame<'_>,
    color: ColorSpace,
    stream: &impl AsStream,
) -> Result<()> {
    let stream = check_stream(target.cuda(), stream)?;
    // SAFETY: (1), forwarded.
    unsafe { show_video_given(target, src, color, stream, None) }
}

/// Shows `src`, an NV12 or P010 frame, converted into RGBA8 under `color` on the GPU (the
/// target takes the frame's size and RGBA8), on a stream checked already; `after` runs right
/// after the conversion, in its run (see [`AfterWork`]).
///
/// # Safety
/// 1. As [`Converter::convert`]'s (1): `src` lies in device memory of the target's context,
///    allocated and not written until the work queued on `stream` before this returns has run.
///
/// # Errors
/// As [`present_filled`]; the driver's errors loading and launching the conversion kernel.
unsafe fn show_video_given<S: AsStream>(
    target: &mut impl ShowTarget,
    src: &VideoFrame<'_>,
    color: ColorSpace,
    stream: CheckedStream<'_, S>,
    after: AfterWork<'_>,
) -> Result<()> {
    let ctx = target.cuda().clone();
    let layout = Layout::packed(src.layout().size(), Format::Rgba8)?;
    let converter = target.kernels().converter(&ctx)?;
    // Out of the target while it is borrowed for the frame; put back whatever happens.
    let shown = present_filled(target, layout, stream, |dst| {
        // SAFETY: (1) for `src`, the caller's; (2): `dst` is the frame's pixels, RGBA8 of the
        // frame's size, device memory of the target's context written only by this kernel
        // until the present and live until the kernel has run (`present_filled`), apart from
        // `src` (memory the target owns); `stream` is of the converter's context (the
        // target's, checked).
        unsafe { converter.convert_then(src, color, dst, stream.0, after) }
    });
    target.kernels().video = Some(converter);
    shown
}

/// Gives the target `layout`'s size and format, begins a frame on `stream`, has `fill` queue
/// the work that writes the frame's pixels in `stream`'s order, presents the frame and
/// flushes. The pixels stay live until that work has run: each mode keeps them until its
/// present's work (ordered after `fill`'s by `stream`) is done, and frees them only when the
/// target is dropped or reconfigured, which waits for the work. A frame whose pixels or `fill`
/// failed is dropped, not presented: its pixels hold nothing meant for the screen.
///
/// # Errors
/// As the target's `resize`, `frame`, [`Frame::pixels`], [`Frame::present`] and `fill`.
fn present_filled<S: AsStream>(
    target: &mut impl ShowTarget,
    layout: Layout,
    stream: CheckedStream<'_, S>,
    fill: impl FnOnce(&DeviceImage<'_>) -> Result<()>,
) -> Result<()> {
    target.reconfigure(layout)?;
    let frame = target.begin(stream)?;
    frame.pixels().and_then(|dst| fill(&dst))?;
    frame.present()?;
    target.flush()
}
