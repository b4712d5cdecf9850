//! The video group (`--video-only`; not in the default run): decoded NV12 frames on screen, at
//! 1920x1080 and 3840x2160, each way against its limit measured in the same interleaved rounds
//! (medians). Frames are tightly packed (`VideoLayout::packed`), in plain device memory.
//!
//! - **show_video vs show** (GL `DisplayTarget`, `Mode::Interop`): `show_video` of an NV12
//!   frame (cuda-gl's conversion kernel writes RGBA8 into the mapped texture), then the handoff
//!   floor's GL use of the target's texture (a 1-texel copy + `glFinish`), against `show` of an
//!   RGBA8 frame of the same size on the same target (a copy into the mapped texture) + the same
//!   GL use. No kernel draws either frame: the rows differ by the conversion alone. Target <=
//!   [`SHOW_TARGET`]. Beside them, for reading, `show_video` of a P010 frame.
//! - **VideoPlanes vs the handoff floor**: the plasma kernel writes the NV12 frame's bytes
//!   (`w * h * 3 / 2`, as a `w` x `3h/8` RGBA8 image) into device memory (as a decoder would),
//!   `VideoPlanes::upload` copies the planes into an R8 and an RG8 texture (map, two copies,
//!   unmap), then GL's use of both (a 1-texel copy of each into a 1x1 texture of its format +
//!   `glFinish`). The floor: the same kernel into the same memory + `cuStreamSynchronize` + the
//!   same GL use of two untouched textures of the planes' sizes and formats, no interop call.
//!   Target <= [`PLANES_TARGET`], for the interop and the stream mode (imported memory, no map
//!   or unmap); beside them, for reading, the same planes in staged mode.
//! - **VideoPlanes frames in flight** (`video/in_flight.rs`, in interleaved rounds of their
//!   own, µs per frame): the floor in rounds and the interop planes over 1, 2 and 3 sets.
//! - **wgpu** (feature `wgpu`, NVIDIA's Vulkan driver; last, after every GL group): the same
//!   rows on `WgpuTarget` and `WgpuVideoPlanes` in interop mode on the device from
//!   `open_device`, each ending with the wgpu present group's wgpu use + wait instead of GL's;
//!   beside them, for reading, `WgpuVideoPlanes` in staged mode. Their ratios are reported with
//!   no target. Where no Vulkan adapter takes the hand-off, the wgpu rows say why and are left
//!   out.

use crate::fast::Floor;
use crate::glres;
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Ratio, Variant, interleaved_rows};
use crate::report::verdict;
use crate::roles::{RoleTag, SizeSummary, median, row, sizes, tagged};
use anyhow::{Context as _, Result};
use cuda_gl::DeviceBuffer;
use cuda_gl::display::{DisplayTarget, Format, Layout, Mode};
use cuda_gl::video::{ColorSpace, VideoFormat, VideoLayout, VideoPlanes};
use gl_kit::Owned;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[path = "video/gl_planes.rs"]
mod gl_planes;
#[path = "video/in_flight.rs"]
mod in_flight;

#[cfg(feature = "wgpu")]
#[path = "video/wgpu_rows.rs"]
mod wgpu_rows;

use gl_planes::{copy_planes, plane_pair, plane_sinks, planes_on};
#[cfg(feature = "wgpu")]
pub use wgpu_rows::wgpu_group;

/// The frame sizes of the group.
pub const VIDEO_SIZES: [(u32, u32); 2] = [(1920, 1080), (3840, 2160)];
/// The target ratio of `show_video` (NV12) to `show` (RGBA8) on the GL target.
pub const SHOW_TARGET: f64 = 1.10;
/// The target ratio of a GL `VideoPlanes` frame to its handoff floor.
pub const PLANES_TARGET: f64 = 1.05;
/// Animation time step between frames (seconds).
const FRAME_DT: f32 = 1.0 / 60.0;

