//! cuda-gl's own pixel transfers against the application's pixel-transfer state (issue 42's
//! soundness hole): in a compatibility-profile context, after the application's own correct
//! `glPixelTransferf(GL_RED_SCALE, 0)` (and a bias, a colour matrix where the imaging subset is
//! there, and odd pixel-store values), a display target's frames still reach its texture as the
//! kernel wrote them, in every mode, video planes reach their textures byte for byte in both
//! modes, and an offscreen target reads back what was drawn; the application's state is as it
//! set it afterwards. Needs `--features egl` and a GPU.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::display::assert_pattern;
use super::video::frames;
use super::video_planes::{MODES as PLANE_MODES, Planes};
use crate::gpu::*;
use cuda_gl::display::{DisplayTarget, Format, Layout, Mode};
use cuda_gl::egl::{EglError, GlProfile, HeadlessConfig, HeadlessContext, Offscreen};
use cuda_gl::video::VideoFormat;
use cuda_gl::{Device, DeviceBuffer};
use gl_kit::entry::entry_point;

// Compatibility-profile enums (the `gl` crate's bindings are core-profile only).
const RED_SCALE: u32 = 0x0D14;
const GREEN_BIAS: u32 = 0x0D19;
const MATRIX_MODE_COLOR: u32 = 0x1800;
const MODELVIEW: u32 = 0x1700;
const COLOR_MATRIX: u32 = 0x80B1;
const MATRIX_MODE: u32 = 0x0BA0;
const PACK_INVERT_MESA: u32 = 0x8758;

/// The compatibility-profile calls the test makes as the application.
struct Compat {
    pixel_transferf: unsafe extern "system" fn(u32, f32),
    get_floatv: unsafe extern "system" fn(u32, *mut f32),
    /// The context has `GL_MESA_pack_invert` (Mesa's), which the application turns on.
    pack_invert: bool,
    /// `glMatrixMode` and `glLoadMatrixf`, where the context has the imaging subset.
    color_matrix: Option<(
        unsafe extern "system" fn(u32),
        unsafe extern "system" fn(*const f32),
    )>,
}

/// A colour matrix that swaps red and blue (column-major).
const SWAP_RED_BLUE: [f32; 16] = [
    0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];
const IDENTITY: [f32; 16] = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

/// The pixel-store values the application sets: none of them neutral.
const STORE: [(u32, i32); 8] = [
    (gl::UNPACK_ALIGNMENT, 8),
    (gl::UNPACK_ROW_LENGTH, 3),
    (gl::UNPACK_SKIP_ROWS, 2),
    (gl::UNPACK_SKIP_PIXELS, 1),
    (gl::PACK_ALIGNMENT, 8),
    (gl::PACK_ROW_LENGTH, 3),
    (gl::PACK_SKIP_ROWS, 2),
    (gl::PACK_SKIP_PIXELS, 1),
];

impl Compat {
    fn load(gl: &HeadlessContext) -> Compat {
        let address = |name: &str| gl.get_proc_address(name);
        let extensions = extensions();
        let has = |name: &str| extensions.iter().any(|e| e == name);
        let has_imaging = has("GL_ARB_imaging");
        // SAFETY: each field's type is the named entry point's signature (Khronos registry).
        unsafe {
            Compat {
                pixel_transferf: entry_point(address, "glPixelTransferf").unwrap(),
                get_floatv: entry_point(address, "glGetFloatv").unwrap(),
                pack_invert: has("GL_MESA_pack_invert"),
                color_matrix: has_imaging.then(|| {
                    (
                        entry_point(address, "glMatrixMode").unwrap(),
                        entry_point(address, "glLoadMatrixf").unwrap(),
                    )
                }),
            }
        }
    }

    /// Sets the application's state (`on`) or GL's initial one.
    fn set(&self, on: bool) {
        // SAFETY: a compatibility context is current; valid parameters and values.
        unsafe {
            (self.pixel_transferf)(RED_SCALE, if on { 0.0 } else { 1.0 });
            (self.pixel_transferf)(GREEN_BIAS, if on { 0.25 } else { 0.0 });
            if let Some((mode, load)) = self.color_matrix {
                mode(MATRIX_MODE_COLOR);
                load(if on { &SWAP_RED_BLUE } else { &IDENTITY }.as_ptr());
                mode(MODELVIEW);
            }
            for (name, value) in STORE {
                let neutral = if name == gl::UNPACK_ALIGNMENT || name == gl::PACK_ALIGNMENT {
                    4
                } else {
                    0
                };
                gl::PixelStorei(name, if on { value } else { neutral });
            }
            if self.pack_invert {
                gl::PixelStorei(PACK_INVERT_MESA, i32::from(on));
            }
        }
        check_gl();
    }

