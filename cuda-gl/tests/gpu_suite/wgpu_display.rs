//! A display target whose texture is a `wgpu::Texture` (`cuda_gl::wgpu_interop::WgpuTarget`):
//! in interop mode (the Vulkan image CUDA writes in place) and in staged mode (pinned bands and
//! `write_texture`), on wgpu's Vulkan backend and, with feature `wgpu-gl`, on its GL backend
//! over a GL context on the CUDA GPU (interop by the GL route: `wgpu_gl`), device memory shown
//! and frames drawn through the surface reach wgpu in
//! every pixel, at odd sizes, across resizes; colour maps; a dropped frame shows nothing new
//! and the texture, sampled while a frame is open, holds the last presented frame, in both
//! modes; NV12 and P010 frames shown (`show_video`, and with feature `cudarc`
//! `show_video_cudarc` of a cudarc slice) equal the CPU's conversion; bad modes are typed
//! errors.
//!
//! Needs `--features wgpu,egl`, a GPU and NVIDIA's Vulkan driver (headless:
//! `VK_DRIVER_FILES=.../nvidia_icd.json`), and for the GL route `--features wgpu-gl` and
//! NVIDIA's EGL; each set-up skips with the reason where it cannot be made.
#![cfg(all(feature = "wgpu", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::video::{check_video_shown, frames};
use super::wgpu_interop::{Setup, assert_frame, in_both_modes_on, read_back, setup, words};
use crate::gpu::{launch_image, launch_words, noise, pattern};
use crate::harness::{SoakSizes, device_used, report_line};
use crate::wgpu_read::texels::mismatch;
use cuda_gl::display::{ColorMap, DisplayError, Format, Frame, Layout, Mode, Palette};
use cuda_gl::video::{ColorSpace, VideoFormat, VideoLayout};
use cuda_gl::wgpu_interop::{WgpuError, WgpuTarget};
use cuda_gl::{DeviceBuffer, Error, Stream};

/// The set-ups the target's tests run on, made one at a time: with feature `wgpu-gl` a device
/// on wgpu's GL backend (first: the benchmark saw Vulkan work leave the process's EGL display
/// unusable on driver 580), then one on its Vulkan backend (each `None`, with the reason, where
/// it cannot be made).
fn setups() -> impl Iterator<Item = Setup> {
    let makers: &[fn() -> Option<Setup>] = &[
        #[cfg(feature = "wgpu-gl")]
        super::wgpu_gl::gl_setup,
        setup,
    ];
    makers.iter().filter_map(|make| make())
}

/// Runs `test` on each set-up in interop mode, then in staged mode (nothing, with the reason,
/// where there is no set-up), then checks that no drop reported an error.
fn in_both_modes(test: impl Fn(&Setup, Mode)) {
    in_both_modes_on(setups(), test);
}

/// A target of `size` and `format` in `mode` on the set-up's device.
pub(crate) fn target(s: &Setup, size: (u32, u32), format: Format, mode: Mode) -> WgpuTarget {
    let layout = Layout::packed(size, format).unwrap();
    let (target, report) =
        WgpuTarget::new(&s.ctx, &s.device, &s.queue, layout, Some(mode)).unwrap();
    println!("{report}");
    assert_eq!(target.mode(), mode);
    target
}

/// `n` bytes of a pattern that differs with `seed`.
fn bytes_of(n: usize, seed: u32) -> Vec<u8> {
    (0..n)
        .map(|i| (pattern(i as u32, seed) >> 8) as u8)
        .collect()
}

/// The next frame of `t` (RGBA8), drawn through its surface by `surface_fill_rgba8` with
/// `seed`, and left open.
pub(crate) fn fill_frame<'t>(s: &'t Setup, t: &'t mut WgpuTarget, seed: u32) -> Frame<'t, Stream> {
    draw_frame_on(s, t, &s.stream, seed, Draw::Surface)
}

/// Where a test frame is drawn: through its surface (`surface_fill_rgba8`), or into its pixels
/// (`fill_u32`); texel `i` is `pattern(i, seed)` either way.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Draw {
    Surface,
    // Drawn only by `wgpu_gl`'s tests, which need the feature `wgpu-gl`.
    #[cfg_attr(not(feature = "wgpu-gl"), allow(dead_code))]
    Pixels,
}

