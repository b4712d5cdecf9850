//! A wgpu texture's pixels read back to the host: wgpu copies the texture into a buffer, which
//! is mapped once the copy is done (at most 10 s).

use super::WgpuError;
use super::device::ready;
use super::place::WgpuPlace;
use crate::error::{Error, Result};
use crate::stream::DEFAULT_WAIT_LIMIT;

/// The pixels of `texture` (of `place`'s layout), rows tightly packed, row 0 first, after the
/// work submitted on `place`'s queue so far.
///
/// # Errors
/// [`Error::Timeout`] when wgpu has not finished the copy within 10 s;
/// [`WgpuError::Refused`] when wgpu refuses the copy or the map.
pub(super) fn read_texture(place: &WgpuPlace, texture: &wgpu::Texture) -> Result<Vec<u8>> {
    let layout = place.layout;
    let (row, height) = (layout.row_bytes(), layout.height());
    let refused = |message: String| -> Error {
        WgpuError::Refused {
            call: "WgpuTarget::read_pixels",
            message,
        }
        .into()
    };
    // Rows of a texture wgpu made, so within `u32`.
    let padded = (row as u32).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let scope = place.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let buffer = place.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("cuda_gl::wgpu_interop::WgpuTarget::read_pixels"),
        size: u64::from(padded) * u64::from(height),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = place.device.create_command_encoder(&Default::default());
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
    let submitted = place.queue.submit([encoder.finish()]);
    let (tx, rx) = std::sync::mpsc::channel();
    buffer
        .slice(..)
        .map_async(wgpu::MapMode::Read, move |r| drop(tx.send(r)));
    if let Some(e) = ready(scope.pop()).flatten() {
        return Err(refused(e.to_string()));
    }
    place
        .device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submitted),
            timeout: Some(DEFAULT_WAIT_LIMIT),
        })
        .map_err(|e| match e {
            wgpu::PollError::Timeout => Error::Timeout {
                what: "wgpu's copy of a display texture for read_pixels".into(),
                timeout: DEFAULT_WAIT_LIMIT,
            },
            e => refused(e.to_string()),
        })?;
    match rx.try_recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(refused(e.to_string())),
        Err(_) => return Err(refused("the map did not complete".into())),
    }
    let mapped = buffer
        .slice(..)
        .get_mapped_range()
        .map_err(|e| refused(e.to_string()))?;
    let mut pixels = Vec::with_capacity(row * height as usize);
    for line in mapped.chunks(padded as usize) {
        pixels.extend_from_slice(&line[..row]);
    }
    Ok(pixels)
}
