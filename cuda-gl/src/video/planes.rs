//! [`VideoPlanes`]: a frame's luma and chroma planes copied into two GL textures of the
//! application's, for a shader that converts them itself, in the first mode that works here
//! (one file per mode beside this one; the `match`es on the mode are here).

use super::frame::VideoFrame;
use super::layout::{VideoFormat, VideoLayout};
use super::plane_check::{check_frame_size, check_textures};
use crate::TextureName;
use crate::context::Context;
#[cfg(doc)]
use crate::error::Error;
use crate::error::{Result, UsageError, VideoError};
use crate::glapi::current_gl;
use crate::memory::DevicePtr;
use crate::mode_choice::{Mode, Report, first_mode};
use crate::queue::AfterWork;
use crate::source::{ShowSource, memory_of};
use crate::stream::AsStream;
use interop::Interop;
use staged::Staged;
use std::sync::Arc;
use stream::Streamed;

#[cfg(all(test, feature = "egl", feature = "cudarc"))]
mod cudarc_event_tests;
mod gl_write;
mod interop;
mod staged;
mod stream;

#[cfg(feature = "wgpu-gl")]
pub(crate) use interop::copy_planes;
#[cfg(feature = "wgpu")]
pub(crate) use staged::planes_to_host;

/// The calls errors name.
const NEW: &str = "VideoPlanes::new";
const UPLOAD: &str = "VideoPlanes::upload";
const UPLOAD_RAW: &str = "VideoPlanes::upload_raw";

/// The planes of NV12 or P010 frames written into two 2-D GL textures of the application's:
/// the **luma** texture of the frame's size
/// with one channel (`GL_R8` for NV12, `GL_R16` for P010), and the **chroma** texture of
/// `ceil(width / 2)` x `ceil(height / 2)` with two channels (`GL_RG8`, `GL_RG16`: Cb in `.r`,
/// Cr in `.g`). Level 0 of each is written, row 0 of each plane its first row.
///
/// The textures need **immutable storage** (`glTexStorage2D`) of exactly these internal
/// formats: [`new`](Self::new) asks GL for their storage and refuses any other
/// (mutable storage, which GL calls may respecify at any time; integer formats such as
/// `GL_R8UI`, which hold the same bytes but sample differently), and
/// [`upload`](Self::upload) checks each frame against it before anything is copied.
///
/// Sampling: texel `(x, y)` of the luma is the frame's pixel `(x, y)`; its chroma pair is chroma
/// texel `(x / 2, y / 2)` (the "left" siting of H.264, HEVC and AV1 streams), for any size:
/// `texelFetch(chroma, ivec2(x, y) / 2, 0)` in GLSL. (Sampling the chroma at the luma's
/// normalized coordinate with `GL_NEAREST` gives the same texel only for even sides.) P010's
/// samples are the high 10 bits of each 16-bit value: `uint(round(v * 65535.0)) >> 6` of the
/// value `v` read from an `R16` texture. The colour equations are in the [module docs](super).
///
/// How the planes reach the textures is the [`Mode`]:
/// - [`Mode::Interop`] (GL on the CUDA GPU): the textures are registered with CUDA and written
///   on the GPU by CUDA's copies, with no host copy and no CPU wait.
/// - [`Mode::Staged`] (any GL with object labels and immutable storage, OpenGL 4.3 say: Mesa's,
///   another GPU's): each plane is copied by CUDA into pinned host memory and written into its
///   texture by GL; the upload waits on the CPU for the copies.
/// - [`Mode::Stream`] (NVIDIA's GL on the CUDA GPU with `GL_EXT_memory_object_fd`; never chosen
///   by `None`): no map or unmap. Both planes are copied by CUDA into memory GL imports (two
///   slots, in turn), the upload waits on the CPU for those copies, then GL writes the textures
///   out of it; GL's next copy out of a slot is fenced before CUDA writes it again.
///
/// The textures stay the application's: it deletes them after dropping this value (which
/// unregisters or releases them), and never before. Drop it with the textures' GL context
/// current on the dropping thread (it is `Send`: any thread that has it current): otherwise the
/// interop mode's registrations and the stream mode's imported memory are leaked, with the
/// error recorded for [`Context::take_drop_errors`](crate::Context::take_drop_errors). For
/// frames of another size, drop this value and make planes of textures of that size.
#[derive(Debug)]
pub struct VideoPlanes {
    made: Made,
    format: VideoFormat,
    /// The luma texture's size, as GL reported it at `new` (immutable storage: no GL call
    /// changes it); the chroma texture's is half of it, rounded up (checked then too).
    size: (u32, u32),
    ctx: Arc<Context>,
}

