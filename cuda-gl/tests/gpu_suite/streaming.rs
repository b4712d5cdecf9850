//! `FrameStream` on a real GPU, under pressure: 10,000 streamed frames, with a deliberately slow
//! producer (a kernel that spins before writing) and a slow consumer (the CPU sleeps and GL does
//! extra copies), each frame copied by GL (in GL's queue, when the stream gives it the frame)
//! into an archive that is compared with the CPU reference word for word. The same check run
//! with the ordering turned off must catch the race. Errors and panics of the producer and
//! consumer, bad arguments and another GL context current leave the stream usable.
//!
//! Needs `--features egl` and a GPU; skips with a reason elsewhere (fails under
//! `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(all(feature = "egl", unix))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::external::{fill_words_slow, frame_seed, gl_copy, gl_view, gpu_and_gl};
use crate::gpu::*;
use crate::harness;
use cuda_gl::egl::HeadlessContext;
use cuda_gl::external::{
    ExportableMemory, ExternalGl, FrameRead, FrameStream, FrameWrite, GlMemoryBuffer,
};
use cuda_gl::{Error, Function, UsageError};
use std::time::{Duration, Instant};

/// Words per frame: 128 x 128 RGBA8 pixels' worth.
const WORDS: usize = 128 * 128;
const BYTES: usize = WORDS * 4;
/// Frames are checked in batches of this many (the archive holds one batch).
const BATCH: usize = 500;
/// Every this many frames the producer spins before writing.
const SLOW_PRODUCER_EVERY: usize = 97;
/// Every this many frames the consumer sleeps and has GL copy the frame 16 more times.
const SLOW_CONSUMER_EVERY: usize = 89;
/// How long a slow frame of the producer spins, and how long a slow consumer sleeps.
const SLOW: Duration = Duration::from_millis(2);

/// How a run pushes its frames.
#[derive(Debug, Clone, Copy)]
struct Plan {
    slots: usize,
    burst: usize,
    frames: usize,
    /// Spin of a slow producer frame, in ns (every `SLOW_PRODUCER_EVERY` frames; every frame
    /// when `slow_every_frame`).
    spin_ns: u64,
    slow_every_frame: bool,
    slow_consumer: bool,
    ordered: bool,
}

/// What a run found.
#[derive(Debug)]
struct Run {
    /// Frames whose archived copy differs from the CPU reference.
    bad: Vec<usize>,
    /// Frames the consumer got (each one once, in order).
    consumed: usize,
    /// The most frames pushed after a frame when GL got it.
    max_behind: u64,
    us_per_frame: f64,
}

/// The consumer's state: the archive GL copies frames into, and what it checked.
struct Checker {
    archive: u32,
    scratch: u32,
    next: u64,
    bad: Vec<usize>,
    max_behind: u64,
    slow: bool,
}

impl Checker {
    /// GL's side of one frame: copy it into the archive (and, on a slow frame, 16 times into a
    /// scratch buffer after sleeping); at the end of a batch, read the archive back and compare.
    fn consume(&mut self, frame: &FrameRead, last: usize) -> Result<(), Error> {
        assert_eq!(
            frame.index(),
            self.next,
            "the consumer got frames out of order"
        );
        assert_eq!(frame.len(), BYTES);
        self.next += 1;
        self.max_behind = self.max_behind.max(frame.frames_behind());
        let n = frame.index() as usize;
        gl_copy(frame.buffer(), self.archive, (n % BATCH) * BYTES, BYTES);
        if self.slow && n.is_multiple_of(SLOW_CONSUMER_EVERY) {
            std::thread::sleep(SLOW);
            for _ in 0..16 {
                gl_copy(frame.buffer(), self.scratch, 0, BYTES);
            }
        }
        if n % BATCH == BATCH - 1 || n == last {
            let first = n - n % BATCH;
            let words = read_gl_buffer(self.archive, (n - first + 1) * WORDS);
            for (j, got) in words.chunks_exact(WORDS).enumerate() {
                if got != pattern_words(WORDS, frame_seed(first + j)).as_slice() {
                    if self.bad.is_empty() {
                        eprintln!("frame {}: {}", first + j, what_it_holds(got, first + j));
                    }
                    self.bad.push(first + j);
                }
            }
        }
        Ok(())
    }
}

