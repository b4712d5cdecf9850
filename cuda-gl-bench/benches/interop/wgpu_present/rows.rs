//! The wgpu present group's rows (feature `wgpu`): on the wgpu device on the CUDA GPU, the
//! targets and textures of one size and each row's iteration (see the parent module for what
//! each row measures), and what every group of rows on one wgpu device runs ([`measure`]).

use super::device::Wgpu;
use super::frames::{FRAME_DT, Frames};
use super::other_gpu;
use super::{Found, Role, Setup, Summary, print_summary};
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Variant, interleaved_rows};
use crate::present::raw;
use crate::report::one_line;
use crate::roles::{SizeSummary as _, tagged};
use crate::watchdog;
use anyhow::{Context as _, Result, ensure};
use blit::{Blit, BlitKind, BlitPair};
use cuda_gl::display::{Format, Layout, Mode};
use cuda_gl::wgpu_interop::{SharedTexture, WgpuTarget};
use cuda_gl::{PinnedBuffer, sys};
use plain::Via;

/// cuda-gl's present blit itself (the file uses only wgpu), so that the blit rows measure the
/// very passes `WgpuTarget`'s present records.
#[path = "../../../../cuda-gl/src/wgpu_interop/blit.rs"]
#[allow(dead_code)] // The benchmark needs only part of it.
mod blit;
#[path = "gyroflow.rs"]
mod gyroflow;
#[path = "plain.rs"]
mod plain;
#[path = "plain_vk.rs"]
mod plain_vk;
#[path = "sustained.rs"]
mod sustained;

/// The frame sizes of the group.
pub(super) const WGPU_SIZES: [(u32, u32); 2] = [(1920, 1080), (3840, 2160)];

/// The group's state at one size. The targets and the shared texture hold clones of the wgpu
/// device and queue, and drop before the CUDA context (which `Gpu` holds).
struct Rig {
    /// The plain-call route (ash and driver calls on the same device, submitted raw or
    /// through wgpu).
    plain: plain::PlainRoute,
    /// gyroflow's way, where its set-up worked (else the row is left out, saying why).
    gyroflow: Option<gyroflow::GyroflowRoute>,
    /// The floor, interop and staged rows' targets and textures, and the sink.
    frames: Frames,
    shared: SharedTexture,
    /// The released-ahead raw row's own shared texture (left released ahead between its
    /// iterations, so no other row may use it).
    shared_ahead: SharedTexture,
    /// The one-submit raw row's own shared texture (left released ahead between its
    /// iterations), and a clone of its `wgpu::Texture` to record the use through while the
    /// write borrows it.
    shared_one: (SharedTexture, wgpu::Texture),
    /// The raw DtoH's destination, and `write_texture`'s source.
    pinned: PinnedBuffer<u8>,
    /// `write_texture`'s destination.
    upload: wgpu::Texture,
    /// The blit rows: by compute and by render pass, from a plain texture and from the shared
    /// image.
    blits: Vec<BlitRow>,
}

/// A blit row's blit, its pair, and its destination.
struct BlitRow {
    role: Role,
    blit: Blit,
    pair: BlitPair,
    /// As a target's texture in interop mode (sampled, copied, and the blit's usage).
    dest: wgpu::Texture,
}

impl BlitRow {
    /// The row's name at `width` x `height`.
    fn name(&self, (width, height): (u32, u32)) -> String {
        let kind = match self.blit.kind() {
            BlitKind::Compute => "compute",
            BlitKind::Render => "render",
        };
        let source = match self.role {
            Role::ComputeBlitFromShared | Role::RenderBlitFromShared => {
                "from the shared image into a plain texture"
            }
            _ => "between plain textures",
        };
        format!("shader blit ({kind}) {width}x{height} {source} + wgpu use")
    }

    /// The blit, submitted, then the use of its destination.
    fn run(&self, w: &Wgpu, sink: &wgpu::Texture) -> Result<()> {
        w.queue()
            .submit([self.blit.command(w.device(), &self.pair)]);
        w.use_texel(&self.dest, sink)
    }
}

