//! [`WgpuVideoPlanes`]: a decoded NV12 or P010 frame's luma and chroma planes copied into two
//! plain `wgpu::Texture`s, for an application that converts them in its own WGSL shader: on the
//! GPU through two private [`SharedTexture`]s (interop), or through pinned host memory and
//! `Queue::write_texture` on any wgpu device (staged).
//!
//! Why two textures and not wgpu's multi-planar `TextureFormat::NV12` / `P010` (features
//! `TEXTURE_FORMAT_NV12` / `TEXTURE_FORMAT_P010`): wgpu 30 copies out of one plane of such a
//! texture but refuses copies into one (`copy_texture_to_texture` asks a destination to cover
//! all its aspects), and a texture the application samples while CUDA writes the next frame
//! must be written by wgpu (a copy, or a blit, which cannot write one plane either); and its multi-planar textures need even sides, which frames
//! such as 1001x333 do not have. A shader samples two textures as easily as two planes.

#[cfg(feature = "wgpu-gl")]
mod gl_drop;
#[cfg(feature = "wgpu-gl")]
mod gl_route;
mod plane;
mod read;
mod upload;

use super::blit::BlitKind;
use super::place::mode_unavailable;
use super::target::first_mode;
use super::texture::SharedTexture;
use crate::context::Context;
use crate::display::{Mode, Report};
use crate::error::{Result, UsageError};
use crate::memory::{DevicePtr, PinnedBuffer};
use crate::source::{ShowSource, memory_of};
use crate::stream::{AsStream, check_same_context};
use crate::video::{VideoError, VideoFormat, VideoFrame, VideoLayout};
#[cfg(feature = "wgpu-gl")]
use gl_route::GlPlanes;
use plane::{Plane, frame_planes, plane_texture, rows_of};
use std::sync::Arc;
use upload::{PlaneWrites, upload_interop, upload_staged};

/// What the planes' reports begin with.
const PLANES: &str = "video planes";

/// What the planes' `check_same_context` names as their owner.
const OWNER: &str = "the wgpu video planes";

/// A call of the planes' that checks a frame: its name, and what its
/// [`UsageError::TooLarge`] says is too large (naming the call: that error has no field for it).
#[derive(Debug, Clone, Copy)]
struct Call {
    name: &'static str,
    side: &'static str,
}

/// The [`Call`] named `$name`.
macro_rules! call {
    ($name:literal) => {
        Call {
            name: $name,
            side: concat!(
                $name,
                ": a video frame's width or height (its luma texture's, for wgpu)"
            ),
        }
    };
}

const NEW: Call = call!("WgpuVideoPlanes::new");
const UPLOAD: Call = call!("WgpuVideoPlanes::upload");

/// How the planes reach the textures.
// One per size, made once: boxing the larger mode would save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Backend {
    /// Each plane copied on the GPU into a [`SharedTexture`] of its own (never handed out),
    /// then by wgpu into the texture the application samples.
    Interop {
        shared: [SharedTexture; 2],
        /// The shared textures' wgpu textures, the sources of wgpu's writes (held here: the
        /// write guards borrow the shared textures).
        sources: [wgpu::Texture; 2],
        /// wgpu's blit or copy of each plane into its texture.
        writes: PlaneWrites,
    },
    /// Interop by the GL route (wgpu's GL backend): each plane copied on the GPU into a GL
    /// texture of cuda-gl's (never handed out), then by wgpu into the texture the application
    /// samples.
    #[cfg(feature = "wgpu-gl")]
    GlInterop(GlPlanes),
    /// Each plane copied into pinned host memory (rows tightly packed), then handed to
    /// `Queue::write_texture`.
    Staged {
        pinned: [PinnedBuffer<u8>; 2],
        /// On a device of wgpu's GL backend over the program's GL context, that context: the
        /// drop's check (`gl_drop.rs`).
        #[cfg(feature = "wgpu-gl")]
        gl: Option<crate::glapi::GlOwner>,
    },
}