/// The next frame of `t` (RGBA8) on `stream`, drawn with `seed` the way `draw` says, and left
/// open.
pub(crate) fn draw_frame_on<'t>(
    s: &Setup,
    t: &'t mut WgpuTarget,
    stream: &'t Stream,
    seed: u32,
    draw: Draw,
) -> Frame<'t, Stream> {
    let kernel = match draw {
        Draw::Surface => "surface_fill_rgba8",
        Draw::Pixels => "fill_u32",
    };
    let fill = s.kernels.function(kernel).unwrap();
    let (w, h) = t.size();
    let frame = t.frame(stream).unwrap();
    let texels = (w as usize, h as usize);
    let launched = match draw {
        // SAFETY: the kernel writes w x h RGBA8 texels through the frame's surface, which has
        // that size and format, on the frame's stream.
        Draw::Surface => unsafe {
            launch_image(&fill, stream, frame.surface().unwrap(), texels, seed)
        },
        Draw::Pixels => {
            let ptr = frame.pixels().unwrap().ptr();
            // SAFETY: the kernel writes w x h words into the frame's pixels (RGBA8 of that
            // size), on the frame's stream.
            unsafe { launch_words(&fill, stream, ptr, texels.0 * texels.1, seed) }
        }
    };
    launched.unwrap();
    frame
}

/// The target is `Send + Sync`, as wgpu's own objects: made on the test's thread, it shows
/// memory on another, byte for byte, and is dropped there, in both modes (on wgpu's Vulkan
/// backend: on its GL backend every call belongs where the GL context is current).
#[test]
fn a_target_made_on_one_thread_shows_and_drops_on_another_in_both_modes() {
    let Some(s) = setup() else { return };
    let (ctx, stream) = (&s.ctx, &s.stream);
    for mode in [Mode::Interop, Mode::Staged] {
        let mut t = target(&s, (97, 61), Format::Rgba8, mode);
        let layout = Layout::packed((97, 61), Format::Rgba8).unwrap();
        let want = bytes_of(layout.bytes(), 0x5E_0001);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                let src = DeviceBuffer::from_slice(ctx, &want).unwrap();
                t.show(&src, layout, stream).unwrap();
                assert_eq!(t.read_pixels().unwrap(), want, "{mode}");
                drop(t);
            });
        });
    }
    s.ctx.check_drop_errors().unwrap();
}

#[test]
fn auto_chooses_interop_on_the_cuda_gpus_vulkan_device_and_says_so() {
    let Some(s) = setup() else { return };
    let layout = Layout::packed((64, 48), Format::Rgba8).unwrap();
    let (target, report) = WgpuTarget::new(&s.ctx, &s.device, &s.queue, layout, None).unwrap();
    let starts = "display: interop; wgpu Vulkan: ";
    report_line(&report, target.mode(), Mode::Interop, starts);
    assert_eq!(target.texture().format(), wgpu::TextureFormat::Rgba8Unorm);
    assert_eq!(target.size(), (64, 48));
}

/// The usage the present's shader blit gives the texture: in interop mode, storage for a
/// compute pass (colour attachment for R8, which wgpu allows as no storage texture); none in
/// staged mode.
fn blit_usage(mode: Mode, format: Format) -> wgpu::TextureUsages {
    match (mode, format) {
        (Mode::Interop, Format::R8) => wgpu::TextureUsages::RENDER_ATTACHMENT,
        (Mode::Interop, _) => wgpu::TextureUsages::STORAGE_BINDING,
        _ => wgpu::TextureUsages::empty(),
    }
}