/// The textures a mode's planes go into: `[luma, chroma]`, the luma's size (the frames'), and
/// the frames' format.
#[derive(Debug, Clone, Copy)]
struct PlaneTextures {
    names: [u32; 2],
    size: (u32, u32),
    format: VideoFormat,
}

/// A frame a mode uploads: the call that uploads it (errors name it), where it lies and how.
#[derive(Debug, Clone, Copy)]
struct PlaneFrame<'a> {
    call: &'static str,
    ptr: DevicePtr<'a>,
    layout: &'a VideoLayout,
}

/// Device memory an upload copies a frame out of: the call (errors name it), what the memory
/// is (`"the device buffer"`), its first byte and its length in bytes.
#[derive(Debug, Clone, Copy)]
struct Given<'a> {
    call: &'static str,
    what: &'static str,
    ptr: DevicePtr<'a>,
    bytes: usize,
}

/// A mode's state.
#[derive(Debug)]
enum Made {
    Interop(Interop),
    Staged(Staged),
    Stream(Streamed),
}

/// The modes video planes have, fastest first: what `auto` tries.
const MODES: [Mode; 2] = [Mode::Interop, Mode::Staged];

impl VideoPlanes {
    /// Video planes of `format` frames into the `[luma, chroma]` textures (2-D textures of the
    /// GL context current on this thread), with CUDA context `ctx`, in `mode`, or with `None`
    /// in the first of interop and staged that works here; and the [`Report`] of what was
    /// chosen and why. GL is asked first whether the textures' storage is immutable, of the
    /// planes' internal formats (`GL_R8` + `GL_RG8` for NV12, `GL_R16` + `GL_RG16` for P010),
    /// and the chroma half the luma's size rounded up. Frames must then have the luma
    /// texture's size. The names are `u32`s, [`TextureName`]s, or (feature `glow`) glow
    /// `NativeTexture`s. The storage is asked by name in an OpenGL 4.5 context; before 4.5
    /// through a bind, which consumes the GL errors the application left pending
    /// (`glGetError` returns each once): check yours first there. (The staged and stream modes
    /// ask again at each upload.)
    ///
    /// # Errors
    /// The owner check's when no usable GL context is current ([`Error::NoGlContext`]);
    /// [`VideoError::PlaneStorage`] for a texture of mutable storage, or a name that is no
    /// texture; [`VideoError::PlaneTexture`] for another internal format, or a chroma texture
    /// of another size; [`Error::GlCall`] for a texture of another target than
    /// `GL_TEXTURE_2D`; [`Error::MissingGlFunction`] on an OpenGL ES 3.0 context (no
    /// `glGetTexLevelParameteriv`); [`Error::AlreadyRegistered`] for a texture registered or
    /// used by other planes already; with a mode given, why it cannot work here (interop:
    /// [`Error::NotNvidiaGl`] or [`Error::WrongDevice`] for GL not on the CUDA GPU; stream:
    /// [`Error::MissingGlExtension`] without `GL_EXT_memory_object_fd`, and as
    /// [`ExternalRing::new`](crate::external::ExternalRing::new)); otherwise the staged mode's
    /// error (the driver's, from allocating its pinned memory).
    pub fn new<T: Into<TextureName>>(
        ctx: &Arc<Context>,
        textures: [T; 2],
        format: VideoFormat,
        mode: Option<Mode>,
    ) -> Result<(VideoPlanes, Report)> {
        let (_, _, fns) = current_gl(NEW)?;
        let names = textures.map(|t| t.into().0);
        let size = check_textures(fns, NEW, names, format)?;
        let string = |name| fns.string(name).unwrap_or_default();
        let report = |mode, refused| Report {
            target: "video planes",
            mode,
            refused,
            api: "GL",
            renderer: string(gl::RENDERER),
            vendor: string(gl::VENDOR),
            cuda_device: ctx.device().label().to_string(),
        };
        let modes = match &mode {
            Some(mode) => std::slice::from_ref(mode),
            None => &MODES[..],
        };
        let textures = PlaneTextures {
            names,
            size,
            format,
        };
        let make = |mode| match mode {
            Mode::Interop => Interop::new(ctx, names).map(Made::Interop),
            Mode::Staged => Staged::new(ctx, textures).map(Made::Staged),
            Mode::Stream => Streamed::new(ctx, textures).map(Made::Stream),
        };
        let (made, report) = first_mode(modes, "video planes", make, report)?;
        let planes = VideoPlanes {
            made,
            format,
            size,
            ctx: ctx.clone(),
        };
        Ok((planes, report))
    }

