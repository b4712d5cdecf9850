//! How a frame's planes reach the wgpu video planes' textures, in each mode: interop (CUDA's
//! copies into the private shared textures, both in one hand-off, handed back to wgpu with its
//! copies into the textures) and staged (pinned host memory and `Queue::write_texture`).

use super::Plane;
use crate::error::Result;
use crate::memory::PinnedBuffer;
use crate::result;
use crate::stream::{AsStream, wait_limit};
use crate::wgpu_interop::interop_mode::copy_command;
use crate::wgpu_interop::scope::scoped;
use crate::wgpu_interop::texture::SharedTexture;
use cuda_gl_sys as sys;
use std::time::Instant;

/// Interop: each plane from `(address, pitch)` into its shared texture on `stream`, both in one
/// hand-off, whose acquire carries wgpu's copies of both into `textures`.
///
/// # Safety
/// 1. Each source holds its shared texture's rows at its pitch, in device memory of the
///    textures' context that stays allocated and unwritten until the work queued on `stream`
///    before this returns has run.
pub(super) unsafe fn upload_interop<S: AsStream>(
    shared: &mut [SharedTexture; 2],
    sources: &[wgpu::Texture; 2],
    textures: &[wgpu::Texture; 2],
    planes: [(sys::CUdeviceptr, usize); 2],
    device: &wgpu::Device,
    stream: &S,
) -> Result<()> {
    // Recorded before the hand-off, submitted after its acquire: wgpu resolves the copies'
    // states at that submit. A copy that wgpu refuses here (a texture the application
    // destroyed) hands nothing over.
    let copy = copy_command(
        device,
        &[(&sources[0], &textures[0]), (&sources[1], &textures[1])],
    )?;
    // SAFETY: (1) of `copy_in_together`: the shared textures are never handed out; only this
    // function submits uses of them (`copy`, which the hand-off submits after its acquire).
    // (2): (1).
    unsafe { SharedTexture::copy_in_together(shared, planes, stream, copy) }
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
    for ((slot, plane), (src, pitch)) in pinned.iter_mut().zip(planes).zip(sources) {
        let (row, rows) = (plane.row, plane.size.1 as usize);
        if slot.len() != plane.bytes {
            return Err(crate::Error::Internal {
                what: "a wgpu video plane's pinned buffer of another size than the plane".into(),
            });
        }
        // SAFETY: (1) of `copy_in_async`: the copy writes the buffer's `row * rows` bytes
        // (checked), rows tightly packed, into the pinned host memory it is given; its source
        // rows are this function's (1).
        unsafe {
            slot.copy_in_async(stream, "cuMemcpy2DAsync (not called)", |host, _, p| {
                let copy = sys::CUDA_MEMCPY2D {
                    srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                    srcDevice: src,
                    srcPitch: pitch,
                    dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
                    dstHost: host,
                    dstPitch: row,
                    WidthInBytes: row,
                    Height: rows,
                    ..Default::default()
                };
                result::array::copy_2d_async(&copy, p)
            })
        }?;
    }
    // Both copies are waited for before either plane is written: a timeout writes nothing.
    let deadline = Instant::now() + wait_limit();
    let within = || deadline.saturating_duration_since(Instant::now());
    let bytes = [
        pinned[0].as_slice_within(within())?,
        pinned[1].as_slice_within(within())?,
    ];
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
