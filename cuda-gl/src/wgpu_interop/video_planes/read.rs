//! [`WgpuVideoPlanes::read_planes`]: the two textures read back to the host (tests), by the
//! read-back of a target's `read_pixels`.

use super::super::read_back::{Readable, read_texture};
use super::WgpuVideoPlanes;
use crate::error::Result;

impl WgpuVideoPlanes {
    /// The textures' contents, for tests: the luma plane, then the chroma plane, each with
    /// rows tightly packed, row 0 first, in the textures' formats' bytes (NV12: one byte per
    /// luma texel and two per chroma texel; P010: two and four, each 16-bit value as the
    /// frame holds it). After an upload, they are the frame's planes
    /// byte for byte. Submits a copy of each on the planes' queue (after the uploads so far)
    /// and waits for them, at most the [wait limit](crate::wait_limit) (10 s by default) each.
    ///
    /// # Errors
    /// [`Error::Timeout`](crate::Error::Timeout) after the wait limit;
    /// [`WgpuError::Refused`](super::super::WgpuError::Refused) when wgpu refuses a copy or a
    /// map (a texture the application destroyed, a lost device);
    /// [`WgpuError::OutOfMemory`](super::super::WgpuError::OutOfMemory) for a read-back buffer;
    /// on wgpu's GL backend over the program's GL context (the GL route, and staged mode there
    /// on a context with object labels), refused before any wgpu call when that context is not
    /// current ([`Error::NoGlContext`](crate::Error::NoGlContext),
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext),
    /// [`Error::GlContextGone`](crate::Error::GlContextGone)), as
    /// [`WgpuTarget::read_pixels`](super::super::WgpuTarget::read_pixels) is.
    pub fn read_planes(&self) -> Result<[Vec<u8>; 2]> {
        const CALL: &str = "WgpuVideoPlanes::read_planes";
        // On wgpu's GL backend wgpu's copies, maps and polls call GL through whatever context
        // is current: refused here, as the drop leaks, rather than run in another context.
        #[cfg(feature = "wgpu-gl")]
        self.made.backend.check_gl_current(CALL)?;
        let read = |k: usize| {
            read_texture(&Readable {
                device: &self.device,
                queue: &self.queue,
                texture: &self.made.textures[k],
                row: self.planes[k].row,
                call: CALL,
            })
        };
        Ok([read(0)?, read(1)?])
    }
}
