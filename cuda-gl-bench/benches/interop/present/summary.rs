//! The present group's summaries: each mode's frame against its limit, the ratios set on the
//! rows, and the report's lines, markdown and JSON (`present.<mode>.<WxH>`).

use super::{INTEROP_TARGET, Role, STAGED_TARGET, SUM, Setup};
use crate::measure::{Case, Ratio};
use crate::report::verdict;
use crate::roles::{median, row, sizes};
use cuda_gl::display::Mode;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The staged mode's raw limits, beside its summary.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
pub struct StagedLimits {
    /// The raw DtoH's median, µs.
    pub dtoh_us: f64,
    /// The raw upload's median, µs.
    pub upload_us: f64,
    /// `glBufferSubData` + the upload, µs (for reading only; not a limit of the target).
    pub write_upload_us: Option<f64>,
    /// The upload straight from pinned memory (no pixel buffer), µs: the staged upload on GL
    /// that is not NVIDIA's (for reading only).
    pub host_upload_us: Option<f64>,
    /// A staged frame drawn by the plasma kernel through its surface, then presented, µs (for
    /// reading only: the kernel's time on top of the present).
    pub kernel_frame_us: Option<f64>,
    /// A staged frame drawn into its pixels (device memory) instead of the surface (the
    /// target's array), µs (for reading only).
    pub pixels_frame_us: Option<f64>,
    /// The raw copy of a frame from a CUDA array into pinned memory, µs (for reading only).
    pub array_dtoh_us: Option<f64>,
    /// The same through device memory (array -> device -> pinned), µs (for reading only).
    pub array_via_device_us: Option<f64>,
    /// The staged present made of plain calls (two pinned buffers, the same upload), µs (for
    /// reading only).
    pub double_buffer_us: Option<f64>,
    /// The banded staged present made of plain calls as the target makes it (on NVIDIA's GL a
    /// buffer per band), µs (for reading only).
    pub bands_us: Option<f64>,
    /// `us_per_frame / max(dtoh_us, upload_us)`.
    pub ratio_to_max: f64,
    /// `us_per_frame / (dtoh_us + upload_us)`.
    pub ratio_to_sum: f64,
    /// Which of the two the target applies to: `sum` (NVIDIA's GL) or `max`.
    pub limit_applies: &'static str,
}

/// `present.<mode>.<WxH>` of `benchmarks.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The frame's median, µs.
    pub us_per_frame: f64,
    /// `us_per_frame / limit_us`.
    pub ratio: f64,
    /// What the limit is.
    pub limit: &'static str,
    /// The limit's median, µs (for staged: the sum or the larger of the two raw rows).
    pub limit_us: f64,
    /// The target the ratio should meet (at most).
    pub target_max: f64,
    /// Whether `ratio <= target_max`.
    pub target_met: bool,
    /// For staged: both limits and both ratios.
    #[serde(flatten)]
    pub staged: Option<StagedLimits>,
}

impl Summary {
    /// A frame of median `frame` µs against `limit` of median `limit_us`, a ratio that should
    /// be at most `target_max`.
    fn new(
        frame: f64,
        limit: &'static str,
        limit_us: f64,
        target_max: f64,
        staged: Option<StagedLimits>,
    ) -> Summary {
        let ratio = frame / limit_us;
        Summary {
            us_per_frame: frame,
            ratio,
            limit,
            limit_us,
            target_max,
            target_met: ratio <= target_max,
            staged,
        }
    }

    /// The figures the progress line and the report's table both show, formatted once: µs per
    /// frame, the limit, its µs, the ratio, and the target with its verdict.
    fn figures(&self) -> [String; 5] {
        [
            format!("{:.1}", self.us_per_frame),
            self.limit.to_string(),
            format!("{:.1}", self.limit_us),
            format!("{:.3}", self.ratio),
            format!("<= {}: {}", self.target_max, verdict(self.target_met)),
        ]
    }
}

