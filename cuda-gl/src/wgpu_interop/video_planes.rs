//! [`WgpuVideoPlanes`]: a decoded NV12 or P010 frame's luma and chroma planes copied into two
//! plain `wgpu::Texture`s, for an application that converts them in its own WGSL shader: on the
//! GPU through two private [`SharedTexture`]s (interop), or through pinned host memory and
//! `Queue::write_texture` on any wgpu device (staged).
//!
//! Why two textures and not wgpu's multi-planar `TextureFormat::NV12` / `P010` (features
//! `TEXTURE_FORMAT_NV12` / `TEXTURE_FORMAT_P010`): wgpu 30 copies out of one plane of such a
//! texture but refuses copies into one (`copy_texture_to_texture` asks a destination to cover
//! all its aspects), which is the only way a frame can reach a texture the application samples
//! while CUDA writes the next one; and its multi-planar textures need even sides, which frames
//! such as 1001x333 do not have. A shader samples two textures as easily as two planes.

use super::format::SharedFormat;
use super::interop_mode::copy_command;
use super::scope::scoped;
use super::target::first_mode;
use super::texture::SharedTexture;
use crate::context::Context;
use crate::display::{DisplayError, Mode, Report};
use crate::error::{Result, UsageError};
use crate::memory::{DevicePtr, PinnedBuffer};
use crate::result;
use crate::source::{ShowSource, memory_of};
use crate::stream::{AsStream, DEFAULT_WAIT_LIMIT, check_same_context};
use crate::video::{VideoError, VideoFormat, VideoFrame, VideoLayout};
use cuda_gl_sys as sys;
use std::sync::Arc;
use std::time::Instant;

/// What the planes' `check_same_context` names as their owner.
const OWNER: &str = "the wgpu video planes";

/// One plane of the frames: its texture's size and format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plane {
    size: (u32, u32),
    format: SharedFormat,
}

impl Plane {
    /// The bytes of one row: width x bytes per texel (a layout's `luma_row_bytes` or
    /// `chroma_row_bytes`, which the frame's layout checked fit in a `usize`).
    fn row(&self) -> usize {
        self.size.0 as usize * self.format.bytes_per_texel() as usize
    }

    /// The bytes of the whole plane, rows tightly packed.
    fn bytes(&self) -> usize {
        self.row() * self.size.1 as usize
    }
}

/// The luma and chroma planes of `format` frames of `size`: the luma of the frame's size with
/// one channel, the chroma of `ceil(w / 2)` x `ceil(h / 2)` with two (R8Unorm + Rg8Unorm for
/// NV12, R16Unorm + Rg16Unorm for P010).
fn planes_of((width, height): (u32, u32), format: VideoFormat) -> [Plane; 2] {
    let (luma, chroma) = match format {
        VideoFormat::Nv12 => (SharedFormat::R8Unorm, SharedFormat::Rg8Unorm),
        VideoFormat::P010 => (SharedFormat::R16Unorm, SharedFormat::Rg16Unorm),
    };
    [
        Plane {
            size: (width, height),
            format: luma,
        },
        Plane {
            size: (width.div_ceil(2), height.div_ceil(2)),
            format: chroma,
        },
    ]
}

/// Where the rows of each plane of a frame of `layout` start (bytes from the frame's first
/// byte), and their pitch.
fn rows_of(layout: &VideoLayout) -> [(usize, usize); 2] {
    [
        (0, layout.luma_pitch()),
        (layout.chroma_offset(), layout.chroma_pitch()),
    ]
}

/// Refuses frames that `device` cannot hold: a side over `max_texture_dimension_2d`, 16-bit
/// planes without `TEXTURE_FORMAT_16BIT_NORM`.
fn check_device(device: &wgpu::Device, planes: &[Plane; 2], call: &'static str) -> Result<()> {
    let (width, height) = planes[0].size;
    let max = device.limits().max_texture_dimension_2d;
    if width.max(height) > max {
        return Err(UsageError::TooLarge {
            what: "a video frame's width or height (its luma texture's, for wgpu)",
            value: width.max(height).into(),
            max: max.into(),
        }
        .into());
    }
    planes
        .iter()
        .try_for_each(|p| p.format.check_features(device, call))
}

/// The texture the application samples for `plane`.
fn plane_texture(
    device: &wgpu::Device,
    plane: &Plane,
    label: &'static str,
) -> Result<wgpu::Texture> {
    scoped(device, "wgpu::Device::create_texture", || {
        device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d {
                width: plane.size.0,
                height: plane.size.1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: plane.format.wgpu(),
            usage: wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        })
    })
}

