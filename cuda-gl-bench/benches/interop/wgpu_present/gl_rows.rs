//! The wgpu present group's GL-route rows (feature `wgpu-gl`): a wgpu device of wgpu's GL
//! backend over the benchmark's own GL context (`open_gl_device`), and at each size, in the
//! same interleaved rounds, its handoff floor, the GL-route interop frame and a forced staged
//! frame (see the parent module; the summary is `gl_summary.rs`).

use super::Role;
use super::device::Wgpu;
use super::frames::Frames;
use super::gl_summary::{self, GlSummary};
use super::rows::Group;
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Variant, interleaved_rows};
use crate::roles::{SizeSummary as _, tagged};
use crate::watchdog;
use anyhow::Result;
use cuda_gl::display::Mode;
use cuda_gl::wgpu_interop::{open_gl_adapter, open_gl_device};

impl Wgpu {
    /// The wgpu device that `open_gl_device` opens on `open_gl_adapter`'s adapter over the
    /// benchmark's GL context (current on this thread since `Gpu::open`); `Ok(Err(why))` where
    /// that context is not on the CUDA GPU (the wgpu present group alone runs on any GL).
    fn open_gl(gpu: &Gpu) -> Result<std::result::Result<Wgpu, String>> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::empty(),
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        // SAFETY: the benchmark's GL context (`gpu`'s) is current on this thread, the only one
        // that runs the benchmark, from `Gpu::open` until `gpu` drops; [`group`] (its `measure`) drops every
        // wgpu object of this device before it returns, and nothing makes another GL context
        // current meanwhile. The benchmark's own GL calls (the other groups, before this one)
        // leave no object of wgpu's bound.
        let adapter = unsafe { open_gl_adapter(&instance, &gpu.ctx) };
        let open = |adapter: &wgpu::Adapter| open_gl_device(adapter, &gpu.ctx, &Default::default());
        Wgpu::opened(
            instance,
            adapter,
            open,
            "cuda_gl::wgpu_interop::open_gl_adapter, open_gl_device",
        )
    }
}

/// The GL rows, for [`measure`](super::rows::measure): the device over the benchmark's GL
/// context, the auto probe (printed), then every size, the rows appended and the summary
/// printed.
pub(crate) const GROUP: Group = Group {
    open: Wgpu::open_gl,
    no_device: "no wgpu GL device over a GL context on the CUDA GPU",
    names: (
        "wgpu present, GL route",
        "open_gl_device",
        "WgpuTarget per frame vs its floor",
    ),
    rows,
    auto: Mode::Interop,
    print: gl_summary::print,
};

/// The GL rows at `size`, measured in the same interleaved rounds.
fn rows(gpu: &Gpu, w: &Wgpu, plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (width, height) = size;
    let group = format!("wgpu present {width}x{height}, GL route: WgpuTarget per frame");
    watchdog::enter(watchdog::Stage::Setup);
    let mut rig = Frames::new(gpu, w, size, "wgpu present, GL")?;
    w.check(&format!("making the {width}x{height} GL textures"))?;
    let rows: Vec<(Role, Variant<'_, Frames>)> = vec![
        (
            Role::GlFloor,
            Variant::new(
                format!("handoff floor (wgpu GL) {width}x{height}: kernel + sync + wgpu use"),
                |rig: &mut Frames| rig.floor(gpu, w),
            ),
        ),
        (
            Role::GlInterop,
            Variant::new(
                format!(
                    "wgpu GL interop frame {width}x{height}: kernel (surface) + present + wgpu \
                     use"
                ),
                |rig: &mut Frames| rig.interop(gpu, w),
            ),
        ),
        (
            Role::GlStaged,
            Variant::new(
                format!(
                    "wgpu GL staged present {width}x{height}: a frame with no kernel + present \
                     + wgpu use"
                ),
                |rig: &mut Frames| rig.staged(gpu, w),
            ),
        ),
    ];
    let rows = interleaved_rows(plan, &group, &mut rig, rows)?;
    gpu.stream.synchronize()?;
    w.check(&group)?;
    // The targets go while the GL context is current (it is, for the whole benchmark).
    drop(rig);
    let mut cases = tagged(rows, size);
    GlSummary::set_ratios(&mut cases, size);
    Ok(cases)
}
