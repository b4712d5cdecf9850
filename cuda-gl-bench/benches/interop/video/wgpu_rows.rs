//! The video group's wgpu rows (feature `wgpu`): `WgpuTarget::show_video` against `show`, and
//! `WgpuVideoPlanes` against the wgpu handoff floor of the same bytes, on the device from
//! `open_device` (see the parent module for what each row measures).

use super::{FRAME_DT, Role, Setup, VIDEO_SIZES, frame_buffer, tag, write_frame};
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Variant, interleaved_rows};
use crate::watchdog;
use crate::wgpu_present::Wgpu;
use anyhow::{Context as _, Result};
use cuda_gl::DeviceBuffer;
use cuda_gl::display::{Format, Layout, Mode};
use cuda_gl::video::{ColorSpace, VideoFormat, VideoLayout};
use cuda_gl::wgpu_interop::{WgpuTarget, WgpuVideoPlanes};

/// The wgpu rows' state at one size. Everything holds clones of the wgpu device and queue, and
/// drops before the CUDA context (which `Gpu` holds).
struct Rig {
    target: WgpuTarget,
    planes: WgpuVideoPlanes,
    staged: WgpuVideoPlanes,
    /// The floor's untouched plane textures (R8Unorm, Rg8Unorm).
    untouched: [wgpu::Texture; 2],
    /// The 1x1 sinks of the uses: RGBA8, R8, RG8.
    rgba_sink: wgpu::Texture,
    sinks: [wgpu::Texture; 2],
    rgba: DeviceBuffer<u8>,
    nv12: DeviceBuffer<u8>,
    t: f32,
}

/// Planes of `size` on `w`'s device in `mode`.
fn planes(gpu: &Gpu, w: &Wgpu, size: (u32, u32), mode: Mode) -> Result<WgpuVideoPlanes> {
    let (planes, _) = WgpuVideoPlanes::new(
        &gpu.ctx,
        w.device(),
        w.queue(),
        size,
        VideoFormat::Nv12,
        Some(mode),
    )
    .with_context(|| format!("WgpuVideoPlanes::new({}x{}, NV12, {mode})", size.0, size.1))?;
    Ok(planes)
}

impl Rig {
    /// Everything the rows of `size` use.
    fn new(gpu: &Gpu, w: &Wgpu, size: (u32, u32), nv12: &VideoLayout) -> Result<Rig> {
        let (width, height) = size;
        let rgba = Layout::packed(size, Format::Rgba8)?;
        let (target, _) =
            WgpuTarget::new(&gpu.ctx, w.device(), w.queue(), rgba, Some(Mode::Interop))
                .with_context(|| format!("WgpuTarget::new({width}x{height}, RGBA8, interop)"))?;
        let (r8, rg8) = (wgpu::TextureFormat::R8Unorm, wgpu::TextureFormat::Rg8Unorm);
        let chroma = nv12.chroma_size();
        let rig = Rig {
            target,
            planes: planes(gpu, w, size, Mode::Interop)?,
            staged: planes(gpu, w, size, Mode::Staged)?,
            untouched: [
                w.texture_of(size, r8, "video: the floor's luma"),
                w.texture_of(chroma, rg8, "video: the floor's chroma"),
            ],
            rgba_sink: w.texture_of((1, 1), wgpu::TextureFormat::Rgba8Unorm, "video: sink"),
            sinks: [
                w.texture_of((1, 1), r8, "video: luma sink"),
                w.texture_of((1, 1), rg8, "video: chroma sink"),
            ],
            rgba: gpu.device_bytes(rgba.bytes())?,
            nv12: frame_buffer(gpu, nv12)?,
            t: 0.0,
        };
        w.check(&format!("making the {width}x{height} video textures"))?;
        Ok(rig)
    }
}

/// The wgpu use of two plane textures: one texel of each into the sink of its format.
fn use_planes(w: &Wgpu, sinks: &[wgpu::Texture; 2], planes: [&wgpu::Texture; 2]) -> Result<()> {
    w.use_texels(&[(planes[0], &sinks[0]), (planes[1], &sinks[1])])
}

