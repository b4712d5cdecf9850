//! Textures the wgpu tests write and compare byte for byte: made, filled, and the difference
//! between what came back and what was written told (the blit tests of `gpu_suite` and
//! `blit_lavapipe`).

/// A `size` texture of `format` with `usage`.
pub fn texture(
    device: &wgpu::Device,
    size: (u32, u32),
    format: wgpu::TextureFormat,
    usage: wgpu::TextureUsages,
) -> wgpu::Texture {
    super::wgpu_texture::texture_2d(device, size, format, usage, "wgpu_read::texels")
}

/// `bytes` written into all of `texture` (tightly packed rows), submitted.
pub fn fill(queue: &wgpu::Queue, texture: &wgpu::Texture, bytes: &[u8]) {
    let texel = texture.format().block_copy_size(None).unwrap();
    queue.write_texture(
        texture.as_image_copy(),
        bytes,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(texture.width() * texel),
            rows_per_image: None,
        },
        texture.size(),
    );
    queue.submit([]);
}

/// Why `got` is not `want` byte for byte (texels of `format`), or `None`: how many texels
/// differ, the first, and for float formats whether every difference is a NaN that came out as
/// another NaN (a payload the shader path did not keep).
pub fn mismatch(format: wgpu::TextureFormat, got: &[u8], want: &[u8]) -> Option<String> {
    if got == want {
        return None;
    }
    if got.len() != want.len() {
        return Some(format!("{} bytes, want {}", got.len(), want.len()));
    }
    let texel = format.block_copy_size(None).unwrap() as usize;
    let at = |bytes: &[u8], i: usize| bytes[i * texel..][..texel].to_vec();
    let bad: Vec<usize> = (0..want.len() / texel)
        .filter(|&i| at(got, i) != at(want, i))
        .collect();
    let nan = |bytes: Vec<u8>| match format {
        wgpu::TextureFormat::Rgba32Float | wgpu::TextureFormat::R32Float => bytes
            .chunks_exact(4)
            .any(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_nan()),
        wgpu::TextureFormat::Rgba16Float => bytes
            .chunks_exact(2)
            .any(|b| u16::from_le_bytes([b[0], b[1]]) & 0x7fff > 0x7c00),
        _ => false,
    };
    let only_nans = bad.iter().all(|&i| nan(at(got, i)) && nan(at(want, i)));
    Some(format!(
        "{} of {} texels differ; the first, texel {}: got {:02x?}, want {:02x?}{}",
        bad.len(),
        want.len() / texel,
        bad[0],
        at(got, bad[0]),
        at(want, bad[0]),
        if only_nans {
            " (every difference is a NaN's payload)"
        } else {
            ""
        }
    ))
}
