//! The CPU reference of the plasma kernels in `kernels/plasma.cu` (`plasma_pbo` and
//! `plasma_surface`): the kernel's Rust twin. Self-contained (std only): the interop benchmark
//! builds this file into itself (`#[path]`), as it reads the kernel's PTX with `include_str!`.
//!
//! [`plasma_pixel`] is a line-by-line port of the kernel's `plasma()` device function: the same
//! f32 literals and the same operations in the same order. The kernels are compiled with
//! `--fmad=false` and without fast math, and Rust never fuses `a * b + c`, so the only difference
//! left is the last-ulp accuracy of `sinf`/`cosf` on either side; a GPU frame matches
//! [`render_cpu`] within ±1 per channel in practice, and the tests allow ±2.
//!
//! The formula, for pixel `(x, y)` of a `w` × `h` image at time `t` (seconds):
//!
//! ```text
//! u  = x / w                      v  = y / h
//! cx = u + 0.5 * sin(t * 0.2)     cy = v + 0.5 * cos(t * 0.3)
//! value = sin(u * 10 + t)
//!       + sin((v * 10 + t) * 0.5)
//!       + sin((u * 10 + v * 10 + t) * 0.5)
//!       + sin(sqrt(100 * (cx * cx + cy * cy) + 1) + t)
//! channel(phase) = trunc(clamp((0.5 + 0.5 * cos(6.2831853 * (value * 0.25 + phase))) * 255 + 0.5,
//!                              0, 255))
//! rgba = (channel(0.0), channel(0.33), channel(0.67), 255)
//! ```

use std::f32::consts::TAU;

/// The palette phases of the red, green and blue channels.
const PHASES: [f32; 3] = [0.0, 0.33, 0.67];

/// One palette channel: `0.5 + 0.5 * cos(2π * (value * 0.25 + phase))` scaled to a byte.
///
/// `TAU` as an `f32` is exactly the kernel's literal `6.2831853f` (both round to `0x40C90FDB`).
/// `clamp` matches the kernel's `fminf(fmaxf(.., 0), 255)` (a NaN, which the kernel's `fmaxf`
/// turns into 0, stays NaN here and `as u8` turns it into 0), and `as u8` truncates like the
/// kernel's `(unsigned char)` cast of a value already in `[0, 255]`.
fn channel(value: f32, phase: f32) -> u8 {
    let k = 0.5 + 0.5 * (TAU * (value * 0.25 + phase)).cos();
    (k * 255.0 + 0.5).clamp(0.0, 255.0) as u8
}

/// The RGBA8 colour of pixel `(x, y)` of a `w` × `h` frame at time `t` in seconds: the same value
/// the CUDA kernels `plasma_pbo` and `plasma_surface` write, to within ±2 per channel. Alpha is
/// always 255. Row `y = 0` is the bottom row of the GL texture the kernels fill; nothing is
/// flipped.
///
/// `w` and `h` must be non-zero (a zero divides by zero, as in the kernel, and yields some
/// colour rather than a panic).
pub fn plasma_pixel(x: u32, y: u32, w: u32, h: u32, t: f32) -> [u8; 4] {
    let u = x as f32 / w as f32;
    let v = y as f32 / h as f32;
    let cx = u + 0.5 * (t * 0.2).sin();
    let cy = v + 0.5 * (t * 0.3).cos();
    let value = (u * 10.0 + t).sin()
        + ((v * 10.0 + t) * 0.5).sin()
        + ((u * 10.0 + v * 10.0 + t) * 0.5).sin()
        + ((100.0 * (cx * cx + cy * cy) + 1.0).sqrt() + t).sin();
    [
        channel(value, PHASES[0]),
        channel(value, PHASES[1]),
        channel(value, PHASES[2]),
        255,
    ]
}

/// Renders a whole `w` × `h` frame at time `t` into `buf` as RGBA8, the layout the kernel
/// `plasma_pbo` writes: rows of `w * 4` bytes, row `y` at byte offset `y * w * 4`, pixel `(x, y)`
/// at `(y * w + x) * 4`.
///
/// Only the first `w * h * 4` bytes are written; if `buf` is shorter, only the whole pixels that
/// fit are written.
pub fn render_cpu(buf: &mut [u8], w: u32, h: u32, t: f32) {
    let (w_px, h_px) = (w as usize, h as usize);
    if w_px == 0 || h_px == 0 {
        return;
    }
    for (y, row) in buf.chunks_mut(w_px * 4).take(h_px).enumerate() {
        for (x, px) in row.chunks_exact_mut(4).enumerate() {
            px.copy_from_slice(&plasma_pixel(x as u32, y as u32, w, h, t));
        }
    }
}

