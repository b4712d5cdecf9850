//! The present group: the safe API `cuda_gl::display::DisplayTarget` per frame, at 1920x1080
//! and 3840x2160, each mode against its limit measured in the same interleaved rounds.
//!
//! - **interop** (`Mode::Interop`): one frame is the plasma kernel writing the frame's pixels,
//!   `Frame::present` (map, a GPU copy into the texture, unmap), then the handoff floor's GL use
//!   of the target's texture (a 1-texel copy + `glFinish`). Its limit is the fast path's handoff
//!   floor (`fast::Floor`: the same kernel into plain device memory + stream sync, the same GL use
//!   of an untouched texture; no interop call). No stream sync in the frame: the unmap orders
//!   GL's use after the copy, as in group 8's surface frame. Target <= [`INTEROP_TARGET`].
//! - **staged** (`Mode::Staged`, forced): one frame is `Frame::present` of a frame no kernel
//!   drew (the target's CUDA array, whose copy costs what one of device memory costs: a row
//!   for reading shows it; copied into pinned memory in bands, each taken by GL once its copy has
//!   finished: uploaded into its rows, or on NVIDIA's GL written into the target's pixel
//!   buffer, uploaded once) and the same GL use; the kernel is left out as it is of the limits,
//!   and a row for reading adds it. Its limits, raw, in the same rounds: `cuMemcpyDtoHAsync` of
//!   a frame from device memory into pinned memory + `cuStreamSynchronize`, and
//!   `glTexSubImage2D` of a frame from a bound `GL_PIXEL_UNPACK_BUFFER` + the same GL use
//!   (`glFinish`). On NVIDIA's GL the two copies are taken to run one after the other (the
//!   limit is their sum); on any other GL (Mesa's llvmpipe) the upload is CPU work that
//!   overlaps the GPU's copy (the larger of the two). `GL_VENDOR` / `GL_RENDERER` say which
//!   applies. Target <= [`STAGED_TARGET`] x that limit; both ratios are reported.
//!
//! When `DisplayTarget::new` with no mode forced (auto) refuses interop (GL that is not
//! NVIDIA's), the group measures the staged rows alone and says why interop was refused; its
//! report line is printed either way.

use crate::fast::Floor;
use crate::glres::{self, Buffer, Texture};
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Variant, interleaved};
use crate::report::one_line;
use crate::roles::{RoleTag, tagged};
use anyhow::{Context as _, Result, ensure};
use cuda_gl::display::{DeviceImage, DisplayTarget, Format, Layout, Mode};
use cuda_gl::{DeviceBuffer, PinnedBuffer, Stream, sys};
use raw::{Bands, DoubleBuffer, RawArray, Through};
use serde::Serialize;

#[path = "present/raw.rs"]
pub(crate) mod raw;
#[path = "present/summary.rs"]
mod summary;

use summary::set_ratios;
pub use summary::{PresentReport, print_summary, summaries, summary_markdown};

/// The frame sizes of the group.
pub const PRESENT_SIZES: [(u32, u32); 2] = [(1920, 1080), (3840, 2160)];
/// The target ratio of an interop frame to the handoff floor.
pub const INTEROP_TARGET: f64 = 1.05;
/// The target ratio of a staged frame to the limit that applies.
pub const STAGED_TARGET: f64 = 1.10;
/// Animation time step between frames (seconds).
const FRAME_DT: f32 = 1.0 / 60.0;
/// [`Setup::staged_limit`] on NVIDIA's GL: the sum of the two raw copies.
const SUM: &str = "sum";
/// [`Setup::staged_limit`] on any other GL: the larger of the two raw copies.
const MAX: &str = "max";

