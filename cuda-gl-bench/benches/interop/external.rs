//! Frames in flight at 1920x1080: the external-memory ring (`cuda_gl::external`: memory from
//! `cuMemCreate` imported into GL with `GL_EXT_memory_object_fd`, ordered by a CUDA event and a
//! GL fence per slot, no map or unmap) against a ring of registered PBOs mapped and unmapped
//! each frame, with the same content and the same GL consumer, at the same ring depth.
//!
//! Every frame: the plasma kernel writes 1920x1080 RGBA8 into the slot, and GL draws a
//! full-screen triangle into a 1080p framebuffer that reads the slot as a texture buffer
//! (`samplerBuffer`, `texelFetch`, no copy). No frame calls `glFinish` or synchronizes a stream:
//!
//! - external ring, `slots` slots, GL `lag` frames behind CUDA: at step `n` CUDA writes frame
//!   `n` (after the CPU waited for the fence of GL's last draw from that slot) and GL draws frame
//!   `n - lag` (after the CPU waited for that frame's CUDA event);
//! - map/unmap ring: map slot `n % slots`, kernel, unmap, draw; the driver orders the rest.
//!
//! The write of frame `n` waits for GL's draw of frame `n - slots`, issued `slots - 1 - lag`
//! steps earlier; the draw of frame `n - lag` waits for CUDA's kernel, issued `lag` steps
//! earlier. A wait with no slack (0 steps) blocks until the other API has run. 2 slots leave
//! slack on one side only; 3 slots with lag 1 on both; 8 slots with lag 4, 3 and 4 steps.
//!
//! One sample is a round of [`ROUND`] frames followed by a drain (the ring's `wait_idle`, or
//! `glFinish` + stream synchronize), divided by [`ROUND`]: the sustained cost per frame. Rounds
//! of the variants alternate. A synchronous reference (map/unmap of one PBO, draw, `glFinish` and
//! stream synchronize every frame) is measured the same way, and so are three rows with no
//! interop at all: the kernel into plain device memory alternating with the draw of a separate
//! GL buffer (both APIs on the GPU every frame, nothing shared, nothing ordered: the pipelined
//! floor), and each API alone.

use crate::cases::{FULL_HD, FULL_HD_BYTES};
use crate::glres::{self, Buffer};
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Variant, interleaved, per_frame_rounds};
use crate::texel::{TexBuffer, TexelDraw};
use anyhow::{Context as _, Result};
use cuda_gl::external::{ExternalGl, ExternalRing};
use cuda_gl::{DeviceBuffer, DevicePtr, RegisterFlags, RegisteredBuffer};

/// Frames per measured round.
pub const ROUND: usize = 100;
/// Animation time step between frames (seconds).
pub(crate) const FRAME_DT: f32 = 1.0 / 60.0;

/// An external ring and a texture buffer over each slot. Texture buffers drop first.
pub(crate) struct ExtSide {
    tbos: Vec<TexBuffer>,
    ring: ExternalRing,
}

impl ExtSide {
    pub(crate) fn new(gpu: &Gpu, gl: &ExternalGl, slots: usize) -> Result<ExtSide> {
        let ring = ExternalRing::new(&gpu.ctx, gl, slots, FULL_HD_BYTES)
            .with_context(|| format!("creating a {slots}-slot external ring"))?;
        let tbos = TexBuffer::over_each(slots, "external slot", |i| Ok(ring.gl_buffer(i)?.0))?;
        Ok(ExtSide { tbos, ring })
    }
}

/// Registered PBOs and a texture buffer over each. Registrations drop before the buffers.
struct MapSide {
    regs: Vec<RegisteredBuffer>,
    tbos: Vec<TexBuffer>,
    _buffers: Vec<Buffer>,
}

impl MapSide {
    fn new(gpu: &Gpu, slots: usize) -> Result<MapSide> {
        let buffers = (0..slots)
            .map(|i| Buffer::new(FULL_HD_BYTES, &format!("PBO {i}")))
            .collect::<Result<Vec<_>>>()?;
        let tbos = TexBuffer::over_each(slots, "PBO", |i| Ok(buffers[i].name()))?;
        let regs = buffers
            .iter()
            .map(|b| {
                RegisteredBuffer::register(&gpu.ctx, b.name(), RegisterFlags::WRITE_DISCARD)
                    .context("registering a PBO")
            })
            .collect::<Result<_>>()?;
        Ok(MapSide {
            regs,
            tbos,
            _buffers: buffers,
        })
    }
}

