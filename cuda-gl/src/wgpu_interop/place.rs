//! [`WgpuPlace`]: where a wgpu target's frames go, the same in every mode.

use super::format::SharedFormat;
use super::scope::scoped;
use crate::display::{DisplayError, Format, Layout};
use crate::error::Result;

/// The application's wgpu device and queue, the frames' layout (tightly packed), and the
/// texture the application samples, which every mode puts its frames on.
#[derive(Debug)]
pub(crate) struct WgpuPlace {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) layout: Layout,
    pub(crate) texture: wgpu::Texture,
}

impl WgpuPlace {
    /// The place of frames of `layout` (tightly packed) on `device` and `queue`, with its
    /// texture (which wgpu clears).
    ///
    /// # Errors
    /// [`DisplayError::TargetSize`] for a zero side or one over the device's
    /// `max_texture_dimension_2d`; [`WgpuError::OutOfMemory`](super::WgpuError::OutOfMemory)
    /// from creating the texture.
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
        let layout = layout.packed_as(layout.format())?;
        let texture = scoped(device, "wgpu::Device::create_texture", || {
            device.create_texture(&descriptor(layout))
        })?;
        Ok(WgpuPlace {
            device: device.clone(),
            queue: queue.clone(),
            layout,
            texture,
        })
    }

    /// The texture's format: the one of the layout's format.
    pub(crate) fn format(&self) -> SharedFormat {
        shared_format(self.layout.format())
    }
}

/// The shared format of `format`.
fn shared_format(format: Format) -> SharedFormat {
    match format {
        Format::Rgba8 => SharedFormat::Rgba8Unorm,
        Format::Rgba32F => SharedFormat::Rgba32Float,
        Format::R8 => SharedFormat::R8Unorm,
        Format::R32F => SharedFormat::R32Float,
    }
}

/// A descriptor of the texture the application samples (of `layout`'s size and format,
/// sampled, copied into and out of).
fn descriptor(layout: Layout) -> wgpu::TextureDescriptor<'static> {
    wgpu::TextureDescriptor {
        label: Some("cuda_gl::wgpu_interop::WgpuTarget"),
        size: wgpu::Extent3d {
            width: layout.width(),
            height: layout.height(),
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: shared_format(layout.format()).wgpu(),
        usage: wgpu::TextureUsages::TEXTURE_BINDING
            | wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
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