/// The group's entry in the report's list of cases.
pub const LEGEND: &str = "\
- **present** (`cuda_gl::display::DisplayTarget`, RGBA8, 1920x1080 and 3840x2160): one frame \
  is the plasma kernel drawing the frame through `Frame::surface`, `Frame::present`, then the \
  handoff floor's GL use of the target's texture (a 1-texel `glCopyImageSubData` + \
  `glFinish`). Interop (`Mode::Interop`: the texture mapped for the frame, the kernel writes \
  it in place, unmap) against the handoff floor of group 8 in the same rounds, target <= 1.05; \
  beside it, for reading, the same frame drawn into `Frame::pixels` (a registered pixel \
  buffer mapped for the frame, uploaded into the texture by GL at the present), that with a stream synchronize before the GL use, and a \
  `Mode::Stream` frame (copied into a slot of a 3-slot `FrameStream`, GL copying finished \
  slots into the texture; throughput, the texture a few frames behind), each with its ratio to \
  the floor and no target. Staged \
  (`Mode::Staged`, forced; a frame presented with no kernel drawing it, so that the row holds \
  the present alone, as its limits hold copies alone: the target's CUDA array, copied out in bands, \
  each taken by GL once its copy has finished) against two raw rows \
  of the same rounds: `cuMemcpyDtoHAsync` of a frame into pinned memory + \
  `cuStreamSynchronize`, and `glTexSubImage2D` of a frame from a bound \
  `GL_PIXEL_UNPACK_BUFFER` + the same GL use. The limit is their sum on NVIDIA's GL and the \
  larger of the two on any other GL (from `GL_VENDOR` / `GL_RENDERER`), target <= 1.10; both \
  ratios are reported. For reading only: the staged frame drawn by the plasma kernel through \
  its surface (the kernel's time on top), and drawn into `Frame::pixels` (device memory \
  instead of the array); `raw glBufferSubData + glTexSubImage2D` (a frame written into a \
  pixel buffer by GL) and `glTexSubImage2D` straight from pinned memory (the staged upload on \
  any GL but NVIDIA's); the staged present made of plain calls (`raw double buffer`: two \
  pinned buffers, frame n+1's DtoH queued before frame n is uploaded from the other); the \
  banded present made of plain calls (`raw bands`: cut as the target cuts a frame, each band \
  uploaded into its rows from pinned memory; on NVIDIA's GL as the target does it, each band \
  written whole into a pixel buffer of its own and uploaded from it, and beside it, for \
  reading, the bands written at offsets into one frame-sized buffer and uploaded once: a \
  buffer that other rows also write whole, one of its own first bound for unpacking, and one \
  of immutable client storage); and a frame's copy out of a CUDA array into \
  pinned memory, straight and through device memory. When \
  auto refuses interop (GL that is not NVIDIA's) only the staged rows run, and the report line \
  of `DisplayTarget::new` says why.\n";

/// What a row of the group measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The handoff floor (interop's limit).
    Floor,
    /// An interop frame, drawn through the frame's surface.
    Interop,
    /// A staged frame presented as it is (no kernel: the array keeps the last frame drawn) +
    /// GL use: the target's row, set against copies that include no kernel either.
    StagedPresent,
    /// A staged frame, drawn through the frame's surface, + present + GL use (for reading:
    /// the kernel's time on top of the present).
    Staged,
    /// The raw `cuMemcpyDtoHAsync` of a frame + sync (a staged limit).
    Dtoh,
    /// The raw `glTexSubImage2D` from a pixel buffer + GL use (a staged limit).
    Upload,
    /// `glBufferSubData` of a frame from pinned memory + the upload (for reading only).
    WriteUpload,
    /// An interop frame drawn into its pixels (copied into the texture at the present).
    InteropPixels,
    /// The same with a stream synchronize before the GL use (where the time goes).
    InteropPixelsSynced,
    /// The raw `glTexSubImage2D` of a frame from pinned memory, no pixel buffer bound, + GL
    /// use (the staged upload on GL that is not NVIDIA's).
    HostUpload,
    /// A stream-mode frame, drawn through the frame's surface (throughput; the texture shows a
    /// frame up to two presents old).
    Stream,
    /// A staged frame drawn into its pixels (device memory, not the array): where the time
    /// goes.
    StagedPixels,
    /// The raw `cuMemcpy2DAsync` of a frame from a CUDA array into pinned memory + sync (the
    /// staged copy of a surface frame).
    ArrayDtoh,
    /// The same through device memory: array -> device, then device -> pinned, + sync.
    ArrayDtodDtoh,
    /// The staged present made of plain calls (two pinned buffers, the copy of frame n+1
    /// during the upload of frame n) + GL use.
    DoubleBuffer,
    /// The staged target's banded present made of plain calls + GL use (on NVIDIA's GL into
    /// one frame-sized pixel buffer that other rows also write whole; the target's way there
    /// is [`Role::BandBuffers`]).
    Bands,
    /// The same into a pixel buffer of its own, made while bound as the pixel unpack buffer
    /// (NVIDIA's GL only): NVIDIA's GL places a buffer by its first binding.
    BandsUnpackMade,
    /// The same into a pixel buffer of its own with immutable client storage (NVIDIA's GL
    /// only).
    BandsClientStorage,
    /// The same, each band written whole into a pixel buffer of its own and uploaded from it,
    /// as the target does on NVIDIA's GL (NVIDIA's GL only).
    BandBuffers,
}

