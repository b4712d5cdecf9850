//! `--path stream`: frames through `cuda_gl::external::FrameStream`. Each call of
//! [`StreamFrames::render`] pushes one burst: `plasma_pbo` writes each frame into its slot of
//! CUDA memory imported into GL, and every frame of every burst whose writes are done is copied
//! into the renderer's texture (`glTexSubImage2D` from the slot's buffer) and drawn.

use crate::cli::Size;
use crate::renderer::Renderer;
use anyhow::{Context as _, Result};
use cuda_gl::external::{ExternalGl, FrameRead, FrameStream, FrameWrite};
use cuda_gl::{Context, Function, LaunchConfig, Stream};
use std::sync::Arc;

/// The stream and what it measured. Needs the GL context current when dropped.
#[derive(Debug)]
pub struct StreamFrames {
    frames: FrameStream,
    size: Size,
    counts: Counts,
}

/// Frames drawn, and how many frames behind the newest they were when GL got them.
#[derive(Debug, Default)]
struct Counts {
    behind_sum: u64,
    behind_max: u64,
    drawn: u64,
}

impl Counts {
    /// What GL does with each frame: copy it into the texture, draw it, count it.
    fn consumer<'a>(
        &'a mut self,
        renderer: &'a Renderer,
        viewport: Size,
    ) -> impl FnMut(&FrameRead) -> Result<()> + 'a {
        move |frame: &FrameRead| {
            renderer.upload_from(frame.buffer())?;
            renderer.draw(viewport);
            self.behind_sum += frame.frames_behind();
            self.behind_max = self.behind_max.max(frame.frames_behind());
            self.drawn += 1;
            Ok(())
        }
    }
}

impl StreamFrames {
    /// A stream of `2 * burst` slots of `size` frames, in bursts of `burst`.
    ///
    /// # Errors
    /// The cuda-gl error of creating the stream (memory, GL import).
    pub fn new(ctx: &Arc<Context>, gl: &ExternalGl, size: Size, burst: usize) -> Result<Self> {
        let frames = FrameStream::new(ctx, gl, size.rgba_bytes(), 2 * burst, burst)
            .with_context(|| format!("creating a frame stream of {size} in bursts of {burst}"))?;
        Ok(StreamFrames {
            frames,
            size,
            counts: Counts::default(),
        })
    }

    /// Pushes one burst of frames at time `t` with `kernel` (`plasma_pbo(uchar4*, int, int,
    /// float)`) on `stream`, and draws every frame GL is given meanwhile over `viewport`. Returns
    /// how many frames were drawn. Every frame of a burst shows the clock's time at the push, so
    /// that a fixed `--time` renders exactly that time, as the other paths do.
    ///
    /// # Errors
    /// A CUDA or GL error of the stream.
    pub fn render(
        &mut self,
        kernel: &Function,
        stream: &Stream,
        renderer: &Renderer,
        t: f32,
        viewport: Size,
    ) -> Result<u64> {
        let size = self.size;
        let (w, h) = (
            i32::try_from(size.width).context("width too large")?,
            i32::try_from(size.height).context("height too large")?,
        );
        let mut produce = |frame: &FrameWrite<'_>| -> Result<()> {
            // SAFETY: `plasma_pbo` writes w * h uchar4 at the slot, which holds one RGBA8 frame
            // of `size` (the stream was made for it) and stays allocated until the stream has
            // waited for the slot's event, recorded on `stream` after this launch.
            unsafe {
                kernel.launch(
                    LaunchConfig::for_image(size.width, size.height),
                    stream,
                    (frame.device_ptr(), w, h, t),
                )
            }
            .context("launching plasma_pbo into a stream slot")
        };
        let before = self.counts.drawn;
        let mut consume = self.counts.consumer(renderer, viewport);
        self.frames.push_burst(stream, &mut produce, &mut consume)?;
        drop(consume);
        Ok(self.counts.drawn - before)
    }

    /// Waits for the stream's CUDA and GL work (frames not yet given to GL stay pushed).
    ///
    /// # Errors
    /// A CUDA or GL error, or a wait's timeout.
    pub fn wait_idle(&mut self) -> Result<()> {
        self.frames
            .wait_idle()
            .context("waiting for the frame stream")
    }

    /// The mean and largest number of frames pushed after a frame when GL drew it.
    pub fn latency_frames(&self) -> Option<(f64, u64)> {
        let c = &self.counts;
        (c.drawn > 0).then(|| (c.behind_sum as f64 / c.drawn as f64, c.behind_max))
    }
}
