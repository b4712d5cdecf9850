//! The registration group: registering and unregistering one GL buffer (a 1080p RGBA8 PBO,
//! 8,294,400 B) and one GL texture (`GL_TEXTURE_2D`, 1920x1080 RGBA8) through the safe API and
//! through plain `cuda-gl-sys` driver calls, the four variants interleaved in the same rounds.
//!
//! Map + unmap, safe against raw, is group 1-2's comparison (`cases::safe_api_overhead`); this
//! group does not measure it again but reports group 1-2's figures beside its own, so that
//! `registration` in `benchmarks.json` holds every safe-vs-raw ratio of a registration's life:
//! `registration.buffer`, `registration.image` and `registration.map_unmap`.

use crate::cases::{self, FULL_HD, FULL_HD_BYTES};
use crate::glres::{self, Buffer, Texture};
use crate::gpu::{Gpu, cu};
use crate::measure::{Case, Plan, Variant, interleaved};
use crate::report::verdict;
use anyhow::{Context as _, Result};
use cuda_gl::sys;
use cuda_gl::{ImageTarget, RegisterFlags, RegisteredBuffer, RegisteredImage};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The group's name in the report.
pub const GROUP: &str = "registration: register + unregister, raw driver calls vs safe API \
                         (1080p PBO, 8,294,400 B; 1920x1080 RGBA8 texture)";
/// The target ratio of register + unregister through the safe API to the raw calls.
pub const REGISTER_TARGET: f64 = 1.05;
/// Rounds per variant are `--iters` / this: 200 at the default 1000 iterations, 40 with
/// `--quick`.
const ITERS_PER_ROUND: usize = 5;
/// The fewest rounds per variant, whatever `--iters` says.
const MIN_ROUNDS: usize = 20;
/// Rounds per variant in one interleaved block (at most the run's block): short blocks, so that
/// the four variants alternate often.
const BLOCK: usize = 10;

const RAW_BUFFER: &str =
    "raw cuda-gl-sys: cuGraphicsGLRegisterBuffer + cuGraphicsUnregisterResource (PBO)";
const SAFE_BUFFER: &str = "safe cuda-gl: RegisteredBuffer::register + drop (PBO)";
const RAW_IMAGE: &str = "raw cuda-gl-sys: cuGraphicsGLRegisterImage (GL_TEXTURE_2D) + \
                         cuGraphicsUnregisterResource (texture)";
const SAFE_IMAGE: &str = "safe cuda-gl: RegisteredImage::register (Texture2D) + drop (texture)";

/// `CU_GRAPHICS_REGISTER_FLAGS_NONE`, as the driver calls take it; the safe variants register
/// with the same `RegisterFlags::NONE`.
const REGISTER_NONE: u32 = sys::CUgraphicsRegisterFlags::CU_GRAPHICS_REGISTER_FLAGS_NONE.0;

/// The group's entry in the report's list of cases.
pub const LEGEND: &str = "\
- **registration**: register + unregister of the 1080p RGBA8 PBO (8,294,400 B) and of a \
  1920x1080 RGBA8 `GL_TEXTURE_2D` texture (immutable storage), with no flags: plain \
  `cuGraphicsGLRegisterBuffer` / `cuGraphicsGLRegisterImage` + `cuGraphicsUnregisterResource` \
  vs `RegisteredBuffer::register` / `RegisteredImage::register` + drop, the four interleaved in \
  blocks of 10 rounds (`--iters` / 5 rounds each, 200 by default). Target ratio <= 1.05. \
  Beside them, map + unmap is group 1-2's ratio (its rounds also get the pointer, memset the \
  buffer and synchronize the stream), target <= 1.02.\n";

/// The GL objects the group registers; they are deleted when it returns, after every
/// registration of them is gone.
struct Rig {
    pbo: Buffer,
    texture: Texture,
}

/// Unregisters `res` with a plain driver call.
///
/// # Safety
/// 1. `res` is a live registration, not mapped, that nothing else will use or unregister.
unsafe fn raw_unregister(driver: &sys::Driver, res: sys::CUgraphicsResource) -> Result<()> {
    // SAFETY: live, unmapped and unregistered only here (1).
    cu("cuGraphicsUnregisterResource", unsafe {
        driver.cuGraphicsUnregisterResource(res)
    })
}