/// The planes of one size and format: how they get there, and the textures.
#[derive(Debug)]
struct Made {
    backend: Backend,
    /// Luma, chroma.
    textures: [wgpu::Texture; 2],
}

impl Made {
    /// The state of `mode` for `planes`.
    ///
    /// # Errors
    /// [`DisplayError::ModeUnavailable`](crate::display::DisplayError::ModeUnavailable) for [`Mode::Stream`]; interop: as
    /// [`SharedTexture::new`], on wgpu's GL backend as `check_gl_device` and the GL plane
    /// textures' creation; staged: the driver's error allocating pinned memory, `NoGlContext`
    /// over the program's GL context with none current; wgpu's
    /// errors making the textures.
    fn new(
        mode: Mode,
        ctx: &Arc<Context>,
        (device, queue): (&wgpu::Device, &wgpu::Queue),
        [luma, chroma]: &[Plane; 2],
    ) -> Result<Made> {
        // The textures the application samples are made in each mode after its checks (on
        // wgpu's GL backend, of the GL context current), so that wgpu makes nothing before a
        // refusal; in interop mode on Vulkan with the usages of their blits.
        let textures = |kinds: [Option<BlitKind>; 2]| -> Result<[wgpu::Texture; 2]> {
            const LABELS: [&str; 2] = [
                "cuda_gl::wgpu_interop::WgpuVideoPlanes luma",
                "cuda_gl::wgpu_interop::WgpuVideoPlanes chroma",
            ];
            Ok([
                plane_texture(device, luma, LABELS[0], kinds[0])?,
                plane_texture(device, chroma, LABELS[1], kinds[1])?,
            ])
        };
        let (backend, textures) = match mode {
            #[cfg(feature = "wgpu-gl")]
            Mode::Interop if super::gl_device::is_gl(device) => {
                super::check_gl_device(device, ctx)?;
                let gl = GlPlanes::new(ctx, device, &[*luma, *chroma])?;
                (Backend::GlInterop(gl), textures([None, None])?)
            }
            Mode::Interop => {
                let shared = |p: &Plane| SharedTexture::new(ctx, device, queue, p.size, p.format);
                let shared = [shared(luma)?, shared(chroma)?];
                let sources = [shared[0].texture().clone(), shared[1].texture().clone()];
                let kinds = PlaneWrites::kinds(device, [luma, chroma]);
                let textures = textures(kinds)?;
                let writes = PlaneWrites::new(device, &sources, &textures, kinds)?;
                let backend = Backend::Interop {
                    shared,
                    sources,
                    writes,
                };
                (backend, textures)
            }
            Mode::Staged => {
                let pinned = |p: &Plane| PinnedBuffer::zeroed(ctx, p.bytes);
                let backend = Backend::Staged {
                    pinned: [pinned(luma)?, pinned(chroma)?],
                    #[cfg(feature = "wgpu-gl")]
                    gl: super::gl_device::program_gl_owner(
                        device,
                        "cuda_gl::wgpu_interop::WgpuVideoPlanes (staged, wgpu's GL backend)",
                    )?,
                };
                (backend, textures([None, None])?)
            }
            other => return Err(mode_unavailable("WgpuVideoPlanes::new", other)),
        };
        Ok(Made { backend, textures })
    }
}

