//! The video group's frames in flight (GL `VideoPlanes`, interop mode; the rows are described
//! in the group's `LEGEND`): sustained rows at each size, in interleaved rounds of [`ROUND`]
//! frames of their own, as µs per frame. Every row writes the one device buffer of its size:
//! `upload` in interop mode does not wait on the CPU, and each upload's copies are ordered
//! before the next frame's kernel on the same stream, as its contract asks. A row's slots (the
//! floor's untouched textures, or its sets of planes) keep their GL fences in a
//! [`FenceRing`], as the fast path's frames in flight do.

use super::gl_planes::{copy_planes, plane_pair, plane_sinks, planes_on};
use super::{FRAME_DT, Role, frame_buffer, ratio_text, write_frame};
use crate::glres::{self, FenceRing};
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Ratio, Variant, interleaved_rows, per_frame_rounds};
use crate::roles::{SizeSummary, median, row_name, tagged};
use anyhow::{Context as _, Result};
use cuda_gl::DeviceBuffer;
use cuda_gl::display::Mode;
use cuda_gl::video::{VideoFormat, VideoLayout, VideoPlanes};
use gl_kit::Owned;
use serde::Serialize;
use std::fmt::Write as _;

/// Frames per measured round.
pub const ROUND: usize = 20;
/// The target ratio of the planes in flight over 3 sets to the floor in rounds (the issue's
/// planes target).
pub const IN_FLIGHT_TARGET: f64 = super::PLANES_TARGET;

/// The rows of planes in flight: how many sets of planes each rotates over, its role, and the
/// target of its ratio to the floor (3 sets' only).
const SETS: [(usize, Role, Option<f64>); 3] = [
    (1, Role::InFlight1, None),
    (2, Role::InFlight2, None),
    (3, Role::InFlight3, Some(IN_FLIGHT_TARGET)),
];

/// One row's slots: the floor's untouched textures (one slot, no planes), or K sets of planes
/// on textures of their own. The planes unregister before their textures go (field order).
struct Sets {
    planes: Vec<VideoPlanes>,
    textures: Vec<[Owned; 2]>,
    fences: FenceRing,
}

impl Sets {
    /// The floor's slot: an untouched pair of plane textures of `layout`.
    fn floor(layout: &VideoLayout) -> Result<Sets> {
        Ok(Sets {
            planes: Vec::new(),
            textures: vec![plane_pair(layout)?],
            fences: FenceRing::new(1),
        })
    }

    /// `k` sets of planes in interop mode, each on a pair of textures of `layout`.
    fn planes(gpu: &Gpu, layout: &VideoLayout, k: usize) -> Result<Sets> {
        let textures = (0..k)
            .map(|_| plane_pair(layout))
            .collect::<Result<Vec<_>>>()?;
        let planes = textures
            .iter()
            .map(|t| planes_on(gpu, t, layout.size(), Mode::Interop))
            .collect::<Result<Vec<_>>>()?;
        Ok(Sets {
            planes,
            textures,
            fences: FenceRing::new(k),
        })
    }
}

/// The rows' state at one size: the floor's slot and the planes' sets (in [`SETS`]' order),
/// the sinks, the frame's device memory and the animation time.
struct Rounds {
    floor: Sets,
    sets: Vec<Sets>,
    sinks: [Owned; 2],
    nv12: DeviceBuffer<u8>,
    layout: VideoLayout,
    t: f32,
}

impl Rounds {
    /// A round of [`ROUND`] frames through the floor's slot (`which` `None`) or the sets of row
    /// `which` of [`SETS`]: kernel, the slot's last fence, then the floor's stream sync or the
    /// set's upload, GL's use of the slot's textures, its fence; at the end, the wait for every
    /// fence still pending (the last frame's ends last).
    fn round(&mut self, gpu: &Gpu, which: Option<usize>) -> Result<()> {
        let sets = match which {
            None => &mut self.floor,
            Some(i) => self.sets.get_mut(i).context("no sets for this row")?,
        };
        for _ in 0..ROUND {
            self.t += FRAME_DT;
            write_frame(gpu, &self.nv12, self.layout.width(), self.t)?;
            let slot = sets.fences.take()?;
            // The floor waits for the frame where a set of planes uploads it.
            match which {
                None => gpu.stream.synchronize()?,
                Some(_) => sets
                    .planes
                    .get_mut(slot)
                    .context("no planes for this slot")?
                    .upload(&self.nv12, self.layout, &gpu.stream)?,
            }
            let textures = sets
                .textures
                .get(slot)
                .context("no textures for this slot")?;
            copy_planes(textures, &self.sinks);
            sets.fences.fence(slot)?;
        }
        sets.fences.drain()
    }
}

