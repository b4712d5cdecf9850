//! NVDEC, NVIDIA's video decoder, through `libnvcuvid.so.1` (part of NVIDIA's driver), opened
//! at run time: the calls of its parser and decoder that example 15 makes, and [`decode`],
//! which runs a whole H.264 stream and hands each decoded frame, mapped in device memory, to a
//! closure. The declarations follow `nvcuvid.h` and `cuviddec.h` of the Video Codec SDK 13.0;
//! each struct's size and field offsets are checked at compile time against what the C compiler
//! gives for those headers (x86-64 Linux).

use crate::common::Unavailable;
use anyhow::{Result, anyhow, bail};
use cuda_gl::sys::{CUresult, CUstream};
use cuda_gl::{Context, Event, Stream};
use std::ffi::{c_int, c_short, c_uint, c_ulong, c_void};
use std::mem::{offset_of, size_of};
use std::ptr;
use std::time::Duration;

type Parser = *mut c_void;
type Decoder = *mut c_void;

/// `cudaVideoCodec_H264`.
const CODEC_H264: c_int = 4;
/// `cudaVideoChromaFormat_420`.
const CHROMA_420: c_int = 1;
/// `cudaVideoSurfaceFormat_NV12`.
const SURFACE_NV12: c_int = 0;
/// `cudaVideoDeinterlaceMode_Weave`: none (the stream is progressive).
const WEAVE: c_int = 0;
/// `cudaVideoCreate_PreferCUVID`: the dedicated video engines.
const PREFER_CUVID: c_ulong = 4;
/// `CUvideopacketflags`.
const PKT_ENDOFSTREAM: c_ulong = 0x01;
const PKT_TIMESTAMP: c_ulong = 0x02;
const PKT_ENDOFPICTURE: c_ulong = 0x08;
/// Output surfaces mapped at once: one (each is unmapped before the next is mapped).
const OUTPUT_SURFACES: c_ulong = 2;
/// The longest wait for the work queued on a decoded frame before it is unmapped.
const FRAME_WAIT: Duration = Duration::from_secs(10);

/// `CUVIDEOFORMAT`: what the parser found in the sequence header.
#[repr(C)]
struct VideoFormat {
    codec: c_int,
    frame_rate: [c_uint; 2],
    progressive_sequence: u8,
    bit_depth_luma_minus8: u8,
    bit_depth_chroma_minus8: u8,
    min_num_decode_surfaces: u8,
    coded_width: c_uint,
    coded_height: c_uint,
    /// left, top, right, bottom.
    display_area: [c_int; 4],
    chroma_format: c_int,
    bitrate: c_uint,
    display_aspect_ratio: [c_int; 2],
    /// The VUI's video signal type: `video_format` (3 bits), `video_full_range_flag` (1 bit),
    /// then a byte each of `colour_primaries`, `transfer_characteristics`,
    /// `matrix_coefficients`.
    video_signal_description: [u8; 4],
    seqhdr_data_length: c_uint,
}

type SequenceCallback = unsafe extern "C" fn(*mut c_void, *mut VideoFormat) -> c_int;
/// The second argument is a `CUVIDPICPARAMS`, passed on to `cuvidDecodePicture` unread.
type DecodeCallback = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type DisplayCallback = unsafe extern "C" fn(*mut c_void, *mut DisplayInfo) -> c_int;

/// `CUVIDPARSERPARAMS`.
#[repr(C)]
struct ParserParams {
    codec_type: c_int,
    max_num_decode_surfaces: c_uint,
    clock_rate: c_uint,
    error_threshold: c_uint,
    max_display_delay: c_uint,
    /// `bAnnexb : 1`, `bMemoryOptimize : 1`, reserved bits.
    bit_fields: c_uint,
    reserved1: [c_uint; 4],
    user_data: *mut c_void,
    sequence: Option<SequenceCallback>,
    decode: Option<DecodeCallback>,
    display: Option<DisplayCallback>,
    operating_point: *mut c_void,
    sei_messages: *mut c_void,
    reserved2: [*mut c_void; 5],
    ext_video_info: *mut c_void,
}

/// `CUVIDSOURCEDATAPACKET`.
#[repr(C)]
struct Packet {
    flags: c_ulong,
    payload_size: c_ulong,
    payload: *const u8,
    timestamp: i64,
}

