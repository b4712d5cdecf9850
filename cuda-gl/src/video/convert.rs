//! The GPU conversion: a [`Converter`] holds cuda-gl's own kernel (`kernels/video.cu`, its PTX
//! committed and built by `cargo xtask ptx`), loaded in a CUDA context, and queues it in a
//! stream's order.

use super::color::ColorSpace;
use super::frame::VideoFrame;
use super::layout::{VideoFormat, VideoLayout};
use crate::context::Context;
use crate::error::{Result, UsageError, VideoError};
use crate::image::{DeviceImage, Format, Layout};
use crate::memory::{DeviceBuffer, DeviceCopy};
use crate::module::{Function, LaunchConfig, Module};
use crate::queue::{AfterWork, then};
use crate::stream::{AsStream, Stream, check_same_context};
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// The PTX of `kernels/video.cu`.
const PTX: &str = include_str!("kernels/video.ptx");

/// The kernel's name in [`PTX`].
const KERNEL: &str = "cuda_gl_video_rgba8";

/// The most blocks a grid has in y (the driver's limit); the kernel loops over taller frames.
const MAX_GRID_Y: u32 = 65_535;

/// NV12 and P010 frames to RGBA8 on the GPU: cuda-gl's conversion kernel, loaded in one CUDA
/// context. Load it once and convert every frame with it; dropping it waits for the
/// conversions it queued.
#[derive(Debug)]
pub struct Converter {
    /// Dropped (and its module unloaded) once the context's queued work is done: see the drop.
    function: ManuallyDrop<Function>,
    ctx: Arc<Context>,
}

impl Converter {
    /// Loads the kernel in `ctx`.
    ///
    /// # Errors
    /// The driver's error loading the PTX ([`Error::PtxTooNew`](crate::Error::PtxTooNew) on
    /// a driver older than CUDA 12.0's R525).
    pub fn load(ctx: &Arc<Context>) -> Result<Converter> {
        let function = Module::from_ptx(ctx, PTX)?.function(KERNEL)?;
        Ok(Converter {
            function: ManuallyDrop::new(function),
            ctx: ctx.clone(),
        })
    }

    /// The CUDA context the kernel is loaded in.
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Queues the conversion of `src` into `dst` in `stream`'s order: every pixel of `dst`
    /// becomes the RGBA8 colour (alpha 255) of its luma and nearest chroma pair under `color`,
    /// as [`ColorSpace::rgba8`] gives it (see the [module docs](super)); the pitch's padding of
    /// `dst` is not written. Like cuda-gl's copies, the kernel runs on cuda-gl's private stream,
    /// joined to `stream` before and after it, so that no capture another thread begins on
    /// `stream` can take it. The CPU does not wait for it.
    ///
    /// # Safety
    /// 1. `src.ptr()` points to `src.layout().bytes()` bytes of device memory of the
    ///    converter's context, which stay allocated and are not written until the work queued
    ///    on `stream` before this returns has run.
    /// 2. `dst.ptr()` points to `dst.layout().bytes()` bytes of device memory of that context,
    ///    which stay allocated and are neither read nor written by other work until then, and
    ///    do not overlap `src`'s.
    ///
    /// # Errors
    /// [`VideoError::DestinationFormat`] unless `dst` is [`Format::Rgba8`];
    /// [`VideoError::DestinationSize`] unless it has `src`'s size;
    /// [`UsageError::WrongCudaContext`] for a stream of another context;
    /// [`UsageError::AddressOverflow`] when `src`'s chroma address overflows;
    /// [`Error::StreamCapturing`](crate::Error::StreamCapturing) when `stream` is capturing; the
    /// driver's error from the launch.
    pub unsafe fn convert(
        &self,
        src: &VideoFrame<'_>,
        color: ColorSpace,
        dst: &DeviceImage<'_>,
        stream: &impl AsStream,
    ) -> Result<()> {
        // SAFETY: (1) and (2), forwarded.
        unsafe { self.convert_then(src, color, dst, stream, None) }
    }

