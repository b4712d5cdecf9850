//! What the wgpu present group's frame rows share on either route (Vulkan's, `rows.rs`; the GL
//! route's, `gl_rows.rs`): the targets of one size, the floor's frame and texture, the 1x1 sink
//! of every row's use, and the iteration of the floor, interop and staged rows.

use super::device::Wgpu;
use super::rows::target;
use crate::gpu::Gpu;
use anyhow::{Context as _, Result};
use cuda_gl::DeviceBuffer;
use cuda_gl::display::Mode;
use cuda_gl::wgpu_interop::WgpuTarget;

/// Animation time step between frames (seconds).
pub(super) const FRAME_DT: f32 = 1.0 / 60.0;

/// The targets and textures of the floor, interop and staged rows at one size. They hold
/// clones of the wgpu device and queue, and drop before the CUDA context (which `Gpu` holds).
pub(super) struct Frames {
    interop: WgpuTarget,
    staged: WgpuTarget,
    /// The floor's frame (plain device memory), also the raw DtoH's source.
    pub(super) device: DeviceBuffer<u8>,
    /// The floor's untouched texture of the frame's size.
    pub(super) untouched: wgpu::Texture,
    /// The 1x1 texture every row's use copies a texel into.
    pub(super) sink: wgpu::Texture,
    /// The animation time of the next frame.
    pub(super) t: f32,
    size: (u32, u32),
}

impl Frames {
    /// The rows' state at `size` on `w`'s device (`what` names the route in labels).
    pub(super) fn new(gpu: &Gpu, w: &Wgpu, size: (u32, u32), what: &str) -> Result<Frames> {
        let bytes = size.0 as usize * size.1 as usize * 4;
        Ok(Frames {
            interop: target(gpu, w, size, Some(Mode::Interop))?.0,
            staged: target(gpu, w, size, Some(Mode::Staged))?.0,
            device: DeviceBuffer::zeroed(&gpu.ctx, bytes)
                .with_context(|| format!("allocating {bytes} bytes of device memory"))?,
            untouched: w.texture(size, &format!("{what}: the floor's untouched texture")),
            sink: w.texture((1, 1), &format!("{what}: the 1x1 sink")),
            t: 0.0,
            size,
        })
    }

    /// The handoff floor: the plasma kernel into plain device memory, the stream's sync, then
    /// the wgpu use of the untouched texture.
    pub(super) fn floor(&mut self, gpu: &Gpu, w: &Wgpu) -> Result<()> {
        self.t += FRAME_DT;
        gpu.plasma_synced(&self.device, self.size, self.t)?;
        w.use_texel(&self.untouched, &self.sink)
    }

    /// An interop frame: the plasma kernel through `Frame::surface`, `Frame::present`, then
    /// the wgpu use of the target's texture.
    pub(super) fn interop(&mut self, gpu: &Gpu, w: &Wgpu) -> Result<()> {
        self.t += FRAME_DT;
        let frame = self.interop.frame(&gpu.stream)?;
        gpu.plasma_into_surface(frame.surface()?, self.size, self.t)?;
        frame.present()?;
        w.use_texel(self.interop.texture(), &self.sink)
    }

    /// A staged frame that no kernel drew, presented, then the wgpu use of its texture.
    pub(super) fn staged(&mut self, gpu: &Gpu, w: &Wgpu) -> Result<()> {
        self.staged.frame(&gpu.stream)?.present()?;
        w.use_texel(self.staged.texture(), &self.sink)
    }
}
