//! Streaming vs the pipelined floor: `cuda_gl::external::FrameStream` at several burst sizes
//! and depths, at 1920x1080 and 3840x2160, against the floor of the same size measured in the
//! same interleaved rounds.
//!
//! Every frame: the plasma kernel writes the frame (RGBA8) into its slot, and GL draws a
//! full-screen triangle into a framebuffer of the frame's size that reads the slot as a texture
//! buffer (the consumer of the frames-in-flight group). The pipelined floor queues the same
//! kernel into plain device memory and the same draw of a separate GL buffer, alternating, with
//! `glFlush` after each draw: nothing shared, nothing ordered.
//!
//! One sample is a round of [`ROUND`] frames, including the stream's start (the first burst is
//! written before GL gets any) and its drain (`flush` and `wait_idle`; `glFinish` and a stream
//! synchronize for the floor), divided by [`ROUND`]: the sustained cost per frame, start and
//! drain included. Latency in frames is how many frames were pushed after a frame when GL was
//! given it (`FrameRead::frames_behind`), mean and maximum over every frame of every round.

use crate::glres::{self, Buffer};
use crate::gpu::Gpu;
use crate::latency::{self, Stamps};
use crate::measure::{Case, Plan, Variant, interleaved, per_frame_rounds};
use crate::texel::{TexBuffer, TexelDraw};
use anyhow::{Context as _, Result};
use cuda_gl::DeviceBuffer;
use cuda_gl::external::{ExternalGl, FrameRead, FrameStream, FrameWrite};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The frame sizes of the group.
pub const STREAM_SIZES: [(u32, u32); 2] = [(1920, 1080), (3840, 2160)];
/// Frames per measured round (a multiple of every burst of [`POINTS`]).
pub const ROUND: usize = 480;
/// The points of the curve, as (slots, burst).
pub const POINTS: [(usize, usize); 8] = [
    (2, 1),
    (3, 1),
    (4, 2),
    (8, 4),
    (16, 4),
    (16, 8),
    (24, 8),
    (32, 16),
];
/// How many frame buffers the second floor rotates over: the memory of a 16-slot stream.
pub const FOOTPRINT: usize = 16;
/// The latency the issue allows, in frames: the summary's chosen point stays within it.
pub const MAX_LATENCY_FRAMES: u64 = 16;
/// The target ratio to the pipelined floor.
pub const TARGET: f64 = 1.10;
/// Animation time step between frames (seconds).
const FRAME_DT: f32 = 1.0 / 60.0;

/// The group's entry in the report's list of cases.
pub const LEGEND: &str = "\
- **streaming** (`cuda_gl::external::FrameStream`): the plasma kernel writes each frame into \
  a slot of CUDA memory imported into GL, GL draws a full-screen triangle reading the slot as \
  a texture buffer; `slots` slots, handed over in bursts of `burst` frames (the producer runs \
  back to back for a burst, then GL gets every written burst; one GL fence per burst). A \
  sample is a round of 480 frames, stream start and drain included, divided by 480. Floor: \
  the same kernel into plain device memory and the same draw of another GL buffer, \
  alternating, nothing shared or ordered; `floor over 16`: the same, rotating over 16 of each \
  (a 16-slot stream's memory). Latency in frames: frames pushed after a frame when GL got it \
  (mean / max); in µs: measured on the GPU's clock in a round of its own (a one-thread kernel \
  stores the global timer before each frame's kernel, GL records a timestamp query after its \
  draw; median / max), and estimated as (mean + 1) x µs per frame.\n";

/// A streaming row's shape and latency.
#[derive(Debug, Clone, Serialize)]
pub struct StreamTag {
    /// Frame width in pixels.
    pub width: u32,
    /// Frame height in pixels.
    pub height: u32,
    /// Slots of the stream (0 for the floor).
    pub slots: usize,
    /// Frames per burst (0 for the floor).
    pub burst: usize,
    /// Mean frames pushed after a frame when GL was given it.
    pub latency_frames: f64,
    /// The most frames pushed after a frame when GL was given it.
    pub latency_frames_max: u64,
    /// The latency from a frame's kernel to the end of its draw, estimated as
    /// `(latency_frames + 1) * per-frame median`: the frames queued ahead of its draw, then the
    /// draw.
    pub latency_us: f64,
    /// The same latency measured on the GPU's clock in a separate round (a stamp of the global
    /// timer before each frame's kernel, a GL timestamp after its draw): median and largest, in
    /// µs; `None` when the two clocks disagreed or for the floors.
    pub latency_us_gpu: Option<(f64, f64)>,
}

