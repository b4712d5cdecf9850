//! Ordering of CUDA work as the host sees it: events, pinned read-back after an asynchronous
//! copy, and plain copies after kernels on a non-blocking stream.

use super::*;

#[test]
fn event_query_reports_pending_and_finished_work() {
    let Some(g) = gpu() else { return };
    let event = cuda_gl::Event::new(&g.ctx, false).unwrap();
    assert!(
        event.query().unwrap(),
        "an event never recorded counts as finished"
    );
    const N: usize = 1024;
    let out = cuda_gl::DeviceBuffer::<u32>::zeroed(&g.ctx, N).unwrap();
    let slow = g.kernels.function("ext_fill_u32_slow").unwrap();
    // SAFETY: `out` holds N words and outlives the stream synchronize below.
    unsafe {
        slow.launch(
            LaunchConfig::for_elements(N as u32),
            &g.stream,
            (out.device_ptr(), N as u32, 7u32, 50_000_000u64),
        )
    }
    .unwrap();
    event.record(&g.stream).unwrap();
    assert!(
        !event.query().unwrap(),
        "the event follows a 50 ms kernel, so it cannot have finished yet"
    );
    event.synchronize().unwrap();
    assert!(event.query().unwrap());
    assert_eq!(out.to_vec().unwrap(), pattern_words(N, 7));
}

/// Queues `ext_fill_u32_slow` on the test stream: `out` = pattern(seed) after `spin_ms` of
/// spinning, in one wave of 1024 blocks (grid-stride over `out`).
fn slow_fill(g: &Gpu, out: &DeviceBuffer<u32>, seed: u32, spin_ms: u64) {
    let slow = g.kernels.function("ext_fill_u32_slow").unwrap();
    let config = LaunchConfig {
        grid: (1024, 1, 1),
        ..LaunchConfig::for_elements(256)
    };
    // SAFETY: `out` holds `len` words and outlives the test's synchronization of the stream
    // (every caller reads it back with a call that waits for the stream or the context).
    unsafe {
        slow.launch(
            config,
            &g.stream,
            (
                out.device_ptr(),
                out.len() as u32,
                seed,
                spin_ms * 1_000_000,
            ),
        )
    }
    .unwrap();
}

/// How many of `words` (sampled every `step`) differ from pattern(seed).
fn stale_words(words: &[u32], seed: u32, step: usize) -> usize {
    (0..words.len())
        .step_by(step)
        .filter(|&i| words[i] != pattern(i as u32, seed))
        .count()
}

/// A pinned read right after an asynchronous copy sees the copied data: `as_slice` waits for
/// the copy's event. Without that wait (the raw read below shows it) the read sees the zeroes
/// the buffer held before, as seen on an H200. Dropping a buffer under a copy waits too, and
/// records no error.
#[test]
fn pinned_read_right_after_an_async_copy_sees_the_copied_data() {
    let Some(g) = gpu() else { return };
    const WORDS: usize = 64 << 20; // 256 MiB
    let device = DeviceBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    let mut pinned = PinnedBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    slow_fill(&g, &device, 0x5EED, 50);
    pinned.copy_from_device_async(&device, &g.stream).unwrap();
    let raw = pinned.as_ptr();
    // SAFETY: `raw` points to WORDS live words. The DMA may be writing them: volatile reads,
    // as of memory-mapped I/O, return some value of each word (any bits are a valid u32). This
    // shows the hazard `as_slice` closes; only the count is printed, nothing is asserted on it.
    let raw_stale = (0..WORDS)
        .step_by(4099)
        .filter(|&i| unsafe { raw.add(i).read_volatile() } != pattern(i as u32, 0x5EED))
        .count();
    eprintln!(
        "raw read before the wait: {raw_stale} of {} sampled words stale",
        WORDS.div_ceil(4099)
    );
    let words = pinned.as_slice().unwrap();
    assert_eq!(stale_words(words, 0x5EED, 1), 0, "as_slice saw stale words");
    // A copy on another stream is ordered after the first (both write the buffer).
    let other = Stream::new(&g.ctx, StreamFlags::NonBlocking).unwrap();
    slow_fill(&g, &device, 0xF00D, 50);
    pinned.copy_from_device_async(&device, &g.stream).unwrap();
    let mut second = DeviceBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    second.memset_async(0x11, &other).unwrap();
    pinned.copy_from_device_async(&second, &other).unwrap();
    let words = pinned.as_mut_slice().unwrap();
    assert!(words.iter().step_by(4099).all(|&w| w == 0x1111_1111));
    // Dropped under a copy: the drop waits, then frees.
    slow_fill(&g, &device, 0xBEEF, 50);
    pinned.copy_from_device_async(&device, &g.stream).unwrap();
    drop(pinned);
    g.ctx.check_drop_errors().unwrap();
}

/// The plain copies are ordered after kernels on a `NonBlocking` stream: `to_vec` waits for the
/// context, `copy_from_slice` waits before and after. Without those waits they run on the legacy
/// default stream while the kernels still spin, and read (or are overwritten by) the kernels'
/// old data. The stream-taking forms are ordered on their stream.
#[test]
fn plain_copies_are_ordered_after_kernels_on_a_non_blocking_stream() {
    let Some(g) = gpu() else { return };
    const WORDS: usize = 1 << 20;
    let mut buf = DeviceBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    for seed in 1..=8 {
        slow_fill(&g, &buf, seed, 10);
    }
    let words = buf.to_vec().unwrap();
    assert_eq!(
        stale_words(&words, 8, 1),
        0,
        "to_vec read before the kernels ended"
    );
    // The kernel would overwrite the copy if the copy did not wait for it.
    slow_fill(&g, &buf, 9, 50);
    let data = pattern_words(WORDS, 10);
    buf.copy_from_slice(&data).unwrap();
    assert_eq!(stale_words(&buf.to_vec().unwrap(), 10, 1), 0);
    // Stream-ordered forms.
    slow_fill(&g, &buf, 11, 50);
    assert_eq!(stale_words(&buf.to_vec_on(&g.stream).unwrap(), 11, 1), 0);
    slow_fill(&g, &buf, 12, 50);
    buf.copy_from_slice_on(&pattern_words(WORDS, 13), &g.stream)
        .unwrap();
    assert_eq!(stale_words(&buf.to_vec_on(&g.stream).unwrap(), 13, 1), 0);
    let zeroes = DeviceBuffer::<u32>::zeroed_on(&g.ctx, WORDS, &g.stream).unwrap();
    assert!(zeroes.to_vec_on(&g.stream).unwrap().iter().all(|&w| w == 0));
    let copy = DeviceBuffer::from_slice(&g.ctx, &data).unwrap();
    assert_eq!(copy.to_vec().unwrap(), data);
}
