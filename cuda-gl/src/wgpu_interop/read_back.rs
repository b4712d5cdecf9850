//! A wgpu texture's pixels read back to the host: wgpu copies the texture into a buffer, in
//! bands of rows that fit the device's largest buffer, and each band is mapped once its copy
//! is done (at most 10 s in all).

use super::WgpuError;
use super::place::{WgpuPlace, from_row};
use super::scope::{scoped, wait_for_submission};
use crate::error::{Error, Result};
use crate::stream::DEFAULT_WAIT_LIMIT;
use std::time::Instant;

const CALL: &str = "WgpuTarget::read_pixels";

/// The pixels of `place`'s texture, rows tightly packed, row 0 first, after the work submitted
/// on `place`'s queue so far.
///
/// # Errors
/// [`Error::Timeout`] when wgpu has not finished the copies within 10 s;
/// [`WgpuError::Refused`] when wgpu refuses a copy or a map; [`WgpuError::OutOfMemory`].
pub(super) fn read_texture(place: &WgpuPlace) -> Result<Vec<u8>> {
    let layout = place.layout;
    let (row, height) = (layout.row_bytes(), layout.height());
    // Rows of a texture wgpu made, so within `u32`.
    let padded = (row as u32).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let most = place.device.limits().max_buffer_size / u64::from(padded);
    let rows = u32::try_from(most).unwrap_or(u32::MAX).clamp(1, height);
    let deadline = Instant::now() + DEFAULT_WAIT_LIMIT;
    let mut pixels = Vec::with_capacity(row * height as usize);
    let mut first = 0;
    while first < height {
        let count = rows.min(height - first);
        read_band(place, (first, count), padded, deadline, &mut pixels)?;
        first += count;
    }
    Ok(pixels)
}

/// Appends rows `first..first + count` of `place`'s texture to `pixels` (rows of `padded`
/// bytes in the buffer), waiting until `deadline`.
fn read_band(
    place: &WgpuPlace,
    (first, count): (u32, u32),
    padded: u32,
    deadline: Instant,
    pixels: &mut Vec<u8>,
) -> Result<()> {
    let refused = |message: String| -> Error {
        WgpuError::Refused {
            call: CALL,
            message,
        }
        .into()
    };
    let (buffer, submitted, mapped) = scoped(&place.device, CALL, || {
        let buffer = place.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("cuda_gl::wgpu_interop::WgpuTarget::read_pixels"),
            size: u64::from(padded) * u64::from(count),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut encoder = place.device.create_command_encoder(&Default::default());
        encoder.copy_texture_to_buffer(
            from_row(&place.texture, first),
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded),
                    rows_per_image: Some(count),
                },
            },
            wgpu::Extent3d {
                width: place.texture.width(),
                height: count,
                depth_or_array_layers: 1,
            },
        );
        let submitted = place.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        buffer
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |r| drop(tx.send(r)));
        (buffer, submitted, rx)
    })?;
    let timeout = deadline.saturating_duration_since(Instant::now());
    wait_for_submission(&place.device, submitted, timeout, CALL)?;
    match mapped.try_recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(refused(e.to_string())),
        Err(_) => return Err(refused("the map did not complete".into())),
    }
    let bytes = buffer
        .slice(..)
        .get_mapped_range()
        .map_err(|e| refused(e.to_string()))?;
    let row = place.layout.row_bytes();
    for line in bytes.chunks(padded as usize) {
        pixels.extend_from_slice(&line[..row]);
    }
    Ok(())
}