    /// The frame format the textures hold.
    pub fn format(&self) -> VideoFormat {
        self.format
    }

    /// The frames' size: the luma texture's.
    pub fn size(&self) -> (u32, u32) {
        self.size
    }

    /// The mode the planes reach the textures in.
    pub fn mode(&self) -> Mode {
        match self.made {
            Made::Interop(_) => Mode::Interop,
            Made::Staged(_) => Mode::Staged,
            Made::Stream(_) => Mode::Stream,
        }
    }

    /// Copies the frame of `layout` at the start of `src` into the two textures, in `stream`'s
    /// order (after the work queued on it before, the decoder's say), so that the GL commands
    /// this thread issues in the textures' context after this returns see the planes. In
    /// interop mode the textures are mapped, written and unmapped on cuda-gl's private stream,
    /// joined to `stream` once (see the crate docs' safety model), and work queued on `stream`
    /// later follows the copies; the CPU does not wait for them: write `src` again only in
    /// work ordered after `stream`'s. In staged mode the CPU waits (at most the [wait
    /// limit](crate::wait_limit)) for the copies into pinned memory, then GL writes the
    /// textures; GL errors the application left pending are taken first, each logged as a
    /// warning (as the display target's uploads take them), so that GL's answer is the
    /// write's. In stream mode the CPU waits likewise for the copies into imported memory
    /// (and, first, for GL's writes out of that slot two uploads before), then GL writes the
    /// textures as in staged mode.
    ///
    /// # Errors
    /// Refused before anything is copied, leaving the textures as they were:
    /// [`VideoError::PlaneFormat`] for a frame of another format;
    /// [`UsageError::WrongCudaContext`] for a buffer of another context;
    /// [`VideoError::FrameTooSmall`] when `src` holds fewer bytes than `layout` spans;
    /// [`VideoError::PlaneTexture`] for a frame of another size than the luma texture; no GL
    /// context, or another, current ([`Error::NoGlContext`], [`Error::WrongGlContext`]); a
    /// capturing stream. Then, interop: the driver's errors of the map, the copies and the
    /// unmap, and [`VideoError::PlaneTexture`] when the arrays CUDA maps do not hold the planes
    /// (storage changed since `new`: nothing is copied); staged: [`VideoError::PlaneStorage`]
    /// or [`VideoError::PlaneTexture`] for textures GL no longer reports as `new` found them
    /// (nothing is copied; stream mode too), the copies' errors, [`Error::Timeout`] (nothing is
    /// written),
    /// [`UsageError::PinnedBufferUntracked`] after a copy whose end could not be tracked (then
    /// at every upload: make new planes), and [`Error::GlCall`] when GL refuses a write (the
    /// luma may then be written and the chroma not); stream: as staged, and as
    /// [`ExternalRing::write`](crate::external::ExternalRing::write) and
    /// [`read`](crate::external::ExternalRing::read).
    pub fn upload<Src: ShowSource + ?Sized>(
        &mut self,
        src: &Src,
        layout: VideoLayout,
        stream: &impl AsStream,
    ) -> Result<()> {
        self.check_format(UPLOAD, &layout)?;
        let (ptr, bytes, ctx) = memory_of(src);
        if ctx.raw() != self.ctx.raw() {
            return Err(UsageError::WrongCudaContext {
                what: "device buffer",
                owner: "the video planes".into(),
            }
            .into());
        }
        let given = Given {
            call: UPLOAD,
            what: "the device buffer",
            ptr,
            bytes,
        };
        // SAFETY: (1): device memory of the planes' context (checked); a `DeviceBuffer` is
        // freed only after the device's work, and what safe code writes into it on another
        // stream unordered with `stream` races with the copy on the GPU (a torn plane, as for
        // `DisplayTarget::show`), never outside it.
        unsafe { self.upload_given(given, layout, stream, None) }
    }