/// The wgpu part of the video group, last in the run (it uses no GL): the device from
/// `open_device`, then every size of [`VIDEO_SIZES`], its rows appended to `all`; `setup` says
/// which adapter, or why it measured nothing.
pub fn wgpu_group(
    gpu: &Gpu,
    plan: &Plan,
    all: &mut Vec<Case>,
    progress: impl Fn(&str),
    setup: &mut Setup,
) -> Result<()> {
    watchdog::enter(watchdog::Stage::Setup);
    let w = match Wgpu::open(gpu)? {
        Ok(w) => w,
        Err(why) => {
            setup.wgpu_skipped = Some(format!(
                "no wgpu Vulkan device on the CUDA GPU takes the hand-off: {why}"
            ));
            return Ok(());
        }
    };
    setup.wgpu_adapter = Some(w.adapter().to_owned());
    for size in VIDEO_SIZES {
        progress(&format!(
            "video {}x{}: NV12 on screen vs its limits (wgpu)",
            size.0, size.1
        ));
        all.extend(rows(gpu, &w, plan, size)?);
    }
    Ok(())
}

/// The wgpu rows at `size`, measured in the same interleaved rounds.
fn rows(gpu: &Gpu, w: &Wgpu, plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (width, height) = size;
    let group = format!("video (wgpu) {width}x{height}: NV12 on screen vs its limits");
    watchdog::enter(watchdog::Stage::Setup);
    let nv12 = VideoLayout::packed(size, VideoFormat::Nv12)?;
    let rgba = Layout::packed(size, Format::Rgba8)?;
    let mut rig = Rig::new(gpu, w, size, &nv12)?;
    let stream = &gpu.stream;
    let color = ColorSpace::default();
    let planes_row = |role, what: &str, staged: bool| {
        let run = move |rig: &mut Rig| {
            rig.t += FRAME_DT;
            write_frame(gpu, &rig.nv12, width, rig.t)?;
            let planes = if staged {
                &mut rig.staged
            } else {
                &mut rig.planes
            };
            planes.upload(&rig.nv12, nv12, stream)?;
            use_planes(w, &rig.sinks, [planes.luma(), planes.chroma()])
        };
        (
            role,
            Variant::new(
                format!("WgpuVideoPlanes {what} NV12 {width}x{height}: kernel + upload + wgpu use"),
                run,
            ),
        )
    };
    let rows: Vec<(Role, Variant<'_, Rig>)> = vec![
        (
            Role::WgpuShowRgba,
            Variant::new(
                format!("WgpuTarget::show RGBA8 {width}x{height} + wgpu use"),
                move |rig: &mut Rig| {
                    rig.target.show(&rig.rgba, rgba, stream)?;
                    w.use_texel(rig.target.texture(), &rig.rgba_sink)
                },
            ),
        ),
        (
            Role::WgpuShowNv12,
            Variant::new(
                format!("WgpuTarget::show_video NV12 {width}x{height} + wgpu use"),
                move |rig: &mut Rig| {
                    rig.target.show_video(&rig.nv12, nv12, color, stream)?;
                    w.use_texel(rig.target.texture(), &rig.rgba_sink)
                },
            ),
        ),
        (
            Role::WgpuPlanesFloor,
            Variant::new(
                format!(
                    "handoff floor (wgpu), NV12 bytes {width}x{height}: kernel + sync + wgpu use \
                     of two textures"
                ),
                move |rig: &mut Rig| {
                    rig.t += FRAME_DT;
                    write_frame(gpu, &rig.nv12, width, rig.t)?;
                    stream.synchronize()?;
                    use_planes(w, &rig.sinks, [&rig.untouched[0], &rig.untouched[1]])
                },
            ),
        ),
        planes_row(Role::WgpuPlanes, "interop", false),
        planes_row(Role::WgpuPlanesStaged, "staged", true),
    ];
    let rows = interleaved_rows(plan, &group, &mut rig, rows)?;
    stream.synchronize()?;
    w.check(&group)?;
    drop(rig);
    Ok(tag(rows, size))
}
