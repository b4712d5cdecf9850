//! NVDEC, NVIDIA's video decoder, as example 15 drives it: [`decode`] runs a whole stream (8-bit
//! H.264, or 10-bit HEVC Main 10) through NVDEC's parser and decoder and hands each decoded
//! frame, mapped in device memory where NVDEC left it, to a closure; what NVIDIA's `NvDecoder`
//! sample does, without its copies. The library's declarations are in `nvdec_sys.rs`.

#[path = "nvdec_sys.rs"]
mod sys;

use crate::bitstream::Signal;
use crate::common::Unavailable;
use anyhow::{Result, anyhow, bail};
use cuda_gl::video::VideoFormat;
use cuda_gl::{Context, Event, Stream};
use std::ffi::{c_int, c_uint, c_ulong, c_void};
use std::ptr;
use std::sync::Arc;
use std::time::Duration;
pub use sys::Nvcuvid;
use sys::{DisplayInfo, ParserParams, zeroed};

/// Output surfaces mapped at once: at most one here (each is unmapped before the next is
/// mapped); two is NVIDIA's sample's minimum.
const OUTPUT_SURFACES: c_ulong = 2;
/// The longest wait for the work queued on a decoded frame before it is unmapped.
const FRAME_WAIT: Duration = Duration::from_secs(10);

/// What a stream is, and what NVDEC makes of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// 8-bit 4:2:0 H.264, decoded into NV12 surfaces.
    H264,
    /// 10-bit 4:2:0 HEVC (Main 10), decoded into P016 surfaces: P010's layout.
    HevcMain10,
}

impl Codec {
    /// `cudaVideoCodec`, `bitDepthMinus8`, `cudaVideoSurfaceFormat`.
    fn nvdec(self) -> (c_int, u8, c_int) {
        match self {
            Codec::H264 => (sys::CODEC_H264, 0, sys::SURFACE_NV12),
            Codec::HevcMain10 => (sys::CODEC_HEVC, 2, sys::SURFACE_P016),
        }
    }

    /// The frames' format, as cuda-gl's video calls take it.
    pub fn format(self) -> VideoFormat {
        match self {
            Codec::H264 => VideoFormat::Nv12,
            Codec::HevcMain10 => VideoFormat::P010,
        }
    }
}

/// One decoded frame, mapped: its display area's first luma sample at `ptr`, the luma rows
/// `pitch` bytes apart, its first chroma pair `chroma_offset` bytes after `ptr`, the chroma
/// rows at the same pitch. Valid only during the closure it is given to.
pub struct Decoded {
    pub ptr: u64,
    pub pitch: usize,
    pub chroma_offset: usize,
    pub size: (u32, u32),
    pub format: VideoFormat,
    /// The timestamp of the packet the frame came in.
    pub timestamp: i64,
    /// The colour description of the stream's VUI, as NVDEC's parser read it.
    pub signal: Signal,
    /// The surface: the coded size, and the row its chroma starts at (for a mismatch's
    /// message).
    pub coded: (u32, u32),
    pub chroma_row: u32,
}

impl Decoded {
    /// How the frame lies in NVDEC's surface, in words: for a mismatch's message.
    pub fn layout_text(&self) -> String {
        format!(
            "{:?} {}x{} at pitch {} in a {}x{} surface, chroma from row {} ({} bytes on)",
            self.format,
            self.size.0,
            self.size.1,
            self.pitch,
            self.coded.0,
            self.coded.1,
            self.chroma_row,
            self.chroma_offset
        )
    }
}

/// Where a frame lies in an output surface, and its colours, from the sequence header.
#[derive(Clone, Copy)]
struct Shape {
    /// The display area's size and its top-left corner in the surface, and the coded size.
    size: (u32, u32),
    origin: (u32, u32),
    coded: (u32, u32),
    /// The surface's first chroma row (after its luma rows).
    chroma_row: u32,
    signal: Signal,
}

/// What the parser's callbacks share: the decoder once the sequence header made it, and the
/// first error, which the callback that met it reports to the parser as a failure.
struct State<'a> {
    nv: &'a Nvcuvid,
    codec: Codec,
    stream: &'a Stream,
    /// Recorded on `stream` after each frame's `on_frame`, and waited for before the unmap.
    done: Event,
    decoder: sys::Decoder,
    format: Option<Shape>,
    on_frame: &'a mut dyn FnMut(&Decoded) -> Result<()>,
    error: Option<anyhow::Error>,
    /// Pictures given to NVDEC, and frames displayed.
    pictures: u32,
    frames: u32,
    /// Set when a frame could not be unmapped safely: the decoder is then not destroyed.
    leaked: bool,
}