/// The planes of decoded NV12 or P010 frames in two plain `wgpu::Texture`s (feature `wgpu`),
/// for a WGSL shader of the application's that converts them itself: what
/// [`VideoPlanes`](crate::video::VideoPlanes) does for GL, with textures that cuda-gl makes.
///
/// - [`luma`](Self::luma): the frame's size, one channel: `R8Unorm` (NV12), `R16Unorm` (P010);
/// - [`chroma`](Self::chroma): `ceil(width / 2)` x `ceil(height / 2)`, two channels: `Rg8Unorm`,
///   `Rg16Unorm` (Cb in `.r`, Cr in `.g`).
///
/// Usages `TEXTURE_BINDING | COPY_SRC | COPY_DST` (in interop mode on Vulkan also
/// `RENDER_ATTACHMENT` or `STORAGE_BINDING`, for the shader blit that writes it where one
/// writes its format), one level; texel `(x, y)` of a texture is pixel or pair `(x, y)` of its
/// plane, row 0 the plane's first row. P010's textures need the
/// device feature `TEXTURE_FORMAT_16BIT_NORM` ([`open_device`](super::open_device) asks for it
/// where the adapter offers it).
///
/// Sampling: pixel `(x, y)` takes luma texel `(x, y)` and chroma texel `(x / 2, y / 2)` (the
/// "left" siting of H.264, HEVC and AV1 streams), for any size: in WGSL,
/// `textureLoad(chroma, vec2u(x, y) / 2u, 0)`. P010's samples are the high 10 bits of each
/// 16-bit value: `u32(round(v * 65535.0)) >> 6u` of the value `v` read from an `R16Unorm`
/// texture. The colour equations are in the [video module's docs](crate::video).
///
/// Modes, as [`WgpuTarget`](super::WgpuTarget)'s:
/// - [`Mode::Interop`]: each plane is copied on the GPU (`cuMemcpy2DAsync`, in the stream's
///   order) into a [`SharedTexture`] of the planes' own; both are handed between CUDA and wgpu
///   together, each by its timeline semaphore, and wgpu writes both into the textures (a
///   shader blit, as a target's present, or wgpu's copy for a format no blit writes) in the
///   submit that takes them back, which also releases them to CUDA again for the next upload
///   (an empty submit after it carries the release's signals): two wgpu submits an upload, no
///   host copy, no CPU wait. Needs a device from
///   [`open_device`](super::open_device). CUDA only ever writes the shared textures, which are
///   never handed out, so the textures the application holds are only written by wgpu
///   commands, ordered with its own: sample them at any time, from any thread, which may
///   submit on the planes' queue during an upload too
///   ([why](super#other-threads-on-the-queue)). The
///   acquire's wait for CUDA is queued on the application's wgpu queue: see the
///   [module docs](super#a-cuda-fault-stalls-wgpus-queue) for what a CUDA fault does to it.
///
///   With feature `wgpu-gl`, on a device of wgpu's GL backend ([the GL route](super#the-gl-route):
///   a device from `open_gl_device`), interop mode copies each plane into a GL texture of the
///   planes' own that cuda-gl made in that context and registered with CUDA: one map of both
///   on the upload's stream, a `cuMemcpy2DAsync` into each, one unmap (as the GL
///   [`VideoPlanes`](crate::video::VideoPlanes) does), then wgpu's copies of both into the
///   textures, submitted after the unmap: ordered by the map and the unmap in the one GL
///   context, no host copy, no CPU wait. That context must be current on the calling thread
///   at every call of the planes, their drop included (`open_gl_adapter`'s `# Safety`); the map
///   checks it ([`Error::NoGlContext`](crate::Error::NoGlContext),
///   [`Error::WrongGlContext`](crate::Error::WrongGlContext)).
/// - [`Mode::Staged`]: any other wgpu device (lavapipe, another vendor's GPU, wgpu's GL
///   backend off the CUDA GPU): both planes are copied into pinned host memory and, once the
///   copies have finished, handed to `Queue::write_texture`. The upload waits on the CPU for
///   the copies.
///
/// What is ordered after what: after [`upload`](Self::upload) returns `Ok`, the application's
/// next `Queue::submit` on the planes' queue sees the frame. An upload refused before its
/// copies (bad input, a failed re-creation), or whose copies fail or time out, leaves the
/// textures as they were. One that wgpu refuses (a texture the application destroyed) writes
/// neither texture in interop mode; in staged mode it may have written the other one.
///
/// **Another size or format**: a frame of another size (or NV12 after P010) re-creates the
/// textures for it: `upload` returns `Ok(true)`, and the application takes
/// [`luma`](Self::luma) and [`chroma`](Self::chroma) again (a bind group made with the old ones
/// still samples the old frame). Decoders change size mid-stream (adaptive streaming), and
/// refusing would leave nothing to show. The new textures are made before the old ones go: a
/// re-creation that fails keeps the old ones. Planes made in a given mode stay in it; planes
/// made with `None` choose again for each new size or format, as [`new`](Self::new) does: a
/// frame that interop cannot take here (one beyond the driver's limit for exportable images,
/// which may be below wgpu's own) runs staged, and a later frame that interop takes runs
/// interop again. [`mode`](Self::mode) says which, and each change is logged (`log::warn!`,
/// the [`Report`]'s line).
///
/// Do not destroy the textures (`wgpu::Texture::destroy`): every upload then fails with
/// [`WgpuError::Refused`](super::WgpuError::Refused) until a frame of another size makes new
/// ones. The planes keep clones of the device and queue. `Send` and `Sync`, as
/// [`WgpuTarget`](super::WgpuTarget): every CUDA call binds the planes' context first, and
/// cuda-gl's GL calls (the GL route's map, unmap and deletions) check that their own GL
/// context is current. (On a device of wgpu's GL backend over a GL context of the program's,
/// from `open_gl_adapter` (feature `wgpu-gl`), wgpu calls GL through whatever context is
/// current: make, upload to and drop the planes, and sample their textures, only on a thread
/// where that context is current, as that function's `# Safety` asks of every wgpu call. The
/// planes check it where they can, in interop mode and in staged mode on a context with object
/// labels: an upload or a `read_planes` elsewhere is refused before any wgpu call, and a drop
/// elsewhere leaks the textures, logged, rather than have wgpu delete them in another context.)
#[derive(Debug)]
pub struct WgpuVideoPlanes {
    made: Made,
    planes: [Plane; 2],
    format: VideoFormat,
    /// The mode `new` was given: `None` chooses again at each re-creation.
    asked: Option<Mode>,
    ctx: Arc<Context>,
    queue: wgpu::Queue,
    device: wgpu::Device,
}