/// `present` of `benchmarks.json`: the setup's fields, then `interop` and `staged`, each by
/// `<WxH>` (`interop` is absent when it was refused).
#[derive(Debug, Clone, Serialize)]
pub struct PresentReport {
    /// What the group found about the GL.
    #[serde(flatten)]
    pub setup: Setup,
    /// By mode name, then by size.
    #[serde(flatten)]
    pub modes: BTreeMap<String, BTreeMap<String, Summary>>,
}

/// An interop frame against the handoff floor at `size`.
fn interop_summary(cases: &[Case], size: (u32, u32)) -> Option<Summary> {
    let frame = median(cases, Role::Interop, size)?;
    let floor = median(cases, Role::Floor, size)?;
    Some(Summary::new(
        frame,
        "handoff floor",
        floor,
        INTEROP_TARGET,
        None,
    ))
}

/// A staged frame against its raw limits at `size`, the target's on the `applies` one.
fn staged_summary(cases: &[Case], size: (u32, u32), applies: &'static str) -> Option<Summary> {
    let frame = median(cases, Role::StagedPresent, size)?;
    let dtoh_us = median(cases, Role::Dtoh, size)?;
    let upload_us = median(cases, Role::Upload, size)?;
    let (max, sum) = (dtoh_us.max(upload_us), dtoh_us + upload_us);
    let (limit, limit_us) = if applies == SUM {
        ("DtoH + upload (NVIDIA GL)", sum)
    } else {
        ("max(DtoH, upload) (GL not NVIDIA's)", max)
    };
    Some(Summary::new(
        frame,
        limit,
        limit_us,
        STAGED_TARGET,
        Some(StagedLimits {
            dtoh_us,
            upload_us,
            write_upload_us: median(cases, Role::WriteUpload, size),
            host_upload_us: median(cases, Role::HostUpload, size),
            kernel_frame_us: median(cases, Role::Staged, size),
            pixels_frame_us: median(cases, Role::StagedPixels, size),
            array_dtoh_us: median(cases, Role::ArrayDtoh, size),
            array_via_device_us: median(cases, Role::ArrayDtodDtoh, size),
            double_buffer_us: median(cases, Role::DoubleBuffer, size),
            bands_us: median(cases, Role::BandBuffers, size)
                .or_else(|| median(cases, Role::Bands, size)),
            ratio_to_max: frame / max,
            ratio_to_sum: frame / sum,
            limit_applies: applies,
        }),
    ))
}

/// Sets the frame rows' ratios at `size` to their limits, as the summaries compute them.
pub(super) fn set_ratios(cases: &mut [Case], size: (u32, u32), setup: &Setup) {
    let interop = interop_summary(cases, size).zip(row(cases, Role::Floor, size));
    let interop = interop.map(|(s, floor)| (s, floor.name.clone()));
    let staged = staged_summary(cases, size, setup.staged_limit);
    let staged = staged.map(|s| (s.clone(), s.limit.to_string()));
    for case in cases.iter_mut() {
        let Some(tag) = case.present.as_ref() else {
            continue;
        };
        let summary = match tag.role {
            _ if (tag.width, tag.height) != size => None,
            Role::Interop => interop.as_ref(),
            Role::StagedPresent => staged.as_ref(),
            _ => None,
        };
        if let Some((summary, to)) = summary {
            case.ratio = Some(Ratio {
                to: to.clone(),
                value: summary.ratio,
                target_max: Some(summary.target_max),
            });
        }
    }
    // The rows for reading, against the floor with no target: the pixel paths and the stream.
    let Some(floor) = row(cases, Role::Floor, size).map(|c| (c.name.clone(), c.stats.median_us))
    else {
        return;
    };
    for case in cases.iter_mut() {
        let reading = case.present.as_ref().is_some_and(|t| {
            (t.width, t.height) == size
                && matches!(
                    t.role,
                    Role::InteropPixels | Role::InteropPixelsSynced | Role::Stream
                )
        });
        if reading {
            case.ratio = Some(Ratio {
                to: floor.0.clone(),
                value: case.stats.median_us / floor.1,
                target_max: None,
            });
        }
    }
}

