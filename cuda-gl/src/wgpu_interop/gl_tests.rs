//! The GL route's wgpu side on whatever headless GL this machine has, with no CUDA (Mesa's
//! llvmpipe on CI, NVIDIA's GL on a GPU host): wgpu's GL backend opened over cuda-gl's headless
//! context (`adapter_on_current_gl`, what `open_gl_adapter` does after its CUDA check); the
//! frame texture that cuda-gl makes in that context is what wgpu-hal makes for the same
//! descriptor (SAFETY G3), wgpu holds it by its name, and its texels reach the texture the
//! application samples through the present's blit and through wgpu's copy, every byte, at odd
//! sizes; so are the video planes' GL textures (`GL_R8`, `GL_RG8`, `GL_R16`, `GL_RG16`), whose
//! texels reach textures of the planes' kind through wgpu's copies; wgpu never deletes a
//! texture of cuda-gl's, also when the device is destroyed, and cuda-gl deletes it once both
//! have let go; a device on wgpu's own GL context, or on Vulkan, is refused by name.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::WgpuError;
use super::blit::BlitKind;
use super::device::ready;
use super::format::SharedFormat;
use super::gl_device::{adapter_on_current_gl, check_gl_adapter, check_gl_backend, request_device};
use super::gl_mode::barrier_after_image_stores;
use super::gl_texture::{gl_name_of, wrap};
use super::interop_mode::{blit_pair, copy_command, present_command};
use super::place::{WgpuPlace, descriptor_of, shared_format, texture_descriptor};
use super::read_back::{Readable, read_texture};
use crate::display::{Format, Layout, Mode, TextureObject};
use crate::egl::HeadlessContext;
use crate::egl::test_gl::required;
use crate::error::Error;
use crate::gl_object::{ImageTarget, Kind};
use crate::glapi::{Direction, GlFns, GlOwner, PixelState, query};
use std::sync::Arc;

/// wgpu's GL backend over a headless GL context current on this thread. Field order is drop
/// order: the wgpu objects go while the context is still current.
struct GlWgpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    _adapter: wgpu::Adapter,
    _instance: wgpu::Instance,
    _gl: HeadlessContext,
}