/// The group's entry in the report's list of cases.
pub const LEGEND: &str = "\
- **video** (`--video-only`; NV12 frames tightly packed in device memory, 1920x1080 and \
  3840x2160): GL `DisplayTarget::show_video` of an NV12 frame (the conversion kernel into the \
  mapped texture, `Mode::Interop`) + the handoff floor's GL use, against `show` of an RGBA8 \
  frame of the same size on the same target + the same GL use (no kernel draws either), target \
  <= 1.10; `show_video` of a P010 frame beside them for reading. `VideoPlanes` (R8 + RG8 \
  textures): the plasma kernel writes the frame's bytes into device memory, `upload`, GL's use \
  of both textures (a 1-texel copy of each into a 1x1 texture of its format + `glFinish`), \
  against the handoff floor of the same bytes (kernel + `cuStreamSynchronize` + the same GL use \
  of untouched textures), target <= 1.05. Frames in flight, µs per frame over rounds of 20 \
  frames (each round ends with the wait for its last frame's GL fence; median over rounds), \
  interleaved round by round: the floor in rounds (kernel + `cuStreamSynchronize` + the same \
  GL use of the untouched textures + a GL fence, no `glFinish` per frame), and `VideoPlanes` \
  (interop) over 1, 2 and 3 sets of planes used in turn, each on textures of its own (kernel \
  + `upload` + GL use of the set's planes + a GL fence, no `glFinish` or stream sync), each \
  frame waiting (`glClientWaitSync`, at most 10 s) only for the fence of its set's last use \
  before the upload; each against the floor in rounds, the 3 sets' target <= 1.05. With the \
  feature `wgpu` the same show and planes rows on \
  `WgpuTarget` and `WgpuVideoPlanes` (interop; staged for reading) with the wgpu present \
  group's use + wait, ratios without targets.\n";

/// What a row of the group measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
// Without the feature `wgpu` no wgpu row is made (the summaries still read them).
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))]
pub enum Role {
    /// GL: `show` of an RGBA8 frame + GL use (show_video's limit).
    ShowRgba,
    /// GL: `show_video` of an NV12 frame + GL use.
    ShowNv12,
    /// GL: `show_video` of a P010 frame + GL use (for reading).
    ShowP010,
    /// GL: the kernel writes the frame's bytes + stream sync + GL use of untouched planes.
    PlanesFloor,
    /// GL: the kernel writes the frame + `VideoPlanes::upload` + GL use of the planes.
    Planes,
    /// GL: the same in staged mode (for reading).
    PlanesStaged,
    /// GL: the same in stream mode (imported memory, no map or unmap), against the floor.
    PlanesStream,
    /// GL, in rounds: the floor's frames with a fence each, no `glFinish` per frame.
    RoundFloor,
    /// GL, in rounds: the planes' frames in flight over 1, 2 and 3 sets of planes.
    InFlight1,
    /// See [`Role::InFlight1`].
    InFlight2,
    /// See [`Role::InFlight1`].
    InFlight3,
    /// wgpu: `WgpuTarget::show` of an RGBA8 frame + wgpu use.
    WgpuShowRgba,
    /// wgpu: `WgpuTarget::show_video` of an NV12 frame + wgpu use.
    WgpuShowNv12,
    /// wgpu: the kernel + stream sync + wgpu use of untouched plane textures.
    WgpuPlanesFloor,
    /// wgpu: the kernel + `WgpuVideoPlanes::upload` (interop) + wgpu use of the planes.
    WgpuPlanes,
    /// wgpu: the same in staged mode (for reading).
    WgpuPlanesStaged,
}

/// A video row's role and frame size.
pub type VideoTag = RoleTag<Role>;

/// What the group found.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize)]
pub struct Setup {
    /// The `Report` line of the GL target (interop, 1920x1080).
    pub display: String,
    /// The wgpu adapter, when the wgpu rows ran.
    pub wgpu_adapter: Option<String>,
    /// Why the wgpu rows did not run.
    pub wgpu_skipped: Option<String>,
}

/// The rows of one API that the summary sets against each other.
struct Api {
    name: &'static str,
    show: Role,
    rgba: Role,
    planes: Role,
    floor: Role,
    /// For reading: P010 shown, planes staged; GL's planes in stream mode.
    p010: Option<Role>,
    staged: Option<Role>,
    stream: Option<Role>,
    show_target: Option<f64>,
    planes_target: Option<f64>,
    /// Whether the API has the planes' frames in flight.
    in_flight: bool,
}

