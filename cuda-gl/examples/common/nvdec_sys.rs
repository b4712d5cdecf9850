//! The part of `libnvcuvid.so.1` (NVDEC, part of NVIDIA's driver) that `nvdec.rs` calls,
//! opened at run time: the entry points of the parser and the decoder and the structs they take,
//! declared as `nvcuvid.h` and `cuviddec.h` of the Video Codec SDK 13.0 declare them. Each
//! struct's size and field offsets are checked at compile time against what gcc gives for those
//! headers on x86-64 Linux.

use crate::common::Unavailable;
use anyhow::{Result, anyhow};
use cuda_gl::sys::{CUresult, CUstream};
use std::ffi::{c_int, c_short, c_uint, c_ulong, c_void};
use std::mem::{ManuallyDrop, offset_of, size_of};

pub type Parser = *mut c_void;
pub type Decoder = *mut c_void;

/// `cudaVideoCodec_H264`, `cudaVideoCodec_HEVC`.
pub const CODEC_H264: c_int = 4;
pub const CODEC_HEVC: c_int = 8;
/// `cudaVideoChromaFormat_420`.
pub const CHROMA_420: c_int = 1;
/// `cudaVideoSurfaceFormat_NV12`, and `_P016`: 16-bit samples, a 10-bit one in the top bits
/// (P010's layout).
pub const SURFACE_NV12: c_int = 0;
pub const SURFACE_P016: c_int = 1;
/// `cudaVideoDeinterlaceMode_Weave`: none (the stream is progressive).
pub const WEAVE: c_int = 0;
/// `cudaVideoCreate_PreferCUVID`: the dedicated video engines.
pub const PREFER_CUVID: c_ulong = 4;
/// `CUvideopacketflags`.
pub const PKT_ENDOFSTREAM: c_ulong = 0x01;
pub const PKT_TIMESTAMP: c_ulong = 0x02;
pub const PKT_ENDOFPICTURE: c_ulong = 0x08;

/// `CUVIDEOFORMAT`: what the parser found in the sequence header.
#[repr(C)]
pub struct VideoFormat {
    pub codec: c_int,
    pub frame_rate: [c_uint; 2],
    pub progressive_sequence: u8,
    pub bit_depth_luma_minus8: u8,
    pub bit_depth_chroma_minus8: u8,
    pub min_num_decode_surfaces: u8,
    pub coded_width: c_uint,
    pub coded_height: c_uint,
    /// left, top, right, bottom.
    pub display_area: [c_int; 4],
    pub chroma_format: c_int,
    pub bitrate: c_uint,
    pub display_aspect_ratio: [c_int; 2],
    /// The VUI's video signal type: `video_format` (3 bits), `video_full_range_flag` (1 bit),
    /// then a byte each of `colour_primaries`, `transfer_characteristics`,
    /// `matrix_coefficients`.
    pub video_signal_description: [u8; 4],
    pub seqhdr_data_length: c_uint,
}

pub type SequenceCallback = unsafe extern "C" fn(*mut c_void, *mut VideoFormat) -> c_int;
/// The second argument is a `CUVIDPICPARAMS`, passed on to `cuvidDecodePicture` unread.
pub type DecodeCallback = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
pub type DisplayCallback = unsafe extern "C" fn(*mut c_void, *mut DisplayInfo) -> c_int;

/// `CUVIDPARSERPARAMS`.
#[repr(C)]
pub struct ParserParams {
    pub codec_type: c_int,
    pub max_num_decode_surfaces: c_uint,
    pub clock_rate: c_uint,
    pub error_threshold: c_uint,
    pub max_display_delay: c_uint,
    /// `bAnnexb : 1`, `bMemoryOptimize : 1`, reserved bits.
    pub bit_fields: c_uint,
    pub reserved1: [c_uint; 4],
    pub user_data: *mut c_void,
    pub sequence: Option<SequenceCallback>,
    pub decode: Option<DecodeCallback>,
    pub display: Option<DisplayCallback>,
    pub operating_point: *mut c_void,
    pub sei_messages: *mut c_void,
    pub reserved2: [*mut c_void; 5],
    pub ext_video_info: *mut c_void,
}

/// `CUVIDSOURCEDATAPACKET`.
#[repr(C)]
pub struct Packet {
    pub flags: c_ulong,
    pub payload_size: c_ulong,
    pub payload: *const u8,
    pub timestamp: i64,
}

/// `CUVIDPARSERDISPINFO`.
#[repr(C)]
pub struct DisplayInfo {
    pub picture_index: c_int,
    pub progressive_frame: c_int,
    pub top_field_first: c_int,
    pub repeat_first_field: c_int,
    pub timestamp: i64,
}

