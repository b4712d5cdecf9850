//! A backend and a renderer working together: one frame at a time, resizes, the screenshot.

use crate::backend::{Backend, Frame};
use crate::cli::Size;
use crate::renderer::{GlInfo, Renderer, Target};
use crate::timing::{Clock, Profiler, Stage, micros};
use crate::watchdog;
use anyhow::{Context as _, Result};
use gl_kit::check as check_gl;
use std::time::Instant;

/// The frame loop's state. Needs the GL context current on this thread for every call and when
/// dropped; fields drop in order, so the CUDA registrations go before the GL objects.
#[derive(Debug)]
pub struct Session {
    /// Dropped first: unregisters from CUDA while the GL objects exist.
    backend: Backend,
    /// Dropped before the renderer: deletes its GL queries.
    profiler: Profiler,
    renderer: Renderer,
    frame_start: Option<Instant>,
    frames: u64,
}

impl Session {
    /// Creates the renderer for `backend` at `size` and registers its objects with CUDA (a
    /// display backend makes its target, whose texture the renderer then draws).
    ///
    /// # Errors
    /// A GL error creating the objects, or the CUDA registration (or display target) error.
    pub fn new(backend: Backend, size: Size, target: Target, profile: bool) -> Result<Session> {
        let renderer = Renderer::new(size, backend.upload(), target)
            .with_context(|| format!("creating the {size} OpenGL texture and buffers"))?;
        let profiler = if profile {
            Profiler::enabled()?
        } else {
            Profiler::disabled()
        };
        let mut session = Session {
            backend,
            profiler,
            renderer,
            frame_start: None,
            frames: 0,
        };
        session.backend.attach(&session.renderer)?;
        session.adopt_texture()?;
        Ok(session)
    }

    /// Gives the renderer the backend's texture, where the backend owns it (a display target,
    /// whose texture's name changes when it is made or resized).
    fn adopt_texture(&mut self) -> Result<()> {
        if let Some(texture) = self.backend.texture() {
            self.renderer.set_texture(texture)?;
        }
        Ok(())
    }

    /// The frame size.
    pub fn size(&self) -> Size {
        self.renderer.size()
    }

    /// The backend.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The renderer.
    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    /// The profiler (samples of the frames so far, when profiling).
    pub fn profiler(&self) -> &Profiler {
        &self.profiler
    }

    /// Frames rendered so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// `GL_VENDOR`, `GL_RENDERER` and `GL_VERSION` of the context.
    pub fn gl_info(&self) -> GlInfo {
        GlInfo::current()
    }

    /// Reallocates the texture (and pixel buffer) at `size` and registers them again; a display
    /// backend resizes its target instead (`DisplayTarget::resize`).
    ///
    /// # Errors
    /// GL allocation or CUDA registration errors.
    pub fn resize(&mut self, size: Size) -> Result<()> {
        if size == self.renderer.size() {
            return Ok(());
        }
        watchdog::enter(watchdog::Stage::Setup);
        self.backend.detach()?;
        self.renderer.resize(size)?;
        self.backend
            .attach(&self.renderer)
            .with_context(|| format!("registering the resized {size} frame"))?;
        self.adopt_texture()
    }

    /// Renders the frame at time `t` and draws it over `viewport` (the window's framebuffer; a
    /// headless frame is drawn into its offscreen framebuffer at the frame size). With
    /// `--path stream`, one call pushes a burst of frames and draws every frame the stream gives
    /// GL meanwhile: [`Session::frames`] counts the frames drawn.
    ///
    /// When profiling, the time from this frame's start to the next one's (presenting included)
    /// is recorded as [`Stage::Total`]; [`Session::finish`] closes the last one.
    ///
    /// # Errors
    /// Any CUDA or GL error of the frame.
    pub fn render_frame(&mut self, t: f32, viewport: Size) -> Result<()> {
        let start = Instant::now();
        if let Some(previous) = self.frame_start.replace(start) {
            self.profiler
                .record(Stage::Total, Clock::CpuWall, micros(start - previous));
        }
        self.profiler.begin_frame()?;
        let frame = Frame {
            renderer: &self.renderer,
            t,
            viewport,
            profiler: &mut self.profiler,
        };
        let drawn = self
            .backend
            .render(frame)
            .with_context(|| format!("rendering frame {} at t = {t}", self.frames))?;
        if let Some(n) = drawn {
            // The stream path drew its frames itself (a burst per call).
            check_gl("drawing the streamed frames")?;
            self.frames += n;
            return Ok(());
        }
        let renderer = &self.renderer;
        watchdog::enter(watchdog::Stage::Draw);
        self.profiler
            .gl_and_cpu(Stage::Draw, || renderer.draw(viewport));
        check_gl("drawing the frame")?;
        self.frames += 1;
        Ok(())
    }

    /// Ends a measured run: the last frame's total time (up to now), outstanding GPU work and
    /// timings, and deferred CUDA errors.
    ///
    /// # Errors
    /// A CUDA or GL error of work queued earlier.
    pub fn finish(&mut self) -> Result<()> {
        watchdog::enter(watchdog::Stage::Finish);
        self.renderer.finish();
        self.backend.finish(&mut self.profiler)?;
        if let Some(start) = self.frame_start.take() {
            self.profiler
                .record(Stage::Total, Clock::CpuWall, micros(start.elapsed()));
        }
        self.profiler.drain()?;
        check_gl("finishing")
    }

    /// Forgets the timings so far and restarts frame timing (after a warm-up).
    ///
    /// # Errors
    /// As [`Session::finish`].
    pub fn reset_timings(&mut self) -> Result<()> {
        self.finish()?;
        self.profiler.clear();
        Ok(())
    }

    /// The current frame, read back from the texture: RGBA8, bottom row first. The backend
    /// finishes first, so a display target has uploaded the newest frame (`flush`).
    ///
    /// # Errors
    /// A GL or CUDA error.
    pub fn read_frame(&mut self) -> Result<Vec<u8>> {
        self.backend.finish(&mut self.profiler)?;
        watchdog::enter(watchdog::Stage::Readback);
        self.renderer.read_texture()
    }

    /// What the last frame drew into the offscreen framebuffer (headless only): RGBA8, bottom
    /// row first; `None` with a window. A staged display target draws its texture one frame
    /// behind, so this is the frame before the last there (the texture, after the finish, is
    /// the last).
    ///
    /// # Errors
    /// A GL or CUDA error.
    pub fn read_drawn(&mut self) -> Result<Option<Vec<u8>>> {
        self.backend.finish(&mut self.profiler)?;
        watchdog::enter(watchdog::Stage::Readback);
        self.renderer.read_drawn()
    }
}
