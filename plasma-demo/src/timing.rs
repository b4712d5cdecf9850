//! Per-frame timings: stages, the clocks that measure them, GL timer queries, and statistics.
//!
//! A [`Profiler`] collects samples `(stage, clock, microseconds)`. The CPU stages are measured
//! with the wall clock around the call; GPU work is measured on the GPU, with `GL_TIME_ELAPSED`
//! queries (here, [`GlTimers`]) and CUDA events (in the CUDA backend). GPU results are read a few
//! frames later from a ring of queries, so measuring never stalls the pipeline.

use anyhow::{Result, bail};
use gl::types::GLuint;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

/// One step of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Mapping the GL resource for CUDA (`cuGraphicsMapResources`). On the CUDA stream
    /// ([`Clock::CudaEvent`]) this includes waiting for OpenGL to finish its earlier work, so it
    /// shows how long CUDA waits for GL; on the CPU ([`Clock::CpuWall`]) it is the call itself.
    Map,
    /// Computing the pixels: the CUDA kernel, or `render_cpu` on the CPU backend. The display
    /// paths time the kernel's launch on the CPU only.
    Kernel,
    /// Unmapping the GL resource (`cuGraphicsUnmapResources`).
    Unmap,
    /// Getting the pixels into the texture: `glBufferSubData` (CPU backend) and
    /// `glTexSubImage2D` from the pixel buffer; for the display paths, the display target's
    /// present (interop: map, copy, unmap; staged: the copy out and the GL upload, band by
    /// band, after waiting for the frame's kernel, whose GPU time this stage then includes).
    /// The surface path has none.
    Upload,
    /// Drawing the fullscreen triangle that shows the texture.
    Draw,
    /// The whole frame on the CPU, from its start to the start of the next (swap included).
    Total,
}

impl Stage {
    /// The stage's name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Map => "map",
            Stage::Kernel => "kernel",
            Stage::Unmap => "unmap",
            Stage::Upload => "upload",
            Stage::Draw => "draw",
            Stage::Total => "total",
        }
    }
}

/// What measured a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// Wall-clock time of the call on the CPU thread.
    CpuWall,
    /// Time on the GPU between two CUDA events on the frame's stream.
    CudaEvent,
    /// Time on the GPU of a `GL_TIME_ELAPSED` query.
    GlTimer,
}

impl Clock {
    /// The clock's name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Clock::CpuWall => "cpu_wall",
            Clock::CudaEvent => "cuda_event",
            Clock::GlTimer => "gl_timer",
        }
    }
}

/// Statistics of one `(stage, clock)` series, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageStats {
    /// The stage.
    pub stage: Stage,
    /// What measured it.
    pub clock: Clock,
    /// How many samples.
    pub samples: usize,
    /// The median.
    pub median_us: f64,
    /// The 99th percentile (nearest rank).
    pub p99_us: f64,
    /// The mean.
    pub mean_us: f64,
    /// The smallest sample.
    pub min_us: f64,
    /// The largest sample.
    pub max_us: f64,
}

impl StageStats {
    /// Statistics of `samples`; `None` when there are none.
    pub fn of(stage: Stage, clock: Clock, samples: &[f64]) -> Option<StageStats> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        Some(StageStats {
            stage,
            clock,
            samples: sorted.len(),
            median_us: percentile(&sorted, 50.0),
            p99_us: percentile(&sorted, 99.0),
            mean_us: sorted.iter().sum::<f64>() / sorted.len() as f64,
            min_us: sorted[0],
            max_us: sorted[sorted.len() - 1],
        })
    }
}

/// The `p`-th percentile of sorted, non-empty `sorted` by the nearest-rank method (the median of
/// an even count is the mean of the two middle values).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if p == 50.0 && n.is_multiple_of(2) {
        return (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    }
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// Collects timing samples of frames; does nothing while disabled (the interactive runs).
#[derive(Debug, Default)]
pub struct Profiler {
    enabled: bool,
    series: BTreeMap<(Stage, Clock), Vec<f64>>,
    gl: Option<GlTimers>,
}

impl Profiler {
    /// A profiler that records nothing.
    pub fn disabled() -> Profiler {
        Profiler::default()
    }

