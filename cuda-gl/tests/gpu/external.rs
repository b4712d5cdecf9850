//! What the external-memory tests share: loading the entry points, GL's copy of a frame into an
//! archive, the frames' seeds and the producer kernel's launch.

use super::{Gpu, skip};
use cuda_gl::external::ExternalGl;
use cuda_gl::{DevicePtr, Error, Function};

/// The test's GL context (made current) checked for external memory; skips when the context
/// lacks the extensions.
pub fn load_gl(g: &Gpu) -> Option<ExternalGl> {
    g.gl.make_current()
        .expect("make the test's GL context current");
    match ExternalGl::current() {
        Ok(gl) => Some(gl),
        Err(e @ Error::MissingGlExtension { .. }) => skip(e),
        Err(e) => panic!("loading the external-memory entry points: {e}"),
    }
}

/// The test GPU and the external-memory GL entry points of its context; `None` (after saying
/// why) where either is missing.
pub fn gpu_and_gl() -> Option<(Gpu, ExternalGl)> {
    let g = super::gpu()?;
    let gl = load_gl(&g)?;
    Some((g, gl))
}

/// Copies `bytes` bytes from the start of GL buffer `from` to byte `at` of GL buffer `to`, in
/// GL's queue (`glCopyBufferSubData`), then checks for a GL error.
pub fn gl_copy(from: u32, to: u32, at: usize, bytes: usize) {
    gl_kit::buffer::copy(from, to, at, bytes).unwrap();
}

/// GL's view of the first `words` words of imported buffer `buffer`: copied on the GPU into
/// `scratch` (a buffer of GL's own of at least `words` words), which is read back. (Reading an
/// imported buffer itself with `glGetBufferSubData` can return stale bytes on NVIDIA's driver,
/// see `streaming::direct_reads_of_an_imported_buffer`.)
pub fn gl_view(buffer: u32, scratch: u32, words: usize) -> Vec<u32> {
    gl_copy(buffer, scratch, 0, words * 4);
    super::read_gl_buffer(scratch, words)
}

/// The seed of frame `n`: every frame's content differs from every other's in every word.
pub fn frame_seed(n: usize) -> u32 {
    (n as u32).wrapping_mul(0x9E37_79B9) ^ 0x5A5A_0000
}

/// Queues `fill` (`ext_fill_u32_slow`) on the test's stream: it spins `spin_ns`, then writes
/// `words` words of the pattern seeded with `seed` to `out`.
///
/// # Safety
/// 1. `out` holds at least `words` u32 words and stays allocated until the kernel has run.
pub unsafe fn fill_words_slow(
    g: &Gpu,
    fill: &Function,
    out: DevicePtr<'_>,
    words: usize,
    seed: u32,
    spin_ns: u64,
) -> cuda_gl::Result<()> {
    let args = (out, words as u32, seed, spin_ns);
    // SAFETY: (1) is the caller's; the arguments match `ext_fill_u32_slow(unsigned*, unsigned,
    // unsigned, unsigned long long)`, which the launch also checks against the PTX.
    unsafe { super::launch_elements(fill, &g.stream, words, args) }
}