const APIS: [Api; 2] = [
    Api {
        name: "gl",
        show: Role::ShowNv12,
        rgba: Role::ShowRgba,
        planes: Role::Planes,
        floor: Role::PlanesFloor,
        p010: Some(Role::ShowP010),
        staged: Some(Role::PlanesStaged),
        stream: Some(Role::PlanesStream),
        show_target: Some(SHOW_TARGET),
        planes_target: Some(PLANES_TARGET),
        in_flight: true,
    },
    Api {
        name: "wgpu",
        show: Role::WgpuShowNv12,
        rgba: Role::WgpuShowRgba,
        planes: Role::WgpuPlanes,
        floor: Role::WgpuPlanesFloor,
        p010: None,
        staged: Some(Role::WgpuPlanesStaged),
        stream: None,
        show_target: None,
        planes_target: None,
        in_flight: false,
    },
];

/// `video.<gl|wgpu>.<WxH>` of `benchmarks.json`: medians in µs and their ratios.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// `show_video` of an NV12 frame.
    pub show_video_us: f64,
    /// `show` of an RGBA8 frame of the same size.
    pub show_us: f64,
    /// `show_video_us / show_us`.
    pub show_ratio: f64,
    /// Its target (at most), where there is one.
    pub show_target_max: Option<f64>,
    /// `show_video` of a P010 frame (for reading).
    pub show_p010_us: Option<f64>,
    /// The planes' frame (interop).
    pub planes_us: f64,
    /// The handoff floor of the same bytes.
    pub floor_us: f64,
    /// `planes_us / floor_us`.
    pub planes_ratio: f64,
    /// Its target (at most), where there is one.
    pub planes_target_max: Option<f64>,
    /// The planes' frame in staged mode (for reading).
    pub planes_staged_us: Option<f64>,
    /// The planes' frame in stream mode (GL).
    pub planes_stream_us: Option<f64>,
    /// `planes_stream_us / floor_us`.
    pub planes_stream_ratio: Option<f64>,
    /// The planes' frames in flight against the floor in rounds (GL).
    pub in_flight: Option<in_flight::InFlight>,
}

/// `video` of `benchmarks.json`: what the group found, then the summaries by API and size.
#[derive(Debug, Clone, Serialize)]
pub struct VideoReport {
    /// What the group found.
    #[serde(flatten)]
    pub setup: Setup,
    /// By API (`gl`, `wgpu`), then by size.
    #[serde(flatten)]
    pub apis: BTreeMap<String, BTreeMap<String, Summary>>,
}

/// The summary of `api` at `size`, when its rows were measured.
fn summary(cases: &[Case], api: &Api, size: (u32, u32)) -> Option<Summary> {
    let m = |role| median(cases, role, size);
    let (show_video_us, show_us) = (m(api.show)?, m(api.rgba)?);
    let (planes_us, floor_us) = (m(api.planes)?, m(api.floor)?);
    Some(Summary {
        show_video_us,
        show_us,
        show_ratio: show_video_us / show_us,
        show_target_max: api.show_target,
        show_p010_us: api.p010.and_then(m),
        planes_us,
        floor_us,
        planes_ratio: planes_us / floor_us,
        planes_target_max: api.planes_target,
        planes_staged_us: api.staged.and_then(m),
        planes_stream_us: api.stream.and_then(m),
        planes_stream_ratio: api.stream.and_then(m).map(|us| us / floor_us),
        in_flight: api
            .in_flight
            .then(|| in_flight::InFlight::of(cases, size))
            .flatten(),
    })
}

/// Every summary of `cases`: (API, size, summary).
fn each(cases: &[Case]) -> Vec<(&'static str, (u32, u32), Summary)> {
    let mut out = Vec::new();
    for api in &APIS {
        for size in sizes::<Role>(cases) {
            if let Some(s) = summary(cases, api, size) {
                out.push((api.name, size, s));
            }
        }
    }
    out
}