impl Wgpu {
    /// A texture as a `WgpuTarget`'s in interop mode, written by a `kind` blit: sampled,
    /// copied, and the blit's usage.
    fn blit_texture(&self, size: (u32, u32), kind: Option<BlitKind>, label: &str) -> wgpu::Texture {
        let usage = wgpu::TextureUsages::TEXTURE_BINDING
            | wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST
            | kind.map_or(wgpu::TextureUsages::empty(), BlitKind::usage);
        self.texture_for(size, wgpu::TextureFormat::Rgba8Unorm, usage, label)
    }
}

/// The blit rows into `dest` by `blit`: from `plain`, and from `shared` (the shared image).
fn blit_rows(
    w: &Wgpu,
    blit: &Blit,
    (plain, shared): (&wgpu::Texture, &wgpu::Texture),
    dest: &wgpu::Texture,
) -> [BlitRow; 2] {
    let (alone, from_shared) = match blit.kind() {
        BlitKind::Compute => (Role::ComputeBlitAlone, Role::ComputeBlitFromShared),
        BlitKind::Render => (Role::RenderBlitAlone, Role::RenderBlitFromShared),
    };
    [(alone, plain), (from_shared, shared)].map(|(role, source)| BlitRow {
        role,
        blit: blit.clone(),
        pair: blit.pair(w.device(), source, dest),
        dest: dest.clone(),
    })
}

/// A target of `size` in `mode` (`None`: auto) on `w`'s device, and its report line.
pub(super) fn target(
    gpu: &Gpu,
    w: &Wgpu,
    (width, height): (u32, u32),
    mode: Option<Mode>,
) -> Result<(WgpuTarget, String)> {
    let layout = Layout::packed((width, height), Format::Rgba8)?;
    let what = mode.map_or_else(|| "auto".to_owned(), |m| m.to_string());
    let (target, report) = WgpuTarget::new(&gpu.ctx, w.device(), w.queue(), layout, mode)
        .with_context(|| format!("WgpuTarget::new({width}x{height}, RGBA8, {what})"))?;
    Ok((target, report.to_string()))
}

impl Rig {
    /// Everything the rows of `size` use.
    fn new(gpu: &Gpu, w: &Wgpu, size: (u32, u32)) -> Result<Rig> {
        let (width, height) = size;
        let bytes = width as usize * height as usize * 4;
        let (shared, shared_ahead) = (w.shared_texture(gpu, size)?, w.shared_texture(gpu, size)?);
        let shared_one = w.shared_texture(gpu, size)?;
        let shared_one_texture = shared_one.texture().clone();
        let plain = w.blit_texture(size, None, "wgpu present: the blits' plain source");
        let mut blits = Vec::new();
        for kind in BlitKind::ALL {
            let blit = Blit::new(w.device(), wgpu::TextureFormat::Rgba8Unorm, kind);
            let dest = w.blit_texture(size, Some(kind), "wgpu present: a blit's destination");
            blits.extend(blit_rows(w, &blit, (&plain, shared.texture()), &dest));
        }
        let gyroflow = gyroflow::GyroflowRoute::new(gpu, w, size)
            .inspect_err(|e| {
                let why = one_line(&format!("{e:#}"));
                eprintln!(
                    "interop: wgpu present {width}x{height}: gyroflow's way not measured: {why}"
                );
            })
            .ok();
        let rig = Rig {
            plain: plain::PlainRoute::new(gpu, w.device(), w.queue(), size)
                .with_context(|| format!("the plain-call route at {width}x{height}"))?,
            gyroflow,
            frames: Frames::new(gpu, w, size, "wgpu present")?,
            blits,
            shared,
            shared_ahead,
            shared_one: (shared_one, shared_one_texture),
            pinned: gpu.pinned_bytes(bytes)?,
            upload: w.texture(size, "wgpu present: write_texture's texture"),
        };
        w.check(&format!("making the {width}x{height} textures and blits"))?;
        Ok(rig)
    }
}

