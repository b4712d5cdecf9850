//! Timing: [`Stats`] over per-iteration wall-clock samples, [`Case`] rows, and
//! [`interleaved`], which runs several variants of one case group in alternating blocks so that
//! clock and thermal drift affect all of them equally.

use anyhow::{Context as _, Result};
use serde::Serialize;
use std::time::{Duration, Instant};

/// How many iterations to run, and how to interleave them.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Plan {
    /// Measured iterations per case.
    pub iters: usize,
    /// Unmeasured iterations per case before the measured ones.
    pub warmup: usize,
    /// Iterations per case in one block before switching to the next case of the group.
    pub block: usize,
}

impl Plan {
    /// The same plan with another iteration count (warm-up shrunk to at most a tenth of it, but
    /// never below 10, for expensive cases such as the CPU frames).
    pub fn with_iters(self, iters: usize) -> Plan {
        Plan {
            iters,
            warmup: self.warmup.min((iters / 10).max(10)),
            ..self
        }
    }

    /// The plan of rows whose iteration is a round of `round` frames: a `round`-th of the
    /// iterations (at least 5) and of the warm-up (at least 1), alternating round by round.
    pub fn rounds(self, round: usize) -> Plan {
        let round = round.max(1);
        Plan {
            iters: (self.iters / round).max(5),
            warmup: (self.warmup / round).max(1),
            block: 1,
        }
    }
}

/// Summary of one case's samples, in microseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Stats {
    /// Number of measured iterations.
    pub iterations: usize,
    /// Median (mean of the two middle samples for an even count).
    pub median_us: f64,
    /// 99th percentile (nearest rank).
    pub p99_us: f64,
    /// Arithmetic mean.
    pub mean_us: f64,
    /// Fastest iteration.
    pub min_us: f64,
    /// Slowest iteration.
    pub max_us: f64,
}

impl Stats {
    /// Summarises `samples`; `None` when there are none.
    pub fn from_samples(samples: &[Duration]) -> Option<Stats> {
        let mut us: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        let n = us.len();
        let (&min_us, &max_us) = (us.first()?, us.last()?);
        let median_us = if n % 2 == 1 {
            us[n / 2]
        } else {
            (us[n / 2 - 1] + us[n / 2]) / 2.0
        };
        // Nearest rank: the smallest sample with at least 99 % of the samples at or below it.
        let rank = (n * 99).div_ceil(100).clamp(1, n);
        Some(Stats {
            iterations: n,
            median_us,
            p99_us: us[rank - 1],
            mean_us: us.iter().sum::<f64>() / n as f64,
            min_us,
            max_us,
        })
    }
}

/// A ratio of one case's median to another's.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// The case it is relative to.
    pub to: String,
    /// `median(this) / median(to)`.
    pub value: f64,
    /// The target the ratio should meet, if the issue names one (e.g. 1.02).
    pub target_max: Option<f64>,
}

/// Which frame path and size a frame row measures (for the chart).
#[derive(Debug, Clone, Serialize)]
pub struct FrameTag {
    /// `floor`, `PBO`, `surface`, `staging` or `CPU`.
    pub path: &'static str,
    /// Frame width in pixels.
    pub width: u32,
    /// Frame height in pixels.
    pub height: u32,
}

/// For rows of the fast-path groups (8-10): what one iteration holds, and the per-frame figures
/// derived from its median, for the summary tables.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
pub struct FastTag {
    /// `floor`, `PBO`, `surface`, `surface, object per map`, `K` or `ring`.
    pub kind: &'static str,
    /// Frame width in pixels.
    pub width: u32,
    /// Frame height in pixels.
    pub height: u32,
    /// Frames one iteration renders and GL consumes (K of the K table; 1 otherwise).
    pub frames_per_iteration: u32,
    /// Images in the ring, for frames-in-flight rows.
    pub ring: Option<u32>,
    /// The median per frame: the case's median / `frames_per_iteration`.
    pub per_frame_us: f64,
    /// Frames per second at that median.
    pub fps: f64,
}

/// One row of the report.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    /// The case group, e.g. `safe API overhead`.
    pub group: String,
    /// The case, e.g. `safe cuda-gl: map + pointer + memset 8 MB + unmap + sync`.
    pub name: String,
    /// What was measured.
    pub stats: Stats,
    /// Its median relative to another case's, where that comparison is the point.
    pub ratio: Option<Ratio>,
    /// For frame rows: the path and size.
    pub frame: Option<FrameTag>,
    /// For the fast-path groups: the kind of row and its per-frame figures.
    pub fast: Option<FastTag>,
    /// For the streaming group: the stream's shape and its latency.
    pub stream: Option<crate::streaming::StreamTag>,
    /// For the present group: what the row measures, and the frame size.
    pub present: Option<crate::present::PresentTag>,
    /// For the wgpu present group: what the row measures, and the frame size.
    pub wgpu: Option<crate::wgpu_present::WgpuTag>,
    /// For the video group: what the row measures, and the frame size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<crate::video::VideoTag>,
}

