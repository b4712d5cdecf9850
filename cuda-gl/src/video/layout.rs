//! How a decoded frame lies in memory: its [`VideoFormat`] and a [`VideoLayout`] (size, the two
//! planes' pitches and where the chroma plane starts), checked when it is made.

use crate::error::{Result, VideoError};

/// The sample format of a decoded frame: a plane of luma samples, then a plane of interleaved
/// chroma pairs (Cb, Cr) at half the resolution in each direction (4:2:0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum VideoFormat {
    /// 8-bit samples, one byte each (NVDEC's `cudaVideoSurfaceFormat_NV12`).
    Nv12,
    /// 10-bit samples in the high bits of 16-bit little-endian words (the low 6 bits are
    /// ignored): NVDEC's `cudaVideoSurfaceFormat_P016` output of a 10-bit stream.
    P010,
}

impl VideoFormat {
    /// The bytes of one sample: 1 for NV12, 2 for P010.
    pub fn bytes_per_sample(self) -> usize {
        match self {
            VideoFormat::Nv12 => 1,
            VideoFormat::P010 => 2,
        }
    }

    /// The bits of a sample's value: 8 for NV12, 10 for P010.
    pub fn bits(self) -> u32 {
        match self {
            VideoFormat::Nv12 => 8,
            VideoFormat::P010 => 10,
        }
    }
}

/// How a 4:2:0 frame lies in memory: `width` x `height` luma samples of a [`VideoFormat`],
/// rows `luma_pitch` bytes apart, from the frame's first byte; then `ceil(width / 2)` x
/// `ceil(height / 2)` chroma pairs (Cb, Cr interleaved; odd sides rounded up, as decoders lay
/// them out), rows `chroma_pitch` bytes apart, from `chroma_offset` bytes after the luma's first
/// byte (the chroma plane often follows the luma in the same allocation, at the decoder's
/// aligned height).
///
/// Checked once, when made: no side of 0, pitches that hold a row, chroma after the luma,
/// even pitches and offset for P010, and a frame whose bytes fit in a `usize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VideoLayout {
    width: u32,
    height: u32,
    format: VideoFormat,
    luma_pitch: usize,
    chroma_offset: usize,
    chroma_pitch: usize,
    /// What the frame spans, counted when made.
    bytes: usize,
}

impl VideoLayout {
    /// The common layout: `(width, height)` of `format` whose rows (luma and chroma) start
    /// `luma_pitch` bytes apart, the chroma plane right after the luma's `height` rows (at
    /// `luma_pitch * height`).
    ///
    /// # Errors
    /// [`VideoError::ZeroSize`], [`VideoError::PitchTooSmall`], [`VideoError::OddP010`] (an odd
    /// pitch for P010), [`VideoError::TooLarge`] (bytes that do not fit in a `usize`).
    pub fn new(size: (u32, u32), format: VideoFormat, luma_pitch: usize) -> Result<VideoLayout> {
        // An overflow is refused as too large by `checked` (which checks the size first).
        let offset = luma_pitch.saturating_mul(size.1 as usize);
        let planes = Planes {
            luma_pitch,
            chroma_offset: offset,
            chroma_pitch: luma_pitch,
        };
        VideoLayout::checked("VideoLayout::new", size, format, planes)
    }