/// What [`decode`] did: pictures given to NVDEC and frames it displayed (for a mismatch's
/// message: "parsed but never decoded" and "decoded but never displayed" read differently).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub pictures: u32,
    pub frames: u32,
}

/// Decodes `packets` (a `codec` stream in Annex B form, each packet one picture, with its
/// timestamp) on NVDEC in `ctx`, and calls `on_frame` with each decoded frame, in display
/// order. The frame's surface is mapped with `stream` as its output stream (NVDEC's
/// post-processing runs there), and unmapped once the work queued on `stream` by `on_frame` has
/// run (at most [`FRAME_WAIT`]), so `on_frame` may queue work that reads the frame: NVDEC may
/// write a surface again once it is unmapped, and its unmap does not wait for the stream.
/// Returns the pictures decoded and the frames displayed.
///
/// # Errors
/// NVDEC's, CUDA's and `on_frame`'s errors (a picture NVDEC reports it decoded with an error
/// among them); [`Unavailable`] when this GPU's NVDEC does not
/// decode the stream (its codec, depth or size).
pub fn decode<'p>(
    nv: &Nvcuvid,
    codec: Codec,
    ctx: &Arc<Context>,
    stream: &Stream,
    packets: impl IntoIterator<Item = (i64, &'p [u8])>,
    on_frame: &mut dyn FnMut(&Decoded) -> Result<()>,
) -> Result<Counts> {
    // NVDEC works in the CUDA context current on the calling thread, which runs the callbacks.
    ctx.bind()?;
    let mut state = State {
        nv,
        codec,
        stream,
        done: Event::new(ctx, false)?,
        decoder: ptr::null_mut(),
        format: None,
        on_frame,
        error: None,
        pictures: 0,
        frames: 0,
        leaked: false,
    };
    let result = run_parser(&mut state, packets);
    if !state.decoder.is_null() && !state.leaked {
        // SAFETY: the decoder made in `sequence`, every frame of it unmapped, the parser (which
        // used it) destroyed by `run_parser`.
        let destroyed = unsafe { (nv.destroy_decoder)(state.decoder) };
        if !destroyed.is_success() && result.is_ok() {
            bail!("cuvidDestroyDecoder: {destroyed:?}");
        }
    }
    result.map(|()| Counts {
        pictures: state.pictures,
        frames: state.frames,
    })
}

