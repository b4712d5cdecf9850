//! The case groups: one function per group, each creating its own GL objects and registrations
//! (released when it returns) and measuring its variants interleaved.

use crate::glres::{self, Buffer, Framebuffer, Texture};
use crate::gpu::{Gpu, cu};
use crate::measure::{Case, FrameTag, Plan, Variant, interleaved};
use crate::plasma_cpu::render_parallel;
use anyhow::{Context as _, Result};
use cuda_gl::sys;
use cuda_gl::{
    DeviceBuffer, ImageTarget, PinnedBuffer, RegisterFlags, RegisteredBuffer, RegisteredImage,
    Stream, StreamFlags, map_all,
};
use std::hint::black_box;

/// The 1080p RGBA8 frame the single-buffer cases use.
pub const FULL_HD: (u32, u32) = (1920, 1080);
/// Its size in bytes: 1920 x 1080 x 4 = 8,294,400 (the "8 MB" of the issue).
pub const FULL_HD_BYTES: usize = 1920 * 1080 * 4;
/// The frame sizes of the frame cases.
pub const FRAME_SIZES: [(u32, u32); 3] = [(1280, 720), (1920, 1080), (3840, 2160)];
/// How many PBOs the multi-buffer cases map.
const PBO_COUNT: usize = 8;
/// Animation time step between frames (seconds).
const FRAME_DT: f32 = 1.0 / 60.0;
/// The group of cases 1 and 2 (the registration group reports its ratio as map + unmap).
pub const SAFE_API_GROUP: &str = "1-2. raw driver calls vs safe API (1080p PBO, 8,294,400 B)";
/// Case 2's name: the safe row of group 1-2, which holds the ratio to the raw row.
pub const SAFE_MAP_UNMAP: &str = "safe cuda-gl: map + pointer + memset + unmap + sync";
/// The target ratio of case 2 to case 1.
pub const SAFE_API_TARGET: f64 = 1.02;

/// Case 1: map, get pointer, memset the whole buffer, unmap, stream sync — with plain
/// `cuda-gl-sys` driver calls, on a registration that the safe wrapper owns but is not using.
fn raw_map_memset_unmap(
    driver: &sys::Driver,
    resource: sys::CUgraphicsResource,
    stream: sys::CUstream,
) -> Result<()> {
    let mut res = resource;
    // SAFETY: `res` is a live registration in the current context that nothing else has
    // mapped (its safe wrapper is idle during this call); `stream` is a live stream of it.
    cu("cuGraphicsMapResources", unsafe {
        driver.cuGraphicsMapResources(1, &mut res, stream)
    })?;
    let (mut ptr, mut size) = (0, 0);
    // SAFETY: `res` is mapped (above); both out-pointers are valid.
    let mut result = cu("cuGraphicsResourceGetMappedPointer", unsafe {
        driver.cuGraphicsResourceGetMappedPointer_v2(&mut ptr, &mut size, res)
    });
    if result.is_ok() {
        // SAFETY: [ptr, ptr + size) is the mapped buffer; it stays valid until the unmap
        // below, which the stream orders after this memset.
        result = cu("cuMemsetD8Async", unsafe {
            driver.cuMemsetD8Async(ptr, 0, size, stream)
        });
    }
    // SAFETY: mapped above on `stream`; the pointer is not used after this.
    let unmapped = cu("cuGraphicsUnmapResources", unsafe {
        driver.cuGraphicsUnmapResources(1, &mut res, stream)
    });
    result.and(unmapped)?;
    // SAFETY: `stream` is live.
    cu("cuStreamSynchronize", unsafe {
        driver.cuStreamSynchronize(stream)
    })
}

/// Registers `buffer` with `flags`, naming it in the error.
fn register_buffer(
    gpu: &Gpu,
    buffer: &Buffer,
    flags: RegisterFlags,
    what: &str,
) -> Result<RegisteredBuffer> {
    RegisteredBuffer::register(&gpu.ctx, buffer.name(), flags)
        .with_context(|| format!("registering {what} with CUDA"))
}

