//! The wgpu present group's staged rows on a Vulkan adapter that is not the CUDA GPU
//! summarised (the rows: `other_gpu.rs`, feature `wgpu`): at each size, the staged present
//! against the sum of its raw limits measured in the same rounds on that device, DtoH and
//! `write_texture`; target [`OTHER_TARGET`].

use super::{Found, Role, SUM, ratio_text, us_text};
use crate::measure::{Case, Ratio};
use crate::report::verdict;
use crate::roles::{SizeSummary, median};
use serde::Serialize;
use std::fmt::Write as _;

/// The staged present on another adapter: at most this many times DtoH + `write_texture` there
/// (issue 43, on lavapipe or llvmpipe).
pub const OTHER_TARGET: f64 = 1.10;

/// `wgpu_present.other_gpu_sizes.<WxH>` of `benchmarks.json`: the medians (µs) and the ratio.
#[derive(Debug, Clone, Serialize)]
pub struct OtherSummary {
    /// The staged present's median.
    pub staged_us: f64,
    /// The raw DtoH's median.
    pub dtoh_us: f64,
    /// The raw `write_texture` + use's median.
    pub write_texture_us: f64,
    /// `staged_us / (dtoh_us + write_texture_us)`.
    pub staged_ratio_to_sum: f64,
    /// The target `staged_ratio_to_sum` should meet (at most).
    pub target_max: f64,
    /// Whether `staged_ratio_to_sum <= target_max`.
    pub target_met: bool,
}

impl SizeSummary<Role> for OtherSummary {
    /// The summary of `size`, when its three rows were measured.
    fn of(cases: &[Case], size: (u32, u32)) -> Option<OtherSummary> {
        let m = |role| median(cases, role, size);
        let (staged_us, dtoh_us, write_texture_us) = (
            m(Role::OtherGpuStaged)?,
            m(Role::OtherGpuDtoh)?,
            m(Role::OtherGpuWriteTexture)?,
        );
        let staged_ratio_to_sum = staged_us / (dtoh_us + write_texture_us);
        Some(OtherSummary {
            staged_us,
            dtoh_us,
            write_texture_us,
            staged_ratio_to_sum,
            target_max: OTHER_TARGET,
            target_met: staged_ratio_to_sum <= OTHER_TARGET,
        })
    }

    /// The staged row's: to the sum of its raw limits, with the target.
    fn ratios(&self, _: &[Case], size: (u32, u32)) -> Vec<(Role, Ratio)> {
        let staged = Ratio {
            to: format!("raw {SUM} {}x{}, another GPU", size.0, size.1),
            value: self.staged_ratio_to_sum,
            target_max: Some(OTHER_TARGET),
        };
        vec![(Role::OtherGpuStaged, staged)]
    }
}

/// The staged figures of one size, formatted once: staged, DtoH, write_texture, staged to
/// their sum, and the target with its verdict.
fn figures(s: &OtherSummary) -> [String; 5] {
    [
        us_text(s.staged_us),
        us_text(s.dtoh_us),
        us_text(s.write_texture_us),
        ratio_text(s.staged_ratio_to_sum),
        format!("<= {}: {}", s.target_max, verdict(s.target_met)),
    ]
}

/// Prints the rows' summary lines (stderr, like the other groups' progress).
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))]
pub fn print(cases: &[Case]) {
    for ((w, h), s) in OtherSummary::each(cases) {
        let [staged, dtoh, write, ratio, target] = figures(&s);
        eprintln!(
            "interop: wgpu_present.other_gpu.{w}x{h}: staged {staged} µs vs DtoH {dtoh} + \
             write_texture {write} µs: {ratio} x sum (target {target})"
        );
    }
}

/// The rows' part of the group's markdown section; empty when they were not tried.
pub fn markdown(cases: &[Case], setup: &Found) -> String {
    let mut out = String::new();
    if let Some(why) = &setup.skipped {
        let _ = write!(
            out,
            "Staged on a Vulkan adapter that is not the CUDA GPU: skipped (not a failure): \
             {why}.\n\n"
        );
        return out;
    }
    let (Some(adapter), Some(display)) = (&setup.adapter, &setup.display) else {
        return out;
    };
    let _ = write!(
        out,
        "Staged on a Vulkan adapter that is not the CUDA GPU (a plain wgpu device): {adapter}; \
         `{display}` (auto, 1920x1080). Each row ends with the same wgpu use (1-texel copy + \
         wait) on that device.\n\n\
         | size | staged µs | DtoH µs | write_texture µs | staged / (DtoH + write_texture) | \
         target |\n|---|---:|---:|---:|---:|---|\n"
    );
    for ((w, h), s) in OtherSummary::each(cases) {
        let [staged, dtoh, write, ratio, target] = figures(&s);
        let _ = writeln!(
            out,
            "| {w}x{h} | {staged} | {dtoh} | {write} | {ratio} | {target} |"
        );
    }
    out.push('\n');
    out
}
