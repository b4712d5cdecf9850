//! Ordering mechanisms at 1920x1080: how "CUDA writes a slot, GL reads it, CUDA writes it
//! again" can be ordered in a stream of frames, each against the pipelined floor (kernel into
//! device memory and draw of a separate GL buffer, alternating, nothing shared or ordered),
//! measured in the same run, in alternating rounds.
//!
//! Every frame is the workload of the frames-in-flight group (`external.rs`): the plasma kernel
//! writes 1920x1080 RGBA8 into a slot of external memory (`cuMemCreate`, imported into GL with
//! `GL_EXT_memory_object_fd`), and GL draws a full-screen triangle that reads it through a
//! texture buffer. The mechanisms:
//!
//! - **Vulkan semaphores, GPU-side waits**: binary semaphores created by Vulkan on the same GPU
//!   and imported into CUDA and GL. Per group of `burst` slots, "written" (CUDA signals after the
//!   kernels, GL waits before the draws) and "read" (GL signals after the draws, CUDA waits
//!   before the group's next write). The CPU waits only at the end of a round. Rings of 2, 3
//!   and 8 groups of 1 frame; bursts of 4, 8 and 16 frames in 2 groups.
//! - **Stream memory operations**: GL writes, after each draw, the number of reads of the slot
//!   into a counter word of external memory (`glClearBufferSubData`, after a
//!   `glMemoryBarrier`); CUDA's stream waits (`cuStreamWaitValue32`, GEQ) for the count before
//!   the slot's next write. CUDA -> GL still goes through the CPU: it polls the slot's event
//!   (`cuEventQuery`) before the draw, GL `lag` frames behind.
//! - **Two submission threads**: a CUDA thread launching kernels and recording one event per
//!   slot, the GL thread (the context's) waiting for each event before its draw and for the
//!   fence of its draw `slots / 2` frames later, and sending the slot back; `mpsc` channels
//!   between them, one thread spawned per round.
//! - **Blocking ring** (reference): `ExternalRing` with 3 slots, GL 1 frame behind, as in the
//!   frames-in-flight group.
//!
//! One sample is a round of [`ROUND`] frames (the blocking ring's: `external::ROUND`) and a
//! drain (a CUDA event and a GL fence, each waited for with a time limit), divided by its
//! frames. Every wait has a time limit; a stream wait that a failed round leaves unsatisfied is
//! released by writing the counters from a second stream. A mechanism that cannot be set up,
//! or whose round fails, is named on stderr with its error and has no row;
//! `CUDA_GL_ORDERING_SKIP` (comma-separated: `semaphores`, `wait-value`, `threads`, `blocking`)
//! leaves mechanisms out from the start.

#[path = "ordering/memops.rs"]
mod memops;
#[path = "ordering/threads.rs"]
mod threads;
#[path = "ordering/vk.rs"]
mod vk;

use crate::cases::{FULL_HD, FULL_HD_BYTES};
use crate::external::{ExtSide, Frames};
use crate::glres::{self, Buffer, flush};
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Variant, interleaved, per_frame_rounds};
use crate::texel::{TexBuffer, TexelDraw};
use anyhow::{Context as _, Result, bail, ensure};
use cuda_gl::external::{ExportableMemory, ExternalGl, GlMemoryBuffer};
use cuda_gl::{DeviceBuffer, Event, Stream, StreamFlags};
use memops::MemOps;
use std::time::Duration;
use vk::{GlSemaphoreFns, SharedSemaphore, Vulkan};

/// Frames per measured round (a multiple of every burst).
pub const ROUND: usize = 96;
/// The longest any single wait may take before the round fails.
const LIMIT: Duration = Duration::from_secs(5);
/// Slots in the pool: enough for the largest burst in 2 groups.
const POOL: usize = 32;

/// One slot: external memory and its GL buffer (dropped in order).
struct Slot {
    gl: GlMemoryBuffer,
    mem: ExportableMemory,
}

impl Slot {
    fn new(gpu: &Gpu, gl: &ExternalGl, i: usize) -> Result<Slot> {
        let mem = ExportableMemory::new(&gpu.ctx, FULL_HD_BYTES)
            .with_context(|| format!("allocating slot {i}"))?;
        let gl = GlMemoryBuffer::import(gl, &mem).with_context(|| format!("importing slot {i}"))?;
        Ok(Slot { gl, mem })
    }
}

