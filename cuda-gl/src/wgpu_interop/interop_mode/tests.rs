//! The copy command of the present and of the video planes on Mesa's lavapipe (software
//! Vulkan, no CUDA): a texture the application destroyed is refused while the command is made,
//! before the hand-off that would carry it (wgpu 30 itself records the copy and refuses it only
//! at that submit).
//!
//! Where no software Vulkan adapter exists it prints why and skips, unless
//! `CUDA_GL_REQUIRE_VULKAN_SW=1` or `CUDA_GL_REQUIRE_MESA=1` makes that a failure (as
//! `tests/blit_lavapipe.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::copy_command;
use crate::wgpu_interop::device::ready;
use crate::wgpu_interop::place::texture_descriptor;
use crate::wgpu_interop::{SharedFormat, WgpuError};

use crate::wgpu_interop::lavapipe_harness as software;

/// A 4x4 `Rgba8Unorm` texture that copies may read and write.
fn texture(device: &wgpu::Device) -> wgpu::Texture {
    device.create_texture(&texture_descriptor(
        (4, 4),
        SharedFormat::Rgba8Unorm,
        "cuda-gl copy-command test",
        wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST,
    ))
}

#[test]
fn a_copy_out_of_or_into_a_destroyed_texture_is_refused_before_any_submit() {
    const TEST: &str = "a_copy_out_of_or_into_a_destroyed_texture_is_refused_before_any_submit";
    let Some(adapter) = software::lavapipe(TEST) else {
        return;
    };
    let (device, _queue) = ready(adapter.request_device(&wgpu::DeviceDescriptor::default()))
        .expect("ready at once")
        .expect("a device on lavapipe");
    for destroyed in ["source", "destination"] {
        let (source, destination) = (texture(&device), texture(&device));
        copy_command(&device, &[(&source, &destination)]).expect("a copy of live textures");
        if destroyed == "source" {
            source.destroy();
        } else {
            destination.destroy();
        }
        match copy_command(&device, &[(&source, &destination)]) {
            Err(crate::Error::Wgpu(WgpuError::Refused { call, message })) => {
                assert_eq!(call, "wgpu::CommandEncoder::copy_texture_to_texture");
                println!("destroyed {destroyed}: refused: {message}");
            }
            Err(e) => panic!("destroyed {destroyed}: refused with another error: {e}"),
            Ok(_) => panic!(
                "destroyed {destroyed}: the copy command was made, to be refused only at the \
                 submit of a hand-off that carries it"
            ),
        }
    }
}