/// What a wrong frame holds instead of frame `n`: zeros, another frame (by its first and last
/// words), or a mix.
fn what_it_holds(got: &[u32], n: usize) -> String {
    if got.iter().all(|&w| w == 0) {
        return "zeros".into();
    }
    let first = (n.saturating_sub(128)..n + 128).find(|&m| got[0] == pattern(0, frame_seed(m)));
    let last_i = (WORDS - 1) as u32;
    let last = (n.saturating_sub(128)..n + 128)
        .find(|&m| got[WORDS - 1] == pattern(last_i, frame_seed(m)));
    format!("first word from frame {first:?}, last word from frame {last:?}")
}

/// Pushes `plan.frames` frames of `ext_fill_u32_slow` through a stream and checks every one.
fn run(g: &Gpu, gl: &ExternalGl, plan: Plan) -> Run {
    let mut stream = FrameStream::new(&g.ctx, gl, BYTES, plan.slots, plan.burst).unwrap();
    assert_eq!((stream.slots(), stream.burst()), (plan.slots, plan.burst));
    assert_eq!(stream.frame_bytes(), BYTES);
    if !plan.ordered {
        // SAFETY: (1) the test wants GL to read unfinished frames; the memory stays allocated.
        unsafe { stream.disable_ordering() };
    }
    let fill = g.kernels.function("ext_fill_u32_slow").unwrap();
    let mut checker = Checker {
        archive: gl_buffer(BATCH.min(plan.frames) * BYTES, None),
        scratch: gl_buffer(BYTES, None),
        next: 0,
        bad: Vec::new(),
        max_behind: 0,
        slow: plan.slow_consumer,
    };
    let last = plan.frames - 1;
    let mut consume = |frame: &FrameRead| checker.consume(frame, last);
    let start = Instant::now();
    let mut producer = |w: &FrameWrite<'_>| {
        let n = w.index() as usize;
        let slow = plan.slow_every_frame || n.is_multiple_of(SLOW_PRODUCER_EVERY);
        produce(g, &fill, w, if slow { plan.spin_ns } else { 0 })
    };
    assert!(plan.frames.is_multiple_of(plan.burst));
    for _ in 0..plan.frames / plan.burst {
        stream
            .push_burst(&g.stream, &mut producer, &mut consume)
            .unwrap();
    }
    stream.flush(&mut consume).unwrap();
    stream.wait_idle().unwrap();
    let us_per_frame = start.elapsed().as_secs_f64() * 1e6 / plan.frames as f64;
    assert_eq!(stream.consumed(), plan.frames as u64);
    drop(stream);
    let Checker {
        archive,
        scratch,
        next,
        bad,
        max_behind,
        ..
    } = checker;
    delete_buffer(archive);
    delete_buffer(scratch);
    g.check_no_errors();
    Run {
        bad,
        consumed: next as usize,
        max_behind,
        us_per_frame,
    }
}

/// CUDA's side of one frame: the pattern of its seed, after spinning `spin_ns`.
fn produce(g: &Gpu, fill: &Function, w: &FrameWrite<'_>, spin_ns: u64) -> Result<(), Error> {
    assert_eq!(w.len(), BYTES);
    // SAFETY: (1) the slot holds WORDS words and stays allocated until the stream's drop has
    // waited for the slot's event, recorded on `g.stream` after this launch.
    unsafe {
        fill_words_slow(
            g,
            fill,
            w.device_ptr(),
            WORDS,
            frame_seed(w.index() as usize),
            spin_ns,
        )
    }
}

#[test]
fn ten_thousand_streamed_frames_equal_the_cpu_reference_under_a_slow_producer_and_consumer() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    for (slots, burst) in [(2, 1), (16, 8), (32, 16)] {
        let plan = Plan {
            slots,
            burst,
            frames: 10_000,
            spin_ns: SLOW.as_nanos() as u64,
            slow_every_frame: false,
            slow_consumer: true,
            ordered: true,
        };
        let run = run(&g, &gl, plan);
        eprintln!(
            "{slots} slots, bursts of {burst}: {} of 10000 frames wrong, {} consumed, at most {} \
             frames behind, {:.1} us/frame",
            run.bad.len(),
            run.consumed,
            run.max_behind,
            run.us_per_frame
        );
        assert_eq!(run.consumed, 10_000);
        assert!(
            run.bad.is_empty(),
            "{slots} slots, bursts of {burst}: frames {:?} differ from the reference",
            &run.bad[..run.bad.len().min(20)]
        );
        assert!(
            run.max_behind < slots as u64,
            "GL got a frame {} frames late with {slots} slots",
            run.max_behind
        );
    }
}

