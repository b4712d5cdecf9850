//! The CPU backend: [`plasma_pixel`](crate::plasma_cpu::plasma_pixel()) on every core into a host
//! buffer, then `glBufferSubData` into the pixel buffer and `glTexSubImage2D` from it. This is
//! what a program without CUDA interop does, and the reference the CUDA paths are checked
//! against.

use super::Frame;
use crate::cli::Size;
use crate::plasma_cpu::plasma_pixel;
use crate::timing::Stage;
use crate::watchdog;
use anyhow::Result;
use std::num::NonZeroUsize;

/// Renders frames on the CPU and uploads them through the renderer's pixel buffer.
#[derive(Debug)]
pub struct CpuBackend {
    pixels: Vec<u8>,
    threads: usize,
}

impl Default for CpuBackend {
    fn default() -> Self {
        CpuBackend::new()
    }
}

impl CpuBackend {
    /// A backend that renders on all available cores.
    pub fn new() -> CpuBackend {
        CpuBackend {
            pixels: Vec::new(),
            threads: std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        }
    }

    /// How many threads render a frame.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Renders the frame at time `t` and uploads it into the texture.
    ///
    /// # Errors
    /// When the renderer has no pixel buffer.
    pub fn render(&mut self, frame: Frame<'_>) -> Result<()> {
        let Frame {
            renderer,
            t,
            profiler,
            ..
        } = frame;
        let size = renderer.size();
        self.pixels.resize(size.rgba_bytes(), 0);
        let threads = self.threads;
        let pixels = &mut self.pixels;
        watchdog::enter(watchdog::Stage::Kernel);
        profiler.cpu(Stage::Kernel, || {
            render_parallel(pixels, size, t, threads);
        });
        watchdog::enter(watchdog::Stage::Upload);
        profiler.gl_and_cpu(Stage::Upload, || {
            renderer.write_pixel_buffer(&self.pixels)?;
            renderer.upload_from_pixel_buffer()
        })
    }
}

/// Renders a frame like [`render_cpu`](crate::plasma_cpu::render_cpu) (same bytes, same layout:
/// row `y` at `y * width * 4`), splitting the rows over `threads` threads.
pub fn render_parallel(buf: &mut [u8], size: Size, t: f32, threads: usize) {
    let (w, h) = (size.width, size.height);
    let row_bytes = w as usize * 4;
    let len = size.rgba_bytes().min(buf.len());
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
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::plasma_cpu::render_cpu;

    #[test]
    fn parallel_equals_render_cpu() {
        for (w, h, threads) in [(37, 23, 4), (64, 1, 8), (5, 9, 16), (16, 16, 1), (13, 7, 3)] {
            let size = Size::new(w, h).unwrap();
            let mut expected = vec![0u8; size.rgba_bytes()];
            render_cpu(&mut expected, w, h, 2.25);
            let mut got = vec![7u8; size.rgba_bytes()];
            render_parallel(&mut got, size, 2.25, threads);
            assert_eq!(got, expected, "{w}x{h} on {threads} threads");
        }
    }
}
