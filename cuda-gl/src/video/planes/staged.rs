//! The staged mode of [`VideoPlanes`](super::VideoPlanes), for GL off the CUDA GPU (Mesa's,
//! another GPU's; OpenGL 4.3, or object labels and immutable texture storage):
//! each plane copied by CUDA into pinned host memory of its own, rows tightly packed, then, once
//! both copies have finished, written into its texture by GL (`glTexSubImage2D` from client
//! memory, which GL reads before the call returns), under neutral pixel-store and
//! pixel-transfer state.

use super::super::layout::{VideoFormat, VideoLayout};
use super::super::plane_check::{check_frame_size, check_textures};
use super::gl_write::{PlaneSource, claim_textures, plane_rows, upload_planes};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::glapi::GlOwner;
use crate::glapi::claim::Claim;
use crate::memory::{DevicePtr, PinnedBuffer};
use crate::result;
use crate::stream::{AsStream, wait_limit};
use cuda_gl_sys as sys;
use std::sync::Arc;
use std::time::Instant;

/// The staged mode's state.
#[derive(Debug)]
pub(super) struct Staged {
    /// The GL context the textures are of, current at `new`: each upload checks it is current.
    owner: GlOwner,
    /// The `[luma, chroma]` textures.
    names: [u32; 2],
    format: VideoFormat,
    /// Each plane's rows, tightly packed, as GL takes them: `[luma, chroma]`, each exactly its
    /// plane's bytes of frames of the size given to `new` (the upload relies on it).
    pinned: [PinnedBuffer<u8>; 2],
    /// Both textures claimed, as a registration claims them: no registration of cuda-gl's can
    /// map them (and hand CUDA a texture that GL writes here) while this mode writes them.
    _claims: [Claim; 2],
}

impl Staged {
    /// The state for frames of `size` and `format` into the `[luma, chroma]` textures `names`
    /// of the GL context current on this thread, with pinned memory of `ctx`.
    ///
    /// # Errors
    /// The owner check's ([`GlOwner::current`]); [`Error::AlreadyRegistered`] for a texture
    /// registered with CUDA, or claimed by other planes, already (or the same texture twice);
    /// [`VideoLayout::packed`]'s; the driver's error from allocating the pinned memory.
    pub(super) fn new(
        ctx: &Arc<Context>,
        names: [u32; 2],
        size: (u32, u32),
        format: VideoFormat,
    ) -> Result<Staged> {
        let (owner, _) = GlOwner::current("VideoPlanes::new")?;
        let claims = claim_textures(owner, names)?;
        let layout = VideoLayout::packed(size, format)?;
        let planes = plane_rows(&layout).map(|(row, rows)| row * rows);
        Ok(Staged {
            owner,
            names,
            format,
            pinned: [
                PinnedBuffer::zeroed(ctx, planes[0])?,
                PinnedBuffer::zeroed(ctx, planes[1])?,
            ],
            _claims: claims,
        })
    }

    /// Copies both planes of the frame of `layout` at `ptr` into the pinned memory in `stream`'s
    /// order, waits for the copies (at most the [wait limit](crate::wait_limit)), then has GL
    /// write each into its texture: GL's commands issued after this returns see the planes.
    /// Before any copy, the owning context must be current and the textures must still be what
    /// `new` found (GL is asked again: no mapped array tells this mode of storage the
    /// application replaced).
    ///
    /// # Safety
    /// 1. The frame of `layout` lies at `ptr` (`layout.bytes()` bytes), device memory of the
    ///    pinned memory's context, which stays allocated until the work queued on `stream`
    ///    before this returns has run.
    ///
    /// # Errors
    /// The owner check's, naming `call`; the textures' checks
    /// ([`VideoError::PlaneStorage`](crate::video::VideoError::PlaneStorage),
    /// [`VideoError::PlaneTexture`](crate::video::VideoError::PlaneTexture)); the copies'
    /// errors; [`Error::Timeout`] when they have not finished within the wait limit (nothing
    /// is written then); [`Error::GlCall`] when GL refuses a binding or a write (the luma may
    /// then be written and the chroma not), or putting the application's bindings back.
    pub(super) unsafe fn upload(
        &mut self,
        call: &'static str,
        ptr: DevicePtr<'_>,
        layout: &VideoLayout,
        stream: &impl AsStream,
    ) -> Result<()> {
        let fns = self.owner.check(call)?;
        let size = check_textures(fns, call, self.names, self.format)?;
        check_frame_size(layout.size(), size)?;
        let rows = plane_rows(layout);
        let sources = [
            (ptr.as_raw(), layout.luma_pitch()),
            (
                ptr.byte_add(layout.chroma_offset())?.as_raw(),
                layout.chroma_pitch(),
            ),
        ];
        // SAFETY: (1) of `planes_to_host`: the planes lie in the frame at `ptr` (this
        // function's (1), `layout`'s planes: `rows` of its row bytes at its pitches).
        let bytes = unsafe { planes_to_host(&mut self.pinned, rows, sources, stream) }?;
        let sizes = [layout.size(), layout.chroma_size()];
        upload_planes(
            fns,
            self.names,
            sizes,
            self.format,
            PlaneSource::Client(bytes),
        )
    }
}

/// Copies each of two planes, `rows[k]` = (row bytes, rows) at `sources[k]` = (device address,
/// pitch), into `pinned[k]`, rows tightly packed, in `stream`'s order; then waits for both
/// copies (at most the [wait limit](crate::wait_limit) together) and returns their bytes. What
/// the staged modes of the GL and the wgpu video planes do before their graphics API writes
/// the planes.
///
/// # Safety
/// 1. Each source holds its plane's rows at its pitch, in device memory of the pinned
///    buffers' context that stays allocated until the work queued on `stream` before this
///    returns has run.
///
/// # Errors
/// [`Error::Internal`] for pinned memory of another size than its plane; the copies' errors
/// (as [`PinnedBuffer::copy_from_device_async`]); [`Error::Timeout`] when they have not both
/// finished within the limit (nothing is returned then).
pub(crate) unsafe fn planes_to_host<'p>(
    pinned: &'p mut [PinnedBuffer<u8>; 2],
    rows: [(usize, usize); 2],
    sources: [(sys::CUdeviceptr, usize); 2],
    stream: &impl AsStream,
) -> Result<[&'p [u8]; 2]> {
    for ((pinned, (row, height)), (src, pitch)) in pinned.iter_mut().zip(rows).zip(sources) {
        if Some(pinned.len()) != row.checked_mul(height) {
            return Err(Error::Internal {
                what: "a video plane's pinned memory of another size than the plane".into(),
            });
        }
        // SAFETY: (1) of `copy_in_async`: the copy writes `height` rows of `row` bytes, tightly
        // packed, which is the pinned memory's length (checked); its source rows are this
        // function's (1).
        unsafe {
            pinned.copy_in_async(stream, "cuMemcpy2DAsync (not called)", |host, _, p| {
                let copy = sys::CUDA_MEMCPY2D {
                    srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                    srcDevice: src,
                    srcPitch: pitch,
                    dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
                    dstHost: host,
                    dstPitch: row,
                    WidthInBytes: row,
                    Height: height,
                    ..Default::default()
                };
                result::array::copy_2d_async(&copy, p)
            })
        }?;
    }
    // Both copies are waited for before either plane is handed on: a timeout hands on nothing.
    let deadline = Instant::now() + wait_limit();
    let within = || deadline.saturating_duration_since(Instant::now());
    let [luma, chroma] = pinned;
    Ok([
        luma.as_slice_within(within())?,
        chroma.as_slice_within(within())?,
    ])
}
