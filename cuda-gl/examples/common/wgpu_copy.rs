//! The copy of a texture into a buffer that the host can map: what example 12's read-back
//! (`wgpu_kit::ReadBack`) and the wgpu GPU tests (`tests/gpu_suite/wgpu_interop.rs`, which
//! includes this file by path) both record. Needs only wgpu.

/// Records a copy of all of `texture` (4 bytes per texel, `COPY_SRC`) into a new buffer
/// (`COPY_DST | MAP_READ`, labelled `label`), its rows padded to
/// `wgpu::COPY_BYTES_PER_ROW_ALIGNMENT`: the buffer and its bytes per row.
pub fn copy_to_buffer(
    device: &wgpu::Device,
    encoder: &mut wgpu::CommandEncoder,
    texture: &wgpu::Texture,
    label: &str,
) -> (wgpu::Buffer, u32) {
    let (width, height) = (texture.width(), texture.height());
    let padded = (width * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: u64::from(padded) * u64::from(height),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: Some(height),
            },
        },
        texture.size(),
    );
    (buffer, padded)
}
