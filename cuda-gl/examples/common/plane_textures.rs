//! The plane textures of examples 13 and 15: a frame's luma and chroma planes in two GL
//! textures of the program's (R8 + RG8 for NV12, R16 + RG16 for P010), written by
//! `video::VideoPlanes`, for a shader of one's own that converts the planes itself; and the
//! check that they hold the frame's rows byte for byte.

use crate::common::{self, Mismatch};
use anyhow::{Context as _, Result, bail};
use cuda_gl::video::{VideoFormat, VideoLayout, VideoPlanes};
use cuda_gl::{Context, TextureName};
use gl_kit::Owned;

/// A stream's two plane textures and the [`VideoPlanes`] that writes them (dropped first: the
/// textures are deleted only after).
pub struct PlaneTextures {
    /// What writes the textures: the examples upload each frame through it.
    pub planes: VideoPlanes,
    textures: [Owned; 2],
    layout: VideoLayout,
}

impl PlaneTextures {
    /// The luma and chroma textures of `layout`'s frames (immutable storage of the planes'
    /// formats), and the planes in the first mode that works here (its report printed).
    ///
    /// # Errors
    /// GL's errors; `VideoPlanes::new`'s; unless the planes are staged on Mesa's GL under
    /// `CUDA_GL_REQUIRE_MESA=1`.
    pub fn new(ctx: &std::sync::Arc<Context>, layout: &VideoLayout) -> Result<PlaneTextures> {
        let formats = match layout.format() {
            VideoFormat::Nv12 => [gl::R8, gl::RG8],
            VideoFormat::P010 => [gl::R16, gl::RG16],
            other => bail!("no plane textures for {other:?} in this example"),
        };
        let sizes = [layout.size(), layout.chroma_size()];
        let texture = |k: usize| -> Result<Owned> {
            let (w, h) = sizes[k];
            let name = gl_kit::texture::storage_of(gl::TEXTURE_2D, formats[k], 1, (w, h, 1))?;
            Ok(Owned::texture(name))
        };
        let textures = [texture(0)?, texture(1)?];
        let names = [textures[0].name(), textures[1].name()].map(TextureName);
        let (planes, report) = VideoPlanes::new(ctx, names, layout.format(), None)?;
        println!("{report}");
        common::check_required_mesa(&report)?;
        Ok(PlaneTextures {
            planes,
            textures,
            layout: *layout,
        })
    }

    /// Compares both textures with the planes of the frame `bytes` (of the layout, as
    /// downloaded): each texture row with its plane row. Returns the bytes compared.
    ///
    /// # Errors
    /// [`Mismatch`] at the first plane that differs; GL's errors.
    pub fn check(&self, bytes: &[u8], what: &str) -> Result<usize> {
        let layout = &self.layout;
        let sample = layout.format().bytes_per_sample();
        let planes = [
            ("luma", 0, layout.luma_pitch(), layout.size(), 1),
            (
                "chroma",
                layout.chroma_offset(),
                layout.chroma_pitch(),
                layout.chroma_size(),
                2,
            ),
        ];
        let mut compared = 0;
        for ((plane, offset, pitch, (w, h), channels), texture) in
            planes.into_iter().zip(&self.textures)
        {
            let row = w as usize * channels * sample;
            let held = gl_kit::readback::plane(texture.name(), 0, channels, sample)?;
            if held.len() != row * h as usize {
                bail!(Mismatch(format!(
                    "{what}: the {plane} texture holds {} bytes, not the plane's {}",
                    held.len(),
                    row * h as usize
                )));
            }
            for y in 0..h as usize {
                let at = offset + y * pitch;
                let want = bytes
                    .get(at..at + row)
                    .context("a plane row outside the frame")?;
                if &held[y * row..(y + 1) * row] != want {
                    bail!(Mismatch(format!(
                        "{what}: the {plane} texture's row {y} differs from the plane's"
                    )));
                }
            }
            compared += held.len();
        }
        Ok(compared)
    }
}