    /// [`upload`](Self::upload) of a frame in device memory of any origin: a decoder's surface
    /// (NVDEC's `cuvidMapVideoFrame64` pointer, through
    /// [`DevicePtr::from_raw`](crate::DevicePtr::from_raw), and pitch), memory of another CUDA
    /// library. What is ordered after what, and what the CPU waits for: as `upload`.
    ///
    /// # Safety
    /// 1. `frame.ptr()` points to `frame.layout().bytes()` bytes of device memory of the
    ///    planes' CUDA context, which stay allocated and are not written until the work queued
    ///    on `stream` before this returns has run.
    ///
    /// # Errors
    /// As [`upload`](Self::upload), but for the buffer's checks (its context, its size).
    pub unsafe fn upload_raw(
        &mut self,
        frame: &VideoFrame<'_>,
        stream: &impl AsStream,
    ) -> Result<()> {
        let layout = frame.layout();
        self.check_format(UPLOAD_RAW, &layout)?;
        let given = Given {
            call: UPLOAD_RAW,
            what: "the frame",
            ptr: frame.ptr(),
            bytes: layout.bytes(),
        };
        // SAFETY: (1), forwarded: the frame's layout spans `bytes` bytes from its pointer.
        unsafe { self.upload_given(given, layout, stream, None) }
    }

    /// [`upload`](Self::upload) of a frame in cudarc device memory: a `CudaSlice`, a
    /// `CudaView`, or a mapped view (of any element type: the frame is at its first byte, as
    /// `layout` says). The copies are queued in `stream`'s order, after cudarc's own writes of
    /// `src`, and (with cudarc's event tracking on, its default) cudarc's later writes or frees
    /// of `src` wait for them, in every mode: cudarc's read event is recorded right after them
    /// on cuda-gl's private stream. What is ordered after what, and what the CPU waits for:
    /// as `upload`.
    ///
    /// # Errors
    /// Refused before anything is copied, leaving the textures as they were, as `upload`'s
    /// refusals, and: [`UsageError::WrongCudaContext`] when `stream` is not of the planes'
    /// context or `src` is not of `stream`'s cudarc context (the same `Arc<CudaContext>`: two
    /// `CudaContext`s of one device track their streams apart); [`VideoError::FrameTooSmall`]
    /// when `src` holds fewer bytes than `layout` spans; [`UsageError::TooLarge`] when `src`'s
    /// length in bytes overflows `usize`. Then as [`upload`](Self::upload). Last, when
    /// cudarc's read event could not be recorded after the copies (or a capture of `stream`
    /// began meanwhile), the wait for the copies that replaces it: [`Error::Timeout`] past the
    /// [wait limit](crate::wait_limit), or the driver's error. That error can come back after
    /// the textures were written (when the upload itself failed too, its error is returned).
    #[cfg(feature = "cudarc")]
    pub fn upload_cudarc<T, Src: crate::cudarc_interop::CudarcSource<T>>(
        &mut self,
        src: &Src,
        layout: VideoLayout,
        stream: &Arc<cudarc::driver::CudaStream>,
    ) -> Result<()> {
        const CALL: &str = "VideoPlanes::upload_cudarc";
        const OWNER: &str = "the video planes";
        self.check_format(CALL, &layout)?;
        // Before cudarc is asked for anything: its read queues a wait on `stream`.
        crate::stream::check_same_context(&self.ctx, stream, OWNER)?;
        // The frame's fit and size before cudarc is asked for the address (`CudarcRead::new`).
        let fits = |bytes| self.check_frame(CALL, "the cudarc memory", &layout, bytes);
        let mut read = crate::cudarc_interop::CudarcRead::new(src, stream, OWNER, fits)?;
        let given = Given {
            call: CALL,
            what: "the cudarc memory",
            ptr: read.ptr,
            bytes: read.bytes,
        };
        let mut record = |p| read.record(p);
        // SAFETY: (1): `src` holds `bytes` bytes of device memory of `stream`'s context
        // (`CudarcSource`), the planes' (checked), which cudarc neither frees nor writes before
        // the read event that `record` records right after the copies, in their run (each
        // mode runs it so).
        let uploaded = unsafe { self.upload_given(given, layout, stream, Some(&mut record)) };
        read.done(&self.ctx, uploaded)
    }

