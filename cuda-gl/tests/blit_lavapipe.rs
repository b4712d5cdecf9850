//! The present's shader blit (`src/wgpu_interop/blit.rs`, included as the benchmark and the GPU
//! suite include it) on a CPU: Mesa's lavapipe (software Vulkan), no CUDA. Every format and
//! kind wgpu allows on the adapter is blitted at 1001x333, 77x1201 and 1x1 from pseudo-random
//! bytes, and must come out byte for byte; a device opened with wgpu's WebGL2 limits (no storage
//! texture, no compute workgroup) must choose a render pass or the copy, and its render blits be
//! as exact; and a destroyed destination is refused at the submit, not when the pass is
//! recorded (what the present's error handling rests on).
//!
//! Needs lavapipe (`apt-get install mesa-vulkan-drivers libvulkan1`; `ci/test.sh` installs it).
//! Where no software Vulkan adapter exists it prints why and skips, unless
//! `CUDA_GL_REQUIRE_VULKAN_SW=1` (which `ci/test.sh` sets) or `CUDA_GL_REQUIRE_MESA=1` makes that
//! a failure.
#![cfg(feature = "wgpu")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../src/wgpu_interop/blit.rs"]
#[allow(dead_code)] // The test uses part of it.
mod blit;
#[path = "harness/mod.rs"]
mod harness;
#[path = "harness/lavapipe.rs"]
mod software;
#[path = "wgpu_read/mod.rs"]
mod wgpu_read;

use blit::{Blit, BlitKind};
use harness::{noise, ready};
use wgpu::TextureFormat as F;
use wgpu_read::read_texture;
use wgpu_read::texels::{fill, mismatch, texture};

/// The sizes every format and kind is blitted at (one pipeline for all, as a target keeps it
/// across resizes): odd sides, a side that is not a multiple of 8 both ways, one texel.
const SIZES: [(u32, u32); 3] = [(1001, 333), (77, 1201), (1, 1)];

/// Every format the blit may write (`blit::exact`).
const FORMATS: [F; 9] = [
    F::R8Unorm,
    F::Rg8Unorm,
    F::Rgba8Unorm,
    F::R16Unorm,
    F::Rg16Unorm,
    F::Rgba16Unorm,
    F::R32Float,
    F::Rg32Float,
    F::Rgba32Float,
];

/// Lavapipe's adapter, or `None` after printing why (a failure under the variables above).
fn lavapipe() -> Option<wgpu::Adapter> {
    software::lavapipe("blit_lavapipe")
}

/// A device on `adapter` with `limits` and the 16-bit normalized formats where it has them;
/// wgpu's uncaptured errors fail the test.
fn open(adapter: &wgpu::Adapter, limits: wgpu::Limits) -> (wgpu::Device, wgpu::Queue) {
    let features = adapter.features() & wgpu::Features::TEXTURE_FORMAT_16BIT_NORM;
    let (device, queue) = ready(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: features,
        required_limits: limits,
        ..Default::default()
    }))
    .unwrap();
    device.on_uncaptured_error(std::sync::Arc::new(|e| panic!("wgpu: {e}")));
    (device, queue)
}

/// `blit` of `source` into a new destination as a target's texture in interop mode (sampled,
/// copied, and the kind's usage), submitted; the destination's bytes read back.
fn blit_into_new(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    blit: &Blit,
    source: &wgpu::Texture,
) -> Vec<u8> {
    let usage = wgpu::TextureUsages::TEXTURE_BINDING
        | wgpu::TextureUsages::COPY_SRC
        | wgpu::TextureUsages::COPY_DST
        | blit.kind().usage();
    let dest = texture(
        device,
        (source.width(), source.height()),
        blit.format(),
        usage,
    );
    let pair = blit.pair(device, source, &dest);
    queue.submit([blit.command(device, &pair)]);
    read_texture(device, queue, &dest)
}