/// One stream, a texture buffer over each slot, and its latency counts. The texture buffers
/// drop before the stream.
struct Side {
    tbos: Vec<TexBuffer>,
    stream: FrameStream,
    behind_sum: u64,
    behind_max: u64,
    frames: u64,
}

/// Everything the group uses at one size; it drops before the GL context (owned by `Gpu`).
struct Rig {
    draw: TexelDraw,
    sides: Vec<Side>,
    /// For the floor: device memory the kernel writes, and a GL buffer (with a texture buffer
    /// over it) that the draw reads; neither is shared.
    device: DeviceBuffer<u8>,
    plain_tbo: TexBuffer,
    _plain: Buffer,
    /// For the floor at a stream's memory footprint: [`FOOTPRINT`] of each, used in turn.
    spread_devices: Vec<DeviceBuffer<u8>>,
    spread_tbos: Vec<TexBuffer>,
    _spread_plain: Vec<Buffer>,
    size: (u32, u32),
    t: f32,
}

/// One round through a stream: `ROUND` frames pushed, then flushed and waited for; the
/// frames-behind counts are kept. With `stamps`, a latency round instead: every frame is stamped
/// on the GPU's clock before its kernel and timestamped by GL after its draw, and each frame's
/// latency in µs is returned (the counts are left alone).
fn stream_round(
    gpu: &Gpu,
    side: &mut Side,
    draw: &TexelDraw,
    size: (u32, u32),
    t: &mut f32,
    stamps: Option<&Stamps>,
) -> Result<Vec<f64>> {
    let Side {
        tbos,
        stream,
        behind_sum,
        behind_max,
        frames,
    } = side;
    let first = stream.pushed();
    let mut consume = |frame: &FrameRead| -> Result<()> {
        draw.draw(&tbos[frame.slot()]);
        match stamps {
            Some(stamps) => stamps.mark(usize::try_from(frame.index() - first)?),
            None => {
                *behind_sum += frame.frames_behind();
                *behind_max = (*behind_max).max(frame.frames_behind());
                *frames += 1;
            }
        }
        Ok(())
    };
    let mut produce = |write: &FrameWrite<'_>| {
        *t += FRAME_DT;
        if let Some(stamps) = stamps {
            stamps.stamp(gpu, usize::try_from(write.index() - first)?)?;
        }
        gpu.plasma_into(write.device_ptr(), write.len(), size, *t)
    };
    let count = stamps.map_or(ROUND, Stamps::capacity);
    for _ in 0..count / stream.burst() {
        stream.push_burst(&gpu.stream, &mut produce, &mut consume)?;
    }
    stream.flush(&mut consume)?;
    stream.wait_idle()?;
    let Some(stamps) = stamps else {
        return Ok(Vec::new());
    };
    glres::finish();
    gpu.stream.synchronize()?;
    stamps.latencies_us(count)
}

/// One round of the floor: `ROUND` frames of kernel + draw + `glFlush`, then `glFinish` and a
/// stream synchronize. With `spread`, frame `n` uses the `n % FOOTPRINT`-th device memory and GL
/// buffer: the same work with the memory footprint of a stream of [`FOOTPRINT`] slots, which no
/// longer fits in the GPU's L2 cache.
fn floor_round(gpu: &Gpu, rig: &mut Rig, spread: bool) -> Result<()> {
    for n in 0..ROUND {
        rig.t += FRAME_DT;
        let (device, tbo) = if spread {
            (
                &rig.spread_devices[n % FOOTPRINT],
                &rig.spread_tbos[n % FOOTPRINT],
            )
        } else {
            (&rig.device, &rig.plain_tbo)
        };
        gpu.plasma_into_buffer(device, rig.size, rig.t)?;
        rig.draw.draw(tbo);
        glres::flush();
    }
    glres::finish();
    gpu.stream.synchronize()?;
    Ok(())
}

