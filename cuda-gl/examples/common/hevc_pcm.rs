//! A lossless HEVC Main 10 stream of P010 frames, written without an encoder: every 32x32
//! coding tree unit is one PCM coding unit (its 10-bit samples stored as they are), every
//! picture an IDR of one slice; no deblocking, no SAO. A real decoder (NVDEC in example 15)
//! gives back the frames' samples exactly. The 10-bit sibling of `h264_pcm.rs`, for the P010
//! production case: NVDEC decodes 10-bit video from HEVC, not H.264.
//!
//! The syntax is ITU-T H.265 (V8, 08/2021): parameter sets (7.3.2.1-7.3.2.3), the profile, tier
//! and level (7.3.3), the slice segment header (7.3.6.1), and the slice data (7.3.8) coded with
//! CABAC (9.3): per coding tree unit a `split_cu_flag` of 0, a `pcm_flag` of 1, the samples,
//! and `end_of_slice_segment_flag`.

use crate::bitstream::{Bits, Frames, Signal, nal};
use anyhow::{Result, bail};

/// The coding tree unit's size (log2): 32x32, each one PCM coding unit.
const LOG2_CTB: u32 = 5;
const CTB: u32 = 1 << LOG2_CTB;
/// The smallest coding unit (log2): 8x8. Smaller than the tree unit, so that `part_mode` is not
/// coded (it is only at the smallest size) and `split_cu_flag` is.
const LOG2_MIN_CB: u32 = 3;
/// `general_profile_idc` 2: Main 10.
const MAIN_10: u32 = 2;
/// `general_level_idc` 5.1 (30 x 5.1): up to 8,912,896 luma samples a picture.
const LEVEL: u32 = 153;
/// The sample bit depth, coded and stored.
const BITS: u32 = 10;

/// `nal_unit_type`s (table 7-1): an IDR picture with no leading pictures, the parameter sets.
const IDR_N_LP: u8 = 20;
const VPS: u8 = 32;
const SPS: u8 = 33;
const PPS: u8 = 34;

/// `rangeTabLPS` (table 9-52), by `pStateIdx` and `(ivlCurrRange >> 6) & 3`.
const RANGE_LPS: [[u8; 4]; 64] = [
    [128, 176, 208, 240],
    [128, 167, 197, 227],
    [128, 158, 187, 216],
    [123, 150, 178, 205],
    [116, 142, 169, 195],
    [111, 135, 160, 185],
    [105, 128, 152, 175],
    [100, 122, 144, 166],
    [95, 116, 137, 158],
    [90, 110, 130, 150],
    [85, 104, 123, 142],
    [81, 99, 117, 135],
    [77, 94, 111, 128],
    [73, 89, 105, 122],
    [69, 85, 100, 116],
    [66, 80, 95, 110],
    [62, 76, 90, 104],
    [59, 72, 86, 99],
    [56, 69, 81, 94],
    [53, 65, 77, 89],
    [51, 62, 73, 85],
    [48, 59, 69, 80],
    [46, 56, 66, 76],
    [43, 53, 63, 72],
    [41, 50, 59, 69],
    [39, 48, 56, 65],
    [37, 45, 54, 62],
    [35, 43, 51, 59],
    [33, 41, 48, 56],
    [32, 39, 46, 53],
    [30, 37, 43, 50],
    [29, 35, 41, 48],
    [27, 33, 39, 45],
    [26, 31, 37, 43],
    [24, 30, 35, 41],
    [23, 28, 33, 39],
    [22, 27, 32, 37],
    [21, 26, 30, 35],
    [20, 24, 29, 33],
    [19, 23, 27, 31],
    [18, 22, 26, 30],
    [17, 21, 25, 28],
    [16, 20, 23, 27],
    [15, 19, 22, 25],
    [14, 18, 21, 24],
    [14, 17, 20, 23],
    [13, 16, 19, 22],
    [12, 15, 18, 21],
    [12, 14, 17, 20],
    [11, 14, 16, 19],
    [11, 13, 15, 18],
    [10, 12, 15, 17],
    [10, 12, 14, 16],
    [9, 11, 13, 15],
    [9, 11, 12, 14],
    [8, 10, 12, 14],
    [8, 9, 11, 13],
    [7, 9, 11, 12],
    [7, 9, 10, 12],
    [7, 8, 10, 11],
    [6, 8, 9, 11],
    [6, 7, 9, 10],
    [6, 7, 8, 9],
    [2, 2, 2, 2],
];
/// `initValue` of `split_cu_flag`'s first context in I slices (table 9-11); with the neighbours
/// all of depth 0, `ctxInc` is always 0 (9.3.4.2.2).
const SPLIT_CU_FLAG_INIT: i32 = 139;
/// `SliceQpY`: 26 + `init_qp_minus26` (0) + `slice_qp_delta` (0). Only the context's
/// initialisation reads it: PCM samples are not quantised.
const SLICE_QP: i32 = 26;