    /// Refuses a frame of `layout` that does not lie in the `bytes` bytes of memory `what`, or
    /// is of another size than the luma texture.
    ///
    /// # Errors
    /// [`VideoError::FrameTooSmall`] naming `call`; [`VideoError::PlaneTexture`].
    fn check_frame(
        &self,
        call: &'static str,
        what: &'static str,
        layout: &VideoLayout,
        bytes: usize,
    ) -> Result<()> {
        layout.check_fits(call, what, bytes)?;
        check_frame_size(layout.size(), self.size)
    }

    /// Refuses a frame of another format than the planes'.
    ///
    /// # Errors
    /// [`VideoError::PlaneFormat`] naming `call`.
    fn check_format(&self, call: &'static str, layout: &VideoLayout) -> Result<()> {
        if layout.format() == self.format {
            return Ok(());
        }
        Err(VideoError::PlaneFormat {
            call,
            frame: format!("{:?}", layout.format()),
            planes: format!("{:?}", self.format),
        }
        .into())
    }

    /// The frame of `layout` at the start of `given`'s memory into both textures, in the
    /// planes' mode, once it is checked to lie in that memory and to have the textures' size;
    /// `after` runs on cuda-gl's private stream right after the copies out of the memory, in
    /// their run (see [`AfterWork`]).
    ///
    /// # Safety
    /// 1. `given.ptr` is the first of `given.bytes` bytes of device memory of the planes'
    ///    context, which stay allocated until the work queued on `stream` before this returns
    ///    (and `after`'s record, when given) has run.
    ///
    /// # Errors
    /// [`VideoError::FrameTooSmall`]; [`VideoError::PlaneTexture`] for a frame of another size
    /// than the luma texture; the mode's, as [`upload`](Self::upload) says.
    unsafe fn upload_given(
        &mut self,
        given: Given<'_>,
        layout: VideoLayout,
        stream: &impl AsStream,
        after: AfterWork<'_>,
    ) -> Result<()> {
        self.check_frame(given.call, given.what, &layout, given.bytes)?;
        let frame = PlaneFrame {
            call: given.call,
            ptr: given.ptr,
            layout: &layout,
        };
        // SAFETY: (1) of each mode's `upload`: the planes lie in the memory (checked by
        // `check_fits`), which this function's (1) keeps allocated; `after` runs right after
        // the copies, in their run.
        unsafe {
            match &mut self.made {
                Made::Interop(m) => m.upload(frame, stream, after),
                Made::Staged(m) => m.upload(frame, stream, after),
                Made::Stream(m) => m.upload(frame, stream, after),
            }
        }
    }
}
