//! The wgpu target's interop mode: frames are drawn into a [`SharedTexture`], a Vulkan image
//! that CUDA imported, handed between wgpu and CUDA on the GPU by a timeline semaphore, and
//! written at each present, on the GPU, into the texture the application samples by a shader
//! blit (`blit.rs`: a compute pass, or a render pass for `R8Unorm`), or by wgpu's copy for a
//! format no blit writes. A frame drawn through its surface is written in place; a frame's
//! pixels are device memory of the mode's, copied into the image at the present. No host copy
//! and no CPU wait per frame. Needs wgpu's Vulkan backend on the CUDA GPU with external memory
//! and semaphores ([`open_device`](super::open_device) opens one).
//!
//! Why two textures: while a frame is open, and between a present and the next frame (the
//! present releases it to CUDA ahead, in the hand-back's submit after the blit), the shared
//! image is CUDA's, in a layout and queue family that wgpu does not track, so no wgpu command
//! may use it then. The application holds (clones of) the texture it samples and may submit
//! at any time; it never sees the shared image, which only cuda-gl's own submits use, on this
//! thread, outside frames. The texture it
//! samples is a plain wgpu texture that wgpu orders like any other: the present's blit is one
//! more wgpu pass. Why a blit and not `copy_texture_to_texture`: on an H200 (driver 580.159.04,
//! 2026-12-06) the copy ran at ~50 GB/s, ~160 µs of a 1920x1080 RGBA8 frame and ~630 µs of a
//! 3840x2160 one (the benchmark's wgpu present group measures both).
//!
//! The blit's bind group holds a view of the shared image: it is recorded only into the
//! command buffer that [`CudaWrite::finish_then_release`] submits after the acquire, where the
//! image is wgpu's, in the state wgpu's tracker holds for it (contract 6 of the module docs).

use super::blit::{Blit, BlitKind, BlitPair};
use super::place::WgpuPlace;
use super::scope::{check_alive, scoped};
use super::texture::{CudaWrite, SharedTexture, WAIT_FOR_CUDA};
use crate::context::{Context, drop_when_idle};
use crate::display::{Layout, Present, PresentFrame};
use crate::error::Result;
use crate::graphics::Surface;
use crate::memory::{DeviceBuffer, DevicePtr};
use crate::stream::{AsStream, Stream, StreamFlags, wait_limit};
use crate::wait::InDrop;
use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// The wgpu call that makes the blit's bind group, for its errors.
const PAIR_CALL: &str = "wgpu::Device::create_bind_group (the present's blit)";

/// The interop mode's state.
#[derive(Debug)]
pub(super) struct Interop {
    /// The image CUDA writes; never handed out.
    shared: SharedTexture,
    /// The shared image's wgpu texture, the source of the present's blit or copy into the
    /// place's texture (held here, not by the frame: a forgotten frame then leaks nothing of
    /// wgpu's).
    source: wgpu::Texture,
    /// The present's shader blit of the shared image into the place's texture, and its bind
    /// group over the two; `None`: the present copies.
    blit: Option<(Blit, BlitPair)>,
    /// A frame's pixels (tightly packed), copied into the image at the present. Freed once
    /// CUDA's last hand-off is done (the copies out of it come before it), leaked when that
    /// does not come within the [wait limit](crate::wait_limit) (10 s by default).
    pixels: ManuallyDrop<DeviceBuffer<u8>>,
    layout: Layout,
}

impl Present for Interop {
    type Texture = WgpuPlace;
    type Frame<'t, S: AsStream + 't> = InteropFrame<'t, S>;

    /// The shared image, cleared to zero by CUDA (its memory is not initialised), and the
    /// pixels.
    ///
    /// # Errors
    /// As [`SharedTexture::new`] (a device that is not Vulkan, lacks the extensions or is
    /// another GPU among them); the driver's errors allocating and clearing.
    fn new(ctx: &Arc<Context>, place: &WgpuPlace) -> Result<Interop> {
        let layout = place.layout;
        let mut shared = SharedTexture::new(
            ctx,
            &place.device,
            &place.queue,
            layout.size(),
            place.format(),
        )?;
        let source = shared.texture().clone();
        let blit = blit_pair(place, &source)?;
        let pixels = DeviceBuffer::zeroed(ctx, layout.bytes())?;
        let stream = Stream::new(ctx, StreamFlags::NonBlocking)?;
        // SAFETY: (1) the shared image's texture was never handed out.
        let clear = unsafe { shared.write(&stream) }?;
        copy_into(&clear, &pixels, layout)?;
        clear.finish()?;
        // SAFETY: (1) of `release_ahead`: only this mode's present uses the image, after the
        // hand-back of a write.
        unsafe { shared.release_ahead() }?;
        Ok(Interop {
            shared,
            source,
            blit,
            pixels: ManuallyDrop::new(pixels),
            layout,
        })
    }