/// Sets each ratio row's ratio at `size`: show_video to show, the planes (and the staged
/// planes, for reading) to their floor.
fn set_ratios(cases: &mut [Case], size: (u32, u32)) {
    for api in &APIS {
        let Some(s) = summary(cases, api, size) else {
            continue;
        };
        let name = |role| row(cases, role, size).map(|c| c.name.clone());
        let (rgba, floor) = (name(api.rgba), name(api.floor));
        for case in cases.iter_mut() {
            let Some(tag) = case.video.as_ref().filter(|t| (t.width, t.height) == size) else {
                continue;
            };
            let (to, value, target_max) = match tag.role {
                r if r == api.show => (rgba.clone(), s.show_ratio, api.show_target),
                r if r == api.planes => (floor.clone(), s.planes_ratio, api.planes_target),
                r if Some(r) == api.staged => {
                    (floor.clone(), case.stats.median_us / s.floor_us, None)
                }
                r if Some(r) == api.stream => (
                    floor.clone(),
                    case.stats.median_us / s.floor_us,
                    api.planes_target,
                ),
                r if Some(r) == api.p010 => (rgba.clone(), case.stats.median_us / s.show_us, None),
                _ => continue,
            };
            case.ratio = Some(Ratio {
                to: to.unwrap_or_default(),
                value,
                target_max,
            });
        }
    }
}

/// The cases of `rows`, each tagged with its role at `size`, their ratios set.
fn tag(rows: Vec<(Case, Role)>, size: (u32, u32)) -> Vec<Case> {
    let mut cases = tagged(rows, size);
    set_ratios(&mut cases, size);
    cases
}

/// `video` of `benchmarks.json`, for a device whose run measured the group.
pub fn summaries(cases: &[Case], setup: &Setup) -> Option<VideoReport> {
    let mut apis: BTreeMap<String, BTreeMap<String, Summary>> = BTreeMap::new();
    for (api, (w, h), s) in each(cases) {
        apis.entry(api.to_owned())
            .or_default()
            .insert(format!("{w}x{h}"), s);
    }
    (!apis.is_empty()).then(|| VideoReport {
        setup: setup.clone(),
        apis,
    })
}

/// `ratio (target <= max: met)`, or the ratio alone where there is no target.
fn ratio_text(ratio: f64, target: Option<f64>) -> String {
    match target {
        Some(max) => format!("{ratio:.3} (target <= {max}: {})", verdict(ratio <= max)),
        None => format!("{ratio:.3}"),
    }
}

/// Prints each summary on one line (stderr, like the other groups' progress).
fn print_summary(cases: &[Case], setup: &Setup) {
    if let Some(why) = &setup.wgpu_skipped {
        eprintln!("interop: video: wgpu rows skipped: {why}");
    }
    for (api, (w, h), s) in each(cases) {
        eprintln!(
            "interop: video.{api}.{w}x{h}: show_video {:.1} µs vs show {:.1} µs: {}; planes \
             {:.1} µs vs floor {:.1} µs: {}",
            s.show_video_us,
            s.show_us,
            ratio_text(s.show_ratio, s.show_target_max),
            s.planes_us,
            s.floor_us,
            ratio_text(s.planes_ratio, s.planes_target_max)
        );
        if let Some(f) = &s.in_flight {
            in_flight::print(&format!("video.{api}.{w}x{h}"), f);
        }
    }
}

/// The group's markdown section, for the report; empty when it did not run.
pub fn summary_markdown(cases: &[Case], setup: Option<&Setup>) -> String {
    let mut out = String::new();
    let Some(setup) = setup else {
        return out;
    };
    let _ = write!(
        out,
        "### Video: NV12 frames on screen and their planes vs their limits\n\n`{}` (GL, \
         interop, 1920x1080).",
        setup.display
    );
    if let Some(adapter) = &setup.wgpu_adapter {
        let _ = write!(out, " wgpu adapter: {adapter}.");
    }
    if let Some(why) = &setup.wgpu_skipped {
        let _ = write!(out, " wgpu rows skipped (not a failure): {why}.");
    }
    out.push_str(
        "\n\n| key | show_video NV12 µs | show RGBA8 µs | ratio | show_video P010 µs | planes \
         µs | floor µs | ratio | planes staged µs | planes stream µs | ratio |\n\
         |---|---:|---:|---|---:|---:|---:|---|---:|---:|---|\n",
    );
    let cell = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.1}"));
    let all = each(cases);
    for (api, (w, h), s) in &all {
        let _ = writeln!(
            out,
            "| `video.{api}.{w}x{h}` | {:.1} | {:.1} | {} | {} | {:.1} | {:.1} | {} | {} | {} | {} |",
            s.show_video_us,
            s.show_us,
            ratio_text(s.show_ratio, s.show_target_max),
            cell(s.show_p010_us),
            s.planes_us,
            s.floor_us,
            ratio_text(s.planes_ratio, s.planes_target_max),
            cell(s.planes_staged_us),
            cell(s.planes_stream_us),
            s.planes_stream_ratio
                .map_or_else(String::new, |r| ratio_text(r, s.planes_target_max)),
        );
    }
    let in_flight = all.iter().filter_map(|(api, (w, h), s)| {
        Some((format!("video.{api}.{w}x{h}"), s.in_flight.as_ref()?))
    });
    out.push_str(&in_flight::markdown(in_flight));
    out.push('\n');
    out
}