/// Everything the group uses. The draw and the sides drop before the GL context (owned by
/// `Gpu`, which outlives this).
struct Rig {
    frames: Frames,
    ext2: ExtSide,
    ext3: ExtSide,
    ext8: ExtSide,
    map1: MapSide,
    map2: MapSide,
    map3: MapSide,
    map8: MapSide,
    /// For the no-interop rows: device memory the kernel writes, and a GL buffer (with a texture
    /// buffer over it) that the draw reads; neither is shared.
    device: DeviceBuffer<u8>,
    plain_tbo: TexBuffer,
    _plain: Buffer,
}

/// What every row shares: the GL consumer of the frames and the animation time.
pub(crate) struct Frames {
    pub(crate) draw: TexelDraw,
    pub(crate) t: f32,
}

impl Frames {
    /// Queues the plasma kernel writing the next 1080p frame to `out` (a ring slot, a mapped PBO
    /// or plain device memory of at least `FULL_HD_BYTES`).
    pub(crate) fn plasma(&mut self, gpu: &Gpu, out: DevicePtr<'_>) -> Result<()> {
        self.t += FRAME_DT;
        gpu.plasma_into(out, FULL_HD_BYTES, FULL_HD, self.t)
    }
}

impl ExtSide {
    /// One round through the ring: `ROUND` frames, GL `lag` frames behind, then a drain.
    pub(crate) fn round(&mut self, gpu: &Gpu, frames: &mut Frames, lag: usize) -> Result<()> {
        let slots = self.ring.len();
        for n in 0..ROUND + lag {
            if n < ROUND {
                let write = self.ring.write(n % slots, &gpu.stream)?;
                frames.plasma(gpu, write.device_ptr())?;
                write.finish()?;
            }
            if n >= lag {
                let slot = (n - lag) % slots;
                let read = self.ring.read(slot)?;
                frames.draw.draw(&self.tbos[slot]);
                read.finish()?;
            }
        }
        self.ring.wait_idle()?;
        Ok(())
    }
}

impl MapSide {
    /// One round through the map/unmap ring: `ROUND` frames, then `glFinish` and a stream sync;
    /// with `sync_each`, after every frame instead (the synchronous reference).
    fn round(&mut self, gpu: &Gpu, frames: &mut Frames, sync_each: bool) -> Result<()> {
        let slots = self.regs.len();
        for n in 0..ROUND {
            let slot = n % slots;
            let mapped = self.regs[slot].map(&gpu.stream)?;
            frames.plasma(gpu, mapped.device_ptr())?;
            mapped.unmap()?;
            frames.draw.draw(&self.tbos[slot]);
            if sync_each {
                glres::finish();
                gpu.stream.synchronize()?;
            }
        }
        glres::finish();
        gpu.stream.synchronize()?;
        Ok(())
    }
}

