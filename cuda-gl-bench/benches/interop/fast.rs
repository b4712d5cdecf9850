//! The fast path (groups 8-10): one frame per handoff against the handoff floor, K frames per
//! handoff, and frames in flight.
//!
//! "GL use" of a frame is the same everywhere here: `glCopyImageSubData` of one texel of the
//! frame into a 1x1 sink texture, then `glFinish` (the ring cases replace the `glFinish` with a fence). The floor does
//! the same GL work on an untouched texture of the frame's size, after a CUDA kernel that writes
//! a frame into plain device memory and a stream sync, with no interop call at all. So floor and
//! frames differ only by what the frame path itself costs (map, unmap, and for the PBO path GL's
//! PBO -> texture copy).

use crate::glres::{self, ArrayTexture, Buffer, FenceRing, Texture};
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Variant, interleaved};
use anyhow::{Context as _, Result, bail};
use cuda_gl::{DeviceBuffer, ImageTarget, RegisterFlags, RegisteredBuffer, RegisteredImage};
use std::fmt::Write as _;

/// The sizes of the fast-path groups.
pub const FAST_SIZES: [(u32, u32); 2] = [(1920, 1080), (3840, 2160)];
/// Frames per handoff in the K table.
pub const K_VALUES: [u32; 5] = [1, 2, 4, 8, 16];
/// Images per ring in the frames-in-flight group.
pub const RING_SIZES: [u32; 2] = [2, 3];
/// The targets: surface frame / floor, and per-frame cost at K = 8 / floor.
pub const SURFACE_TARGET: f64 = 1.05;
/// See [`SURFACE_TARGET`].
pub const K8_TARGET: f64 = 0.25;
/// Animation time step between frames (seconds).
const FRAME_DT: f32 = 1.0 / 60.0;

const SURFACE_FLAGS: RegisterFlags =
    RegisterFlags::SURFACE_LOAD_STORE.union(RegisterFlags::WRITE_DISCARD);

/// GL's use of a frame: copies texel (0, 0) of layer `layer` of `source` (a `target` texture)
/// into the 1x1 2D texture `sink`, of the same internal format (RGBA8 but for the video
/// group's planes).
pub fn use_texel(source: u32, target: u32, layer: i32, sink: u32) {
    // SAFETY: both names are live textures of one internal format (the source has at least
    // `layer + 1` layers, the sink one texel); the 1x1x1 region lies inside both.
    unsafe {
        gl::CopyImageSubData(
            source,
            target,
            0,
            0,
            0,
            layer,
            sink,
            gl::TEXTURE_2D,
            0,
            0,
            0,
            0,
            1,
            1,
            1,
        );
    }
}

/// What the floor of every group needs: device memory of the frame's size, an untouched
/// texture of that size for GL's use, and the sink. The present group measures it too.
pub struct Floor {
    /// What the floor's kernel writes (the present group's raw copy reads it).
    pub device: DeviceBuffer<u8>,
    source: Texture,
    sink: Texture,
    size: (u32, u32),
}

impl Floor {
    /// The floor of a `w` x `h` frame.
    pub fn new(gpu: &Gpu, (w, h): (u32, u32)) -> Result<Floor> {
        let bytes = w as usize * h as usize * 4;
        Ok(Floor {
            device: gpu.device_bytes(bytes)?,
            source: Texture::new(w, h, &format!("the {w}x{h} floor texture"))?,
            sink: Texture::new(1, 1, "the 1x1 sink texture")?,
            size: (w, h),
        })
    }

    /// The handoff floor: a kernel writes a frame into plain device memory, stream sync, then
    /// GL's use of a frame-sized texture + `glFinish`. No interop call.
    pub fn run(&self, gpu: &Gpu, t: f32) -> Result<()> {
        gpu.plasma_synced(&self.device, self.size, t)?;
        self.gl_use(self.source.name());
        Ok(())
    }