    /// A profiler that records CPU times and, with a GL context current, GL timer queries.
    ///
    /// # Errors
    /// When the GL context has no timer queries (they are core since OpenGL 3.3).
    pub fn enabled() -> Result<Profiler> {
        Ok(Profiler {
            enabled: true,
            series: BTreeMap::new(),
            gl: Some(GlTimers::new()?),
        })
    }

    /// Whether samples are recorded.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Records one sample.
    pub fn record(&mut self, stage: Stage, clock: Clock, micros: f64) {
        if self.enabled {
            self.series.entry((stage, clock)).or_default().push(micros);
        }
    }

    /// Runs `f` and records its wall-clock time as `stage`.
    pub fn cpu<R>(&mut self, stage: Stage, f: impl FnOnce() -> R) -> R {
        if !self.enabled {
            return f();
        }
        let start = Instant::now();
        let out = f();
        self.record(stage, Clock::CpuWall, micros(start.elapsed()));
        out
    }

    /// Runs `f` (GL calls) inside a `GL_TIME_ELAPSED` query recorded as `stage`.
    pub fn gl<R>(&mut self, stage: Stage, f: impl FnOnce() -> R) -> R {
        match (&mut self.gl, self.enabled) {
            (Some(gl), true) => gl.time(stage, f),
            _ => f(),
        }
    }

    /// Runs `f` inside a GL timer query and records its wall-clock time too.
    pub fn gl_and_cpu<R>(&mut self, stage: Stage, f: impl FnOnce() -> R) -> R {
        if !self.enabled {
            return f();
        }
        let start = Instant::now();
        let out = self.gl(stage, f);
        self.record(stage, Clock::CpuWall, micros(start.elapsed()));
        out
    }

    /// Starts a frame: collects the GL queries of the frame that used this ring slot before.
    ///
    /// # Errors
    /// When a query result cannot be read.
    pub fn begin_frame(&mut self) -> Result<()> {
        if let (Some(gl), true) = (&mut self.gl, self.enabled) {
            for (stage, us) in gl.begin_frame()? {
                self.series
                    .entry((stage, Clock::GlTimer))
                    .or_default()
                    .push(us);
            }
        }
        Ok(())
    }

    /// Reads every outstanding GL query (waiting for the GPU).
    ///
    /// # Errors
    /// When a query result cannot be read.
    pub fn drain(&mut self) -> Result<()> {
        if let Some(gl) = &mut self.gl {
            for (stage, us) in gl.drain()? {
                if self.enabled {
                    self.series
                        .entry((stage, Clock::GlTimer))
                        .or_default()
                        .push(us);
                }
            }
        }
        Ok(())
    }

    /// Forgets every sample so far (after the warm-up).
    pub fn clear(&mut self) {
        self.series.clear();
    }

    /// The statistics of every series, in stage order then clock order.
    pub fn stats(&self) -> Vec<StageStats> {
        self.series
            .iter()
            .filter_map(|(&(stage, clock), samples)| StageStats::of(stage, clock, samples))
            .collect()
    }
}

/// A duration in microseconds.
pub fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// How many frames GPU timers trail behind before their results are read.
pub const TIMER_RING_DEPTH: usize = 4;

/// The stages timed with GL queries.
const GL_STAGES: [Stage; 2] = [Stage::Upload, Stage::Draw];

/// A ring of `GL_TIME_ELAPSED` queries: one set per frame, read back [`TIMER_RING_DEPTH`] frames
/// later. Needs the GL context current for every call and when dropped.
#[derive(Debug)]
pub struct GlTimers {
    /// `slots[frame % depth][stage]`: the query and whether it was issued.
    slots: Vec<[(GLuint, bool); GL_STAGES.len()]>,
    current: usize,
    started: bool,
}