/// Cases 1 and 2: the same map + pointer + memset 8 MB + unmap + sync through plain driver
/// calls and through the safe API, interleaved; the safe one's ratio to the raw one.
pub fn safe_api_overhead(gpu: &Gpu, plan: &Plan) -> Result<Vec<Case>> {
    let pbo = Buffer::new(FULL_HD_BYTES, "the 1080p PBO")?;
    let mut reg = register_buffer(gpu, &pbo, RegisterFlags::NONE, "the 1080p PBO")?;
    let driver = sys::driver()?;
    let stream = &gpu.stream;
    let mut variants = [
        Variant::new(
            "raw cuda-gl-sys: map + pointer + memset + unmap + sync",
            |reg: &mut RegisteredBuffer| raw_map_memset_unmap(driver, reg.raw(), stream.raw()),
        ),
        Variant::new(SAFE_MAP_UNMAP, |reg: &mut RegisteredBuffer| {
            let mapped = reg.map(stream)?;
            let (ptr, size) = (mapped.device_ptr().as_raw(), mapped.size());
            // SAFETY: the mapped range is valid until `unmap` below, which the stream
            // orders after this memset (the same raw memset as the raw case, so only the
            // map/unmap/sync path differs).
            cu("cuMemsetD8Async", unsafe {
                driver.cuMemsetD8Async(ptr, 0, size, stream.raw())
            })?;
            mapped.unmap()?;
            stream.synchronize()?;
            Ok(())
        }),
    ];
    let mut cases = interleaved(plan, SAFE_API_GROUP, &mut reg, &mut variants)?;
    if let [raw, safe] = cases.as_mut_slice() {
        safe.relative_to(raw, Some(SAFE_API_TARGET));
    }
    Ok(cases)
}

/// Case 3: one PBO, against 8 mapped one by one, against 8 mapped in one `map_all` call
/// (each: map, get every pointer, unmap, sync).
pub fn pbo_count(gpu: &Gpu, plan: &Plan) -> Result<Vec<Case>> {
    const GROUP: &str = "3. one PBO vs 8 PBOs (1080p each): map + pointer + unmap + sync";
    let pbos = (0..PBO_COUNT)
        .map(|i| Buffer::new(FULL_HD_BYTES, &format!("PBO {i}")))
        .collect::<Result<Vec<_>>>()?;
    let mut regs = pbos
        .iter()
        .enumerate()
        .map(|(i, pbo)| register_buffer(gpu, pbo, RegisterFlags::NONE, &format!("PBO {i}")))
        .collect::<Result<Vec<_>>>()?;
    let stream = &gpu.stream;
    let mut variants = [
        Variant::new("1 PBO", |regs: &mut Vec<RegisteredBuffer>| {
            let first = regs.first_mut().context("no PBO registered")?;
            let mapped = first.map(stream)?;
            black_box(mapped.device_ptr().as_raw());
            mapped.unmap()?;
            stream.synchronize()?;
            Ok(())
        }),
        Variant::new(
            "8 PBOs mapped one by one",
            |regs: &mut Vec<RegisteredBuffer>| {
                let mut guards = Vec::with_capacity(regs.len());
                for reg in regs.iter_mut() {
                    guards.push(reg.map(stream)?);
                }
                for mapped in guards {
                    black_box(mapped.device_ptr().as_raw());
                    mapped.unmap()?;
                }
                stream.synchronize()?;
                Ok(())
            },
        ),
        Variant::new(
            "8 PBOs batched (map_all)",
            |regs: &mut Vec<RegisteredBuffer>| {
                let batch = map_all(&mut regs[..], stream)?;
                for buffer in batch.iter() {
                    black_box(buffer.device_ptr().as_raw());
                }
                batch.unmap()?;
                stream.synchronize()?;
                Ok(())
            },
        ),
    ];
    let mut cases = interleaved(plan, GROUP, &mut regs, &mut variants)?;
    if let [one, by_one, batched] = cases.as_mut_slice() {
        by_one.relative_to(one, None);
        batched.relative_to(one, None);
    }
    drop(regs);
    drop(pbos);
    Ok(cases)
}