/// The group at one size: the floor and one stream per point of [`POINTS`], in alternating
/// rounds; every stream's ratio is to the floor.
pub fn streaming(gpu: &Gpu, plan: &Plan, size: (u32, u32)) -> Result<Vec<Case>> {
    let (w, h) = size;
    let bytes = w as usize * h as usize * 4;
    let group = format!(
        "streaming {w}x{h}: FrameStream vs the pipelined floor (µs per frame = round of {ROUND} \
         frames incl. start and drain / {ROUND}; median over rounds)"
    );
    let gl = ExternalGl::current().context("loading GL_EXT_memory_object(_fd)")?;
    let mut sides = Vec::with_capacity(POINTS.len());
    for (slots, burst) in POINTS {
        let stream = FrameStream::new(&gpu.ctx, &gl, bytes, slots, burst)
            .with_context(|| format!("creating a stream of {slots} slots in bursts of {burst}"))?;
        let tbos = TexBuffer::over_each(slots, "stream slot", |i| Ok(stream.gl_buffer(i)?.0))?;
        sides.push(Side {
            tbos,
            stream,
            behind_sum: 0,
            behind_max: 0,
            frames: 0,
        });
    }
    let plain = Buffer::new(bytes, "the plain GL buffer")?;
    let spread_plain = (0..FOOTPRINT)
        .map(|i| Buffer::new(bytes, &format!("plain GL buffer {i}")))
        .collect::<Result<Vec<_>>>()?;
    let spread_tbos =
        TexBuffer::over_each(FOOTPRINT, "plain GL buffer", |i| Ok(spread_plain[i].name()))?;
    let spread_devices = (0..FOOTPRINT)
        .map(|_| DeviceBuffer::zeroed(&gpu.ctx, bytes))
        .collect::<cuda_gl::Result<_>>()
        .context("allocating the device memory of the spread floor")?;
    let mut rig = Rig {
        spread_devices,
        spread_tbos,
        _spread_plain: spread_plain,
        draw: TexelDraw::new(size)?,
        sides,
        device: gpu.device_bytes(bytes)?,
        plain_tbo: TexBuffer::new(plain.name(), "the plain GL buffer")?,
        _plain: plain,
        size,
        t: 0.0,
    };
    glres::check("setting up the streaming group")?;
    let rounds = Plan {
        iters: (plan.iters / 100).max(5),
        warmup: 1,
        block: 1,
    };
    let mut variants = vec![
        Variant::new(
            "pipelined floor: kernel into device memory + draw of another GL buffer + glFlush, \
             alternating, nothing shared or ordered",
            |r: &mut Rig| floor_round(gpu, r, false),
        ),
        Variant::new(
            format!(
                "pipelined floor over {FOOTPRINT} buffers of each API in turn (a 16-slot \
                 stream's memory), nothing shared or ordered"
            ),
            |r: &mut Rig| floor_round(gpu, r, true),
        ),
    ];
    for (i, (slots, burst)) in POINTS.into_iter().enumerate() {
        variants.push(Variant::new(
            format!("FrameStream, {slots} slots, bursts of {burst}"),
            move |r: &mut Rig| {
                let Rig {
                    sides,
                    draw,
                    size,
                    t,
                    ..
                } = r;
                stream_round(gpu, &mut sides[i], draw, *size, t, None).map(drop)
            },
        ));
    }
    let mut cases = interleaved(&rounds, &group, &mut rig, &mut variants)?;
    drop(variants);
    glres::check("streaming")?;
    per_frame_rounds(&mut cases, ROUND);
    let [floor, spread, streams @ ..] = cases.as_mut_slice() else {
        anyhow::bail!("the streaming group measured too little");
    };
    for (row, slots) in [(&mut *floor, 0), (&mut *spread, FOOTPRINT)] {
        row.stream = Some(StreamTag {
            width: w,
            height: h,
            slots,
            burst: 0,
            latency_frames: 0.0,
            latency_frames_max: 0,
            latency_us: row.stats.median_us,
            latency_us_gpu: None,
        });
    }
    // Latency on the GPU's clock, in a round of its own per stream (the stamps add a launch
    // per frame, so they stay out of the throughput rounds).
    let stamps = Stamps::new(gpu, crate::PLASMA_PTX, ROUND)?;
    let clocks_agree = stamps.clocks_agree(gpu)?;
    let mut measured = Vec::with_capacity(rig.sides.len());
    for side in &mut rig.sides {
        measured.push(if clocks_agree {
            let us = stream_round(gpu, side, &rig.draw, size, &mut rig.t, Some(&stamps))?;
            latency::median_and_max(&us)
        } else {
            None
        });
    }
    drop(stamps);
    spread.relative_to(floor, None);
    for (i, (case, side)) in streams.iter_mut().zip(&rig.sides).enumerate() {
        case.relative_to(floor, Some(TARGET));
        let latency_frames = side.behind_sum as f64 / side.frames.max(1) as f64;
        case.stream = Some(StreamTag {
            width: w,
            height: h,
            slots: side.stream.slots(),
            burst: side.stream.burst(),
            latency_frames,
            latency_frames_max: side.behind_max,
            latency_us: (latency_frames + 1.0) * case.stats.median_us,
            latency_us_gpu: measured.get(i).copied().flatten(),
        });
    }
    drop(rig);
    Ok(cases)
}