impl WgpuVideoPlanes {
    /// Planes for `format` frames of `size` on wgpu's `device` and `queue`, for CUDA context
    /// `ctx`, in `mode`, or with `None` in the first of interop and staged that works here; and
    /// the [`Report`] of what was chosen and why (it prints as one line, as a display target's).
    ///
    /// # Errors
    /// [`UsageError::TooLarge`] for a side over the device's `max_texture_dimension_2d`;
    /// [`VideoError::ZeroSize`](crate::video::VideoError::ZeroSize) for a zero side,
    /// [`VideoError::TooLarge`](crate::video::VideoError::TooLarge) for planes whose bytes do
    /// not fit in a `usize`;
    /// [`WgpuError::MissingFeature`](super::WgpuError::MissingFeature) for P010 on a device
    /// without `TEXTURE_FORMAT_16BIT_NORM`; [`DisplayError::ModeUnavailable`](crate::display::DisplayError::ModeUnavailable) for
    /// [`Mode::Stream`]; with a mode given, why that mode cannot work here (interop: a
    /// [`WgpuError`](super::WgpuError) that says what the device lacks); otherwise the staged
    /// mode's error (on a device of wgpu's GL backend over the program's GL context,
    /// [`Error::NoGlContext`](crate::Error::NoGlContext) when no GL context is current).
    pub fn new(
        ctx: &Arc<Context>,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        size: (u32, u32),
        format: VideoFormat,
        mode: Option<Mode>,
    ) -> Result<(WgpuVideoPlanes, Report)> {
        if size.0 == 0 || size.1 == 0 {
            return Err(VideoError::ZeroSize {
                call: NEW.name,
                width: size.0,
                height: size.1,
            }
            .into());
        }
        let planes = frame_planes(device, size, format, NEW)?;
        let (made, report) = first_mode((ctx, PLANES), device, mode, |mode| {
            Made::new(mode, ctx, (device, queue), &planes)
        })?;
        let planes = WgpuVideoPlanes {
            made,
            planes,
            format,
            asked: mode,
            ctx: ctx.clone(),
            queue: queue.clone(),
            device: device.clone(),
        };
        Ok((planes, report))
    }

