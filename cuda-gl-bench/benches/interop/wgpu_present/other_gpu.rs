//! The wgpu present group's staged rows on a Vulkan adapter that is not the CUDA GPU (feature
//! `wgpu`): Mesa's lavapipe on the GPU host (`source .mesa/mesa-env.sh` points the Vulkan loader
//! at it alone; `ci/gpu/suite.sh --mesa --mesa-present` runs the group so), or another GPU.
//!
//! The device: a plain wgpu device (`Adapter::request_device`) of the first Vulkan adapter that
//! `check_adapter` refuses as another GPU than the CUDA context's, a software one (lavapipe,
//! `DeviceType::Cpu`) first. cuda-gl makes only staged targets there (the hand-off needs the
//! CUDA GPU's Vulkan): `WgpuTarget::new` with no mode forced chooses staged and says why, which
//! the auto probe checks and prints, as `tests/not_nvidia_vulkan.rs` does. Where there is no
//! such adapter (NVIDIA's Vulkan alone), the rows print why and measure nothing.
//!
//! The rows, at each size, in the same interleaved rounds, each ending with the group's wgpu
//! use + wait on that device: the staged present (`Mode::Staged`: `Frame::present` of a frame no
//! kernel drew, the target's canvas copied out into pinned memory in bands, each handed to
//! `Queue::write_texture` once its copy has finished), and its raw limits, `cuMemcpyDtoHAsync`
//! of a frame from device memory into pinned memory + `cuStreamSynchronize`, and
//! `Queue::write_texture` of a frame from that memory + the use (whose submit carries the
//! write). Target (issue 43): the staged row at most [`OTHER_TARGET`] x the sum of the two;
//! the summary is `other_summary.rs`.
//!
//! [`OTHER_TARGET`]: super::other_summary::OTHER_TARGET

use super::Role;
use super::device::{Wgpu, describe, ready};
use super::other_summary::{self, OtherSummary};
use super::rows::{Group, target};
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Variant, interleaved_rows};
use crate::present::raw;
use crate::roles::{SizeSummary as _, tagged};
use crate::watchdog;
use anyhow::{Context as _, Result, bail};
use cuda_gl::display::Mode;
use cuda_gl::wgpu_interop::{WgpuError, WgpuTarget, check_adapter};
use cuda_gl::{DeviceBuffer, PinnedBuffer, sys};

/// The rows' state at one size on the other adapter's device. The target holds clones of the
/// device and queue, and drops before the CUDA context (which `Gpu` holds).
struct Rig {
    /// The staged row's target (`Mode::Staged`).
    staged: WgpuTarget,
    /// The raw DtoH's source: a frame of device memory.
    frame: DeviceBuffer<u8>,
    /// The raw DtoH's destination, and `write_texture`'s source.
    pinned: PinnedBuffer<u8>,
    /// `write_texture`'s destination.
    upload: wgpu::Texture,
    /// The 1x1 texture every row's use copies a texel into.
    sink: wgpu::Texture,
}

/// A plain wgpu device on the first Vulkan adapter that is not `gpu`'s CUDA GPU, a software one
/// first; `Ok(Err(why))` when there is none, or wgpu cannot open a device on it.
fn open(gpu: &Gpu) -> Result<std::result::Result<Wgpu, String>> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let Some(adapters) = ready(instance.enumerate_adapters(wgpu::Backends::VULKAN)) else {
        bail!("wgpu::Instance::enumerate_adapters did not finish at once");
    };
    let (mut others, mut seen) = (Vec::new(), Vec::new());
    for adapter in adapters {
        seen.push(describe(&adapter));
        match check_adapter(&adapter, &gpu.ctx) {
            Err(cuda_gl::Error::Wgpu(WgpuError::OtherGpu { .. })) => others.push(adapter),
            // The CUDA GPU's adapter, whether it takes the hand-off or lacks something for it.
            Ok(()) | Err(cuda_gl::Error::Wgpu(_)) => {}
            Err(e) => return Err(e).context("cuda_gl::wgpu_interop::check_adapter"),
        }
    }
    // A software adapter first (a stable sort: the loader's order otherwise).
    others.sort_by_key(|a| a.get_info().device_type != wgpu::DeviceType::Cpu);
    let Some(adapter) = others.into_iter().next() else {
        let seen = if seen.is_empty() {
            "none".to_owned()
        } else {
            seen.join(", ")
        };
        return Ok(Err(format!(
            "Vulkan adapters: {seen} (on the GPU host, `source .mesa/mesa-env.sh` points the \
             Vulkan loader at Mesa's lavapipe)"
        )));
    };
    let desc = wgpu::DeviceDescriptor {
        label: Some("wgpu present: another GPU"),
        ..Default::default()
    };
    match ready(adapter.request_device(&desc)) {
        Some(Ok((device, queue))) => Ok(Ok(Wgpu::from_parts(instance, &adapter, device, queue))),
        Some(Err(e)) => Ok(Err(format!(
            "Adapter::request_device on {}: {e}",
            describe(&adapter)
        ))),
        None => bail!("wgpu::Adapter::request_device did not finish at once"),
    }
}