    /// `(width, height)` of `format`, rows tightly packed (each plane's pitch is its row: for
    /// an odd width the chroma rows are a sample longer than the luma rows), the chroma plane
    /// right after the luma: what a frame read from a raw `.yuv` file looks like.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn packed(size: (u32, u32), format: VideoFormat) -> Result<VideoLayout> {
        let bps = format.bytes_per_sample();
        // Overflows are refused as too large by `checked`.
        let luma_pitch = (size.0 as usize).saturating_mul(bps);
        let planes = Planes {
            luma_pitch,
            chroma_offset: luma_pitch.saturating_mul(size.1 as usize),
            chroma_pitch: (size.0.div_ceil(2) as usize).saturating_mul(2 * bps),
        };
        VideoLayout::checked("VideoLayout::packed", size, format, planes)
    }

    /// `(width, height)` of `format`, luma rows `luma_pitch` bytes apart from the frame's first
    /// byte, chroma rows `chroma_pitch` bytes apart from `chroma_offset` bytes after it.
    ///
    /// # Errors
    /// As [`new`](Self::new); [`VideoError::ChromaOverlapsLuma`] when `chroma_offset` is less
    /// than the bytes the luma plane spans (`luma_pitch * (height - 1) + width * bytes per
    /// sample`); [`VideoError::OddP010`] for an odd chroma pitch or offset too.
    pub fn with_chroma(
        size: (u32, u32),
        format: VideoFormat,
        luma_pitch: usize,
        chroma_offset: usize,
        chroma_pitch: usize,
    ) -> Result<VideoLayout> {
        let planes = Planes {
            luma_pitch,
            chroma_offset,
            chroma_pitch,
        };
        VideoLayout::checked("VideoLayout::with_chroma", size, format, planes)
    }

    fn checked(
        call: &'static str,
        (width, height): (u32, u32),
        format: VideoFormat,
        planes: Planes,
    ) -> Result<VideoLayout> {
        if width == 0 || height == 0 {
            return Err(VideoError::ZeroSize {
                call,
                width,
                height,
            }
            .into());
        }
        let too_large = || VideoError::TooLarge {
            call,
            width,
            height,
        };
        let bps = format.bytes_per_sample();
        let luma_row = (width as usize).checked_mul(bps).ok_or_else(too_large)?;
        let chroma_row = (width.div_ceil(2) as usize)
            .checked_mul(2 * bps)
            .ok_or_else(too_large)?;
        for (plane, pitch, row_bytes) in [
            ("luma", planes.luma_pitch, luma_row),
            ("chroma", planes.chroma_pitch, chroma_row),
        ] {
            if pitch < row_bytes {
                let e = VideoError::PitchTooSmall {
                    call,
                    plane,
                    pitch,
                    row_bytes,
                };
                return Err(e.into());
            }
        }
        let span = |pitch: usize, rows: u32, row: usize| {
            pitch
                .checked_mul(rows as usize - 1)
                .and_then(|n| n.checked_add(row))
        };
        let luma_bytes = span(planes.luma_pitch, height, luma_row).ok_or_else(too_large)?;
        let chroma_bytes = span(planes.chroma_pitch, height.div_ceil(2), chroma_row)
            .and_then(|n| n.checked_add(planes.chroma_offset))
            .ok_or_else(too_large)?;
        if planes.chroma_offset < luma_bytes {
            return Err(VideoError::ChromaOverlapsLuma {
                call,
                chroma_offset: planes.chroma_offset,
                luma_bytes,
            }
            .into());
        }
        if format == VideoFormat::P010 {
            for (what, value) in [
                ("luma pitch", planes.luma_pitch),
                ("chroma pitch", planes.chroma_pitch),
                ("chroma offset", planes.chroma_offset),
            ] {
                if value % 2 != 0 {
                    return Err(VideoError::OddP010 { call, what, value }.into());
                }
            }
        }
        Ok(VideoLayout {
            width,
            height,
            format,
            luma_pitch: planes.luma_pitch,
            chroma_offset: planes.chroma_offset,
            chroma_pitch: planes.chroma_pitch,
            bytes: chroma_bytes,
        })
    }

    /// Width and height in pixels (luma samples).
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The sample format.
    pub fn format(&self) -> VideoFormat {
        self.format
    }

    /// The bytes from the start of one luma row to the next.
    pub fn luma_pitch(&self) -> usize {
        self.luma_pitch
    }

    /// Where the chroma plane starts, in bytes after the luma's first byte.
    pub fn chroma_offset(&self) -> usize {
        self.chroma_offset
    }

    /// The bytes from the start of one chroma row to the next.
    pub fn chroma_pitch(&self) -> usize {
        self.chroma_pitch
    }

    /// The chroma plane's width and height in pairs: `(ceil(width / 2), ceil(height / 2))`.
    pub fn chroma_size(&self) -> (u32, u32) {
        (self.width.div_ceil(2), self.height.div_ceil(2))
    }

    /// The bytes of one luma row (without the pitch's padding).
    pub fn luma_row_bytes(&self) -> usize {
        // Counted without overflow when the layout was made.
        self.width as usize * self.format.bytes_per_sample()
    }

    /// The bytes of one chroma row: two samples per pair (without the pitch's padding).
    pub fn chroma_row_bytes(&self) -> usize {
        // Counted without overflow when the layout was made.
        self.width.div_ceil(2) as usize * 2 * self.format.bytes_per_sample()
    }

    /// The bytes the frame spans from the luma's first byte to the chroma's last:
    /// `chroma_offset + chroma_pitch * (ceil(height / 2) - 1) + chroma row bytes`.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Refuses memory of `given` bytes, `what`, too small for the frame, naming `call`.
    ///
    /// # Errors
    /// [`VideoError::FrameTooSmall`].
    pub(crate) fn check_fits(
        &self,
        call: &'static str,
        what: &'static str,
        given: usize,
    ) -> Result<()> {
        if self.bytes <= given {
            Ok(())
        } else {
            Err(VideoError::FrameTooSmall {
                call,
                what,
                needed: self.bytes,
                given,
            }
            .into())
        }
    }
}

