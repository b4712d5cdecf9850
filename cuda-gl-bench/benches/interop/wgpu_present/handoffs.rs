//! The wgpu present group's hand-off summaries: the `SharedTexture` raw hand-off against the
//! plain-call route through wgpu (target [`PLAIN_TARGET`]) and, for reading, against the
//! plain route submitted raw; the plain routes against the floor and each other, the
//! sustained rows (frames in flight, K frames per hand-off) against the floor in rounds, and
//! gyroflow's way beside the floor and the interop frame (for reading).

use super::{Role, ratio_text, row_name, us_text};
use crate::measure::{Case, Ratio};
use crate::report::verdict;
use crate::roles::median;
use serde::Serialize;
use std::fmt::Write as _;

/// The target ratio of the `SharedTexture` raw hand-off to the plain-call route through wgpu
/// (issue 43).
pub const PLAIN_TARGET: f64 = 1.05;
/// Frames per measured round of the sustained rows (a multiple of the K row's 4).
pub const ROUND: usize = 20;

/// `wgpu_present.sizes.<WxH>.plain`: the plain-call routes and the raw hand-off against them
/// (medians, µs).
#[derive(Debug, Clone, Serialize)]
pub struct Plain {
    /// The plain route's median (acquire only, one raw `vkQueueSubmit`).
    pub plain_us: f64,
    /// `plain_us / floor_us` (no target).
    pub plain_to_floor: f64,
    /// The plain route through wgpu's median (the same work, one `wgpu::Queue::submit`).
    pub plain_wgpu_us: f64,
    /// `plain_wgpu_us / plain_us`: what wgpu's submit and wait cost over the raw ones (no
    /// target).
    pub wgpu_to_plain: f64,
    /// `shared_raw_us / plain_wgpu_us`.
    pub shared_raw_to_plain_wgpu: f64,
    /// The target `shared_raw_to_plain_wgpu` should meet (at most).
    pub target_max: f64,
    /// Whether `shared_raw_to_plain_wgpu <= target_max`.
    pub target_met: bool,
    /// `shared_raw_us / plain_us` (for reading: wgpu's cost counted against cuda-gl).
    pub shared_raw_to_plain: f64,
    /// The plain route with the release to `VK_QUEUE_FAMILY_EXTERNAL` too.
    pub plain_release_us: f64,
    /// `plain_release_us / plain_us` (no target).
    pub release_to_plain: f64,
    /// The raw hand-off released ahead after its use (`Role::SharedRawAhead`).
    pub shared_ahead_us: f64,
    /// `shared_ahead_us / plain_wgpu_us` (against the same target, for reading).
    pub shared_ahead_to_plain_wgpu: f64,
    /// The raw hand-off with its use in the hand-back's submit (`Role::SharedRawOneSubmit`).
    pub shared_one_submit_us: f64,
    /// `shared_one_submit_us / plain_wgpu_us` (against the same target, for reading).
    pub shared_one_submit_to_plain_wgpu: f64,
}

/// `wgpu_present.sizes.<WxH>.sustained`: µs per frame over rounds of `round_frames` frames,
/// each against the floor measured the same way (no target).
#[derive(Debug, Clone, Serialize)]
pub struct Sustained {
    /// Frames per round.
    pub round_frames: usize,
    /// The handoff floor, in rounds.
    pub floor_us: f64,
    /// The raw hand-off of one texture, in rounds.
    pub one_texture_us: f64,
    /// `one_texture_us / floor_us`.
    pub one_texture_ratio: f64,
    /// Two textures round-robin, each released ahead after its use.
    pub two_textures_us: f64,
    /// `two_textures_us / floor_us`.
    pub two_textures_ratio: f64,
    /// Two textures round-robin, each released at its write (no release ahead).
    pub two_at_write_us: f64,
    /// `two_at_write_us / floor_us`.
    pub two_at_write_ratio: f64,
    /// Three textures round-robin.
    pub three_textures_us: f64,
    /// `three_textures_us / floor_us`.
    pub three_textures_ratio: f64,
    /// Four frames (kernels) per hand-off.
    pub four_per_handoff_us: f64,
    /// `four_per_handoff_us / floor_us`.
    pub four_per_handoff_ratio: f64,
}

