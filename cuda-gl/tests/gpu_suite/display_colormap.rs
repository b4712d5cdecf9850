//! A display target's colour map: one-channel images shown through
//! `DisplayTarget::set_color_map` become RGBA8 texels equal, byte for byte, to
//! `ColorMap::color_of` of each value, in every mode. Needs `--features egl` and a GPU.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use cuda_gl::display::{ColorMap, DisplayError, DisplayTarget, Format, Layout, Mode, Palette};
use cuda_gl::{DeviceBuffer, Error};

/// Shows `data` (one channel of `format`, `w` x `h`, rows `pitch` bytes apart) and checks every
/// texel against `map` of the value that `value(x, y)` reads from `data`.
fn show_and_check<T: cuda_gl::DeviceCopy>(
    g: &Gpu,
    target: &mut DisplayTarget,
    data: &[T],
    (w, h, pitch, format): (u32, u32, usize, Format),
    map: &ColorMap,
    value: impl Fn(usize, usize) -> f32,
    what: &str,
) {
    let src = DeviceBuffer::from_slice(&g.ctx, data).unwrap();
    target
        .show(&src, Layout::new((w, h), pitch, format).unwrap(), &g.stream)
        .unwrap();
    assert_eq!(
        (target.size(), target.format()),
        ((w, h), Format::Rgba8),
        "{what}: a mapped image is shown in RGBA8"
    );
    let texels = read_texture_rgba8(target.texture().0, w as usize, h as usize, 0);
    let mut wrong = Vec::new();
    for (i, &texel) in texels.iter().enumerate() {
        let (x, y) = (i % w as usize, i / w as usize);
        let want = u32::from_le_bytes(map.color_of(value(x, y)));
        if texel != want {
            wrong.push((x, y, texel, want));
        }
    }
    assert!(
        wrong.is_empty(),
        "{what}: {} of {} texels wrong, first (x, y, got, want): {:x?}",
        wrong.len(),
        texels.len(),
        &wrong[..wrong.len().min(4)]
    );
}

/// R32F through viridis (values below, inside and above the range, NaN and infinities among
/// them), R8 through inferno with a pitch wider than a row, the map kept across a resize,
/// R32F rows at a pitch that misaligns their floats, a range that spreads nothing refused (the
/// map before kept), then the map taken off (R8 in its own format again), in each mode.
#[test]
fn one_channel_images_are_shown_through_the_colour_map_in_every_mode() {
    let Some(g) = gpu() else { return };
    for mode in [Mode::Interop, Mode::Staged, Mode::Stream] {
        let (mut target, _) = display_target(&g.ctx, (8, 8), Some(mode));
        let viridis = ColorMap::new(Palette::Viridis, -1.0, 3.0).unwrap();
        target.set_color_map(Some(viridis)).unwrap();
        assert_eq!(target.color_map(), Some(viridis));
        let (w, h) = (333u32, 77u32);
        let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -1.0, 3.0];
        let floats: Vec<f32> = (0..(w * h) as usize)
            .map(|i| {
                special
                    .get(i)
                    .copied()
                    .unwrap_or(-1.5 + (i % 997) as f32 * 0.005)
            })
            .collect();
        let at = |x: usize, y: usize| floats[y * w as usize + x];
        let layout = (w, h, w as usize * 4, Format::R32F);
        let what = format!("{mode} R32F viridis");
        show_and_check(&g, &mut target, &floats, layout, &viridis, at, &what);

        let inferno = ColorMap::new(Palette::Inferno, 10.0, 200.0).unwrap();
        target.set_color_map(Some(inferno)).unwrap();
        let (w, h, pitch) = (50u32, 20u32, 64usize);
        let bytes: Vec<u8> = (0..pitch * h as usize)
            .map(|i| (i * 7 % 256) as u8)
            .collect();
        let at = |x: usize, y: usize| f32::from(bytes[y * pitch + x]);
        let what = format!("{mode} R8 inferno");
        show_and_check(
            &g,
            &mut target,
            &bytes,
            (w, h, pitch, Format::R8),
            &inferno,
            at,
            &what,
        );

        // The map stays across a resize.
        target.resize(40, 30).unwrap();
        assert_eq!(target.color_map(), Some(inferno), "{mode}: after a resize");

        // R32F rows whose pitch is no multiple of 4: every odd row's floats are misaligned.
        target.set_color_map(Some(viridis)).unwrap();
        let (w, h, pitch) = (21u32, 9u32, 21 * 4 + 2);
        let value = |x: usize, y: usize| (x + y * 21) as f32 * 0.02 - 0.2;
        let mut bytes = vec![0u8; pitch * h as usize];
        for y in 0..h as usize {
            for x in 0..w as usize {
                let at = y * pitch + x * 4;
                bytes[at..at + 4].copy_from_slice(&value(x, y).to_le_bytes());
            }
        }
        let layout = (w, h, pitch, Format::R32F);
        let what = format!("{mode} R32F, pitch {pitch}");
        show_and_check(&g, &mut target, &bytes, layout, &viridis, value, &what);

        // A range that spreads nothing is refused, and the map before stays.
        for (min, max) in [
            (1.0, 1.0),
            (2.0, 1.0),
            (f32::NAN, 1.0),
            (0.0, f32::INFINITY),
        ] {
            let made = ColorMap::new(Palette::Grey, min, max);
            assert!(
                matches!(made, Err(Error::Display(DisplayError::ColorMapRange))),
                "{mode}: {min}..{max}: {made:?}"
            );
            let mut changed = viridis;
            (changed.min, changed.max) = (min, max);
            let refused = target.set_color_map(Some(changed));
            assert!(
                matches!(refused, Err(Error::Display(DisplayError::ColorMapRange))),
                "{mode}: {min}..{max} set: {refused:?}"
            );
            assert_eq!(target.color_map(), Some(viridis), "{mode}: a refused map");
        }

        // No map: one-channel images in their own format again.
        target.set_color_map(None).unwrap();
        assert_eq!(target.color_map(), None);
        let (w, h, pitch) = (50u32, 20u32, 64usize);
        let bytes: Vec<u8> = (0..pitch * h as usize)
            .map(|i| (i * 7 % 256) as u8)
            .collect();
        let src = DeviceBuffer::from_slice(&g.ctx, &bytes).unwrap();
        target
            .show(
                &src,
                Layout::new((w, h), pitch, Format::R8).unwrap(),
                &g.stream,
            )
            .unwrap();
        assert_eq!(
            target.format(),
            Format::R8,
            "{mode}: no map, the image's own format"
        );
        drop(target);
    }
    g.check_no_errors();
}
