//! A wgpu texture's texels read back to the host (a target's `read_pixels`, the video planes'
//! `read_planes`): wgpu copies the texture into a buffer, in bands of rows that fit the device's
//! largest buffer, and each band is mapped once its copy is done (at most the [wait
//! limit](crate::wait_limit) (10 s by default) in all, the map's callback included).

use super::WgpuError;
use super::place::{WgpuPlace, from_row};
use super::scope::{scoped, wait_for_submission};
use crate::error::{Error, Result};
use crate::stream::wait_limit;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// A texture to read back: its device and queue, the texture (one level, of a format whose
/// texels are `row / width` bytes) and the bytes of one of its rows, and the call that reads
/// it (for its errors and the buffer's label).
pub(super) struct Readable<'a> {
    pub device: &'a wgpu::Device,
    pub queue: &'a wgpu::Queue,
    pub texture: &'a wgpu::Texture,
    /// The bytes of one row: width x bytes per texel.
    pub row: usize,
    pub call: &'static str,
}

impl<'a> Readable<'a> {
    /// A target's texture, read by `WgpuTarget::read_pixels`.
    pub(super) fn place(place: &'a WgpuPlace) -> Readable<'a> {
        Readable {
            device: &place.device,
            queue: &place.queue,
            texture: &place.texture,
            row: place.layout.row_bytes(),
            call: "WgpuTarget::read_pixels",
        }
    }
}

/// The texels of `place`'s texture, rows tightly packed, row 0 first, after the work submitted
/// on its queue so far.
///
/// # Errors
/// [`Error::Timeout`] when wgpu has not finished the copies within the
/// [wait limit](crate::wait_limit);
/// [`WgpuError::Refused`] when wgpu refuses a copy or a map; [`WgpuError::OutOfMemory`].
pub(super) fn read_texture(place: &Readable<'_>) -> Result<Vec<u8>> {
    let (row, height) = (place.row, place.texture.height());
    // Rows of a texture wgpu made, so within `u32`.
    let padded = (row as u32).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let most = place.device.limits().max_buffer_size / u64::from(padded);
    let rows = u32::try_from(most).unwrap_or(u32::MAX).clamp(1, height);
    let limit = wait_limit();
    let deadline = (Instant::now() + limit, limit);
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
/// bytes in the buffer), waiting until `deadline`, the end of the whole read's `limit`.
fn read_band(
    place: &Readable<'_>,
    (first, count): (u32, u32),
    padded: u32,
    (deadline, limit): (Instant, Duration),
    pixels: &mut Vec<u8>,
) -> Result<()> {
    let refused = |message: String| -> Error {
        WgpuError::Refused {
            call: place.call,
            message,
        }
        .into()
    };
    let (buffer, submitted, mapped) = scoped(place.device, place.call, || {
        let buffer = place.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(place.call),
            size: u64::from(padded) * u64::from(count),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut encoder = place.device.create_command_encoder(&Default::default());
        encoder.copy_texture_to_buffer(
            from_row(place.texture, first),
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
    wait_for_submission(place.device, submitted, timeout, place.call)?;
    // The map's callback may not have run yet although the copy is done: a poll of another
    // thread's (the application's, or a second read through `&self`) that retired the copy
    // took the callback, and wgpu-core runs it only once that poll has let go of its locks,
    // after this thread's poll may have returned. So it is waited for, to the same deadline.
    let left = deadline.saturating_duration_since(Instant::now());
    match mapped.recv_timeout(left) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(refused(e.to_string())),
        Err(RecvTimeoutError::Timeout) => {
            return Err(Error::Timeout {
                what: format!("wgpu's map of the read-back buffer for {}", place.call),
                timeout: limit,
            });
        }
        Err(RecvTimeoutError::Disconnected) => {
            return Err(refused("wgpu dropped the map's callback unrun".into()));
        }
    }
    let bytes = buffer
        .slice(..)
        .get_mapped_range()
        .map_err(|e| refused(e.to_string()))?;
    let row = place.row;
    for line in bytes.chunks(padded as usize) {
        pixels.extend_from_slice(&line[..row]);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