    /// The luma texture (the frame's size; `R8Unorm` for NV12, `R16Unorm` for P010). A new one
    /// after an upload that returned `Ok(true)`.
    pub fn luma(&self) -> &wgpu::Texture {
        &self.made.textures[0]
    }

    /// The chroma texture (`ceil(width / 2)` x `ceil(height / 2)`; `Rg8Unorm` for NV12,
    /// `Rg16Unorm` for P010; Cb in `.r`, Cr in `.g`). A new one after an upload that returned
    /// `Ok(true)`.
    pub fn chroma(&self) -> &wgpu::Texture {
        &self.made.textures[1]
    }

    /// The frames' width and height in pixels (the luma texture's).
    pub fn size(&self) -> (u32, u32) {
        self.planes[0].size
    }

    /// The frames' format.
    pub fn format(&self) -> VideoFormat {
        self.format
    }

    /// The mode the planes reach the textures in.
    pub fn mode(&self) -> Mode {
        match self.made.backend {
            Backend::Interop { .. } => Mode::Interop,
            #[cfg(feature = "wgpu-gl")]
            Backend::GlInterop(_) => Mode::Interop,
            Backend::Staged { .. } => Mode::Staged,
        }
    }

    /// The CUDA context the frames are in.
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The wgpu device the textures are on (the application's, cloned).
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// Copies the planes of the frame of `layout` at the start of `src` into the textures, in
    /// `stream`'s order (after the work queued on it before, the decoder's say): interop on the
    /// GPU, with no CPU wait; staged through pinned memory, waiting for the copies (at most 10
    /// s). The application's next submit on the planes' queue sees them. Returns `true` when
    /// the frame's size or format differs from the last one's (for the first upload, from the
    /// size and format given to [`new`](Self::new): a first frame of those returns `false`)
    /// and the textures are new (take [`luma`](Self::luma) and [`chroma`](Self::chroma)
    /// again). Write `src` again only in work
    /// ordered after `stream`'s.
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] for a buffer or stream of another context;
    /// [`VideoError::FrameTooSmall`](crate::video::VideoError::FrameTooSmall) when `src` holds
    /// fewer bytes than `layout` spans; for a frame of another size or format, as
    /// [`new`](Self::new) in the planes' mode (the old textures are kept);
    /// [`Error::StreamCapturing`](crate::Error::StreamCapturing) for a capturing stream; the
    /// copies' errors; interop: as [`SharedTexture::write`] and
    /// [`CudaWrite::finish`](super::CudaWrite::finish); over the program's GL context (the GL
    /// route, and staged mode there on a context with object labels), refused before any wgpu
    /// or GL call (a frame of another size too) when that context is not current
    /// ([`Error::NoGlContext`](crate::Error::NoGlContext),
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext)), and the map's errors; staged:
    /// [`Error::Timeout`](crate::Error::Timeout) when the copies take past the [wait
    /// limit](crate::wait_limit) (10 s by default);
    /// [`WgpuError::Refused`](super::WgpuError::Refused) when wgpu refuses a copy or a write (the
    /// application destroyed a texture).
    pub fn upload<Src: ShowSource + ?Sized>(
        &mut self,
        src: &Src,
        layout: VideoLayout,
        stream: &impl AsStream,
    ) -> Result<bool> {
        let (ptr, bytes, ctx) = memory_of(src);
        if ctx.raw() != self.ctx.raw() {
            return Err(UsageError::WrongCudaContext {
                what: "device buffer",
                owner: OWNER.into(),
            }
            .into());
        }
        layout.check_fits(UPLOAD.name, "the device buffer", bytes)?;
        // SAFETY: (1) the frame lies in `src` (checked just above), device memory of the
        // planes' context (checked); a `DeviceBuffer` is freed only after the device's work,
        // and what safe code writes into it on another stream unordered with `stream` races
        // with the copies on the GPU (a torn plane, as for `WgpuTarget::show`), never outside
        // it.
        unsafe { self.upload_given(ptr, layout, stream) }
    }

    /// [`upload`](Self::upload) of a frame in device memory of any origin (a decoder's
    /// surface, `cuvidMapVideoFrame`'s pointer and pitch).
    ///
    /// # Safety
    /// 1. `frame.ptr()` points to `frame.layout().bytes()` bytes of device memory of the
    ///    planes' CUDA context, which stay allocated and are not written until the work queued
    ///    on `stream` before this returns has run.
    ///
    /// # Errors
    /// As [`upload`](Self::upload), but for the buffer's checks.
    pub unsafe fn upload_raw(
        &mut self,
        frame: &VideoFrame<'_>,
        stream: &impl AsStream,
    ) -> Result<bool> {
        // SAFETY: (1), forwarded.
        unsafe { self.upload_given(frame.ptr(), frame.layout(), stream) }
    }

    /// Re-creates the planes for `layout`'s size and format when they differ, then copies.
    ///
    /// # Safety
    /// 1. As [`upload_raw`](Self::upload_raw)'s, for the frame of `layout` at `ptr`.
    unsafe fn upload_given(
        &mut self,
        ptr: DevicePtr<'_>,
        layout: VideoLayout,
        stream: &impl AsStream,
    ) -> Result<bool> {
        check_same_context(&self.ctx, stream, OWNER)?;
        // Over the program's GL context (the GL route, or staged there) wgpu calls GL through
        // whatever context is current: a frame (of another size too) is refused here, with
        // another context or none current, before the re-creation's wgpu calls (and before a
        // fall-back to staged mode, which never maps) and before a staged `write_texture`.
        #[cfg(feature = "wgpu-gl")]
        self.made.backend.check_gl_current(UPLOAD.name)?;
        // Each plane's rows at its pitch, which lie in the frame ((1)) and are what the plane's
        // texture holds (made for this layout's size and format).
        let [(luma, luma_pitch), (chroma, chroma_pitch)] = rows_of(&layout);
        let sources = [
            (ptr.byte_add(luma)?.as_raw(), luma_pitch),
            (ptr.byte_add(chroma)?.as_raw(), chroma_pitch),
        ];
        // A frame of another size or format goes into new planes (in the mode asked for, or
        // the first that takes them), which replace the old ones only once it is there: a
        // failed upload leaves the textures as they were.
        let mut fresh = None;
        let mut planes = self.planes;
        if (layout.size(), layout.format()) != (self.size(), self.format) {
            planes = frame_planes(&self.device, layout.size(), layout.format(), UPLOAD)?;
            let wgpu = (&self.device, &self.queue);
            let (made, report) =
                first_mode((&self.ctx, PLANES), &self.device, self.asked, |mode| {
                    Made::new(mode, &self.ctx, wgpu, &planes)
                })?;
            if report.mode != self.mode() {
                log::warn!(
                    "cuda-gl: wgpu video planes of {:?}: {report}",
                    layout.size()
                );
            }
            fresh = Some(made);
        }
        let made = fresh.as_mut().unwrap_or(&mut self.made);
        let wgpu = (&self.device, &self.queue);
        match &mut made.backend {
            Backend::Interop {
                shared,
                sources: from,
                writes,
            } => {
                let interop = (shared, &*from, &*writes);
                // SAFETY: (1), forwarded for the planes' rows.
                unsafe { upload_interop(interop, &made.textures, sources, wgpu.0, stream) }
            }
            #[cfg(feature = "wgpu-gl")]
            Backend::GlInterop(gl) => {
                // SAFETY: (1), forwarded.
                unsafe { gl.upload(&made.textures, (ptr, &layout), wgpu, stream) }
            }
            Backend::Staged { pinned, .. } => {
                // SAFETY: (1), forwarded for the planes' rows.
                unsafe { upload_staged(pinned, &planes, &made.textures, sources, wgpu, stream) }
            }
        }?;
        let Some(made) = fresh else {
            return Ok(false);
        };
        (self.made, self.planes, self.format) = (made, planes, layout.format());
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