/// Every format at odd sizes, one after the other (each a resize, the shader blit's pipeline
/// kept, back to an earlier format at the end), shown twice each: every byte reaches the
/// texture (in interop mode through the present's shader blit).
#[test]
fn shown_memory_reaches_the_wgpu_texture_in_every_pixel_in_both_modes() {
    in_both_modes(|s, mode| {
        let mut t = target(s, (16, 16), Format::Rgba8, mode);
        let mut sizes = vec![((1920, 1080), Format::Rgba8)];
        for format in [Format::Rgba8, Format::Rgba32F, Format::R8, Format::R32F] {
            sizes.extend([((1001, 333), format), ((77, 1201), format)]);
        }
        sizes.extend([
            ((333, 101), Format::Rgba32F),
            ((257, 3), Format::R8),
            ((129, 65), Format::R32F),
            ((1001, 333), Format::Rgba8),
        ]);
        for (k, (size, format)) in sizes.into_iter().enumerate() {
            let layout = Layout::packed(size, format).unwrap();
            // A pitch wider than the row, as decoders and allocators lay images out.
            let pitched = Layout::new(size, layout.pitch() + 64, format).unwrap();
            let want = bytes_of(layout.bytes(), k as u32 + 1);
            let mut padded = vec![0xEEu8; pitched.bytes()];
            for (y, row) in want.chunks(layout.row_bytes()).enumerate() {
                padded[y * pitched.pitch()..][..row.len()].copy_from_slice(row);
            }
            let src = DeviceBuffer::from_slice(&s.ctx, &padded).unwrap();
            for round in 0..2 {
                t.show(&src, pitched, &s.stream).unwrap();
                assert_eq!((t.size(), t.format()), (size, format));
                let usage = t.texture().usage();
                let blits =
                    wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::RENDER_ATTACHMENT;
                assert_eq!(usage & blits, blit_usage(mode, format), "{mode} {format:?}");
                let got = t.read_pixels().unwrap();
                if let Some(why) = mismatch(t.texture().format(), &got, &want) {
                    panic!("{mode} {size:?} {format:?} round {round}: {why}");
                }
            }
        }
    });
}

/// 32-bit floats a kernel may leave in a frame, bit for bit: zeros, the smallest and largest
/// subnormals, infinities, quiet and signalling NaNs with payloads, ordinary values.
const SPECIAL_F32: [u32; 14] = [
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x807f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0x7fc1_2345,
    0xffc0_0001,
    0x7f80_0001,
    0x7fbf_ffff,
    0x3f80_0000,
    0xbf80_0000,
    0x7f7f_ffff,
];

/// The application's texture holds exactly the texels of the frame (what the shared image
/// held, in interop mode: no filtering, no sRGB or other conversion on the way): every byte
/// value in 8-bit formats with neighbours far apart (a texel read off its place would show),
/// and special floats bit for bit.
#[test]
fn the_texture_holds_the_frames_exact_texels_in_both_modes() {
    in_both_modes(|s, mode| {
        let mut t = target(s, (8, 8), Format::Rgba8, mode);
        for size in [(1001, 333), (77, 1201)] {
            for format in [Format::Rgba8, Format::R8, Format::Rgba32F, Format::R32F] {
                let layout = Layout::packed(size, format).unwrap();
                let bytes: Vec<u8> = match format {
                    // Byte i is i * 97 mod 256: every byte value (97 is odd), and the texel
                    // below differs too (no row here is a multiple of 256 bytes long).
                    Format::Rgba8 | Format::R8 => (0..layout.bytes())
                        .map(|i| (i as u32).wrapping_mul(97) as u8)
                        .collect(),
                    _ => noise(layout.bytes(), 0x5eed)
                        .chunks_exact(4)
                        .enumerate()
                        .flat_map(|(i, w)| match SPECIAL_F32.get(i % 32) {
                            Some(bits) => bits.to_le_bytes(),
                            None => [w[0], w[1], w[2], w[3]],
                        })
                        .collect(),
                };
                let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
                t.show(&src, layout, &s.stream).unwrap();
                let got = t.read_pixels().unwrap();
                if let Some(why) = mismatch(t.texture().format(), &got, &bytes) {
                    panic!("{mode} {size:?} {format:?}: {why}");
                }
            }
        }
    });
}

/// The application destroys the texture: presents and reads are refused with a typed error
/// (the frame's image handed back all the same), until a resize to another size makes a new
/// texture, which shows frames again.
#[test]
fn a_destroyed_texture_is_refused_until_a_resize_in_both_modes() {
    in_both_modes(|s, mode| {
        let mut t = target(s, (64, 48), Format::Rgba8, mode);
        fill_frame(s, &mut t, 1).present().unwrap();
        t.texture().destroy();
        for round in 0..2 {
            let e = fill_frame(s, &mut t, 2 + round).present().unwrap_err();
            println!("{mode}: a present into a destroyed texture: {e}");
            assert!(matches!(e, Error::Wgpu(WgpuError::Refused { .. })), "{e}");
            let e = t.read_pixels().unwrap_err();
            assert!(matches!(e, Error::Wgpu(WgpuError::Refused { .. })), "{e}");
        }
        t.resize(65, 48).unwrap();
        fill_frame(s, &mut t, 7).present().unwrap();
        let got: Vec<u32> = words(&t.read_pixels().unwrap()).collect();
        assert_frame(&got, 7, format!("{mode}: the frame after the resize"));
    });
}