/// A ring of `groups` groups of `burst` slots with a "written" and a "read" semaphore each.
struct SemRing<'v> {
    burst: usize,
    written: Vec<SharedSemaphore<'v>>,
    read: Vec<SharedSemaphore<'v>>,
    /// Whether GL's signal of `read[g]` is queued and CUDA has not waited for it yet.
    read_pending: Vec<bool>,
}

impl<'v> SemRing<'v> {
    fn new(vulkan: &'v Vulkan, fns: GlSemaphoreFns, groups: usize, burst: usize) -> Result<Self> {
        let make = || {
            (0..groups)
                .map(|_| SharedSemaphore::new(vulkan, fns))
                .collect::<Result<Vec<_>>>()
        };
        Ok(SemRing {
            burst,
            written: make()?,
            read: make()?,
            read_pending: vec![false; groups],
        })
    }
}

/// The stream-memory-operation ring: one counter word per slot in external memory that GL
/// writes and CUDA's stream waits on, and one CUDA event per slot.
struct CounterRing {
    /// The ring's first counter word: each ring has words of its own, since its counts
    /// persist across rounds.
    base: usize,
    slots: usize,
    lag: usize,
    events: Vec<Event>,
    /// Writes issued per slot; GL stores the same count after reading the frame.
    writes: Vec<u32>,
}

/// Everything the group uses; GL objects drop before the GL context (owned by `Gpu`).
struct Rig<'v> {
    /// The draw and the animation time every mechanism shares.
    frames: Frames,
    /// A texture buffer over each slot's GL buffer; they drop before the slots.
    tbos: Vec<TexBuffer>,
    slots: Vec<Slot>,
    sems: Vec<SemRing<'v>>,
    counter_gl: GlMemoryBuffer,
    counter: ExportableMemory,
    memops: Option<MemOps>,
    counters: Vec<CounterRing>,
    /// One event per slot for the threaded variants.
    thread_events: Vec<Event>,
    /// A second stream, only to release stream waits after a failed round.
    rescue: Stream,
    done: Event,
    ext3: ExtSide,
    floor: Floor,
    /// Per measured variant: the error of the round that failed, after which its rounds do
    /// nothing and its row is left out.
    failed: Vec<Option<String>>,
}

/// The floor's resources: device memory the kernel writes, and a GL buffer (with a texture
/// buffer over it) that the draw reads; neither is shared.
struct Floor {
    tbo: TexBuffer,
    _buffer: Buffer,
    device: DeviceBuffer<u8>,
}

impl Floor {
    fn new(gpu: &Gpu) -> Result<Floor> {
        let buffer = Buffer::new(FULL_HD_BYTES, "the floor's GL buffer")?;
        Ok(Floor {
            tbo: TexBuffer::new(buffer.name(), "the floor's GL buffer")?,
            _buffer: buffer,
            device: DeviceBuffer::zeroed(&gpu.ctx, FULL_HD_BYTES)
                .context("allocating the floor's device memory")?,
        })
    }
}

/// Waits, with a time limit, for every CUDA command queued on the stream and every GL command
/// issued so far.
fn drain(gpu: &Gpu, done: &Event) -> Result<()> {
    done.record(&gpu.stream)?;
    done.wait_for(LIMIT).context("draining the CUDA stream")?;
    gl_fence_wait(gl_fence()).context("draining GL")
}

/// A fence after every GL command issued so far.
fn gl_fence() -> gl::types::GLsync {
    // SAFETY: a context is current; the arguments are the only valid ones.
    unsafe { gl::FenceSync(gl::SYNC_GPU_COMMANDS_COMPLETE, 0) }
}

