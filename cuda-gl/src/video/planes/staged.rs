//! The staged mode of [`VideoPlanes`](super::VideoPlanes), for GL off the CUDA GPU (Mesa's,
//! another GPU's; OpenGL 4.3, or object labels and immutable texture storage):
//! each plane copied by CUDA into pinned host memory of its own, rows tightly packed, then, once
//! both copies have finished, written into its texture by GL (`glTexSubImage2D` from client
//! memory, which GL reads before the call returns), under neutral pixel-store and
//! pixel-transfer state.

use super::gl_write::{HeldTextures, PlaneSource};
use super::{PlaneFrame, PlaneTextures};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::PinnedBuffer;
use crate::queue::AfterWork;
use crate::result;
use crate::stream::{AsStream, wait_limit};
use cuda_gl_sys as sys;
use std::sync::Arc;
use std::time::Instant;

/// The staged mode's state.
#[derive(Debug)]
pub(super) struct Staged {
    held: HeldTextures,
    /// Each plane's rows, tightly packed, as GL takes them: `[luma, chroma]`, each exactly its
    /// plane's bytes of frames of the size given to `new` (the upload relies on it).
    pinned: [PinnedBuffer<u8>; 2],
}

impl Staged {
    /// The state for frames into `textures` (of the GL context current on this thread), with
    /// pinned memory of `ctx`.
    ///
    /// # Errors
    /// As [`HeldTextures::new`] ([`Error::AlreadyRegistered`] for a texture registered with
    /// CUDA, or held by other planes, already); the driver's error from allocating the pinned
    /// memory.
    pub(super) fn new(ctx: &Arc<Context>, textures: PlaneTextures) -> Result<Staged> {
        let (held, [luma, chroma]) = HeldTextures::new(textures)?;
        let pinned = [
            PinnedBuffer::zeroed(ctx, luma)?,
            PinnedBuffer::zeroed(ctx, chroma)?,
        ];
        Ok(Staged { held, pinned })
    }

    /// Copies both planes of the frame into the pinned memory in `stream`'s order
    /// ([`planes_to_host`], one run, `after` right after both copies, in it), waits for the
    /// copies (at most the [wait limit](crate::wait_limit)), then has GL write each into its
    /// texture: GL's commands issued after this returns see the planes. Before any copy,
    /// [`HeldTextures::check_frame`].
    ///
    /// # Safety
    /// 1. The frame lies at its address (its layout's `bytes()` bytes), device memory of the
    ///    pinned memory's context, which stays allocated until the work queued on `stream`
    ///    before this returns has run.
    ///
    /// # Errors
    /// [`HeldTextures::check_frame`]'s (nothing is copied); the copies' errors;
    /// [`Error::Timeout`] when they have not finished within the wait limit (nothing is written
    /// then); [`HeldTextures::write`]'s: [`Error::GlCall`] when GL refuses a binding or a write
    /// (the luma may then be written and the chroma not), or putting the application's
    /// bindings back.
    pub(super) unsafe fn upload(
        &mut self,
        frame: PlaneFrame<'_>,
        stream: &impl AsStream,
        after: AfterWork<'_>,
    ) -> Result<()> {
        let (fns, [luma, chroma]) = self.held.check_frame(frame)?;
        let (sources, rows) = ([luma.0, chroma.0], [luma.1, chroma.1]);
        // SAFETY: (1) of `planes_to_host`: the planes lie in the frame (this function's (1), its
        // layout's planes: `rows` of its row bytes at its pitches).
        let bytes = unsafe { planes_to_host(&mut self.pinned, rows, sources, stream, after) }?;
        self.held
            .write(fns, frame.layout, PlaneSource::Client(bytes))
    }
}

/// Copies each of two planes, `rows[k]` = (row bytes, rows) at `sources[k]` = (device address,
/// pitch), into `pinned[k]`, rows tightly packed, in `stream`'s order, both in one run on
/// cuda-gl's private stream, with `after` right after both copies, in that run (see
/// [`AfterWork`]); then waits for both copies (at most the [wait limit](crate::wait_limit)
/// together) and returns their bytes. What the staged modes of the GL and the wgpu video planes
/// do before their graphics API writes the planes.
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
    mut after: AfterWork<'_>,
) -> Result<[&'p [u8]; 2]> {
    for (pinned, (row, height)) in pinned.iter().zip(rows) {
        if Some(pinned.len()) != row.checked_mul(height) {
            return Err(Error::Internal {
                what: "a video plane's pinned memory of another size than the plane".into(),
            });
        }
    }
    let copy_both = |hosts: [(*mut std::ffi::c_void, usize); 2], p| {
        let mut copied = Ok(());
        for (((host, _), (row, height)), (src, pitch)) in hosts.into_iter().zip(rows).zip(sources) {
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
            // SAFETY: `copy_2d_async`'s (1): the copy writes `height` rows of `row` bytes,
            // tightly packed, which is its pinned memory's length (checked above, and `host`
            // is that memory); its source rows are this function's (1); (2): `p` is the
            // private stream of the bound context.
            copied = unsafe { result::array::copy_2d_async(&copy, p) };
            if copied.is_err() {
                break;
            }
        }
        // `after` whether the copies were queued or not; neither call panics.
        if let Some(after) = after.as_deref_mut() {
            after(p);
        }
        copied
    };
    let [luma, chroma] = pinned;
    // SAFETY: (1) of `copy_all_in_async`: each copy writes its pinned memory's bytes (checked
    // above), from this function's (1).
    unsafe {
        PinnedBuffer::copy_all_in_async(
            [&mut *luma, &mut *chroma],
            stream,
            "cuMemcpy2DAsync (not called)",
            copy_both,
        )
    }?;
    // Both copies are waited for before either plane is handed on: a timeout hands on nothing.
    let deadline = Instant::now() + wait_limit();
    let within = || deadline.saturating_duration_since(Instant::now());
    Ok([
        luma.as_slice_within(within())?,
        chroma.as_slice_within(within())?,
    ])
}