/// An HEVC Main 10 stream of PCM pictures of its frames.
#[derive(Clone, Copy, Debug)]
pub struct HevcPcmStream {
    frames: Frames,
}

impl HevcPcmStream {
    /// A stream of `width` x `height` frames described as `signal`.
    ///
    /// # Errors
    /// For an odd or zero size, or one over level 5.1's 8,912,896 luma samples (coded, in whole
    /// 32x32 units).
    pub fn new(width: u32, height: u32, signal: Signal) -> Result<HevcPcmStream> {
        let stream = HevcPcmStream {
            frames: Frames::new("HEVC", width, height, signal)?,
        };
        let (w, h) = stream.coded();
        if u64::from(w) * u64::from(h) > 8_912_896 {
            bail!("{width}x{height}: over level 5.1's 8,912,896 luma samples");
        }
        Ok(stream)
    }

    /// The bytes of one packed P010 frame: the luma rows, then the interleaved chroma rows, of
    /// little-endian 16-bit words holding the sample in their top 10 bits.
    pub fn frame_bytes(&self) -> usize {
        self.frames.bytes(2)
    }

    /// The coded size: the frame rounded up to whole coding tree units.
    fn coded(&self) -> (u32, u32) {
        (
            self.frames.width.next_multiple_of(CTB),
            self.frames.height.next_multiple_of(CTB),
        )
    }

    /// The video, sequence and picture parameter sets, as NAL units with start codes: what the
    /// stream begins with.
    pub fn headers(&self) -> Vec<u8> {
        let mut out = Vec::new();
        nal(&mut out, &header(VPS), &vps());
        nal(&mut out, &header(SPS), &self.sps());
        nal(&mut out, &header(PPS), &pps());
        out
    }

    /// A frame (packed P010, [`frame_bytes`](Self::frame_bytes) long) as one IDR picture
    /// (HEVC's IDR slice header carries no frame number): one NAL unit with its start code. The
    /// samples past the frame's right and bottom edges repeat its edge samples (the conformance
    /// window crops them away); each word's low 6 bits are dropped.
    ///
    /// # Errors
    /// When `p010` is not one frame long.
    pub fn frame(&self, p010: &[u8]) -> Result<Vec<u8>> {
        if p010.len() != self.frame_bytes() {
            bail!(
                "a {}x{} P010 frame is {} bytes, not {}",
                self.frames.width,
                self.frames.height,
                self.frame_bytes(),
                p010.len()
            );
        }
        let (w, h) = (self.frames.width as usize, self.frames.height as usize);
        let word = |at: usize| u16::from_le_bytes([p010[at * 2], p010[at * 2 + 1]]) >> 6;
        let luma_at = |x: usize, y: usize| word(y.min(h - 1) * w + x.min(w - 1));
        let chroma_at = |x: usize, y: usize, k: usize| {
            word(w * h + y.min(h / 2 - 1) * w + x.min(w / 2 - 1) * 2 + k)
        };
        let mut bits = Bits::default();
        slice_header(&mut bits);
        let mut cabac = Cabac::new(bits);
        let (cw, ch) = self.coded();
        let (ctbs_w, ctbs_h) = ((cw / CTB) as usize, (ch / CTB) as usize);
        let size = CTB as usize;
        for ty in 0..ctbs_h {
            for tx in 0..ctbs_w {
                // coding_quadtree: not split (the unit lies inside the coded picture, and is
                // larger than the smallest coding unit, so the flag is coded).
                cabac.decision(false);
                // coding_unit: intra (an I slice), `part_mode` inferred 2Nx2N; `pcm_flag` 1.
                let bits = cabac.terminate_then_flush();
                bits.align_zero(); // pcm_alignment_zero_bit
                for y in 0..size {
                    for x in 0..size {
                        bits.u(BITS, u32::from(luma_at(tx * size + x, ty * size + y)));
                    }
                }
                // All of Cb's 16x16, then all of Cr's (7.3.8.7).
                for k in 0..2 {
                    for y in 0..size / 2 {
                        for x in 0..size / 2 {
                            let at = (tx * size / 2 + x, ty * size / 2 + y);
                            bits.u(BITS, u32::from(chroma_at(at.0, at.1, k)));
                        }
                    }
                }
                // The arithmetic coder starts again after the samples (9.3.2.5); the contexts
                // keep their state.
                cabac.restart();
                let last = ty + 1 == ctbs_h && tx + 1 == ctbs_w;
                if last {
                    // end_of_slice_segment_flag 1: flushed; its last bit is the RBSP's stop bit.
                    cabac.terminate_then_flush().align_zero();
                } else {
                    cabac.terminate_zero();
                }
            }
        }
        let mut out = Vec::with_capacity(self.frame_bytes() * 2);
        nal(&mut out, &header(IDR_N_LP), &cabac.into_bits().into_bytes());
        Ok(out)
    }

