//! What the examples' stream writers (`h264_pcm.rs`, `hevc_pcm.rs`) share: a bit writer for
//! the syntax of ITU-T H.264 and H.265 (`u(n)`, `ue(v)`, `se(v)`), and NAL units with emulation
//! prevention (H.264 7.4.1, H.265 7.4.2: the same rule), and the colour description both
//! write in their VUI.

/// The colour description a stream carries in its VUI (H.264 and H.265 E.2.1; the code points
/// are ITU-T H.273's): what a player reads to pick the conversion, and what NVDEC's parser
/// read of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal {
    /// `colour_primaries`, `transfer_characteristics`, `matrix_coefficients` (1, 1, 1 for
    /// BT.709; 6, 6, 6 for BT.601 525-line; 9, 14, 9 for BT.2020).
    pub primaries: u8,
    pub transfer: u8,
    pub matrix: u8,
    /// `video_full_range_flag`.
    pub full_range: bool,
}

impl Signal {
    /// Example 15's H.264 clip's: SMPTE 170M primaries, BT.709 transfer, BT.470 BG matrix
    /// (BT.601's), limited range; three different code points, so that a byte read in the
    /// wrong place shows.
    pub const BT601_LIMITED: Signal = Signal {
        primaries: 6,
        transfer: 1,
        matrix: 5,
        full_range: false,
    };
    /// Example 15's HEVC clip's: BT.2020 (primaries, 10-bit transfer, non-constant luminance
    /// matrix), full range.
    pub const BT2020_FULL: Signal = Signal {
        primaries: 9,
        transfer: 14,
        matrix: 9,
        full_range: true,
    };
}

/// A stream's frames: their size, even and nonzero (4:2:0 chroma, and cropping in units of 2
/// samples), and their colour description.
#[derive(Clone, Copy, Debug)]
pub struct Frames {
    pub width: u32,
    pub height: u32,
    pub signal: Signal,
}

impl Frames {
    /// `width` x `height` frames described as `signal`, of a `codec` stream (for the error).
    ///
    /// # Errors
    /// For an odd or zero side.
    pub fn new(codec: &str, width: u32, height: u32, signal: Signal) -> anyhow::Result<Frames> {
        if width == 0 || height == 0 || width % 2 == 1 || height % 2 == 1 {
            anyhow::bail!(
                "{width}x{height}: a {codec} 4:2:0 stream's frames have an even, nonzero size"
            );
        }
        Ok(Frames {
            width,
            height,
            signal,
        })
    }

    /// The bytes of one packed semi-planar frame of `sample`-byte samples: the luma rows, then
    /// the interleaved chroma rows (NV12's layout for 1, P010's for 2).
    pub fn bytes(&self, sample: usize) -> usize {
        let (w, h) = (self.width as usize, self.height as usize);
        (w * h + w * (h / 2)) * sample
    }

    /// The part of `vui_parameters()` that H.264 and H.265 share (E.1.1, E.2.1), with the
    /// video signal type alone: from `aspect_ratio_info_present_flag` to
    /// `chroma_loc_info_present_flag`.
    pub fn write_signal(&self, b: &mut Bits) {
        let Signal {
            primaries,
            transfer,
            matrix,
            full_range,
        } = self.signal;
        b.u(1, 0); // aspect_ratio_info_present_flag
        b.u(1, 0); // overscan_info_present_flag
        b.u(1, 1); // video_signal_type_present_flag
        b.u(3, 5); // video_format: unspecified
        b.u(1, u32::from(full_range)); // video_full_range_flag
        b.u(1, 1); // colour_description_present_flag
        b.u(8, u32::from(primaries));
        b.u(8, u32::from(transfer));
        b.u(8, u32::from(matrix));
        b.u(1, 0); // chroma_loc_info_present_flag
    }
}

/// Appends one NAL unit with its 4-byte start code: `header` (one byte in H.264, two in
/// H.265), then `rbsp` with an emulation prevention byte (3) wherever two zero bytes would be
/// followed by a byte of 3 or less, so that no start code appears inside it.
pub fn nal(out: &mut Vec<u8>, header: &[u8], rbsp: &[u8]) {
    out.extend_from_slice(&[0, 0, 0, 1]);
    out.extend_from_slice(header);
    let mut zeros = 0;
    for &byte in rbsp {
        if zeros >= 2 && byte <= 3 {
            out.push(3);
            zeros = 0;
        }
        out.push(byte);
        zeros = if byte == 0 { zeros + 1 } else { 0 };
    }
}

/// The bits of an RBSP, most significant first.
#[derive(Default)]
pub struct Bits {
    bytes: Vec<u8>,
    /// Bits of the last byte in use (0 when there is none, or it is full).
    used: u8,
}

impl Bits {
    /// One bit.
    pub fn bit(&mut self, one: bool) {
        if self.used == 0 {
            self.bytes.push(0);
        }
        if let Some(last) = self.bytes.last_mut() {
            *last |= u8::from(one) << (7 - self.used);
        }
        self.used = (self.used + 1) % 8;
    }

    /// `u(n)`: `value`'s low `n` bits.
    pub fn u(&mut self, n: u32, value: u32) {
        for k in (0..n).rev() {
            self.bit(value >> k & 1 == 1);
        }
    }

    /// `ue(v)`: Exp-Golomb (9.1): as many zeros as `value + 1` has bits after its first, then
    /// `value + 1`.
    pub fn ue(&mut self, value: u32) {
        let coded = u64::from(value) + 1;
        let len = 64 - coded.leading_zeros();
        for _ in 1..len {
            self.bit(false);
        }
        for k in (0..len).rev() {
            self.bit(coded >> k & 1 == 1);
        }
    }

    /// `se(v)`: signed Exp-Golomb (9.1.1): k > 0 as 2k - 1, k <= 0 as -2k.
    pub fn se(&mut self, value: i32) {
        let mapped = if value > 0 {
            2 * value.unsigned_abs() - 1
        } else {
            2 * value.unsigned_abs()
        };
        self.ue(mapped);
    }

    /// Zero bits up to the next byte boundary (`pcm_alignment_zero_bit`).
    pub fn align_zero(&mut self) {
        while self.used != 0 {
            self.bit(false);
        }
    }

    /// A whole byte at a byte boundary (a PCM sample).
    pub fn byte(&mut self, value: u8) {
        if self.used == 0 {
            self.bytes.push(value);
        } else {
            self.u(8, u32::from(value));
        }
    }

    /// The bytes as they are, for a caller that wrote its own trailing bits (a CABAC flush's
    /// last bit is the stop bit). Any bits of a last byte not written are 0.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The bytes, after `rbsp_trailing_bits()`: a one bit, then zeros to the byte boundary.
    pub fn finish(mut self) -> Vec<u8> {
        self.bit(true);
        self.align_zero();
        self.bytes
    }
}
