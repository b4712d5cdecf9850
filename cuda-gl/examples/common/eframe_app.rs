//! The eframe examples' (11 on the glow renderer, 14 on the wgpu renderer) window: eframe started
//! with the example's options, the example's panel made in eframe's creation closure, one frame
//! drawn, checked and shown per `ui` call until the run's frames are drawn (or `--window-secs`
//! have passed), and the run's outcome: the example's `ok` line, its first error, or why no
//! window could open.
//! Not part of `common/mod.rs`, which builds without eframe's renderers: an eframe example
//! includes it on its own (`#[path = "common/eframe_app.rs"] mod eframe_app;`).

use crate::common::Unavailable;
use anyhow::{Result, anyhow};
use eframe::egui;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// What an example shows in its eframe window.
pub trait Shown {
    /// Draws, checks and shows the next frame in `ui`.
    fn show(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) -> Result<()>;

    /// Frames drawn so far.
    fn drawn(&self) -> u32;

    /// Ends the run: what it holds goes now, inside eframe (glow: while its GL context is
    /// current). The example's `ok` line.
    fn finish(self) -> Result<String>;
}

/// eframe could not paint with the wgpu device it was given (no surface format for the
/// window, or wgpu refused the surface's configuration): the device's adapter cannot present to
/// the window. Example 14 then starts eframe again on an adapter that can.
#[derive(Debug)]
pub struct NoPresent(pub String);

impl std::fmt::Display for NoPresent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoPresent {}

/// Runs eframe with `options` until `frames` frames are drawn (with `window_secs`: until they
/// have passed), the window is closed, or an error ends the run; `create` makes what is shown
/// in eframe's creation closure. The example's `ok` line, or the first error: the one `create`
/// or the shown panel returned; [`NoPresent`] when eframe's wgpu set-up failed before the app
/// started; [`Unavailable`] when no window could open before it.
pub fn run<S: Shown + 'static>(
    title: &str,
    options: eframe::NativeOptions,
    frames: u32,
    window_secs: Option<f64>,
    create: impl FnOnce(&eframe::CreationContext<'_>) -> Result<S> + 'static,
) -> Result<String> {
    let secs = window_secs
        .map(Duration::try_from_secs_f64)
        .transpose()
        .map_err(|e| anyhow!("--window-secs: {e}"))?;
    let outcome: Rc<RefCell<Option<Result<String>>>> = Rc::default();
    let shared = outcome.clone();
    // Whether the app started: eframe's errors before that are its set-up's.
    let created = Rc::new(Cell::new(false));
    let creating = created.clone();
    let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        eframe::run_native(
            title,
            options,
            Box::new(move |cc| match create(cc) {
                Ok(shown) => {
                    creating.set(true);
                    Ok(Box::new(App {
                        shown: Some(shown),
                        frames,
                        secs,
                        until: None,
                        outcome: shared,
                    }))
                }
                Err(e) => {
                    // The error itself goes to the outcome, typed; eframe only hears that the
                    // app could not start.
                    let said = format!("{e:#}");
                    shared.borrow_mut().get_or_insert(Err(e));
                    Err(said.into())
                }
            }),
        )
    }));
    let outcome = outcome.borrow_mut().take();
    match (started, outcome) {
        (Err(_), _) => Err(anyhow!(Unavailable(
            "winit could not start (no libxkbcommon-x11, or no keyboard data: under Xvfb set \
             XKB_CONFIG_ROOT)"
                .into()
        ))),
        (Ok(_), Some(outcome)) => outcome,
        (Ok(Err(eframe::Error::Wgpu(e))), None) if !created.get() => {
            Err(anyhow!(NoPresent(format!("eframe's wgpu set-up: {e}"))))
        }
        (Ok(Err(e)), None) if !created.get() => {
            Err(anyhow!(Unavailable(format!("no window: eframe: {e}"))))
        }
        (Ok(Err(e)), None) => Err(anyhow!("eframe stopped the run: {e}")),
        (Ok(Ok(())), None) => Err(anyhow!("the window closed before the first frame")),
    }
}

/// The eframe app: what is shown until the run ends, and where its outcome goes.
struct App<S> {
    shown: Option<S>,
    frames: u32,
    /// `--window-secs`: how long the run lasts instead of `frames`.
    secs: Option<Duration>,
    /// When `secs` end, from the first frame.
    until: Option<Instant>,
    outcome: Rc<RefCell<Option<Result<String>>>>,
}

impl<S: Shown> App<S> {
    /// Ends the run with `outcome` (the first one given wins): what is shown goes now.
    fn end(&mut self, ui: &egui::Ui, outcome: Result<()>) {
        if let Some(shown) = self.shown.take() {
            let result = outcome.and_then(|()| shown.finish());
            self.outcome.borrow_mut().get_or_insert(result);
        }
        ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
    }
}

impl<S: Shown> eframe::App for App<S> {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let Some(shown) = self.shown.as_mut() else {
            return;
        };
        let secs = self.secs;
        let until = *self
            .until
            .get_or_insert_with(|| Instant::now() + secs.unwrap_or_default());
        if let Err(e) = shown.show(ui, frame) {
            return self.end(ui, Err(e));
        }
        let done = match secs {
            Some(_) => Instant::now() >= until,
            None => shown.drawn() >= self.frames,
        };
        if done {
            self.end(ui, Ok(()));
        } else {
            ui.ctx().request_repaint();
        }
    }

    /// The window was closed before the run ended: what is shown goes now (the glow
    /// renderer's GL context is current).
    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        if let Some(shown) = self.shown.take() {
            let result = shown.finish();
            self.outcome.borrow_mut().get_or_insert(result);
        }
    }
}