/// Waits for `sync` with the time limit, then deletes it.
fn gl_fence_wait(sync: gl::types::GLsync) -> Result<()> {
    ensure!(!sync.is_null(), "glFenceSync returned no fence");
    let ns = u64::try_from(LIMIT.as_nanos()).unwrap_or(u64::MAX);
    // SAFETY: a live fence of the current context, deleted once after the wait.
    let status = unsafe {
        let status = gl::ClientWaitSync(sync, gl::SYNC_FLUSH_COMMANDS_BIT, ns);
        gl::DeleteSync(sync);
        status
    };
    match status {
        gl::ALREADY_SIGNALED | gl::CONDITION_SATISFIED => Ok(()),
        gl::TIMEOUT_EXPIRED => bail!("a GL fence did not signal within {LIMIT:?}"),
        other => bail!("glClientWaitSync returned 0x{other:04x}"),
    }
}

/// One round through Vulkan semaphores: per group, CUDA waits "read" (if GL signalled it),
/// writes `burst` frames and signals "written"; GL waits "written", draws them and signals
/// "read". Nothing waits on the CPU until the drain.
fn sem_round(gpu: &Gpu, r: &mut Rig<'_>, which: usize) -> Result<()> {
    let ring = &mut r.sems[which];
    let (burst, groups) = (ring.burst, ring.written.len());
    for n in 0..ROUND / burst {
        let g = n % groups;
        let slots = &r.slots[g * burst..(g + 1) * burst];
        let buffers: Vec<u32> = slots.iter().map(|s| s.gl.buffer().0).collect();
        if ring.read_pending[g] {
            ring.read[g].cuda_wait(&gpu.stream)?;
            ring.read_pending[g] = false;
        }
        for slot in slots {
            r.frames.plasma(gpu, slot.mem.device_ptr()?)?;
        }
        ring.written[g].cuda_signal(&gpu.stream)?;
        ring.written[g].gl_wait(&buffers);
        for tbo in &r.tbos[g * burst..(g + 1) * burst] {
            r.frames.draw.draw(tbo);
        }
        ring.read[g].gl_signal(&buffers);
        ring.read_pending[g] = true;
        flush();
    }
    glres::check("the semaphore round")?;
    drain(gpu, &r.done)
}

/// The device address of counter word `word`.
fn counter_addr(counter: &ExportableMemory, word: usize) -> Result<cuda_gl::sys::CUdeviceptr> {
    Ok(counter.device_ptr()?.as_raw() + 4 * word as u64)
}

/// One round of the stream-memory-operation ring; on failure, releases the stream's waits.
fn counter_round(gpu: &Gpu, r: &mut Rig<'_>, which: usize) -> Result<()> {
    // Taken out for the round, so that the round can borrow the rest of the rig mutably.
    let memops = r.memops.take().context("no stream memory operations")?;
    let result = counter_frames(gpu, r, &memops, which);
    if result.is_err() {
        let ring = &r.counters[which];
        for word in ring.base..ring.base + ring.slots {
            let Ok(addr) = counter_addr(&r.counter, word) else {
                continue;
            };
            // SAFETY: the counter word is in `r.counter` (4 * POOL bytes, 4-aligned), which
            // outlives the write (synchronized below).
            let _ = unsafe { memops.write(&r.rescue, addr, u32::MAX / 2) };
        }
        let _ = r.rescue.synchronize();
    }
    r.memops = Some(memops);
    result
}

fn counter_frames(gpu: &Gpu, r: &mut Rig<'_>, memops: &MemOps, which: usize) -> Result<()> {
    let ring = &mut r.counters[which];
    let (base, slots, lag) = (ring.base, ring.slots, ring.lag);
    for n in 0..ROUND + lag {
        if n < ROUND {
            let s = n % slots;
            let addr = counter_addr(&r.counter, base + s)?;
            // SAFETY: the word is inside `r.counter`, which outlives the group's drains; GL
            // stores this count after its read of the slot's previous frame, issued (and
            // flushed) `slots - lag` steps ago, or stored it already (count 0 at the start).
            unsafe { memops.wait_geq(&gpu.stream, addr, ring.writes[s]) }?;
            r.frames.plasma(gpu, r.slots[s].mem.device_ptr()?)?;
            ring.events[s].record(&gpu.stream)?;
            ring.writes[s] += 1;
        }
        if n >= lag {
            let s = (n - lag) % slots;
            ring.events[s]
                .wait_for(LIMIT)
                .context("waiting for a slot's CUDA event")?;
            r.frames.draw.draw(&r.tbos[s]);
            let count = ring.writes[s];
            // SAFETY: the counter buffer holds 4 * POOL bytes and `base + s` < POOL (checked at
            // set-up); one u32 is read
            // from `count`; the binding is restored. The barrier keeps the store behind the
            // draw's reads.
            unsafe {
                gl::MemoryBarrier(gl::ALL_BARRIER_BITS);
                gl::BindBuffer(gl::COPY_WRITE_BUFFER, r.counter_gl.buffer().0);
                gl::ClearBufferSubData(
                    gl::COPY_WRITE_BUFFER,
                    gl::R32UI,
                    (4 * (base + s)) as isize,
                    4,
                    gl::RED_INTEGER,
                    gl::UNSIGNED_INT,
                    (&raw const count).cast(),
                );
                gl::BindBuffer(gl::COPY_WRITE_BUFFER, 0);
            }
            flush();
        }
    }
    glres::check("the stream-memory-operation round")?;
    drain(gpu, &r.done)
}