/// How the planes reach the textures.
// One per size, made once: boxing the larger mode would save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Backend {
    /// Each plane copied on the GPU into a [`SharedTexture`] of its own (never handed out),
    /// then by wgpu into the texture the application samples.
    Interop {
        shared: [SharedTexture; 2],
        /// The shared textures' wgpu textures, the sources of wgpu's copies (held here: the
        /// write guards borrow the shared textures).
        sources: [wgpu::Texture; 2],
    },
    /// Each plane copied into pinned host memory (rows tightly packed), then handed to
    /// `Queue::write_texture`.
    Staged { pinned: [PinnedBuffer<u8>; 2] },
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
    /// [`DisplayError::ModeUnavailable`] for [`Mode::Stream`]; interop: as
    /// [`SharedTexture::new`]; staged: the driver's error allocating pinned memory; wgpu's
    /// errors making the textures.
    fn new(
        mode: Mode,
        ctx: &Arc<Context>,
        (device, queue): (&wgpu::Device, &wgpu::Queue),
        [luma, chroma]: &[Plane; 2],
    ) -> Result<Made> {
        let backend = match mode {
            Mode::Interop => {
                let shared = |p: &Plane| SharedTexture::new(ctx, device, queue, p.size, p.format);
                let shared = [shared(luma)?, shared(chroma)?];
                let sources = [shared[0].texture().clone(), shared[1].texture().clone()];
                Backend::Interop { shared, sources }
            }
            Mode::Staged => {
                let pinned = |p: &Plane| PinnedBuffer::zeroed(ctx, p.bytes());
                Backend::Staged {
                    pinned: [pinned(luma)?, pinned(chroma)?],
                }
            }
            other => {
                return Err(DisplayError::ModeUnavailable {
                    target: "WgpuVideoPlanes::new",
                    mode: other.name(),
                    modes: "Mode::Interop (wgpu's Vulkan backend on the CUDA GPU), Mode::Staged",
                }
                .into());
            }
        };
        let textures = [
            plane_texture(device, luma, "cuda_gl::wgpu_interop::WgpuVideoPlanes luma")?,
            plane_texture(
                device,
                chroma,
                "cuda_gl::wgpu_interop::WgpuVideoPlanes chroma",
            )?,
        ];
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
/// Usages `TEXTURE_BINDING | COPY_SRC | COPY_DST`, one level; texel `(x, y)` of a texture is
/// pixel or pair `(x, y)` of its plane, row 0 the plane's first row. P010's textures need the
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
///   order) into a [`SharedTexture`] of the planes' own, handed between CUDA and wgpu by its
///   timeline semaphore, and wgpu copies both into the textures in the submit that takes the
///   second back: no host copy, no CPU wait. Needs a device from
///   [`open_device`](super::open_device). CUDA only ever writes the shared textures, which are
///   never handed out, so the textures the application holds are only written by wgpu
///   commands, ordered with its own: sample them at any time, from any thread.
/// - [`Mode::Staged`]: any other wgpu device (lavapipe, another vendor's GPU, wgpu's GL
///   backend): both planes are copied into pinned host memory and, once the copies have
///   finished, handed to `Queue::write_texture`. The upload waits on the CPU for the copies.
///
/// What is ordered after what: after [`upload`](Self::upload) returns `Ok`, the application's
/// next `Queue::submit` on the planes' queue sees the frame. A refused upload, or one whose
/// copies fail or time out, leaves the textures as they were; one that wgpu refuses (a texture
/// the application destroyed) writes no texture in interop mode, and in staged mode may have
/// written the other one.
///
/// **Another size or format**: a frame of another size (or NV12 after P010) re-creates the
/// textures for it, in the same mode: `upload` returns `Ok(true)`, and the application takes
/// [`luma`](Self::luma) and [`chroma`](Self::chroma) again (a bind group made with the old ones
/// still samples the old frame). Decoders change size mid-stream (adaptive streaming), and
/// refusing would leave nothing to show. The new textures are made before the old ones go: a
/// re-creation that fails keeps the old ones.
///
/// Do not destroy the textures (`wgpu::Texture::destroy`): every upload then fails with
/// [`WgpuError::Refused`](super::WgpuError::Refused) until a frame of another size makes new
/// ones. The planes keep clones of the device and queue. `Send` and `Sync`: every CUDA call
/// binds the planes' context first.
#[derive(Debug)]
pub struct WgpuVideoPlanes {
    made: Made,
    planes: [Plane; 2],
    format: VideoFormat,
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
    /// [`VideoError::ZeroSize`](crate::video::VideoError::ZeroSize) for a zero side;
    /// [`WgpuError::MissingFeature`](super::WgpuError::MissingFeature) for P010 on a device
    /// without `TEXTURE_FORMAT_16BIT_NORM`; [`DisplayError::ModeUnavailable`] for
    /// [`Mode::Stream`]; with a mode given, why that mode cannot work here (interop: a
    /// [`WgpuError`](super::WgpuError) that says what the device lacks); otherwise the staged
    /// mode's error.
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
                call: "WgpuVideoPlanes::new",
                width: size.0,
                height: size.1,
            }
            .into());
        }
        let planes = planes_of(size, format);
        check_device(device, &planes, "WgpuVideoPlanes::new")?;
        let (made, report) = first_mode(ctx, device, mode, |mode| {
            Made::new(mode, ctx, (device, queue), &planes)
        })?;
        let planes = WgpuVideoPlanes {
            made,
            planes,
            format,
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
    /// the frame's size or format differs from the last one's and the textures are new (take
    /// [`luma`](Self::luma) and [`chroma`](Self::chroma) again). Write `src` again only in work
    /// ordered after `stream`'s.
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] for a buffer or stream of another context;
    /// [`VideoError::FrameTooSmall`](crate::video::VideoError::FrameTooSmall) when `src` holds
    /// fewer bytes than `layout` spans; for a frame of another size or format, as
    /// [`new`](Self::new) in the planes' mode (the old textures are kept);
    /// [`Error::StreamCapturing`](crate::Error::StreamCapturing) for a capturing stream; the
    /// copies' errors; interop: as [`SharedTexture::write`] and [`CudaWrite::finish`](super::CudaWrite::finish);
    /// staged: [`Error::Timeout`](crate::Error::Timeout) when the copies take over 10 s;
    /// [`WgpuError::Refused`](super::WgpuError::Refused) when wgpu refuses a copy or a write
    /// (the application destroyed a texture).
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
        layout.check_fits("WgpuVideoPlanes::upload", "the device buffer", bytes)?;
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
        let planes = planes_of(layout.size(), layout.format());
        // Each plane's rows at its pitch, which lie in the frame ((1)) and are what the plane's
        // texture holds (made for this layout's size and format).
        let [(luma, luma_pitch), (chroma, chroma_pitch)] = rows_of(&layout);
        let sources = [
            (ptr.byte_add(luma)?.as_raw(), luma_pitch),
            (ptr.byte_add(chroma)?.as_raw(), chroma_pitch),
        ];
        // A frame of another size or format goes into new planes, which replace the old ones
        // only once it is there: a failed upload leaves the textures as they were.
        let mut fresh = None;
        if planes != self.planes {
            check_device(&self.device, &planes, "WgpuVideoPlanes::upload")?;
            let wgpu = (&self.device, &self.queue);
            fresh = Some(Made::new(self.mode(), &self.ctx, wgpu, &planes)?);
        }
        let made = fresh.as_mut().unwrap_or(&mut self.made);
        let wgpu = (&self.device, &self.queue);
        match &mut made.backend {
            Backend::Interop {
                shared,
                sources: from,
            } => {
                // SAFETY: (1), forwarded for the planes' rows.
                unsafe { upload_interop(shared, from, &made.textures, sources, wgpu.0, stream) }
            }
            Backend::Staged { pinned } => {
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

/// Interop: each plane from `(address, pitch)` into its shared texture on `stream`, handed
/// back to wgpu with wgpu's copies of both into `textures` in the second hand-back's submit.
///
/// # Safety
/// 1. Each source holds its shared texture's rows at its pitch, in device memory of the
///    textures' context that stays allocated and unwritten until the work queued on `stream`
///    before this returns has run.
unsafe fn upload_interop<S: AsStream>(
    [luma, chroma]: &mut [SharedTexture; 2],
    sources: &[wgpu::Texture; 2],
    textures: &[wgpu::Texture; 2],
    [(luma_src, luma_pitch), (chroma_src, chroma_pitch)]: [(sys::CUdeviceptr, usize); 2],
    device: &wgpu::Device,
    stream: &S,
) -> Result<()> {
    // SAFETY: (1) of `write`: the shared textures are never handed out; only this function
    // submits uses of them (the copies below), after both guards are finished.
    let luma_write = unsafe { luma.write(stream) }?;
    // SAFETY: as above.
    let chroma_write = unsafe { chroma.write(stream) }?;
    // SAFETY: (1) of `copy_from_pitched`: (1).
    unsafe {
        luma_write.copy_from_pitched(luma_src, luma_pitch)?;
        chroma_write.copy_from_pitched(chroma_src, chroma_pitch)?;
    }
    // Recorded now, submitted after both acquires (the luma's goes in the submit before).
    // (Had any of this failed, the guards' drops hand the images back, and nothing is shown.)
    let copy = copy_command(
        device,
        &[(&sources[0], &textures[0]), (&sources[1], &textures[1])],
    )?;
    luma_write.finish()?;
    chroma_write.finish_then(copy)
}

/// Staged: each plane from `(address, pitch)` into its pinned buffer on `stream`, then, once
/// both copies have finished (at most 10 s), handed to `write_texture` into its texture.
///
/// # Safety
/// 1. Each source holds its plane's rows at its pitch, in device memory of the pinned buffers'
///    context that stays allocated until the work queued on `stream` before this returns has
///    run.
unsafe fn upload_staged<S: AsStream>(
    pinned: &mut [PinnedBuffer<u8>; 2],
    planes: &[Plane; 2],
    textures: &[wgpu::Texture; 2],
    sources: [(sys::CUdeviceptr, usize); 2],
    (device, queue): (&wgpu::Device, &wgpu::Queue),
    stream: &S,
) -> Result<()> {
    for ((slot, plane), (src, pitch)) in pinned.iter_mut().zip(planes).zip(sources) {
        let (row, rows) = (plane.row(), plane.size.1 as usize);
        if slot.len() != row * rows {
            return Err(crate::Error::Internal {
                what: "a wgpu video plane's pinned buffer of another size than the plane".into(),
            });
        }
        // SAFETY: (1) of `copy_in_async`: the copy writes the buffer's `row * rows` bytes
        // (checked), rows tightly packed, into the pinned host memory it is given; its source
        // rows are this function's (1).
        unsafe {
            slot.copy_in_async(stream, "cuMemcpy2DAsync (not called)", |host, _, p| {
                let copy = sys::CUDA_MEMCPY2D {
                    srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                    srcDevice: src,
                    srcPitch: pitch,
                    dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
                    dstHost: host,
                    dstPitch: row,
                    WidthInBytes: row,
                    Height: rows,
                    ..Default::default()
                };
                result::array::copy_2d_async(&copy, p)
            })
        }?;
    }
    // Both copies are waited for before either plane is written: a timeout writes nothing.
    let deadline = Instant::now() + DEFAULT_WAIT_LIMIT;
    let within = || deadline.saturating_duration_since(Instant::now());
    let bytes = [
        pinned[0].as_slice_within(within())?,
        pinned[1].as_slice_within(within())?,
    ];
    scoped(device, "wgpu::Queue::write_texture", || {
        for ((bytes, plane), texture) in bytes.into_iter().zip(planes).zip(textures) {
            queue.write_texture(
                texture.as_image_copy(),
                bytes,
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    // The row of a texture wgpu made, so within `u32`.
                    bytes_per_row: Some(plane.row() as u32),
                    rows_per_image: None,
                },
                texture.size(),
            );
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_planes_of_odd_frames_round_the_chroma_up() {
        let [luma, chroma] = planes_of((1001, 333), VideoFormat::P010);
        assert_eq!(
            (luma.size, luma.format),
            ((1001, 333), SharedFormat::R16Unorm)
        );
        assert_eq!(
            (chroma.size, chroma.format),
            ((501, 167), SharedFormat::Rg16Unorm)
        );
        assert_eq!((luma.row(), chroma.row()), (2002, 2004));
        let [luma, chroma] = planes_of((77, 1201), VideoFormat::Nv12);
        assert_eq!(
            (luma.format, chroma.format),
            (SharedFormat::R8Unorm, SharedFormat::Rg8Unorm)
        );
        assert_eq!((luma.bytes(), chroma.bytes()), (77 * 1201, 39 * 2 * 601));
    }

    /// The planes' rows are the layout's: the same bytes per row as the layout counts.
    #[test]
    fn the_planes_rows_are_the_layouts() -> Result<()> {
        for format in [VideoFormat::Nv12, VideoFormat::P010] {
            for size in [(1, 1), (5, 3), (1920, 1080), (1001, 333)] {
                let layout = VideoLayout::packed(size, format)?;
                let [luma, chroma] = planes_of(size, format);
                assert_eq!(luma.row(), layout.luma_row_bytes(), "{format:?} {size:?}");
                assert_eq!(
                    chroma.row(),
                    layout.chroma_row_bytes(),
                    "{format:?} {size:?}"
                );
                assert_eq!(chroma.size, layout.chroma_size(), "{format:?} {size:?}");
                assert_eq!(
                    rows_of(&layout),
                    [
                        (0, layout.luma_pitch()),
                        (layout.chroma_offset(), layout.chroma_pitch())
                    ]
                );
            }
        }
        Ok(())
    }
}
