//! How a frame's planes reach the wgpu video planes' textures, in each mode: interop (CUDA's
//! copies into the private shared textures, both in one hand-off, handed back to wgpu with its
//! copies into the textures) and staged (pinned host memory and `Queue::write_texture`).

use super::Plane;
use crate::error::Result;
use crate::memory::PinnedBuffer;
use crate::stream::AsStream;
use crate::video::planes_to_host;
use crate::wgpu_interop::blit::{Blit, BlitKind, BlitPair};
use crate::wgpu_interop::scope::{check_alive, scoped};
use crate::wgpu_interop::texture::SharedTexture;
use cuda_gl_sys as sys;

/// The wgpu calls of the planes' writes, for their errors.
const BLIT_CALL: &str = "wgpu::Device::create_render_pipeline, create_compute_pipeline or create_bind_group (a \
     video plane's blit)";
const WRITE_CALL: &str = "wgpu::CommandEncoder (a video plane's blit or copy_texture_to_texture)";

/// How wgpu writes each plane's texture from its shared texture at every interop upload: a
/// shader blit where one writes the plane's format (as a target's present does: wgpu's
/// `copy_texture_to_texture` ran at ~50 GB/s on an H200, driver 580.159.04, 2026-12-06, see
/// `blit.rs`), else wgpu's copy. Both go in one command buffer, which the planes' hand-back
/// submits after its acquire.
#[derive(Debug)]
pub(super) struct PlaneWrites {
    blits: [Option<(Blit, BlitPair)>; 2],
}

impl PlaneWrites {
    /// The blit kind of each plane of `planes` on `device` (`None`: wgpu's copy): what the
    /// textures the application samples need in their usages beside their own.
    pub(super) fn kinds(device: &wgpu::Device, planes: [&Plane; 2]) -> [Option<BlitKind>; 2] {
        let (features, limits) = (device.features(), device.limits());
        planes.map(|p| BlitKind::preferred(p.format.wgpu(), features, &limits, p.size))
    }

    /// The writes of `sources` (the shared textures) into `textures` (made with the usages
    /// `kinds` need), by each plane's kind.
    ///
    /// # Errors
    /// [`WgpuError::Refused`](crate::wgpu_interop::WgpuError::Refused) or
    /// [`WgpuError::OutOfMemory`](crate::wgpu_interop::WgpuError::OutOfMemory) from making a
    /// blit's pipeline or bind group.
    pub(super) fn new(
        device: &wgpu::Device,
        sources: &[wgpu::Texture; 2],
        textures: &[wgpu::Texture; 2],
        kinds: [Option<BlitKind>; 2],
    ) -> Result<PlaneWrites> {
        let mut blits = [None, None];
        for (((slot, kind), source), texture) in
            blits.iter_mut().zip(kinds).zip(sources).zip(textures)
        {
            let Some(kind) = kind else { continue };
            let blit = scoped(device, BLIT_CALL, || {
                Blit::new(device, texture.format(), kind)
            })?;
            let pair = scoped(device, BLIT_CALL, || blit.pair(device, source, texture))?;
            *slot = Some((blit, pair));
        }
        Ok(PlaneWrites { blits })
    }

    /// The command buffer of one upload's writes, recorded under error scopes; a texture the
    /// application destroyed is refused first ([`check_alive`]: wgpu 30 would take the pass or
    /// the copy and refuse it only at the hand-back's submit).
    fn command(
        &self,
        device: &wgpu::Device,
        sources: &[wgpu::Texture; 2],
        textures: &[wgpu::Texture; 2],
    ) -> Result<wgpu::CommandBuffer> {
        for texture in sources.iter().chain(textures) {
            check_alive(texture, WRITE_CALL)?;
        }
        scoped(device, WRITE_CALL, || {
            let mut encoder = device.create_command_encoder(&Default::default());
            for ((blit, source), texture) in self.blits.iter().zip(sources).zip(textures) {
                match blit {
                    Some((blit, pair)) => blit.encode(&mut encoder, pair),
                    None => encoder.copy_texture_to_texture(
                        source.as_image_copy(),
                        texture.as_image_copy(),
                        texture.size(),
                    ),
                }
            }
            encoder.finish()
        })
    }
}

/// Interop: each plane from `(address, pitch)` into its shared texture on `stream`, both in one
/// hand-off, whose acquire carries wgpu's writes (`writes`) of both into `textures`.
///
/// # Safety
/// 1. Each source holds its shared texture's rows at its pitch, in device memory of the
///    textures' context that stays allocated and unwritten until the work queued on `stream`
///    before this returns has run.
pub(super) unsafe fn upload_interop<S: AsStream>(
    (shared, sources, writes): (&mut [SharedTexture; 2], &[wgpu::Texture; 2], &PlaneWrites),
    textures: &[wgpu::Texture; 2],
    planes: [(sys::CUdeviceptr, usize); 2],
    device: &wgpu::Device,
    stream: &S,
) -> Result<()> {
    // Recorded before the hand-off, submitted after its acquire: wgpu resolves the writes'
    // states at that submit. A write that wgpu refuses here (a texture the application
    // destroyed) hands nothing over.
    let command = writes.command(device, sources, textures)?;
    // SAFETY: (1) of `copy_in_together`: the shared textures are never handed out; only this
    // function submits uses of them (`command`, which the hand-off submits after its acquire).
    // (2): (1).
    unsafe { SharedTexture::copy_in_together(shared, planes, stream, command) }
}

/// Staged: each plane from `(address, pitch)` into its pinned buffer on `stream`, then, once both
/// copies have finished (at most the [wait limit](crate::wait_limit), 10 s by default), handed to
/// `write_texture` into its texture.
///
/// # Safety
/// 1. Each source holds its plane's rows at its pitch, in device memory of the pinned buffers'
///    context that stays allocated until the work queued on `stream` before this returns has
///    run.
pub(super) unsafe fn upload_staged<S: AsStream>(
    pinned: &mut [PinnedBuffer<u8>; 2],
    planes: &[Plane; 2],
    textures: &[wgpu::Texture; 2],
    sources: [(sys::CUdeviceptr, usize); 2],
    (device, queue): (&wgpu::Device, &wgpu::Queue),
    stream: &S,
) -> Result<()> {
    let rows = planes.each_ref().map(|p| (p.row, p.size.1 as usize));
    // SAFETY: (1) of `planes_to_host`: this function's (1).
    let bytes = unsafe { planes_to_host(pinned, rows, sources, stream, None) }?;
    let rows = planes.map(|p| u32::try_from(p.row));
    scoped(device, "wgpu::Queue::write_texture", || {
        for ((bytes, row), texture) in bytes.into_iter().zip(rows).zip(textures) {
            let Ok(row) = row else {
                return Err(crate::Error::Internal {
                    what: "a wgpu video plane's row of more than u32::MAX bytes".into(),
                });
            };
            queue.write_texture(
                texture.as_image_copy(),
                bytes,
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(row),
                    rows_per_image: None,
                },
                texture.size(),
            );
        }
        Ok(())
    })?
}