impl Case {
    /// Sets the ratio of this case's median to `base`'s.
    pub fn relative_to(&mut self, base: &Case, target_max: Option<f64>) {
        self.ratio = Some(Ratio {
            to: base.name.clone(),
            value: self.stats.median_us / base.stats.median_us,
            target_max,
        });
    }

    /// Tags a fast-path row: `frames` frames per iteration (per-frame median and fps derived).
    pub fn tag_fast(&mut self, kind: &'static str, (width, height): (u32, u32), frames: u32) {
        let per_frame_us = self.stats.median_us / f64::from(frames.max(1));
        self.fast = Some(FastTag {
            kind,
            width,
            height,
            frames_per_iteration: frames.max(1),
            ring: None,
            per_frame_us,
            fps: 1e6 / per_frame_us,
        });
    }

    /// Sets the ratio of this case's median per frame to `base`'s median (one frame per
    /// iteration), for rows that render several frames per iteration.
    pub fn per_frame_relative_to(&mut self, base: &Case, target_max: Option<f64>) {
        let per_frame = self
            .fast
            .as_ref()
            .map_or(self.stats.median_us, |t| t.per_frame_us);
        self.ratio = Some(Ratio {
            to: format!("{} (per frame)", base.name),
            value: per_frame / base.stats.median_us,
            target_max,
        });
    }
}

/// Turns rows whose iteration is a round of `frames` frames into per-frame rows (every statistic
/// divided by `frames`), and prints each row's per-frame median and frame rate.
pub fn per_frame_rounds(cases: &mut [Case], frames: usize) {
    for case in cases {
        let s = &mut case.stats;
        for v in [
            &mut s.median_us,
            &mut s.p99_us,
            &mut s.mean_us,
            &mut s.min_us,
            &mut s.max_us,
        ] {
            *v /= frames as f64;
        }
        eprintln!(
            "interop: {}: {:.1} µs/frame = {:.0} fps sustained",
            case.name,
            s.median_us,
            1e6 / s.median_us
        );
    }
}

/// One variant of a case group: a name and the work of one iteration on the group's state `S`.
///
/// The work must be complete when it returns (stream synchronized, `glFinish` called), so that
/// the wall-clock time of the call includes the GPU's time.
pub struct Variant<'a, S> {
    name: String,
    run: Iteration<'a, S>,
}

/// The work of one iteration on the group's state `S`.
type Iteration<'a, S> = Box<dyn FnMut(&mut S) -> Result<()> + 'a>;

impl<'a, S> Variant<'a, S> {
    /// A variant named `name` whose iteration is `run`.
    pub fn new(name: impl Into<String>, run: impl FnMut(&mut S) -> Result<()> + 'a) -> Self {
        Self {
            name: name.into(),
            run: Box::new(run),
        }
    }
}

/// [`interleaved`] of rows tagged with their roles `R` in a group: the cases, in order, each
/// with its row's role.
///
/// # Errors
/// As [`interleaved`].
pub fn interleaved_rows<S, R>(
    plan: &Plan,
    group: &str,
    state: &mut S,
    rows: Vec<(R, Variant<'_, S>)>,
) -> Result<Vec<(Case, R)>> {
    let (roles, mut variants): (Vec<R>, Vec<_>) = rows.into_iter().unzip();
    let cases = interleaved(plan, group, state, &mut variants)?;
    Ok(cases.into_iter().zip(roles).collect())
}

/// Runs every variant `plan.warmup` times, then `plan.iters` times, in alternating blocks of
/// `plan.block` iterations (variant 0 for a block, variant 1 for a block, ..., then again), and
/// times each iteration with `Instant` around the call.
///
/// Returns one [`Case`] per variant, in order, in group `group`.
///
/// # Errors
/// The first error of any iteration, naming the variant.
pub fn interleaved<S>(
    plan: &Plan,
    group: &str,
    state: &mut S,
    variants: &mut [Variant<'_, S>],
) -> Result<Vec<Case>> {
    let block = plan.block.max(1);
    let mut samples: Vec<Vec<Duration>> = variants
        .iter()
        .map(|_| Vec::with_capacity(plan.iters))
        .collect();
    for (count, measured) in [(plan.warmup, false), (plan.iters, true)] {
        let mut done = 0;
        while done < count {
            let n = block.min(count - done);
            for (variant, out) in variants.iter_mut().zip(samples.iter_mut()) {
                for _ in 0..n {
                    crate::watchdog::enter(crate::watchdog::Stage::Measure);
                    let start = Instant::now();
                    (variant.run)(state).with_context(|| format!("{group}: {}", variant.name))?;
                    let elapsed = start.elapsed();
                    if measured {
                        out.push(elapsed);
                    }
                }
            }
            done += n;
        }
    }
    variants
        .iter()
        .zip(&samples)
        .map(|(variant, samples)| {
            let stats = Stats::from_samples(samples)
                .with_context(|| format!("{group}: {}: no measured iterations", variant.name))?;
            Ok(Case {
                group: group.to_string(),
                name: variant.name.clone(),
                stats,
                ratio: None,
                frame: None,
                fast: None,
                stream: None,
                present: None,
                wgpu: None,
                video: None,
            })
        })
        .collect()
}