/// Case 4: map + pointer + unmap + sync of one PBO on each kind of stream.
pub fn stream_kinds(gpu: &Gpu, plan: &Plan) -> Result<Vec<Case>> {
    const GROUP: &str = "4. stream kinds (1080p PBO): map + pointer + unmap + sync";
    let pbo = Buffer::new(FULL_HD_BYTES, "the 1080p PBO")?;
    let mut reg = register_buffer(gpu, &pbo, RegisterFlags::NONE, "the 1080p PBO")?;
    let non_blocking = Stream::new(&gpu.ctx, StreamFlags::NonBlocking)
        .context("creating a non-blocking stream")?;
    let blocking =
        Stream::new(&gpu.ctx, StreamFlags::Blocking).context("creating a blocking stream")?;
    let legacy = Stream::legacy(&gpu.ctx);
    let per_thread = Stream::per_thread(&gpu.ctx);
    let streams = [
        ("stream created non-blocking", &non_blocking),
        ("stream created blocking", &blocking),
        ("legacy default stream", &legacy),
        ("per-thread default stream", &per_thread),
    ];
    let mut variants: Vec<Variant<'_, RegisteredBuffer>> = streams
        .into_iter()
        .map(|(name, stream)| {
            Variant::new(name, move |reg: &mut RegisteredBuffer| {
                let mapped = reg.map(stream)?;
                black_box(mapped.device_ptr().as_raw());
                mapped.unmap()?;
                stream.synchronize()?;
                Ok(())
            })
        })
        .collect();
    let mut cases = interleaved(plan, GROUP, &mut reg, &mut variants)?;
    if let Some((first, rest)) = cases.split_first_mut() {
        for case in rest {
            case.relative_to(first, None);
        }
    }
    Ok(cases)
}

/// The state of the host staging group. Registrations first: they unregister before the GL
/// buffers they name are deleted.
struct StagingRig {
    reg: RegisteredBuffer,
    device: DeviceBuffer<u8>,
    pinned: PinnedBuffer<u8>,
    staging_pbo: Buffer,
    _interop_pbo: Buffer,
    t: f32,
}

/// Case 5: filling a 1080p PBO with the plasma kernel through interop, against host staging
/// (kernel into device memory, DtoH into pinned memory, `glBufferSubData` into the PBO): what
/// users do without interop.
pub fn host_staging(gpu: &Gpu, plan: &Plan) -> Result<Vec<Case>> {
    const GROUP: &str = "5. host staging vs interop (1080p PBO fill with the plasma kernel)";
    let interop_pbo = Buffer::new(FULL_HD_BYTES, "the interop PBO")?;
    let staging_pbo = Buffer::new(FULL_HD_BYTES, "the staging PBO")?;
    let mut rig = StagingRig {
        reg: register_buffer(
            gpu,
            &interop_pbo,
            RegisterFlags::WRITE_DISCARD,
            "the interop PBO",
        )?,
        device: DeviceBuffer::zeroed(&gpu.ctx, FULL_HD_BYTES)
            .context("allocating 8 MB of device memory")?,
        pinned: PinnedBuffer::zeroed(&gpu.ctx, FULL_HD_BYTES)
            .context("allocating 8 MB of pinned host memory")?,
        staging_pbo,
        _interop_pbo: interop_pbo,
        t: 0.0,
    };
    let stream = &gpu.stream;
    let mut variants = [
        Variant::new(
            "interop: map + kernel + unmap + sync + glFinish",
            |rig: &mut StagingRig| {
                rig.t += FRAME_DT;
                let mapped = rig.reg.map(stream)?;
                gpu.plasma_into(mapped.device_ptr(), mapped.size(), FULL_HD, rig.t)?;
                mapped.unmap()?;
                stream.synchronize()?;
                glres::finish();
                Ok(())
            },
        ),
        Variant::new(
            "host staging: kernel + DtoH (pinned) + sync + glBufferSubData + glFinish",
            |rig: &mut StagingRig| {
                rig.t += FRAME_DT;
                gpu.plasma_into_buffer(&rig.device, FULL_HD, rig.t)?;
                rig.pinned.copy_from_device_async(&rig.device, stream)?;
                stream.synchronize()?;
                rig.staging_pbo.write(rig.pinned.as_slice()?)?;
                glres::finish();
                Ok(())
            },
        ),
    ];
    let mut cases = interleaved(plan, GROUP, &mut rig, &mut variants)?;
    glres::check("host staging")?;
    if let [interop, staging] = cases.as_mut_slice() {
        staging.relative_to(interop, None);
    }
    Ok(cases)
}