/// Blits every format of [`FORMATS`] at every size of [`SIZES`] by the kinds `kinds_of` names
/// for it, and returns the kinds and formats checked and what came out wrong.
fn blit_all(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    kinds_of: impl Fn(F) -> Vec<BlitKind>,
) -> (Vec<(BlitKind, F)>, Vec<String>) {
    let (mut checked, mut failed) = (Vec::new(), Vec::new());
    for format in FORMATS {
        for kind in kinds_of(format) {
            let blit = Blit::new(device, format, kind);
            for (n, size) in SIZES.into_iter().enumerate() {
                let texel = format.block_copy_size(None).unwrap() as usize;
                let want = noise(size.0 as usize * size.1 as usize * texel, 0x1a7a + n as u64);
                let usage = wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST;
                let source = texture(device, size, format, usage);
                fill(queue, &source, &want);
                let got = blit_into_new(device, queue, &blit, &source);
                if let Some(why) = mismatch(format, &got, &want) {
                    failed.push(format!("{kind:?} blit of {format:?} {size:?}: {why}"));
                }
            }
            checked.push((kind, format));
        }
    }
    (checked, failed)
}

/// The kinds wgpu allows on `device` for `format` at every size of [`SIZES`].
fn allowed(device: &wgpu::Device, format: F) -> Vec<BlitKind> {
    let (features, limits) = (device.features(), device.limits());
    BlitKind::ALL
        .into_iter()
        .filter(|k| {
            SIZES
                .iter()
                .all(|&z| k.allows(format, features, &limits, z))
        })
        .collect()
}

#[test]
fn every_format_and_kind_wgpu_allows_is_blitted_exactly_on_lavapipe() {
    let Some(adapter) = lavapipe() else { return };
    let (device, queue) = open(&adapter, adapter.limits());
    let (checked, failed) = blit_all(&device, &queue, |f| allowed(&device, f));
    println!("{:?}: {checked:?}", adapter.get_info().name);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // Rgba8Unorm, Rgba32Float, R32Float both ways; R8Unorm, Rg8Unorm by render pass; the 16-bit
    // normalized formats by compute where the adapter has them.
    let sixteen = device
        .features()
        .contains(wgpu::Features::TEXTURE_FORMAT_16BIT_NORM);
    assert!(checked.len() >= if sixteen { 10 } else { 8 }, "{checked:?}");
    for kind in BlitKind::ALL {
        assert!(checked.iter().any(|&(k, _)| k == kind), "no {kind:?} blit");
    }
}

#[test]
fn a_device_with_webgl2_limits_blits_by_render_pass_exactly_or_copies() {
    let Some(adapter) = lavapipe() else { return };
    let limits = wgpu::Limits::downlevel_webgl2_defaults().using_resolution(adapter.limits());
    let (device, queue) = open(&adapter, limits);
    let (features, limits) = (device.features(), device.limits());
    for format in FORMATS {
        for size in SIZES {
            let kind = BlitKind::preferred(format, features, &limits, size);
            assert_ne!(kind, Some(BlitKind::Compute), "{format:?} {size:?}");
        }
    }
    // What the choice picks, made and run: wgpu would report a refused bind group layout or
    // pipeline to the uncaptured-error handler, which fails the test.
    let (checked, failed) = blit_all(&device, &queue, |f| {
        BlitKind::preferred(f, features, &limits, SIZES[0])
            .into_iter()
            .collect()
    });
    println!("WebGL2 limits: {checked:?}");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(
        checked.contains(&(BlitKind::Render, F::Rgba8Unorm)),
        "{checked:?}"
    );
}

#[test]
fn a_destroyed_destination_is_refused_at_the_submit_not_at_the_recording() {
    let Some(adapter) = lavapipe() else { return };
    let (device, queue) = open(&adapter, adapter.limits());
    for (format, kind) in [
        (F::Rgba8Unorm, BlitKind::Compute),
        (F::R8Unorm, BlitKind::Render),
    ] {
        let blit = Blit::new(&device, format, kind);
        let usage = wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST;
        let source = texture(&device, (33, 17), format, usage);
        let dest = texture(&device, (33, 17), format, usage | kind.usage());
        let pair = blit.pair(&device, &source, &dest);
        dest.destroy();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let command = blit.command(&device, &pair);
        assert!(
            ready(scope.pop()).is_none(),
            "{kind:?}: refused when recorded"
        );
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        queue.submit([command]);
        assert!(
            ready(scope.pop()).is_some(),
            "{kind:?}: not refused at the submit"
        );
    }
}