/// `CUVIDPARSERDISPINFO`.
#[repr(C)]
struct DisplayInfo {
    picture_index: c_int,
    progressive_frame: c_int,
    top_field_first: c_int,
    repeat_first_field: c_int,
    timestamp: i64,
}

/// `CUVIDDECODECREATEINFO`.
#[repr(C)]
struct DecoderInfo {
    width: c_ulong,
    height: c_ulong,
    num_decode_surfaces: c_ulong,
    codec_type: c_int,
    chroma_format: c_int,
    creation_flags: c_ulong,
    bit_depth_minus8: c_ulong,
    intra_decode_only: c_ulong,
    max_width: c_ulong,
    max_height: c_ulong,
    reserved1: c_ulong,
    /// left, top, right, bottom.
    display_area: [c_short; 4],
    output_format: c_int,
    deinterlace_mode: c_int,
    target_width: c_ulong,
    target_height: c_ulong,
    num_output_surfaces: c_ulong,
    vid_lock: *mut c_void,
    target_rect: [c_short; 4],
    enable_histogram: c_ulong,
    reserved2: [c_ulong; 4],
}

/// `CUVIDPROCPARAMS`.
#[repr(C)]
struct ProcParams {
    progressive_frame: c_int,
    second_field: c_int,
    top_field_first: c_int,
    unpaired_field: c_int,
    reserved_flags: c_uint,
    reserved_zero: c_uint,
    raw_input_dptr: u64,
    raw_input_pitch: c_uint,
    raw_input_format: c_uint,
    raw_output_dptr: u64,
    raw_output_pitch: c_uint,
    reserved1: c_uint,
    output_stream: CUstream,
    reserved: [c_uint; 46],
    histogram_dptr: *mut u64,
    reserved2: [*mut c_void; 1],
}

/// `CUVIDDECODECAPS`.
#[repr(C)]
struct DecodeCaps {
    codec_type: c_int,
    chroma_format: c_int,
    bit_depth_minus8: c_uint,
    reserved1: [c_uint; 3],
    is_supported: u8,
    num_nvdecs: u8,
    output_format_mask: u16,
    max_width: c_uint,
    max_height: c_uint,
    max_mb_count: c_uint,
    min_width: u16,
    min_height: u16,
    is_histogram_supported: u8,
    counter_bit_depth: u8,
    max_histogram_bins: u16,
    reserved3: [c_uint; 10],
}

// The layouts gcc gives the SDK 13.0 headers on x86-64 Linux (sizeof and offsetof).
const _: () = {
    assert!(size_of::<VideoFormat>() == 64);
    assert!(offset_of!(VideoFormat, progressive_sequence) == 12);
    assert!(offset_of!(VideoFormat, min_num_decode_surfaces) == 15);
    assert!(offset_of!(VideoFormat, display_area) == 24);
    assert!(offset_of!(VideoFormat, chroma_format) == 40);
    assert!(offset_of!(VideoFormat, video_signal_description) == 56);
    assert!(size_of::<ParserParams>() == 136);
    assert!(offset_of!(ParserParams, max_display_delay) == 16);
    assert!(offset_of!(ParserParams, user_data) == 40);
    assert!(offset_of!(ParserParams, display) == 64);
    assert!(offset_of!(ParserParams, ext_video_info) == 128);
    assert!(size_of::<Packet>() == 32);
    assert!(offset_of!(Packet, timestamp) == 24);
    assert!(size_of::<DisplayInfo>() == 24);
    assert!(offset_of!(DisplayInfo, timestamp) == 16);
    assert!(size_of::<DecoderInfo>() == 176);
    assert!(offset_of!(DecoderInfo, codec_type) == 24);
    assert!(offset_of!(DecoderInfo, display_area) == 80);
    assert!(offset_of!(DecoderInfo, output_format) == 88);
    assert!(offset_of!(DecoderInfo, target_width) == 96);
    assert!(offset_of!(DecoderInfo, vid_lock) == 120);
    assert!(offset_of!(DecoderInfo, target_rect) == 128);
    assert!(offset_of!(DecoderInfo, reserved2) == 144);
    assert!(size_of::<ProcParams>() == 264);
    assert!(offset_of!(ProcParams, raw_input_dptr) == 24);
    assert!(offset_of!(ProcParams, output_stream) == 56);
    assert!(offset_of!(ProcParams, histogram_dptr) == 248);
    assert!(size_of::<DecodeCaps>() == 88);
    assert!(offset_of!(DecodeCaps, is_supported) == 24);
    assert!(offset_of!(DecodeCaps, max_width) == 28);
    assert!(offset_of!(DecodeCaps, min_width) == 40);
    assert!(offset_of!(DecodeCaps, reserved3) == 48);
};

