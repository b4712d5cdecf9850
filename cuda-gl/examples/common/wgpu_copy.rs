//! The copy of a texture into a buffer that the host can map: what example 12's read-back
//! (`wgpu_kit::ReadBack`) and the wgpu GPU tests (`tests/wgpu_read/mod.rs`, which includes
//! this file by path) both record. Needs only wgpu.

/// Records a copy of all of `texture` (`COPY_SRC`, a format of one block size: 4 bytes per
/// texel for RGBA8, 1 for R8, ...) into a new buffer (`COPY_DST | MAP_READ`, labelled
/// `label`), its rows padded to `wgpu::COPY_BYTES_PER_ROW_ALIGNMENT`: the buffer and its bytes
/// per row.
pub fn copy_to_buffer(
    device: &wgpu::Device,
    encoder: &mut wgpu::CommandEncoder,
    texture: &wgpu::Texture,
    label: &str,
) -> (wgpu::Buffer, u32) {
    let (width, height) = (texture.width(), texture.height());
    // Formats of several block sizes (depth-stencil) are copied one aspect at a time, never here.
    let texel = texture.format().block_copy_size(None).unwrap_or(4);
    let padded = (width * texel).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
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
