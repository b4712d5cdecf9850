//! The safe API on a real GPU: registration, mapping, kernels writing and reading GL objects,
//! batches, surfaces, error cases and drop behaviour. Needs `--features egl` and a GPU; skips
//! with a reason elsewhere (fails under `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use cuda_gl::egl::HeadlessContext;
use cuda_gl::{
    DeviceBuffer, Error, GlDeviceList, ImageTarget, LaunchConfig, MapFlags, Module, PinnedBuffer,
    RegisterFlags, RegisteredBuffer, RegisteredImage, Stream, StreamFlags, UsageError, gl_devices,
    map_all,
};

// One file per concern in `gpu_interop/`; this one keeps registration, mapping and the data
// paths.
mod errors;
mod lifetimes;
mod ordering;

const N: usize = 64 * 1024;

#[test]
fn driver_devices_and_gl_devices() {
    let Some(g) = gpu() else { return };
    let version = cuda_gl::driver_version().unwrap();
    assert!(version >= 12000, "driver API version {version}");
    assert!(cuda_gl::Device::count().unwrap() >= 1);
    let name = g.device.name().unwrap();
    let (major, _) = g.device.compute_capability().unwrap();
    let total = g.device.total_memory().unwrap();
    eprintln!(
        "driver {version}, device 0: {name}, sm_{major}x, {} GiB",
        total >> 30
    );
    assert!(!name.is_empty() && major >= 5 && total > 0);
    assert!(
        g.gl.renderer().contains("NVIDIA"),
        "renderer {}",
        g.gl.renderer()
    );
    for list in [
        GlDeviceList::All,
        GlDeviceList::CurrentFrame,
        GlDeviceList::NextFrame,
    ] {
        let devices = gl_devices(list).unwrap();
        assert!(devices.contains(&g.device), "{list:?}: {devices:?}");
    }
}

#[test]
fn buffer_registers_with_each_flag_and_rejects_nonsense() {
    let Some(g) = gpu() else { return };
    let name = gl_buffer(4096, None);
    for flags in [
        RegisterFlags::NONE,
        RegisterFlags::READ_ONLY,
        RegisterFlags::WRITE_DISCARD,
    ] {
        let mut res = RegisteredBuffer::register(&g.ctx, name, flags).unwrap();
        assert_eq!(res.flags(), flags);
        let mapped = res.map(&g.stream).unwrap();
        assert_eq!(mapped.size(), 4096);
        mapped.unmap().unwrap();
        res.unregister().unwrap();
    }
    for bad in [
        RegisterFlags::READ_ONLY | RegisterFlags::WRITE_DISCARD,
        RegisterFlags::SURFACE_LOAD_STORE,
        RegisterFlags::TEXTURE_GATHER,
    ] {
        let err = RegisteredBuffer::register(&g.ctx, name, bad).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Usage(UsageError::ContradictoryFlags | UsageError::ImageOnlyFlags { .. })
            ),
            "{bad:?}: {err}"
        );
    }
    delete_buffer(name);
}

#[test]
fn kernel_writes_buffer_and_gl_reads_exact_bytes() {
    let Some(g) = gpu() else { return };
    let (name, mut res) = registered_buffer(&g.ctx, N * 4, RegisterFlags::WRITE_DISCARD);
    let fill = g.kernels.function("fill_u32").unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        // SAFETY: the mapped buffer holds N u32 words and stays mapped until the guard drops,
        // after the launch in stream order.
        unsafe { launch_words(&fill, &g.stream, mapped.device_ptr(), N, 0xABCD_u32) }.unwrap();
    }
    g.stream.synchronize().unwrap();
    assert_eq!(read_gl_buffer(name, N), pattern_words(N, 0xABCD));
    drop_and_delete_buffer(res, name);
}

#[test]
fn gl_writes_and_cuda_reads_read_only() {
    let Some(g) = gpu() else { return };
    let data = pattern_words(N, 77);
    let name = gl_buffer(N * 4, Some(&data));
    let mut res = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::READ_ONLY).unwrap();
    let copy = DeviceBuffer::<u32>::zeroed(&g.ctx, N).unwrap();
    let mismatches = DeviceBuffer::<u32>::zeroed(&g.ctx, 1).unwrap();
    let check = g.kernels.function("copy_check_u32").unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        // SAFETY: input N words (mapped), output N words, one counter word.
        unsafe {
            check.launch(
                LaunchConfig::for_elements(N as u32),
                &g.stream,
                (
                    mapped.device_ptr(),
                    copy.device_ptr(),
                    N as u32,
                    77u32,
                    mismatches.device_ptr(),
                ),
            )
        }
        .unwrap();
    }
    g.stream.synchronize().unwrap();
    assert_eq!(mismatches.to_vec().unwrap(), vec![0]);
    assert_eq!(copy.to_vec().unwrap(), data);
    drop_and_delete_buffer(res, name);
}