    /// GL's use of a frame in 2D texture `texture`, the same as the floor's, then `glFinish`.
    pub fn gl_use(&self, texture: u32) {
        use_texel(texture, gl::TEXTURE_2D, 0, self.sink.name());
        glres::finish();
    }
}

/// A group's state: its own objects `O` (dropped first), the floor it is compared with, and the
/// frames' time.
struct Rig<O> {
    objects: O,
    floor: Floor,
    t: f32,
}

impl<O> Rig<O> {
    /// The group's `objects` with a floor of `size`, at time 0.
    fn new(gpu: &Gpu, size: (u32, u32), objects: O) -> Result<Rig<O>> {
        Ok(Rig {
            objects,
            floor: Floor::new(gpu, size)?,
            t: 0.0,
        })
    }
}

/// The floor variant of a group at `size`: one frame later, the floor's run.
fn floor_variant<'a, O: 'a>(gpu: &'a Gpu, (w, h): (u32, u32)) -> Variant<'a, Rig<O>> {
    Variant::new(format!("floor {w}x{h}"), move |rig: &mut Rig<O>| {
        rig.t += FRAME_DT;
        rig.floor.run(gpu, rig.t)
    })
}

/// Group 8's objects. Registrations first: they unregister before the GL objects they name are
/// deleted.
struct OneFrame {
    reg_pbo: RegisteredBuffer,
    reg_surface: RegisteredImage,
    pbo: Buffer,
    upload: Texture,
    surface_texture: Texture,
}

/// Group 8: one frame per handoff at `size`: the floor, the PBO frame, the surface frame (the
/// cached surface object of `MappedImage::surface`) and the surface frame with a surface object
/// created and destroyed in every mapping, interleaved; every ratio is to the floor.
pub fn one_frame_per_handoff(gpu: &Gpu, plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (w, h) = size;
    let group = format!("8. fast path {w}x{h}: one frame per handoff vs the floor (same GL use)");
    let bytes = w as usize * h as usize * 4;
    let pbo = Buffer::new(bytes, &format!("the {w}x{h} PBO"))?;
    let surface_texture = Texture::new(w, h, &format!("the {w}x{h} surface texture"))?;
    let objects = OneFrame {
        reg_pbo: RegisteredBuffer::register(&gpu.ctx, pbo.name(), RegisterFlags::WRITE_DISCARD)
            .with_context(|| format!("registering the {w}x{h} PBO"))?,
        reg_surface: RegisteredImage::register(
            &gpu.ctx,
            surface_texture.name(),
            ImageTarget::Texture2D,
            SURFACE_FLAGS,
        )
        .with_context(|| format!("registering the {w}x{h} texture for surface writes"))?,
        pbo,
        upload: Texture::new(w, h, &format!("the {w}x{h} upload texture"))?,
        surface_texture,
    };
    let mut rig = Rig::new(gpu, size, objects)?;
    let stream = &gpu.stream;
    let mut variants = [
        floor_variant(gpu, size),
        Variant::new(format!("PBO frame {w}x{h}"), |rig: &mut Rig<OneFrame>| {
            rig.t += FRAME_DT;
            let mapped = rig.objects.reg_pbo.map(stream)?;
            gpu.plasma_into(mapped.device_ptr(), mapped.size(), size, rig.t)?;
            mapped.unmap()?;
            rig.objects.upload.upload_from_pbo(&rig.objects.pbo)?;
            rig.floor.gl_use(rig.objects.upload.name());
            Ok(())
        }),
        Variant::new(
            format!("surface frame {w}x{h}"),
            |rig: &mut Rig<OneFrame>| surface_frame(gpu, rig, size, false),
        ),
        Variant::new(
            format!("surface frame {w}x{h}, surface object per map"),
            |rig: &mut Rig<OneFrame>| surface_frame(gpu, rig, size, true),
        ),
    ];
    let mut cases = interleaved(plan, &group, &mut rig, &mut variants)?;
    glres::check(&group)?;
    for (case, kind) in cases
        .iter_mut()
        .zip(["floor", "PBO", "surface", "surface, object per map"])
    {
        case.tag_fast(kind, size, 1);
    }
    if let Some((floor, rest)) = cases.split_first_mut() {
        for case in rest {
            let target = case
                .fast
                .as_ref()
                .is_some_and(|t| t.kind == "surface")
                .then_some(SURFACE_TARGET);
            case.relative_to(floor, target);
        }
    }
    Ok(cases)
}

/// Group 8's surface frame: the kernel writes the mapped texture through its cached surface
/// object (`MappedImage::surface`), or with `per_map` through one created and destroyed in this
/// mapping; then GL uses it.
fn surface_frame(
    gpu: &Gpu,
    rig: &mut Rig<OneFrame>,
    size: (u32, u32),
    per_map: bool,
) -> Result<()> {
    rig.t += FRAME_DT;
    let mapped = rig.objects.reg_surface.map(&gpu.stream)?;
    if per_map {
        let array = mapped.array(0, 0)?;
        let object = mapped.create_surface(&array)?;
        gpu.plasma_into_surface(object.handle(), size, rig.t)?;
    } else {
        gpu.plasma_into_surface(mapped.surface()?, size, rig.t)?;
    }
    mapped.unmap()?;
    rig.floor.gl_use(rig.objects.surface_texture.name());
    Ok(())
}

/// Group 9's objects: one registered K-layer array texture per K.
struct Batch {
    regs: Vec<RegisteredImage>,
    textures: Vec<ArrayTexture>,
}

/// Group 9: K frames per handoff at `size`. For each K, a registered 2D array texture of K
/// layers: map once, `plasma_surface` into each layer through its cached surface
/// (`MappedImage::surface_at`), unmap once, then GL uses every layer and finishes. Interleaved
/// with the floor; the ratio is the per-frame cost (median / K) to the floor.
pub fn k_frames_per_handoff(gpu: &Gpu, plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (w, h) = size;
    let group = format!("9. K frames per handoff {w}x{h} (one map, K layers, GL uses all K)");
    let textures = K_VALUES
        .iter()
        .map(|&k| ArrayTexture::new(size, k, &format!("the {w}x{h}x{k} array texture")))
        .collect::<Result<Vec<_>>>()?;
    let regs = textures
        .iter()
        .zip(K_VALUES)
        .map(|(t, k)| {
            RegisteredImage::register(
                &gpu.ctx,
                t.name(),
                ImageTarget::Texture2DArray,
                SURFACE_FLAGS,
            )
            .with_context(|| format!("registering the {w}x{h}x{k} array texture"))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut rig = Rig::new(gpu, size, Batch { regs, textures })?;
    let stream = &gpu.stream;
    let mut variants = vec![floor_variant(gpu, size)];
    for (i, k) in K_VALUES.into_iter().enumerate() {
        variants.push(Variant::new(
            format!(
                "K = {k}: {k} frame{} per handoff {w}x{h}",
                if k == 1 { "" } else { "s" }
            ),
            move |rig: &mut Rig<Batch>| {
                let reg = rig
                    .objects
                    .regs
                    .get_mut(i)
                    .context("no registration for this K")?;
                let mapped = reg.map(stream)?;
                for layer in 0..k {
                    rig.t += FRAME_DT;
                    gpu.plasma_into_surface(mapped.surface_at(layer, 0)?, size, rig.t)?;
                }
                mapped.unmap()?;
                let texture = rig
                    .objects
                    .textures
                    .get(i)
                    .context("no texture for this K")?;
                for layer in 0..k {
                    use_texel(
                        texture.name(),
                        gl::TEXTURE_2D_ARRAY,
                        i32::try_from(layer)?,
                        rig.floor.sink.name(),
                    );
                }
                glres::finish();
                Ok(())
            },
        ));
    }
    let mut cases = interleaved(plan, &group, &mut rig, &mut variants)?;
    glres::check(&group)?;
    if let Some((floor, rest)) = cases.split_first_mut() {
        floor.tag_fast("floor", size, 1);
        for (case, k) in rest.iter_mut().zip(K_VALUES) {
            case.tag_fast("K", size, k);
            case.per_frame_relative_to(floor, (k == 8).then_some(K8_TARGET));
        }
    }
    Ok(cases)
}

/// A ring of registered textures, each with the fence of its last frame's GL use.
/// Registrations first: they unregister before the textures are deleted.
struct Ring {
    regs: Vec<RegisteredImage>,
    fences: FenceRing,
    textures: Vec<Texture>,
}

impl Ring {
    fn new(gpu: &Gpu, (w, h): (u32, u32), n: u32) -> Result<Ring> {
        let textures = (0..n)
            .map(|i| Texture::new(w, h, &format!("ring texture {i} of {n} ({w}x{h})")))
            .collect::<Result<Vec<_>>>()?;
        let regs = textures
            .iter()
            .map(|t| {
                RegisteredImage::register(&gpu.ctx, t.name(), ImageTarget::Texture2D, SURFACE_FLAGS)
                    .context("registering a ring texture")
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Ring {
            regs,
            fences: FenceRing::new(textures.len()),
            textures,
        })
    }

    /// One frame into the next image of the ring: wait for that image's previous frame's GL use
    /// (its fence) if still pending, map, kernel, unmap, GL use, fence, flush. No `glFinish`
    /// and no stream sync: the map/unmap ordering keeps CUDA and GL apart.
    fn frame(&mut self, gpu: &Gpu, sink: &Texture, size: (u32, u32), t: f32) -> Result<()> {
        let slot = self.fences.take()?;
        let (reg, texture) = match (self.regs.get_mut(slot), self.textures.get(slot)) {
            (Some(r), Some(t)) => (r, t),
            _ => bail!("ring slot {slot} is out of range"),
        };
        let mapped = reg.map(&gpu.stream)?;
        gpu.plasma_into_surface(mapped.surface()?, size, t)?;
        mapped.unmap()?;
        use_texel(texture.name(), gl::TEXTURE_2D, 0, sink.name());
        self.fences.fence(slot)
    }
}

/// Group 10's objects.
struct InFlight {
    single: Ring,
    rings: Vec<Ring>,
}

/// Group 10: frames in flight at `size`. The interactive surface frame (`glFinish` every frame)
/// against rings of 2 and 3 textures with no `glFinish` and no stream sync per frame: each frame
/// waits only for the fence of the frame that last used its texture. The median per iteration
/// in steady state is the sustained time per frame; fps = 10^6 / median.
pub fn frames_in_flight(gpu: &Gpu, plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (w, h) = size;
    let group = format!("10. frames in flight {w}x{h} (map/unmap, no glFinish or stream sync)");
    let objects = InFlight {
        single: Ring::new(gpu, size, 1)?,
        rings: RING_SIZES
            .iter()
            .map(|&n| Ring::new(gpu, size, n))
            .collect::<Result<Vec<_>>>()?,
    };
    let mut rig = Rig::new(gpu, size, objects)?;
    let mut variants = vec![
        floor_variant(gpu, size),
        Variant::new(
            format!("surface frame {w}x{h}, glFinish every frame"),
            |rig: &mut Rig<InFlight>| {
                rig.t += FRAME_DT;
                rig.objects
                    .single
                    .frame(gpu, &rig.floor.sink, size, rig.t)?;
                glres::finish();
                Ok(())
            },
        ),
    ];
    for (i, n) in RING_SIZES.into_iter().enumerate() {
        variants.push(Variant::new(
            format!("ring of {n} surface textures {w}x{h}, fence per image"),
            move |rig: &mut Rig<InFlight>| {
                rig.t += FRAME_DT;
                let ring = rig
                    .objects
                    .rings
                    .get_mut(i)
                    .context("no ring of this size")?;
                ring.frame(gpu, &rig.floor.sink, size, rig.t)
            },
        ));
    }
    let mut cases = interleaved(plan, &group, &mut rig, &mut variants)?;
    glres::finish();
    glres::check(&group)?;
    gpu.stream.synchronize()?;
    let rings = std::iter::once(None)
        .chain(std::iter::once(Some(1)))
        .chain(RING_SIZES.into_iter().map(Some));
    for (case, ring) in cases.iter_mut().zip(rings) {
        case.tag_fast(if ring.is_some() { "ring" } else { "floor" }, size, 1);
        if let Some(tag) = case.fast.as_mut() {
            tag.ring = ring;
        }
    }
    if let Some((floor, rest)) = cases.split_first_mut() {
        for case in rest {
            case.relative_to(floor, None);
        }
    }
    Ok(cases)
}

/// The rows of `cases` tagged `kind` at `size`.
fn tagged<'c>(cases: &'c [Case], kind: &str, size: (u32, u32)) -> Vec<&'c Case> {
    cases
        .iter()
        .filter(|c| {
            c.fast
                .as_ref()
                .is_some_and(|t| t.kind == kind && (t.width, t.height) == size)
        })
        .collect()
}

fn ratio_text(case: &Case) -> String {
    match &case.ratio {
        Some(r) => {
            let verdict = match r.target_max {
                Some(max) if r.value <= max => format!(" (target ≤ {max}: met)"),
                Some(max) => format!(" (target ≤ {max}: **missed**)"),
                None => String::new(),
            };
            format!("{:.3}{verdict}", r.value)
        }
        None => String::new(),
    }
}

/// The summary tables of groups 8-10 for one device (empty when they did not run).
pub fn summary(cases: &[Case]) -> String {
    let mut sizes: Vec<(u32, u32)> = Vec::new();
    for t in cases.iter().filter_map(|c| c.fast.as_ref()) {
        if !sizes.contains(&(t.width, t.height)) {
            sizes.push((t.width, t.height));
        }
    }
    if sizes.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "### The fast path: one frame per handoff\n\n\
         Every row does the same GL use (1-texel copy + `glFinish`); ratios to the floor measured \
         in the same group.\n\n\
         | size | floor µs | PBO frame µs | PBO × floor | surface frame µs | surface × floor | \
         surface, object per map µs | × floor |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let group8 = |c: &&Case| c.group.starts_with("8.");
    for &size in &sizes {
        let (w, h) = size;
        let pick = |kind| tagged(cases, kind, size).into_iter().find(group8);
        let (Some(floor), Some(pbo), Some(surface), Some(per_map)) = (
            pick("floor"),
            pick("PBO"),
            pick("surface"),
            pick("surface, object per map"),
        ) else {
            continue;
        };
        let _ = writeln!(
            out,
            "| {w}x{h} | {:.1} | {:.1} | {} | {:.1} | {} | {:.1} | {} |",
            floor.stats.median_us,
            pbo.stats.median_us,
            ratio_text(pbo),
            surface.stats.median_us,
            ratio_text(surface),
            per_map.stats.median_us,
            ratio_text(per_map)
        );
    }
    out.push_str(
        "\n### K frames per handoff\n\n\
         One map of a K-layer array texture, K kernels, one unmap, GL uses all K layers + \
         `glFinish`. Per frame = median per handoff / K.\n\n\
         | size | K | µs per handoff | µs per frame | per frame × floor | frames/s |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    for &size in &sizes {
        let (w, h) = size;
        let floor = tagged(cases, "floor", size)
            .into_iter()
            .find(|c| c.group.starts_with("9."));
        if let Some(floor) = floor {
            let _ = writeln!(
                out,
                "| {w}x{h} | floor | {:.1} | {:.1} | 1.000 | {:.0} |",
                floor.stats.median_us,
                floor.stats.median_us,
                1e6 / floor.stats.median_us
            );
        }
        for case in tagged(cases, "K", size) {
            let Some(tag) = &case.fast else { continue };
            let _ = writeln!(
                out,
                "| {w}x{h} | {} | {:.1} | {:.1} | {} | {:.0} |",
                tag.frames_per_iteration,
                case.stats.median_us,
                tag.per_frame_us,
                ratio_text(case),
                tag.fps
            );
        }
    }
    out.push_str(
        "\n### Frames in flight\n\n\
         Sustained: median µs per frame in steady state. The rings wait only for the GL fence of \
         the frame that last used an image: no `glFinish` or stream sync per frame (the floor and \
         the `glFinish every frame` row synchronize every frame).\n\n\
         | size | case | µs per frame | frames/s | × floor |\n|---|---|---:|---:|---:|\n",
    );
    for &size in &sizes {
        let (w, h) = size;
        let rows = cases.iter().filter(|c| {
            c.group.starts_with("10.")
                && c.fast.as_ref().is_some_and(|t| (t.width, t.height) == size)
        });
        for case in rows {
            let Some(tag) = &case.fast else { continue };
            let _ = writeln!(
                out,
                "| {w}x{h} | {} | {:.1} | {:.0} | {} |",
                case.name,
                tag.per_frame_us,
                tag.fps,
                ratio_text(case)
            );
        }
    }
    out.push('\n');
    out
}

/// The legend of groups 8-10.
pub const LEGEND: &str = "\
- **8** (the fast path): one frame per handoff, every row ending with the same GL \
  use as the floor: `glCopyImageSubData` of one texel of the frame into a 1x1 texture + \
  `glFinish`. Floor: `plasma_pbo` into plain device memory + stream \
  sync, then that GL use of an untouched frame-sized texture; no interop call. PBO frame: map, \
  `plasma_pbo`, unmap, `glTexSubImage2D` from the PBO, GL use. Surface frame: texture \
  registered `SURFACE_LOAD_STORE | WRITE_DISCARD`, map, `plasma_surface` through \
  `MappedImage::surface()` (cached across maps), unmap, GL use. The last row creates and \
  destroys the surface object inside every mapping (`create_surface`). Target: surface ≤ 1.05 × \
  floor.
- **9**: K frames per handoff: a 2D array texture of K layers registered for surfaces; map, \
  `plasma_surface` into each layer through `surface_at(layer, 0)`, unmap, GL use of each layer, \
  `glFinish`. The ratio is per frame (median / K) to the floor of the same group. Target: ≤ 0.25 \
  at K = 8.
- **10**: frames in flight: the surface frame with `glFinish` every frame, against rings of 2 \
  and 3 registered textures, where a frame waits only for the GL fence of the frame that last \
  used its texture (`glClientWaitSync`), and nothing else: no `glFinish`, no stream sync; GL \
  and CUDA are ordered by map/unmap alone. The median iteration is the sustained time per \
  frame.
- **external ring** (frames in flight without map/unmap): `cuda_gl::external::ExternalRing`, \
  CUDA memory from `cuMemCreate` exported as a file descriptor and imported into GL with \
  `GL_EXT_memory_object_fd`, ordered by a CUDA event and a GL fence per slot (both waited for on \
  the CPU), against a ring of registered PBOs mapped and unmapped every frame. Same kernel \
  (`plasma_pbo`, 1920x1080) and same GL consumer in every row: a full-screen draw reading the \
  slot as a texture buffer (`texelFetch`), no copy; no `glFinish` or stream sync per frame. A \
  sample is a round of 100 frames plus a drain, divided by 100; the median over rounds. `GL n \
  frames behind` is how many frames GL's draw trails CUDA's write. The pipelined floor is the \
  same kernel and draw alternating with nothing shared or ordered.
";