/// Case 7's baselines: CUDA alone and GL alone, no interop.
struct BaselineRig {
    device: DeviceBuffer<u8>,
    tiny: Buffer,
    texture: Texture,
    target: Framebuffer,
    t: f32,
}

/// Case 7's single-API baselines: "CUDA alone" (memset 8 MB + sync; the plasma kernel at 1080p
/// + sync) and "GL alone" (clear 64 bytes + glFinish; a 1080p draw + glFinish).
pub fn baselines(gpu: &Gpu, plan: &Plan) -> Result<Vec<Case>> {
    const GROUP: &str = "7. baselines: CUDA alone, GL alone (no interop)";
    let (w, h) = FULL_HD;
    let mut rig = BaselineRig {
        device: DeviceBuffer::zeroed(&gpu.ctx, FULL_HD_BYTES)
            .context("allocating 8 MB of device memory")?,
        tiny: Buffer::new(64, "the 64-byte buffer")?,
        texture: Texture::new(w, h, "the 1080p source texture")?,
        target: Framebuffer::new(w, h, "the 1080p framebuffer")?,
        t: 0.0,
    };
    let stream = &gpu.stream;
    let mut variants = [
        Variant::new("CUDA alone: memset 8 MB + sync", |rig: &mut BaselineRig| {
            rig.device.memset_async(0, stream)?;
            stream.synchronize()?;
            Ok(())
        }),
        Variant::new(
            format!("CUDA alone: plasma kernel {w}x{h} + sync"),
            |rig: &mut BaselineRig| {
                rig.t += FRAME_DT;
                gpu.plasma_synced(&rig.device, FULL_HD, rig.t)
            },
        ),
        Variant::new(
            "GL alone: clear 64 B + glFinish",
            |rig: &mut BaselineRig| {
                rig.tiny.clear_64_bytes(rig.t.to_bits())?;
                glres::finish();
                Ok(())
            },
        ),
        Variant::new(
            format!("GL alone: draw {w}x{h} + glFinish"),
            |rig: &mut BaselineRig| draw_and_finish(gpu, &rig.texture, &rig.target),
        ),
    ];
    let cases = interleaved(plan, GROUP, &mut rig, &mut variants)?;
    glres::check("baselines")?;
    Ok(cases)
}

/// Everything the frames of one size use. Registrations first: they unregister before the GL
/// objects they name are deleted.
struct FrameRig {
    reg_pbo: RegisteredBuffer,
    reg_surface: RegisteredImage,
    device: DeviceBuffer<u8>,
    pinned: PinnedBuffer<u8>,
    host: Vec<u8>,
    pbo: Buffer,
    upload_texture: Texture,
    surface_texture: Texture,
    target: Framebuffer,
    floor_texture: Texture,
    size: (u32, u32),
    t: f32,
}

impl FrameRig {
    fn new(gpu: &Gpu, (w, h): (u32, u32)) -> Result<FrameRig> {
        let bytes = w as usize * h as usize * 4;
        let label = format!("{w}x{h}");
        let pbo = Buffer::new(bytes, &format!("the {label} PBO"))?;
        let upload_texture = Texture::new(w, h, &format!("the {label} upload texture"))?;
        let surface_texture = Texture::new(w, h, &format!("the {label} surface texture"))?;
        let reg_pbo = register_buffer(
            gpu,
            &pbo,
            RegisterFlags::WRITE_DISCARD,
            &format!("the {label} PBO"),
        )?;
        let reg_surface = RegisteredImage::register(
            &gpu.ctx,
            surface_texture.name(),
            ImageTarget::Texture2D,
            RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD,
        )
        .with_context(|| format!("registering the {label} texture for surface writes"))?;
        Ok(FrameRig {
            reg_pbo,
            reg_surface,
            device: gpu.device_bytes(bytes)?,
            pinned: gpu.pinned_bytes(bytes)?,
            host: vec![0; bytes],
            pbo,
            upload_texture,
            surface_texture,
            target: Framebuffer::new(w, h, &format!("the {label} framebuffer"))?,
            floor_texture: Texture::new(w, h, &format!("the {label} floor texture"))?,
            size: (w, h),
            t: 0.0,
        })
    }
}

