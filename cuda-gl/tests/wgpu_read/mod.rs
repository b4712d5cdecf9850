//! A wgpu texture's texels read back to the host, for the wgpu tests (the GPU suite's modules
//! and `not_nvidia_vulkan`, which include this file with `#[path]`): wgpu copies the texture
//! into a buffer (`examples/common/wgpu_copy.rs`, which example 12 records too), the buffer is
//! mapped once the copy is done, and the rows come back tightly packed.
#![cfg(feature = "wgpu")]
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod texels;
#[path = "../../examples/common/wgpu_copy.rs"]
mod wgpu_copy;
#[path = "../../examples/common/wgpu_texture.rs"]
pub mod wgpu_texture;

use std::time::Duration;

/// The texels of `texture` (one level, `COPY_SRC`, a format of one block size: every format
/// the tests read), rows tightly packed, row 0 first, after the work submitted on `queue` so
/// far (waits at most 30 s).
pub fn read_texture(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    texture: &wgpu::Texture,
) -> Vec<u8> {
    submit_read(device, queue, texture).bytes(device)
}

/// A copy of a texture into a mappable buffer, submitted and not yet waited for: what
/// [`read_texture`] does, in two steps, for a test that submits more work in between.
pub struct PendingRead {
    buffer: wgpu::Buffer,
    /// The buffer's bytes per row.
    padded: u32,
    /// The texture's bytes per row, and its rows.
    row: usize,
    rows: usize,
}

/// Submits on `queue` a copy of `texture` (as [`read_texture`] takes it), after the work
/// submitted so far.
pub fn submit_read(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    texture: &wgpu::Texture,
) -> PendingRead {
    let (read, commands) = record_read(device, texture);
    queue.submit([commands]);
    read
}

/// [`submit_read`]'s copy recorded and not submitted: the command buffer to submit (or to hand
/// to `CudaWrite::finish_then_release`), and the read it fills.
pub fn record_read(
    device: &wgpu::Device,
    texture: &wgpu::Texture,
) -> (PendingRead, wgpu::CommandBuffer) {
    let mut encoder = device.create_command_encoder(&Default::default());
    let read = read_in(device, &mut encoder, texture);
    (read, encoder.finish())
}

/// [`record_read`]'s copy recorded into `encoder`, after what it holds.
pub fn read_in(
    device: &wgpu::Device,
    encoder: &mut wgpu::CommandEncoder,
    texture: &wgpu::Texture,
) -> PendingRead {
    let texel = texture
        .format()
        .block_copy_size(None)
        .expect("a format of one block size");
    let (buffer, padded) = wgpu_copy::copy_to_buffer(device, encoder, texture, "read-back");
    PendingRead {
        buffer,
        padded,
        row: (texture.width() * texel) as usize,
        rows: texture.height() as usize,
    }
}

impl PendingRead {
    /// The texels the copy read, rows tightly packed, once it is done (waits at most 30 s).
    pub fn bytes(self, device: &wgpu::Device) -> Vec<u8> {
        let bytes = mapped(device, &self.buffer);
        (0..self.rows)
            .flat_map(|y| {
                bytes[y * self.padded as usize..][..self.row]
                    .iter()
                    .copied()
            })
            .collect()
    }
}

/// The bytes of `buffer` (`MAP_READ`), once the work submitted on `device`'s queue so far is
/// done (waits at most 30 s).
pub fn mapped(device: &wgpu::Device, buffer: &wgpu::Buffer) -> Vec<u8> {
    let (tx, rx) = std::sync::mpsc::channel();
    buffer
        .slice(..)
        .map_async(wgpu::MapMode::Read, move |r| tx.send(r).unwrap());
    device
        .poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(Duration::from_secs(30)),
        })
        .expect("wgpu finishes the work before the map");
    rx.recv_timeout(Duration::from_secs(5)).unwrap().unwrap();
    let bytes = buffer
        .slice(..)
        .get_mapped_range()
        .expect("the mapped range")
        .to_vec();
    buffer.unmap();
    bytes
}
