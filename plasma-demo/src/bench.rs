//! `--bench`: render warm-up frames, then measure N frames stage by stage and report the median
//! and p99 of each stage as a table or JSON.
//!
//! Stages on the GPU are timed on the GPU (CUDA events for map/kernel/unmap on the CUDA stream,
//! `GL_TIME_ELAPSED` queries for upload and draw); every stage the CPU calls is also timed with
//! the wall clock. `total` is the CPU time from one frame's start to the next. The frame rate is
//! the measured frames over the wall time of the measured loop, including waiting for the GPU
//! to finish the last frame.

use crate::Output;
use crate::cli::RunArgs;
use crate::renderer::GlInfo;
use crate::session::Session;
use crate::timing::StageStats;
use anyhow::{Result, bail};
use serde::Serialize;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// What [`measure`] measured.
#[derive(Debug, Clone)]
pub struct BenchResult {
    /// Frames rendered before measuring.
    pub warmup: u64,
    /// Frames measured.
    pub frames: u64,
    /// Wall time of the measured frames, GPU drained at the end.
    pub elapsed: Duration,
    /// Per-stage statistics.
    pub stages: Vec<StageStats>,
}

/// Renders `warmup` frames, clears the timings, renders `frames` frames with `step` (which
/// renders one frame, or returns `false` to stop early, e.g. when the window closes) and
/// collects the statistics.
///
/// # Errors
/// A frame's error, or the window closing during the warm-up.
pub fn measure(
    session: &mut Session,
    warmup: u64,
    frames: u64,
    step: &mut dyn FnMut(&mut Session) -> Result<bool>,
) -> Result<BenchResult> {
    let warm_end = session.frames() + warmup;
    while session.frames() < warm_end {
        if !step(session)? {
            bail!("stopped during the warm-up, before anything was measured");
        }
    }
    session.reset_timings()?;
    let first = session.frames();
    let start = Instant::now();
    while session.frames() - first < frames {
        if !step(session)? {
            break;
        }
    }
    session.finish()?;
    let elapsed = start.elapsed();
    let measured = session.frames() - first;
    if measured == 0 {
        bail!("no frame was measured");
    }
    Ok(BenchResult {
        warmup,
        frames: measured,
        elapsed,
        stages: session.profiler().stats(),
    })
}

/// The JSON document of `--bench --json`.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// `cuda` or `cpu`.
    pub backend: String,
    /// The CUDA path (`interop` or `staged` for a display target: the mode it ran in, `pbo`,
    /// `surface`, `stream`); `null` for the CPU.
    pub path: Option<String>,
    /// The backend in words (GPU name, thread count).
    pub description: String,
    /// `headless` or `window`.
    pub display: String,
    /// The OpenGL context.
    pub gl: GlInfo,
    /// Frame width in pixels.
    pub width: u32,
    /// Frame height in pixels.
    pub height: u32,
    /// Frames rendered before measuring.
    pub warmup_frames: u64,
    /// Frames measured.
    pub frames: u64,
    /// Wall time of the measured frames in seconds.
    pub seconds: f64,
    /// Frames per second over the measured frames.
    pub fps: f64,
    /// Mean wall time per frame in microseconds.
    pub frame_us: f64,
    /// Median, p99, mean, min and max of each stage and clock, in microseconds.
    pub stages: Vec<StageStats>,
    /// `--path stream`: mean frames pushed after a frame when GL drew it (`null` otherwise).
    pub latency_frames: Option<f64>,
    /// `--path stream`: the most frames pushed after a frame when GL drew it.
    pub latency_frames_max: Option<u64>,
}

impl BenchReport {
    /// The report of `result`, measured on `session`.
    pub fn new(session: &Session, display: &str, result: &BenchResult) -> BenchReport {
        let secs = result.elapsed.as_secs_f64();
        let size = session.size();
        BenchReport {
            backend: session.backend().kind().into(),
            path: session.backend().path().map(|p| p.to_string()),
            description: session.backend().description(),
            display: display.into(),
            gl: session.gl_info(),
            width: size.width,
            height: size.height,
            warmup_frames: result.warmup,
            frames: result.frames,
            seconds: secs,
            fps: result.frames as f64 / secs,
            frame_us: secs * 1e6 / result.frames as f64,
            stages: result.stages.clone(),
            latency_frames: session.backend().stream_latency().map(|l| l.0),
            latency_frames_max: session.backend().stream_latency().map(|l| l.1),
        }
    }

    /// The report as a text table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "plasma-demo bench: {}, {}x{}, {}",
            self.description, self.width, self.height, self.display
        );
        let _ = writeln!(s, "OpenGL {} on {}", self.gl.version, self.gl.renderer);
        let _ = writeln!(
            s,
            "{} frames after {} warm-up: {:.3} s, {:.1} frames/s, {:.1} µs/frame",
            self.frames, self.warmup_frames, self.seconds, self.fps, self.frame_us
        );
        if let (Some(mean), Some(max)) = (self.latency_frames, self.latency_frames_max) {
            let _ = writeln!(
                s,
                "stream latency: {mean:.1} frames (at most {max}) = about {:.0} µs",
                (mean + 1.0) * self.frame_us
            );
        }
        let _ = writeln!(
            s,
            "\n{:<8} {:<11} {:>12} {:>12} {:>12} {:>8}",
            "stage", "clock", "median µs", "p99 µs", "mean µs", "samples"
        );
        for st in &self.stages {
            let _ = writeln!(
                s,
                "{:<8} {:<11} {:>12.1} {:>12.1} {:>12.1} {:>8}",
                st.stage.name(),
                st.clock.name(),
                st.median_us,
                st.p99_us,
                st.mean_us,
                st.samples
            );
        }
        s
    }
}

/// Prints the result as a table, or as JSON with `--json`.
///
/// # Errors
/// When the JSON cannot be produced.
pub fn report(
    session: &Session,
    args: &RunArgs,
    display: &str,
    result: &BenchResult,
    out: &Output,
) -> Result<()> {
    let report = BenchReport::new(session, display, result);
    if args.json {
        out.result(&serde_json::to_string_pretty(&report)?);
    } else {
        out.result(report.table().trim_end());
    }
    Ok(())
}