/// The staged rows on another adapter, for [`measure`](super::rows::measure): its device, the
/// auto probe (printed; staged there), every size, the rows appended and the summary printed.
pub(super) const GROUP: Group = Group {
    open,
    no_device: "no wgpu device on a Vulkan adapter that is not the CUDA GPU",
    names: (
        "wgpu present, another GPU",
        "Adapter::request_device",
        "staged WgpuTarget vs DtoH + write_texture",
    ),
    rows,
    auto: Mode::Staged,
    print: other_summary::print,
};

/// The rows at `size` on the other adapter's device, measured in the same interleaved rounds.
fn rows(gpu: &Gpu, w: &Wgpu, plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (width, height) = size;
    let group =
        format!("wgpu present {width}x{height}, another GPU: staged WgpuTarget vs its limits");
    watchdog::enter(watchdog::Stage::Setup);
    let driver = sys::driver()?;
    // The raw copy needs the CUDA context current; the safe API binds it itself.
    gpu.ctx
        .bind()
        .context("binding the CUDA context for the raw copy")?;
    let bytes = width as usize * height as usize * 4;
    let mut rig = Rig {
        staged: target(gpu, w, size, Some(Mode::Staged))?.0,
        frame: gpu.device_bytes(bytes)?,
        pinned: gpu.pinned_bytes(bytes)?,
        upload: w.texture(size, "wgpu present, another GPU: write_texture's texture"),
        sink: w.texture((1, 1), "wgpu present, another GPU: the 1x1 sink"),
    };
    w.check(&format!(
        "making the {width}x{height} textures on another GPU"
    ))?;
    let stream = &gpu.stream;
    let rows: Vec<(Role, Variant<'_, Rig>)> = vec![
        (
            Role::OtherGpuStaged,
            Variant::new(
                format!(
                    "wgpu staged present {width}x{height}, another GPU: a frame with no kernel \
                     + present + wgpu use"
                ),
                |rig: &mut Rig| {
                    rig.staged.frame(stream)?.present()?;
                    w.use_texel(rig.staged.texture(), &rig.sink)
                },
            ),
        ),
        (
            Role::OtherGpuDtoh,
            Variant::new(
                format!(
                    "raw cuMemcpyDtoHAsync {width}x{height} into pinned memory + sync (another \
                     GPU's rounds)"
                ),
                |rig: &mut Rig| raw::dtoh(driver, &rig.frame, &mut rig.pinned, stream),
            ),
        ),
        (
            Role::OtherGpuWriteTexture,
            Variant::new(
                format!(
                    "raw Queue::write_texture {width}x{height} from host memory + wgpu use, \
                     another GPU"
                ),
                |rig: &mut Rig| w.write_and_use(&rig.upload, rig.pinned.as_slice()?, &rig.sink),
            ),
        ),
    ];
    let rows = interleaved_rows(plan, &group, &mut rig, rows)?;
    stream.synchronize()?;
    w.check(&group)?;
    drop(rig);
    let mut cases = tagged(rows, size);
    OtherSummary::set_ratios(&mut cases, size);
    Ok(cases)
}