    /// Hands the shared image to CUDA on the frame's stream, after wgpu's uses of it so far
    /// (released ahead at the last present: the stream only waits for that release).
    ///
    /// # Errors
    /// As [`SharedTexture::write`].
    fn begin<'t, S: AsStream>(
        &'t mut self,
        place: &'t WgpuPlace,
        stream: &'t S,
    ) -> Result<InteropFrame<'t, S>> {
        // SAFETY: (1) the shared image's texture is never handed out: only this mode's
        // present submits a use of it, after the guard is finished.
        let write = unsafe { self.shared.write(stream) }?;
        Ok(InteropFrame {
            write,
            shared: &self.source,
            blit: self.blit.as_ref(),
            place,
            pixels: &self.pixels,
            pixels_used: Cell::new(false),
            layout: self.layout,
        })
    }
}

impl Drop for Interop {
    fn drop(&mut self) {
        // A drop's waits: the shared texture's own drop, next, then gives up at once on the
        // context this one gave up on, rather than wait a second limit.
        let _in_drop = InDrop::enter();
        // The pixels may be read by a copy into the image still queued, or written by the
        // kernel of a leaked frame: wait for CUDA's last hand-off (recovering a leaked frame
        // first, or handing back the image released ahead at the last present), which follows
        // them.
        let idle = self.shared.wait_for_cuda(wait_limit());
        let ctx = self.pixels.context().clone();
        // SAFETY: dropped once, here, and never used after.
        unsafe {
            drop_when_idle(
                &ctx,
                &mut self.pixels,
                idle,
                "a wgpu target's pixel buffer",
                WAIT_FOR_CUDA,
            )
        };
    }
}

/// Copies `pixels` (of the image's size and format, tightly packed) into the image of `write`,
/// on its stream.
fn copy_into<S: AsStream>(
    write: &CudaWrite<'_, S>,
    pixels: &DeviceBuffer<u8>,
    layout: Layout,
) -> Result<()> {
    // SAFETY: (1) of `copy_from_pitched`: the pixels hold `row * height` bytes of the
    // target's context (made for this layout, the image's) and are freed only after CUDA's
    // next hand-off, which follows this copy (the mode's drop waits for it).
    unsafe { write.copy_from_pitched(pixels.device_ptr().as_raw(), layout.row_bytes()) }
}

/// An interop frame: the shared image is CUDA's from the frame's begin until its present or
/// drop, which hand it back to wgpu (the guard's). Only a present copies it into the texture
/// the application samples: a frame dropped unpresented shows nothing new.
pub(super) struct InteropFrame<'t, S: AsStream> {
    write: CudaWrite<'t, S>,
    /// The shared image's wgpu texture, for the present's copy (where it does not blit).
    shared: &'t wgpu::Texture,
    /// The present's blit, where it does not copy.
    blit: Option<&'t (Blit, BlitPair)>,
    place: &'t WgpuPlace,
    pixels: &'t DeviceBuffer<u8>,
    /// The pixels were asked for: they are what the frame shows.
    pixels_used: Cell<bool>,
    layout: Layout,
}

impl<S: AsStream> PresentFrame for InteropFrame<'_, S> {
    fn surface(&self) -> Result<Surface<'_>> {
        Ok(self.write.surface())
    }

    fn pixels(&self) -> Result<DevicePtr<'_>> {
        self.pixels_used.set(true);
        Ok(self.pixels.device_ptr())
    }

    /// Copies the pixels into the shared image when they were asked for, and hands the image
    /// back to wgpu (the stream signals after the work queued on it; wgpu's submit of the
    /// acquire waits for that signal on the GPU) with wgpu's blit (or copy) of the image into
    /// the texture the application samples in the same submit, after the acquire.
    ///
    /// # Errors
    /// The pixels' copy's errors (the guard then still hands the image back, with what the
    /// kernel wrote, and nothing is shown); as [`CudaWrite::finish`];
    /// [`WgpuError::Refused`](super::WgpuError::Refused) when wgpu refuses the blit or copy
    /// (the application destroyed a clone of the texture).
    fn present(self: Box<Self>) -> Result<()> {
        let InteropFrame {
            write,
            shared,
            blit,
            place,
            pixels,
            pixels_used,
            layout,
        } = *self;
        if pixels_used.get() {
            copy_into(&write, pixels, layout)?;
        }
        // The blit or copy goes in the hand-back's own submit, after the acquire, and the
        // image's release to CUDA after it, in the same submit (its signal in an empty one
        // after it): the next frame's CUDA wait then waits for no release submitted behind
        // this hand-back (which waits for this frame's kernel). (Had the encoding failed, the
        // guard's drop hands the image back instead.)
        let command = present_command(place, blit, shared)?;
        // SAFETY: (1) of `release_ahead`: the image is never handed out; only a present uses
        // it, in the hand-back's own submit after a write.
        unsafe { write.finish_then_release(command) }.map(drop)
    }
}