/// The pitches and offset of a layout being made.
#[derive(Clone, Copy)]
struct Planes {
    luma_pitch: usize,
    chroma_offset: usize,
    chroma_pitch: usize,
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;
    use crate::Error;
    use VideoFormat::{Nv12, P010};

    fn refusal(made: Result<VideoLayout>) -> VideoError {
        match made {
            Err(Error::Video(e)) => e,
            other => panic!("expected a video error, got {other:?}"),
        }
    }

    #[test]
    fn common_layouts_and_their_bytes() -> Result<()> {
        let nv12 = VideoLayout::new((1920, 1080), Nv12, 2048)?;
        assert_eq!(nv12.chroma_offset(), 2048 * 1080);
        assert_eq!(nv12.chroma_pitch(), 2048);
        assert_eq!(nv12.chroma_size(), (960, 540));
        assert_eq!(nv12.bytes(), 2048 * 1080 + 2048 * 539 + 1920);
        let packed = VideoLayout::packed((4, 2), P010)?;
        assert_eq!((packed.luma_pitch(), packed.chroma_offset()), (8, 16));
        assert_eq!(
            packed.bytes(),
            16 + 8,
            "one chroma row of 2 pairs of 2 words"
        );
        // NVDEC: chroma at the aligned height, in the same allocation.
        let nvdec = VideoLayout::with_chroma((1920, 1080), P010, 4096, 4096 * 1088, 4096)?;
        assert_eq!(nvdec.bytes(), 4096 * 1088 + 4096 * 539 + 3840);
        Ok(())
    }

    /// Odd sides: the chroma plane is rounded up (a 5x3 frame has 3x2 pairs).
    #[test]
    fn odd_sides_round_the_chroma_up() -> Result<()> {
        let odd = VideoLayout::new((5, 3), Nv12, 8)?;
        assert_eq!(odd.chroma_size(), (3, 2));
        assert_eq!((odd.luma_row_bytes(), odd.chroma_row_bytes()), (5, 6));
        assert_eq!(odd.bytes(), 24 + 8 + 6);
        // The chroma row (6 bytes) needs more than the luma row (5): a pitch of 5 is refused.
        let e = refusal(VideoLayout::new((5, 3), Nv12, 5));
        assert!(
            matches!(
                e,
                VideoError::PitchTooSmall {
                    plane: "chroma",
                    pitch: 5,
                    row_bytes: 6,
                    ..
                }
            ),
            "{e}"
        );
        let one = VideoLayout::packed((1, 1), P010)?;
        assert_eq!(
            (one.luma_pitch(), one.chroma_offset(), one.chroma_pitch()),
            (2, 2, 4)
        );
        assert_eq!(one.bytes(), 6);
        Ok(())
    }

