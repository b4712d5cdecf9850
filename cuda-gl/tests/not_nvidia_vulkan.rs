//! wgpu on a Vulkan that is not the CUDA GPU's (Mesa's lavapipe) next to a working CUDA driver:
//! `open_device` finds no adapter on the CUDA GPU and says so, `check_device` refuses the
//! lavapipe device as another GPU, and a `WgpuTarget` made on it with no mode forced refuses
//! interop (the report names why) and runs staged: device memory shown in RGBA8, one-channel
//! data through a colour map, and an NV12 frame all reach the texture, every byte checked; and
//! `WgpuVideoPlanes` runs staged too, an NV12 (and, where lavapipe has 16-bit textures, a P010)
//! frame's planes byte for byte.
//!
//! This needs an unusual process: the Vulkan loader pointed at lavapipe alone while libcuda is
//! NVIDIA's. On a GPU host: `bash ci/gpu/fetch-mesa-egl-debs.sh` here, carry `.mesa` (and `.gl`,
//! for the Vulkan loader), then `source .mesa/mesa-env.sh` there before running this binary with
//! `CUDA_GL_REQUIRE_MESA=1` (`ci/gpu/suite.sh --mesa` does). Anywhere else it prints why it
//! cannot run and skips, unless `CUDA_GL_REQUIRE_MESA=1` makes that a failure.
#![cfg(feature = "wgpu")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// The shared harness (not `tests/gpu`, which needs the `egl` feature this test does without).
#[path = "harness/mod.rs"]
mod harness;
#[path = "wgpu_read/mod.rs"]
mod wgpu_read;

use cuda_gl::display::{ColorMap, Format, Layout, Mode, Palette};
use cuda_gl::video::{ColorSpace, VideoFormat, VideoLayout, convert_cpu};
use cuda_gl::wgpu_interop::{
    WgpuError, WgpuTarget, WgpuVideoPlanes, check_device, find_adapter, open_device,
};
use cuda_gl::{Context, Device, DeviceBuffer, Error, Stream, StreamFlags};
use harness::{packed_rows, ready};

fn skip_or_fail(reason: String) {
    if std::env::var("CUDA_GL_REQUIRE_MESA").is_ok_and(|v| v == "1") {
        panic!("CUDA_GL_REQUIRE_MESA=1, but the test cannot run: {reason}");
    }
    eprintln!("skipped: {reason}");
}

/// `n` bytes that differ from pixel to pixel and with `seed`.
fn bytes_of(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503) >> 3) as u8)
        .collect()
}

