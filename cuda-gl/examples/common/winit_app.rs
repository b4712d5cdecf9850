//! The winit examples' (09, 12) event loop: the window opened on the first `resumed`, its
//! `Resized`, `RedrawRequested` and `CloseRequested` events handed to what the example shows in
//! it ([`Shown`]), the sizes the program asks the window for (`request_inner_size`) followed
//! until their `Resized` event comes or [`RESIZE_WAIT`] has passed, and the run's outcome. What
//! the window holds and how a frame is drawn (glutin and glow in 09, a wgpu surface in 12) is
//! the example's.
//! Not part of `common/mod.rs`, which every example builds: an example with a winit window
//! includes it on its own (`#[path = "common/winit_app.rs"] mod winit_app;`).

use crate::common::{NAME, Unavailable};
use anyhow::{Result, anyhow, bail};
use std::num::NonZeroU32;
use std::time::{Duration, Instant};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::window::{Window, WindowAttributes, WindowId};

/// How long a size asked for may take to arrive as a `Resized` event before the run stops
/// waiting for it (a window manager may refuse it).
const RESIZE_WAIT: Duration = Duration::from_secs(3);

/// What an example shows in its window: [`run`] calls it on the window's events.
pub trait Shown: Sized {
    /// The window it draws into.
    fn window(&self) -> &Window;

    /// The window has a new size (neither side 0: a minimised window is not passed on): the
    /// surface and the target take it.
    fn resized(&mut self, width: NonZeroU32, height: NonZeroU32) -> Result<()>;

    /// Draws, shows and checks the next frame. `settled`: no size asked for is still on its
    /// way, so the run may end here.
    fn redraw(&mut self, settled: bool) -> Result<Redraw>;

    /// The size to ask the window for, when one is due after the frames drawn so far.
    fn size_due(&self) -> Option<(u32, u32)>;

    /// Ends the run (everything in the window goes): the example's `ok` line.
    fn finish(self) -> Result<String>;
}

/// What a redraw did.
pub enum Redraw {
    /// It drew a frame; the next size is asked for when due, and the next redraw follows.
    Drawn,
    /// It drew nothing (a surface with no texture to give): the redraw is asked for again.
    // Only 12's wgpu surface can have no texture to give; 09's GL window always has one.
    #[allow(dead_code)]
    Skipped,
    /// It drew the last frame: the run ends.
    Last,
}

/// The attributes of an example's window: titled `cuda-gl <NAME>`, `width` x `height` inside.
pub fn attributes((width, height): (u32, u32)) -> WindowAttributes {
    Window::default_attributes()
        .with_title(format!("cuda-gl {NAME}"))
        .with_inner_size(PhysicalSize::new(width, height))
}

/// The size of a window just opened: an error when it has no area.
pub fn area(window: &Window) -> Result<(NonZeroU32, NonZeroU32)> {
    let size = window.inner_size();
    match (NonZeroU32::new(size.width), NonZeroU32::new(size.height)) {
        (Some(width), Some(height)) => Ok((width, height)),
        _ => bail!(
            "the window opened with no area ({}x{})",
            size.width,
            size.height
        ),
    }
}

/// Runs a winit event loop whose window `open` opens, on the first `resumed`, until the example
/// says its last frame is drawn, the window is closed, or an error ends the run: the example's
/// `ok` line, or that error.
pub fn run<S: Shown>(open: impl FnOnce(&ActiveEventLoop) -> Result<S>) -> Result<String> {
    // winit panics (inside its X11 set-up) when xkbcommon or its keyboard data is missing:
    // that is "cannot run here", said as such, not a crash.
    let event_loop = std::panic::catch_unwind(EventLoop::new)
        .map_err(|_| {
            anyhow!(Unavailable(
                "winit could not start (no libxkbcommon-x11, or no keyboard data: under \
                 Xvfb set XKB_CONFIG_ROOT)"
                    .into()
            ))
        })?
        .map_err(|e| anyhow!(Unavailable(format!("no window: winit: {e}"))))?;
    let mut app = App {
        open: Some(open),
        shown: None,
        outcome: None,
    };
    event_loop.run_app(&mut app)?;
    app.outcome
        .unwrap_or_else(|| Err(anyhow!("the event loop ended before the first frame")))
}

/// The event loop's state: how to open the window until it is opened, what is shown in it
/// while it is open, and how the run ended.
struct App<S, F> {
    open: Option<F>,
    shown: Option<Resizing<S>>,
    outcome: Option<Result<String>>,
}

