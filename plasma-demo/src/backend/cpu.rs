//! The CPU backend: [`render_parallel`] (the plasma on every core) into a host
//! buffer, then `glBufferSubData` into the pixel buffer and `glTexSubImage2D` from it. This is
//! what a program without CUDA interop does, and the reference the CUDA paths are checked
//! against.

use super::Frame;
use crate::plasma_cpu::render_parallel;
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
            render_parallel(pixels, size.width, size.height, t, threads);
        });
        watchdog::enter(watchdog::Stage::Upload);
        profiler.gl_and_cpu(Stage::Upload, || {
            renderer.write_pixel_buffer(&self.pixels)?;
            renderer.upload_from_pixel_buffer()
        })
    }
}