/// `present` of `benchmarks.json`, for a device whose run measured the group (`None` when it
/// holds no present row).
pub fn summaries(cases: &[Case], setup: &Setup) -> Option<PresentReport> {
    let mut modes: BTreeMap<String, BTreeMap<String, Summary>> = BTreeMap::new();
    for (mode, (w, h), summary) in each(cases, setup) {
        let by_size = modes.entry(mode.name().to_string()).or_default();
        by_size.insert(format!("{w}x{h}"), summary);
    }
    (!modes.is_empty()).then(|| PresentReport {
        setup: setup.clone(),
        modes,
    })
}

/// Every summary of `cases`, as (mode, size, summary).
fn each(cases: &[Case], setup: &Setup) -> Vec<(Mode, (u32, u32), Summary)> {
    let mut out = Vec::new();
    for size in sizes::<Role>(cases) {
        if let Some(s) = interop_summary(cases, size) {
            out.push((Mode::Interop, size, s));
        }
        if let Some(s) = staged_summary(cases, size, setup.staged_limit) {
            out.push((Mode::Staged, size, s));
        }
    }
    out
}

/// Prints each summary of `cases` on one line (stderr, like the other groups' progress).
pub fn print_summary(cases: &[Case], setup: &Setup) {
    eprintln!("interop: present: {}", setup.display);
    for (mode, (w, h), s) in each(cases, setup) {
        let limits = s.staged.as_ref().map_or_else(String::new, |l| {
            format!(
                " (DtoH {:.1} µs, upload {:.1} µs: {:.3} x max, {:.3} x sum)",
                l.dtoh_us, l.upload_us, l.ratio_to_max, l.ratio_to_sum
            )
        });
        let [us, limit, limit_us, ratio, target] = s.figures();
        eprintln!(
            "interop: present.{mode}.{w}x{h}: {us} µs per frame, {limit} {limit_us} µs: {ratio} \
             x{limits} (target {target})"
        );
    }
}

/// The markdown tables of the group, for the report; empty when it did not run.
pub fn summary_markdown(cases: &[Case], setup: Option<&Setup>) -> String {
    let mut out = String::new();
    let Some(setup) = setup else {
        return out;
    };
    let all = each(cases, setup);
    if all.is_empty() {
        return out;
    }
    let _ = write!(
        out,
        "### Present: `DisplayTarget` per frame vs its limits\n\n\
         `{}` (auto, 1920x1080).\n\n",
        setup.display
    );
    if let Some(why) = &setup.interop_refused {
        let _ = write!(
            out,
            "Interop was refused, so only staged was measured: {why}.\n\n"
        );
    }
    let _ = write!(
        out,
        "GL: {} / {}: the staged limit is the **{}** of the raw DtoH and upload ({}).\n\n\
         | key | µs per frame | limit | limit µs | ratio | target |\n\
         |---|---:|---|---:|---:|---|\n",
        setup.gl_vendor,
        setup.gl_renderer,
        setup.staged_limit,
        if setup.staged_limit == SUM {
            "NVIDIA's GL"
        } else {
            "GL not NVIDIA's"
        }
    );
    for (mode, (w, h), s) in &all {
        let [us, limit, limit_us, ratio, target] = s.figures();
        let _ = writeln!(
            out,
            "| `present.{mode}.{w}x{h}` | {us} | {limit} | {limit_us} | {ratio} | {target} |"
        );
    }
    out.push_str(
        "\n| staged | DtoH µs | upload µs | × max | × sum | raw bands µs | with the kernel µs | buffer write + upload µs | upload from pinned memory µs |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (_, (w, h), s) in &all {
        let Some(l) = &s.staged else { continue };
        let cell = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.1}"));
        let (write, host) = (cell(l.write_upload_us), cell(l.host_upload_us));
        let (bands, kernel) = (cell(l.bands_us), cell(l.kernel_frame_us));
        let _ = writeln!(
            out,
            "| {w}x{h} | {:.1} | {:.1} | {:.3} | {:.3} | {bands} | {kernel} | {write} | {host} |",
            l.dtoh_us, l.upload_us, l.ratio_to_max, l.ratio_to_sum
        );
    }
    out.push('\n');
    out
}