impl GlTimers {
    /// Creates the queries.
    ///
    /// # Errors
    /// When `glGenQueries` is not available.
    pub fn new() -> Result<GlTimers> {
        if !gl::GenQueries::is_loaded() || !gl::GetQueryObjectui64v::is_loaded() {
            bail!("the OpenGL context has no timer queries (GL 3.3 / ARB_timer_query)");
        }
        let mut slots = Vec::with_capacity(TIMER_RING_DEPTH);
        for _ in 0..TIMER_RING_DEPTH {
            let mut ids = [0; GL_STAGES.len()];
            // SAFETY: a GL context is current (caller's contract); `ids` has room for
            // GL_STAGES.len() names.
            unsafe { gl::GenQueries(ids.len() as i32, ids.as_mut_ptr()) };
            slots.push(ids.map(|id| (id, false)));
        }
        Ok(GlTimers {
            slots,
            current: 0,
            started: false,
        })
    }

    /// Moves to the next slot and returns the results it held from an earlier frame.
    fn begin_frame(&mut self) -> Result<Vec<(Stage, f64)>> {
        if self.started {
            self.current = (self.current + 1) % self.slots.len();
        }
        self.started = true;
        self.collect(self.current)
    }

    fn collect(&mut self, slot: usize) -> Result<Vec<(Stage, f64)>> {
        let mut out = Vec::new();
        for (i, (id, issued)) in self.slots[slot].iter_mut().enumerate() {
            if !*issued {
                continue;
            }
            wait_for_query(*id)?;
            let mut nanos: u64 = 0;
            // SAFETY: `id` names a query that was begun and ended, and its result is available
            // (waited for above); the result is a u64.
            unsafe { gl::GetQueryObjectui64v(*id, gl::QUERY_RESULT, &mut nanos) };
            *issued = false;
            out.push((GL_STAGES[i], nanos as f64 / 1e3));
        }
        // SAFETY: a GL context is current.
        let err = unsafe { gl::GetError() };
        if err != gl::NO_ERROR {
            bail!("reading a GL timer query failed with GL error {err:#06x}");
        }
        Ok(out)
    }

    fn drain(&mut self) -> Result<Vec<(Stage, f64)>> {
        let mut out = Vec::new();
        for slot in 0..self.slots.len() {
            out.extend(self.collect(slot)?);
        }
        Ok(out)
    }

    fn time<R>(&mut self, stage: Stage, f: impl FnOnce() -> R) -> R {
        let Some(index) = GL_STAGES.iter().position(|&s| s == stage) else {
            return f();
        };
        let (id, issued) = &mut self.slots[self.current][index];
        if *issued {
            // Timed twice in one frame: keep the first measurement.
            return f();
        }
        // SAFETY: a GL context is current; `id` is a query name of this context and no other
        // GL_TIME_ELAPSED query is active (they are never nested).
        unsafe { gl::BeginQuery(gl::TIME_ELAPSED, *id) };
        let out = f();
        // SAFETY: as above; ends the query begun just before.
        unsafe { gl::EndQuery(gl::TIME_ELAPSED) };
        *issued = true;
        out
    }
}

impl Drop for GlTimers {
    fn drop(&mut self) {
        let ids: Vec<GLuint> = self.slots.iter().flatten().map(|&(id, _)| id).collect();
        // SAFETY: the owner keeps the GL context current while this drops; the names were
        // created by glGenQueries.
        unsafe { gl::DeleteQueries(ids.len() as i32, ids.as_ptr()) };
    }
}

/// Frames per second and frame time, averaged over about a second, for the window title.
#[derive(Debug)]
pub struct FpsCounter {
    window_start: Instant,
    frames: u32,
    /// The last full second's (fps, µs per frame).
    last: Option<(f64, f64)>,
}

impl Default for FpsCounter {
    fn default() -> Self {
        FpsCounter::new()
    }
}

impl FpsCounter {
    /// Starts counting now.
    pub fn new() -> FpsCounter {
        FpsCounter {
            window_start: Instant::now(),
            frames: 0,
            last: None,
        }
    }

    /// Counts a frame; returns the new (fps, µs per frame) once a second has passed.
    pub fn frame(&mut self) -> Option<(f64, f64)> {
        self.frames += 1;
        let elapsed = self.window_start.elapsed();
        if elapsed < Duration::from_secs(1) {
            return None;
        }
        let secs = elapsed.as_secs_f64();
        let fps = f64::from(self.frames) / secs;
        let frame_us = secs * 1e6 / f64::from(self.frames);
        self.last = Some((fps, frame_us));
        self.frames = 0;
        self.window_start = Instant::now();
        self.last
    }

