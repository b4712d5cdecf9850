//! The present's shader blit (`cuda-gl/src/wgpu_interop/blit.rs`, included here as the
//! benchmark includes it): for every `SharedFormat` it blits (all but `Rgba16Float`, which is
//! copied) and each kind wgpu allows for it (compute, render), at odd sizes, pseudo-random bytes written into a source texture come out of the blit
//! byte for byte in the destination (no filtering, no conversion), from a plain texture and from
//! a `SharedTexture` just handed back by CUDA; one pipeline per format and kind serves every
//! size (a target keeps its blit across resizes). The `WgpuTarget`'s own presents, which record
//! this blit in the acquire's submit, are checked in `wgpu_display`.
//!
//! Needs `--features wgpu,egl`, a GPU and NVIDIA's Vulkan driver (headless:
//! `VK_DRIVER_FILES=.../nvidia_icd.json`); skips with the reason elsewhere.
#![cfg(all(feature = "wgpu", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../src/wgpu_interop/blit.rs"]
#[allow(dead_code)] // The tests use part of it.
mod blit;

use super::wgpu_interop::{Setup, setup};
use crate::gpu::noise;
use crate::wgpu_read::read_texture;
use crate::wgpu_read::texels::{fill, mismatch, texture};
use blit::{Blit, BlitKind};
use cuda_gl::wgpu_interop::{SharedFormat, SharedTexture};

/// The sizes every format and kind is blitted at, in this order (each a "resize": new
/// textures and a new pair, the same pipeline).
const SIZES: [(u32, u32); 3] = [(1001, 333), (77, 1201), (1001, 333)];

/// `blit` of `source` into a new destination as a target's texture in interop mode (sampled,
/// copied, and the kind's usage), submitted; the destination's bytes read back.
fn blit_into_new(s: &Setup, blit: &Blit, source: &wgpu::Texture) -> Vec<u8> {
    let usage = wgpu::TextureUsages::TEXTURE_BINDING
        | wgpu::TextureUsages::COPY_SRC
        | wgpu::TextureUsages::COPY_DST
        | blit.kind().usage();
    let dest = texture(
        &s.device,
        (source.width(), source.height()),
        blit.format(),
        usage,
    );
    let pair = blit.pair(&s.device, source, &dest);
    s.queue.submit([blit.command(&s.device, &pair)]);
    read_texture(&s.device, &s.queue, &dest)
}

/// The `SharedFormat`s this device can make, with what it cannot.
fn formats(s: &Setup) -> Vec<SharedFormat> {
    SharedFormat::ALL
        .into_iter()
        .filter(|f| {
            let ok = s.device.features().contains(f.required_features());
            if !ok {
                println!("{f:?}: the device lacks {:?}", f.required_features());
            }
            ok
        })
        .collect()
}

/// Every format the device has, by every kind wgpu allows for it, at every size of [`SIZES`]:
/// from a plain texture, and from a `SharedTexture` after a CUDA hand-off (wgpu's between
/// hand-offs, in the state the acquire leaves in wgpu's tracker), byte for byte.
#[test]
fn the_blit_copies_every_texel_exactly_in_every_format_and_kind() {
    let Some(s) = setup() else { return };
    let (features, limits) = (s.device.features(), s.device.limits());
    let (mut checked, mut failed) = (0, Vec::new());
    for format in formats(&s) {
        let wgpu_format = format.wgpu();
        // Every size of SIZES is far below the limits of a device opened with the adapter's.
        let kinds = BlitKind::ALL.into_iter().filter(|k| {
            SIZES
                .iter()
                .all(|&z| k.allows(wgpu_format, features, &limits, z))
        });
        for kind in kinds {
            // One pipeline for every size, as a target keeps it across resizes.
            let blit = Blit::new(&s.device, wgpu_format, kind);
            for (n, size) in SIZES.into_iter().enumerate() {
                let bytes = size.0 as usize * size.1 as usize * format.bytes_per_texel() as usize;
                let want = noise(bytes, 0xb117 + n as u64);
                let what = format!("{kind:?} blit of {format:?} {size:?}");

                let plain = texture(
                    &s.device,
                    size,
                    wgpu_format,
                    wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                );
                fill(&s.queue, &plain, &want);
                let got = blit_into_new(&s, &blit, &plain);
                if let Some(why) = mismatch(wgpu_format, &got, &want) {
                    failed.push(format!("{what}, plain source: {why}"));
                }

                let mut shared =
                    SharedTexture::new(&s.ctx, &s.device, &s.queue, size, format).unwrap();
                fill(&s.queue, shared.texture(), &want);
                // SAFETY: no submit uses the texture until `finish` (nothing is submitted
                // between them).
                let write = unsafe { shared.write(&s.stream) }.unwrap();
                write.finish().unwrap();
                let got = blit_into_new(&s, &blit, shared.texture());
                if let Some(why) = mismatch(wgpu_format, &got, &want) {
                    failed.push(format!("{what}, shared source: {why}"));
                }
                checked += 1;
            }
        }
    }
    println!("{checked} blits checked, each from a plain and a shared texture");
    // Every failure at once: which formats and kinds a GPU does not blit exactly.
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // 10 formats and kinds with TEXTURE_FORMAT_16BIT_NORM, 8 without; three sizes each.
    assert!(checked >= 3 * 8, "every format the device has, each kind");
    s.ctx.check_drop_errors().unwrap();
}