/// The same check with the ordering turned off and a producer that spins 5 ms on every frame:
/// GL copies each frame while CUDA is still spinning, so every copy holds an older frame.
#[test]
fn the_check_catches_a_stream_without_ordering() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let plan = Plan {
        slots: 4,
        burst: 2,
        frames: 16,
        spin_ns: 5_000_000,
        slow_every_frame: true,
        slow_consumer: false,
        ordered: false,
    };
    let broken = run(&g, &gl, plan);
    eprintln!(
        "without ordering, 5 ms producer: {} of 16 frames wrong",
        broken.bad.len()
    );
    assert_eq!(
        broken.bad,
        (0..16).collect::<Vec<_>>(),
        "the broken ordering went unnoticed in some frames"
    );
    let control = run(
        &g,
        &gl,
        Plan {
            ordered: true,
            ..plan
        },
    );
    assert!(control.bad.is_empty(), "ordered: {:?}", control.bad);
}

/// A producer that fails or panics, and a consumer that fails or panics, leave the stream
/// consistent: a failed producer's frame and the rest of its burst are not consumed, every
/// later frame is, and every consumed frame equals the reference.
#[test]
fn producer_and_consumer_failures_leave_the_stream_usable() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let fill = g.kernels.function("ext_fill_u32_slow").unwrap();
    let mut stream = FrameStream::new(&g.ctx, &gl, BYTES, 4, 2).unwrap();
    let archive = gl_buffer(32 * BYTES, None);
    let mut got: Vec<u64> = Vec::new();
    let mut fail_consumer_at = Some(5u64);
    let mut consume = |f: &FrameRead| {
        if fail_consumer_at == Some(f.index()) {
            fail_consumer_at = None;
            return Err(Error::Internal {
                what: "the consumer's own error".into(),
            });
        }
        gl_copy(f.buffer(), archive, f.index() as usize * BYTES, BYTES);
        got.push(f.index());
        Ok(())
    };
    let mut producer = |w: &FrameWrite<'_>| match w.index() {
        6 => Err(Error::Internal {
            what: "the producer's own error".into(),
        }),
        10 => {
            produce(&g, &fill, w, 1_000_000).unwrap();
            panic!("the producer panics after queueing its kernel")
        }
        // The last burst is slow, so that it is still pending for the panicking consumer.
        30 | 31 => produce(&g, &fill, w, 2_000_000),
        _ => produce(&g, &fill, w, 0),
    };
    let (mut producer_errors, mut consumer_errors, mut panics) = (0, 0, 0);
    // A push that returns the consumer's error before producing pushes nothing: count frames.
    for _ in 0..32 {
        if stream.pushed() >= 32 {
            break;
        }
        let pushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            stream.push_burst(&g.stream, &mut producer, &mut consume)
        }));
        match pushed {
            Ok(Ok(())) => {}
            Ok(Err(Error::Internal { what })) if what.contains("producer") => producer_errors += 1,
            Ok(Err(Error::Internal { what })) if what.contains("consumer") => consumer_errors += 1,
            Ok(Err(e)) => panic!("frame {}: {e}", stream.pushed()),
            Err(_) => {
                assert_eq!(stream.pushed(), 12, "only the burst of frame 10 panics");
                panics += 1;
            }
        }
    }
    assert_eq!(stream.pushed(), 32);
    // A consumer that panics: the stream fences its reads at the next call. The burst it
    // takes is the first one still pending (the last, or the two last when the GPU had not
    // finished the one before when the last push returned).
    let mut taken = None;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        stream.flush(&mut |f: &FrameRead| -> Result<(), Error> {
            taken = Some(f.index());
            panic!("consumer panics")
        })
    }));
    assert!(caught.is_err());
    let taken = taken.expect("the panicking consumer got a frame");
    assert!(
        taken == 28 || taken == 30,
        "the panicking consumer got frame {taken}"
    );
    stream.flush(&mut consume).unwrap();
    stream.wait_idle().unwrap();
    assert_eq!((producer_errors, consumer_errors, panics), (1, 1, 1));
    // Frames 6 and 7 (a failed producer), 10 and 11 (a panicking one), 5 (a failed consumer)
    // and the burst the panicking consumer took are missing; everything else arrived once, in
    // order, and equals the reference.
    for missing in [5, 6, 7, 10, 11, taken, taken + 1] {
        assert!(
            !got.contains(&missing),
            "frame {missing} was consumed: {got:?}"
        );
    }
    assert!(got.windows(2).all(|p| p[0] < p[1]), "{got:?}");
    assert_eq!(got.len(), 25, "{got:?}");
    let words = read_gl_buffer(archive, 32 * WORDS);
    for &n in &got {
        let frame = &words[n as usize * WORDS..(n as usize + 1) * WORDS];
        assert!(
            frame == pattern_words(WORDS, frame_seed(n as usize)).as_slice(),
            "frame {n} differs from the reference"
        );
    }
    drop(stream);
    delete_buffer(archive);
    g.check_no_errors();
}

