//! The everyday image API on a real GPU: copies in and out of mapped arrays (host, device buffer,
//! mapped buffer, array), batches with surfaces and texture objects, many-layer launches and
//! registering a texture without naming its target. Needs `--features egl` and a GPU; skips
//! with a reason elsewhere (fails under `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use cuda_gl::{
    DeviceBuffer, Error, ImageTarget, KernelArgs, RegisterFlags, RegisteredBuffer, RegisteredImage,
    Stream, StreamFlags, Surface, TexDesc, UsageError, map_all,
};

const W: usize = 64;
const H: usize = 32;
const LAYERS: usize = 6;

/// A W x H RGBA8 texture holding pattern `seed` (uploaded by GL), registered with `flags`.
/// Bound in the order returned, the registration drops before the texture is deleted.
fn texture_of_pattern(
    g: &Gpu,
    seed: u32,
    flags: RegisterFlags,
) -> (GlObject, Vec<u32>, RegisteredImage) {
    let tex = GlObject::texture(gl_texture_rgba8(W as i32, H as i32, 1));
    let data = pattern_words(W * H, seed);
    upload_texels_rgba8(*tex, W, H, &data);
    let image = register_2d(g, *tex, flags);
    (tex, data, image)
}

/// A W x H RGBA8 texture (contents undefined), registered with `flags`. Bound in the order
/// returned, the registration drops before the texture is deleted.
fn blank_texture(g: &Gpu, flags: RegisterFlags) -> (GlObject, RegisteredImage) {
    let tex = GlObject::texture(gl_texture_rgba8(W as i32, H as i32, 1));
    let image = register_2d(g, *tex, flags);
    (tex, image)
}

/// A W x H RGBA8 2D array texture of `layers` layers, every texel zero.
fn zeroed_array_texture(layers: usize) -> GlObject {
    let zeros = vec![0u32; W * H * layers];
    GlObject::texture(gl_texture_array_rgba8(W, H, layers, Some(&zeros)))
}

/// Registers 2D texture `tex` with `flags`.
fn register_2d(g: &Gpu, tex: u32, flags: RegisterFlags) -> RegisteredImage {
    RegisteredImage::register(&g.ctx, tex, ImageTarget::Texture2D, flags).unwrap()
}