/// `wgpu_present.sizes.<WxH>.gyroflow`: gyroflow's way (`gyroflow.rs`), for reading (no
/// target), beside the floor and the interop frame; absent where the row was not measured.
#[derive(Debug, Clone, Serialize)]
pub struct Gyroflow {
    /// Its median, µs.
    pub gyroflow_us: f64,
    /// `gyroflow_us / floor_us`.
    pub gyroflow_to_floor: f64,
    /// `interop_us / gyroflow_us`: the interop frame against gyroflow's way.
    pub interop_to_gyroflow: f64,
}

impl Gyroflow {
    /// gyroflow's figures at `size` against the floor's and the interop frame's medians, when
    /// its row was measured.
    pub fn of(cases: &[Case], size: (u32, u32), floor_us: f64, interop_us: f64) -> Option<Self> {
        let gyroflow_us = median(cases, Role::Gyroflow, size)?;
        Some(Gyroflow {
            gyroflow_us,
            gyroflow_to_floor: gyroflow_us / floor_us,
            interop_to_gyroflow: interop_us / gyroflow_us,
        })
    }

    /// The progress line of one size.
    pub fn print(&self, label: &str) {
        eprintln!(
            "interop: {label} gyroflow's way (for reading): {} µs, {} x floor; interop {} x \
             gyroflow's way",
            us_text(self.gyroflow_us),
            ratio_text(self.gyroflow_to_floor),
            ratio_text(self.interop_to_gyroflow),
        );
    }
}

/// The markdown table of gyroflow's way at the sizes given, `(label, figures)` each (`None`:
/// not measured there).
pub fn gyroflow_markdown(sizes: &[(String, Option<&Gyroflow>)]) -> String {
    let mut out = String::from(
        "gyroflow's way, for reading (ash and driver calls on the same device: a LINEAR image \
         whose memory CUDA maps as a buffer, the floor's kernel into it, `cuStreamSynchronize`, \
         the wgpu use of the image; no semaphore, no acquire):\n\n\
         | size | gyroflow µs | gyroflow / floor | interop / gyroflow |\n|---|---:|---:|---:|\n",
    );
    for (label, g) in sizes {
        let _ = match g {
            Some(g) => writeln!(
                out,
                "| {label} | {} | {} | {} |",
                us_text(g.gyroflow_us),
                ratio_text(g.gyroflow_to_floor),
                ratio_text(g.interop_to_gyroflow),
            ),
            None => writeln!(
                out,
                "| {label} | not measured (the run's log says why) | | |"
            ),
        };
    }
    out.push('\n');
    out
}

impl Plain {
    /// The plain figures at `size` against the floor's and the raw hand-off's medians, when
    /// every plain row was measured.
    pub fn of(
        cases: &[Case],
        size: (u32, u32),
        floor_us: f64,
        shared_raw_us: f64,
    ) -> Option<Plain> {
        let plain_us = median(cases, Role::PlainRoute, size)?;
        let plain_wgpu_us = median(cases, Role::PlainWgpu, size)?;
        let plain_release_us = median(cases, Role::PlainRelease, size)?;
        let shared_ahead_us = median(cases, Role::SharedRawAhead, size)?;
        let shared_one_submit_us = median(cases, Role::SharedRawOneSubmit, size)?;
        let shared_raw_to_plain_wgpu = shared_raw_us / plain_wgpu_us;
        Some(Plain {
            plain_us,
            plain_to_floor: plain_us / floor_us,
            plain_wgpu_us,
            wgpu_to_plain: plain_wgpu_us / plain_us,
            shared_raw_to_plain_wgpu,
            target_max: PLAIN_TARGET,
            target_met: shared_raw_to_plain_wgpu <= PLAIN_TARGET,
            shared_raw_to_plain: shared_raw_us / plain_us,
            plain_release_us,
            release_to_plain: plain_release_us / plain_us,
            shared_ahead_us,
            shared_ahead_to_plain_wgpu: shared_ahead_us / plain_wgpu_us,
            shared_one_submit_us,
            shared_one_submit_to_plain_wgpu: shared_one_submit_us / plain_wgpu_us,
        })
    }
}