/// A struct of the SDK's with every field zero: its documented default ("set to zero").
///
/// # Safety
/// 1. Every field of `T` is an integer, a raw pointer or an `Option` of a function pointer,
///    for which all-zero bytes are a valid value.
unsafe fn zeroed<T>() -> T {
    // SAFETY: (1).
    unsafe { std::mem::zeroed() }
}

/// The entry points of `libnvcuvid.so.1`, each declared as the SDK's headers declare it.
pub struct Nvcuvid {
    create_parser: unsafe extern "C" fn(*mut Parser, *mut ParserParams) -> CUresult,
    parse: unsafe extern "C" fn(Parser, *mut Packet) -> CUresult,
    destroy_parser: unsafe extern "C" fn(Parser) -> CUresult,
    decoder_caps: unsafe extern "C" fn(*mut DecodeCaps) -> CUresult,
    create_decoder: unsafe extern "C" fn(*mut Decoder, *mut DecoderInfo) -> CUresult,
    destroy_decoder: unsafe extern "C" fn(Decoder) -> CUresult,
    decode_picture: unsafe extern "C" fn(Decoder, *mut c_void) -> CUresult,
    map: unsafe extern "C" fn(Decoder, c_int, *mut u64, *mut c_uint, *mut ProcParams) -> CUresult,
    unmap: unsafe extern "C" fn(Decoder, u64) -> CUresult,
    /// Last: the entry points above are valid while the library stays loaded.
    _library: libloading::Library,
}

impl Nvcuvid {
    /// Opens `libnvcuvid.so.1` and resolves the entry points.
    ///
    /// # Errors
    /// [`Unavailable`] when the library or an entry point is missing (a driver installed
    /// without its video libraries, a container that does not mount them).
    pub fn open() -> Result<Nvcuvid> {
        const NAME: &str = "libnvcuvid.so.1";
        let missing = |e: libloading::Error| {
            anyhow!(Unavailable(format!(
                "no NVDEC: {NAME} ({e}); NVIDIA's driver ships it (in a container, add `video` \
                 to NVIDIA_DRIVER_CAPABILITIES)"
            )))
        };
        // SAFETY: NVIDIA's driver library, whose initialisers have no preconditions.
        let library = unsafe { libloading::Library::new(NAME) }.map_err(missing)?;
        macro_rules! entry {
            ($name:literal) => {
                // SAFETY: the field's type is the entry point's C declaration in the SDK's
                // headers, and the pointer is kept no longer than `library` (the last field).
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }.map_err(missing)?
            };
        }
        Ok(Nvcuvid {
            create_parser: entry!("cuvidCreateVideoParser"),
            parse: entry!("cuvidParseVideoData"),
            destroy_parser: entry!("cuvidDestroyVideoParser"),
            decoder_caps: entry!("cuvidGetDecoderCaps"),
            create_decoder: entry!("cuvidCreateDecoder"),
            destroy_decoder: entry!("cuvidDestroyDecoder"),
            decode_picture: entry!("cuvidDecodePicture"),
            map: entry!("cuvidMapVideoFrame64"),
            unmap: entry!("cuvidUnmapVideoFrame64"),
            _library: library,
        })
    }
}

/// One decoded frame, mapped: NV12 at `ptr`, the luma rows `pitch` bytes apart, the chroma rows
/// from `chroma_offset` on at the same pitch. Valid only during the closure it is given to.
pub struct Decoded {
    pub ptr: u64,
    pub pitch: usize,
    pub chroma_offset: usize,
    pub size: (u32, u32),
    /// The timestamp of the packet the frame came in.
    pub timestamp: i64,
    /// The stream's `matrix_coefficients` (ITU-T H.273: 1 BT.709, 6 BT.601, 9 BT.2020; 2
    /// unspecified) and `video_full_range_flag`.
    pub matrix: u8,
    pub full_range: bool,
}

