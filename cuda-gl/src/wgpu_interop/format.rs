//! [`SharedFormat`]: the texel formats a [`SharedTexture`](super::SharedTexture) can have, each
//! with its wgpu, Vulkan and CUDA array names.

use ash::vk;
use cuda_gl_sys as sys;

/// The format of a [`SharedTexture`](super::SharedTexture): one format, three names (wgpu's,
/// Vulkan's, and the CUDA array's element type and channel count), so that the image wgpu
/// samples and the array CUDA writes agree texel for texel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SharedFormat {
    /// 4 x 8-bit unsigned normalized (`uchar4` in a kernel, `surf2Dwrite` at `x * 4`).
    Rgba8Unorm,
    /// 4 x 16-bit float (`ushort4` holding halves in a kernel, `x * 8`).
    Rgba16Float,
    /// 4 x 32-bit float (`float4`, `x * 16`).
    Rgba32Float,
    /// 1 x 8-bit unsigned normalized (`unsigned char`, `x`).
    R8Unorm,
    /// 1 x 32-bit float (`float`, `x * 4`).
    R32Float,
}

impl SharedFormat {
    /// Every format, for tests and for callers that list them.
    pub const ALL: [SharedFormat; 5] = [
        Self::Rgba8Unorm,
        Self::Rgba16Float,
        Self::Rgba32Float,
        Self::R8Unorm,
        Self::R32Float,
    ];

    /// The wgpu texture format.
    pub fn wgpu(self) -> wgpu::TextureFormat {
        match self {
            Self::Rgba8Unorm => wgpu::TextureFormat::Rgba8Unorm,
            Self::Rgba16Float => wgpu::TextureFormat::Rgba16Float,
            Self::Rgba32Float => wgpu::TextureFormat::Rgba32Float,
            Self::R8Unorm => wgpu::TextureFormat::R8Unorm,
            Self::R32Float => wgpu::TextureFormat::R32Float,
        }
    }

    /// The Vulkan format, the one wgpu-hal maps [`SharedFormat::wgpu`] to.
    pub(super) fn vk(self) -> vk::Format {
        match self {
            Self::Rgba8Unorm => vk::Format::R8G8B8A8_UNORM,
            Self::Rgba16Float => vk::Format::R16G16B16A16_SFLOAT,
            Self::Rgba32Float => vk::Format::R32G32B32A32_SFLOAT,
            Self::R8Unorm => vk::Format::R8_UNORM,
            Self::R32Float => vk::Format::R32_SFLOAT,
        }
    }

    /// The CUDA array's element format and channel count.
    pub(super) fn cuda(self) -> (sys::CUarray_format, u32) {
        use sys::CUarray_format as F;
        match self {
            Self::Rgba8Unorm => (F::CU_AD_FORMAT_UNSIGNED_INT8, 4),
            Self::Rgba16Float => (F::CU_AD_FORMAT_HALF, 4),
            Self::Rgba32Float => (F::CU_AD_FORMAT_FLOAT, 4),
            Self::R8Unorm => (F::CU_AD_FORMAT_UNSIGNED_INT8, 1),
            Self::R32Float => (F::CU_AD_FORMAT_FLOAT, 1),
        }
    }

    /// Bytes per texel (a kernel's `surf2Dwrite` takes the x offset in bytes).
    pub fn bytes_per_texel(self) -> u32 {
        match self {
            Self::R8Unorm => 1,
            Self::Rgba8Unorm | Self::R32Float => 4,
            Self::Rgba16Float => 8,
            Self::Rgba32Float => 16,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_three_names_of_each_format_agree_on_its_size() {
        for f in SharedFormat::ALL {
            assert_eq!(
                f.wgpu().block_copy_size(None),
                Some(f.bytes_per_texel()),
                "{f:?}"
            );
            let (element, channels) = f.cuda();
            let element_bytes = match element {
                sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8 => 1,
                sys::CUarray_format::CU_AD_FORMAT_HALF => 2,
                sys::CUarray_format::CU_AD_FORMAT_FLOAT => 4,
                other => panic!("unexpected CUDA format {other:?}"),
            };
            assert_eq!(element_bytes * channels, f.bytes_per_texel(), "{f:?}");
            let vk_bytes = match f.vk() {
                vk::Format::R8_UNORM => 1,
                vk::Format::R8G8B8A8_UNORM | vk::Format::R32_SFLOAT => 4,
                vk::Format::R16G16B16A16_SFLOAT => 8,
                vk::Format::R32G32B32A32_SFLOAT => 16,
                other => panic!("unexpected Vulkan format {other:?}"),
            };
            assert_eq!(vk_bytes, f.bytes_per_texel(), "{f:?}");
        }
    }
}