/// The floor: kernel into device memory + draw of another GL buffer + flush, alternating.
fn floor_round(gpu: &Gpu, r: &mut Rig<'_>) -> Result<()> {
    for _ in 0..ROUND {
        r.frames.plasma(gpu, r.floor.device.device_ptr())?;
        r.frames.draw.draw(&r.floor.tbo);
        flush();
    }
    drain(gpu, &r.done)
}

/// Semaphore rings (groups, burst) measured: rings of 1 frame, then bursts in 2 groups.
const SEM_SHAPES: [(usize, usize); 6] = [(2, 1), (3, 1), (8, 1), (2, 4), (2, 8), (2, 16)];
/// Stream-memory-operation rings (slots, GL lag).
const COUNTER_SHAPES: [(usize, usize); 3] = [(2, 1), (3, 1), (8, 4)];
/// Threaded variants' slots.
const THREAD_SLOTS: [usize; 2] = [3, 8];
/// Comma-separated kinds to leave out (`semaphores`, `wait-value`, `threads`, `blocking`).
const SKIP_ENV: &str = "CUDA_GL_ORDERING_SKIP";

/// One row of the group.
#[derive(Debug, Clone, Copy)]
enum Mechanism {
    Floor,
    /// Index into `Rig::sems` and `SEM_SHAPES`.
    Semaphores(usize),
    /// Index into `Rig::counters` and `COUNTER_SHAPES`.
    WaitValue(usize),
    /// Slots.
    Threads(usize),
    Blocking,
}

impl Mechanism {
    fn name(self) -> String {
        match self {
            Mechanism::Floor => "floor: kernel into device memory + draw of another GL buffer + \
                                 glFlush, alternating, nothing shared or ordered"
                .into(),
            Mechanism::Semaphores(i) => match SEM_SHAPES[i] {
                (groups, 1) => format!(
                    "Vulkan semaphores, GPU waits: ring of {groups} slots, 1 frame per alternation"
                ),
                (groups, burst) => format!(
                    "Vulkan semaphores, GPU waits: bursts of {burst} frames, {groups} in flight"
                ),
            },
            Mechanism::WaitValue(i) => {
                let (slots, lag) = COUNTER_SHAPES[i];
                format!(
                    "stream wait-value (GL->CUDA on the GPU) + event poll (CUDA->GL): {slots} \
                     slots, GL {lag} frame(s) behind"
                )
            }
            Mechanism::Threads(slots) => {
                format!("CUDA thread + GL thread, events, fences and channels: {slots} slots")
            }
            Mechanism::Blocking => "blocking ring (ExternalRing, CPU waits on event and fence): \
                                    3 slots, GL 1 frame behind"
                .into(),
        }
    }