/// The rows on the wgpu Vulkan device on the CUDA GPU (from `open_device`).
const VULKAN: Group = Group {
    open: Wgpu::open,
    // cuda-gl's error (the why after this) ends in a `help:` naming VK_DRIVER_FILES where that
    // applies.
    no_device: "no wgpu Vulkan device on the CUDA GPU takes the hand-off",
    names: (
        "wgpu present",
        "open_device",
        "WgpuTarget per frame vs its limits",
    ),
    rows,
    auto: Mode::Interop,
    print: print_summary,
};

/// The group: the rows on the CUDA GPU's Vulkan device, then the staged rows on a Vulkan
/// adapter that is not the CUDA GPU (`other_gpu.rs`), each by [`measure`]. What each found, or
/// why it skipped, with `gl`, what the GL-route rows found (run earlier: `GL_GROUP`).
pub fn group(
    gpu: &Gpu,
    plan: &Plan,
    all: &mut Vec<Case>,
    progress: impl Fn(&str),
    gl: Found,
) -> Result<Setup> {
    Ok(Setup {
        vulkan: measure(gpu, plan, all, &progress, &VULKAN)?,
        gl,
        other: measure(gpu, plan, all, &progress, &other_gpu::GROUP)?,
    })
}

/// The rows function of a group of rows: its rows at one size.
pub(super) type SizeRows = fn(&Gpu, &Wgpu, &Plan, (u32, u32)) -> Result<Vec<Case>>;

