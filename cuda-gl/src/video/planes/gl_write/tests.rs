//! The staged mode's GL half on whatever headless GL this machine has, with no CUDA: Mesa's
//! llvmpipe on CI and on machines without NVIDIA's EGL, NVIDIA's GL on a GPU host. Planes are
//! checked and written as an upload does once its copies have landed ([`check_textures`],
//! [`upload_planes`]), with the application's state far from neutral (a
//! pixel unpack buffer bound, pixel-store values, and in a compatibility context
//! `GL_RED_SCALE` 0 and a green bias), then read back: every byte equal, the application's
//! state as it was.
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::egl::test_gl::{any_gl_with, compat_config};
use crate::glapi::{Direction, PixelState};
use crate::video::VideoError;
use crate::video::plane_check::check_textures;

/// The application's pixel-store state: none of it neutral.
const APP_STORE: [(u32, i32); 4] = [
    (gl::UNPACK_ALIGNMENT, 8),
    (gl::UNPACK_ROW_LENGTH, 1003),
    (gl::UNPACK_SKIP_ROWS, 2),
    (gl::UNPACK_SKIP_PIXELS, 1),
];
/// Compatibility-profile pixel-transfer enums (absent from the `gl` crate's core bindings).
const RED_SCALE: u32 = 0x0D14;
const GREEN_BIAS: u32 = 0x0D19;

/// An integer the current context reports for `name`.
fn integer(fns: &GlFns, name: u32) -> i32 {
    let mut value = -1;
    // SAFETY: a context is current; a valid query; a valid out-pointer.
    unsafe { (fns.get_integerv)(name, &mut value) };
    value
}

/// A 2-D texture of immutable storage, `internal` of `size`, one level; unbound afterwards.
/// (The planes' cudarc test makes its textures with it too.)
pub(in crate::video::planes) fn plane_texture(
    fns: &GlFns,
    internal: u32,
    (w, h): (u32, u32),
) -> u32 {
    let Some(storage) = fns.tex_storage_2d else {
        panic!("no glTexStorage2D (OpenGL 4.2) in a context asked for 4.3 or later");
    };
    let mut name = 0;
    // SAFETY: a context is current; a valid out-pointer; the name is bound before its storage
    // is made, and unbound after.
    unsafe {
        (fns.gen_textures)(1, &mut name);
        (fns.bind_texture)(gl::TEXTURE_2D, name);
        storage(gl::TEXTURE_2D, 1, internal, w as i32, h as i32);
        (fns.bind_texture)(gl::TEXTURE_2D, 0);
    }
    fns.check("making a test plane texture").unwrap();
    name
}

/// Texture `name`'s level 0, `bytes` of it in `pixel_format` and `ty`, read under neutral pack
/// state (the application's put back).
fn read_plane(fns: &GlFns, name: u32, pixel_format: u32, ty: u32, bytes: usize) -> Vec<u8> {
    let getn = fns.bounded_tex_image().unwrap();
    let pack = PixelState::neutral(fns, Direction::Pack).unwrap();
    let mut out = vec![0u8; bytes];
    // SAFETY: a context is current; `name` is a 2-D texture; no pixel pack buffer is bound
    // (the test binds none); `out` holds `bytes` bytes, the size GL is given.
    unsafe {
        (fns.bind_texture)(gl::TEXTURE_2D, name);
        getn(
            gl::TEXTURE_2D,
            0,
            pixel_format,
            ty,
            bytes as i32,
            out.as_mut_ptr().cast(),
        );
        (fns.bind_texture)(gl::TEXTURE_2D, 0);
    }
    pack.restore(fns);
    fns.check("reading a test plane back").unwrap();
    out
}

/// Bytes of a plane: each a function of its index and `seed`.
fn plane_bytes(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
        .collect()
}

/// The compatibility profile's `glPixelTransferf`, where the context has it.
fn pixel_transferf(
    gl: &crate::egl::HeadlessContext,
) -> Option<unsafe extern "system" fn(u32, f32)> {
    let address = |name: &str| gl.get_proc_address(name);
    // SAFETY: the type is `glPixelTransferf`'s signature (Khronos registry).
    unsafe { gl_kit::entry::entry_point(address, "glPixelTransferf") }.ok()
}

