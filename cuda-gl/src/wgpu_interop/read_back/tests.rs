//! The read-back on Mesa's lavapipe (software Vulkan, no CUDA): every byte of a texture at an
//! odd size, also from two threads at once, whose polls may each take the other's map
//! callback and run it only after the other's own poll has returned.
//!
//! Where no software Vulkan adapter exists it prints why and skips, unless
//! `CUDA_GL_REQUIRE_VULKAN_SW=1` or `CUDA_GL_REQUIRE_MESA=1` makes that a failure (as
//! `tests/blit_lavapipe.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::super::device::ready;
use super::{Readable, read_texture};
use crate::wgpu_interop::SharedFormat;
use crate::wgpu_interop::place::texture_descriptor;

use crate::wgpu_interop::lavapipe_harness as software;

/// A device and queue on lavapipe, or `None` after printing why (a failure under the
/// variables above).
fn lavapipe(test: &str) -> Option<(wgpu::Device, wgpu::Queue)> {
    let adapter = software::lavapipe(test)?;
    let opened = ready(adapter.request_device(&wgpu::DeviceDescriptor::default()));
    Some(
        opened
            .expect("ready at once")
            .expect("a device on lavapipe"),
    )
}

/// An `Rgba8Unorm` texture of `size` holding `bytes` (rows tightly packed), and its row.
fn texture_of(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    size: (u32, u32),
    bytes: &[u8],
) -> wgpu::Texture {
    let extent = wgpu::Extent3d {
        width: size.0,
        height: size.1,
        depth_or_array_layers: 1,
    };
    let texture = device.create_texture(&texture_descriptor(
        size,
        SharedFormat::Rgba8Unorm,
        "read_back test",
        wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST,
    ));
    queue.write_texture(
        texture.as_image_copy(),
        bytes,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(size.0 * 4),
            rows_per_image: None,
        },
        extent,
    );
    texture
}

/// Reads from two threads at once (as two `read_pixels` through `&self` may be) come back
/// whole: one thread's poll may retire the other's copy and take its map callback, which
/// wgpu-core runs only after that poll has let go of its locks, when the other's own poll may
/// have returned already. The read waits for the callback rather than ask for it once (which
/// failed within a few thousand reads with "the map did not complete").
#[test]
fn reads_from_two_threads_at_once_come_back_whole() {
    const TEST: &str = "reads_from_two_threads_at_once_come_back_whole";
    let Some((device, queue)) = lavapipe(TEST) else {
        return;
    };
    let size = (61, 17);
    let bytes: Vec<u8> = (0..size.0 * size.1 * 4)
        .map(|k| (k * 7 + 3) as u8)
        .collect();
    let texture = texture_of(&device, &queue, size, &bytes);
    let readable = Readable {
        device: &device,
        queue: &queue,
        texture: &texture,
        row: size.0 as usize * 4,
        call: TEST,
    };
    let reads = |who: &str| {
        (0..5000).try_for_each(|k| match read_texture(&readable) {
            Ok(got) if got == bytes => Ok(()),
            Ok(_) => Err(format!("{who}'s read {k}: other bytes than the texture's")),
            Err(e) => Err(format!("{who}'s read {k}: {e}")),
        })
    };
    let (first, second) = std::thread::scope(|s| {
        let other = s.spawn(|| reads("the second thread"));
        let first = reads("the first thread");
        (
            first,
            other.join().expect("the second thread ran to its end"),
        )
    });
    first.unwrap();
    second.unwrap();
}