    /// The name `CUDA_GL_ORDERING_SKIP` uses for the kind.
    fn kind(self) -> &'static str {
        match self {
            Mechanism::Floor => "floor",
            Mechanism::Semaphores(_) => "semaphores",
            Mechanism::WaitValue(_) => "wait-value",
            Mechanism::Threads(_) => "threads",
            Mechanism::Blocking => "blocking",
        }
    }

    /// Probe order: the mechanisms whose failure could leave a GPU queue waiting go last.
    fn risk(self) -> u8 {
        match self {
            Mechanism::Floor => 0,
            Mechanism::Blocking => 1,
            Mechanism::Threads(_) => 2,
            Mechanism::WaitValue(_) => 3,
            Mechanism::Semaphores(_) => 4,
        }
    }

    /// Frames in one round.
    fn frames(self) -> usize {
        match self {
            Mechanism::Blocking => crate::external::ROUND,
            _ => ROUND,
        }
    }

    /// One round, drained.
    fn round(self, gpu: &Gpu, r: &mut Rig<'_>) -> Result<()> {
        match self {
            Mechanism::Floor => floor_round(gpu, r),
            Mechanism::Semaphores(i) => sem_round(gpu, r, i),
            Mechanism::WaitValue(i) => counter_round(gpu, r, i),
            Mechanism::Threads(slots) => threads::threaded_round(gpu, r, slots),
            Mechanism::Blocking => r.ext3.round(gpu, &mut r.frames, 1),
        }
    }
}

/// The semaphore rings, or none (said on stderr) when Vulkan or GL cannot make them.
fn sem_rings<'v>(gpu: &Gpu, vulkan: &'v Option<Vulkan>) -> Vec<SemRing<'v>> {
    let rings = || -> Result<Vec<SemRing<'v>>> {
        let vulkan = vulkan.as_ref().context("no Vulkan device")?;
        let fns = GlSemaphoreFns::load(gpu)?;
        SEM_SHAPES
            .iter()
            .map(|&(groups, burst)| SemRing::new(vulkan, fns, groups, burst))
            .collect()
    };
    rings()
        .map_err(|e| eprintln!("interop: ordering: no Vulkan semaphores: {e:#}"))
        .unwrap_or_default()
}