    /// Asserts that the application's state is as [`set`](Self::set) left it (`on`).
    fn assert_state(&self, what: &str) {
        let float = |name| {
            let mut value = -1.0;
            // SAFETY: a compatibility context is current; a valid out-pointer.
            unsafe { (self.get_floatv)(name, &mut value) };
            value
        };
        assert_eq!(float(RED_SCALE), 0.0, "{what}: GL_RED_SCALE");
        assert_eq!(float(GREEN_BIAS), 0.25, "{what}: GL_GREEN_BIAS");
        if self.color_matrix.is_some() {
            let mut matrix = [0.0f32; 16];
            // SAFETY: a 16-float query; `matrix` holds 16.
            unsafe { (self.get_floatv)(COLOR_MATRIX, matrix.as_mut_ptr()) };
            assert_eq!(matrix, SWAP_RED_BLUE, "{what}: GL_COLOR_MATRIX");
            let mut mode = 0;
            // SAFETY: a valid query; a valid out-pointer.
            unsafe { gl::GetIntegerv(MATRIX_MODE, &mut mode) };
            assert_eq!(mode as u32, MODELVIEW, "{what}: GL_MATRIX_MODE");
        }
        for (name, value) in STORE {
            let mut now = -1;
            // SAFETY: a valid query; a valid out-pointer.
            unsafe { gl::GetIntegerv(name, &mut now) };
            assert_eq!(now, value, "{what}: pixel-store parameter 0x{name:04x}");
        }
        if self.pack_invert {
            let mut now = -1;
            // SAFETY: the extension's parameter, which the context has; a valid out-pointer.
            unsafe { gl::GetIntegerv(PACK_INVERT_MESA, &mut now) };
            assert_eq!(now, 1, "{what}: GL_PACK_INVERT_MESA");
        }
        check_gl();
    }
}