/// One raw round for a buffer: `cuGraphicsGLRegisterBuffer`, then `cuGraphicsUnregisterResource`.
fn raw_buffer_round(driver: &sys::Driver, buffer: u32) -> Result<()> {
    let mut res: sys::CUgraphicsResource = std::ptr::null_mut();
    // SAFETY: `buffer` is a live GL buffer with storage, of the GL context current on this thread
    // (the bench's only one), on the GPU of the CUDA context current on it (bound before the
    // group); no other registration of it is alive (every round unregisters before it returns);
    // `res` is a valid out-pointer.
    cu("cuGraphicsGLRegisterBuffer", unsafe {
        driver.cuGraphicsGLRegisterBuffer(&mut res, buffer, REGISTER_NONE)
    })?;
    // SAFETY: registered just above, never mapped, and handed to nothing else.
    unsafe { raw_unregister(driver, res) }
}

/// One raw round for a texture: `cuGraphicsGLRegisterImage` (`GL_TEXTURE_2D`), then
/// `cuGraphicsUnregisterResource`.
fn raw_image_round(driver: &sys::Driver, texture: u32) -> Result<()> {
    let mut res: sys::CUgraphicsResource = std::ptr::null_mut();
    // SAFETY: `texture` is a live GL_TEXTURE_2D texture with RGBA8 storage, of the GL context
    // current on this thread, on the GPU of the CUDA context current on it (bound before the
    // group); no other registration of it is alive (every round unregisters before it returns);
    // `res` is a valid out-pointer.
    cu("cuGraphicsGLRegisterImage", unsafe {
        driver.cuGraphicsGLRegisterImage(&mut res, texture, gl::TEXTURE_2D, REGISTER_NONE)
    })?;
    // SAFETY: registered just above, never mapped, and handed to nothing else.
    unsafe { raw_unregister(driver, res) }
}

/// The rounds of the group: a fifth of `plan`'s iterations (at least [`MIN_ROUNDS`]), with its
/// warm-up capped as for other expensive cases, in blocks of at most [`BLOCK`].
fn rounds(plan: &Plan) -> Plan {
    let mut rounds = plan.with_iters((plan.iters / ITERS_PER_ROUND).max(MIN_ROUNDS));
    rounds.block = plan.block.clamp(1, BLOCK);
    rounds
}

/// The group: register + unregister of a 1080p PBO and of a 1080p RGBA8 texture, through plain
/// driver calls and through the safe API, interleaved; each safe row's ratio is to its raw row.
pub fn registration(gpu: &Gpu, plan: &Plan) -> Result<Vec<Case>> {
    let (w, h) = FULL_HD;
    let mut rig = Rig {
        pbo: Buffer::new(FULL_HD_BYTES, "the 1080p PBO")?,
        texture: Texture::new(w, h, "the 1080p RGBA8 texture")?,
    };
    glres::check("setting up the registration group")?;
    let driver = sys::driver()?;
    // The raw rounds need the CUDA context current; the safe API binds it itself.
    gpu.ctx
        .bind()
        .context("binding the CUDA context for the raw registration calls")?;
    // Drops report their failures through the context: set aside those of earlier groups (each
    // was logged when it happened), so that the check after the rounds sees this group's alone.
    let earlier = gpu.ctx.take_drop_errors();
    if !earlier.is_empty() {
        eprintln!(
            "interop: {} drop failure(s) before the registration group, first: {}",
            earlier.len(),
            earlier
                .first()
                .map_or_else(String::new, ToString::to_string)
        );
    }
    let ctx = &gpu.ctx;
    let mut variants = [
        Variant::new(RAW_BUFFER, |rig: &mut Rig| {
            raw_buffer_round(driver, rig.pbo.name())
        }),
        Variant::new(SAFE_BUFFER, |rig: &mut Rig| {
            let reg = RegisteredBuffer::register(ctx, rig.pbo.name(), RegisterFlags::NONE)?;
            drop(reg);
            Ok(())
        }),
        Variant::new(RAW_IMAGE, |rig: &mut Rig| {
            raw_image_round(driver, rig.texture.name())
        }),
        Variant::new(SAFE_IMAGE, |rig: &mut Rig| {
            let reg = RegisteredImage::register(
                ctx,
                rig.texture.name(),
                ImageTarget::Texture2D,
                RegisterFlags::NONE,
            )?;
            drop(reg);
            Ok(())
        }),
    ];
    let mut cases = interleaved(&rounds(plan), GROUP, &mut rig, &mut variants)?;
    // An unregister that failed in a safe round's drop was recorded, not returned.
    gpu.ctx
        .check_drop_errors()
        .context("registration: unregistering in a safe round's drop")?;
    glres::check("registration")?;
    if let [raw_buffer, safe_buffer, raw_image, safe_image] = cases.as_mut_slice() {
        safe_buffer.relative_to(raw_buffer, Some(REGISTER_TARGET));
        safe_image.relative_to(raw_image, Some(REGISTER_TARGET));
    }
    drop(rig);
    Ok(cases)
}