    /// `seq_parameter_set_rbsp()` (7.3.2.2.1).
    fn sps(&self) -> Vec<u8> {
        let (cw, ch) = self.coded();
        let mut b = Bits::default();
        b.u(4, 0); // sps_video_parameter_set_id
        b.u(3, 0); // sps_max_sub_layers_minus1
        b.u(1, 1); // sps_temporal_id_nesting_flag
        profile_tier_level(&mut b);
        b.ue(0); // sps_seq_parameter_set_id
        b.ue(1); // chroma_format_idc: 4:2:0
        b.ue(cw); // pic_width_in_luma_samples
        b.ue(ch); // pic_height_in_luma_samples
        // The conformance window, in chroma samples (SubWidthC = SubHeightC = 2).
        let (right, bottom) = ((cw - self.frames.width) / 2, (ch - self.frames.height) / 2);
        let cropped = right != 0 || bottom != 0;
        b.u(1, u32::from(cropped)); // conformance_window_flag
        if cropped {
            for offset in [0, right, 0, bottom] {
                b.ue(offset); // left, right, top, bottom
            }
        }
        b.ue(BITS - 8); // bit_depth_luma_minus8
        b.ue(BITS - 8); // bit_depth_chroma_minus8
        b.ue(4); // log2_max_pic_order_cnt_lsb_minus4
        b.u(1, 1); // sps_sub_layer_ordering_info_present_flag
        b.ue(0); // sps_max_dec_pic_buffering_minus1
        b.ue(0); // sps_max_num_reorder_pics
        b.ue(0); // sps_max_latency_increase_plus1
        b.ue(LOG2_MIN_CB - 3); // log2_min_luma_coding_block_size_minus3
        b.ue(LOG2_CTB - LOG2_MIN_CB); // log2_diff_max_min_luma_coding_block_size
        b.ue(0); // log2_min_luma_transform_block_size_minus2: 4x4
        b.ue(3); // log2_diff_max_min_luma_transform_block_size: up to 32x32
        b.ue(0); // max_transform_hierarchy_depth_inter
        b.ue(0); // max_transform_hierarchy_depth_intra
        b.u(1, 0); // scaling_list_enabled_flag
        b.u(1, 0); // amp_enabled_flag
        b.u(1, 0); // sample_adaptive_offset_enabled_flag
        b.u(1, 1); // pcm_enabled_flag
        b.u(4, BITS - 1); // pcm_sample_bit_depth_luma_minus1
        b.u(4, BITS - 1); // pcm_sample_bit_depth_chroma_minus1
        b.ue(LOG2_CTB - 3); // log2_min_pcm_luma_coding_block_size_minus3: 32x32
        b.ue(0); // log2_diff_max_min_pcm_luma_coding_block_size
        b.u(1, 1); // pcm_loop_filter_disabled_flag: PCM samples stay as stored
        b.ue(0); // num_short_term_ref_pic_sets
        b.u(1, 0); // long_term_ref_pics_present_flag
        b.u(1, 0); // sps_temporal_mvp_enabled_flag
        b.u(1, 0); // strong_intra_smoothing_enabled_flag
        b.u(1, 1); // vui_parameters_present_flag
        self.vui(&mut b);
        b.u(1, 0); // sps_extension_present_flag
        b.finish()
    }

    /// `vui_parameters()` (E.2.1) with the video signal type alone.
    fn vui(&self, b: &mut Bits) {
        self.frames.write_signal(b);
        b.u(1, 0); // neutral_chroma_indication_flag
        b.u(1, 0); // field_seq_flag
        b.u(1, 0); // frame_field_info_present_flag
        b.u(1, 0); // default_display_window_flag
        b.u(1, 0); // vui_timing_info_present_flag
        b.u(1, 0); // bitstream_restriction_flag
    }
}

/// The two-byte NAL unit header (7.3.1.2) of a unit of type `kind`: layer 0, temporal id 0.
fn header(kind: u8) -> [u8; 2] {
    [kind << 1, 1]
}