/// Queues the plasma kernel writing `bytes` bytes (a multiple of `w * 4`) into `frame`, as a
/// `w`-wide RGBA8 image: what stands for a decoder writing a frame of those bytes.
pub fn write_frame(gpu: &Gpu, frame: &DeviceBuffer<u8>, w: u32, t: f32) -> Result<()> {
    let rows = frame.byte_len() / (w as usize * 4);
    gpu.plasma_into(
        frame.device_ptr(),
        frame.byte_len(),
        (w, u32::try_from(rows)?),
        t,
    )
}

/// A frame of `layout`'s bytes in device memory, which [`write_frame`] can fill (the bytes of
/// a packed 4:2:0 frame of an even height are whole rows of RGBA8 of its width).
fn frame_buffer(gpu: &Gpu, layout: &VideoLayout) -> Result<DeviceBuffer<u8>> {
    let bytes = layout.bytes();
    gpu.device_bytes(bytes)
}

/// The GL rows' state at one size. The planes are unregistered before their textures go
/// (field order), and the target drops while the GL context is current (it lives in `Gpu`).
struct Rig {
    target: DisplayTarget,
    /// The planes in interop, staged and stream mode (each on textures of its own: planes
    /// claim their textures).
    planes: [VideoPlanes; 3],
    /// Their textures, the untouched ones of the floor, and the 1x1 sinks (R8, RG8).
    textures: [[Owned; 2]; 3],
    untouched: [Owned; 2],
    sinks: [Owned; 2],
    /// Its sink takes the shows' GL use; its device memory is the RGBA8 frame shown.
    floor: Floor,
    nv12: DeviceBuffer<u8>,
    p010: DeviceBuffer<u8>,
    t: f32,
}

