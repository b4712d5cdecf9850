//! The moving test pattern of examples 13 and 15, on the CPU (`video_test_pattern` of
//! `kernels/examples.cu` writes the same samples on the GPU), and the checks both make of what
//! they show: planes byte for byte, pixels within 1 of `video::convert_cpu`.

use crate::common::Mismatch;
use anyhow::{Context as _, Result, bail};
use cuda_gl::video::{VideoFormat, VideoLayout};

/// What the kernel leaves in the pitches' padding: the byte the buffer is filled with first.
pub const PADDING: u8 = 0x5A;

/// The first index where `a` and `b` differ (the shorter's length when one is a prefix).
// 15 checks the planes row by row, with no use for it.
#[allow(dead_code)]
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    let common = a.iter().zip(b).position(|(x, y)| x != y);
    common.or((a.len() != b.len()).then(|| a.len().min(b.len())))
}

/// Compares the texture's pixels with the CPU's: each channel within 1. Returns how many
/// channels differ by exactly 1.
///
/// # Errors
/// [`Mismatch`] when any channel differs by more, or the sizes differ.
pub fn compare(shown: &[u8], want: &[u8], width: u32, what: &str) -> Result<usize> {
    if shown.len() != want.len() {
        bail!(Mismatch(format!(
            "{what}: read back {} bytes, not the {} of the frame in RGBA8",
            shown.len(),
            want.len()
        )));
    }
    let mut off_by_one = 0;
    let mut wrong = 0usize;
    let mut first = None;
    for (i, (s, w)) in shown.chunks_exact(4).zip(want.chunks_exact(4)).enumerate() {
        let worst = s.iter().zip(w).map(|(a, b)| a.abs_diff(*b)).max();
        off_by_one += s
            .iter()
            .zip(w)
            .filter(|(a, b)| a.abs_diff(**b) == 1)
            .count();
        if worst.is_some_and(|d| d > 1) {
            wrong += 1;
            if first.is_none() {
                first = Some((i, s.to_vec(), w.to_vec()));
            }
        }
    }
    if let Some((i, s, w)) = first {
        let width = width as usize;
        bail!(Mismatch(format!(
            "{what}: {wrong} of {} pixels differ by more than 1 from video::convert_cpu; first \
             at ({}, {}): {s:?}, want {w:?}",
            want.len() / 4,
            i % width,
            i / width
        )));
    }
    Ok(off_by_one)
}

/// The bytes the kernel leaves in a buffer of `layout` at frame `frame`: its
/// [`pattern`] samples, [`PADDING`] elsewhere.
///
/// # Errors
/// When a sample falls outside the layout's bytes (never, for a checked layout).
pub fn pattern_cpu(layout: &VideoLayout, frame: u32) -> Result<Vec<u8>> {
    let mut out = vec![PADDING; layout.bytes()];
    let wide = layout.format() == VideoFormat::P010;
    let bytes = layout.format().bytes_per_sample();
    let (w, h) = layout.size();
    for y in 0..h {
        for x in 0..w {
            let (luma, cb, cr) = pattern(x, y, w, h, frame);
            let junk = x.wrapping_add(y).wrapping_add(frame);
            let at = y as usize * layout.luma_pitch() + x as usize * bytes;
            store(&mut out, at, wide, luma, junk)?;
            if x % 2 == 0 && y % 2 == 0 {
                let pair = layout.chroma_offset()
                    + (y / 2) as usize * layout.chroma_pitch()
                    + (x / 2) as usize * 2 * bytes;
                store(&mut out, pair, wide, cb, junk)?;
                store(&mut out, pair + bytes, wide, cr, junk.wrapping_add(1))?;
            }
        }
    }
    Ok(out)
}

/// The 75% colour bars (BT.709, limited range): white, yellow, cyan, green, magenta, red,
/// blue, black, as 8-bit Y', Cb, Cr.
const BARS: [[u32; 3]; 8] = [
    [180, 128, 128],
    [168, 44, 136],
    [145, 147, 44],
    [133, 63, 52],
    [63, 193, 204],
    [51, 109, 212],
    [28, 212, 120],
    [16, 128, 128],
];

/// The test pattern's 10-bit (Y', Cb, Cr) at pixel (x, y) of a `w` x `h` frame `frame`:
/// `video_pattern` of `kernels/examples.cu`, in the same integer operations (wrapping as C's
/// `unsigned` does).
pub fn pattern(x: u32, y: u32, w: u32, h: u32, frame: u32) -> (u32, u32, u32) {
    let (mut luma, mut cb, mut cr) = if y < h / 3 * 2 {
        let bar = (x.wrapping_add(frame.wrapping_mul(8)) % w).wrapping_mul(8) / w;
        let [l, b, r] = BARS[bar as usize % BARS.len()];
        (l * 4, b * 4, r * 4)
    } else {
        let ramp = (x.wrapping_mul(876) / w).wrapping_add(frame.wrapping_mul(12)) % 877;
        (64 + ramp, 512, 512)
    };
    let r = i64::from((h / 6).max(1));
    let dx = i64::from(x) - i64::from(frame.wrapping_mul(23) % w);
    let dy = i64::from(y) - i64::from(h / 2);
    if dx * dx + dy * dy <= r * r {
        let turn = frame.wrapping_mul(16) % 512;
        (luma, cb, cr) = (700, 256 + turn, 767 - turn);
    }
    (luma, cb, cr)
}

/// Stores a 10-bit sample at byte `at` of `out`: NV12 its top 8 bits; P010 a little-endian
/// word with the sample in its top 10 bits and `junk` in the 6 low ones (`video_store`).
///
/// # Errors
/// When the sample does not fit in `out`.
fn store(out: &mut [u8], at: usize, wide: bool, sample: u32, junk: u32) -> Result<()> {
    let (word, byte) = (((sample << 6) | (junk & 63)) as u16, (sample >> 2) as u8);
    let (word, byte) = (word.to_le_bytes(), [byte]);
    let bytes: &[u8] = if wide { &word } else { &byte };
    let len = out.len();
    out.get_mut(at..at + bytes.len())
        .with_context(|| format!("sample at byte {at} outside the {len} of the frame"))?
        .copy_from_slice(bytes);
    Ok(())
}