/// Where a frame lies in an output surface, and its colours, from the sequence header.
#[derive(Clone, Copy)]
struct Shape {
    /// The display area's size and its top-left corner in the surface.
    size: (u32, u32),
    origin: (u32, u32),
    /// The surface's first chroma row (after its luma rows).
    chroma_row: u32,
    /// As [`Decoded`]'s.
    matrix: u8,
    full_range: bool,
}

/// What the parser's callbacks share: the decoder once the sequence header made it, and the
/// first error, which the callback that met it reports to the parser as a failure.
struct State<'a> {
    nv: &'a Nvcuvid,
    ctx: &'a std::sync::Arc<Context>,
    stream: &'a Stream,
    decoder: Decoder,
    /// Where the frames lie in the decoder's surfaces, from the sequence header.
    format: Option<Shape>,
    on_frame: &'a mut dyn FnMut(&Decoded) -> Result<()>,
    error: Option<anyhow::Error>,
    frames: u32,
    /// Set when a frame could not be unmapped safely: the decoder is then not destroyed.
    leaked: bool,
}

/// Decodes `packets` (an H.264 stream in Annex B form, each packet one picture, with its
/// timestamp) on NVDEC in `ctx`, and calls `on_frame` with each decoded frame, in display
/// order. The frame's surface is mapped with `stream` as its output stream (NVDEC's
/// post-processing runs there), and unmapped once the work queued on `stream` by `on_frame` has
/// run (at most [`FRAME_WAIT`]), so `on_frame` may queue work that reads the frame. Returns the
/// number of frames decoded.
///
/// # Errors
/// NVDEC's, CUDA's and `on_frame`'s errors; [`Unavailable`] when this GPU's NVDEC does not
/// decode 8-bit 4:2:0 H.264 of that size.
pub fn decode<'p>(
    nv: &Nvcuvid,
    ctx: &std::sync::Arc<Context>,
    stream: &Stream,
    packets: impl IntoIterator<Item = (i64, &'p [u8])>,
    on_frame: &mut dyn FnMut(&Decoded) -> Result<()>,
) -> Result<u32> {
    // NVDEC works in the CUDA context current on the calling thread, which runs the callbacks.
    ctx.bind()?;
    let mut state = State {
        nv,
        ctx,
        stream,
        decoder: ptr::null_mut(),
        format: None,
        on_frame,
        error: None,
        frames: 0,
        leaked: false,
    };
    let result = run_parser(&mut state, packets);
    if !state.decoder.is_null() && !state.leaked {
        // SAFETY: the decoder made in `on_sequence`, every frame of it unmapped, the parser
        // (which used it) destroyed by `run_parser`.
        let destroyed = unsafe { (nv.destroy_decoder)(state.decoder) };
        if !destroyed.is_success() && result.is_ok() {
            bail!("cuvidDestroyDecoder: {destroyed:?}");
        }
    }
    result.map(|()| state.frames)
}