/// `profile_tier_level(1, 0)` (7.3.3): Main 10, Main tier, progressive frames.
fn profile_tier_level(b: &mut Bits) {
    b.u(2, 0); // general_profile_space
    b.u(1, 0); // general_tier_flag: Main
    b.u(5, MAIN_10); // general_profile_idc
    b.u(32, 1 << (31 - MAIN_10)); // general_profile_compatibility_flag[2]
    b.u(1, 1); // general_progressive_source_flag
    b.u(1, 0); // general_interlaced_source_flag
    b.u(1, 0); // general_non_packed_constraint_flag
    b.u(1, 1); // general_frame_only_constraint_flag
    // general_reserved_zero_7bits, general_one_picture_only_constraint_flag,
    // general_reserved_zero_35bits (43 bits for Main 10), general_inbld_flag.
    b.u(32, 0);
    b.u(12, 0);
    b.u(8, LEVEL); // general_level_idc
}

/// `video_parameter_set_rbsp()` (7.3.2.1): one layer, one sub-layer.
fn vps() -> Vec<u8> {
    let mut b = Bits::default();
    b.u(4, 0); // vps_video_parameter_set_id
    b.u(1, 1); // vps_base_layer_internal_flag
    b.u(1, 1); // vps_base_layer_available_flag
    b.u(6, 0); // vps_max_layers_minus1
    b.u(3, 0); // vps_max_sub_layers_minus1
    b.u(1, 1); // vps_temporal_id_nesting_flag
    b.u(16, 0xffff); // vps_reserved_0xffff_16bits
    profile_tier_level(&mut b);
    b.u(1, 1); // vps_sub_layer_ordering_info_present_flag
    b.ue(0); // vps_max_dec_pic_buffering_minus1
    b.ue(0); // vps_max_num_reorder_pics
    b.ue(0); // vps_max_latency_increase_plus1
    b.u(6, 0); // vps_max_layer_id
    b.ue(0); // vps_num_layer_sets_minus1
    b.u(1, 0); // vps_timing_info_present_flag
    b.u(1, 0); // vps_extension_flag
    b.finish()
}

/// `pic_parameter_set_rbsp()` (7.3.2.3.1): no tiles, no QP deltas, deblocking disabled.
fn pps() -> Vec<u8> {
    let mut b = Bits::default();
    b.ue(0); // pps_pic_parameter_set_id
    b.ue(0); // pps_seq_parameter_set_id
    b.u(1, 0); // dependent_slice_segments_enabled_flag
    b.u(1, 0); // output_flag_present_flag
    b.u(3, 0); // num_extra_slice_header_bits
    b.u(1, 0); // sign_data_hiding_enabled_flag
    b.u(1, 0); // cabac_init_present_flag
    b.ue(0); // num_ref_idx_l0_default_active_minus1
    b.ue(0); // num_ref_idx_l1_default_active_minus1
    b.se(SLICE_QP - 26); // init_qp_minus26
    b.u(1, 0); // constrained_intra_pred_flag
    b.u(1, 0); // transform_skip_enabled_flag
    b.u(1, 0); // cu_qp_delta_enabled_flag
    b.se(0); // pps_cb_qp_offset
    b.se(0); // pps_cr_qp_offset
    b.u(1, 0); // pps_slice_chroma_qp_offsets_present_flag
    b.u(1, 0); // weighted_pred_flag
    b.u(1, 0); // weighted_bipred_flag
    b.u(1, 0); // transquant_bypass_enabled_flag
    b.u(1, 0); // tiles_enabled_flag
    b.u(1, 0); // entropy_coding_sync_enabled_flag
    b.u(1, 0); // pps_loop_filter_across_slices_enabled_flag
    b.u(1, 1); // deblocking_filter_control_present_flag
    b.u(1, 0); // deblocking_filter_override_enabled_flag
    b.u(1, 1); // pps_deblocking_filter_disabled_flag
    b.u(1, 0); // pps_scaling_list_data_present_flag
    b.u(1, 0); // lists_modification_present_flag
    b.ue(0); // log2_parallel_merge_level_minus2
    b.u(1, 0); // slice_segment_header_extension_present_flag
    b.u(1, 0); // pps_extension_present_flag
    b.finish()
}

/// `slice_segment_header()` (7.3.6.1) of an IDR I slice holding the whole picture, then
/// `byte_alignment()`, where the slice data's CABAC starts.
fn slice_header(b: &mut Bits) {
    b.u(1, 1); // first_slice_segment_in_pic_flag
    b.u(1, 0); // no_output_of_prior_pics_flag (an IRAP picture)
    b.ue(0); // slice_pic_parameter_set_id
    b.ue(2); // slice_type: I
    b.se(0); // slice_qp_delta
    // byte_alignment(): alignment_bit_equal_to_one, then zeros.
    b.u(1, 1);
    b.align_zero();
}

