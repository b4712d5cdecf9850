//! [`SharedFormat`]: the texel formats a [`SharedTexture`](super::SharedTexture) can have, each
//! with its wgpu, Vulkan and CUDA array names.

use super::WgpuError;
use crate::error::Result;
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
    /// 2 x 8-bit unsigned normalized (`uchar2`, `x * 2`): an NV12 frame's chroma plane.
    Rg8Unorm,
    /// 1 x 16-bit unsigned normalized (`unsigned short`, `x * 2`): a P010 frame's luma plane.
    /// Needs the device feature `TEXTURE_FORMAT_16BIT_NORM`.
    R16Unorm,
    /// 2 x 16-bit unsigned normalized (`ushort2`, `x * 4`): a P010 frame's chroma plane.
    /// Needs the device feature `TEXTURE_FORMAT_16BIT_NORM`.
    Rg16Unorm,
}

impl SharedFormat {
    /// Every format, for tests and for callers that list them.
    pub const ALL: [SharedFormat; 8] = [
        Self::Rgba8Unorm,
        Self::Rgba16Float,
        Self::Rgba32Float,
        Self::R8Unorm,
        Self::R32Float,
        Self::Rg8Unorm,
        Self::R16Unorm,
        Self::Rg16Unorm,
    ];

    /// The wgpu texture format.
    pub fn wgpu(self) -> wgpu::TextureFormat {
        match self {
            Self::Rgba8Unorm => wgpu::TextureFormat::Rgba8Unorm,
            Self::Rgba16Float => wgpu::TextureFormat::Rgba16Float,
            Self::Rgba32Float => wgpu::TextureFormat::Rgba32Float,
            Self::R8Unorm => wgpu::TextureFormat::R8Unorm,
            Self::R32Float => wgpu::TextureFormat::R32Float,
            Self::Rg8Unorm => wgpu::TextureFormat::Rg8Unorm,
            Self::R16Unorm => wgpu::TextureFormat::R16Unorm,
            Self::Rg16Unorm => wgpu::TextureFormat::Rg16Unorm,
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
            Self::Rg8Unorm => vk::Format::R8G8_UNORM,
            Self::R16Unorm => vk::Format::R16_UNORM,
            Self::Rg16Unorm => vk::Format::R16G16_UNORM,
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
            Self::Rg8Unorm => (F::CU_AD_FORMAT_UNSIGNED_INT8, 2),
            Self::R16Unorm => (F::CU_AD_FORMAT_UNSIGNED_INT16, 1),
            Self::Rg16Unorm => (F::CU_AD_FORMAT_UNSIGNED_INT16, 2),
        }
    }

    /// GL's internal format, pixel format and type: those wgpu-hal's GL backend gives
    /// [`SharedFormat::wgpu`] (its `describe_texture_format`), so that a texture cuda-gl makes
    /// is the one wgpu-hal would make (SAFETY G3 of the module docs).
    #[cfg(feature = "wgpu-gl")]
    pub(super) fn gl(self) -> (u32, u32, u32) {
        match self {
            Self::Rgba8Unorm => (gl::RGBA8, gl::RGBA, gl::UNSIGNED_BYTE),
            Self::Rgba16Float => (gl::RGBA16F, gl::RGBA, gl::HALF_FLOAT),
            Self::Rgba32Float => (gl::RGBA32F, gl::RGBA, gl::FLOAT),
            Self::R8Unorm => (gl::R8, gl::RED, gl::UNSIGNED_BYTE),
            Self::R32Float => (gl::R32F, gl::RED, gl::FLOAT),
            Self::Rg8Unorm => (gl::RG8, gl::RG, gl::UNSIGNED_BYTE),
            Self::R16Unorm => (gl::R16, gl::RED, gl::UNSIGNED_SHORT),
            Self::Rg16Unorm => (gl::RG16, gl::RG, gl::UNSIGNED_SHORT),
        }
    }

    /// Bytes per texel (a kernel's `surf2Dwrite` takes the x offset in bytes).
    pub fn bytes_per_texel(self) -> u32 {
        match self {
            Self::R8Unorm => 1,
            Self::Rg8Unorm | Self::R16Unorm => 2,
            Self::Rgba8Unorm | Self::R32Float | Self::Rg16Unorm => 4,
            Self::Rgba16Float => 8,
            Self::Rgba32Float => 16,
        }
    }

    /// The wgpu features a device needs for textures of this format (wgpu's own list):
    /// `TEXTURE_FORMAT_16BIT_NORM` for `R16Unorm` and `Rg16Unorm`, none for the others.
    pub fn required_features(self) -> wgpu::Features {
        self.wgpu().required_features()
    }

    /// Refuses `device` when it was opened without [`required_features`](Self::required_features)
    /// (wgpu would refuse the texture, or, for one made from Vulkan, not check it).
    ///
    /// # Errors
    /// [`WgpuError::MissingFeature`], naming `call`.
    pub(crate) fn check_features(self, device: &wgpu::Device, call: &'static str) -> Result<()> {
        let missing = self.required_features() - device.features();
        if missing.is_empty() {
            return Ok(());
        }
        Err(WgpuError::MissingFeature {
            call,
            feature: missing
                .iter_names()
                .map(|(name, _)| name)
                .collect::<Vec<_>>()
                .join(" | "),
            what: format!("a {:?} texture", self.wgpu()),
        }
        .into())
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
                sys::CUarray_format::CU_AD_FORMAT_HALF
                | sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT16 => 2,
                sys::CUarray_format::CU_AD_FORMAT_FLOAT => 4,
                other => panic!("unexpected CUDA format {other:?}"),
            };
            assert_eq!(element_bytes * channels, f.bytes_per_texel(), "{f:?}");
            let vk_bytes = match f.vk() {
                vk::Format::R8_UNORM => 1,
                vk::Format::R8G8_UNORM | vk::Format::R16_UNORM => 2,
                vk::Format::R8G8B8A8_UNORM | vk::Format::R32_SFLOAT | vk::Format::R16G16_UNORM => 4,
                vk::Format::R16G16B16A16_SFLOAT => 8,
                vk::Format::R32G32B32A32_SFLOAT => 16,
                other => panic!("unexpected Vulkan format {other:?}"),
            };
            assert_eq!(vk_bytes, f.bytes_per_texel(), "{f:?}");
        }
    }

    #[test]
    fn only_the_16_bit_normalized_formats_need_a_feature() {
        for f in SharedFormat::ALL {
            let wants = f.required_features();
            let sixteen = matches!(f, SharedFormat::R16Unorm | SharedFormat::Rg16Unorm);
            assert_eq!(!wants.is_empty(), sixteen, "{f:?}");
            if sixteen {
                assert_eq!(wants, wgpu::Features::TEXTURE_FORMAT_16BIT_NORM, "{f:?}");
            }
        }
    }
}
