//! A GL context that is not NVIDIA's (Mesa's llvmpipe) next to a working CUDA driver: every entry
//! point that needs the GL context's GPU returns `Error::NotNvidiaGl`, which says what to do.
//!
//! This needs an unusual process: libglvnd's EGL pointed at Mesa alone while libcuda is NVIDIA's.
//! On a GPU host: `bash ci/gpu/fetch-mesa-egl-debs.sh` here, carry `.mesa`, then
//! `source .mesa/mesa-env.sh` there before running this binary with `CUDA_GL_REQUIRE_MESA=1`. In
//! any other setup (CI has Mesa but no CUDA driver; a GPU host has NVIDIA's EGL) the test prints
//! why it cannot run and skips, unless `CUDA_GL_REQUIRE_MESA=1` makes that a failure.
//!
//! A binary of its own, not a module of `gpu_suite`: it runs in a process set up for it alone
//! (libglvnd's EGL pointed at Mesa by `.mesa/mesa-env.sh`), in which the suite's GPU tests get
//! no NVIDIA GL context.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod gpu;
// `gpu` re-exports the harness's `noise`.
mod harness;

use cuda_gl::display::{DisplayTarget, Format, Layout, Mode};
use cuda_gl::egl::HeadlessContext;
use cuda_gl::video::{
    ColorMatrix, ColorRange, ColorSpace, Converter, VideoFormat, VideoLayout, VideoPlanes,
};
use cuda_gl::{
    Context, Device, DeviceBuffer, Error, GlDeviceList, ImageTarget, RegisterFlags,
    RegisteredBuffer, RegisteredImage, Stream, StreamFlags, gl_devices,
};
use gpu::{delete_buffer, delete_texture, gl_buffer, gl_texture_storage};
use std::sync::Arc;

fn skip_or_fail(reason: String) {
    if std::env::var("CUDA_GL_REQUIRE_MESA").is_ok_and(|v| v == "1") {
        panic!("CUDA_GL_REQUIRE_MESA=1, but the test cannot run: {reason}");
    }
    eprintln!("skipped: {reason}");
}