    /// [`convert`](Self::convert), with `after` run on the private stream right after the
    /// kernel, in its run (see [`AfterWork`]): cudarc's read event of the frame's memory.
    ///
    /// # Safety
    /// As [`convert`](Self::convert).
    ///
    /// # Errors
    /// As [`convert`](Self::convert).
    pub(crate) unsafe fn convert_then(
        &self,
        src: &VideoFrame<'_>,
        color: ColorSpace,
        dst: &DeviceImage<'_>,
        stream: &impl AsStream,
        after: AfterWork<'_>,
    ) -> Result<()> {
        const CALL: &str = "Converter::convert";
        let (from, to) = (src.layout(), dst.layout());
        check_destination(CALL, &from, &to)?;
        check_same_context(&self.ctx, stream, "the video converter")?;
        let chroma = src.chroma_ptr()?;
        let wide = i32::from(from.format() == VideoFormat::P010);
        let coefficients = color.coefficients(from.format());
        let (w, h) = from.size();
        let config = LaunchConfig {
            grid: (w.div_ceil(32), h.div_ceil(8).min(MAX_GRID_Y), 1),
            block: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let launch = |private| {
            // SAFETY: cuda-gl's private stream of the context, live while its queue is locked
            // (for this call); borrowed, never destroyed.
            let private = unsafe { Stream::from_raw(&self.ctx, private) };
            // SAFETY: (1) and (2) for the planes and the image, which the layouts describe
            // (checked when they were made) and the kernel reads and writes within: rows of
            // `row_bytes` at their pitches, byte by byte for the samples, and a pixel as one
            // uchar4 only where `dst`'s address and pitch are multiples of 4; the image has
            // the frame's size (checked). The arguments match the kernel's parameters
            // (checked against the PTX by `launch`); the grid covers `w` columns and the
            // kernel returns outside them, and loops over the `h` rows.
            unsafe {
                self.function.launch(
                    config,
                    &private,
                    (
                        src.ptr(),
                        from.luma_pitch(),
                        chroma,
                        from.chroma_pitch(),
                        wide,
                        dst.ptr(),
                        to.pitch(),
                        w,
                        h,
                        coefficients,
                    ),
                )
            }
        };
        // SAFETY: the stream is live while borrowed (`AsStream`) and of this context (checked).
        unsafe {
            self.ctx.run_now(
                stream.raw_stream(),
                "cuLaunchKernel (not called)",
                then(launch, after),
            )
        }
    }

    /// [`convert`](Self::convert) of the frame of `layout` at the start of `src` into the
    /// image of `dst_layout` at the start of `dst`, every precondition checked: both buffers
    /// and `stream` of the converter's context, each buffer large enough. `dst` is borrowed
    /// mutably, so it cannot be `src`.
    ///
    /// What is ordered after what: the conversion is queued on `stream` after the work queued
    /// on it before; read `dst` after it on `stream` ([`DeviceBuffer::to_vec_on`]), or on
    /// work ordered after it. Freeing either buffer waits for the work that uses it.
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] for a buffer or stream of another context;
    /// [`VideoError::DestinationFormat`] and [`VideoError::DestinationSize`] as `convert`;
    /// [`VideoError::FrameTooSmall`] when `src` holds fewer bytes than `layout` spans;
    /// [`DisplayError::PitchedSource`](crate::display::DisplayError::PitchedSource) when `dst`
    /// holds fewer than `dst_layout` spans; otherwise as [`convert`](Self::convert).
    pub fn convert_buffer<S: DeviceCopy, D: DeviceCopy>(
        &self,
        src: &DeviceBuffer<S>,
        layout: VideoLayout,
        color: ColorSpace,
        dst: &mut DeviceBuffer<D>,
        dst_layout: Layout,
        stream: &impl AsStream,
    ) -> Result<()> {
        const CALL: &str = "Converter::convert_buffer";
        for (what, ctx) in [
            ("source buffer", src.context()),
            ("destination buffer", dst.context()),
        ] {
            if ctx.raw() != self.ctx.raw() {
                return Err(UsageError::WrongCudaContext {
                    what,
                    owner: "the video converter".into(),
                }
                .into());
            }
        }
        check_destination(CALL, &layout, &dst_layout)?;
        layout.check_fits(CALL, "the source buffer", src.byte_len())?;
        dst_layout.check_fits("the destination buffer", dst.byte_len())?;
        let frame = VideoFrame::new(src.device_ptr(), layout);
        let image = DeviceImage::new(dst.device_ptr(), dst_layout);
        // SAFETY: (1) the frame lies in `src` (checked), device memory of this context
        // (checked), which is freed only after the work queued on it (a `DeviceBuffer`'s free
        // waits for the device); (2) the image lies in `dst` (checked), of this context,
        // borrowed mutably for this call (so not `src`), freed only after the work too. What
        // safe code queues on either buffer later, unordered with `stream`, at most changes or
        // sees the plain bytes the kernel reads or writes (as for `DisplayTarget::show`).
        unsafe { self.convert(&frame, color, &image, stream) }
    }
}

/// Refuses a destination that is not RGBA8 of the frame's size.
fn check_destination(call: &'static str, frame: &VideoLayout, image: &Layout) -> Result<()> {
    if image.format() != Format::Rgba8 {
        return Err(VideoError::DestinationFormat {
            call,
            format: format!("{:?}", image.format()),
        }
        .into());
    }
    if image.size() != frame.size() {
        return Err(VideoError::DestinationSize {
            call,
            frame: frame.size(),
            image: image.size(),
        }
        .into());
    }
    Ok(())
}

impl Drop for Converter {
    fn drop(&mut self) {
        // The kernel may still run, and cuModuleUnload is not documented to wait for it:
        // cuda-gl's private stream, which runs it, is waited for first (allowed while another
        // thread captures a stream, unlike the context's sync).
        match self.ctx.finish_queued() {
            // SAFETY: dropped once, here, after the work that used it: every launch of the
            // function ran on the private stream, just waited for, and the converter holds the
            // only clone of it and of its module (`kernels_done`'s 1).
            Ok(()) => unsafe {
                self.function.kernels_done();
                ManuallyDrop::drop(&mut self.function);
            },
            Err(e) => log::error!(
                "cuda-gl: the video converter's kernel leaked, and with it a reference to the \
                 CUDA context, which is then never released: {e}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_destination_must_be_rgba8_of_the_frame_size() -> Result<()> {
        let frame = VideoLayout::packed((6, 4), VideoFormat::Nv12)?;
        let ok = Layout::new((6, 4), 28, Format::Rgba8)?;
        assert!(check_destination("c", &frame, &ok).is_ok());
        let grey = Layout::packed((6, 4), Format::R8)?;
        let want = VideoError::DestinationFormat {
            call: "c",
            format: "R8".into(),
        };
        let e = check_destination("c", &frame, &grey).err();
        assert!(matches!(e, Some(crate::Error::Video(v)) if v == want));
        let small = Layout::packed((6, 3), Format::Rgba8)?;
        let want = VideoError::DestinationSize {
            call: "c",
            frame: (6, 4),
            image: (6, 3),
        };
        let e = check_destination("c", &frame, &small).err();
        assert!(matches!(e, Some(crate::Error::Video(v)) if v == want));
        Ok(())
    }
}