/// What the example shows, the frames it has drawn, and the sizes the program asked the window
/// for.
struct Resizing<S> {
    shown: S,
    /// Redraws that drew a frame.
    drawn: u32,
    /// A size asked for whose `Resized` event has not come yet, and since when.
    awaiting: Option<((u32, u32), Instant)>,
    /// Sizes asked for that never came.
    refused: Vec<(u32, u32)>,
}

impl<S, F> App<S, F> {
    /// Ends the run with `outcome`: the window and all in it go, while the event loop still
    /// runs.
    fn end(&mut self, event_loop: &ActiveEventLoop, outcome: Result<String>) {
        self.shown = None;
        self.outcome.get_or_insert(outcome);
        event_loop.exit();
    }
}

impl<S: Shown, F: FnOnce(&ActiveEventLoop) -> Result<S>> ApplicationHandler for App<S, F> {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        // The window is opened once: a later `resumed` finds it open, or the run over.
        let Some(open) = self.open.take() else {
            return;
        };
        match open(event_loop) {
            Ok(shown) => {
                shown.window().request_redraw();
                self.shown = Some(Resizing {
                    shown,
                    drawn: 0,
                    awaiting: None,
                    refused: Vec::new(),
                });
            }
            Err(e) => self.end(event_loop, Err(e)),
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        let Some(resizing) = &mut self.shown else {
            return;
        };
        let step = match event {
            WindowEvent::CloseRequested => {
                println!("window closed after {} frames", resizing.drawn);
                Ok(true)
            }
            WindowEvent::Resized(size) => resizing.resized(size).map(|()| false),
            WindowEvent::RedrawRequested => resizing.redraw(),
            _ => Ok(false),
        };
        match step {
            Ok(false) => {}
            Ok(true) => {
                let outcome = self.shown.take().map(Resizing::finish);
                let outcome = outcome.unwrap_or_else(|| Err(anyhow!("no window")));
                self.end(event_loop, outcome);
            }
            Err(e) => self.end(event_loop, Err(e)),
        }
    }
}

impl<S: Shown> Resizing<S> {
    /// The window has a new size: so has what is shown in it, unless it is minimised.
    fn resized(&mut self, size: PhysicalSize<u32>) -> Result<()> {
        let (Some(width), Some(height)) =
            (NonZeroU32::new(size.width), NonZeroU32::new(size.height))
        else {
            return Ok(()); // minimised: the target keeps its size
        };
        if let Some((asked, _)) = self.awaiting.take()
            && asked != (size.width, size.height)
        {
            println!(
                "asked for {}x{}, the window got {}x{}",
                asked.0, asked.1, size.width, size.height
            );
        }
        self.shown.resized(width, height)?;
        self.shown.window().request_redraw();
        Ok(())
    }

    /// The next frame, then the next size when one is due; `true` once the run is over.
    fn redraw(&mut self) -> Result<bool> {
        if let Some((asked, since)) = self.awaiting
            && since.elapsed() > RESIZE_WAIT
        {
            println!(
                "asked for {}x{}: no Resized event in {RESIZE_WAIT:?}, the window kept its size",
                asked.0, asked.1
            );
            self.refused.push(asked);
            self.awaiting = None;
        }
        let redraw = self.shown.redraw(self.awaiting.is_none())?;
        if !matches!(redraw, Redraw::Skipped) {
            self.drawn += 1;
        }
        match redraw {
            Redraw::Last => return Ok(true),
            Redraw::Skipped => {}
            Redraw::Drawn => {
                if let Some(size) = self.shown.size_due() {
                    println!(
                        "frame {}: asking the window for {}x{}",
                        self.drawn, size.0, size.1
                    );
                    match self
                        .shown
                        .window()
                        .request_inner_size(PhysicalSize::new(size.0, size.1))
                    {
                        // Applied at once: no Resized event need follow.
                        Some(now) => self.resized(now)?,
                        None => self.awaiting = Some((size, Instant::now())),
                    }
                }
            }
        }
        self.shown.window().request_redraw();
        Ok(false)
    }

    fn finish(self) -> Result<String> {
        let mut what = self.shown.finish()?;
        if !self.refused.is_empty() {
            what.push_str(&format!(
                "; {} sizes asked for never came",
                self.refused.len()
            ));
        }
        Ok(what)
    }
}