fn assert_not_nvidia(what: &str, err: &Error) {
    eprintln!("{what}: {err}");
    assert!(
        matches!(err, Error::NotNvidiaGl { .. }),
        "{what}: expected Error::NotNvidiaGl, got {err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("not provided by the NVIDIA driver"), "{text}");
    assert!(text.contains("__EGL_VENDOR_LIBRARY_FILENAMES"), "{text}");
}

/// CUDA device 0 and a headless GL context of a software renderer (Mesa's, by
/// `.mesa/mesa-env.sh`), current with the `gl` crate loaded; `None` after saying why (or a
/// failure under `CUDA_GL_REQUIRE_MESA=1`) where this process has not both.
fn mesa_next_to_cuda() -> Option<(Device, HeadlessContext)> {
    let device = match Device::get(0) {
        Ok(d) => d,
        Err(e) => {
            skip_or_fail(format!("no CUDA device: {e}"));
            return None;
        }
    };
    let gl = match HeadlessContext::any_gl() {
        Ok(gl) => gl,
        Err(e) => {
            skip_or_fail(format!("no headless GL context: {e}"));
            return None;
        }
    };
    gl::load_with(|name| gl.get_proc_address(name));
    if !gl.is_software() {
        skip_or_fail(format!(
            "the GL context is {} ({}), not a software renderer; point \
             __EGL_VENDOR_LIBRARY_FILENAMES at Mesa's vendor file (source .mesa/mesa-env.sh)",
            gl.renderer(),
            gl.vendor()
        ));
        return None;
    }
    eprintln!(
        "GL: {} / {} / {}; CUDA device 0: {}",
        gl.vendor(),
        gl.renderer(),
        gl.version(),
        device.name().unwrap()
    );
    Some((device, gl))
}

#[test]
fn mesa_gl_next_to_cuda_is_not_nvidia_gl() {
    let Some((device, _gl)) = mesa_next_to_cuda() else {
        return;
    };

    // The GL context's GPU, asked directly.
    let err = gl_devices(GlDeviceList::All).unwrap_err();
    assert_not_nvidia("cuGLGetDevices", &err);
    // A CUDA context "for the current GL context".
    let err = Context::for_current_gl().unwrap_err();
    assert_not_nvidia("Context::for_current_gl", &err);

    // Registration, from a CUDA context made without asking GL.
    let ctx = Context::new(&device).unwrap();
    let buffer = gl_buffer(4096, None);
    let err = RegisteredBuffer::register(&ctx, buffer, RegisterFlags::NONE).unwrap_err();
    assert_not_nvidia("register a buffer", &err);
    delete_buffer(buffer);

    let texture = gl_texture_storage(gl::TEXTURE_2D, 1, 64, 64, 1);
    let err = RegisteredImage::register(
        &ctx,
        texture,
        ImageTarget::Texture2D,
        RegisterFlags::SURFACE_LOAD_STORE,
    )
    .unwrap_err();
    assert_not_nvidia("register a texture", &err);
    delete_texture(texture);

    // The display target: `auto` picks the staged mode, says why, and its frames are right.
    display_target_is_staged(&ctx);

    // Nothing was left behind for a later call to report.
    ctx.check_drop_errors().unwrap();
}

/// On Mesa's GL, `auto` picks [`Mode::Staged`] and reports interop refused as not NVIDIA's GL
/// with the fix; frames drawn by a kernel into the pixels and through the surface equal the
/// CPU's at odd sizes and at 1080p, right after their present (uploaded band by band: 1080p
/// in 8 bands, 1001x2333 in 9, the last shorter).
fn display_target_is_staged(ctx: &Arc<Context>) {
    let stream = Stream::new(ctx, StreamFlags::NonBlocking).unwrap();
    let kernels = cuda_gl::Module::from_ptx(ctx, gpu::TEST_PTX).unwrap();
    let fill = kernels.function("fill_u32").unwrap();
    let fill_surface = kernels.function("surface_fill_rgba8").unwrap();
    for (w, h) in [(1001u32, 333u32), (77, 1201), (1920, 1080), (1001, 2333)] {
        let (mut target, report) = gpu::display_target(ctx, (w, h), None);
        let starts = "display: staged (interop refused: not_nvidia_gl";
        let line = harness::report_line(&report, target.mode(), Mode::Staged, starts);
        assert!(line.contains("fix: "), "{line}");
        let words = w as usize * h as usize;
        // Seed 77 into the pixels, 78 through the surface (the target's CUDA array): both
        // reach the texture through pinned memory and the upload with no pixel buffer.
        for seed in [77u32, 78] {
            let frame = target.frame(&stream).unwrap();
            if seed == 77 {
                let ptr = frame.pixels().unwrap().ptr();
                // SAFETY: the pixels hold `words` RGBA8 texels of this context, written on the
                // frame's stream before its present.
                unsafe { gpu::launch_words(&fill, &stream, ptr, words, seed) }.unwrap();
            } else {
                let surface = frame.surface().unwrap();
                // SAFETY: the surface covers the w x h RGBA8 frame, written on the frame's
                // stream before its present.
                unsafe {
                    gpu::launch_image(
                        &fill_surface,
                        &stream,
                        surface,
                        (w as usize, h as usize),
                        seed,
                    )
                }
                .unwrap();
            }
            // No flush: the present has uploaded every band.
            frame.present().unwrap();
            let texels = gpu::read_texture_rgba8(target.texture().0, w as usize, h as usize, 0);
            let wrong = (0..words)
                .filter(|&i| texels[i] != gpu::pattern(i as u32, seed))
                .count();
            assert_eq!(
                wrong, 0,
                "staged {w}x{h} frame {seed}: {wrong} texels wrong"
            );
        }
    }
}

/// On Mesa's GL (staged mode: frames uploaded from pinned memory in bands), what `show` and
/// `show_video` put on a target reads back through `read_pixels` byte for byte, and the same
/// as `glGetTexImage` reads: the first frame on a fresh target (a P010 frame at 1001x333, as
/// example 13 shows first, which read back as all zeros: `read_pixels` went through a
/// `glGetnTexImage` that Mesa 22.3 does not dispatch), the next one, and frames after the
/// target was resized by a show of another size and by `resize`, at odd sizes and at 1080p.
#[test]
fn staged_shows_read_back_byte_for_byte_through_read_pixels() {
    let Some((device, _gl)) = mesa_next_to_cuda() else {
        return;
    };
    let ctx = Context::new(&device).unwrap();
    let show = Shows {
        stream: Stream::new(&ctx, StreamFlags::NonBlocking).unwrap(),
        converter: Converter::load(&ctx).unwrap(),
        ctx,
    };
    let bt2020 = ColorSpace::new(ColorMatrix::Bt2020, ColorRange::Limited);
    // Example 13's layouts, as NVDEC leaves them: pitch 2048, the chroma plane after the
    // luma's aligned height.
    let p010_odd =
        VideoLayout::with_chroma((1001, 333), VideoFormat::P010, 2048, 2048 * 336, 2048).unwrap();
    let nv12_hd =
        VideoLayout::with_chroma((1920, 1080), VideoFormat::Nv12, 2048, 2048 * 1088, 2048).unwrap();
    let p010_tall = VideoLayout::new((77, 1201), VideoFormat::P010, 96 * 2).unwrap();

    // As example 13: a fresh 1001x333 target, a P010 frame first.
    let (mut target, report) = gpu::display_target(&show.ctx, (1001, 333), None);
    eprintln!("{report}");
    assert_eq!(target.mode(), Mode::Staged, "{report}");
    show.video(&mut target, p010_odd, bt2020, 1);
    show.video(&mut target, p010_odd, ColorSpace::default(), 2);
    show.rgba8(&mut target, (1001, 333), 3);
    // Resized by the shows: to 1080p NV12, then a tall odd P010 and an RGBA8 image of its size.
    show.video(&mut target, nv12_hd, ColorSpace::default(), 4);
    show.video(&mut target, p010_tall, bt2020, 5);
    show.rgba8(&mut target, (77, 1201), 6);
    // Resized by `resize`, then an image of the new size.
    target.resize(1001, 333).unwrap();
    assert_eq!(
        (target.size(), target.format()),
        ((1001, 333), Format::Rgba8)
    );
    show.rgba8(&mut target, (1001, 333), 7);
    drop(target);

    // A fresh target of each odd size, an RGBA8 image first, then a P010 frame.
    for (size, video) in [((77, 1201), p010_tall), ((1001, 333), p010_odd)] {
        let (mut target, report) = gpu::display_target(&show.ctx, size, None);
        assert_eq!(target.mode(), Mode::Staged, "{report}");
        show.rgba8(&mut target, size, 8);
        show.video(&mut target, video, bt2020, 9);
    }
    drop(show.converter);
    show.ctx.check_drop_errors().unwrap();
}

/// What the read-back test shows with: its CUDA context, stream and video converter.
struct Shows {
    stream: Stream,
    converter: Converter,
    ctx: Arc<Context>,
}

impl Shows {
    /// Shows a pseudo-random RGBA8 image of `size` (seeded by `seed`) and checks that the
    /// target holds it.
    fn rgba8(&self, target: &mut DisplayTarget, size: (u32, u32), seed: u64) {
        let layout = Layout::packed(size, Format::Rgba8).unwrap();
        let bytes = gpu::noise(layout.bytes(), seed);
        let src = DeviceBuffer::from_slice(&self.ctx, &bytes).unwrap();
        target.show(&src, layout, &self.stream).unwrap();
        assert_holds(target, &bytes, &format!("RGBA8 {size:?} image {seed}"));
    }

    /// Shows a pseudo-random frame of `layout` (seeded by `seed`) under `color` and checks that
    /// the target holds what the converter makes of it on the GPU, byte for byte.
    fn video(&self, target: &mut DisplayTarget, layout: VideoLayout, color: ColorSpace, seed: u64) {
        let what = format!("{:?} {:?} frame {seed}", layout.format(), layout.size());
        let src = DeviceBuffer::from_slice(&self.ctx, &gpu::noise(layout.bytes(), seed)).unwrap();
        let rgba = Layout::packed(layout.size(), Format::Rgba8).unwrap();
        let mut converted = DeviceBuffer::<u8>::zeroed(&self.ctx, rgba.bytes()).unwrap();
        self.converter
            .convert_buffer(&src, layout, color, &mut converted, rgba, &self.stream)
            .unwrap();
        let want = converted.to_vec_on(&self.stream).unwrap();
        // The conversion writes every pixel, alpha 255: a frame of zeros (nothing converted)
        // cannot stand for what the target must hold.
        assert!(
            want.chunks_exact(4).all(|p| p[3] == 255),
            "{what}: the converter's own output"
        );
        target
            .show_video(&src, layout, color, &self.stream)
            .unwrap();
        assert_holds(target, &want, &what);
    }
}

/// Asserts that `target`, right after a show, holds `want` (its size's RGBA8 bytes, row 0
/// first): through `read_pixels` and through `glGetTexImage` of its texture.
fn assert_holds(target: &mut DisplayTarget, want: &[u8], what: &str) {
    let (w, h) = target.size();
    let differ = |got: &[u8]| {
        assert_eq!(got.len(), want.len(), "{what}: bytes read back");
        let first = got.iter().zip(want).position(|(a, b)| a != b);
        first.map(|at| {
            let pixel = at / 4;
            let count = got
                .chunks_exact(4)
                .zip(want.chunks_exact(4))
                .filter(|(a, b)| a != b)
                .count();
            format!(
                "{count} of {} pixels differ, first at ({}, {}): {:?}, want {:?}",
                want.len() / 4,
                pixel % w as usize,
                pixel / w as usize,
                &got[pixel * 4..pixel * 4 + 4],
                &want[pixel * 4..pixel * 4 + 4]
            )
        })
    };
    let texels = gpu::read_texture_rgba8(target.texture().0, w as usize, h as usize, 0);
    let stored: Vec<u8> = texels.iter().flat_map(|t| t.to_le_bytes()).collect();
    if let Some(why) = differ(&stored) {
        panic!("{what} {w}x{h}: the texture (glGetTexImage) does not hold the image: {why}");
    }
    if let Some(why) = differ(&target.read_pixels().unwrap()) {
        panic!("{what} {w}x{h}: read_pixels does not give what the texture holds: {why}");
    }
}

/// On Mesa's GL, video planes in auto mode run staged and report interop refused as not
/// NVIDIA's GL, with the fix; asked for interop, they are refused so. The planes of an NV12 and
/// a P010 frame of an odd size with padded rows (and of a second frame each) reach the luma
/// and chroma textures byte for byte, as `glGetTexImage` reads them.
#[test]
fn video_planes_on_mesa_run_staged_byte_for_byte() {
    let Some((device, _gl)) = mesa_next_to_cuda() else {
        return;
    };
    let ctx = Context::new(&device).unwrap();
    let stream = Stream::new(&ctx, StreamFlags::NonBlocking).unwrap();
    let (w, h) = (77u32, 41u32);
    for (format, pitch, internal) in [
        (VideoFormat::Nv12, 96, [gl::R8, gl::RG8]),
        (VideoFormat::P010, 96 * 2 + 8, [gl::R16, gl::RG16]),
    ] {
        let layout = VideoLayout::new((w, h), format, pitch).unwrap();
        let sizes = [layout.size(), layout.chroma_size()];
        let storage = |plane: usize| {
            let (pw, ph) = sizes[plane];
            gl_kit::texture::storage_of(gl::TEXTURE_2D, internal[plane], 1, (pw, ph, 1)).unwrap()
        };
        let textures = [storage(0), storage(1)];
        let err = VideoPlanes::new(&ctx, textures, format, Some(Mode::Interop)).unwrap_err();
        assert_not_nvidia(&format!("{format:?} planes in interop"), &err);

        let (mut planes, report) = VideoPlanes::new(&ctx, textures, format, None).unwrap();
        eprintln!("{report}");
        assert_eq!(planes.mode(), Mode::Staged, "{format:?}: {report}");
        assert_eq!(report.mode, Mode::Staged, "{format:?}: {report}");
        assert!(
            matches!(
                report.refused.as_slice(),
                [(Mode::Interop, Error::NotNvidiaGl { .. })]
            ),
            "{format:?}: {report}"
        );
        assert!(report.fix().is_some(), "{format:?}: {report}");
        assert_eq!(planes.size(), (w, h), "{format:?}");

        let bps = format.bytes_per_sample();
        for seed in [61u64, 62] {
            let what = format!("{format:?} {w}x{h} frame {seed}");
            let bytes = gpu::noise(layout.bytes(), seed);
            let src = DeviceBuffer::from_slice(&ctx, &bytes).unwrap();
            planes.upload(&src, layout, &stream).unwrap();
            let planes_of = [
                (0, layout.luma_pitch(), 1),
                (layout.chroma_offset(), layout.chroma_pitch(), 2),
            ];
            for (plane, (start, pitch, channels)) in planes_of.into_iter().enumerate() {
                let (pw, ph) = sizes[plane];
                let row = pw as usize * channels * bps;
                let want = harness::packed_rows(&bytes, start, pitch, row, ph);
                let got = gl_kit::readback::plane(textures[plane], 0, channels, bps).unwrap();
                let name = ["luma", "chroma"][plane];
                let differ = got.iter().zip(&want).filter(|(a, b)| a != b).count();
                assert_eq!(got.len(), want.len(), "{what}: {name} bytes read back");
                assert_eq!(
                    differ, 0,
                    "{what}: {differ} bytes of the {name} texture differ"
                );
            }
        }
        drop(planes);
        textures.into_iter().for_each(delete_texture);
    }
    ctx.check_drop_errors().unwrap();
}

/// The one-call set-up on a machine whose GL is not on the CUDA GPU: `for_cuda_device_or_any`
/// falls back to Mesa's GL and says why, and `Context::for_current_gl_or` gives the CUDA device's
/// context instead of an error.
#[test]
fn set_up_falls_back_to_any_gl_and_says_why() {
    let device = match Device::get(0) {
        Ok(d) => d,
        Err(e) => return skip_or_fail(format!("no CUDA device: {e}")),
    };
    let gl = match HeadlessContext::for_cuda_device_or_any(&device) {
        Ok(gl) => gl,
        Err(e) => return skip_or_fail(format!("no headless GL context at all: {e}")),
    };
    if !gl.is_software() {
        return skip_or_fail(format!(
            "the GL context is {} ({}), not a software renderer: source .mesa/mesa-env.sh",
            gl.renderer(),
            gl.vendor()
        ));
    }
    let why = gl.fallback_reason().expect("a fallback says why");
    eprintln!("fell back to {} because: {why}", gl.renderer());
    assert_eq!(gl.cuda_device(), None);
    let ctx = Context::for_current_gl_or(&device).unwrap();
    assert_eq!(ctx.device().raw(), device.raw());
    // The error it stands in for is still there for a caller that asks.
    assert_not_nvidia(
        "Context::for_current_gl",
        &Context::for_current_gl().unwrap_err(),
    );
}

/// The wgpu GL route (feature `wgpu-gl`) on Mesa's GL next to CUDA: `open_gl_adapter` refuses
/// the context as not NVIDIA's before wgpu is opened on it, and so does `open_gl_device` given
/// an adapter opened over it by wgpu-hal directly; on a wgpu device opened on that adapter the
/// usual way, a `WgpuTarget` in auto mode runs staged, says why (with the fix), and shows what
/// it is given, byte for byte.
#[cfg(feature = "wgpu-gl")]
#[test]
fn the_wgpu_gl_route_on_mesa_is_refused_and_a_wgpu_target_runs_staged() {
    use cuda_gl::DeviceBuffer;
    use cuda_gl::wgpu_interop::{WgpuTarget, open_gl_adapter, open_gl_device};
    let Some((device, gl)) = mesa_next_to_cuda() else {
        return;
    };
    let ctx = Context::new(&device).unwrap();
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::empty(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    // SAFETY: `gl` is current on this thread; the call refuses it before wgpu is opened (what
    // the test checks), and had it not, the objects would be dropped at once, `gl` current.
    let err = unsafe { open_gl_adapter(&instance, &ctx) }.unwrap_err();
    assert_not_nvidia("open_gl_adapter", &err);

    // SAFETY: `gl` is current on this thread, the test's, until the wgpu objects below are
    // dropped (before it, at the end); the test's GL calls put back what they bind.
    let exposed = unsafe {
        wgpu::hal::gles::Adapter::new_external(
            |name| gl.get_proc_address(name),
            wgpu::GlBackendOptions::default(),
        )
    }
    .expect("wgpu's GL backend over Mesa's context");
    // SAFETY: an adapter of `new_external` belongs to no instance (as `open_gl_adapter`'s).
    let adapter = unsafe { instance.create_adapter_from_hal::<wgpu::hal::api::Gles>(exposed) };
    let err = open_gl_device(&adapter, &ctx, &Default::default()).unwrap_err();
    assert_not_nvidia("open_gl_device", &err);
    let (wgpu_device, queue) = harness::ready(adapter.request_device(&Default::default()))
        .expect("a wgpu device over Mesa's context");
    let stream = Stream::new(&ctx, StreamFlags::NonBlocking).unwrap();
    for (w, h) in [(1001u32, 333u32), (77, 1201)] {
        let layout = Layout::packed((w, h), Format::Rgba8).unwrap();
        let (mut target, report) =
            WgpuTarget::new(&ctx, &wgpu_device, &queue, layout, None).unwrap();
        // The refusals close their parenthesis before the API: `Report`'s Display.
        let starts = "display: staged (interop refused: not_nvidia_gl); wgpu GL: ";
        let line = harness::report_line(&report, target.mode(), Mode::Staged, starts);
        assert!(line.contains("fix: "), "{line}");
        let want = harness::noise(layout.bytes(), u64::from(w));
        let src = DeviceBuffer::from_slice(&ctx, &want).unwrap();
        target.show(&src, layout, &stream).unwrap();
        assert_eq!(target.read_pixels().unwrap(), want, "{w}x{h}");
    }
    drop((wgpu_device, queue, adapter, instance));
    drop(gl);
    ctx.check_drop_errors().unwrap();
}
