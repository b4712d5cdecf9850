//! The CPU reference of the conversion: [`convert_cpu`] gives, for a frame in host memory, the
//! bytes the GPU's [`Converter`](super::Converter) writes, for tests and for machines without
//! a GPU.

use super::color::ColorSpace;
use super::layout::{VideoFormat, VideoLayout};
use crate::error::{Result, VideoError};

/// Converts the frame of `layout` at the start of `bytes` to RGBA8 on the CPU, as
/// [`Converter::convert`](super::Converter::convert) does on the GPU (the same coefficients
/// and float operations, [`ColorSpace::rgba8`] for each pixel): rows of `width * 4` bytes, row
/// 0 first, tightly packed.
///
/// # Errors
/// [`VideoError::FrameTooSmall`] when `bytes` is shorter than [`VideoLayout::bytes`];
/// [`VideoError::TooLarge`] when the output's bytes do not fit in a `usize`.
pub fn convert_cpu(bytes: &[u8], layout: &VideoLayout, color: ColorSpace) -> Result<Vec<u8>> {
    const CALL: &str = "video::convert_cpu";
    layout.check_fits(CALL, "the frame's bytes", bytes.len())?;
    let (w, h) = (layout.width() as usize, layout.height() as usize);
    let out_len = w
        .checked_mul(h)
        .and_then(|n| n.checked_mul(4))
        .ok_or(VideoError::TooLarge {
            call: CALL,
            width: layout.width(),
            height: layout.height(),
        })?;
    let format = layout.format();
    let bps = format.bytes_per_sample();
    let k = color.coefficients(format);
    let mut out = Vec::with_capacity(out_len);
    for y in 0..h {
        // Both rows lie inside the frame's bytes, which `bytes` holds (checked above).
        let luma_start = y * layout.luma_pitch();
        let luma = &bytes[luma_start..luma_start + layout.luma_row_bytes()];
        let chroma_start = layout.chroma_offset() + y / 2 * layout.chroma_pitch();
        let chroma = &bytes[chroma_start..chroma_start + layout.chroma_row_bytes()];
        for x in 0..w {
            let pair = x / 2 * 2 * bps;
            let (luma, u, v) = (
                sample(&luma[x * bps..], format),
                sample(&chroma[pair..], format),
                sample(&chroma[pair + bps..], format),
            );
            out.extend_from_slice(&k.rgba8(luma, u, v));
        }
    }
    Ok(out)
}

/// The sample at the start of `at`: a byte for NV12; for P010 the little-endian word's high 10
/// bits (the word shifted right by 6).
fn sample(at: &[u8], format: VideoFormat) -> u16 {
    match (format, at) {
        (VideoFormat::P010, [lo, hi, ..]) => u16::from_le_bytes([*lo, *hi]) >> 6,
        (_, [b, ..]) => u16::from(*b),
        // Unreachable: the rows hold every sample of the layout.
        (_, []) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::video::ColorMatrix;
    use crate::video::ColorRange;

    /// A 3x3 NV12 frame, pitch 4, chroma right after the luma (2x2 pairs): each pixel takes
    /// the pair at (x / 2, y / 2).
    #[test]
    fn each_pixel_takes_its_chroma_pair_at_half_its_position() -> Result<()> {
        let layout = VideoLayout::new((3, 3), VideoFormat::Nv12, 4)?;
        assert_eq!(layout.bytes(), 12 + 4 + 4);
        #[rustfmt::skip]
        let bytes = [
            16, 235, 126, 0xee,
            63, 145, 16, 0xee,
            235, 16, 63, 0xee,
            // Pairs (Cb, Cr): grey, red; green, grey.
            128, 128, 102, 240,
            54, 34, 128, 128,
        ];
        let color = ColorSpace::default();
        let rgba = convert_cpu(&bytes, &layout, color)?;
        assert_eq!(rgba.len(), 3 * 3 * 4);
        let px = |x: usize, y: usize| &rgba[(y * 3 + x) * 4..][..4];
        assert_eq!(px(0, 0), [0, 0, 0, 255]);
        assert_eq!(px(1, 0), [255, 255, 255, 255]);
        assert_eq!(px(2, 0), color.rgba8(126, 102, 240, VideoFormat::Nv12));
        assert_eq!(px(2, 1), color.rgba8(16, 102, 240, VideoFormat::Nv12));
        // Grey chroma: (145 - 16) / 219 * 255 = 150.2; (63 - 16) / 219 * 255 = 54.7.
        assert_eq!(px(1, 1), [150, 150, 150, 255]);
        assert_eq!(px(0, 1), [55, 55, 55, 255]);
        assert_eq!(px(2, 2), [55, 55, 55, 255]);
        // BT.709's green pair (see the colour tests) under luma 235, then 16.
        assert_eq!(px(0, 2), color.rgba8(235, 54, 34, VideoFormat::Nv12));
        // Luma 16: R' = 1.5748 * -94/224 < 0, B' = 1.8556 * -74/224 < 0, G' = (0.2126 *
        // 0.66085 + 0.0722 * 0.61301) / 0.7152 = 0.25833, 65.87 levels (66).
        assert_eq!(px(1, 2), [0, 66, 0, 255]);
        Ok(())
    }

    /// P010 words: the low 6 bits are ignored; the chroma plane at an offset and pitch of its
    /// own.
    #[test]
    fn p010_reads_the_high_ten_bits() -> Result<()> {
        let layout = VideoLayout::with_chroma((2, 2), VideoFormat::P010, 6, 14, 8)?;
        assert_eq!(layout.bytes(), 18);
        let word = |v: u16, low: u16| ((v << 6) | low).to_le_bytes();
        let mut bytes = vec![0xaa; 18];
        bytes[0..2].copy_from_slice(&word(64, 0x3f));
        bytes[2..4].copy_from_slice(&word(940, 0));
        bytes[6..8].copy_from_slice(&word(502, 0x15));
        bytes[8..10].copy_from_slice(&word(300, 0x01));
        bytes[14..16].copy_from_slice(&word(512, 0x3f));
        bytes[16..18].copy_from_slice(&word(512, 0x20));
        let bt2020 = ColorSpace::new(ColorMatrix::Bt2020, ColorRange::Limited);
        let rgba = convert_cpu(&bytes, &layout, bt2020)?;
        let grey = |l: u8| [l, l, l, 255];
        assert_eq!(&rgba[0..4], grey(0));
        assert_eq!(&rgba[4..8], grey(255));
        assert_eq!(&rgba[8..12], grey(128));
        assert_eq!(
            &rgba[12..16],
            bt2020.rgba8(300, 512, 512, VideoFormat::P010)
        );
        Ok(())
    }

    #[test]
    fn bytes_too_short_are_refused() -> Result<()> {
        let layout = VideoLayout::packed((4, 2), VideoFormat::Nv12)?;
        let e = convert_cpu(&[0; 11], &layout, ColorSpace::default()).err();
        let want = VideoError::FrameTooSmall {
            call: "video::convert_cpu",
            what: "the frame's bytes",
            needed: 12,
            given: 11,
        };
        assert!(matches!(e, Some(Error::Video(v)) if v == want));
        assert_eq!(
            convert_cpu(&[16; 12], &layout, ColorSpace::default())?.len(),
            32
        );
        Ok(())
    }
}