/// A present row's role and frame size.
pub type PresentTag = RoleTag<Role>;

/// What the group found about the GL it runs on, from `DisplayTarget::new` with no mode forced.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
pub struct Setup {
    /// The `Report` line of that target (1920x1080): the mode auto chose, and why it refused
    /// the faster ones.
    pub display: String,
    /// `GL_VENDOR` of the target's GL context.
    pub gl_vendor: String,
    /// `GL_RENDERER` of the target's GL context.
    pub gl_renderer: String,
    /// Why auto refused interop (error kind: message), when it did: then only the staged rows
    /// are measured.
    pub interop_refused: Option<String>,
    /// The staged limit that applies: `sum` (NVIDIA's GL) or `max` (any other GL).
    pub staged_limit: &'static str,
}

/// Asks `DisplayTarget::new` for a 1920x1080 target with no mode forced (auto), prints its
/// report line, and keeps what it says: whether interop was refused, and the GL's vendor.
pub fn probe(gpu: &Gpu) -> Result<Setup> {
    let (w, h) = crate::cases::FULL_HD;
    let (target, report) =
        DisplayTarget::new(&gpu.ctx, Layout::packed((w, h), Format::Rgba8)?, None)
            .with_context(|| format!("DisplayTarget::new({w}x{h}, RGBA8, auto)"))?;
    drop(target);
    let display = report.to_string();
    eprintln!("interop: present: {display}");
    let interop_refused = report
        .refused
        .iter()
        .find(|(mode, _)| *mode == Mode::Interop)
        .map(|(_, e)| format!("{}: {}", e.kind().as_str(), one_line(e)));
    if let Some(why) = &interop_refused {
        eprintln!("interop: present: interop refused, staged rows only: {why}");
    }
    // As the target decides whether it writes its bands into a pixel buffer (GL_VENDOR only:
    // zink and WSL2's d3d12 name NVIDIA in GL_RENDERER), so that `raw bands` cuts and uploads
    // a frame as the target does.
    let nvidia = report.vendor.to_ascii_uppercase().starts_with("NVIDIA");
    Ok(Setup {
        display,
        gl_vendor: report.vendor.clone(),
        gl_renderer: report.renderer.clone(),
        interop_refused,
        staged_limit: if nvidia { SUM } else { MAX },
    })
}

/// The group's state at one size. The display targets drop first, while the GL context is
/// current (it lives in `Gpu`).
struct Rig {
    /// `None` when auto refused interop.
    interop: Option<DisplayTarget>,
    /// `None` when auto refused interop (the stream mode needs NVIDIA's GL too).
    stream: Option<DisplayTarget>,
    staged: DisplayTarget,
    /// The handoff floor; its sink takes every row's GL use, its device memory is the raw
    /// copy's source.
    floor: Floor,
    /// The raw copy's destination, and the source of the buffer write.
    pinned: PinnedBuffer<u8>,
    /// The source of the raw array copies, and their device memory between.
    array: RawArray,
    between: DeviceBuffer<u8>,
    /// The plain-call staged presents.
    double: DoubleBuffer,
    bands: Bands,
    /// The raw upload's pixel buffer and texture.
    pbo: Buffer,
    /// The raw bands' buffers of their own, on NVIDIA's GL: made as a pixel unpack buffer, and
    /// client storage.
    own_pbos: Option<(Buffer, Buffer)>,
    upload: Texture,
    t: f32,
}

