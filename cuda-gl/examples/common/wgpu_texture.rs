//! A plain 2D wgpu texture (or its descriptor) and a render pass's colour attachment that clears
//! it: what the wgpu examples render into (`wgpu_kit`'s `Offscreen` and `Blit`, and
//! `egui_wgpu_paint`, which refer to this file as `crate::wgpu_texture`), the wgpu GPU tests
//! paint and copy into, and the benchmark's wgpu groups copy between (and describe the texture
//! of gyroflow's way with). Each includes this file by path at its crate's
//! root (examples 12 and 14, `tests/gpu_suite/main.rs`,
//! `cuda-gl-bench/benches/interop/wgpu_present.rs`). Needs only wgpu.
// Each includer uses a part of it (the benchmark draws no pass).
#![allow(dead_code)]

/// A new `width` x `height` texture of `format` for `usage`, labelled `label`: one mip level,
/// one sample, one layer.
pub fn texture_2d(
    device: &wgpu::Device,
    size: (u32, u32),
    format: wgpu::TextureFormat,
    usage: wgpu::TextureUsages,
    label: &str,
) -> wgpu::Texture {
    device.create_texture(&texture_2d_desc(size, format, usage, label))
}

/// The descriptor [`texture_2d`] makes its texture of.
pub fn texture_2d_desc(
    (width, height): (u32, u32),
    format: wgpu::TextureFormat,
    usage: wgpu::TextureUsages,
    label: &str,
) -> wgpu::TextureDescriptor<'_> {
    wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    }
}

/// A colour attachment of all of `view`, cleared to black before the pass draws, the pass's
/// output stored.
pub fn cleared_to_black(view: &wgpu::TextureView) -> wgpu::RenderPassColorAttachment<'_> {
    wgpu::RenderPassColorAttachment {
        view,
        depth_slice: None,
        resolve_target: None,
        ops: wgpu::Operations {
            load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
            store: wgpu::StoreOp::Store,
        },
    }
}
