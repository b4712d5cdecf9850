//! The wgpu present group's transfer summary, for reading: the present's transfer alone at one
//! size, wgpu's `copy_texture_to_texture` and cuda-gl's shader blits (compute pass, render pass)
//! from a plain texture and from the shared image, each blit against the copy of the same
//! source.

use super::{Role, row_name};
use crate::measure::{Case, Ratio};
use crate::roles::median;
use serde::Serialize;
use std::fmt::Write as _;

/// The present's transfer at one size: wgpu's copy and cuda-gl's shader blits, from a plain
/// texture and from the shared image, each submitted + the wgpu use (medians, µs), and each
/// blit's ratio to the copy of the same source.
#[derive(Debug, Clone, Serialize)]
pub struct Transfer {
    /// `copy_texture_to_texture` between plain textures.
    pub copy_us: f64,
    /// The compute blit between plain textures.
    pub compute_blit_us: f64,
    /// The render blit between plain textures.
    pub render_blit_us: f64,
    /// `copy_texture_to_texture` from the shared image.
    pub copy_from_shared_us: f64,
    /// The compute blit from the shared image.
    pub compute_blit_from_shared_us: f64,
    /// The render blit from the shared image.
    pub render_blit_from_shared_us: f64,
    /// `compute_blit_us / copy_us`.
    pub compute_blit_ratio: f64,
    /// `render_blit_us / copy_us`.
    pub render_blit_ratio: f64,
    /// `compute_blit_from_shared_us / copy_from_shared_us`.
    pub compute_blit_from_shared_ratio: f64,
    /// `render_blit_from_shared_us / copy_from_shared_us`.
    pub render_blit_from_shared_ratio: f64,
}

impl Transfer {
    /// The transfer rows of `size`, when every one was measured.
    pub fn of(cases: &[Case], size: (u32, u32)) -> Option<Transfer> {
        let m = |role| median(cases, role, size);
        let (copy_us, compute_blit_us, render_blit_us) = (
            m(Role::CopyAlone)?,
            m(Role::ComputeBlitAlone)?,
            m(Role::RenderBlitAlone)?,
        );
        let (copy_from_shared_us, compute_blit_from_shared_us, render_blit_from_shared_us) = (
            m(Role::CopyFromShared)?,
            m(Role::ComputeBlitFromShared)?,
            m(Role::RenderBlitFromShared)?,
        );
        Some(Transfer {
            copy_us,
            compute_blit_us,
            render_blit_us,
            copy_from_shared_us,
            compute_blit_from_shared_us,
            render_blit_from_shared_us,
            compute_blit_ratio: compute_blit_us / copy_us,
            render_blit_ratio: render_blit_us / copy_us,
            compute_blit_from_shared_ratio: compute_blit_from_shared_us / copy_from_shared_us,
            render_blit_from_shared_ratio: render_blit_from_shared_us / copy_from_shared_us,
        })
    }

    /// The ratios of the blit rows at `size`, by role: each to the copy of the same source.
    pub fn ratios(&self, cases: &[Case], size: (u32, u32)) -> Vec<(Role, Ratio)> {
        let copy = row_name(cases, Role::CopyAlone, size);
        let copy_shared = row_name(cases, Role::CopyFromShared, size);
        let to = |to: &String, value| Ratio {
            to: to.clone(),
            value,
            target_max: None,
        };
        vec![
            (Role::ComputeBlitAlone, to(&copy, self.compute_blit_ratio)),
            (Role::RenderBlitAlone, to(&copy, self.render_blit_ratio)),
            (
                Role::ComputeBlitFromShared,
                to(&copy_shared, self.compute_blit_from_shared_ratio),
            ),
            (
                Role::RenderBlitFromShared,
                to(&copy_shared, self.render_blit_from_shared_ratio),
            ),
        ]
    }

    /// The progress line of one size.
    pub fn print(&self, label: &str) {
        eprintln!(
            "interop: {label} transfer: plain: copy {:.1} µs, compute blit {:.1} \
         ({:.3} x), render blit {:.1} ({:.3} x); from the shared image: copy {:.1} µs, \
         compute blit {:.1} ({:.3} x), render blit {:.1} ({:.3} x)",
            self.copy_us,
            self.compute_blit_us,
            self.compute_blit_ratio,
            self.render_blit_us,
            self.render_blit_ratio,
            self.copy_from_shared_us,
            self.compute_blit_from_shared_us,
            self.compute_blit_from_shared_ratio,
            self.render_blit_from_shared_us,
            self.render_blit_from_shared_ratio
        );
    }
}

/// The markdown table of the sizes given, `(label, figures)` each.
pub fn markdown(sizes: &[(String, &Transfer)]) -> String {
    let mut out = String::from(
        "The present's transfer (each submitted + the wgpu use of its destination; blit / copy \
         of the same source):\n\n\
         | size | source | copy µs | compute blit µs | compute / copy | render blit µs | \
         render / copy |\n|---|---|---:|---:|---:|---:|---:|\n",
    );
    for (label, t) in sizes {
        for (source, copy, compute, compute_ratio, render, render_ratio) in [
            (
                "plain texture",
                t.copy_us,
                t.compute_blit_us,
                t.compute_blit_ratio,
                t.render_blit_us,
                t.render_blit_ratio,
            ),
            (
                "shared image",
                t.copy_from_shared_us,
                t.compute_blit_from_shared_us,
                t.compute_blit_from_shared_ratio,
                t.render_blit_from_shared_us,
                t.render_blit_from_shared_ratio,
            ),
        ] {
            let _ = writeln!(
                out,
                "| {label} | {source} | {copy:.1} | {compute:.1} | {compute_ratio:.3} | \
                 {render:.1} | {render_ratio:.3} |"
            );
        }
    }
    out.push('\n');
    out
}