/// Every one of 40 imports, and every slot of a 64-slot stream, shows GL what CUDA wrote into
/// it. Before cuda-gl checked its imports, the 32nd memory object of the GL context showed
/// zeros whatever CUDA wrote (NVIDIA H200, driver 580.159.04).
#[test]
fn every_slot_shows_gl_what_cuda_wrote() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let fill = g.kernels.function("ext_fill_u32_slow").unwrap();
    let scratch = gl_buffer(BYTES, None);
    let memories: Vec<ExportableMemory> = (0..40)
        .map(|_| ExportableMemory::new(&g.ctx, BYTES).unwrap())
        .collect();
    let imports: Vec<GlMemoryBuffer> = memories
        .iter()
        .map(|m| GlMemoryBuffer::import(&gl, m).unwrap())
        .collect();
    for (i, m) in memories.iter().enumerate() {
        // SAFETY: (1) the memory holds WORDS words and lives until the synchronize below.
        unsafe { fill_words_slow(&g, &fill, m.device_ptr().unwrap(), WORDS, frame_seed(i), 0) }
            .unwrap();
    }
    g.stream.synchronize().unwrap();
    let bad: Vec<usize> = (0..imports.len())
        .filter(|&i| {
            gl_view(imports[i].buffer().0, scratch, WORDS) != pattern_words(WORDS, frame_seed(i))
        })
        .collect();
    drop(imports);
    drop(memories);
    assert!(bad.is_empty(), "imports {bad:?} do not show CUDA's writes");
    for (slots, burst) in [(64, 1), (32, 16)] {
        let mut stream = FrameStream::new(&g.ctx, &gl, BYTES, slots, burst).unwrap();
        let mut bad = Vec::new();
        let mut consume = |f: &FrameRead| {
            let n = f.index() as usize;
            let got = gl_view(f.buffer(), scratch, WORDS);
            if got != pattern_words(WORDS, frame_seed(n)) {
                eprintln!(
                    "{slots} slots: frame {n} (slot {}): {}",
                    f.slot(),
                    what_it_holds(&got, n)
                );
                bad.push(f.slot());
            }
            Ok::<(), Error>(())
        };
        let mut producer = |w: &FrameWrite<'_>| produce(&g, &fill, w, 0);
        for _ in 0..2 * slots / burst {
            stream
                .push_burst(&g.stream, &mut producer, &mut consume)
                .unwrap();
        }
        stream.flush(&mut consume).unwrap();
        drop(stream);
        bad.dedup();
        assert!(
            bad.is_empty(),
            "{slots} slots: slots {bad:?} do not show CUDA's writes"
        );
    }
    delete_buffer(scratch);
    g.ctx.check_drop_errors().unwrap();
}

/// What `glGetBufferSubData` on an imported buffer returns after CUDA rewrote the memory, next
/// to a GPU copy of it: printed, not asserted, since it is the driver's behaviour, not
/// cuda-gl's (cuda-gl's own check reads through a copy).
#[test]
fn direct_reads_of_an_imported_buffer() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let fill = g.kernels.function("ext_fill_u32_slow").unwrap();
    let scratch = gl_buffer(BYTES, None);
    let memory = ExportableMemory::new(&g.ctx, BYTES).unwrap();
    let import = GlMemoryBuffer::import(&gl, &memory).unwrap();
    for seed in [1, 2] {
        let ptr = memory.device_ptr().unwrap();
        // SAFETY: (1) the memory holds WORDS words and lives until the synchronize below.
        unsafe { fill_words_slow(&g, &fill, ptr, WORDS, frame_seed(seed), 0) }.unwrap();
        g.stream.synchronize().unwrap();
        let want = pattern_words(WORDS, frame_seed(seed));
        let direct = read_gl_buffer(import.buffer().0, WORDS) == want;
        let copied = gl_view(import.buffer().0, scratch, WORDS) == want;
        eprintln!(
            "CUDA write {seed}: glGetBufferSubData current: {direct}; GPU copy current: {copied}"
        );
        assert!(
            copied,
            "a GPU copy of the imported buffer missed CUDA's write {seed}"
        );
    }
    drop(import);
    drop(memory);
    delete_buffer(scratch);
    check_gl();
}