    /// The last second's (fps, µs per frame), if a second has passed.
    pub fn last(&self) -> Option<(f64, f64)> {
        self.last
    }
}

/// The animation clock: a fixed time (`--time`) or seconds since the start.
#[derive(Debug, Clone, Copy)]
pub enum AnimationClock {
    /// Always this time.
    Fixed(f32),
    /// Seconds since this instant.
    Wall(Instant),
}

impl AnimationClock {
    /// `Fixed(t)` for `Some(t)`, otherwise the wall clock starting now.
    pub fn new(fixed: Option<f32>) -> AnimationClock {
        fixed.map_or_else(
            || AnimationClock::Wall(Instant::now()),
            AnimationClock::Fixed,
        )
    }

    /// The animation time in seconds now.
    pub fn now(&self) -> f32 {
        match *self {
            AnimationClock::Fixed(t) => t,
            AnimationClock::Wall(start) => start.elapsed().as_secs_f32(),
        }
    }
}

impl fmt::Display for AnimationClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnimationClock::Fixed(t) => write!(f, "t = {t} s (fixed)"),
            AnimationClock::Wall(_) => f.write_str("t = wall clock"),
        }
    }
}

/// How long [`wait_for_gpu`] waits before it reports the GPU as stuck.
const GPU_WAIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Polls `ready` until it answers `true`, flushing GL once if the first answer is `false` (the
/// awaited work may wait for GL commands still queued on this thread), and fails after
/// [`GPU_WAIT_TIMEOUT`] with `stuck` in the message instead of blocking for ever. The GL context
/// must be current on this thread.
pub(crate) fn wait_for_gpu(stuck: &str, mut ready: impl FnMut() -> Result<bool>) -> Result<()> {
    crate::watchdog::enter(crate::watchdog::Stage::TimingWait);
    let start = std::time::Instant::now();
    let mut flushed = false;
    while !ready()? {
        if !flushed {
            // SAFETY: the caller keeps a GL context current on this thread.
            unsafe { gl::Flush() };
            flushed = true;
        }
        if start.elapsed() > GPU_WAIT_TIMEOUT {
            bail!(
                "{stuck} did not complete within {} s: the GPU work before it is stuck",
                GPU_WAIT_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
    Ok(())
}

/// Waits until GL timer query `id` has its result (`GL_QUERY_RESULT_AVAILABLE`), through
/// [`wait_for_gpu`].
fn wait_for_query(id: u32) -> Result<()> {
    wait_for_gpu("a GL timer query", || {
        let mut available: u32 = 0;
        // SAFETY: a GL context is current; `id` names a query that was begun and ended.
        unsafe { gl::GetQueryObjectuiv(id, gl::QUERY_RESULT_AVAILABLE, &mut available) };
        Ok(available != 0)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.5);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0], 50.0), 2.0);
        assert!(percentile(&[], 50.0).is_nan());
    }

    #[test]
    fn stats_of_unsorted_samples() {
        let s = StageStats::of(Stage::Kernel, Clock::CudaEvent, &[5.0, 1.0, 3.0]);
        let s = s.expect("three samples");
        assert_eq!(s.samples, 3);
        assert_eq!((s.min_us, s.median_us, s.max_us), (1.0, 3.0, 5.0));
        assert_eq!(s.mean_us, 3.0);
        assert!(StageStats::of(Stage::Map, Clock::CpuWall, &[]).is_none());
    }

    #[test]
    fn disabled_profiler_records_nothing() {
        let mut p = Profiler::disabled();
        assert_eq!(p.cpu(Stage::Kernel, || 3), 3);
        p.record(Stage::Map, Clock::CpuWall, 1.0);
        assert!(p.stats().is_empty());
    }

    #[test]
    fn fixed_clock() {
        assert_eq!(AnimationClock::new(Some(1.5)).now(), 1.5);
        assert!(AnimationClock::new(None).now() >= 0.0);
    }
}