/// The GL rows at `size`, measured in the same interleaved rounds.
fn gl_rows(gpu: &Gpu, plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (w, h) = size;
    let group = format!("video {w}x{h}: NV12 on screen vs its limits");
    let nv12 = VideoLayout::packed(size, VideoFormat::Nv12)?;
    let p010 = VideoLayout::packed(size, VideoFormat::P010)?;
    let rgba = Layout::packed(size, Format::Rgba8)?;
    let (target, _) = DisplayTarget::new(&gpu.ctx, rgba, Some(Mode::Interop))
        .with_context(|| format!("DisplayTarget::new({w}x{h}, RGBA8, interop)"))?;
    let textures = [plane_pair(&nv12)?, plane_pair(&nv12)?, plane_pair(&nv12)?];
    let planes = [
        planes_on(gpu, &textures[0], size, Mode::Interop)?,
        planes_on(gpu, &textures[1], size, Mode::Staged)?,
        planes_on(gpu, &textures[2], size, Mode::Stream)?,
    ];
    let mut rig = Rig {
        target,
        planes,
        textures,
        untouched: plane_pair(&nv12)?,
        sinks: plane_sinks()?,
        floor: Floor::new(gpu, size)?,
        nv12: frame_buffer(gpu, &nv12)?,
        p010: frame_buffer(gpu, &p010)?,
        t: 0.0,
    };
    glres::check(&format!("setting up {group}"))?;
    let stream = &gpu.stream;
    let color = ColorSpace::default();
    // `show_video` of the NV12 or the P010 frame + GL use.
    let shown = |role, format| {
        let (layout, what) = match format {
            VideoFormat::Nv12 => (nv12, "NV12"),
            _ => (p010, "P010"),
        };
        let run = move |rig: &mut Rig| {
            let frame = match format {
                VideoFormat::Nv12 => &rig.nv12,
                _ => &rig.p010,
            };
            rig.target.show_video(frame, layout, color, stream)?;
            rig.floor.gl_use(rig.target.texture().0);
            Ok(())
        };
        let name = format!("DisplayTarget::show_video {what} {w}x{h} + GL use");
        (role, Variant::new(name, run))
    };
    // The kernel writes the NV12 frame, then the planes' upload (interop 0, staged 1, stream 2), or
    // the floor's stream sync (`None`), then GL's use of the planes' textures, or of the
    // floor's untouched ones.
    let planes = |role, which: Option<usize>| {
        let run = move |rig: &mut Rig| {
            rig.t += FRAME_DT;
            write_frame(gpu, &rig.nv12, w, rig.t)?;
            let used = match which {
                None => {
                    stream.synchronize()?;
                    &rig.untouched
                }
                Some(k) => {
                    rig.planes[k].upload(&rig.nv12, nv12, stream)?;
                    &rig.textures[k]
                }
            };
            copy_planes(used, &rig.sinks);
            glres::finish();
            Ok(())
        };
        let name = match which {
            None => {
                format!("handoff floor, NV12 bytes {w}x{h}: kernel + sync + GL use of two textures")
            }
            Some(0) => format!("VideoPlanes NV12 {w}x{h}: kernel + upload + GL use of the planes"),
            Some(1) => {
                format!("VideoPlanes staged NV12 {w}x{h}: kernel + upload + GL use of the planes")
            }
            Some(_) => {
                format!("VideoPlanes stream NV12 {w}x{h}: kernel + upload + GL use of the planes")
            }
        };
        (role, Variant::new(name, run))
    };
    let rows: Vec<(Role, Variant<'_, Rig>)> = vec![
        (
            Role::ShowRgba,
            Variant::new(
                format!("DisplayTarget::show RGBA8 {w}x{h} + GL use"),
                move |rig: &mut Rig| {
                    rig.target.show(&rig.floor.device, rgba, stream)?;
                    rig.floor.gl_use(rig.target.texture().0);
                    Ok(())
                },
            ),
        ),
        shown(Role::ShowNv12, VideoFormat::Nv12),
        shown(Role::ShowP010, VideoFormat::P010),
        planes(Role::PlanesFloor, None),
        planes(Role::Planes, Some(0)),
        planes(Role::PlanesStaged, Some(1)),
        planes(Role::PlanesStream, Some(2)),
    ];
    let rows = interleaved_rows(plan, &group, &mut rig, rows)?;
    glres::finish();
    stream.synchronize()?;
    glres::check(&group)?;
    drop(rig);
    Ok(tag(rows, size))
}

/// The GL part of the group: the target's report line, then every size of [`VIDEO_SIZES`],
/// its rows appended to `all`. What it found (the wgpu rows, when built with them, come last:
/// [`wgpu_group`]).
pub fn gl_group(
    gpu: &Gpu,
    plan: &Plan,
    all: &mut Vec<Case>,
    progress: impl Fn(&str),
) -> Result<Setup> {
    let layout = Layout::packed(crate::cases::FULL_HD, Format::Rgba8)?;
    let (probe, report) = DisplayTarget::new(&gpu.ctx, layout, Some(Mode::Interop))
        .context("DisplayTarget::new(1920x1080, RGBA8, interop)")?;
    drop(probe);
    let display = report.to_string();
    eprintln!("interop: video: {display}");
    for (w, h) in VIDEO_SIZES {
        progress(&format!("video {w}x{h}: NV12 on screen vs its limits (GL)"));
        all.extend(gl_rows(gpu, plan, (w, h))?);
        progress(&format!("video {w}x{h}: VideoPlanes frames in flight (GL)"));
        all.extend(in_flight::rows(gpu, plan, (w, h))?);
    }
    Ok(Setup {
        display,
        wgpu_adapter: None,
        wgpu_skipped: cfg!(not(feature = "wgpu")).then(|| {
            "the benchmark was built without its feature `wgpu` (cargo bench -p \
             cuda-gl-bench --features wgpu)"
                .to_owned()
        }),
    })
}

/// Prints the group's summary once every part of it has run.
pub fn finish(all: &[Case], setup: &Setup) {
    print_summary(all, setup);
}