/// A consumer that leaves another GL context current: placing its burst's fence fails
/// (`WrongGlContext`), the burst stays marked as unfenced, and the next call with the stream's
/// context current fences it first (the warning says so), before any of its slots is written.
/// Every frame GL got equals the reference.
#[test]
fn a_burst_whose_fence_fails_is_fenced_by_the_next_call() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    harness::capture_log();
    let fill = g.kernels.function("ext_fill_u32_slow").unwrap();
    let other = HeadlessContext::for_cuda_device(&g.device).unwrap();
    g.gl.make_current().unwrap();
    let mut stream = FrameStream::new(&g.ctx, &gl, BYTES, 4, 2).unwrap();
    let archive = gl_buffer(16 * BYTES, None);
    let mut got: Vec<u64> = Vec::new();
    let mut switch_after = Some(3u64);
    let mut consume = |f: &FrameRead| -> Result<(), Error> {
        gl_copy(f.buffer(), archive, f.index() as usize * BYTES, BYTES);
        got.push(f.index());
        if switch_after == Some(f.index()) {
            // The last frame of its burst: the burst's reads are issued, then the context goes.
            switch_after = None;
            other.make_current().unwrap();
        }
        Ok(())
    };
    let mut producer = |w: &FrameWrite<'_>| produce(&g, &fill, w, 0);
    let mut refused = 0;
    for _ in 0..16 {
        if stream.pushed() >= 16 {
            break;
        }
        match stream.push_burst(&g.stream, &mut producer, &mut consume) {
            Ok(()) => {}
            Err(Error::WrongGlContext { .. }) => {
                refused += 1;
                g.gl.make_current().unwrap();
            }
            Err(e) => panic!("frame {}: {e}", stream.pushed()),
        }
    }
    stream.flush(&mut consume).unwrap();
    stream.wait_idle().unwrap();
    assert_eq!(
        refused, 1,
        "placing the fence with another context current must fail once"
    );
    let log = harness::take_log();
    assert!(
        log.iter().any(|l| l.contains("have no fence")),
        "the next call did not fence the burst: {log:?}"
    );
    assert_eq!(got, (0..16).collect::<Vec<u64>>());
    let words = read_gl_buffer(archive, 16 * WORDS);
    for n in 0..16 {
        let frame = &words[n * WORDS..(n + 1) * WORDS];
        assert!(
            frame == pattern_words(WORDS, frame_seed(n)).as_slice(),
            "frame {n} differs from the reference"
        );
    }
    drop(stream);
    delete_buffer(archive);
    drop(other);
    g.check_no_errors();
}

#[test]
fn bad_shapes_and_another_gl_context_are_typed_errors() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    for (slots, burst) in [(4, 0), (2, 3), (65, 1)] {
        let err = FrameStream::new(&g.ctx, &gl, BYTES, slots, burst).unwrap_err();
        assert!(
            matches!(err, Error::Usage(UsageError::BadFrameStreamShape { slots: s, burst: b, .. })
                if (s, b) == (slots, burst)),
            "{err:?}"
        );
    }
    let err = FrameStream::new(&g.ctx, &gl, 0, 2, 1).unwrap_err();
    assert!(
        matches!(err, Error::Usage(UsageError::ZeroSize { .. })),
        "{err:?}"
    );
    let mut stream = FrameStream::new(&g.ctx, &gl, BYTES, 2, 1).unwrap();
    let mut none = |_f: &FrameRead| Ok::<(), Error>(());
    let mut nothing = |_w: &FrameWrite<'_>| Ok::<(), Error>(());
    let other = HeadlessContext::for_cuda_device(&g.device).unwrap();
    let err = stream
        .push_burst(&g.stream, &mut nothing, &mut none)
        .unwrap_err();
    assert!(matches!(err, Error::WrongGlContext { .. }), "{err:?}");
    assert!(matches!(
        stream.wait_idle().unwrap_err(),
        Error::WrongGlContext { .. }
    ));
    assert_eq!(stream.pushed(), 0, "a refused push pushed a frame");
    g.gl.make_current().unwrap();
    drop(other);
    stream
        .push_burst(&g.stream, &mut nothing, &mut none)
        .unwrap();
    stream.flush(&mut none).unwrap();
    assert_eq!(stream.consumed(), 1);
    drop(stream);
    g.ctx.check_drop_errors().unwrap();
}