/// Planes of both formats at odd and even sizes, written as the staged upload writes them,
/// read back byte for byte whatever the application's pixel-store and pixel-transfer state and
/// bound unpack buffer, which are as the application left them afterwards; a texture the
/// application deleted is then refused by the storage check that comes first at each upload.
#[test]
fn planes_written_by_gl_read_back_byte_for_byte_under_the_applications_state() {
    let test = "planes_written_by_gl_read_back_byte_for_byte_under_the_applications_state";
    let Some(gl) = any_gl_with(test, &compat_config()) else {
        return;
    };
    eprintln!("{test}: GL {} ({})", gl.renderer(), gl.vendor());
    let (_, fns) = GlOwner::current(test).unwrap();
    let transfer = pixel_transferf(&gl);
    let unpack = fns.new_buffer(gl::PIXEL_UNPACK_BUFFER, 64, gl::STREAM_DRAW);
    for &(name, value) in &APP_STORE {
        // SAFETY: a context is current; valid parameters and values.
        unsafe { (fns.pixel_storei)(name, value) };
    }
    if let Some(set) = transfer {
        // SAFETY: a compatibility context is current; valid parameters and values.
        unsafe {
            set(RED_SCALE, 0.0);
            set(GREEN_BIAS, 0.25);
        }
    }
    fns.check("the application's state").unwrap();
    let app: Vec<i32> = APP_STORE.iter().map(|&(n, _)| integer(fns, n)).collect();
    for format in [VideoFormat::Nv12, VideoFormat::P010] {
        let [luma_format, chroma_format] = crate::video::plane_check::internal_formats(format);
        let (ty, bps) = match format {
            VideoFormat::Nv12 => (gl::UNSIGNED_BYTE, 1),
            VideoFormat::P010 => (gl::UNSIGNED_SHORT, 2),
        };
        for size in [(77, 41), (1001, 333), (1, 1), (64, 36)] {
            let layout = VideoLayout::packed(size, format).unwrap();
            let chroma = layout.chroma_size();
            let names = [
                plane_texture(fns, luma_format, size),
                plane_texture(fns, chroma_format, chroma),
            ];
            let what = format!("{format:?} {size:?}");
            assert_eq!(
                check_textures(fns, "test", names, format).unwrap(),
                size,
                "{what}"
            );
            let lens = plane_rows(&layout).map(|(row, rows)| row * rows);
            // Client memory (the staged mode), then a GL buffer holding both planes, the chroma
            // after the luma (the stream mode's imported memory, as GL sees it).
            let staging = fns.new_buffer(
                gl::COPY_WRITE_BUFFER,
                lens[0] + lens[1] + 4,
                gl::STREAM_DRAW,
            );
            for (seed, through_buffer) in [(1, false), (2, true), (3, false), (4, true)] {
                let planes = [plane_bytes(lens[0], seed), plane_bytes(lens[1], seed + 7)];
                let source = if through_buffer {
                    // SAFETY: a context is current; `staging` is bound to the copy write target
                    // and holds `lens[0] + lens[1] + 4` bytes; each write lies within it and
                    // reads its plane's bytes, which hold as many.
                    unsafe {
                        (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, staging);
                        (fns.buffer_sub_data)(
                            gl::COPY_WRITE_BUFFER,
                            0,
                            lens[0] as isize,
                            planes[0].as_ptr().cast(),
                        );
                        (fns.buffer_sub_data)(
                            gl::COPY_WRITE_BUFFER,
                            (lens[0] + 4) as isize,
                            lens[1] as isize,
                            planes[1].as_ptr().cast(),
                        );
                        (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, 0);
                    }
                    PlaneSource::Buffer {
                        name: staging,
                        size: lens[0] + lens[1] + 4,
                        offsets: [0, lens[0] + 4],
                    }
                } else {
                    PlaneSource::Client([&planes[0], &planes[1]])
                };
                let write = PlaneWrite {
                    names,
                    sizes: [size, chroma],
                    format,
                    source,
                };
                upload_planes(fns, &write).unwrap();
                assert_eq!(integer(fns, gl::PIXEL_UNPACK_BUFFER_BINDING) as u32, unpack);
                let read = [
                    read_plane(fns, names[0], gl::RED, ty, lens[0]),
                    read_plane(fns, names[1], gl::RG, ty, lens[1]),
                ];
                for (k, plane) in ["luma", "chroma"].into_iter().enumerate() {
                    let wrong = read[k]
                        .iter()
                        .zip(&planes[k])
                        .filter(|(a, b)| a != b)
                        .count();
                    assert!(
                        wrong == 0,
                        "{what} frame {seed}: {wrong} of {} {plane} bytes differ ({bps} a sample)",
                        lens[k]
                    );
                }
            }
            // A buffer too small for the planes, and a chroma at an offset of no whole sample
            // (which GL refuses for 16-bit samples), are refused before GL reads the buffer.
            let short = PlaneSource::Buffer {
                name: staging,
                size: lens[0] + lens[1] + 4,
                offsets: [0, lens[0] + 6],
            };
            let write = |source| PlaneWrite {
                names,
                sizes: [size, chroma],
                format,
                source,
            };
            let e = upload_planes(fns, &write(short)).unwrap_err();
            assert!(matches!(e, crate::Error::Internal { .. }), "{what}: {e}");
            let odd = PlaneSource::Buffer {
                name: staging,
                size: lens[0] + lens[1] + 4,
                offsets: [0, lens[0] + 1],
            };
            let odd = upload_planes(fns, &write(odd));
            assert_eq!(
                odd.is_err(),
                format == VideoFormat::P010,
                "{what}: a chroma at an odd offset: {odd:?}"
            );
            // SAFETY: a context is current; the names are textures and a buffer of it, unbound.
            unsafe {
                (fns.delete_buffers)(1, &staging);
                (fns.delete_textures)(1, &names[0]);
            }
            let e = check_textures(fns, "test", names, format).unwrap_err();
            assert!(
                matches!(
                    &e,
                    crate::Error::Video(VideoError::PlaneStorage { plane: "luma", .. })
                ),
                "{what}: a deleted luma: {e}"
            );
            // SAFETY: as above.
            unsafe { (fns.delete_textures)(1, &names[1]) };
        }
    }
    let now: Vec<i32> = APP_STORE.iter().map(|&(n, _)| integer(fns, n)).collect();
    assert_eq!(now, app, "the application's pixel-store state");
    // SAFETY: a context is current; `unpack` is a buffer of it; unbound before deletion.
    unsafe {
        (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, 0);
        (fns.delete_buffers)(1, &unpack);
    }
    fns.check("the test's GL calls").unwrap();
}
