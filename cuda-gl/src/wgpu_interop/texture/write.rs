//! [`CudaWrite`], the guard of one CUDA write of a [`SharedTexture`]: the surface and array it
//! hands out, the copy into them, and the hand-back (`finish`, `finish_then_release`, drop).

use super::SharedTexture;
use super::group::After;
use crate::error::{Error, Result};
use crate::graphics::Surface;
use crate::result;
use crate::stream::AsStream;
#[cfg(doc)]
use crate::wgpu_interop::WgpuError;
use cuda_gl_sys as sys;

/// The guard of one CUDA write of a [`SharedTexture`]: hands out the surface, and hands the
/// image back to wgpu when finished or dropped.
#[derive(Debug)]
#[must_use = "the write ends when the guard is finished or dropped"]
pub struct CudaWrite<'t, S: AsStream> {
    pub(super) texture: &'t mut SharedTexture,
    pub(super) stream: &'t S,
    /// Set once `finish` or `finish_then_release` ran, whatever it returned (the drop then
    /// does nothing).
    pub(super) done: bool,
}

impl<S: AsStream> CudaWrite<'_, S> {
    /// The surface object over the texture, for a kernel taking `cudaSurfaceObject_t` on the
    /// guard's stream (`surf2Dwrite(v, surf, x * bytes_per_texel, y)`).
    pub fn surface(&self) -> Surface<'_> {
        Surface::new(self.texture.resources.held.cuda_image.surface)
    }

    /// The CUDA array (level 0), for copies on the guard's stream (`cuMemcpy2DAsync`).
    pub fn array(&self) -> sys::CUarray {
        self.texture.resources.held.cuda_image.array
    }

    /// Width and height in texels.
    pub fn size(&self) -> (u32, u32) {
        self.texture.size
    }

    /// Copies rows `pitch` bytes apart from `src` into the whole image (each of its rows, row 0
    /// first, from one row of `src`), on the guard's stream.
    ///
    /// # Safety
    /// 1. `src` points to `pitch * (height - 1) + width * bytes per texel` bytes of device
    ///    memory of the texture's CUDA context, which stay allocated until the work queued on
    ///    the guard's stream before this returns has run.
    ///
    /// # Errors
    /// `Error::Internal` for a pitch shorter than a row; the driver's error from the copy.
    pub(crate) unsafe fn copy_from_pitched(
        &self,
        src: sys::CUdeviceptr,
        pitch: usize,
    ) -> Result<()> {
        let copy = self.texture.copy_in(src, pitch)?;
        // SAFETY: `run_now`'s (1): the guard's stream, live while borrowed, of the texture's
        // context (checked at `write`). In the work, `copy_2d_async`'s (1): the source rows are
        // this function's (1); the array is the image's level 0, of the rows `copy_in` copies,
        // CUDA's until the signal that the guard queues after this copy, and alive until then
        // (the resources' `done` follows that signal); (2): the private stream.
        unsafe {
            self.texture.ctx.run_now(
                self.stream.raw_stream(),
                "cuMemcpy2DAsync (not called)",
                |p| Ok(result::array::copy_2d_async(&copy, p)?),
            )
        }
    }

    /// Ends the write: the stream signals once the work queued on it so far is done, and
    /// wgpu's next submits wait for that signal on the GPU.
    ///
    /// # Errors
    /// The driver's error from `cuSignalExternalSemaphoresAsync` (the image then stays CUDA's,
    /// and the next [`SharedTexture::write`] recovers by synchronizing the context, at most
    /// the wait limit); [`WgpuError::Refused`] or [`WgpuError::OutOfMemory`] when wgpu refuses the
    /// acquire (CUDA's signal is queued: the next `write` or the drop submits it again, with
    /// no CPU wait); the driver's error from `cuEventRecord` after a queued signal (the image
    /// is handed back all the same; the next `write` or the drop records the event again).
    pub fn finish(mut self) -> Result<()> {
        self.done = true;
        self.texture
            .give_back(self.stream.raw_stream(), After::Nothing)
            .map(drop)
    }

    /// [`finish`](Self::finish), then `then` (your frame's use of the texture: the passes that
    /// sample, copy or copy into it), then the image released to CUDA ahead of the next write
    /// (as [`SharedTexture::release_ahead`]), all in one wgpu submit, whose release is signalled
    /// by an empty submit after it: two submits a frame, where `finish`, a submit of your use
    /// and the next write's release make four. Returns the submit that carried `then`: wait
    /// for it (with a limit: `PollType::Wait` with a timeout) to know your work is done.
    ///
    /// For a texture whose every use in the frame is in `then` (a texture of your own that a
    /// kernel writes each frame and your passes read). When this returns an error:
    /// - when CUDA's signal cannot be queued (the image stays CUDA's; the next write recovers
    ///   it), nothing is submitted and `then` is dropped;
    /// - when wgpu refuses the submit (`then` uses a destroyed resource), `then` is dropped, the
    ///   hand-back is submitted again alone at once and nothing is released (when the destroyed
    ///   resource is this texture, wgpu refuses that too, and the next write returns
    ///   [`WgpuError::TextureDestroyed`]);
    /// - when CUDA's `done` event cannot be recorded after its signal, `then` is submitted with
    ///   the hand-back but nothing is released, and the driver's error is returned without the
    ///   submit's index (the next write or the drop records the event again first).
    ///
    /// A release whose signal wgpu refuses is made from the host once the submit is done (this
    /// call then waits on the CPU for your work too, at most the [wait
    /// limit](crate::wait_limit)); one that cannot be made at all is logged, not returned: the
    /// frame was handed back and used, and the next write recovers the image and returns what
    /// still fails.
    ///
    /// ```no_run
    /// # use cuda_gl::wgpu;
    /// # fn frame(
    /// #     shared: &mut cuda_gl::wgpu_interop::SharedTexture,
    /// #     device: &wgpu::Device,
    /// #     stream: &cuda_gl::Stream,
    /// #     draw: impl Fn(&mut wgpu::CommandEncoder, &wgpu::Texture),
    /// # ) -> cuda_gl::Result<()> {
    /// let texture = shared.texture().clone(); // for your passes while the write is open
    /// // SAFETY: nothing submits a use of the texture but the command buffer below.
    /// let write = unsafe { shared.write(stream) }?; // takes the release made last frame
    /// // ... a kernel writes through write.surface() on `stream` ...
    /// let mut encoder = device.create_command_encoder(&Default::default());
    /// draw(&mut encoder, &texture); // your passes that sample the frame
    /// // SAFETY: the texture's next use is in the next frame's command buffer, given to that
    /// // frame's `finish_then_release`.
    /// unsafe { write.finish_then_release(encoder.finish()) }?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Safety
    /// 1. As [`SharedTexture::release_ahead`]'s (1): from this call until a later write's guard
    ///    hands the image back, or the `SharedTexture`'s drop has (a drop that recorded no
    ///    error), no wgpu command outside `then` uses the texture (a clone of
    ///    [`SharedTexture::texture`]): no submitted pass or copy (a pass that sets a bind group
    ///    holding a view of it uses it, drawn or not), and no `Queue::write_texture`.
    /// 2. `then` is a command buffer of the texture's `wgpu::Device` (wgpu refuses one of
    ///    another device of the same instance, and does not promise what one of another
    ///    instance does).
    ///
    /// # Errors
    /// As [`finish`](Self::finish); [`WgpuError::Refused`] or [`WgpuError::OutOfMemory`] when
    /// wgpu refuses the submit with `then`; [`Error::Internal`] when the hand-back made no
    /// submit (never, for one texture).
    pub unsafe fn finish_then_release(
        mut self,
        then: wgpu::CommandBuffer,
    ) -> Result<wgpu::SubmissionIndex> {
        self.done = true;
        let index = self
            .texture
            .give_back(self.stream.raw_stream(), After::UseThenRelease(then))?;
        // A texture is a hand-off group of one: its acquire always makes a submit.
        index.ok_or_else(|| Error::Internal {
            what: "a shared texture's hand-back made no submit".into(),
        })
    }
}

impl<S: AsStream> Drop for CudaWrite<'_, S> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Err(e) = self
            .texture
            .give_back(self.stream.raw_stream(), After::Nothing)
        {
            // A timeout is the wait for cuda-gl's private stream, when the hand-off's order
            // could not be queued.
            let what = "finishing a CudaWrite in its drop";
            self.texture.ctx.record_drop_wait(what, "cuStreamQuery", e);
        }
    }
}