#[test]
fn a_wgpu_target_on_lavapipe_beside_cuda_runs_staged_and_says_why() {
    let device = match Device::get(0) {
        Ok(d) => d,
        Err(e) => return skip_or_fail(format!("no CUDA device: {e}")),
    };
    let ctx = Context::new(&device).unwrap();
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = ready(instance.enumerate_adapters(wgpu::Backends::VULKAN));
    let Some(adapter) = adapters
        .into_iter()
        .find(|a| a.get_info().device_type == wgpu::DeviceType::Cpu)
    else {
        return skip_or_fail(
            "no software Vulkan adapter (lavapipe); point VK_DRIVER_FILES at Mesa's lvp_icd \
             (source .mesa/mesa-env.sh)"
                .into(),
        );
    };
    let info = adapter.get_info();
    eprintln!(
        "Vulkan: {} ({}); CUDA device 0: {}",
        info.name,
        info.driver,
        device.name().unwrap()
    );

    // The helper that finds the adapter on the CUDA GPU finds none, and says what to install.
    let e = find_adapter(&instance, &ctx).unwrap_err();
    eprintln!("find_adapter: {e}");
    assert!(matches!(e, Error::Wgpu(WgpuError::NoAdapter { .. })), "{e}");
    assert!(e.is_unsupported_setup(), "{e}");
    // Given lavapipe's adapter anyway, the helper that opens the device refuses it before it
    // opens anything: another GPU than CUDA's (or one without the extensions).
    let e = open_device(&adapter, &ctx, &Default::default()).unwrap_err();
    eprintln!("open_device: {e}");
    assert!(
        matches!(
            e,
            Error::Wgpu(WgpuError::OtherGpu { .. } | WgpuError::Missing { .. })
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("cuda_gl::wgpu_interop::open_device"),
        "{e}"
    );

    // A device the application opened itself on lavapipe: another GPU than CUDA's.
    let (device, queue) = ready(adapter.request_device(&Default::default())).unwrap();
    let e = check_device(&device, &ctx).unwrap_err();
    eprintln!("check_device: {e}");
    assert!(
        matches!(
            e,
            Error::Wgpu(WgpuError::OtherGpu { .. } | WgpuError::Missing { .. })
        ),
        "{e}"
    );

    // Auto: interop refused (the report says why), staged chosen.
    let layout = Layout::packed((333, 101), Format::Rgba8).unwrap();
    let (mut target, report) = WgpuTarget::new(&ctx, &device, &queue, layout, None).unwrap();
    // The refusal is named.
    let starts = "display: staged (interop refused: ";
    let line = harness::report_line(&report, target.mode(), Mode::Staged, starts);
    assert!(line.contains("; wgpu Vulkan: "), "{line}");

    let stream = Stream::new(&ctx, StreamFlags::NonBlocking).unwrap();
    // RGBA8 at a pitch wider than the row.
    let want = bytes_of(layout.bytes(), 1);
    let pitched = Layout::new((333, 101), layout.pitch() + 12, Format::Rgba8).unwrap();
    let mut padded = vec![0u8; pitched.bytes()];
    for (y, row) in want.chunks(layout.row_bytes()).enumerate() {
        padded[y * pitched.pitch()..][..row.len()].copy_from_slice(row);
    }
    let src = DeviceBuffer::from_slice(&ctx, &padded).unwrap();
    target.show(&src, pitched, &stream).unwrap();
    assert_eq!(target.read_pixels().unwrap(), want, "RGBA8 shown");

    // One channel through a colour map, at another size.
    let map = ColorMap::new(Palette::Viridis, 0.0, 1.0).unwrap();
    target.set_color_map(Some(map)).unwrap();
    let field: Vec<f32> = (0..77 * 45).map(|i| (i % 101) as f32 / 100.0).collect();
    let values = DeviceBuffer::from_slice(&ctx, &field).unwrap();
    target
        .show(
            &values,
            Layout::packed((77, 45), Format::R32F).unwrap(),
            &stream,
        )
        .unwrap();
    let want: Vec<u8> = field.iter().flat_map(|&v| map.color_of(v)).collect();
    assert_eq!(target.read_pixels().unwrap(), want, "R32F through viridis");

    // A decoded NV12 frame.
    let video = VideoLayout::packed((129, 67), VideoFormat::Nv12).unwrap();
    let planes = bytes_of(video.bytes(), 7);
    let frame = DeviceBuffer::from_slice(&ctx, &planes).unwrap();
    target
        .show_video(&frame, video, ColorSpace::default(), &stream)
        .unwrap();
    let want = convert_cpu(&planes, &video, ColorSpace::default()).unwrap();
    let got = target.read_pixels().unwrap();
    let far = got
        .iter()
        .zip(&want)
        .filter(|(a, b)| a.abs_diff(**b) > 1)
        .count();
    assert_eq!((got.len(), far), (want.len(), 0), "NV12 shown (within 1)");
    drop(target);

    // The planes of NV12 and P010 frames (P010 where lavapipe offers 16-bit normalized
    // textures, asked for here as an application would), staged, byte for byte.
    let sixteen = adapter.features() & wgpu::Features::TEXTURE_FORMAT_16BIT_NORM;
    let desc = wgpu::DeviceDescriptor {
        required_features: sixteen,
        ..Default::default()
    };
    let (device, queue) = ready(adapter.request_device(&desc)).unwrap();
    let mut formats = vec![VideoFormat::Nv12];
    if sixteen.is_empty() {
        eprintln!("P010 planes not checked: lavapipe offers no TEXTURE_FORMAT_16BIT_NORM");
    } else {
        formats.push(VideoFormat::P010);
    }
    for format in formats {
        let bps = format.bytes_per_sample();
        let layout = VideoLayout::new((129, 67), format, 129 * bps + 7 * bps).unwrap();
        let (mut planes, report) =
            WgpuVideoPlanes::new(&ctx, &device, &queue, (129, 67), format, None).unwrap();
        eprintln!("{report}");
        assert_eq!(planes.mode(), Mode::Staged, "{report}");
        let bytes = bytes_of(layout.bytes(), 9);
        let frame = DeviceBuffer::from_slice(&ctx, &bytes).unwrap();
        planes.upload(&frame, layout, &stream).unwrap();
        let (h, ch) = (layout.height(), layout.chroma_size().1);
        let luma = packed_rows(&bytes, 0, layout.luma_pitch(), layout.luma_row_bytes(), h);
        let chroma = packed_rows(
            &bytes,
            layout.chroma_offset(),
            layout.chroma_pitch(),
            layout.chroma_row_bytes(),
            ch,
        );
        let read = |t| wgpu_read::read_texture(&device, &queue, t);
        assert!(read(planes.luma()) == luma, "{format:?}: the luma plane");
        assert!(
            read(planes.chroma()) == chroma,
            "{format:?}: the chroma plane"
        );
    }
    ctx.check_drop_errors().unwrap();
}