/// Renders a frame like [`render_cpu`] (same bytes, same layout: row `y` at `y * w * 4`),
/// splitting the rows over `threads` threads. Only the first `w * h * 4` bytes are written.
pub fn render_parallel(buf: &mut [u8], w: u32, h: u32, t: f32, threads: usize) {
    let row_bytes = w as usize * 4;
    let len = (row_bytes * h as usize).min(buf.len());
    if row_bytes == 0 {
        return;
    }
    let frame = &mut buf[..len];
    let rows_per_thread = (h as usize).div_ceil(threads.max(1)).max(1);
    let render_rows = |first_row: usize, chunk: &mut [u8]| {
        for (i, row) in chunk.chunks_exact_mut(row_bytes).enumerate() {
            let y = (first_row + i) as u32;
            for (x, px) in row.chunks_exact_mut(4).enumerate() {
                px.copy_from_slice(&plasma_pixel(x as u32, y, w, h, t));
            }
        }
    };
    if threads <= 1 {
        render_rows(0, frame);
        return;
    }
    std::thread::scope(|scope| {
        for (i, chunk) in frame.chunks_mut(rows_per_thread * row_bytes).enumerate() {
            scope.spawn(move || render_rows(i * rows_per_thread, chunk));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_is_opaque_everywhere() {
        let (w, h) = (37, 23);
        let mut buf = vec![0u8; (w * h * 4) as usize];
        render_cpu(&mut buf, w, h, 2.75);
        assert!(buf.chunks_exact(4).all(|px| px[3] == 255));
    }

    #[test]
    fn deterministic() {
        let (w, h) = (64, 48);
        let mut a = vec![0u8; (w * h * 4) as usize];
        let mut b = vec![1u8; (w * h * 4) as usize];
        render_cpu(&mut a, w, h, 1.5);
        render_cpu(&mut b, w, h, 1.5);
        assert_eq!(a, b);
    }

    /// At (0, 0), t = 0: u = v = 0, cx = 0, cy = 0.5, so the first three sines vanish and
    /// value = sin(sqrt(100 * 0.25 + 1)) = sin(sqrt(26)) = -0.926185. Then
    /// k_r = 0.5 + 0.5 * cos(2π * -0.231546) = 0.557844 -> 142.750 -> 142,
    /// k_g = 0.5 + 0.5 * cos(2π * 0.098454) = 0.907345 -> 231.873 -> 231,
    /// k_b = 0.5 + 0.5 * cos(2π * 0.438454) = 0.036922 -> 9.915 -> 9.
    #[test]
    fn known_value_at_origin() {
        assert_eq!(plasma_pixel(0, 0, 320, 180, 0.0), [142, 231, 9, 255]);
        // The origin does not depend on the frame size.
        assert_eq!(plasma_pixel(0, 0, 1, 1, 0.0), [142, 231, 9, 255]);
    }

    #[test]
    fn layout_is_row_major() {
        let (w, h, t) = (5u32, 3u32, 0.75f32);
        let mut buf = vec![0u8; (w * h * 4) as usize];
        render_cpu(&mut buf, w, h, t);
        for y in 0..h {
            for x in 0..w {
                let at = ((y * w + x) * 4) as usize;
                assert_eq!(
                    buf[at..at + 4],
                    plasma_pixel(x, y, w, h, t),
                    "pixel ({x}, {y})"
                );
            }
        }
    }

    #[test]
    fn short_buffer_and_empty_frame_do_not_panic() {
        let mut short = vec![0u8; 10];
        render_cpu(&mut short, 4, 4, 0.0);
        assert_eq!(short[..4], plasma_pixel(0, 0, 4, 4, 0.0));
        assert_eq!(short[8..], [0, 0], "a partial pixel is left alone");
        render_cpu(&mut [], 0, 0, 0.0);
    }

    #[test]
    fn animates_over_time() {
        let (w, h) = (16u32, 16u32);
        let mut a = vec![0u8; (w * h * 4) as usize];
        let mut b = a.clone();
        render_cpu(&mut a, w, h, 0.0);
        render_cpu(&mut b, w, h, 1.0);
        assert_ne!(a, b);
    }

    #[test]
    fn parallel_equals_render_cpu() {
        for (w, h, threads) in [(37, 23, 4), (64, 1, 8), (5, 9, 16), (16, 16, 1), (13, 7, 3)] {
            let mut expected = vec![0u8; (w * h * 4) as usize];
            render_cpu(&mut expected, w, h, 2.25);
            let mut got = vec![7u8; expected.len()];
            render_parallel(&mut got, w, h, 2.25, threads);
            assert_eq!(got, expected, "{w}x{h} on {threads} threads");
        }
    }

    #[test]
    fn palette_uses_the_whole_range() {
        let (w, h) = (128u32, 128u32);
        let mut buf = vec![0u8; (w * h * 4) as usize];
        render_cpu(&mut buf, w, h, 1.5);
        let red = buf.chunks_exact(4).map(|px| px[0]);
        let (lo, hi) = red.fold((255u8, 0u8), |(lo, hi), r| (lo.min(r), hi.max(r)));
        assert!(lo < 32 && hi > 223, "red spans only {lo}..={hi}");
    }
}