/// Makes the parser, feeds it every packet and the end of the stream, and destroys it.
fn run_parser<'p>(
    state: &mut State<'_>,
    packets: impl IntoIterator<Item = (i64, &'p [u8])>,
) -> Result<()> {
    let nv = state.nv;
    // SAFETY: integers, raw pointers and `None` callbacks (`zeroed`'s 1).
    let mut params: ParserParams = unsafe { zeroed() };
    params.codec_type = CODEC_H264;
    params.max_num_decode_surfaces = 1; // raised by the sequence callback's answer
    params.max_display_delay = 0; // each picture is displayed as soon as it is decoded
    params.user_data = ptr::from_mut(state).cast();
    params.sequence = Some(on_sequence);
    params.decode = Some(on_decode);
    params.display = Some(on_display);
    let mut parser: Parser = ptr::null_mut();
    // SAFETY: `params` is a valid CUVIDPARSERPARAMS whose user data, `state`, outlives the
    // parser (destroyed below, before this returns); the callbacks take it as a `State`.
    let made = unsafe { (nv.create_parser)(&mut parser, &mut params) };
    if !made.is_success() {
        bail!("cuvidCreateVideoParser: {made:?}");
    }
    let feed = || -> Result<()> {
        let end = [(0, &[][..], PKT_ENDOFSTREAM)];
        let pictures = packets
            .into_iter()
            .map(|(t, p)| (t, p, PKT_TIMESTAMP | PKT_ENDOFPICTURE));
        for (timestamp, payload, flags) in pictures.chain(end) {
            let mut packet = Packet {
                flags,
                payload_size: payload.len() as c_ulong,
                payload: payload.as_ptr(),
                timestamp,
            };
            // SAFETY: the parser made above; the payload is `payload_size` readable bytes,
            // read during the call; the callbacks it makes run on this thread, during it, with
            // `state` alive and not otherwise borrowed.
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

/// Runs `f` on the callbacks' [`State`], keeping its first error for [`decode`]: the parser
/// is told 0 (failure) then, and `ok` otherwise.
///
/// # Safety
/// 1. `user` is the user data [`run_parser`] gave the parser: a live `State`, not otherwise
///    borrowed during the callback.
unsafe fn with_state(user: *mut c_void, f: impl FnOnce(&mut State<'_>) -> Result<c_int>) -> c_int {
    // SAFETY: (1).
    let state = unsafe { &mut *user.cast::<State<'_>>() };
    match f(state) {
        Ok(ok) => ok,
        Err(e) => {
            state.error.get_or_insert(e);
            0
        }
    }
}

/// The sequence callback: makes the decoder for the stream's format, and tells the parser how
/// many decode surfaces it has.
unsafe extern "C" fn on_sequence(user: *mut c_void, format: *mut VideoFormat) -> c_int {
    // SAFETY: the parser calls with the user data `run_parser` gave it (`with_state`'s 1), and
    // a valid CUVIDEOFORMAT for the duration of the call.
    unsafe { with_state(user, |state| state.sequence(&*format)) }
}

/// The decode callback: the picture to NVDEC.
unsafe extern "C" fn on_decode(user: *mut c_void, picture: *mut c_void) -> c_int {
    // SAFETY: as `on_sequence`; `picture` is the parser's CUVIDPICPARAMS, passed on.
    unsafe {
        with_state(user, |state| {
            let decoded = (state.nv.decode_picture)(state.decoder, picture);
            if decoded.is_success() {
                Ok(1)
            } else {
                Err(anyhow!("cuvidDecodePicture: {decoded:?}"))
            }
        })
    }
}

/// The display callback: the frame mapped, handed to `on_frame`, and unmapped. A null `info`
/// is the end of the stream.
unsafe extern "C" fn on_display(user: *mut c_void, info: *mut DisplayInfo) -> c_int {
    // SAFETY: as `on_sequence`; `info`, when not null, is valid for the call.
    unsafe {
        with_state(user, |state| match info.as_ref() {
            Some(info) => state.display(info).map(|()| 1),
            None => Ok(1),
        })
    }
}

impl State<'_> {
    /// The decoder for `format` (one sequence: a second, other format is refused).
    fn sequence(&mut self, format: &VideoFormat) -> Result<c_int> {
        let surfaces = c_int::from(format.min_num_decode_surfaces).max(1);
        let [left, top, right, bottom] = format.display_area;
        let size = (u32::try_from(right - left)?, u32::try_from(bottom - top)?);
        let signal = format.video_signal_description;
        let (matrix, full_range) = (signal[3], signal[0] & 0b1000 != 0);
        if let Some(shape) = self.format {
            if shape.size != size || self.decoder.is_null() {
                bail!(
                    "the stream changed its format ({:?} to {size:?}): not handled here",
                    shape.size
                );
            }
            return Ok(surfaces);
        }
        if format.codec != CODEC_H264
            || format.chroma_format != CHROMA_420
            || format.bit_depth_luma_minus8 != 0
        {
            bail!("the example's stream is 8-bit 4:2:0 H.264; the parser found another");
        }
        // SAFETY: integers only (`zeroed`'s 1).
        let mut caps: DecodeCaps = unsafe { zeroed() };
        caps.codec_type = CODEC_H264;
        caps.chroma_format = CHROMA_420;
        // SAFETY: a valid CUVIDDECODECAPS, in the current context (`decode` bound it).
        let asked = unsafe { (self.nv.decoder_caps)(&mut caps) };
        if !asked.is_success() {
            bail!("cuvidGetDecoderCaps: {asked:?}");
        }
        if caps.is_supported == 0
            || format.coded_width > caps.max_width
            || format.coded_height > caps.max_height
        {
            bail!(Unavailable(format!(
                "this GPU's NVDEC does not decode 8-bit 4:2:0 H.264 of {}x{} (at most {}x{})",
                format.coded_width, format.coded_height, caps.max_width, caps.max_height
            )));
        }
        // SAFETY: integers and a null lock (`zeroed`'s 1).
        let mut info: DecoderInfo = unsafe { zeroed() };
        info.width = c_ulong::from(format.coded_width);
        info.height = c_ulong::from(format.coded_height);
        info.max_width = info.width;
        info.max_height = info.height;
        info.num_decode_surfaces = surfaces as c_ulong;
        info.codec_type = CODEC_H264;
        info.chroma_format = CHROMA_420;
        info.creation_flags = PREFER_CUVID;
        // No display area and the coded size as the target, as NVIDIA's samples do: the
        // surface is the whole coded picture, unscaled (1920x1088 for 1080p), and the frame its
        // display area within it.
        info.output_format = SURFACE_NV12;
        info.deinterlace_mode = WEAVE;
        info.target_width = info.width;
        info.target_height = info.height;
        info.num_output_surfaces = OUTPUT_SURFACES;
        // SAFETY: a valid CUVIDDECODECREATEINFO, in the current context.
        let made = unsafe { (self.nv.create_decoder)(&mut self.decoder, &mut info) };
        if !made.is_success() {
            self.decoder = ptr::null_mut();
            bail!("cuvidCreateDecoder: {made:?}");
        }
        self.format = Some(Shape {
            size,
            origin: (u32::try_from(left)?, u32::try_from(top)?),
            // The chroma rows follow the surface's luma rows, their number rounded up to even.
            chroma_row: format.coded_height.next_multiple_of(2),
            matrix,
            full_range,
        });
        Ok(surfaces)
    }

    /// Maps the picture `info` names, hands it to `on_frame`, waits for the work queued on the
    /// stream, and unmaps it.
    fn display(&mut self, info: &DisplayInfo) -> Result<()> {
        let Some(Shape {
            size,
            origin: (left, top),
            chroma_row,
            matrix,
            full_range,
        }) = self.format
        else {
            bail!("a picture to display before any sequence header");
        };
        // SAFETY: integers, null pointers (`zeroed`'s 1).
        let mut params: ProcParams = unsafe { zeroed() };
        params.progressive_frame = info.progressive_frame;
        params.second_field = info.repeat_first_field + 1;
        params.top_field_first = info.top_field_first;
        params.unpaired_field = c_int::from(info.repeat_first_field < 0);
        params.output_stream = self.stream.raw();
        let (mut ptr, mut pitch) = (0u64, 0 as c_uint);
        // SAFETY: the decoder made by `sequence`, a picture index the parser gave, valid out
        // pointers and CUVIDPROCPARAMS; `self.stream` is a stream of the current context.
        let mapped = unsafe {
            (self.nv.map)(
                self.decoder,
                info.picture_index,
                &mut ptr,
                &mut pitch,
                &mut params,
            )
        };
        if !mapped.is_success() {
            bail!("cuvidMapVideoFrame64: {mapped:?}");
        }
        let pitch = pitch as usize;
        let (left, top, chroma_row) = (left as usize, top as usize, chroma_row as usize);
        // The display area's first luma sample, and its first chroma pair from there.
        let luma = (top * pitch + left) as u64;
        let chroma = (chroma_row + top / 2) * pitch + left;
        let frame = Decoded {
            ptr: ptr + luma,
            pitch,
            chroma_offset: chroma - top * pitch - left,
            size,
            timestamp: info.timestamp,
            matrix,
            full_range,
        };
        let shown = (self.on_frame)(&frame);
        // The surface may be written by the next map once unmapped: the work `on_frame` queued
        // on the stream runs first (whatever `on_frame` returned).
        let waited = Event::new(self.ctx, false)
            .and_then(|done| done.record(self.stream).map(|()| done))
            .and_then(|done| done.wait_for(FRAME_WAIT));
        if let Err(e) = waited {
            // Work may still read the surface: it stays mapped and the decoder is leaked.
            self.leaked = true;
            return Err(e.into());
        }
        // SAFETY: the frame mapped above, unmapped once; nothing queued reads it any more
        // (waited for).
        let unmapped = unsafe { (self.nv.unmap)(self.decoder, ptr) };
        shown?;
        if !unmapped.is_success() {
            bail!("cuvidUnmapVideoFrame64: {unmapped:?}");
        }
        self.frames += 1;
        Ok(())
    }
}