#[test]
fn array_parameters_are_one_struct_of_their_elements() {
    // No GPU needed: the sizes `launch` checks against the PTX declaration.
    let args = ([0u64; 4], 1i32, 2i32, 3u32);
    assert_eq!(args.sizes(), vec![32, 4, 4, 4]);
    assert_eq!(size_of::<[Surface<'static>; 4]>(), 32);
}

#[test]
fn gl_written_texture_reads_back_through_copy_to_host() {
    let Some(g) = gpu() else { return };
    let (_tex, data, mut image) = texture_of_pattern(&g, 0x5EED, RegisterFlags::READ_ONLY);
    {
        let mapped = image.map(&g.stream).unwrap();
        let array = mapped.array(0, 0).unwrap();
        assert_eq!(array.byte_len().unwrap(), W * H * 4);
        assert!(!array.is_layered());
        let mut back = vec![0u32; W * H];
        array.copy_to_host(&mut back).unwrap();
        assert_eq!(back, data, "copy_to_host differs from what GL uploaded");
        // Any plain element type of the right total size works.
        let mut bytes = vec![[0u8; 4]; W * H];
        array.copy_to_host(&mut bytes).unwrap();
        assert_eq!(u32::from_le_bytes(bytes[5]), data[5]);
    }
}

#[test]
fn copy_from_host_is_what_gl_reads() {
    let Some(g) = gpu() else { return };
    let (tex, mut image) = blank_texture(&g, RegisterFlags::NONE);
    let data = pattern_words(W * H, 0xC0FFEE);
    {
        let mapped = image.map(&g.stream).unwrap();
        mapped.array(0, 0).unwrap().copy_from_host(&data).unwrap();
        mapped.unmap().unwrap();
    }
    assert_eq!(read_texture_rgba8(*tex, W, H, 0), data);
}

#[test]
fn layered_texture_layers_round_trip_and_level_zero_is_layered() {
    let Some(g) = gpu() else { return };
    let tex = zeroed_array_texture(LAYERS);
    let mut image = RegisteredImage::register(
        &g.ctx,
        *tex,
        ImageTarget::Texture2DArray,
        RegisterFlags::NONE,
    )
    .unwrap();
    let layer2 = pattern_words(W * H, 2);
    {
        let mapped = image.map(&g.stream).unwrap();
        let one = mapped.array(2, 0).unwrap();
        assert_eq!((one.width(), one.height(), one.depth()), (W, H, 0));
        assert!(!one.is_layered(), "array(layer, 0) is a plain 2-D array");
        one.copy_from_host(&layer2).unwrap();
        let mut back = vec![0u32; W * H];
        one.copy_to_host(&mut back).unwrap();
        assert_eq!(back, layer2);

        // Level 0 of the mipmapped array: one layered array over every layer.
        let all = mapped.mipmapped_array().unwrap().level(0).unwrap();
        eprintln!(
            "mipmapped_array().level(0) of a {LAYERS}-layer array texture: {} x {} x {}, flags \
             {:#x}",
            all.width(),
            all.height(),
            all.depth(),
            all.raw_flags()
        );
        assert!(all.is_layered(), "flags {:#x}", all.raw_flags());
        assert_eq!((all.width(), all.height(), all.depth()), (W, H, LAYERS));
        let mut every = vec![0u32; W * H * LAYERS];
        all.copy_to_host(&mut every).unwrap();
        assert_eq!(&every[2 * W * H..3 * W * H], &layer2[..]);
        assert!(every[..2 * W * H].iter().all(|&t| t == 0));
    }
    let gl_view = read_texture_array_rgba8(*tex, W, H, LAYERS);
    assert_eq!(&gl_view[2 * W * H..3 * W * H], &layer2[..]);
    assert!(gl_view[3 * W * H..].iter().all(|&t| t == 0));
}

#[test]
fn copy_into_a_device_buffer_then_to_vec() {
    let Some(g) = gpu() else { return };
    let (tex, data, mut image) = texture_of_pattern(&g, 0xBEEF, RegisterFlags::NONE);
    let mut device = DeviceBuffer::<u32>::zeroed(&g.ctx, W * H).unwrap();
    let upload = DeviceBuffer::from_slice(&g.ctx, &pattern_words(W * H, 7)).unwrap();
    {
        let mapped = image.map(&g.stream).unwrap();
        let array = mapped.array(0, 0).unwrap();
        array.copy_to_device(&mut device).unwrap();
        // In stream order: the read above sees GL's data, the write below replaces it.
        array.copy_from_device(&upload).unwrap();
    }
    g.stream.synchronize().unwrap();
    assert_eq!(device.to_vec().unwrap(), data);
    assert_eq!(read_texture_rgba8(*tex, W, H, 0), pattern_words(W * H, 7));
}

#[test]
fn wrong_sizes_and_read_only_images_are_refused_without_touching_memory() {
    let Some(g) = gpu() else { return };
    let (tex, data, mut image) = texture_of_pattern(&g, 11, RegisterFlags::NONE);
    let mut small = DeviceBuffer::<u32>::zeroed(&g.ctx, W * H - 1).unwrap();
    {
        let mapped = image.map(&g.stream).unwrap();
        let array = mapped.array(0, 0).unwrap();
        let mut short = vec![0xAAAA_AAAAu32; W * H - 1];
        let err = array.copy_to_host(&mut short).unwrap_err();
        eprintln!("{err}");
        assert!(
            matches!(
                err,
                Error::CopySize {
                    array_bytes,
                    given_bytes,
                    ..
                } if array_bytes == W * H * 4 && given_bytes == (W * H - 1) * 4
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("help:"), "{err}");
        assert!(
            short.iter().all(|&w| w == 0xAAAA_AAAA),
            "the slice was written"
        );
        let long = vec![0u8; W * H * 4 + 1];
        let err = array.copy_from_host(&long).unwrap_err();
        assert!(matches!(err, Error::CopySize { .. }), "{err:?}");
        let err = array.copy_to_device(&mut small).unwrap_err();
        assert!(matches!(err, Error::CopySize { .. }), "{err:?}");
        let err = array.copy_from_device(&small).unwrap_err();
        assert!(matches!(err, Error::CopySize { .. }), "{err:?}");
        let err = array.copy_to_array(&array).unwrap_err();
        assert!(
            matches!(err, Error::Usage(UsageError::OverlappingCopy)),
            "{err:?}"
        );
    }
    g.stream.synchronize().unwrap();
    assert!(small.to_vec().unwrap().iter().all(|&w| w == 0));
    assert_eq!(
        read_texture_rgba8(*tex, W, H, 0),
        data,
        "the texture changed"
    );
    drop(image);

    let mut read_only = register_2d(&g, *tex, RegisterFlags::READ_ONLY);
    {
        let mapped = read_only.map(&g.stream).unwrap();
        assert_refused(
            mapped.array(0, 0).unwrap().copy_from_host(&data),
            |e| matches!(e, UsageError::ReadOnlyMapping { .. }),
            "READ_ONLY",
        );
    }
}

#[test]
fn copies_between_an_image_a_mapped_buffer_and_another_image() {
    let Some(g) = gpu() else { return };
    let flags = RegisterFlags::NONE;
    let (_src_tex, data, mut src) = texture_of_pattern(&g, 0xF00D, flags);
    let (dst_tex, mut dst) = blank_texture(&g, flags);
    let pbo = GlObject::buffer(gl_buffer(W * H * 4, None));
    let mut buffer = RegisteredBuffer::register(&g.ctx, *pbo, flags).unwrap();
    let other = Stream::new(&g.ctx, StreamFlags::NonBlocking).unwrap();
    {
        let from = src.map(&g.stream).unwrap();
        let to = dst.map(&g.stream).unwrap();
        let staged = buffer.map(&g.stream).unwrap();
        let a = from.array(0, 0).unwrap();
        a.copy_to_buffer(&staged).unwrap();
        a.copy_to_array(&to.array(0, 0).unwrap()).unwrap();
        // The buffer's bytes back into the image, as a PBO upload would.
        a.copy_from_buffer(&staged).unwrap();
    }
    assert_eq!(read_gl_buffer(*pbo, W * H), data);
    assert_eq!(read_texture_rgba8(*dst_tex, W, H, 0), data);
    {
        // A buffer mapped on another stream could be unmapped while the copy runs: refused.
        let from = src.map(&g.stream).unwrap();
        let staged = buffer.map(&other).unwrap();
        let copy = from.array(0, 0).unwrap().copy_to_buffer(&staged);
        assert_refused(
            copy,
            |e| matches!(e, UsageError::MappedOnOtherStream { .. }),
            "same stream",
        );
    }
}

#[test]
fn batch_of_a_buffer_and_a_texture_writes_both_through_the_batch() {
    let Some(g) = gpu() else { return };
    const N: usize = 4096;
    let vbo = GlObject::buffer(gl_buffer(N * 4, None));
    let mut buffer =
        RegisteredBuffer::register(&g.ctx, *vbo, RegisterFlags::WRITE_DISCARD).unwrap();
    let (tex, mut image) = blank_texture(&g, RegisterFlags::SURFACE_LOAD_STORE);
    let fill = g.kernels.function("fill_u32").unwrap();
    let surface_fill = g.kernels.function("surface_fill_rgba8").unwrap();
    let read_uchar4 = g.kernels.function("api_texture_read_uchar4").unwrap();
    let read_float4 = g.kernels.function("api_texture_read_float4").unwrap();
    let as_int = DeviceBuffer::<u32>::zeroed(&g.ctx, W * H).unwrap();
    let as_float = DeviceBuffer::<u32>::zeroed(&g.ctx, W * H).unwrap();
    {
        let batch = map_all((&mut buffer, &mut image), &g.stream).unwrap();
        // Typed views: the buffer's has no `surface` (tests/ui/batch_buffer_has_no_surface.rs).
        let (buffer_view, image_view) = batch.views();
        let (ptr, size) = (buffer_view.device_ptr(), buffer_view.size());
        assert_eq!(size, N * 4);
        let surface = image_view.surface().unwrap();
        assert_eq!(surface, image_view.surface_at(0, 0).unwrap(), "cached");
        // SAFETY: the buffer holds N words and the surface is W x H RGBA8, both mapped on the
        // stream of the launches until the batch drops.
        unsafe {
            launch_words(&fill, &g.stream, ptr, N, 3u32).unwrap();
            launch_image(&surface_fill, &g.stream, surface, (W, H), 4u32).unwrap();
        }
        let array = image_view.array(0, 0).unwrap();
        let int_tex = image_view.create_tex(&array, &TexDesc::default()).unwrap();
        let float_tex = image_view
            .create_tex(&array, &TexDesc::normalized_float())
            .unwrap();
        let owned = image_view.create_surface(&array).unwrap();
        assert_ne!(owned.handle(), surface, "uncached: its own object");
        // SAFETY: both texture objects are over the mapped W x H RGBA8 array; the outputs hold
        // W x H words; all on the stream of the map, before the unmap.
        unsafe {
            for (kernel, texture, out) in [
                (&read_uchar4, int_tex.handle(), &as_int),
                (&read_float4, float_tex.handle(), &as_float),
            ] {
                launch_image(kernel, &g.stream, texture, (W, H), out.device_ptr()).unwrap();
            }
        }
    }
    g.stream.synchronize().unwrap();
    assert_eq!(read_gl_buffer(*vbo, N), pattern_words(N, 3));
    let expected = pattern_words(W * H, 4);
    assert_eq!(read_texture_rgba8(*tex, W, H, 0), expected);
    assert_eq!(as_int.to_vec().unwrap(), expected, "integer reads");
    assert_eq!(
        as_float.to_vec().unwrap(),
        expected,
        "normalized float reads"
    );
    assert_eq!(image.cached_surfaces(), 1);
    drop((buffer, image));
    g.ctx.check_drop_errors().unwrap();
}

#[test]
fn one_launch_writes_four_layers_through_layer_surfaces() {
    let Some(g) = gpu() else { return };
    let tex = zeroed_array_texture(LAYERS);
    let flags = RegisterFlags::SURFACE_LOAD_STORE;
    let mut image = RegisteredImage::register_texture(&g.ctx, *tex, flags).unwrap();
    assert_eq!(image.target(), Some(ImageTarget::Texture2DArray));
    let fill4 = g.kernels.function("api_fill_layers4_rgba8").unwrap();
    assert_eq!(
        fill4.param_sizes().unwrap()[0],
        32,
        "one struct of 4 handles"
    );
    {
        let mapped = image.map(&g.stream).unwrap();
        // Layers 1..5: the first and last layer stay zero.
        let layers = mapped.layer_surfaces::<4>(1, 0).unwrap();
        assert_eq!(layers[0], mapped.surface_at(1, 0).unwrap());
        // SAFETY: api_fill_layers4_rgba8(struct { cudaSurfaceObject_t s[4]; }, int, int,
        // unsigned) writes W x H texels of each of the four mapped layers, on the map's stream.
        unsafe { launch_image(&fill4, &g.stream, layers, (W, H), 100u32) }.unwrap();
        let err = mapped
            .layer_surfaces::<4>(LAYERS as u32 - 2, 0)
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidSubresource { index, .. } if index == LAYERS as u32),
            "{err:?}"
        );
    }
    let all = read_texture_array_rgba8(*tex, W, H, LAYERS);
    for layer in 0..LAYERS {
        let got = &all[layer * W * H..(layer + 1) * W * H];
        if (1..5).contains(&layer) {
            let expected = pattern_words(W * H, 100 + layer as u32 - 1);
            assert_eq!(got, &expected[..], "layer {layer}");
        } else {
            assert!(got.iter().all(|&t| t == 0), "layer {layer} was written");
        }
    }
    // Layers 1 to 4, and layer 5, which the refused range 4..8 reached before layer 6 failed:
    // a valid surface stays cached.
    assert_eq!(image.cached_surfaces(), 5);
}

#[test]
fn register_texture_asks_gl_for_the_target() {
    let Some(g) = gpu() else { return };
    let flat = GlObject::texture(gl_texture_rgba8(W as i32, H as i32, 1));
    let layered = zeroed_array_texture(2);
    let image = RegisteredImage::register_texture(&g.ctx, *flat, RegisterFlags::NONE).unwrap();
    assert_eq!(image.target(), Some(ImageTarget::Texture2D));
    drop(image);
    let image = RegisteredImage::register_texture(&g.ctx, *layered, RegisterFlags::NONE).unwrap();
    assert_eq!(image.target(), Some(ImageTarget::Texture2DArray));
    drop(image);
    // A name that is no texture (buffers are another namespace).
    let err = RegisteredImage::register_texture(&g.ctx, 0xFFFF, RegisterFlags::NONE).unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(&err, Error::UnknownTextureTarget { name: 0xFFFF, reason } if reason.contains("not a texture")),
        "{err:?}"
    );
    assert!(err.to_string().contains("help:"), "{err}");
}