/// `streaming.<WxH>` of `benchmarks.json`: the chosen point of each size's curve.
#[derive(Debug, Clone, Serialize)]
pub struct StreamSummary {
    /// The chosen point's median per frame over the floor's, measured in the same rounds.
    pub ratio_to_pipelined_floor: f64,
    /// Its mean latency in frames.
    pub latency_frames: f64,
    /// Its largest latency in frames.
    pub latency_frames_max: u64,
    /// Its estimated latency from kernel to draw end, in µs.
    pub latency_us: f64,
    /// Its latency from kernel start to draw end measured on the GPU's clock, median and
    /// largest, in µs (absent when the CUDA and GL clocks disagreed).
    pub latency_us_gpu: Option<(f64, f64)>,
    /// Its slots and burst.
    pub slots: usize,
    /// Frames per burst.
    pub burst: usize,
    /// Its median µs per frame, and the floor's.
    pub per_frame_us: f64,
    /// The floor's median µs per frame.
    pub floor_us: f64,
    /// The median per frame over that of the floor at a 16-slot stream's memory footprint:
    /// what the ordering costs once the memory is the same.
    pub ratio_to_floor_at_footprint: Option<f64>,
}

/// For each size: the point with the lowest ratio among those whose largest latency is at most
/// [`MAX_LATENCY_FRAMES`].
pub fn summaries(cases: &[Case]) -> BTreeMap<String, StreamSummary> {
    let mut out = BTreeMap::new();
    for (w, h) in STREAM_SIZES {
        let rows: Vec<(&Case, &StreamTag)> = cases
            .iter()
            .filter_map(|c| Some((c, c.stream.as_ref()?)))
            .filter(|(_, t)| (t.width, t.height) == (w, h))
            .collect();
        let Some(floor) = rows.iter().find(|(_, t)| t.slots == 0 && t.burst == 0) else {
            continue;
        };
        let best = rows
            .iter()
            .filter(|(_, t)| t.burst > 0 && t.latency_frames_max <= MAX_LATENCY_FRAMES)
            .min_by(|a, b| a.0.stats.median_us.total_cmp(&b.0.stats.median_us));
        let spread = rows
            .iter()
            .find(|(_, t)| t.slots > 0 && t.burst == 0)
            .map(|(c, _)| c.stats.median_us);
        if let Some((case, tag)) = best {
            out.insert(
                format!("{w}x{h}"),
                StreamSummary {
                    ratio_to_pipelined_floor: case.stats.median_us / floor.0.stats.median_us,
                    latency_frames: tag.latency_frames,
                    latency_frames_max: tag.latency_frames_max,
                    latency_us: tag.latency_us,
                    latency_us_gpu: tag.latency_us_gpu,
                    slots: tag.slots,
                    burst: tag.burst,
                    per_frame_us: case.stats.median_us,
                    floor_us: floor.0.stats.median_us,
                    ratio_to_floor_at_footprint: spread.map(|us| case.stats.median_us / us),
                },
            );
        }
    }
    out
}

/// The markdown table of every size's curve, for the report.
pub fn summary_markdown(cases: &[Case]) -> String {
    let mut out = String::new();
    let rows: Vec<(&Case, &StreamTag)> = cases
        .iter()
        .filter_map(|c| Some((c, c.stream.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return out;
    }
    out.push_str(
        "### Streaming vs the pipelined floor\n\n\
         | size | slots | burst | µs/frame | fps | × floor | latency frames (mean / max) | latency µs, GPU clock (median / max) | latency µs (est.) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (case, t) in rows {
        let (shape, ratio) = if t.burst == 0 {
            let name = if t.slots == 0 {
                "floor".to_string()
            } else {
                format!("floor over {}", t.slots)
            };
            let ratio = case
                .ratio
                .as_ref()
                .map_or_else(|| "1.000".to_string(), |r| format!("{:.3}", r.value));
            ((name, String::new()), ratio)
        } else {
            (
                (t.slots.to_string(), t.burst.to_string()),
                case.ratio
                    .as_ref()
                    .map_or_else(String::new, |r| format!("{:.3}", r.value)),
            )
        };
        let _ = writeln!(
            out,
            "| {}x{} | {} | {} | {:.1} | {:.0} | {} | {:.1} / {} | {} | {:.0} |",
            t.width,
            t.height,
            shape.0,
            shape.1,
            case.stats.median_us,
            1e6 / case.stats.median_us,
            ratio,
            t.latency_frames,
            t.latency_frames_max,
            t.latency_us_gpu
                .map_or_else(String::new, |(m, x)| format!("{m:.0} / {x:.0}")),
            t.latency_us
        );
    }
    out.push('\n');
    out
}