/// `registration.<what>` of `benchmarks.json` (`buffer`, `image`, `map_unmap`): one safe-vs-raw
/// pair of rows.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The safe API's median, µs per round.
    pub safe_us: f64,
    /// The raw driver calls' median, µs per round.
    pub raw_us: f64,
    /// `safe_us / raw_us`.
    pub ratio: f64,
    /// The target the ratio should meet (at most).
    pub target_max: f64,
    /// Whether `ratio <= target_max`.
    pub target_met: bool,
    /// The group that measured the pair.
    pub group: String,
    /// The safe row's name.
    pub safe_case: String,
    /// The raw row's name.
    pub raw_case: String,
}

/// The pairs, as (key of `benchmarks.json`, what the summary table calls it, group, safe row,
/// target).
const PAIRS: [(&str, &str, &str, &str, f64); 3] = [
    (
        "buffer",
        "register + unregister, 1080p PBO",
        GROUP,
        SAFE_BUFFER,
        REGISTER_TARGET,
    ),
    (
        "image",
        "register + unregister, 1920x1080 RGBA8 texture",
        GROUP,
        SAFE_IMAGE,
        REGISTER_TARGET,
    ),
    (
        "map_unmap",
        "map + unmap, 1080p PBO (group 1-2: + pointer + memset + sync)",
        cases::SAFE_API_GROUP,
        cases::SAFE_MAP_UNMAP,
        cases::SAFE_API_TARGET,
    ),
];

/// The pair of `group` whose safe row is named `safe`: that row holds the ratio, whose base is
/// the raw row.
fn pair(cases: &[Case], group: &str, safe: &str, target: f64) -> Option<Summary> {
    let safe_case = cases.iter().find(|c| c.group == group && c.name == safe)?;
    let ratio = safe_case.ratio.as_ref()?;
    let raw_case = cases
        .iter()
        .find(|c| c.group == group && c.name == ratio.to)?;
    let target_max = ratio.target_max.unwrap_or(target);
    Some(Summary {
        safe_us: safe_case.stats.median_us,
        raw_us: raw_case.stats.median_us,
        ratio: ratio.value,
        target_max,
        target_met: ratio.value <= target_max,
        group: group.to_string(),
        safe_case: safe_case.name.clone(),
        raw_case: raw_case.name.clone(),
    })
}

/// Every pair that `cases` holds, by key.
pub fn summaries(cases: &[Case]) -> BTreeMap<String, Summary> {
    PAIRS
        .iter()
        .filter_map(|&(key, _, group, safe, target)| {
            Some((key.to_string(), pair(cases, group, safe, target)?))
        })
        .collect()
}

/// Prints each pair of `cases` on one line (stderr, like the other groups' progress).
pub fn print_summary(cases: &[Case]) {
    for (key, what, group, safe, target) in PAIRS {
        if let Some(s) = pair(cases, group, safe, target) {
            eprintln!(
                "interop: registration.{key} ({what}): safe {:.1} µs, raw {:.1} µs per round: \
                 {:.3} x raw (target <= {}: {})",
                s.safe_us,
                s.raw_us,
                s.ratio,
                s.target_max,
                verdict(s.target_met)
            );
        }
    }
}

/// The markdown table of the pairs, for the report; empty when the group did not run.
pub fn summary_markdown(cases: &[Case]) -> String {
    let mut out = String::new();
    if pair(cases, GROUP, SAFE_BUFFER, REGISTER_TARGET).is_none()
        && pair(cases, GROUP, SAFE_IMAGE, REGISTER_TARGET).is_none()
    {
        return out;
    }
    out.push_str(
        "### Registration: safe API vs raw driver calls\n\n\
         | key | what | safe µs | raw µs | safe / raw | target |\n\
         |---|---|---:|---:|---:|---|\n",
    );
    for (key, what, group, safe, target) in PAIRS {
        let Some(s) = pair(cases, group, safe, target) else {
            continue;
        };
        let _ = writeln!(
            out,
            "| `registration.{key}` | {what} | {:.1} | {:.1} | {:.3} | <= {}: {} |",
            s.safe_us,
            s.raw_us,
            s.ratio,
            s.target_max,
            verdict(s.target_met)
        );
    }
    out.push('\n');
    out
}
