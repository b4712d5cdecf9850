//! A stream's latency on the GPU's own clock: from the start of a frame's CUDA work to the end of
//! its GL draw. Before each frame's kernel, `stamp_globaltimer` (one thread, `plasma.cu`) stores
//! the GPU's global timer in nanoseconds; after each frame's draw, GL records a `GL_TIMESTAMP`
//! query, also in nanoseconds. The two are comparable only if they read the same clock, which
//! [`Stamps::clocks_agree`] checks first: GL timestamps taken just before and just after a
//! synchronized stamp must bracket it.

use crate::gpu::Gpu;
use crate::measure::Stats;
use anyhow::{Context as _, Result, ensure};
use cuda_gl::{DeviceBuffer, Function, LaunchConfig, Module};
use std::time::Duration;

/// One block of one thread.
const ONE: LaunchConfig = LaunchConfig {
    grid: (1, 1, 1),
    block: (1, 1, 1),
    shared_mem_bytes: 0,
};

/// CUDA stamps and GL timestamp queries for up to `capacity` frames of a round. GL queries are
/// deleted on drop (the GL context must be current: the group's rig drops before `Gpu`).
pub struct Stamps {
    stamp: Function,
    _module: Module,
    cuda: DeviceBuffer<u64>,
    queries: Vec<u32>,
}

impl Stamps {
    /// Stamps for `capacity` frames, with the kernel loaded from `ptx` (plasma.ptx).
    pub fn new(gpu: &Gpu, ptx: &str, capacity: usize) -> Result<Stamps> {
        let module = Module::from_ptx(&gpu.ctx, ptx).context("loading stamp_globaltimer")?;
        let stamp = module.function("stamp_globaltimer")?;
        let cuda = DeviceBuffer::zeroed(&gpu.ctx, capacity)?;
        let mut queries = vec![0u32; capacity];
        let count = i32::try_from(capacity)?;
        // SAFETY: `queries` has room for `capacity` names.
        unsafe { gl::GenQueries(count, queries.as_mut_ptr()) };
        crate::glres::check("creating timestamp queries")?;
        Ok(Stamps {
            stamp,
            _module: module,
            cuda,
            queries,
        })
    }

    /// How many frames fit.
    pub fn capacity(&self) -> usize {
        self.queries.len()
    }

    /// Whether the CUDA stamps and GL timestamps read the same clock: a stamp taken between two
    /// GL timestamps (with the stream synchronized) must fall between them.
    pub fn clocks_agree(&self, gpu: &Gpu) -> Result<bool> {
        let before = gl_now();
        self.stamp(gpu, 0)?;
        gpu.stream.synchronize()?;
        let after = gl_now();
        let stamped = self.cuda.to_vec()?.first().copied().unwrap_or(0);
        eprintln!(
            "interop: latency clocks: GL {before} <= CUDA {stamped} <= GL {after} (ns): {}",
            before <= stamped && stamped <= after
        );
        Ok(before <= stamped && stamped <= after)
    }

    /// Queues the stamp of frame `i` on the bench's stream (before the frame's kernel).
    pub fn stamp(&self, gpu: &Gpu, i: usize) -> Result<()> {
        ensure!(i < self.capacity(), "stamp {i} is out of range");
        let index = u32::try_from(i)?;
        // SAFETY: `stamp_globaltimer(unsigned long long* out, unsigned i)` writes out[i], and
        // `i` < capacity = the buffer's length (checked above); the buffer lives until the
        // stream is synchronized in `latencies_us` or dropped with the rig after the round.
        unsafe {
            self.stamp
                .launch(ONE, &gpu.stream, (self.cuda.device_ptr(), index))
        }?;
        Ok(())
    }

    /// Records the GL timestamp of frame `i` (after the frame's draw).
    pub fn mark(&self, i: usize) {
        if let Some(&query) = self.queries.get(i) {
            // SAFETY: a GL context is current; the query name came from glGenQueries.
            unsafe { gl::QueryCounter(query, gl::TIMESTAMP) };
        }
    }

    /// After a round of `frames` frames, each stamped and marked, with the stream synchronized
    /// and GL finished: every frame's latency in µs, GL's timestamp minus CUDA's stamp.
    pub fn latencies_us(&self, frames: usize) -> Result<Vec<f64>> {
        let cuda = self.cuda.to_vec()?;
        let frames = frames.min(self.capacity());
        let mut out = Vec::with_capacity(frames);
        for (i, &start) in cuda.iter().enumerate().take(frames) {
            let mut end = 0u64;
            // SAFETY: a GL context is current; the query was recorded (its frame was drawn) and
            // GL has finished, so the result is available; `end` is a valid out-pointer.
            unsafe { gl::GetQueryObjectui64v(self.queries[i], gl::QUERY_RESULT, &mut end) };
            out.push(end.saturating_sub(start) as f64 / 1e3);
        }
        crate::glres::check("reading timestamp queries")?;
        Ok(out)
    }
}

impl Drop for Stamps {
    fn drop(&mut self) {
        let count = i32::try_from(self.queries.len()).unwrap_or(0);
        // SAFETY: the names came from glGenQueries and are deleted once; a context is current.
        unsafe { gl::DeleteQueries(count, self.queries.as_ptr()) };
    }
}

/// GL's current GPU time in ns (`GL_TIMESTAMP`).
fn gl_now() -> u64 {
    let mut now = 0i64;
    // SAFETY: a GL context is current; `now` is a valid out-pointer.
    unsafe { gl::GetInteger64v(gl::TIMESTAMP, &mut now) };
    u64::try_from(now).unwrap_or(0)
}

/// The median and the largest of latencies in µs (`None` for none), through the benchmark's own
/// statistics.
pub fn median_and_max(us: &[f64]) -> Option<(f64, f64)> {
    let samples: Vec<Duration> = us
        .iter()
        .map(|&v| Duration::from_secs_f64(v / 1e6))
        .collect();
    Stats::from_samples(&samples).map(|s| (s.median_us, s.max_us))
}
