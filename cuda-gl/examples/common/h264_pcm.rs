//! A lossless H.264 stream of NV12 frames, written without an encoder: every macroblock is
//! `I_PCM` (its samples stored as they are), every picture an IDR of one slice; Constrained
//! Baseline profile, CAVLC, no deblocking. A real decoder (NVDEC in example 15) gives back the
//! frames byte for byte, so what it decoded can be checked exactly. About 1.5 bytes a pixel: a
//! test clip, not a codec.
//!
//! The syntax is ITU-T H.264 (08/2021): the sequence and picture parameter sets (7.3.2.1,
//! 7.3.2.2), the slice header (7.3.3) and `macroblock_layer` with `mb_type` 25, `I_PCM`
//! (7.3.5, table 7-11), in NAL units with emulation prevention (7.3.1, 7.4.1).

use crate::bitstream::{Bits, Frames, Signal, nal};
use anyhow::{Result, bail};

/// `mb_type` of an `I_PCM` macroblock in an I slice (table 7-11).
const I_PCM: u32 = 25;
/// `profile_idc` of the Baseline profile; with `constraint_set1_flag` it is Constrained
/// Baseline, which every decoder takes (no slice groups, no arbitrary slice order).
const BASELINE: u32 = 66;
/// `level_idc` 5.1: up to 36,864 macroblocks a frame (4096x2304). The bit rate of `I_PCM` is
/// far over any level's, which decoders do not enforce.
const LEVEL: u32 = 51;
/// `log2_max_frame_num_minus4`: frame numbers of 4 bits (every picture is an IDR, number 0).
const LOG2_MAX_FRAME_NUM_MINUS4: u32 = 0;

/// `nal_unit_type`s (table 7-1).
const NAL_IDR_SLICE: u8 = 5;
const NAL_SPS: u8 = 7;
const NAL_PPS: u8 = 8;

/// An H.264 stream of `I_PCM` pictures of its frames.
#[derive(Clone, Copy, Debug)]
pub struct PcmStream {
    frames: Frames,
}

impl PcmStream {
    /// A stream of `width` x `height` frames described as `signal`.
    ///
    /// # Errors
    /// For an odd or zero size, or one over level 5.1's 36,864 macroblocks.
    pub fn new(width: u32, height: u32, signal: Signal) -> Result<PcmStream> {
        let stream = PcmStream {
            frames: Frames::new("H.264", width, height, signal)?,
        };
        let (mbs_w, mbs_h) = stream.macroblocks();
        if mbs_w * mbs_h > 36_864 {
            bail!("{width}x{height}: over level 5.1's 36,864 macroblocks a frame");
        }
        Ok(stream)
    }

    /// The bytes of one packed NV12 frame: the luma rows, then the interleaved chroma rows.
    pub fn frame_bytes(&self) -> usize {
        self.frames.bytes(1)
    }

    /// Macroblocks across and down (the frame rounded up to 16).
    fn macroblocks(&self) -> (u32, u32) {
        (
            self.frames.width.div_ceil(16),
            self.frames.height.div_ceil(16),
        )
    }

    /// The sequence and picture parameter sets, as NAL units with start codes: what the
    /// stream begins with.
    pub fn headers(&self) -> Vec<u8> {
        let mut out = Vec::new();
        nal(&mut out, &[header(NAL_SPS)], &self.sps());
        nal(&mut out, &[header(NAL_PPS)], &pps());
        out
    }

    /// Frame `index` (packed NV12, [`frame_bytes`](Self::frame_bytes) long) as one IDR
    /// picture: one NAL unit with its start code. The macroblocks past the frame's right and
    /// bottom edges repeat its edge samples (they are cropped away by the decoder).
    ///
    /// # Errors
    /// When `nv12` is not one frame long.
    pub fn frame(&self, index: u32, nv12: &[u8]) -> Result<Vec<u8>> {
        if nv12.len() != self.frame_bytes() {
            bail!(
                "a {}x{} NV12 frame is {} bytes, not {}",
                self.frames.width,
                self.frames.height,
                self.frame_bytes(),
                nv12.len()
            );
        }
        let (w, h) = (self.frames.width as usize, self.frames.height as usize);
        let (luma, chroma) = nv12.split_at(w * h);
        let luma_at = |x: usize, y: usize| luma[y.min(h - 1) * w + x.min(w - 1)];
        let chroma_at =
            |x: usize, y: usize, k: usize| chroma[y.min(h / 2 - 1) * w + x.min(w / 2 - 1) * 2 + k];
        let (mbs_w, mbs_h) = self.macroblocks();
        let mut bits = Bits::default();
        self.slice_header(&mut bits, index);
        for my in 0..mbs_h as usize {
            for mx in 0..mbs_w as usize {
                bits.ue(I_PCM);
                bits.align_zero();
                for y in 0..16 {
                    for x in 0..16 {
                        bits.byte(luma_at(mx * 16 + x, my * 16 + y));
                    }
                }
                // All of Cb's 8x8, then all of Cr's (7.4.5: the first MbWidthC * MbHeightC
                // chroma samples are Cb).
                for k in 0..2 {
                    for y in 0..8 {
                        for x in 0..8 {
                            bits.byte(chroma_at(mx * 8 + x, my * 8 + y, k));
                        }
                    }
                }
            }
        }
        let mut out = Vec::with_capacity(self.frame_bytes() * 2);
        nal(&mut out, &[header(NAL_IDR_SLICE)], &bits.finish());
        Ok(out)
    }