/// [`GlWgpu`] on any headless GL, or `None` (after saying why) where this machine has no EGL
/// library and none is required.
fn gl_wgpu(test: &str) -> Option<GlWgpu> {
    let gl = crate::egl::test_gl::any_gl(test)?;
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::empty(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    // SAFETY: `gl` stays current on this thread, the test's, which alone uses these wgpu
    // objects, and they are dropped before it (`GlWgpu`'s field order); the test's own GL
    // calls put back what they bind.
    let adapter = unsafe { adapter_on_current_gl(&instance, "a test") }.unwrap();
    // What `open_gl_device` asks of the adapter before it opens the device.
    check_gl_adapter(&adapter, "a test").unwrap();
    let desc = wgpu::DeviceDescriptor {
        // The 16-bit video planes' formats where the adapter has them (every desktop GL).
        required_features: adapter.features() & wgpu::Features::TEXTURE_FORMAT_16BIT_NORM,
        required_limits: adapter.limits(),
        ..Default::default()
    };
    let (device, queue) = request_device(&adapter, &desc).unwrap();
    println!(
        "{test}: wgpu {:?} on {} ({})",
        adapter.get_info().backend,
        gl.renderer(),
        gl.version()
    );
    Some(GlWgpu {
        device,
        queue,
        _adapter: adapter,
        _instance: instance,
        _gl: gl,
    })
}

/// `bytes` (a frame of `layout`, rows tightly packed) into texture `name` of the current
/// context, by GL, with the unpack state neutral and the binding put back.
fn upload(fns: &GlFns, name: u32, layout: Layout, bytes: &[u8]) {
    assert_eq!(bytes.len(), layout.bytes());
    upload_texels(fns, name, shape(layout), bytes);
}

/// `bytes` (texels of `format`, rows tightly packed) into texture `name` of `size` of the
/// current context, by GL, with the unpack state neutral and the binding put back.
fn upload_texels(fns: &GlFns, name: u32, (size, texel): ((u32, u32), SharedFormat), bytes: &[u8]) {
    let row = size.0 as usize * texel.bytes_per_texel() as usize;
    assert_eq!(bytes.len(), row * size.1 as usize);
    let (_, format, ty) = texel.gl();
    let state = PixelState::neutral(fns, Direction::Unpack).unwrap();
    let mut bound = 0;
    // SAFETY: a context is current; the texture is 2-D of `layout`, whose rows `bytes` holds
    // tightly packed (checked), read before the call returns (no unpack buffer bound: the
    // neutral state unbinds it); the binding is put back.
    unsafe {
        (fns.get_integerv)(gl::TEXTURE_BINDING_2D, &mut bound);
        (fns.bind_texture)(gl::TEXTURE_2D, name);
        (fns.tex_sub_image_2d)(
            gl::TEXTURE_2D,
            0,
            0,
            0,
            size.0 as i32,
            size.1 as i32,
            format,
            ty,
            bytes.as_ptr().cast(),
        );
        (fns.bind_texture)(gl::TEXTURE_2D, bound as u32);
    }
    state.restore(fns);
    fns.check("glTexSubImage2D (a test frame)").unwrap();
}

/// Bytes of `n` that differ with `seed`, each a hash of its index: every 32-bit float pattern
/// may come up (NaNs with payloads included), so a conversion on the way shows.
fn noise(n: usize, seed: u64) -> Vec<u8> {
    (0..n as u64)
        .map(|i| {
            let h = (i ^ seed.rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            ((h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 56) as u8
        })
        .collect()
}

/// The wgpu format of a target's format.
fn wgpu_format(format: Format) -> wgpu::TextureFormat {
    match format {
        Format::Rgba8 => wgpu::TextureFormat::Rgba8Unorm,
        Format::Rgba32F => wgpu::TextureFormat::Rgba32Float,
        Format::R8 => wgpu::TextureFormat::R8Unorm,
        Format::R32F => wgpu::TextureFormat::R32Float,
    }
}

/// The label of the tests' wrapped textures.
const LABEL: &str = "a test";

/// The size and wgpu format of a frame texture of `layout`.
fn shape(layout: Layout) -> ((u32, u32), SharedFormat) {
    (layout.size(), shared_format(layout.format()))
}

/// cuda-gl's GL texture of `layout`, as the GL route makes it.
fn object(owner: GlOwner, fns: &GlFns, layout: Layout) -> TextureObject {
    let (size, format) = shape(layout);
    TextureObject::create(owner, fns, size, format.gl(), false).unwrap()
}

const FORMATS: [Format; 4] = [Format::Rgba8, Format::Rgba32F, Format::R8, Format::R32F];

/// cuda-gl's frame texture is what wgpu-hal makes for the same descriptor (a 2-D texture of
/// the size, one level, the internal format), and wgpu holds it by its name as a 2-D texture.
#[test]
fn the_frame_texture_is_what_wgpu_hal_makes_and_wgpu_holds_it_by_name() {
    let test = "the_frame_texture_is_what_wgpu_hal_makes";
    let Some(w) = gl_wgpu(test) else { return };
    check_gl_backend(&w.device, "a test").unwrap();
    let (owner, fns) = GlOwner::current("a test").unwrap();
    for format in FORMATS {
        let layout = Layout::packed((77, 13), format).unwrap();
        let usage = wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_SRC;
        let made = w
            .device
            .create_texture(&descriptor_of(layout, "a test", usage));
        let (wgpu_name, target) = gl_name_of(&made).expect("a GL texture of wgpu's");
        assert_eq!(target, gl::TEXTURE_2D, "{format:?}");
        let ours = Arc::new(object(owner, fns, layout));
        let storage = |name| query::texture_2d_storage(fns, name).unwrap().unwrap();
        let (theirs, mine) = (storage(wgpu_name), storage(ours.name()));
        println!("{format:?}: wgpu-hal's {theirs:?}, cuda-gl's {mine:?}");
        assert_eq!(mine.size, theirs.size, "{format:?}");
        assert_eq!(mine.internal_format, theirs.internal_format, "{format:?}");
        assert_eq!(mine.immutable_levels, theirs.immutable_levels, "{format:?}");
        let wrapped = wrap(&w.device, &ours, shape(layout), LABEL).unwrap();
        assert_eq!(
            gl_name_of(&wrapped),
            Some((ours.name(), gl::TEXTURE_2D)),
            "{format:?}"
        );
        assert_eq!(wrapped.format(), wgpu_format(format));
    }
}

/// Texels written into cuda-gl's frame texture (by GL here, by CUDA on the GL route) reach the
/// texture the application samples, every byte, at odd sizes: through the present's shader
/// blit where the format has one, and through wgpu's copy, as the present submits them.
#[test]
fn frame_texels_reach_the_sampled_texture_by_the_blit_and_by_the_copy() {
    let test = "frame_texels_reach_the_sampled_texture";
    let Some(w) = gl_wgpu(test) else { return };
    let (owner, fns) = GlOwner::current("a test").unwrap();
    for (k, format) in FORMATS.into_iter().enumerate() {
        for size in [(1001, 333), (77, 1201), (1, 1)] {
            let layout = Layout::packed(size, format).unwrap();
            let place = WgpuPlace::new(&w.device, &w.queue, layout, Mode::Interop).unwrap();
            let ours = Arc::new(object(owner, fns, layout));
            let source = wrap(&w.device, &ours, shape(layout), LABEL).unwrap();
            let blit = blit_pair(&place, &source).unwrap();
            println!(
                "{format:?} {size:?}: blit {:?}",
                blit.as_ref().map(|b| b.0.kind())
            );
            for (round, by) in [blit.as_ref(), None].into_iter().enumerate() {
                let want = noise(layout.bytes(), (k * 10 + round) as u64 + 1);
                upload(fns, ours.name(), layout, &want);
                let command = present_command(&place, by, &source).unwrap();
                w.queue.submit([command]);
                // As the GL route's present follows its compute blit.
                if by.is_some_and(|(blit, _)| blit.kind() == BlitKind::Compute) {
                    barrier_after_image_stores();
                }
                let got = read_texture(&Readable::place(&place)).unwrap();
                let how = if by.is_some() { "blit" } else { "copy" };
                let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
                assert_eq!(bad, 0, "{format:?} {size:?} by {how}: {bad} bytes differ");
            }
        }
    }
}

/// wgpu never deletes the frame texture: not when its handle goes, nor when the device is
/// destroyed (wgpu then destroys every texture of it); cuda-gl's hold keeps it, and it is
/// deleted once that hold goes too.
#[test]
fn wgpu_never_deletes_the_frame_texture_and_the_last_hold_does() {
    let test = "wgpu_never_deletes_the_frame_texture";
    let Some(w) = gl_wgpu(test) else { return };
    let (owner, fns) = GlOwner::current("a test").unwrap();
    let is_texture = |name| query::exists(fns, Kind::Image(ImageTarget::Texture2D), name);
    let layout = Layout::packed((64, 48), Format::Rgba8).unwrap();
    // A destroyed device's poll may report it lost: only the wait matters here.
    let idle = |w: &GlWgpu| drop(w.device.poll(wgpu::PollType::wait_indefinitely()));
    // Its handle dropped: wgpu lets go, the texture stays for cuda-gl's hold.
    let first = Arc::new(object(owner, fns, layout));
    let wrapped = wrap(&w.device, &first, shape(layout), LABEL).unwrap();
    drop(wrapped);
    idle(&w);
    assert_eq!(
        Arc::strong_count(&first),
        1,
        "wgpu's callback still holds the texture"
    );
    assert!(is_texture(first.name()));
    // The device destroyed while the texture is in use: wgpu destroys it, GL keeps it.
    let second = Arc::new(object(owner, fns, layout));
    let wrapped = wrap(&w.device, &second, shape(layout), LABEL).unwrap();
    w.device.destroy();
    idle(&w);
    assert!(is_texture(second.name()), "wgpu deleted cuda-gl's texture");
    assert!(
        gl_name_of(&wrapped).is_none(),
        "wgpu kept the texture of a destroyed device"
    );
    drop(wrapped);
    idle(&w);
    // cuda-gl's holds go last: the textures are deleted.
    let names = [first.name(), second.name()];
    drop((first, second));
    for name in names {
        assert!(!is_texture(name), "texture {name} outlived its last hold");
    }
}

/// The texels of texture `name` of the current context (of `size` and `format`), rows tightly
/// packed, read by GL with the pack state neutral and the binding put back.
fn read_texels(fns: &GlFns, name: u32, (size, texel): ((u32, u32), SharedFormat)) -> Vec<u8> {
    let (_, format, ty) = texel.gl();
    let get = fns.bounded_tex_image().unwrap();
    let mut texels =
        vec![0u8; size.0 as usize * texel.bytes_per_texel() as usize * size.1 as usize];
    let state = PixelState::neutral(fns, Direction::Pack).unwrap();
    let mut bound = 0;
    // SAFETY: a context is current; the texture is 2-D; no pack buffer is bound (the neutral
    // state unbinds it) and GL writes at most `texels.len()` bytes; the binding is put back.
    unsafe {
        (fns.get_integerv)(gl::TEXTURE_BINDING_2D, &mut bound);
        (fns.bind_texture)(gl::TEXTURE_2D, name);
        get(
            gl::TEXTURE_2D,
            0,
            format,
            ty,
            i32::try_from(texels.len()).unwrap(),
            texels.as_mut_ptr().cast(),
        );
        (fns.bind_texture)(gl::TEXTURE_2D, bound as u32);
    }
    state.restore(fns);
    fns.check("glGetnTexImage (a test's read-back)").unwrap();
    texels
}

/// The wgpu video planes' GL textures (`GL_R8` + `GL_RG8`, `GL_R16` + `GL_RG16`), made as the
/// GL route makes them, are what wgpu-hal makes for the planes' formats (the 16-bit ones where
/// the adapter has `TEXTURE_FORMAT_16BIT_NORM`: every desktop GL), and their texels reach
/// textures of the planes' kind through wgpu's copies, as an upload submits them, every byte,
/// at odd sizes.
#[test]
fn the_plane_textures_are_what_wgpu_hal_makes_and_reach_the_sampled_textures() {
    let test = "the_plane_textures_are_what_wgpu_hal_makes";
    let Some(w) = gl_wgpu(test) else { return };
    let (owner, fns) = GlOwner::current("a test").unwrap();
    let held = w.device.features();
    let formats = [
        SharedFormat::R8Unorm,
        SharedFormat::Rg8Unorm,
        SharedFormat::R16Unorm,
        SharedFormat::Rg16Unorm,
    ];
    let usage = wgpu::TextureUsages::TEXTURE_BINDING
        | wgpu::TextureUsages::COPY_SRC
        | wgpu::TextureUsages::COPY_DST;
    for (k, format) in formats.into_iter().enumerate() {
        if !held.contains(format.required_features()) {
            assert!(
                !required(),
                "{format:?}: no TEXTURE_FORMAT_16BIT_NORM on this GL"
            );
            println!("{test}: {format:?} skipped, no TEXTURE_FORMAT_16BIT_NORM here");
            continue;
        }
        for size in [(1001, 333), (501, 167), (77, 1201), (39, 601), (1, 1)] {
            let theirs = w
                .device
                .create_texture(&texture_descriptor(size, format, LABEL, usage));
            let (their_name, target) = gl_name_of(&theirs).expect("a GL texture of wgpu's");
            assert_eq!(target, gl::TEXTURE_2D, "{format:?}");
            let ours =
                Arc::new(TextureObject::create(owner, fns, size, format.gl(), false).unwrap());
            let storage = |name| query::texture_2d_storage(fns, name).unwrap().unwrap();
            let (theirs_storage, mine) = (storage(their_name), storage(ours.name()));
            assert_eq!(mine.size, theirs_storage.size, "{format:?} {size:?}");
            assert_eq!(
                mine.internal_format, theirs_storage.internal_format,
                "{format:?} {size:?}"
            );
            assert_eq!(
                mine.immutable_levels, theirs_storage.immutable_levels,
                "{format:?} {size:?}"
            );
            let source = wrap(&w.device, &ours, (size, format), LABEL).unwrap();
            assert_eq!(source.format(), format.wgpu());
            let row = size.0 as usize * format.bytes_per_texel() as usize;
            let want = noise(row * size.1 as usize, k as u64 * 100 + u64::from(size.0));
            upload_texels(fns, ours.name(), (size, format), &want);
            w.queue
                .submit([copy_command(&w.device, &[(&source, &theirs)]).unwrap()]);
            let got = read_texels(fns, their_name, (size, format));
            let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
            assert_eq!(bad, 0, "{format:?} {size:?}: {bad} bytes differ");
        }
        println!("{test}: {format:?}: wgpu-hal's storage, every byte copied");
    }
}

/// Marks the child process that [`alone_in_a_child`] runs a test in.
const CHILD: &str = "CUDA_GL_GL_TESTS_CHILD";

/// Runs test `name` of this module in a child process of this test binary, alone, and asserts
/// that it passed (at most 120 s); `false` in that child, where the test's body then runs.
///
/// For a test that opens wgpu's own GL instance: where libEGL lacks
/// `EGL_KHR_display_reference` (Mesa 22.3), wgpu's display is the one cuda-gl's contexts of the
/// other tests use (Mesa's surfaceless platform), and wgpu-hal terminates it when its instance
/// goes, ending those contexts: a test that then makes one current gets
/// `EglError::DisplayTerminated` (see `tests/egl_shared_display.rs`). cuda-gl itself no longer
/// terminates a shared display, which used to end wgpu's under it: wgpu-hal then panicked in a
/// `Drop` and the test binary aborted (36 of 40 parallel runs of these tests on Mesa 22.3).
fn alone_in_a_child(name: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    let module = module_path!()
        .split_once("::")
        .map_or(module_path!(), |(_, path)| path);
    let test = format!("{module}::{name}");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{test}: the child ran over 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
    }
    print!("{out}");
    assert!(status.success(), "{test}: the child failed ({status})");
    assert!(
        out.lines().any(|line| line == "running 1 test"),
        "{test}: the child did not run it alone"
    );
    true
}

/// A device on a GL context that wgpu made itself (its own EGL display) is refused by name:
/// wgpu makes that context current only inside its own calls. Run alone in a child process
/// ([`alone_in_a_child`]).
#[test]
fn a_device_on_wgpus_own_gl_context_is_refused() {
    if alone_in_a_child("a_device_on_wgpus_own_gl_context_is_refused") {
        return;
    }
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::GL,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = ready(instance.enumerate_adapters(wgpu::Backends::GL)).unwrap_or_default();
    let Some(adapter) = adapters.into_iter().next() else {
        assert!(!required(), "wgpu's GL backend found no adapter");
        eprintln!("a_device_on_wgpus_own_gl_context_is_refused: skipped, wgpu found no GL");
        return;
    };
    // `open_gl_device` refuses the adapter before it opens a device on it.
    let e = check_gl_adapter(&adapter, "a test").unwrap_err();
    assert!(
        matches!(e, Error::Wgpu(WgpuError::GlOwnContext { .. })),
        "{e}"
    );
    let desc = wgpu::DeviceDescriptor {
        required_limits: adapter.limits(),
        ..Default::default()
    };
    let (device, _queue) = match request_device(&adapter, &desc) {
        Ok(opened) => opened,
        // wgpu's GL backend on NVIDIA's EGL without a window system (the H100 host, driver
        // 580.159.04, 2026-12-07: "Parent device is lost"; also gfx-rs/wgpu#7068): no device to
        // check; the adapter's refusal above is what `open_gl_device` relies on. Only that
        // error: any other fails the test.
        Err(e) if e.to_string().contains("device is lost") => {
            println!("the device check not run: wgpu could not open a device on its own GL: {e}");
            return;
        }
        Err(e) => panic!("a device on wgpu's own GL context: {e}"),
    };
    let e = check_gl_backend(&device, "a test").unwrap_err();
    println!("{e}");
    assert!(
        matches!(e, Error::Wgpu(WgpuError::GlOwnContext { .. })),
        "{e}"
    );
}

/// A texture of the current context's written by `queue.write_texture` and dropped before any
/// submit: wgpu-core's queue holds its last reference (its pending writes) until the next
/// submit or the queue's own drop, which deletes it through whatever GL context is current.
/// Its GL name, and whether the current context has it now.
fn pending_texture(device: &wgpu::Device, queue: &wgpu::Queue, fns: &GlFns) -> u32 {
    let texture = device.create_texture(&texture_descriptor(
        (4, 4),
        SharedFormat::Rgba8Unorm,
        "cuda-gl test: pending write",
        wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::TEXTURE_BINDING,
    ));
    queue.write_texture(
        texture.as_image_copy(),
        &[7u8; 64],
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(16),
            rows_per_image: None,
        },
        texture.size(),
    );
    let (name, _) = gl_name_of(&texture).unwrap();
    drop(texture);
    let is_texture = query::exists(fns, Kind::Image(ImageTarget::Texture2D), name);
    assert!(
        is_texture,
        "wgpu deleted texture {name} before its pending write"
    );
    name
}

/// A place leaked where its GL context is not current (what a GL-route `WgpuTarget` dropped on
/// another thread does) keeps wgpu's queue alive too, when it holds the queue's last clone (the
/// application dropped its own first): wgpu-core's queue drop would otherwise run there,
/// deleting the textures its pending writes hold through the GL context current there, and so
/// that context's texture of the same name. First, on a second device, that the last queue's
/// drop does delete such a texture (in the right context here): what the leak must prevent.
#[test]
fn a_leaked_place_keeps_wgpus_queue_out_of_another_context() {
    let test = "a_leaked_place_keeps_wgpus_queue_out_of_another_context";
    let Some(w) = gl_wgpu(test) else { return };
    let GlWgpu {
        device,
        queue,
        _adapter: adapter,
        _instance: instance,
        _gl: gl,
    } = w;
    let (_, fns) = GlOwner::current("a test").unwrap();
    let desc = wgpu::DeviceDescriptor {
        required_limits: adapter.limits(),
        ..Default::default()
    };
    // The mechanism, with the device's context current: the last queue's drop deletes it.
    let (device2, queue2) = request_device(&adapter, &desc).unwrap();
    let name2 = pending_texture(&device2, &queue2, fns);
    drop((queue2, device2));
    let is_texture = |fns, name| query::exists(fns, Kind::Image(ImageTarget::Texture2D), name);
    assert!(
        !is_texture(fns, name2),
        "the last queue's drop did not delete the texture of its pending write"
    );
    // The place holds the queue's last clone, then is leaked and dropped on another thread,
    // where an unrelated context that has a texture of the same name is current.
    let layout = Layout::packed((8, 8), Format::Rgba8).unwrap();
    let place = WgpuPlace::new(&device, &queue, layout, Mode::Staged).unwrap();
    let name = pending_texture(&device, &queue, fns);
    drop((queue, device));
    std::thread::scope(|s| {
        s.spawn(move || {
            let other = HeadlessContext::any_gl().unwrap();
            let (_, fns) = GlOwner::current("a test").unwrap();
            let mut last = 0;
            while last < name {
                // SAFETY: `other` is current on this thread; a valid out-pointer; binding a
                // generated name makes the texture, and the binding is put back to 0 below.
                unsafe {
                    (fns.gen_textures)(1, &mut last);
                    (fns.bind_texture)(gl::TEXTURE_2D, last);
                }
            }
            // SAFETY: as above.
            unsafe { (fns.bind_texture)(gl::TEXTURE_2D, 0) };
            assert_eq!(last, name, "the other context skipped texture name {name}");
            place.leak();
            drop(place);
            assert!(
                is_texture(fns, name),
                "wgpu's queue deleted texture {name} of another context"
            );
            drop(other);
        });
    });
    // Leaked for good: not deleted in its own context either.
    assert!(is_texture(fns, name));
    drop((adapter, instance, gl));
}