/// A target of `size` in `mode`, forced.
fn target(gpu: &Gpu, (w, h): (u32, u32), mode: Mode) -> Result<DisplayTarget> {
    let (target, _) =
        DisplayTarget::new(&gpu.ctx, Layout::packed((w, h), Format::Rgba8)?, Some(mode))
            .with_context(|| format!("DisplayTarget::new({w}x{h}, RGBA8, {mode})"))?;
    Ok(target)
}

/// Queues the plasma kernel writing a frame at time `t` into a frame's `pixels` (RGBA8, rows
/// tightly packed) on the bench stream, the frame's.
fn write_pixels(gpu: &Gpu, pixels: DeviceImage<'_>, t: f32) -> Result<()> {
    let layout = pixels.layout();
    let (w, h) = (layout.width(), layout.height());
    ensure!(
        layout.format() == Format::Rgba8 && layout.pitch() == w as usize * 4,
        "a frame's pixels are not tightly packed RGBA8 (pitch {})",
        layout.pitch()
    );
    gpu.plasma_into(pixels.ptr(), layout.pitch() * h as usize, (w, h), t)
}

/// The next frame of `target`: the plasma kernel draws it through the frame's surface, or
/// into its pixels with `pixels`, then it is presented; returns the texture for the GL use.
fn draw_frame(
    gpu: &Gpu,
    target: &mut DisplayTarget,
    t: &mut f32,
    stream: &Stream,
    pixels: bool,
) -> Result<u32> {
    *t += FRAME_DT;
    let size = target.size();
    let frame = target.frame(stream)?;
    if pixels {
        write_pixels(gpu, frame.pixels()?, *t)?;
    } else {
        gpu.plasma_into_surface(frame.surface()?, size, *t)?;
    }
    frame.present()?;
    Ok(target.texture().0)
}

/// [`draw_frame`] on the rig's interop target.
fn interop_frame(gpu: &Gpu, rig: &mut Rig, stream: &Stream, pixels: bool) -> Result<u32> {
    let target = rig.interop.as_mut().context("no interop target")?;
    draw_frame(gpu, target, &mut rig.t, stream, pixels)
}

/// A row of `role` named `name` whose iteration `frame` makes a frame and returns the texture
/// that holds it, which GL then uses (the rows' `+ GL use`).
fn gl_use_row<'a>(
    role: Role,
    name: String,
    mut frame: impl FnMut(&mut Rig) -> Result<u32> + 'a,
) -> (Role, Variant<'a, Rig>) {
    let run = move |rig: &mut Rig| {
        let texture = frame(rig)?;
        rig.floor.gl_use(texture);
        Ok(())
    };
    (role, Variant::new(name, run))
}

