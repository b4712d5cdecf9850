//! The wgpu present group's GL-route rows summarised (the rows: `gl_rows.rs`, feature
//! `wgpu-gl`): at each size, the GL-route interop frame and, for reading, a staged frame on the
//! same device of wgpu's GL backend, each against that device's own handoff floor (the same
//! kernel into plain device memory + stream sync, then the same wgpu use), measured in the same
//! interleaved rounds. The interop frame's target is [`GL_TARGET`] (issue 43: the GL mode at
//! most 1.05x its floor); the staged frame is for reading.

use super::{Found, Role, ratio_text, row_name, us_text};
use crate::measure::{Case, Ratio};
use crate::roles::{SizeSummary, median};
use serde::Serialize;
use std::fmt::Write as _;

/// The GL-route interop frame's target: at most this many times its handoff floor.
pub const GL_TARGET: f64 = 1.05;

/// `wgpu_present.gl_sizes.<WxH>` of `benchmarks.json`: the GL rows' medians (µs) and ratios.
#[derive(Debug, Clone, Serialize)]
pub struct GlSummary {
    /// The GL-route interop frame's median.
    pub interop_us: f64,
    /// The GL device's handoff floor's median.
    pub floor_us: f64,
    /// `interop_us / floor_us`.
    pub interop_ratio: f64,
    /// The forced staged frame's median on the same device.
    pub staged_us: f64,
    /// `staged_us / floor_us`.
    pub staged_ratio: f64,
}

impl SizeSummary<Role> for GlSummary {
    /// The GL summary of `size`, when its three rows were measured.
    fn of(cases: &[Case], size: (u32, u32)) -> Option<GlSummary> {
        let m = |role| median(cases, role, size);
        let (interop_us, floor_us, staged_us) =
            (m(Role::GlInterop)?, m(Role::GlFloor)?, m(Role::GlStaged)?);
        Some(GlSummary {
            interop_us,
            floor_us,
            interop_ratio: interop_us / floor_us,
            staged_us,
            staged_ratio: staged_us / floor_us,
        })
    }

    /// Interop and staged to the GL floor.
    fn ratios(&self, cases: &[Case], size: (u32, u32)) -> Vec<(Role, Ratio)> {
        // The summary's rows include the floor's.
        let floor = row_name(cases, Role::GlFloor, size);
        let to_floor = |value, target_max| Ratio {
            to: floor.clone(),
            value,
            target_max,
        };
        vec![
            (
                Role::GlInterop,
                to_floor(self.interop_ratio, Some(GL_TARGET)),
            ),
            (Role::GlStaged, to_floor(self.staged_ratio, None)),
        ]
    }
}

/// Prints the GL rows' summary lines (stderr, like the other groups' progress).
#[cfg_attr(not(feature = "wgpu-gl"), allow(dead_code))]
pub fn print(cases: &[Case]) {
    for ((w, h), s) in GlSummary::each(cases) {
        eprintln!(
            "interop: wgpu_present.gl.{w}x{h}: GL interop {} µs, GL floor {} µs: {} x (target <= \
             {GL_TARGET}: {}); GL staged {} µs: {} x floor",
            us_text(s.interop_us),
            us_text(s.floor_us),
            ratio_text(s.interop_ratio),
            if s.interop_ratio <= GL_TARGET {
                "met"
            } else {
                "MISSED"
            },
            us_text(s.staged_us),
            ratio_text(s.staged_ratio)
        );
    }
}

/// The GL rows' part of the group's markdown section; empty when they were not tried.
pub fn markdown(cases: &[Case], setup: &Found) -> String {
    let mut out = String::new();
    if let Some(why) = &setup.skipped {
        let _ = write!(out, "GL route: skipped (not a failure): {why}.\n\n");
        return out;
    }
    let (Some(adapter), Some(display)) = (&setup.adapter, &setup.display) else {
        return out;
    };
    let _ = write!(
        out,
        "GL route (wgpu's GL backend over the benchmark's GL context, `open_gl_device`): \
         {adapter}; `{display}` (auto, 1920x1080). Each row: its frame, then the same wgpu use \
         as the floor (1-texel copy + wait).\n\n\
         | size | GL interop µs | GL floor µs | interop / floor | GL staged µs | staged / floor \
         |\n|---|---:|---:|---:|---:|---:|\n"
    );
    for ((w, h), s) in GlSummary::each(cases) {
        let _ = writeln!(
            out,
            "| {w}x{h} | {} | {} | {} | {} | {} |",
            us_text(s.interop_us),
            us_text(s.floor_us),
            ratio_text(s.interop_ratio),
            us_text(s.staged_us),
            ratio_text(s.staged_ratio)
        );
    }
    out.push('\n');
    out
}
