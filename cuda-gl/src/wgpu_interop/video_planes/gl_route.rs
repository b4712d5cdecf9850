//! The wgpu video planes' interop on wgpu's GL backend, the GL route (feature `wgpu-gl`): each
//! plane goes into a GL texture of cuda-gl's ([`GlFrameTexture`]) that CUDA registered; an
//! upload maps both together, copies each plane into its mapped array (`cuMemcpy2DAsync`) and
//! unmaps both, on cuda-gl's private stream joined once to the frame's stream (what the GL
//! [`VideoPlanes`](crate::video::VideoPlanes)
//! does: [`copy_planes`]), then submits wgpu's copies of both into the textures the
//! application samples. Map and unmap order CUDA's copies and GL's commands in the one GL
//! context wgpu runs on (SAFETY G4 of the module docs): no semaphore, no CPU wait.
//!
//! Why textures of cuda-gl's, and two of each plane, as the wgpu target's GL route: wgpu may
//! delete a texture it made at any moment (a destroyed device), also while CUDA holds it
//! registered (SAFETY G3); and the application samples its textures at any time, also while
//! CUDA holds the plane textures mapped. The plane textures are never handed out: only the
//! upload's copies use them, after the unmap.

use super::Plane;
use crate::context::Context;
use crate::error::Result;
use crate::memory::DevicePtr;
use crate::stream::AsStream;
use crate::video::{VideoLayout, copy_planes};
use crate::wgpu_interop::gl_texture::GlFrameTexture;
use crate::wgpu_interop::interop_mode::copy_command;
use crate::wgpu_interop::scope::scoped;
use std::sync::Arc;

/// The labels of the plane textures' wgpu textures.
const LABELS: [&str; 2] = [
    "cuda_gl::wgpu_interop::WgpuVideoPlanes (GL luma)",
    "cuda_gl::wgpu_interop::WgpuVideoPlanes (GL chroma)",
];

/// The GL route's state: the luma and chroma textures that CUDA writes.
#[derive(Debug)]
pub(super) struct GlPlanes {
    frames: [GlFrameTexture; 2],
}

impl GlPlanes {
    /// A texture of each plane in the GL context current on this thread (the device's: the
    /// caller checked it with `check_gl_device`), registered with CUDA context `ctx`. Not
    /// cleared: only an upload reads them (wgpu's copies into the application's planes), after
    /// CUDA has written both whole. (A clear would need a zeroed buffer freed after it, and
    /// `cuMemFree` may wait for the whole device with no limit.)
    ///
    /// # Errors
    /// As `GlFrameTexture::new`.
    pub(super) fn new(
        ctx: &Arc<Context>,
        device: &wgpu::Device,
        planes: &[Plane; 2],
    ) -> Result<GlPlanes> {
        let frame = |plane: &Plane, label| {
            GlFrameTexture::new(ctx, device, (plane.size, plane.format), None, label)
        };
        let luma = frame(&planes[0], LABELS[0])?;
        let chroma = frame(&planes[1], LABELS[1])?;
        Ok(GlPlanes {
            frames: [luma, chroma],
        })
    }

    /// Refuses `call` unless the plane textures' GL context (the device's) is current on this
    /// thread: checked before a re-creation, whose wgpu calls (the new textures) would otherwise
    /// run in another context, or none, before any map could refuse.
    ///
    /// # Errors
    /// [`Error::NoGlContext`](crate::Error::NoGlContext),
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext), or as `GlOwner::check`.
    pub(super) fn check_current(&self, call: &'static str) -> Result<()> {
        self.frames[0].check_current(call)
    }

    /// Copies the planes of the frame of `layout` at `ptr` into the plane textures in
    /// `stream`'s order (one map of both, two copies, one unmap, on cuda-gl's private stream
    /// joined to `stream`), then records and submits wgpu's
    /// copies of both into `textures`: GL runs them after the unmap, so after CUDA's copies.
    /// The map comes first: it checks that the textures' GL context is current, before any
    /// wgpu call (wgpu calls GL through whatever context is current).
    ///
    /// # Safety
    /// 1. The frame of `layout` lies at `ptr`, device memory of the planes' context, which
    ///    stays allocated and is not written until the work queued on `stream` before this
    ///    returns has run.
    ///
    /// # Errors
    /// As [`copy_planes`] (no GL context, or another, current:
    /// [`Error::NoGlContext`](crate::Error::NoGlContext),
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext); nothing is submitted then);
    /// [`WgpuError::Refused`](crate::wgpu_interop::WgpuError::Refused) or
    /// [`WgpuError::OutOfMemory`](crate::wgpu_interop::WgpuError::OutOfMemory) when wgpu
    /// refuses the copies (a texture the application destroyed: neither texture is written).
    pub(super) unsafe fn upload<S: AsStream>(
        &mut self,
        textures: &[wgpu::Texture; 2],
        (ptr, layout): (DevicePtr<'_>, &VideoLayout),
        (device, queue): (&wgpu::Device, &wgpu::Queue),
        stream: &S,
    ) -> Result<()> {
        const CALL: &str = "WgpuVideoPlanes::upload";
        let [luma, chroma] = &mut self.frames;
        let (luma, luma_texture) = luma.parts();
        let (chroma, chroma_texture) = chroma.parts();
        // SAFETY: (1), forwarded; the plane textures hold the planes of `layout` (made for its
        // size and format), which `copy_planes` checks of the mapped arrays too.
        unsafe { copy_planes(CALL, [luma, chroma], ptr, layout, stream, None) }?;
        let copy = copy_command(
            device,
            &[(luma_texture, &textures[0]), (chroma_texture, &textures[1])],
        )?;
        let call = "wgpu::Queue::submit (the copies of the GL plane textures into the textures \
                    the application samples)";
        scoped(device, call, || {
            queue.submit([copy]);
        })
    }
}