#[test]
fn frames_drawn_through_the_surface_reach_wgpu_and_a_dropped_frame_shows_nothing_new() {
    in_both_modes(|s, mode| {
        let mut t = target(s, (1001, 333), Format::Rgba8, mode);
        for seed in 1..4u32 {
            fill_frame(s, &mut t, seed).present().unwrap();
            let got: Vec<u32> = words(&t.read_pixels().unwrap()).collect();
            assert_frame(&got, seed, format!("{mode} frame {seed}"));
        }
        let before = t.read_pixels().unwrap();
        // Dropped without its present.
        drop(fill_frame(s, &mut t, 99));
        assert_eq!(
            t.read_pixels().unwrap(),
            before,
            "{mode}: a dropped frame reached the texture"
        );
    });
}

/// The application may hold a clone of the texture and submit uses of it at any time, also
/// while a frame is open and CUDA has written it: the texture then holds the last presented
/// frame (in interop mode it is never the image CUDA writes, which is CUDA's then).
#[test]
fn the_texture_sampled_while_a_frame_is_open_holds_the_last_presented_frame() {
    in_both_modes(|s, mode| {
        let mut t = target(s, (640, 361), Format::Rgba8, mode);
        let texture = t.texture().clone();
        for seed in [5u32, 6] {
            let frame = fill_frame(s, &mut t, seed);
            // The kernel has run; the frame is still open.
            s.stream.synchronize().unwrap();
            let open = read_back(s, &texture);
            if seed == 6 {
                let what = format!("{mode}: while frame 6 is open the texture must hold frame 5");
                assert_frame(&open, 5, what);
            }
            frame.present().unwrap();
            let shown = read_back(s, &texture);
            assert_frame(
                &shown,
                seed,
                format!("{mode}: frame {seed} after its present"),
            );
        }
    });
}

#[test]
fn one_channel_images_go_through_the_colour_map_and_resizes_keep_it() {
    in_both_modes(|s, mode| {
        let mut t = target(s, (8, 8), Format::Rgba8, mode);
        let map = ColorMap::new(Palette::Viridis, 250.0, 320.0).unwrap();
        t.set_color_map(Some(map)).unwrap();
        for size in [(1000u32, 700u32), (31, 1)] {
            let n = (size.0 * size.1) as usize;
            let field: Vec<f32> = (0..n).map(|i| 240.0 + (i % 90) as f32).collect();
            let src = DeviceBuffer::from_slice(&s.ctx, &field).unwrap();
            t.show(&src, Layout::packed(size, Format::R32F).unwrap(), &s.stream)
                .unwrap();
            assert_eq!((t.size(), t.format()), (size, Format::Rgba8));
            let got = t.read_pixels().unwrap();
            let bad = got
                .chunks_exact(4)
                .zip(&field)
                .filter(|(px, v)| px != &map.color_of(**v).as_slice())
                .count();
            assert_eq!(bad, 0, "{mode} {size:?}: mapped pixels differ");
        }
        t.resize(63, 17).unwrap();
        assert_eq!(t.size(), (63, 17));
        assert_eq!(t.color_map(), Some(map));
    });
}

#[test]
fn the_stream_mode_and_bad_sizes_are_typed_errors() {
    let Some(s) = setup() else { return };
    let layout = Layout::packed((64, 64), Format::Rgba8).unwrap();
    let stream = WgpuTarget::new(&s.ctx, &s.device, &s.queue, layout, Some(Mode::Stream));
    let e = stream.expect_err("no stream mode on wgpu");
    assert!(
        matches!(e, Error::Display(DisplayError::ModeUnavailable { .. })),
        "{e}"
    );
    assert!(e.to_string().contains("help: "), "{e}");
    let max = s.device.limits().max_texture_dimension_2d;
    let huge = Layout::packed((max + 1, 1), Format::R8).unwrap();
    let e = WgpuTarget::new(&s.ctx, &s.device, &s.queue, huge, None)
        .expect_err("over the device's limit");
    assert!(
        matches!(e, Error::Display(DisplayError::TargetSize { .. })),
        "{e}"
    );
}