/// Makes the parser, feeds it every packet and the end of the stream, and destroys it.
fn run_parser<'p>(
    state: &mut State<'_>,
    packets: impl IntoIterator<Item = (i64, &'p [u8])>,
) -> Result<()> {
    let nv = state.nv;
    // SAFETY: integers, raw pointers and `None` callbacks (`zeroed`'s 1).
    let mut params: ParserParams = unsafe { zeroed() };
    params.codec_type = state.codec.nvdec().0;
    params.max_num_decode_surfaces = 1; // raised by the sequence callback's answer
    params.max_display_delay = 0; // each picture is displayed as soon as it is decoded
    params.user_data = ptr::from_mut(state).cast();
    params.sequence = Some(on_sequence);
    params.decode = Some(on_decode);
    params.display = Some(on_display);
    let mut parser: sys::Parser = ptr::null_mut();
    // SAFETY: `params` is a valid CUVIDPARSERPARAMS whose user data, `state`, outlives the
    // parser (destroyed below, before this returns); the callbacks take it as a `State`.
    let made = unsafe { (nv.create_parser)(&mut parser, &mut params) };
    if !made.is_success() {
        bail!("cuvidCreateVideoParser: {made:?}");
    }
    let feed = || -> Result<()> {
        let pictures = packets.into_iter().map(|(t, p)| {
            let flags = sys::PKT_TIMESTAMP | sys::PKT_ENDOFPICTURE;
            (t, p.len() as c_ulong, p.as_ptr(), flags)
        });
        // The end of the stream: no payload (NULL, as the header says), which flushes the
        // pictures still to display.
        let end = [(0, 0, ptr::null(), sys::PKT_ENDOFSTREAM)];
        for (timestamp, payload_size, payload, flags) in pictures.chain(end) {
            let mut packet = sys::Packet {
                flags,
                payload_size,
                payload,
                timestamp,
            };
            // SAFETY: the parser made above; the payload is `payload_size` readable bytes (a
            // packet of `packets`, alive for the call) or none; the callbacks it makes run on
            // this thread, during it, with `state` alive and not otherwise borrowed.
            let parsed = unsafe { (nv.parse)(parser, &mut packet) };
            // SAFETY: as above: the callbacks are done, nothing else touches `state`.
            let state = unsafe { &mut *params.user_data.cast::<State<'_>>() };
            if let Some(e) = state.error.take() {
                return Err(e);
            }
            if !parsed.is_success() {
                bail!("cuvidParseVideoData: {parsed:?}");
            }
        }
        Ok(())
    };
    let fed = feed();
    // SAFETY: the parser made above, destroyed once; no parse is running.
    let destroyed = unsafe { (nv.destroy_parser)(parser) };
    fed?;
    if !destroyed.is_success() {
        bail!("cuvidDestroyVideoParser: {destroyed:?}");
    }
    Ok(())
}

/// Runs `f` on the callbacks' [`State`], keeping its first error for [`decode`]: the parser is
/// told 0 (failure) then, and what `f` returned otherwise. Once an error is kept, every later
/// callback fails at once without running its `f` (the parser may still call with pictures
/// after a failed sequence callback, when there is no decoder).
///
/// # Safety
/// 1. `user` is the user data [`run_parser`] gave the parser: a live `State`, not otherwise
///    borrowed during the callback.
unsafe fn with_state(user: *mut c_void, f: impl FnOnce(&mut State<'_>) -> Result<c_int>) -> c_int {
    // SAFETY: (1).
    let state = unsafe { &mut *user.cast::<State<'_>>() };
    if state.error.is_some() {
        return 0;
    }
    match f(state) {
        Ok(ok) => ok,
        Err(e) => {
            state.error = Some(e);
            0
        }
    }
}

/// The sequence callback: makes the decoder for the stream's format, and tells the parser how
/// many decode surfaces it has.
///
/// # Safety
/// 1. Called by the parser [`run_parser`] made, with its user data (`with_state`'s 1) and a
///    CUVIDEOFORMAT valid for the call.
unsafe extern "C" fn on_sequence(user: *mut c_void, format: *mut sys::VideoFormat) -> c_int {
    // SAFETY: (1).
    unsafe { with_state(user, |state| state.sequence(&*format)) }
}

/// The decode callback: the picture to NVDEC.
///
/// # Safety
/// 1. Called by the parser [`run_parser`] made, with its user data (`with_state`'s 1) and the
///    parser's CUVIDPICPARAMS, valid for the call.
unsafe extern "C" fn on_decode(user: *mut c_void, picture: *mut c_void) -> c_int {
    // SAFETY: (1).
    unsafe {
        with_state(user, |state| {
            if state.decoder.is_null() {
                bail!("a picture to decode before any decoder was made");
            }
            // The decoder is `sequence`'s, in the current context; the picture the parser's.
            let decoded = (state.nv.decode_picture)(state.decoder, picture);
            if decoded.is_success() {
                state.pictures += 1;
                Ok(1)
            } else {
                Err(anyhow!("cuvidDecodePicture: {decoded:?}"))
            }
        })
    }
}

/// The display callback: the frame mapped, handed to `on_frame`, and unmapped. A null `info`
/// is the end of the stream.
///
/// # Safety
/// 1. Called by the parser [`run_parser`] made, with its user data (`with_state`'s 1) and a
///    CUVIDPARSERDISPINFO valid for the call, or null.
unsafe extern "C" fn on_display(user: *mut c_void, info: *mut DisplayInfo) -> c_int {
    // SAFETY: (1).
    unsafe {
        with_state(user, |state| match info.as_ref() {
            Some(info) => state.display(info).map(|()| 1),
            None => Ok(1),
        })
    }
}

impl State<'_> {
    /// The decoder for `format` (one sequence: a second, other format is refused). Returns the
    /// decode surfaces for the parser's picture buffer.
    fn sequence(&mut self, format: &sys::VideoFormat) -> Result<c_int> {
        let [left, top, right, bottom] = format.display_area;
        let size = (u32::try_from(right - left)?, u32::try_from(bottom - top)?);
        let (codec, depth, surface) = self.codec.nvdec();
        if format.codec != codec
            || format.chroma_format != sys::CHROMA_420
            || format.bit_depth_luma_minus8 != depth
        {
            bail!(
                "the parser found codec {} with chroma {} of {} bits, not {:?}",
                format.codec,
                format.chroma_format,
                u32::from(format.bit_depth_luma_minus8) + 8,
                self.codec
            );
        }
        let coded = (format.coded_width, format.coded_height);
        if let Some(shape) = self.format {
            if (shape.size, shape.coded) != (size, coded) {
                bail!(
                    "the stream changed its size ({:?} in {:?} to {size:?} in {coded:?}): not \
                     handled here",
                    shape.size,
                    shape.coded
                );
            }
            // 1: nothing changed, the decoder's surfaces stand.
            return Ok(1);
        }
        self.check_caps(format)?;
        // The parser's minimum (0 from drivers that do not say: NVIDIA's sample then uses 8).
        let surfaces = match format.min_num_decode_surfaces {
            0 => 8,
            n => c_int::from(n),
        };
        // SAFETY: integers and a null lock (`zeroed`'s 1).
        let mut info: sys::DecoderInfo = unsafe { zeroed() };
        info.width = c_ulong::from(format.coded_width);
        info.height = c_ulong::from(format.coded_height);
        info.max_width = info.width;
        info.max_height = info.height;
        info.num_decode_surfaces = surfaces as c_ulong;
        info.codec_type = codec;
        info.chroma_format = sys::CHROMA_420;
        info.bit_depth_minus8 = c_ulong::from(depth);
        info.creation_flags = sys::PREFER_CUVID;
        // No display area and the coded size as the target, as NVIDIA's sample does: the
        // surface is the whole coded picture, unscaled (1920x1088 for 1080p), and the frame its
        // display area within it.
        info.output_format = surface;
        info.deinterlace_mode = sys::WEAVE;
        info.target_width = info.width;
        info.target_height = info.height;
        info.num_output_surfaces = OUTPUT_SURFACES;
        // SAFETY: a valid CUVIDDECODECREATEINFO, in the current context.
        let made = unsafe { (self.nv.create_decoder)(&mut self.decoder, &mut info) };
        if !made.is_success() {
            self.decoder = ptr::null_mut();
            bail!("cuvidCreateDecoder: {made:?}");
        }
        let signal = format.video_signal_description;
        self.format = Some(Shape {
            size,
            origin: (u32::try_from(left)?, u32::try_from(top)?),
            coded,
            // The chroma rows follow the surface's luma rows, their number rounded up to even.
            chroma_row: format.coded_height.next_multiple_of(2),
            // `video_full_range_flag` is bit 3 of the first byte (after the 3 of
            // `video_format`, as gcc packs bit-fields).
            signal: Signal {
                primaries: signal[1],
                transfer: signal[2],
                matrix: signal[3],
                full_range: signal[0] & 0b1000 != 0,
            },
        });
        Ok(surfaces)
    }

    /// Whether this GPU's NVDEC decodes `format`'s codec, depth and coded size.
    ///
    /// # Errors
    /// [`Unavailable`] when it does not; NVDEC's error when it cannot say.
    fn check_caps(&self, format: &sys::VideoFormat) -> Result<()> {
        let (codec, depth, surface) = self.codec.nvdec();
        // SAFETY: integers only (`zeroed`'s 1).
        let mut caps: sys::DecodeCaps = unsafe { zeroed() };
        caps.codec_type = codec;
        caps.chroma_format = sys::CHROMA_420;
        caps.bit_depth_minus8 = c_uint::from(depth);
        // SAFETY: a valid CUVIDDECODECAPS, in the current context (`decode` bound it).
        let asked = unsafe { (self.nv.decoder_caps)(&mut caps) };
        if !asked.is_success() {
            bail!("cuvidGetDecoderCaps: {asked:?}");
        }
        let (w, h) = (format.coded_width, format.coded_height);
        let macroblocks = u64::from(w) * u64::from(h) / 256;
        let outputs = u32::from(caps.output_format_mask) & (1 << surface) != 0;
        if caps.is_supported == 0
            || !outputs
            || w > caps.max_width
            || h > caps.max_height
            || w < c_uint::from(caps.min_width)
            || h < c_uint::from(caps.min_height)
            || macroblocks > u64::from(caps.max_mb_count)
        {
            bail!(Unavailable(format!(
                "this GPU's NVDEC does not decode {:?} 4:2:0 at {w}x{h} (supported: {}; \
                 output formats {:#b}, {surface} needed; from {}x{} to {}x{}, at most {} \
                 macroblocks)",
                self.codec,
                caps.is_supported != 0,
                caps.output_format_mask,
                caps.min_width,
                caps.min_height,
                caps.max_width,
                caps.max_height,
                caps.max_mb_count
            )));
        }
        Ok(())
    }

    /// Whether NVDEC decoded picture `index` without an error (what NVIDIA's sample asks
    /// before it maps a picture): a decode error reads as itself, not as a wrong layout.
    ///
    /// # Errors
    /// When NVDEC reports the picture decoded with an error (concealed or not), or cannot say.
    fn check_status(&self, index: c_int) -> Result<()> {
        // SAFETY: integers and null pointers (`zeroed`'s 1).
        let mut status: sys::DecodeStatus = unsafe { zeroed() };
        // SAFETY: the decoder made by `sequence`, a picture index the parser gave, a valid
        // CUVIDGETDECODESTATUS.
        let asked = unsafe { (self.nv.decode_status)(self.decoder, index, &mut status) };
        if !asked.is_success() {
            bail!("cuvidGetDecodeStatus of picture {index}: {asked:?}");
        }
        if status.decode_status != sys::DECODE_SUCCESS {
            bail!(
                "NVDEC decoded picture {index} with status {} (2 is success; 8 an error, 9 an \
                 error concealed)",
                status.decode_status
            );
        }
        Ok(())
    }

    /// Maps the picture `info` names, hands it to `on_frame`, waits for the work queued on the
    /// stream, and unmaps it.
    fn display(&mut self, info: &DisplayInfo) -> Result<()> {
        let (Some(shape), false) = (self.format, self.decoder.is_null()) else {
            bail!("a picture to display before any decoder was made");
        };
        self.check_status(info.picture_index)?;
        // SAFETY: integers, null pointers (`zeroed`'s 1).
        let mut params: sys::ProcParams = unsafe { zeroed() };
        params.progressive_frame = info.progressive_frame;
        params.second_field = info.repeat_first_field + 1;
        params.top_field_first = info.top_field_first;
        params.unpaired_field = c_int::from(info.repeat_first_field < 0);
        params.output_stream = self.stream.raw();
        let (mut base, mut pitch) = (0u64, 0 as c_uint);
        // SAFETY: the decoder made by `sequence`, a picture index the parser gave, valid out
        // pointers and CUVIDPROCPARAMS; `self.stream` is a stream of the current context.
        let mapped = unsafe {
            (self.nv.map)(
                self.decoder,
                info.picture_index,
                &mut base,
                &mut pitch,
                &mut params,
            )
        };
        if !mapped.is_success() {
            bail!("cuvidMapVideoFrame64: {mapped:?}");
        }
        let format = self.codec.format();
        let sample = format.bytes_per_sample();
        let pitch = pitch as usize;
        let (left, top) = (shape.origin.0 as usize, shape.origin.1 as usize);
        // The display area's first luma sample, and its first chroma pair (at left / 2 pairs
        // of two samples: `left` samples' bytes) from there.
        let luma = top * pitch + left * sample;
        let chroma = (shape.chroma_row as usize + top / 2) * pitch + left * sample;
        let frame = Decoded {
            ptr: base + luma as u64,
            pitch,
            chroma_offset: chroma - luma,
            size: shape.size,
            format,
            timestamp: info.timestamp,
            signal: shape.signal,
            coded: shape.coded,
            chroma_row: shape.chroma_row,
        };
        let shown = (self.on_frame)(&frame);
        // The surface may be written by the next map once unmapped: the work `on_frame` queued
        // on the stream runs first (whatever `on_frame` returned).
        let waited = self
            .done
            .record(self.stream)
            .and_then(|()| self.done.wait_for(FRAME_WAIT));
        if let Err(e) = waited {
            // Work may still read the surface: it stays mapped and the decoder is leaked.
            self.leaked = true;
            return Err(e.into());
        }
        // SAFETY: the frame mapped above (by its base address), unmapped once; nothing queued
        // reads it any more (waited for).
        let unmapped = unsafe { (self.nv.unmap)(self.decoder, base) };
        shown?;
        if !unmapped.is_success() {
            bail!("cuvidUnmapVideoFrame64: {unmapped:?}");
        }
        self.frames += 1;
        Ok(())
    }
}