/// The sustained rows at `size`, interleaved round by round, as µs per frame: the floor in
/// rounds, then the planes in flight over 1, 2 and 3 sets, each with its ratio to the floor
/// (the 3 sets' against [`IN_FLIGHT_TARGET`]).
pub(super) fn rows(gpu: &Gpu, plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (w, h) = size;
    let group = format!(
        "video {w}x{h}: VideoPlanes frames in flight (µs per frame = round of {ROUND} frames \
         incl. the last wait / {ROUND}; median over rounds)"
    );
    let layout = VideoLayout::packed(size, VideoFormat::Nv12)?;
    let mut state = Rounds {
        floor: Sets::floor(&layout)?,
        sets: SETS
            .iter()
            .map(|&(k, _, _)| Sets::planes(gpu, &layout, k))
            .collect::<Result<Vec<_>>>()?,
        sinks: plane_sinks()?,
        nv12: frame_buffer(gpu, &layout)?,
        layout,
        t: 0.0,
    };
    glres::check(&format!("setting up {group}"))?;
    let mut rows: Vec<(Role, Variant<'_, Rounds>)> = vec![(
        Role::RoundFloor,
        Variant::new(
            format!(
                "handoff floor, NV12 bytes {w}x{h}, in rounds: kernel + sync + GL use of two \
                 textures + fence, µs per frame"
            ),
            |s: &mut Rounds| s.round(gpu, None),
        ),
    )];
    for (i, &(k, role, _)) in SETS.iter().enumerate() {
        let sets = if k == 1 { "set" } else { "sets" };
        rows.push((
            role,
            Variant::new(
                format!(
                    "VideoPlanes NV12 {w}x{h} in flight, {k} {sets}: kernel + upload + GL use \
                     of the planes + fence, µs per frame"
                ),
                move |s: &mut Rounds| s.round(gpu, Some(i)),
            ),
        ));
    }
    let measured = interleaved_rows(&plan.rounds(ROUND), &group, &mut state, rows)?;
    glres::finish();
    gpu.stream.synchronize()?;
    glres::check(&group)?;
    drop(state);
    let mut cases = tagged(measured, size);
    per_frame_rounds(&mut cases, ROUND);
    InFlight::set_ratios(&mut cases, size);
    Ok(cases)
}

/// One row of planes in flight in `video.gl.<WxH>.in_flight`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
pub struct SetsSummary {
    /// How many sets of planes the row rotates over.
    pub sets: usize,
    /// Its µs per frame.
    pub us: f64,
    /// `us / floor_us`.
    pub ratio: f64,
    /// The target of the ratio (at most), where there is one.
    pub target_max: Option<f64>,
}

/// `video.gl.<WxH>.in_flight` of `benchmarks.json`: µs per frame over rounds of `round_frames`
/// frames, each against the floor in rounds.
#[derive(Debug, Clone, Serialize)]
pub struct InFlight {
    /// Frames per round.
    pub round_frames: usize,
    /// The handoff floor in rounds.
    pub floor_us: f64,
    /// The planes in flight over 1, 2 and 3 sets.
    pub rows: Vec<SetsSummary>,
}

impl SizeSummary<Role> for InFlight {
    /// The in-flight figures at `size`, when every in-flight row was measured.
    fn of(cases: &[Case], size: (u32, u32)) -> Option<InFlight> {
        let floor_us = median(cases, Role::RoundFloor, size)?;
        let rows = SETS
            .iter()
            .map(|&(sets, role, target_max)| {
                let us = median(cases, role, size)?;
                Some(SetsSummary {
                    sets,
                    us,
                    ratio: us / floor_us,
                    target_max,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(InFlight {
            round_frames: ROUND,
            floor_us,
            rows,
        })
    }

    /// Each set's row against the floor in rounds.
    fn ratios(&self, cases: &[Case], size: (u32, u32)) -> Vec<(Role, Ratio)> {
        let floor = row_name(cases, Role::RoundFloor, size);
        SETS.iter()
            .zip(&self.rows)
            .map(|(&(_, role, _), row)| {
                let ratio = Ratio {
                    to: floor.clone(),
                    value: row.ratio,
                    target_max: row.target_max,
                };
                (role, ratio)
            })
            .collect()
    }
}

/// Each row as `N sets X µs (ratio)`, joined by `; `.
fn rows_text(s: &InFlight) -> String {
    s.rows
        .iter()
        .map(|r| {
            let sets = if r.sets == 1 { "set" } else { "sets" };
            format!(
                "{} {sets} {:.1} µs ({})",
                r.sets,
                r.us,
                ratio_text(r.ratio, r.target_max)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The progress line of one size's in-flight figures.
pub fn print(label: &str, s: &InFlight) {
    eprintln!(
        "interop: {label} planes in flight (µs per frame, rounds of {}): floor {:.1} µs; {}",
        s.round_frames,
        s.floor_us,
        rows_text(s)
    );
}

/// The in-flight table of the group's markdown section: one line per key that has figures.
pub fn markdown<'a>(sizes: impl IntoIterator<Item = (String, &'a InFlight)>) -> String {
    let mut out = String::new();
    for (key, s) in sizes {
        if out.is_empty() {
            let _ = write!(
                out,
                "\nVideoPlanes frames in flight (interop), µs per frame over rounds of {} \
                 frames, each against the floor in rounds:\n\n\
                 | key | floor in rounds µs | 1 set µs | ratio | 2 sets µs | ratio | 3 sets µs \
                 | ratio |\n|---|---:|---:|---|---:|---|---:|---|\n",
                s.round_frames
            );
        }
        let _ = write!(out, "| `{key}` | {:.1} |", s.floor_us);
        for r in &s.rows {
            let _ = write!(
                out,
                " {:.1} | {} |",
                r.us,
                ratio_text(r.ratio, r.target_max)
            );
        }
        out.push('\n');
    }
    out
}