/// The CABAC encoder (the arithmetic coding engine of H.264 9.3.4.2, which H.265 shares) with
/// the one context this stream codes, `split_cu_flag`'s.
struct Cabac {
    bits: Bits,
    low: u32,
    range: u32,
    outstanding: u32,
    first_bit: bool,
    /// The context's `pStateIdx` and `valMps`.
    state: usize,
    mps: bool,
}

impl Cabac {
    /// The engine initialised, and the context initialised for `SLICE_QP` (9.3.2.2).
    fn new(bits: Bits) -> Cabac {
        let (slope, offset) = (SPLIT_CU_FLAG_INIT >> 4, SPLIT_CU_FLAG_INIT & 15);
        let (m, n) = (slope * 5 - 45, (offset << 3) - 16);
        let pre = (((m * SLICE_QP.clamp(0, 51)) >> 4) + n).clamp(1, 126);
        let mps = pre > 63;
        let state = if mps { pre - 64 } else { 63 - pre };
        let mut cabac = Cabac {
            bits,
            low: 0,
            range: 510,
            outstanding: 0,
            first_bit: true,
            state: usize::try_from(state).unwrap_or(0),
            mps,
        };
        cabac.restart();
        cabac
    }

    /// Initialises the engine (not the context): at the slice data's start, and after PCM
    /// samples (9.3.2.5).
    fn restart(&mut self) {
        self.low = 0;
        self.range = 510;
        self.outstanding = 0;
        self.first_bit = true;
    }

    /// `PutBit`: `bit`, after skipping the engine's very first, then the outstanding bits.
    fn put(&mut self, bit: bool) {
        if self.first_bit {
            self.first_bit = false;
        } else {
            self.bits.u(1, u32::from(bit));
        }
        while self.outstanding > 0 {
            self.bits.u(1, u32::from(!bit));
            self.outstanding -= 1;
        }
    }

    /// `RenormE`.
    fn renorm(&mut self) {
        while self.range < 256 {
            if self.low < 256 {
                self.put(false);
            } else if self.low >= 512 {
                self.low -= 512;
                self.put(true);
            } else {
                self.low -= 256;
                self.outstanding += 1;
            }
            self.range <<= 1;
            self.low <<= 1;
        }
    }

    /// `EncodeDecision` of `bin` with the context, and its state's update.
    fn decision(&mut self, bin: bool) {
        let lps = u32::from(RANGE_LPS[self.state][((self.range >> 6) & 3) as usize]);
        self.range -= lps;
        if bin == self.mps {
            self.state = (self.state + 1).min(62);
        } else {
            self.low += self.range;
            self.range = lps;
            if self.state == 0 {
                self.mps = !self.mps;
            }
            self.state = TRANS_LPS[self.state];
        }
        self.renorm();
    }

    /// `EncodeTerminate` of a 0 (a 1 goes through
    /// [`terminate_then_flush`](Self::terminate_then_flush)).
    fn terminate_zero(&mut self) {
        self.range -= 2;
        self.renorm();
    }

    /// `EncodeTerminate` of a 1, then `EncodeFlush`: the bits written end with a 1 (the RBSP's
    /// stop bit at the slice's end; before PCM samples, the bit the decoder reads last).
    /// Returns the bits, for what follows at the bit level.
    fn terminate_then_flush(&mut self) -> &mut Bits {
        self.range -= 2;
        self.low += self.range;
        self.range = 2;
        self.renorm();
        self.put((self.low >> 9) & 1 == 1);
        self.bits.u(2, ((self.low >> 7) & 3) | 1);
        &mut self.bits
    }

    /// The bits written.
    fn into_bits(self) -> Bits {
        self.bits
    }
}

/// `transIdxLps` (table 9-53): the state after a least probable symbol.
const TRANS_LPS: [usize; 64] = [
    0, 0, 1, 2, 2, 4, 4, 5, 6, 7, 8, 9, 9, 11, 11, 12, 13, 13, 15, 15, 16, 16, 18, 18, 19, 19, 21,
    21, 22, 22, 23, 24, 24, 25, 26, 26, 27, 27, 28, 29, 29, 30, 30, 30, 31, 32, 32, 33, 33, 33, 34,
    34, 35, 35, 35, 36, 36, 36, 37, 37, 37, 38, 38, 63,
];
