//! The GL plane textures of the video group's `VideoPlanes` rows, and GL's use of them.

use crate::fast::use_texel;
use crate::gpu::Gpu;
use anyhow::{Context as _, Result};
use cuda_gl::TextureName;
use cuda_gl::display::Mode;
use cuda_gl::video::{VideoFormat, VideoLayout, VideoPlanes};
use gl_kit::Owned;

/// A GL plane texture: `internal` of `size`, one level.
fn plane_texture(internal: u32, (w, h): (u32, u32)) -> Result<Owned> {
    let name = gl_kit::texture::storage_of(gl::TEXTURE_2D, internal, 1, (w, h, 1))?;
    Ok(Owned::texture(name))
}

/// A pair of plane textures of the NV12 frame `layout`: R8 luma, RG8 chroma.
pub(super) fn plane_pair(layout: &VideoLayout) -> Result<[Owned; 2]> {
    Ok([
        plane_texture(gl::R8, layout.size())?,
        plane_texture(gl::RG8, layout.chroma_size())?,
    ])
}

/// `VideoPlanes` of NV12 in `mode` on `textures` (they claim them), a [`plane_pair`] of
/// `size`.
pub(super) fn planes_on(
    gpu: &Gpu,
    textures: &[Owned; 2],
    (w, h): (u32, u32),
    mode: Mode,
) -> Result<VideoPlanes> {
    let names = [textures[0].name(), textures[1].name()].map(TextureName);
    VideoPlanes::new(&gpu.ctx, names, VideoFormat::Nv12, Some(mode))
        .map(|(planes, _)| planes)
        .with_context(|| format!("VideoPlanes::new({w}x{h}, NV12, {mode})"))
}

/// The 1x1 sinks of the planes' GL use (R8, RG8).
pub(super) fn plane_sinks() -> Result<[Owned; 2]> {
    Ok([
        plane_texture(gl::R8, (1, 1))?,
        plane_texture(gl::RG8, (1, 1))?,
    ])
}

/// GL's use of the planes in `textures`, queued: one texel of each into the sink of its
/// format.
pub(super) fn copy_planes(textures: &[Owned; 2], sinks: &[Owned; 2]) {
    for (texture, sink) in textures.iter().zip(sinks) {
        use_texel(texture.name(), gl::TEXTURE_2D, 0, sink.name());
    }
}