/// Case 6 and the handoff floor of case 7, at one frame size: the floor (with the frames' draw),
/// the PBO frame, the surface frame and the host-staging frame interleaved, then the CPU frame on its own (it is
/// orders of magnitude slower, so it gets `cpu_plan`). Every frame's ratio is to the floor.
pub fn frames(gpu: &Gpu, plan: &Plan, cpu_plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (w, h) = size;
    let group = format!("6-7. frames {w}x{h}: frame paths vs the handoff floor");
    let mut rig = FrameRig::new(gpu, size)?;
    let stream = &gpu.stream;
    let tag = |path| FrameTag {
        path,
        width: w,
        height: h,
    };
    let mut variants = [
        // The floor does the frames' GL work (the same draw), so the ratios show what each
        // path adds to it.
        Variant::new(format!("floor {w}x{h} + draw"), |rig: &mut FrameRig| {
            rig.t += FRAME_DT;
            gpu.plasma_synced(&rig.device, rig.size, rig.t)?;
            draw_and_finish(gpu, &rig.floor_texture, &rig.target)
        }),
        Variant::new(format!("PBO frame {w}x{h}"), |rig: &mut FrameRig| {
            rig.t += FRAME_DT;
            let mapped = rig.reg_pbo.map(stream)?;
            gpu.plasma_into(mapped.device_ptr(), mapped.size(), rig.size, rig.t)?;
            mapped.unmap()?;
            rig.upload_texture.upload_from_pbo(&rig.pbo)?;
            draw_and_finish(gpu, &rig.upload_texture, &rig.target)?;
            stream.synchronize()?;
            Ok(())
        }),
        Variant::new(format!("surface frame {w}x{h}"), |rig: &mut FrameRig| {
            rig.t += FRAME_DT;
            let mapped = rig.reg_surface.map(stream)?;
            gpu.plasma_into_surface(mapped.surface()?, rig.size, rig.t)?;
            mapped.unmap()?;
            draw_and_finish(gpu, &rig.surface_texture, &rig.target)?;
            stream.synchronize()?;
            Ok(())
        }),
        Variant::new(format!("staging frame {w}x{h}"), |rig: &mut FrameRig| {
            rig.t += FRAME_DT;
            gpu.plasma_into_buffer(&rig.device, rig.size, rig.t)?;
            rig.pinned.copy_from_device_async(&rig.device, stream)?;
            stream.synchronize()?;
            rig.upload_texture
                .upload_from_host(rig.pinned.as_slice()?)?;
            draw_and_finish(gpu, &rig.upload_texture, &rig.target)
        }),
    ];
    let mut cases = interleaved(plan, &group, &mut rig, &mut variants)?;
    glres::check(&format!("frames {w}x{h}"))?;

    let threads = cpu_threads();
    let mut cpu = [Variant::new(
        format!("CPU frame {w}x{h}"),
        |rig: &mut FrameRig| {
            rig.t += FRAME_DT;
            let (width, height) = rig.size;
            render_parallel(&mut rig.host, width, height, rig.t, threads);
            rig.upload_texture.upload_from_host(&rig.host)?;
            draw_and_finish(gpu, &rig.upload_texture, &rig.target)
        },
    )];
    cases.extend(interleaved(cpu_plan, &group, &mut rig, &mut cpu)?);
    glres::check(&format!("CPU frame {w}x{h}"))?;

    for (case, path) in cases
        .iter_mut()
        .zip(["floor", "PBO", "surface", "staging", "CPU"])
    {
        case.frame = Some(tag(path));
    }
    if let Some((floor, rest)) = cases.split_first_mut() {
        for case in rest {
            case.relative_to(floor, None);
        }
    }
    Ok(cases)
}

/// How many threads the CPU frame path uses: every core the process may use.
pub fn cpu_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The frames' GL work: `source` drawn over all of `target`, then `glFinish`.
fn draw_and_finish(gpu: &Gpu, source: &Texture, target: &Framebuffer) -> Result<()> {
    target.draw(&gpu.blit, gl::TEXTURE_2D, source.name());
    glres::finish();
    Ok(())
}