#[test]
fn batch_maps_eight_mixed_resources_in_one_call() {
    let Some(g) = gpu() else { return };
    let names: Vec<u32> = (0..6).map(|_| gl_buffer(N * 4, None)).collect();
    let textures: Vec<u32> = (0..2).map(|_| gl_texture_rgba8(64, 32, 1)).collect();
    let mut buffers: Vec<RegisteredBuffer> = names
        .iter()
        .map(|&n| RegisteredBuffer::register(&g.ctx, n, RegisterFlags::WRITE_DISCARD).unwrap())
        .collect();
    let mut images: Vec<RegisteredImage> = textures
        .iter()
        .map(|&t| {
            RegisteredImage::register(
                &g.ctx,
                t,
                ImageTarget::Texture2D,
                RegisterFlags::SURFACE_LOAD_STORE,
            )
            .unwrap()
        })
        .collect();
    let fill = g.kernels.function("fill_u32").unwrap();
    {
        // Six buffers and two images of unknown count at compile time: two slices, one map.
        let batch = map_all((&mut buffers[..], &mut images[..]), &g.stream).unwrap();
        assert_eq!(batch.len(), 8);
        let (mapped_buffers, mapped_images) = batch.views();
        assert_eq!((mapped_buffers.len(), mapped_images.len()), (6, 2));
        for (i, buffer) in mapped_buffers.iter().enumerate() {
            let (ptr, size) = (buffer.device_ptr(), buffer.size());
            assert_eq!(size, N * 4);
            // SAFETY: each mapped buffer holds N words, mapped until the batch drops.
            unsafe {
                fill.launch(
                    LaunchConfig::for_elements(N as u32),
                    &g.stream,
                    (ptr, N as u32, i as u32),
                )
            }
            .unwrap();
        }
        for image in mapped_images {
            let array = image.array(0, 0).unwrap();
            assert_eq!(
                (array.width(), array.height(), array.channels()),
                (64, 32, 4)
            );
        }
        batch.unmap().unwrap();
    }
    g.stream.synchronize().unwrap();
    for (i, &n) in names.iter().enumerate() {
        assert_eq!(
            read_gl_buffer(n, N),
            pattern_words(N, i as u32),
            "buffer {i}"
        );
    }
    drop(buffers);
    drop(images);
    names.into_iter().for_each(delete_buffer);
    textures.into_iter().for_each(delete_texture);
}

#[test]
fn set_map_flags_then_map() {
    let Some(g) = gpu() else { return };
    let (name, mut res) = registered_buffer(&g.ctx, N * 4, RegisterFlags::NONE);
    let fill = g.kernels.function("fill_u32").unwrap();
    for (flags, seed) in [
        (MapFlags::WriteDiscard, 5u32),
        (MapFlags::None, 6),
        (MapFlags::ReadOnly, 6),
    ] {
        res.set_map_flags(flags).unwrap();
        assert_eq!(res.map_flags(), flags);
        let mapped = res.map(&g.stream).unwrap();
        if flags != MapFlags::ReadOnly {
            // SAFETY: N words, mapped until the guard drops.
            unsafe { launch_words(&fill, &g.stream, mapped.device_ptr(), N, seed) }.unwrap();
        }
        drop(mapped);
        g.stream.synchronize().unwrap();
        assert_eq!(read_gl_buffer(name, N), pattern_words(N, seed), "{flags:?}");
    }
    drop_and_delete_buffer(res, name);
}

#[test]
fn surface_write_into_texture_that_gl_reads() {
    let Some(g) = gpu() else { return };
    let (w, h) = (333usize, 97usize);
    let (tex, mut res) = surface_texture_rgba8(&g.ctx, w, h);
    let write = g.kernels.function("surface_fill_rgba8").unwrap();
    for seed in [1u32, 2, 3] {
        let mapped = res.map(&g.stream).unwrap();
        let surface = mapped.surface().unwrap();
        // SAFETY: the surface covers the w x h texture and lives until the guard drops.
        unsafe { launch_image(&write, &g.stream, surface, (w, h), seed) }.unwrap();
        drop(mapped);
        g.stream.synchronize().unwrap();
        let texels = read_texture_rgba8(tex, w, h, 0);
        assert_eq!(texels, pattern_words(w * h, seed), "seed {seed}");
    }
    drop(res);
    delete_texture(tex);
}

#[test]
fn images_of_each_kind_map_as_arrays() {
    let Some(g) = gpu() else { return };
    // SAFETY (all GL blocks below): the test's GL context is current on this thread.
    // A mipmapped 2D texture: level n is (64 >> n) x (32 >> n).
    let tex = gl_texture_rgba8(64, 32, 4);
    let mut res =
        RegisteredImage::register(&g.ctx, tex, ImageTarget::Texture2D, RegisterFlags::NONE)
            .unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        for level in 0..4u32 {
            let a = mapped.array(0, level).unwrap();
            assert_eq!(
                (a.width(), a.height()),
                (64 >> level, 32 >> level),
                "level {level}"
            );
            let m = mapped.mipmapped_array().unwrap().level(level).unwrap();
            assert_eq!(m.width(), 64 >> level);
        }
        let err = mapped.array(0, 9).unwrap_err();
        assert!(
            matches!(err, Error::InvalidSubresource { level: 9, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("mip level"), "{err}");
    }
    drop(res);
    delete_texture(tex);

    // A renderbuffer.
    let rb = gl_renderbuffer_rgba8(48, 16);
    let mut res = RegisteredImage::register_renderbuffer(&g.ctx, rb, RegisterFlags::NONE).unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        let a = mapped.array(0, 0).unwrap();
        assert_eq!((a.width(), a.height()), (48, 16));
    }
    drop(res);
    delete_renderbuffer(rb);

    // A 2D array texture with 3 layers.
    let arr = gl_texture_storage(gl::TEXTURE_2D_ARRAY, 1, 16, 8, 3);
    let mut res = RegisteredImage::register(
        &g.ctx,
        arr,
        ImageTarget::Texture2DArray,
        RegisterFlags::SURFACE_LOAD_STORE,
    )
    .unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        for layer in 0..3 {
            let a = mapped.array(layer, 0).unwrap();
            assert_eq!((a.width(), a.height()), (16, 8), "layer {layer}");
        }
        let err = mapped.array(3, 0).unwrap_err();
        assert!(
            matches!(err, Error::InvalidSubresource { index: 3, .. }),
            "{err}"
        );
    }
    drop(res);
    delete_texture(arr);
}