/// The current context's extensions.
fn extensions() -> Vec<String> {
    let mut count = 0;
    // SAFETY: a context is current; a valid query and out-pointer.
    unsafe { gl::GetIntegerv(gl::NUM_EXTENSIONS, &mut count) };
    (0..count as u32)
        .map(|i| {
            // SAFETY: `i` is below GL_NUM_EXTENSIONS; the string is NUL-terminated.
            unsafe { std::ffi::CStr::from_ptr(gl::GetStringi(gl::EXTENSIONS, i).cast()) }
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// The headless configuration of a compatibility-profile context.
fn compat_config() -> HeadlessConfig {
    HeadlessConfig::default()
        .with_gl_versions(&[(4, 6), (4, 5), (3, 3)])
        .with_profile(GlProfile::Compatibility)
}

/// Asserts that the current context has the compatibility profile asked for.
fn assert_compatibility_profile() {
    let mut mask = 0;
    // SAFETY: a context is current; a valid query (GL 3.2 and later) and out-pointer.
    unsafe { gl::GetIntegerv(gl::CONTEXT_PROFILE_MASK, &mut mask) };
    assert_ne!(
        mask & gl::CONTEXT_COMPATIBILITY_PROFILE_BIT as i32,
        0,
        "HeadlessConfig asked for a compatibility profile and got mask {mask:#x}"
    );
}

/// A GPU with a compatibility-profile GL context on it, or `None` after saying why.
fn compat_gpu() -> Option<(Gpu, Compat)> {
    let device = match Device::get(0) {
        Ok(d) => d,
        Err(e) => return skip(format!("no CUDA device 0: {e}")),
    };
    let gl = match HeadlessContext::for_cuda_device_with(&device, &compat_config()) {
        Ok(gl) => gl,
        Err(e) => return skip(format!("no compatibility-profile GL context: {e}")),
    };
    let g = gpu_with(device, gl);
    assert_compatibility_profile();
    let compat = Compat::load(&g.gl);
    eprintln!(
        "compatibility context {}; imaging subset: {}",
        g.gl.version(),
        compat.color_matrix.is_some()
    );
    Some((g, compat))
}

/// Frames drawn by the kernel reach the texture unchanged in every mode, whatever the
/// application's pixel-transfer and unpack state, which is as it was after each present.
#[test]
fn frames_ignore_the_applications_pixel_transfer_state() {
    let Some((g, compat)) = compat_gpu() else {
        return;
    };
    let fill = g.kernels.function("fill_u32").unwrap();
    for mode in [Mode::Interop, Mode::Staged, Mode::Stream] {
        let (w, h) = (64u32, 32u32);
        let layout = Layout::packed((w, h), Format::Rgba8).unwrap();
        let (mut target, _) = DisplayTarget::new(&g.ctx, layout, Some(mode)).unwrap();
        for seed in [5, 6] {
            compat.set(true);
            let frame = target.frame(&g.stream).unwrap();
            let pixels = frame.pixels().unwrap();
            let words = (w * h) as usize;
            // SAFETY: the pixels hold `words` RGBA8 texels (one u32 each) of this context,
            // written on the frame's stream before the present below.
            unsafe { launch_words(&fill, &g.stream, pixels.ptr(), words, seed) }.unwrap();
            frame.present().unwrap();
            target.flush().unwrap();
            compat.assert_state(&format!("{mode}: after a present"));
            // Read back under GL's initial state: the read itself is a pixel transfer.
            compat.set(false);
            let texels = read_texture_rgba8(target.texture().0, w as usize, h as usize, 0);
            assert_pattern(&texels, seed, &format!("{mode}: a frame under RED_SCALE 0"));
        }
    }
    g.check_no_errors();
}

/// The planes of NV12 and P010 frames (odd sizes, padded pitches, chroma after a gap) reach
/// their textures byte for byte in every mode of the video planes, whatever the application's
/// pixel-transfer and unpack state (the staged mode's `glTexSubImage2D` is a pixel transfer:
/// `GL_RED_SCALE` 0 would zero the luma, `GL_GREEN_BIAS` the chroma's Cr, the unpack skips and
/// row length shift the rows), which is as it was after each upload.
#[test]
fn video_planes_ignore_the_applications_pixel_transfer_state() {
    let Some((g, compat)) = compat_gpu() else {
        return;
    };
    for mode in PLANE_MODES {
        for format in [VideoFormat::Nv12, VideoFormat::P010] {
            for (n, (layout, _)) in frames(format).into_iter().enumerate() {
                let planes = Planes::new(layout);
                let mut made = planes.register(&g, mode).unwrap();
                for frame in 0..2 {
                    let what = format!("{mode}: {format:?} {:?}, frame {frame}", layout.size());
                    let bytes = noise(layout.bytes(), 300 + 10 * n as u64 + frame);
                    let src = DeviceBuffer::from_slice(&g.ctx, &bytes).unwrap();
                    compat.set(true);
                    made.upload(&src, layout, &g.stream).unwrap();
                    compat.assert_state(&format!("{what}: after the upload"));
                    // Read back under GL's initial state: the read itself is a pixel transfer.
                    compat.set(false);
                    planes.assert_hold(&bytes, &format!("{what}, under RED_SCALE 0"));
                }
                drop(made);
            }
        }
    }
    g.check_no_errors();
}

/// An offscreen target reads back what was drawn, whatever the application's pack and
/// pixel-transfer state (Mesa's `GL_PACK_INVERT_MESA` too, where it is offered), which is as it
/// was after the read. Needs only a GL with a compatibility profile: runs on CI through Mesa.
#[test]
fn offscreen_reads_ignore_the_applications_pixel_transfer_state() {
    let config = compat_config();
    let gl = match HeadlessContext::any_gl_with(&config) {
        Ok(gl) => gl,
        Err(e @ EglError::LibraryNotFound { .. }) if !require_gpu() => {
            eprintln!("skipped, no EGL: {e}");
            return;
        }
        Err(e) => panic!("HeadlessContext::any_gl_with(compatibility) failed: {e}"),
    };
    load_gl_crate(&gl);
    assert_compatibility_profile();
    let compat = Compat::load(&gl);
    eprintln!(
        "{} on {}; imaging subset: {}; GL_MESA_pack_invert: {}",
        gl.version(),
        gl.renderer(),
        compat.color_matrix.is_some(),
        compat.pack_invert
    );
    let (w, h) = (33u32, 17u32);
    let target = Offscreen::new(w, h).unwrap();
    target.bind().unwrap();
    // Rows 0 to 4 (the first read back) one colour, the rest another.
    let (low, high) = ([51u8, 102, 153, 204], [204u8, 153, 102, 51]);
    let clear = |rgba: [u8; 4]| {
        let [r, g, b, a] = rgba.map(|c| f32::from(c) / 255.0);
        // SAFETY: a context is current; the offscreen framebuffer is bound for drawing.
        unsafe {
            gl::ClearColor(r, g, b, a);
            gl::Clear(gl::COLOR_BUFFER_BIT);
        }
    };
    clear(high);
    // SAFETY: a context is current; valid capability and box.
    unsafe {
        gl::Enable(gl::SCISSOR_TEST);
        gl::Scissor(0, 0, w as i32, 5);
    }
    clear(low);
    // SAFETY: as above.
    unsafe { gl::Disable(gl::SCISSOR_TEST) };
    compat.set(true);
    let pixels = target.read_rgba8().unwrap();
    compat.assert_state("after read_rgba8");
    compat.set(false);
    assert_eq!(pixels.len(), (w * h * 4) as usize);
    let wrong = pixels
        .chunks_exact(4)
        .enumerate()
        .filter(|&(i, p)| *p != if i < (5 * w) as usize { low } else { high })
        .count();
    assert_eq!(
        wrong,
        0,
        "{wrong} of {} pixels read back other than drawn (first {:?}, last {:?})",
        w * h,
        &pixels[..4],
        &pixels[pixels.len() - 4..]
    );
    drop(target);
    check_gl();
}