/// `t` shows the frame of `layout` whose bytes are `bytes`, converted under `color`: RGBA8 of
/// the frame's size, each channel within 1 of the CPU's conversion (`what` names the frame).
fn assert_shows_video(
    t: &mut WgpuTarget,
    bytes: &[u8],
    layout: VideoLayout,
    color: ColorSpace,
    what: &str,
) {
    assert_eq!((t.size(), t.format()), (layout.size(), Format::Rgba8));
    let got = t.read_pixels().unwrap();
    check_video_shown(&got, (bytes, layout), color, what);
}

#[test]
fn video_frames_shown_on_a_wgpu_target_match_the_cpu_in_both_modes() {
    in_both_modes(|s, mode| {
        let mut t = target(s, (16, 16), Format::Rgba8, mode);
        for format in [VideoFormat::Nv12, VideoFormat::P010] {
            for (n, (layout, _)) in frames(format).into_iter().enumerate() {
                let bytes = noise(layout.bytes(), 70 + n as u64);
                let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
                let color = ColorSpace::default();
                let what = format!("{mode} {format:?} {:?}", layout.size());
                t.show_video(&src, layout, color, &s.stream).unwrap();
                assert_shows_video(&mut t, &bytes, layout, color, &what);
            }
        }
    });
}

/// `show_video_cudarc` on a `WgpuTarget` (feature `cudarc` too): an NV12 frame in a cudarc
/// slice of a cudarc context on the set-up's CUDA device (its primary context, the set-up's
/// `Context`'s), shown within 1 of the CPU's conversion in both modes.
#[cfg(feature = "cudarc")]
#[test]
fn video_frames_in_cudarc_slices_shown_on_a_wgpu_target_match_the_cpu_in_both_modes() {
    in_both_modes(|s, mode| {
        let cu = cudarc::driver::CudaContext::new(s.ctx.device().ordinal()).unwrap();
        let stream = cu.new_stream().unwrap();
        let mut t = target(s, (16, 16), Format::Rgba8, mode);
        let (layout, _) = frames(VideoFormat::Nv12)[0];
        let bytes = noise(layout.bytes(), 90);
        let src = stream.clone_htod(&bytes).unwrap();
        let color = ColorSpace::default();
        let what = format!("{mode} cudarc NV12 {:?}", layout.size());
        t.show_video_cudarc(&src, layout, color, &stream).unwrap();
        assert_shows_video(&mut t, &bytes, layout, color, &what);
        stream.synchronize().unwrap();
    });
}

/// 1,000 resizes (`CUDA_GL_WGPU_RESIZES`) to sizes from 1x1 to 2048x2048 in each mode, a
/// frame shown and checked every 50th: after a warm-up pass over the same sizes, a second pass
/// leaves device memory within 1 MiB of where it was (the old textures, CUDA's imports and the
/// staged bands all go).
#[test]
fn a_thousand_resizes_leave_device_memory_flat_in_both_modes() {
    let rounds: u32 = std::env::var("CUDA_GL_WGPU_RESIZES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    in_both_modes(|s, mode| {
        let mut t = target(s, (64, 64), Format::Rgba8, mode);
        let mut before = None;
        for _pass in 0..2 {
            let mut sizes = SoakSizes::default();
            for round in 0..rounds {
                let size = if round % 100 == 99 {
                    (2048, 2048)
                } else {
                    sizes.next_size(1024)
                };
                t.resize(size.0, size.1).unwrap();
                if round % 50 == 0 {
                    let layout = Layout::packed(size, Format::Rgba8).unwrap();
                    let want = bytes_of(layout.bytes(), round);
                    let src = DeviceBuffer::from_slice(&s.ctx, &want).unwrap();
                    t.show(&src, layout, &s.stream).unwrap();
                    assert_eq!(
                        t.read_pixels().unwrap(),
                        want,
                        "{mode} after resize {round}"
                    );
                }
            }
            t.resize(64, 64).unwrap();
            s.stream.synchronize().unwrap();
            s.device
                .poll(wgpu::PollType::wait_indefinitely())
                .expect("wgpu finishes");
            let now = device_used(&s.ctx) as i64;
            match before {
                None => before = Some(now),
                Some(was) => {
                    let grew = now - was;
                    println!(
                        "{mode}: {rounds} resizes: device {:+.3} MiB",
                        grew as f64 / (1 << 20) as f64
                    );
                    assert!(
                        grew <= 1 << 20,
                        "{mode}: device memory grew by {grew} bytes"
                    );
                }
            }
        }
    });
}