    #[test]
    fn each_bad_layout_is_refused_with_its_reason() {
        use VideoError as V;
        let e = refusal(VideoLayout::new((0, 4), Nv12, 64));
        assert!(matches!(
            e,
            V::ZeroSize {
                width: 0,
                height: 4,
                call: "VideoLayout::new"
            }
        ));
        let e = refusal(VideoLayout::packed((4, 0), P010));
        assert!(matches!(
            e,
            V::ZeroSize {
                width: 4,
                height: 0,
                ..
            }
        ));
        let e = refusal(VideoLayout::new((64, 4), P010, 100));
        assert!(matches!(
            e,
            V::PitchTooSmall {
                plane: "luma",
                pitch: 100,
                row_bytes: 128,
                ..
            }
        ));
        let e = refusal(VideoLayout::with_chroma((64, 4), Nv12, 64, 256, 63));
        let chroma = V::PitchTooSmall {
            call: "VideoLayout::with_chroma",
            plane: "chroma",
            pitch: 63,
            row_bytes: 64,
        };
        assert_eq!(e, chroma);
        let e = refusal(VideoLayout::new((64, 4), P010, 129));
        assert!(matches!(
            e,
            V::OddP010 {
                what: "luma pitch",
                value: 129,
                ..
            }
        ));
        let e = refusal(VideoLayout::with_chroma((64, 4), P010, 128, 512, 131));
        assert!(matches!(
            e,
            V::OddP010 {
                what: "chroma pitch",
                value: 131,
                ..
            }
        ));
        let e = refusal(VideoLayout::with_chroma((64, 4), P010, 128, 513, 128));
        assert!(matches!(
            e,
            V::OddP010 {
                what: "chroma offset",
                value: 513,
                ..
            }
        ));
        // The luma spans 64 * 3 + 64 = 256 bytes: chroma from 255 overlaps, from 256 does not.
        let e = refusal(VideoLayout::with_chroma((64, 4), Nv12, 64, 255, 64));
        let overlap = V::ChromaOverlapsLuma {
            call: "VideoLayout::with_chroma",
            chroma_offset: 255,
            luma_bytes: 256,
        };
        assert_eq!(e, overlap);
        assert!(VideoLayout::with_chroma((64, 4), Nv12, 64, 256, 64).is_ok());
        // The last luma row's padding is not the luma's: chroma may start there.
        assert!(VideoLayout::with_chroma((60, 4), Nv12, 64, 252, 64).is_ok());
        for made in [
            VideoLayout::new((8, 8), Nv12, usize::MAX / 4),
            VideoLayout::with_chroma((8, 8), Nv12, 8, usize::MAX - 8, 8),
            VideoLayout::with_chroma((8, 8), Nv12, usize::MAX / 2, usize::MAX, 8),
            VideoLayout::with_chroma((8, 8), Nv12, 8, 64, usize::MAX / 2),
        ] {
            let e = refusal(made);
            assert!(
                matches!(
                    e,
                    V::TooLarge {
                        width: 8,
                        height: 8,
                        ..
                    }
                ),
                "{e}"
            );
        }
    }

    #[test]
    fn frames_that_do_not_fit_are_refused() -> Result<()> {
        let layout = VideoLayout::packed((4, 4), Nv12)?;
        assert_eq!(layout.bytes(), 24);
        assert!(layout.check_fits("c", "b", 24).is_ok());
        let e = refusal(layout.check_fits("c", "b", 23).map(|()| layout));
        assert!(
            matches!(
                e,
                VideoError::FrameTooSmall {
                    needed: 24,
                    given: 23,
                    ..
                }
            ),
            "{e}"
        );
        Ok(())
    }
}