/// The group. Mechanisms that cannot be set up, or whose first round fails, are reported on
/// stderr and left out; the floor and the others still run.
pub fn ordering(gpu: &Gpu, plan: &Plan) -> Result<Vec<Case>> {
    let (w, h) = FULL_HD;
    let group = format!(
        "ordering mechanisms {w}x{h} (µs per frame = round of {ROUND} frames (blocking ring: \
         {}) incl. drain / frames; median over rounds; ratio to the pipelined floor)",
        crate::external::ROUND
    );
    let gl = ExternalGl::current().context("loading GL_EXT_memory_object(_fd)")?;
    let vulkan = Vulkan::open(gpu.ctx.device())
        .map_err(|e| eprintln!("interop: ordering: no Vulkan device: {e:#}"))
        .ok();
    if let Some(v) = &vulkan {
        eprintln!("interop: ordering: Vulkan device {}", v.name);
    }
    eprintln!(
        "interop: ordering: stream memory operation attributes: {}",
        memops::attributes(gpu.ctx.device())
    );
    let memops = MemOps::load()
        .map_err(|e| eprintln!("interop: ordering: no stream memory operations: {e:#}"))
        .ok();
    let counter = ExportableMemory::new(&gpu.ctx, 4 * POOL).context("allocating the counters")?;
    let counter_gl = GlMemoryBuffer::import(&gl, &counter).context("importing the counters")?;
    let counter_ptr = counter.device_ptr()?.as_raw();
    // SAFETY: the counter allocation holds at least POOL words; the memset is synchronous.
    crate::gpu::cu("cuMemsetD32_v2", unsafe {
        cuda_gl::sys::driver()?.cuMemsetD32_v2(counter_ptr, 0, POOL)
    })?;
    let slots = (0..POOL)
        .map(|i| Slot::new(gpu, &gl, i))
        .collect::<Result<Vec<_>>>()?;
    let mut rig = Rig {
        frames: Frames {
            draw: TexelDraw::new(FULL_HD)?,
            t: 0.0,
        },
        tbos: TexBuffer::over_each(POOL, "slot", |i| Ok(slots[i].gl.buffer().0))?,
        slots,
        sems: sem_rings(gpu, &vulkan),
        counter_gl,
        counter,
        counters: match memops {
            Some(_) => COUNTER_SHAPES
                .iter()
                .scan(0, |next, &(slots, lag)| {
                    let base = *next;
                    *next += slots;
                    Some((base, slots, lag))
                })
                .map(|(base, slots, lag)| {
                    ensure!(base + slots <= POOL, "{POOL} counter words are too few");
                    Ok(CounterRing {
                        base,
                        slots,
                        lag,
                        events: (0..slots)
                            .map(|_| Event::new(&gpu.ctx, false))
                            .collect::<cuda_gl::Result<_>>()?,
                        writes: vec![0; slots],
                    })
                })
                .collect::<Result<_>>()?,
            None => Vec::new(),
        },
        memops,
        thread_events: (0..POOL)
            .map(|_| Event::new(&gpu.ctx, false))
            .collect::<cuda_gl::Result<_>>()?,
        rescue: Stream::new(&gpu.ctx, StreamFlags::NonBlocking)?,
        done: Event::new(&gpu.ctx, false)?,
        ext3: ExtSide::new(gpu, &gl, 3)?,
        floor: Floor::new(gpu)?,
        failed: Vec::new(),
    };
    glres::check("setting up the ordering group")?;
    let mut mechanisms = vec![Mechanism::Floor];
    mechanisms.extend((0..rig.sems.len()).map(Mechanism::Semaphores));
    mechanisms.extend((0..rig.counters.len()).map(Mechanism::WaitValue));
    mechanisms.extend(THREAD_SLOTS.map(Mechanism::Threads));
    mechanisms.push(Mechanism::Blocking);
    let skip = std::env::var(SKIP_ENV).unwrap_or_default();
    mechanisms.retain(|m| !skip.split(',').any(|s| !s.is_empty() && s == m.kind()));
    // A first round of each, the ones that could stall a GPU queue last: one that fails is said
    // and left out, not fatal to the group.
    let mut probe_order: Vec<usize> = (0..mechanisms.len()).collect();
    probe_order.sort_by_key(|&i| mechanisms[i].risk());
    let mut ok = vec![false; mechanisms.len()];
    for i in probe_order {
        let m = mechanisms[i];
        match m.round(gpu, &mut rig) {
            Ok(()) => ok[i] = true,
            Err(e) if !matches!(m, Mechanism::Floor) => {
                eprintln!("interop: ordering: {} failed, left out: {e:#}", m.name());
            }
            Err(e) => return Err(e.context("the floor's first round")),
        }
    }
    let kept: Vec<Mechanism> = mechanisms
        .into_iter()
        .zip(ok)
        .filter_map(|(m, ok)| ok.then_some(m))
        .collect();
    // One round per block, so that the variants alternate round by round.
    let rounds = Plan {
        block: 1,
        warmup: 1,
        ..plan.with_iters((plan.iters / ROUND).max(5))
    };
    // A mechanism whose round fails later is left out too (its error said below); the floor's
    // failure ends the group.
    rig.failed = vec![None; kept.len()];
    let mut variants: Vec<_> = kept
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            Variant::new(m.name(), move |r: &mut Rig<'_>| {
                if matches!(m, Mechanism::Floor) {
                    return m.round(gpu, r);
                }
                if r.failed[i].is_none()
                    && let Err(e) = m.round(gpu, r)
                {
                    r.failed[i] = Some(format!("{e:#}"));
                }
                Ok(())
            })
        })
        .collect();
    let measured = interleaved(&rounds, &group, &mut rig, &mut variants)?;
    drop(variants);
    let failed = std::mem::take(&mut rig.failed);
    drop(rig);
    glres::check("the ordering group")?;
    let mut cases = Vec::new();
    for ((mut case, m), failure) in measured.into_iter().zip(&kept).zip(failed) {
        if let Some(e) = failure {
            eprintln!(
                "interop: ordering: {} failed while measured, left out: {e}",
                m.name()
            );
            continue;
        }
        // The blocking ring's rounds are `external::ROUND` frames long, the others `ROUND`.
        per_frame_rounds(std::slice::from_mut(&mut case), m.frames());
        cases.push(case);
    }
    if let [floor, rest @ ..] = cases.as_mut_slice() {
        for case in rest {
            case.relative_to(floor, None);
        }
    }
    for case in &cases {
        if let Some(ratio) = &case.ratio {
            eprintln!(
                "interop: ordering: {:.2}x floor: {}",
                ratio.value, case.name
            );
        }
    }
    Ok(cases)
}
