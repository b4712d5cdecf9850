//! [`WgpuPlace`]: where a wgpu target's frames go, the same in every mode.

use super::format::SharedFormat;
use crate::display::{DisplayError, Format, Layout};
use crate::error::Result;

/// The application's wgpu device and queue, and the frames' layout (tightly packed): what a
/// wgpu mode makes its texture with (each mode owns its texture).
#[derive(Debug)]
pub(crate) struct WgpuPlace {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) layout: Layout,
}

impl WgpuPlace {
    /// The place of frames of `layout` (tightly packed) on `device` and `queue`.
    ///
    /// # Errors
    /// [`DisplayError::TargetSize`] for a zero side or one over the device's
    /// `max_texture_dimension_2d`.
    pub(crate) fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        layout: Layout,
    ) -> Result<WgpuPlace> {
        let max = device.limits().max_texture_dimension_2d;
        let (width, height) = layout.size();
        let fits = |n: u32| n > 0 && n <= max;
        if !(fits(width) && fits(height)) {
            return Err(DisplayError::TargetSize {
                width,
                height,
                max: i32::try_from(max).unwrap_or(i32::MAX),
            }
            .into());
        }
        Ok(WgpuPlace {
            device: device.clone(),
            queue: queue.clone(),
            layout: layout.packed_as(layout.format())?,
        })
    }

    /// The texture's format: the one of the layout's format.
    pub(crate) fn format(&self) -> SharedFormat {
        match self.layout.format() {
            Format::Rgba8 => SharedFormat::Rgba8Unorm,
            Format::Rgba32F => SharedFormat::Rgba32Float,
            Format::R8 => SharedFormat::R8Unorm,
            Format::R32F => SharedFormat::R32Float,
        }
    }

    /// A descriptor of the texture of a mode that makes its own (of the layout's size and
    /// format, sampled, copied into and out of).
    pub(crate) fn descriptor(&self) -> wgpu::TextureDescriptor<'static> {
        wgpu::TextureDescriptor {
            label: Some("cuda_gl::wgpu_interop::WgpuTarget"),
            size: wgpu::Extent3d {
                width: self.layout.width(),
                height: self.layout.height(),
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: self.format().wgpu(),
            usage: wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        }
    }
}

/// Where a copy into or out of `texture` starts: level 0, row `first`, column 0.
pub(crate) fn from_row(texture: &wgpu::Texture, first: u32) -> wgpu::TexelCopyTextureInfo<'_> {
    wgpu::TexelCopyTextureInfo {
        texture,
        mip_level: 0,
        origin: wgpu::Origin3d {
            x: 0,
            y: first,
            z: 0,
        },
        aspect: wgpu::TextureAspect::All,
    }
}