/// The present's shader blit of `source` (of the place's size and format) into the place's
/// texture, with its bind group over the two; `None` where the place's format is copied.
///
/// # Errors
/// As [`WgpuPlace::blit`]; [`WgpuError::Refused`](super::WgpuError::Refused) or
/// [`WgpuError::OutOfMemory`](super::WgpuError::OutOfMemory) from making the bind group.
pub(super) fn blit_pair(
    place: &WgpuPlace,
    source: &wgpu::Texture,
) -> Result<Option<(Blit, BlitPair)>> {
    let Some(blit) = place.blit()? else {
        return Ok(None);
    };
    let pair = scoped(&place.device, PAIR_CALL, || {
        blit.pair(&place.device, source, &place.texture)
    })?;
    Ok(Some((blit, pair)))
}

/// The command buffer of a present: `blit` (from [`blit_pair`]) of `source` into the place's
/// texture, or wgpu's copy where there is no blit, recorded under error scopes.
///
/// # Errors
/// [`WgpuError::Refused`](super::WgpuError::Refused) or
/// [`WgpuError::OutOfMemory`](super::WgpuError::OutOfMemory).
pub(super) fn present_command(
    place: &WgpuPlace,
    blit: Option<&(Blit, BlitPair)>,
    source: &wgpu::Texture,
) -> Result<wgpu::CommandBuffer> {
    match blit {
        Some((blit, pair)) => {
            let call = encode_call(blit.kind());
            check_alive(&place.texture, call)?;
            scoped(&place.device, call, || blit.command(&place.device, pair))
        }
        None => copy_command(&place.device, &[(source, &place.texture)]),
    }
}

/// The wgpu call that records a blit, for the errors wgpu reports in the recording (at the
/// encoder's `finish`), and for [`check_alive`]'s refusal of a texture the application
/// destroyed (wgpu 30 would refuse it only at the `Queue::submit` that carries the pass).
fn encode_call(kind: BlitKind) -> &'static str {
    match kind {
        BlitKind::Compute => "wgpu::CommandEncoder::begin_compute_pass (the present's blit)",
        BlitKind::Render => "wgpu::CommandEncoder::begin_render_pass (the present's blit)",
    }
}

/// A command buffer of wgpu's copies of each `(source, destination)` pair, whole textures of
/// the same size and format, recorded under error scopes (what wgpu refuses in the encoding is
/// caught here). A texture the application destroyed is refused first ([`check_alive`]): wgpu
/// 30 would take the copy and refuse it only at the submit that carries it, the hand-back's
/// own. One destroyed after the check (by another thread) is still refused there, and
/// `CudaWrite::finish_then_release` (or the video planes' `SharedTexture::copy_in_together`) then makes
/// the hand-back again without the copy.
///
/// # Errors
/// [`WgpuError::Refused`](super::WgpuError::Refused) or
/// [`WgpuError::OutOfMemory`](super::WgpuError::OutOfMemory).
pub(super) fn copy_command(
    device: &wgpu::Device,
    pairs: &[(&wgpu::Texture, &wgpu::Texture)],
) -> Result<wgpu::CommandBuffer> {
    const CALL: &str = "wgpu::CommandEncoder::copy_texture_to_texture";
    for (source, destination) in pairs {
        check_alive(source, CALL)?;
        check_alive(destination, CALL)?;
    }
    scoped(device, CALL, || {
        let mut encoder = device.create_command_encoder(&Default::default());
        for (source, destination) in pairs {
            encoder.copy_texture_to_texture(
                source.as_image_copy(),
                destination.as_image_copy(),
                destination.size(),
            );
        }
        encoder.finish()
    })
}

#[cfg(test)]
mod tests;