#[test]
fn a_3d_texture_round_trips_through_cumemcpy3d() {
    let Some(g) = gpu() else { return };
    const D: usize = 4;
    let tex = gl_texture_storage(gl::TEXTURE_3D, 1, W as i32, H as i32, D as i32);
    let tex = GlObject::texture(tex);
    let data = pattern_words(W * H * D, 33);
    let mut image = RegisteredImage::register_texture(&g.ctx, *tex, RegisterFlags::NONE).unwrap();
    assert_eq!(image.target(), Some(ImageTarget::Texture3D));
    {
        let mapped = image.map(&g.stream).unwrap();
        let volume = mapped.array(0, 0).unwrap();
        assert_eq!((volume.depth(), volume.is_layered()), (D, false));
        volume.copy_from_host(&data).unwrap();
        let mut back = vec![0u32; W * H * D];
        volume.copy_to_host(&mut back).unwrap();
        assert_eq!(back, data);
        let err = volume.copy_to_host(&mut back[..W * H]).unwrap_err();
        assert!(matches!(err, Error::CopySize { .. }), "{err:?}");
    }
    let gl_view = read_tex_image_rgba8(gl::TEXTURE_3D, *tex, 0, W * H * D);
    assert_eq!(gl_view, data, "GL reads what copy_from_host wrote");
}
