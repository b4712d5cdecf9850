//! A plain 2D wgpu texture: what the wgpu examples render into (`wgpu_kit::Offscreen`), the
//! wgpu GPU tests paint and copy into, and the benchmark's wgpu groups copy between. Each
//! includes this file by path (`tests/gpu_suite/main.rs`,
//! `cuda-gl-bench/benches/interop/wgpu_present.rs`). Needs only wgpu.

/// A new `width` x `height` texture of `format` for `usage`, labelled `label`: one mip level,
/// one sample, one layer.
pub fn texture_2d(
    device: &wgpu::Device,
    (width, height): (u32, u32),
    format: wgpu::TextureFormat,
    usage: wgpu::TextureUsages,
    label: &str,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
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
    })
}