/// The group at `size`: the staged frame and its raw limits, and unless interop was refused,
/// the handoff floor and the interop frame, interleaved.
pub fn present(gpu: &Gpu, plan: &Plan, setup: &Setup, size: (u32, u32)) -> Result<Vec<Case>> {
    let (w, h) = size;
    let group = format!("present {w}x{h}: DisplayTarget per frame vs its limits");
    let bytes = w as usize * h as usize * 4;
    let driver = sys::driver()?;
    // The raw copy needs the CUDA context current; the safe API binds it itself.
    gpu.ctx
        .bind()
        .context("binding the CUDA context for the raw copy")?;
    let (interop, stream_target) = match setup.interop_refused {
        None => (
            Some(target(gpu, size, Mode::Interop)?),
            Some(target(gpu, size, Mode::Stream)?),
        ),
        Some(_) => (None, None),
    };
    let mut rig = Rig {
        interop,
        stream: stream_target,
        staged: target(gpu, size, Mode::Staged)?,
        floor: Floor::new(gpu, size)?,
        pinned: gpu.pinned_bytes(bytes)?,
        array: RawArray::new(driver, size)?,
        double: DoubleBuffer::new(&gpu.ctx, bytes)?,
        bands: Bands::new(&gpu.ctx, size, setup.staged_limit == SUM)?,
        between: gpu.device_bytes(bytes)?,
        pbo: Buffer::new(bytes, &format!("the {w}x{h} PBO"))?,
        own_pbos: if setup.staged_limit == SUM {
            Some((
                Buffer::made_as_unpack_buffer(bytes, &format!("the {w}x{h} bands' own PBO"))?,
                Buffer::client_storage(bytes, &format!("the {w}x{h} bands' client storage"))?,
            ))
        } else {
            None
        },
        upload: Texture::new(w, h, &format!("the {w}x{h} upload texture"))?,
        t: 0.0,
    };
    glres::check(&format!("setting up {group}"))?;
    let stream = &gpu.stream;
    let mut rows: Vec<(Role, Variant<'_, Rig>)> = Vec::new();
    if rig.interop.is_some() {
        rows.push((
            Role::Floor,
            Variant::new(format!("handoff floor {w}x{h}"), |rig: &mut Rig| {
                rig.t += FRAME_DT;
                rig.floor.run(gpu, rig.t)
            }),
        ));
        // (role, what, drawn into the pixels, the stream synchronized before the GL use)
        for (role, what, pixels, synced) in [
            (
                Role::Interop,
                "kernel (surface) + present + GL use",
                false,
                false,
            ),
            (
                Role::InteropPixels,
                "kernel (pixels) + present + GL use",
                true,
                false,
            ),
            (
                Role::InteropPixelsSynced,
                "pixels, stream sync before the GL use",
                true,
                true,
            ),
        ] {
            rows.push(gl_use_row(
                role,
                format!("interop frame {w}x{h}: {what}"),
                move |rig| {
                    let texture = interop_frame(gpu, rig, stream, pixels)?;
                    if synced {
                        stream.synchronize()?;
                    }
                    Ok(texture)
                },
            ));
        }
        rows.push(gl_use_row(
            Role::Stream,
            format!("stream frame {w}x{h}: kernel (surface) + present + GL use"),
            |rig| {
                let target = rig.stream.as_mut().context("no stream target")?;
                draw_frame(gpu, target, &mut rig.t, stream, false)
            },
        ));
    }
    rows.push(gl_use_row(
        Role::StagedPresent,
        format!("staged present {w}x{h}: a frame with no kernel + present + GL use"),
        |rig| {
            let frame = rig.staged.frame(stream)?;
            frame.present()?;
            Ok(rig.staged.texture().0)
        },
    ));
    rows.push(gl_use_row(
        Role::Staged,
        format!("staged frame {w}x{h}: kernel (surface) + present + GL use"),
        |rig| draw_frame(gpu, &mut rig.staged, &mut rig.t, stream, false),
    ));
    rows.push((
        Role::Dtoh,
        Variant::new(
            format!("raw cuMemcpyDtoHAsync {w}x{h} into pinned memory + sync"),
            |rig: &mut Rig| raw::dtoh(driver, &rig.floor.device, &mut rig.pinned, stream),
        ),
    ));
    rows.push(gl_use_row(
        Role::StagedPixels,
        format!("staged frame {w}x{h}: kernel (pixels) + present + GL use"),
        |rig| draw_frame(gpu, &mut rig.staged, &mut rig.t, stream, true),
    ));
    let through_pbo = setup.staged_limit == SUM;
    rows.push(gl_use_row(
        Role::DoubleBuffer,
        format!("raw double buffer {w}x{h}: DtoH of n+1 during the upload of n + GL use"),
        move |rig| {
            let gl = (&rig.upload, &rig.pbo, through_pbo);
            rig.double.frame(driver, &rig.floor.device, stream, gl)?;
            Ok(rig.upload.name())
        },
    ));
    rows.push(gl_use_row(
        Role::Bands,
        if through_pbo {
            format!(
                "raw bands {w}x{h}: cut as the target's, into one PBO also written whole by \
                 other rows, uploaded once + GL use"
            )
        } else {
            format!("raw bands {w}x{h}: cut as the target's, each taken once copied + GL use")
        },
        move |rig| {
            let through = if through_pbo {
                Through::Pbo(&rig.pbo)
            } else {
                Through::Host
            };
            rig.bands
                .frame(driver, &rig.floor.device, stream, (&rig.upload, through))?;
            Ok(rig.upload.name())
        },
    ));
    if through_pbo {
        for (role, what) in [
            (
                Role::BandsUnpackMade,
                "into a PBO of its own first bound for unpacking",
            ),
            (
                Role::BandsClientStorage,
                "into a client-storage PBO of its own",
            ),
            (
                Role::BandBuffers,
                "as the target's, each written whole into a PBO of its own, uploaded from it",
            ),
        ] {
            rows.push(gl_use_row(
                role,
                format!("raw bands {w}x{h}: {what} + GL use"),
                move |rig| {
                    let (own, client) = rig.own_pbos.as_ref().context("no own PBOs")?;
                    let through = match role {
                        Role::BandsUnpackMade => Through::Pbo(own),
                        Role::BandsClientStorage => Through::Pbo(client),
                        _ => Through::BandBuffers,
                    };
                    rig.bands
                        .frame(driver, &rig.floor.device, stream, (&rig.upload, through))?;
                    Ok(rig.upload.name())
                },
            ));
        }
    }
    rows.push((
        Role::ArrayDtoh,
        Variant::new(
            format!("raw cuMemcpy2DAsync {w}x{h} from a CUDA array into pinned memory + sync"),
            |rig: &mut Rig| raw::array_dtoh(driver, &rig.array, None, &mut rig.pinned, stream),
        ),
    ));
    rows.push((
        Role::ArrayDtodDtoh,
        Variant::new(
            format!("raw CUDA array -> device -> pinned memory {w}x{h} + sync"),
            |rig: &mut Rig| {
                let via = Some(&mut rig.between);
                raw::array_dtoh(driver, &rig.array, via, &mut rig.pinned, stream)
            },
        ),
    ));
    // The raw uploads into the upload texture: (role, the GL calls, from where).
    for (role, calls, from) in [
        (Role::Upload, "glTexSubImage2D", "from a bound PBO"),
        (
            Role::WriteUpload,
            "glBufferSubData + glTexSubImage2D",
            "from pinned memory",
        ),
        (
            Role::HostUpload,
            "glTexSubImage2D",
            "from pinned memory, no PBO",
        ),
    ] {
        rows.push(gl_use_row(
            role,
            format!("raw {calls} {w}x{h} {from} + GL use"),
            move |rig| {
                match role {
                    Role::WriteUpload => {
                        rig.pbo.write(rig.pinned.as_slice()?)?;
                        rig.upload.upload_from_pbo(&rig.pbo)?;
                    }
                    Role::HostUpload => rig.upload.upload_from_host(rig.pinned.as_slice()?)?,
                    _ => rig.upload.upload_from_pbo(&rig.pbo)?,
                }
                Ok(rig.upload.name())
            },
        ));
    }
    let (roles, mut variants): (Vec<Role>, Vec<_>) = rows.into_iter().unzip();
    let measured = interleaved(plan, &group, &mut rig, &mut variants)?;
    // The stream target's last frames may still be pending: uploaded now, so that their
    // errors are this group's.
    if let Some(target) = rig.stream.as_mut() {
        target.flush().context("flushing the stream target")?;
    }
    glres::finish();
    stream.synchronize()?;
    glres::check(&group)?;
    drop(rig);
    let mut cases = tagged(measured.into_iter().zip(roles), size);
    set_ratios(&mut cases, size, setup);
    Ok(cases)
}