/// The group: external rings of 2, 3 and 8 slots, map/unmap rings of 2, 3 and 8, the synchronous
/// reference and the no-interop rows, in alternating rounds. Each external ring's ratio is to
/// the map/unmap ring of its depth; the map/unmap rings' and the synchronous reference's ratio
/// is to the pipelined floor.
pub fn frames_in_flight(gpu: &Gpu, plan: &Plan) -> Result<Vec<Case>> {
    let (w, h) = FULL_HD;
    let group = format!(
        "frames in flight {w}x{h}: external-memory ring vs map/unmap ring (µs per frame = \
         round of {ROUND} frames incl. drain / {ROUND}; median over rounds)"
    );
    let gl = ExternalGl::current().context("loading GL_EXT_memory_object(_fd)")?;
    let plain = Buffer::new(FULL_HD_BYTES, "the plain GL buffer")?;
    let mut rig = Rig {
        frames: Frames {
            draw: TexelDraw::new(FULL_HD)?,
            t: 0.0,
        },
        ext2: ExtSide::new(gpu, &gl, 2)?,
        ext3: ExtSide::new(gpu, &gl, 3)?,
        ext8: ExtSide::new(gpu, &gl, 8)?,
        map1: MapSide::new(gpu, 1)?,
        map2: MapSide::new(gpu, 2)?,
        map3: MapSide::new(gpu, 3)?,
        map8: MapSide::new(gpu, 8)?,
        device: DeviceBuffer::zeroed(&gpu.ctx, FULL_HD_BYTES)
            .context("allocating 8 MB of device memory")?,
        plain_tbo: TexBuffer::new(plain.name(), "the plain GL buffer")?,
        _plain: plain,
    };
    glres::check("setting up the frames-in-flight group")?;
    let rounds = Plan {
        iters: (plan.iters / ROUND).max(5),
        warmup: 1,
        block: 1,
    };
    let mut variants = [
        Variant::new(
            "external ring, 2 slots, GL 1 frame behind",
            |r: &mut Rig| r.ext2.round(gpu, &mut r.frames, 1),
        ),
        Variant::new(
            "external ring, 3 slots, GL 2 frames behind",
            |r: &mut Rig| r.ext3.round(gpu, &mut r.frames, 2),
        ),
        Variant::new(
            "external ring, 3 slots, GL 1 frame behind",
            |r: &mut Rig| r.ext3.round(gpu, &mut r.frames, 1),
        ),
        Variant::new("external ring, 2 slots, GL same frame", |r: &mut Rig| {
            r.ext2.round(gpu, &mut r.frames, 0)
        }),
        Variant::new(
            "external ring, 8 slots, GL 4 frames behind",
            |r: &mut Rig| r.ext8.round(gpu, &mut r.frames, 4),
        ),
        Variant::new("map/unmap ring, 2 PBOs", |r: &mut Rig| {
            r.map2.round(gpu, &mut r.frames, false)
        }),
        Variant::new("map/unmap ring, 3 PBOs", |r: &mut Rig| {
            r.map3.round(gpu, &mut r.frames, false)
        }),
        Variant::new("map/unmap ring, 8 PBOs", |r: &mut Rig| {
            r.map8.round(gpu, &mut r.frames, false)
        }),
        Variant::new(
            "synchronous: map/unmap 1 PBO + draw + glFinish + stream sync every frame",
            |r: &mut Rig| r.map1.round(gpu, &mut r.frames, true),
        ),
        Variant::new(
            "no interop: kernel into device memory + draw of another GL buffer + glFlush, \
             alternating, nothing shared or ordered (pipelined floor)",
            |r: &mut Rig| {
                for _ in 0..ROUND {
                    r.frames.plasma(gpu, r.device.device_ptr())?;
                    r.frames.draw.draw(&r.plain_tbo);
                    glres::flush();
                }
                glres::finish();
                gpu.stream.synchronize()?;
                Ok(())
            },
        ),
        Variant::new(
            "no interop: CUDA alone, kernel into device memory",
            |r: &mut Rig| {
                for _ in 0..ROUND {
                    r.frames.plasma(gpu, r.device.device_ptr())?;
                }
                gpu.stream.synchronize()?;
                Ok(())
            },
        ),
        Variant::new("no interop: GL alone, draw + glFlush", |r: &mut Rig| {
            for _ in 0..ROUND {
                r.frames.draw.draw(&r.plain_tbo);
                glres::flush();
            }
            glres::finish();
            Ok(())
        }),
    ];
    let mut cases = interleaved(&rounds, &group, &mut rig, &mut variants)?;
    glres::check("frames in flight")?;
    per_frame_rounds(&mut cases, ROUND);
    if let [
        ext2,
        ext3,
        ext3_lag1,
        ext2_same,
        ext8,
        map2,
        map3,
        map8,
        sync,
        floor,
        ..,
    ] = cases.as_mut_slice()
    {
        ext2.relative_to(map2, None);
        ext3.relative_to(map3, None);
        ext3_lag1.relative_to(map3, None);
        ext2_same.relative_to(map2, None);
        ext8.relative_to(map8, None);
        map2.relative_to(floor, None);
        map3.relative_to(floor, None);
        map8.relative_to(floor, None);
        sync.relative_to(floor, None);
    }
    drop(rig);
    Ok(cases)
}