/// `CUVIDDECODECREATEINFO`.
#[repr(C)]
pub struct DecoderInfo {
    pub width: c_ulong,
    pub height: c_ulong,
    pub num_decode_surfaces: c_ulong,
    pub codec_type: c_int,
    pub chroma_format: c_int,
    pub creation_flags: c_ulong,
    pub bit_depth_minus8: c_ulong,
    pub intra_decode_only: c_ulong,
    pub max_width: c_ulong,
    pub max_height: c_ulong,
    pub reserved1: c_ulong,
    /// left, top, right, bottom.
    pub display_area: [c_short; 4],
    pub output_format: c_int,
    pub deinterlace_mode: c_int,
    pub target_width: c_ulong,
    pub target_height: c_ulong,
    pub num_output_surfaces: c_ulong,
    pub vid_lock: *mut c_void,
    pub target_rect: [c_short; 4],
    pub enable_histogram: c_ulong,
    pub reserved2: [c_ulong; 4],
}

/// `CUVIDPROCPARAMS`.
#[repr(C)]
pub struct ProcParams {
    pub progressive_frame: c_int,
    pub second_field: c_int,
    pub top_field_first: c_int,
    pub unpaired_field: c_int,
    pub reserved_flags: c_uint,
    pub reserved_zero: c_uint,
    pub raw_input_dptr: u64,
    pub raw_input_pitch: c_uint,
    pub raw_input_format: c_uint,
    pub raw_output_dptr: u64,
    pub raw_output_pitch: c_uint,
    pub reserved1: c_uint,
    pub output_stream: CUstream,
    pub reserved: [c_uint; 46],
    pub histogram_dptr: *mut u64,
    pub reserved2: [*mut c_void; 1],
}

/// `CUVIDGETDECODESTATUS`: `decodeStatus` is a `cuvidDecodeStatus`.
#[repr(C)]
pub struct DecodeStatus {
    pub decode_status: c_int,
    pub reserved: [c_uint; 31],
    pub reserved_ptrs: [*mut c_void; 8],
}

/// `cuvidDecodeStatus_Success`; `_Error` and `_Error_Concealed` are 8 and 9.
pub const DECODE_SUCCESS: c_int = 2;

/// `CUVIDDECODECAPS`.
#[repr(C)]
pub struct DecodeCaps {
    pub codec_type: c_int,
    pub chroma_format: c_int,
    pub bit_depth_minus8: c_uint,
    pub reserved1: [c_uint; 3],
    pub is_supported: u8,
    pub num_nvdecs: u8,
    pub output_format_mask: u16,
    pub max_width: c_uint,
    pub max_height: c_uint,
    pub max_mb_count: c_uint,
    pub min_width: u16,
    pub min_height: u16,
    pub is_histogram_supported: u8,
    pub counter_bit_depth: u8,
    pub max_histogram_bins: u16,
    pub reserved3: [c_uint; 10],
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
    assert!(size_of::<DecodeStatus>() == 192);
    assert!(offset_of!(DecodeStatus, reserved_ptrs) == 128);
};

/// A struct of the SDK's with every field zero: its documented default ("set to zero").
///
/// # Safety
/// 1. Every field of `T` is an integer, a raw pointer or an `Option` of a function pointer,
///    for which all-zero bytes are a valid value.
pub unsafe fn zeroed<T>() -> T {
    // SAFETY: (1).
    unsafe { std::mem::zeroed() }
}

/// The entry points of `libnvcuvid.so.1`, each declared as the SDK's headers declare it.
pub struct Nvcuvid {
    pub create_parser: unsafe extern "C" fn(*mut Parser, *mut ParserParams) -> CUresult,
    pub parse: unsafe extern "C" fn(Parser, *mut Packet) -> CUresult,
    pub destroy_parser: unsafe extern "C" fn(Parser) -> CUresult,
    pub decoder_caps: unsafe extern "C" fn(*mut DecodeCaps) -> CUresult,
    pub create_decoder: unsafe extern "C" fn(*mut Decoder, *mut DecoderInfo) -> CUresult,
    pub destroy_decoder: unsafe extern "C" fn(Decoder) -> CUresult,
    pub decode_picture: unsafe extern "C" fn(Decoder, *mut c_void) -> CUresult,
    pub map:
        unsafe extern "C" fn(Decoder, c_int, *mut u64, *mut c_uint, *mut ProcParams) -> CUresult,
    pub unmap: unsafe extern "C" fn(Decoder, u64) -> CUresult,
    pub decode_status: unsafe extern "C" fn(Decoder, c_int, *mut DecodeStatus) -> CUresult,
    /// The library, never unloaded: the entry points above stay valid, and so does the code
    /// of a decoder left alive (a frame that could not be unmapped safely leaks its decoder).
    _library: ManuallyDrop<libloading::Library>,
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
                // headers; the library is never unloaded (`_library`).
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
            decode_status: entry!("cuvidGetDecodeStatus"),
            _library: ManuallyDrop::new(library),
        })
    }
}