impl Sustained {
    /// The sustained figures at `size`, when every sustained row was measured.
    pub fn of(cases: &[Case], size: (u32, u32)) -> Option<Sustained> {
        let m = |role| median(cases, role, size);
        let floor_us = m(Role::RoundFloor)?;
        let (one_texture_us, two_textures_us, three_textures_us, four_per_handoff_us) = (
            m(Role::RoundShared)?,
            m(Role::Ring2)?,
            m(Role::Ring3)?,
            m(Role::PerHandoff4)?,
        );
        let two_at_write_us = m(Role::Ring2AtWrite)?;
        Some(Sustained {
            round_frames: ROUND,
            floor_us,
            one_texture_us,
            one_texture_ratio: one_texture_us / floor_us,
            two_textures_us,
            two_textures_ratio: two_textures_us / floor_us,
            two_at_write_us,
            two_at_write_ratio: two_at_write_us / floor_us,
            three_textures_us,
            three_textures_ratio: three_textures_us / floor_us,
            four_per_handoff_us,
            four_per_handoff_ratio: four_per_handoff_us / floor_us,
        })
    }

    /// `(role, what, µs, ratio)` of each row against the floor: what the progress line, the
    /// markdown table and the rows' ratios ([`ratios`]) all list, in this order.
    fn rows(&self) -> [(Role, &'static str, f64, f64); 5] {
        [
            (
                Role::RoundShared,
                "1 texture",
                self.one_texture_us,
                self.one_texture_ratio,
            ),
            (
                Role::Ring2,
                "2 textures",
                self.two_textures_us,
                self.two_textures_ratio,
            ),
            (
                Role::Ring2AtWrite,
                "2 textures, released at the write",
                self.two_at_write_us,
                self.two_at_write_ratio,
            ),
            (
                Role::Ring3,
                "3 textures",
                self.three_textures_us,
                self.three_textures_ratio,
            ),
            (
                Role::PerHandoff4,
                "4 frames per hand-off",
                self.four_per_handoff_us,
                self.four_per_handoff_ratio,
            ),
        ]
    }
}

/// The ratios of the rows this file summarizes at `size`, by role: the raw hand-off's to the
/// plain route through wgpu (with its target), the plain routes', the sustained rows' to the
/// floor in rounds, and gyroflow's way's to the floor where it was measured.
pub fn ratios(
    cases: &[Case],
    size: (u32, u32),
    (plain, sustained, gyroflow): (&Plain, &Sustained, Option<&Gyroflow>),
) -> Vec<(Role, Ratio)> {
    let name = |role| row_name(cases, role, size);
    let (plain_name, wgpu_name) = (name(Role::PlainRoute), name(Role::PlainWgpu));
    let (floor, round_floor) = (name(Role::Floor), name(Role::RoundFloor));
    let to = |to: &String, value, target_max| Ratio {
        to: to.clone(),
        value,
        target_max,
    };
    let mut ratios = vec![
        (
            Role::SharedRaw,
            to(
                &wgpu_name,
                plain.shared_raw_to_plain_wgpu,
                Some(PLAIN_TARGET),
            ),
        ),
        (
            Role::SharedRawAhead,
            to(&wgpu_name, plain.shared_ahead_to_plain_wgpu, None),
        ),
        (
            Role::SharedRawOneSubmit,
            to(&wgpu_name, plain.shared_one_submit_to_plain_wgpu, None),
        ),
        (Role::PlainRoute, to(&floor, plain.plain_to_floor, None)),
        (Role::PlainWgpu, to(&plain_name, plain.wgpu_to_plain, None)),
        (
            Role::PlainRelease,
            to(&plain_name, plain.release_to_plain, None),
        ),
    ];
    ratios.extend(
        sustained
            .rows()
            .map(|(role, _, _, ratio)| (role, to(&round_floor, ratio, None))),
    );
    if let Some(g) = gyroflow {
        ratios.push((Role::Gyroflow, to(&floor, g.gyroflow_to_floor, None)));
    }
    ratios
}

/// The two progress lines of one size: the plain route, and the sustained rows.
pub fn print(label: &str, shared_raw_us: f64, (plain, sustained): (&Plain, &Sustained)) {
    eprintln!(
        "interop: {label} plain calls: {} µs, {} x floor; through wgpu {} µs: {} x plain calls; \
         shared raw {} µs: {} x through wgpu (target <= {PLAIN_TARGET}: {}), {} x plain calls; \
         released ahead {} µs: {} x through wgpu; use in the hand-back's submit {} µs: {} x \
         through wgpu; plain calls + release {} µs: {} x plain calls",
        us_text(plain.plain_us),
        ratio_text(plain.plain_to_floor),
        us_text(plain.plain_wgpu_us),
        ratio_text(plain.wgpu_to_plain),
        us_text(shared_raw_us),
        ratio_text(plain.shared_raw_to_plain_wgpu),
        verdict(plain.target_met),
        ratio_text(plain.shared_raw_to_plain),
        us_text(plain.shared_ahead_us),
        ratio_text(plain.shared_ahead_to_plain_wgpu),
        us_text(plain.shared_one_submit_us),
        ratio_text(plain.shared_one_submit_to_plain_wgpu),
        us_text(plain.plain_release_us),
        ratio_text(plain.release_to_plain),
    );
    let mut line = format!(
        "interop: {label} sustained (µs per frame, rounds of {}): floor {}",
        sustained.round_frames,
        us_text(sustained.floor_us)
    );
    for (_, what, us, ratio) in sustained.rows() {
        let _ = write!(
            line,
            "; SharedTexture {what} {} ({} x floor)",
            us_text(us),
            ratio_text(ratio)
        );
    }
    eprintln!("{line}");
}

/// The markdown tables of the sizes given, `(label, shared raw µs, figures)` each.
pub fn markdown(sizes: &[(String, f64, &Plain, &Sustained)]) -> String {
    let mut out = String::from(
        "The `SharedTexture` raw hand-off against the same route made of plain calls through \
         wgpu (\"wgpu\": CUDA wait, kernel, signal; the acquire from \
         `VK_QUEUE_FAMILY_EXTERNAL` and the 1-texel copy recorded raw into a wgpu command \
         buffer, the semaphore operations added to wgpu-hal's queue, one `Queue::submit`, \
         `Device::poll`) and, for reading, submitted raw (\"plain\": one `vkQueueSubmit`, \
         `vkWaitSemaphores`); image in `GENERAL`:\n\n\
         | size | plain µs | plain / floor | wgpu µs | wgpu / plain | shared raw µs | shared \
         raw / wgpu | target | shared raw / plain | released ahead µs | ahead / wgpu | one \
         submit µs | one submit / wgpu | plain + release µs | + release / plain |\n\
         |---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (label, shared_raw_us, p, _) in sizes {
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {} | {} | {} | <= {PLAIN_TARGET}: {} | {} | {} | {} | {} \
             | {} | {} | {} |",
            us_text(p.plain_us),
            ratio_text(p.plain_to_floor),
            us_text(p.plain_wgpu_us),
            ratio_text(p.wgpu_to_plain),
            us_text(*shared_raw_us),
            ratio_text(p.shared_raw_to_plain_wgpu),
            verdict(p.target_met),
            ratio_text(p.shared_raw_to_plain),
            us_text(p.shared_ahead_us),
            ratio_text(p.shared_ahead_to_plain_wgpu),
            us_text(p.shared_one_submit_us),
            ratio_text(p.shared_one_submit_to_plain_wgpu),
            us_text(p.plain_release_us),
            ratio_text(p.release_to_plain),
        );
    }
    // The header names the rows that `Sustained::rows` lists, so the two cannot drift apart.
    let columns: Vec<&str> = sizes
        .first()
        .map(|(_, _, _, s)| s.rows().map(|(_, what, _, _)| what).to_vec())
        .unwrap_or_default();
    let _ = write!(
        out,
        "\nSustained, µs per frame over rounds (each against the floor in rounds):\n\n\
         | size | frames / round | floor | {} |\n|---|---:|---:{}|\n",
        columns.join(" | "),
        "|---:".repeat(columns.len()),
    );
    for (label, _, _, s) in sizes {
        let _ = write!(
            out,
            "| {label} | {} | {}",
            s.round_frames,
            us_text(s.floor_us)
        );
        for (_, _, us, ratio) in s.rows() {
            let _ = write!(out, " | {} ({} x)", us_text(us), ratio_text(ratio));
        }
        out.push_str(" |\n");
    }
    out.push('\n');
    out
}