/// A group of rows on one wgpu device: what [`measure`] runs.
pub(crate) struct Group {
    /// Opens the group's device; `Ok(Err(why))` where this machine has none for it.
    pub(super) open: fn(&Gpu) -> Result<std::result::Result<Wgpu, String>>,
    /// The start of the skip's reason, which goes on with why `open` found no device.
    pub(super) no_device: &'static str,
    /// The group, in the lines printed; the call that opened the device; what the rows
    /// measure, for the progress line.
    pub(super) names: (&'static str, &'static str, &'static str),
    /// Its rows at one size.
    pub(super) rows: SizeRows,
    /// The mode auto must choose on the device (the probe fails the group otherwise).
    pub(super) auto: Mode,
    /// Prints the summary lines of the rows it measured.
    pub(super) print: fn(&[Case]),
}

/// Runs `group` (the watchdog measures set-up from here): opens its device, then the auto
/// probe (a 1920x1080 target with no mode forced, found in the group's mode), then its rows at
/// every size of [`WGPU_SIZES`], appended to `all`; or, where this machine has no device for
/// it, nothing, which it prints. What it found, with the rows it added printed by its `print`;
/// it has dropped the device when it returns.
///
/// # Errors
/// `open`'s errors (other than finding no device); when the probe's target cannot be made,
/// or auto chose another mode; the rows' errors.
pub(crate) fn measure(
    gpu: &Gpu,
    plan: &Plan,
    all: &mut Vec<Case>,
    progress: &impl Fn(&str),
    group: &Group,
) -> Result<Found> {
    watchdog::enter(watchdog::Stage::Setup);
    let (name, opened_by, what) = group.names;
    let w = match (group.open)(gpu)? {
        Ok(w) => w,
        Err(why) => {
            let why = format!("{}: {why}", group.no_device);
            eprintln!("interop: {name}: skipped: {why}");
            return Ok(Found {
                skipped: Some(why),
                ..Found::default()
            });
        }
    };
    let first = all.len();
    eprintln!("interop: {name}: adapter {}", w.adapter());
    let (probe, display) = target(gpu, &w, crate::cases::FULL_HD, None)?;
    eprintln!("interop: {name}: {display}");
    ensure!(
        probe.mode() == group.auto,
        "auto chose {} on the device from {opened_by}, not {}: {display}",
        probe.mode(),
        group.auto
    );
    drop(probe);
    for (width, height) in WGPU_SIZES {
        progress(&format!("{name} {width}x{height}: {what}"));
        all.extend((group.rows)(gpu, &w, plan, (width, height))?);
    }
    (group.print)(all.get(first..).unwrap_or_default());
    Ok(Found {
        adapter: Some(w.adapter().to_owned()),
        display: Some(display),
        skipped: None,
    })
}

/// The group's rows at `size`, measured in the same interleaved rounds.
fn rows(gpu: &Gpu, w: &Wgpu, plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (width, height) = size;
    let group = format!("wgpu present {width}x{height}: WgpuTarget per frame vs its limits");
    watchdog::enter(watchdog::Stage::Setup);
    let driver = sys::driver()?;
    // The raw copy needs the CUDA context current; the safe API binds it itself.
    gpu.ctx
        .bind()
        .context("binding the CUDA context for the raw copy")?;
    let mut rig = Rig::new(gpu, w, size)?;
    let stream = &gpu.stream;
    let mut rows: Vec<(Role, Variant<'_, Rig>)> = vec![
        (
            Role::Floor,
            Variant::new(
                format!("handoff floor (wgpu) {width}x{height}: kernel + sync + wgpu use"),
                |rig: &mut Rig| rig.frames.floor(gpu, w),
            ),
        ),
        (
            Role::Interop,
            Variant::new(
                format!(
                    "wgpu interop frame {width}x{height}: kernel (surface) + present + wgpu use"
                ),
                |rig: &mut Rig| rig.frames.interop(gpu, w),
            ),
        ),
        (
            Role::SharedRaw,
            Variant::new(
                format!(
                    "SharedTexture raw hand-off {width}x{height}: write + kernel (surface) + \
                     finish + wgpu use"
                ),
                |rig: &mut Rig| {
                    rig.frames.t += FRAME_DT;
                    // SAFETY: (1) of `write`: no submit uses the shared texture until `finish`
                    // below (the group's other uses of it, `use_texel` after it and the copy
                    // and blit rows, are submitted by other iterations, after their `finish`,
                    // and no clone of the texture is held elsewhere).
                    let write = unsafe { rig.shared.write(stream) }?;
                    gpu.plasma_into_surface(write.surface(), size, rig.frames.t)?;
                    write.finish()?;
                    w.use_texel(rig.shared.texture(), &rig.frames.sink)
                },
            ),
        ),
        (
            Role::SharedRawAhead,
            Variant::new(
                format!(
                    "SharedTexture raw hand-off {width}x{height}, released ahead: write + \
                     kernel (surface) + finish + wgpu use + release_ahead"
                ),
                |rig: &mut Rig| {
                    rig.frames.t += FRAME_DT;
                    let shared = &mut rig.shared_ahead;
                    // SAFETY: (1) of `write`: this row alone uses this texture, only after
                    // `finish` below.
                    let write = unsafe { shared.write(stream) }?;
                    gpu.plasma_into_surface(write.surface(), size, rig.frames.t)?;
                    write.finish()?;
                    w.use_texel(shared.texture(), &rig.frames.sink)?;
                    // SAFETY: (1) of `release_ahead`: this row's next use of the texture comes
                    // after its next write's `finish`.
                    Ok(unsafe { shared.release_ahead() }?)
                },
            ),
        ),
        (
            Role::SharedRawOneSubmit,
            Variant::new(
                format!(
                    "SharedTexture raw hand-off {width}x{height}, use in the hand-back's submit: \
                     write + kernel (surface) + finish_then_release(wgpu use)"
                ),
                |rig: &mut Rig| {
                    rig.frames.t += FRAME_DT;
                    let (shared, texture) = &mut rig.shared_one;
                    // SAFETY: (1) of `write`: this row alone uses this texture, only in the
                    // command buffer given to `finish_then_release` below.
                    let write = unsafe { shared.write(stream) }?;
                    gpu.plasma_into_surface(write.surface(), size, rig.frames.t)?;
                    // Recorded while the kernel runs, as the plain route records its use after
                    // its CUDA half (recording is no use: nothing is submitted until below).
                    let use_commands = w.record_texels(&[(&*texture, &rig.frames.sink)]);
                    // SAFETY: (1) of `finish_then_release`: this row's next use of the texture
                    // is in its next iteration's command buffer, given to that iteration's
                    // `finish_then_release`.
                    let used = unsafe { write.finish_then_release(use_commands) }?;
                    w.wait(used)
                },
            ),
        ),
        (
            Role::StagedPresent,
            Variant::new(
                format!(
                    "wgpu staged present {width}x{height}: a frame with no kernel + present + \
                     wgpu use"
                ),
                |rig: &mut Rig| rig.frames.staged(gpu, w),
            ),
        ),
        (
            Role::Dtoh,
            Variant::new(
                format!("raw cuMemcpyDtoHAsync {width}x{height} into pinned memory + sync"),
                |rig: &mut Rig| raw::dtoh(driver, &rig.frames.device, &mut rig.pinned, stream),
            ),
        ),
        (
            Role::WriteTexture,
            Variant::new(
                format!("raw Queue::write_texture {width}x{height} from host memory + wgpu use"),
                move |rig: &mut Rig| {
                    w.write_and_use(&rig.upload, rig.pinned.as_slice()?, &rig.frames.sink)
                },
            ),
        ),
        (
            Role::CopyAlone,
            Variant::new(
                format!(
                    "wgpu copy_texture_to_texture {width}x{height} between plain textures + \
                     wgpu use"
                ),
                move |rig: &mut Rig| {
                    w.copy_and_use(&rig.frames.untouched, &rig.upload, &rig.frames.sink)
                },
            ),
        ),
        (
            Role::CopyFromShared,
            Variant::new(
                format!(
                    "wgpu copy_texture_to_texture {width}x{height} from the shared image into a \
                     plain texture + wgpu use"
                ),
                // The shared image is wgpu's between hand-offs: copying it then is allowed.
                move |rig: &mut Rig| {
                    w.copy_and_use(rig.shared.texture(), &rig.upload, &rig.frames.sink)
                },
            ),
        ),
    ];
    // The plain-call route: with the acquire only, with the release too, and through wgpu.
    let plain = [
        (
            Role::PlainRoute,
            "plain calls",
            Via::Vulkan { release: false },
        ),
        (
            Role::PlainRelease,
            "plain calls + release",
            Via::Vulkan { release: true },
        ),
        (Role::PlainWgpu, "plain calls through wgpu", Via::Wgpu(w)),
    ];
    rows.extend(plain.map(|(role, what, via)| {
        let vulkan = match via {
            Via::Vulkan { release } => format!(
                "vkQueueSubmit (wait, acquire, 1-texel copy{}, signal) + vkWaitSemaphores",
                if release { ", release" } else { "" }
            ),
            Via::Wgpu(_) => {
                "wgpu submit (wait, acquire, 1-texel copy, signal) + Device::poll".to_owned()
            }
        };
        let name =
            format!("{what} {width}x{height}: CUDA wait + kernel (surface) + signal, {vulkan}");
        let frame = move |rig: &mut Rig| {
            rig.frames.t += FRAME_DT;
            rig.plain.frame(gpu, rig.frames.t, via)
        };
        (role, Variant::new(name, frame))
    }));
    if rig.gyroflow.is_some() {
        let name = format!(
            "gyroflow's way {width}x{height}: kernel into a LINEAR image's memory \
             (cuExternalMemoryGetMappedBuffer) + sync + wgpu use"
        );
        let frame = move |rig: &mut Rig| {
            rig.frames.t += FRAME_DT;
            let route = rig
                .gyroflow
                .as_ref()
                .context("gyroflow's way is the rig's")?;
            route.frame(gpu, w, &rig.frames.sink, rig.frames.t)
        };
        rows.push((Role::Gyroflow, Variant::new(name, frame)));
    }
    // As the copy rows: the shared image is wgpu's between hand-offs.
    let blits = rig.blits.iter().enumerate().map(|(i, b)| {
        let run = move |rig: &mut Rig| {
            let row = rig.blits.get(i).context("the blit rows are the rig's")?;
            row.run(w, &rig.frames.sink)
        };
        (b.role, Variant::new(b.name(size), run))
    });
    rows.extend(blits.collect::<Vec<_>>());
    let rows = interleaved_rows(plan, &group, &mut rig, rows)?;
    stream.synchronize()?;
    w.check(&group)?;
    let mut cases = tagged(rows, size);
    cases.extend(sustained::rows(gpu, w, plan, size, &mut rig)?);
    drop(rig);
    Summary::set_ratios(&mut cases, size);
    Ok(cases)
}