    /// `seq_parameter_set_rbsp()` (7.3.2.1.1).
    fn sps(&self) -> Vec<u8> {
        let (mbs_w, mbs_h) = self.macroblocks();
        let mut b = Bits::default();
        b.u(8, BASELINE);
        // constraint_set0_flag and constraint_set1_flag (Constrained Baseline), the other
        // four and reserved_zero_2bits 0.
        b.u(8, 0b1100_0000);
        b.u(8, LEVEL);
        b.ue(0); // seq_parameter_set_id
        b.ue(LOG2_MAX_FRAME_NUM_MINUS4);
        b.ue(2); // pic_order_cnt_type 2: output order is decoding order
        b.ue(1); // max_num_ref_frames
        b.u(1, 0); // gaps_in_frame_num_value_allowed_flag
        b.ue(mbs_w - 1); // pic_width_in_mbs_minus1
        b.ue(mbs_h - 1); // pic_height_in_map_units_minus1
        b.u(1, 1); // frame_mbs_only_flag
        b.u(1, 1); // direct_8x8_inference_flag
        // Cropping, in units of 2 pixels for 4:2:0 frames (CropUnitX, CropUnitY: 7-19, 7-20).
        let (right, bottom) = (
            (mbs_w * 16 - self.frames.width) / 2,
            (mbs_h * 16 - self.frames.height) / 2,
        );
        let cropped = right != 0 || bottom != 0;
        b.u(1, u32::from(cropped)); // frame_cropping_flag
        if cropped {
            for offset in [0, right, 0, bottom] {
                b.ue(offset); // left, right, top, bottom
            }
        }
        b.u(1, 1); // vui_parameters_present_flag
        self.vui(&mut b);
        b.finish()
    }

    /// `vui_parameters()` (E.1.1) with the video signal type alone.
    fn vui(&self, b: &mut Bits) {
        self.frames.write_signal(b);
        b.u(1, 0); // timing_info_present_flag
        b.u(1, 0); // nal_hrd_parameters_present_flag
        b.u(1, 0); // vcl_hrd_parameters_present_flag
        b.u(1, 0); // pic_struct_present_flag
        b.u(1, 0); // bitstream_restriction_flag
    }

    /// `slice_header()` (7.3.3) of an IDR I slice that holds the whole picture `index`.
    fn slice_header(&self, b: &mut Bits, index: u32) {
        b.ue(0); // first_mb_in_slice
        b.ue(7); // slice_type 7: I, and every slice of the picture is I
        b.ue(0); // pic_parameter_set_id
        b.u(LOG2_MAX_FRAME_NUM_MINUS4 + 4, 0); // frame_num (0 in an IDR picture)
        // idr_pic_id: two IDR pictures in a row differ in it (7.4.3).
        b.ue(index % 2);
        // dec_ref_pic_marking() (nal_ref_idc is not 0): no_output_of_prior_pics_flag,
        // long_term_reference_flag.
        b.u(1, 0);
        b.u(1, 0);
        b.se(0); // slice_qp_delta
        b.ue(1); // disable_deblocking_filter_idc 1: no deblocking, the samples stay as stored
    }
}

/// `pic_parameter_set_rbsp()` (7.3.2.2): CAVLC, one slice group, deblocking controlled in the
/// slice header.
fn pps() -> Vec<u8> {
    let mut b = Bits::default();
    b.ue(0); // pic_parameter_set_id
    b.ue(0); // seq_parameter_set_id
    b.u(1, 0); // entropy_coding_mode_flag: CAVLC
    b.u(1, 0); // bottom_field_pic_order_in_frame_present_flag
    b.ue(0); // num_slice_groups_minus1
    b.ue(0); // num_ref_idx_l0_default_active_minus1
    b.ue(0); // num_ref_idx_l1_default_active_minus1
    b.u(1, 0); // weighted_pred_flag
    b.u(2, 0); // weighted_bipred_idc
    b.se(0); // pic_init_qp_minus26
    b.se(0); // pic_init_qs_minus26
    b.se(0); // chroma_qp_index_offset
    b.u(1, 1); // deblocking_filter_control_present_flag
    b.u(1, 0); // constrained_intra_pred_flag
    b.u(1, 0); // redundant_pic_cnt_present_flag
    b.finish()
}

/// The NAL unit header of a reference unit of type `kind`: `nal_ref_idc` 3 (7.3.1).
fn header(kind: u8) -> u8 {
    (3 << 5) | kind
}
