//! The wgpu present group's sustained rows (feature `wgpu`): `SharedTexture` hand-offs frame
//! after frame, as µs per frame, against the handoff floor measured the same way, in their own
//! interleaved rounds at each size.
//!
//! One sample is a round of [`ROUND`] frames, ending with the CPU's wait for the last use,
//! divided by [`ROUND`] (as the frames-in-flight group does). The rows, each frame at time `t`
//! drawn by the plasma kernel and used by the group's one-texel wgpu use:
//!
//! - **floor**: the handoff floor's frame (kernel into device memory, `cuStreamSynchronize`,
//!   the use of an untouched texture, wait), [`ROUND`] times;
//! - **1 texture**: the `SharedTexture` raw hand-off's frame (`write`, kernel through the
//!   surface, `finish`, use, wait), [`ROUND`] times: the same work as its row, in rounds;
//! - **frames in flight, 2 and 3 textures**, used round-robin: frame n is written into texture
//!   n % k while wgpu uses frame n - 1 (its use is submitted between frame n's kernel and its
//!   `finish`, so it is queued on wgpu's queue before the acquire that waits for frame n's
//!   kernel, and runs beside it), and texture (n - 1) % k is then released to CUDA ahead
//!   (`SharedTexture::release_ahead`, before that acquire), as the docs tell an application
//!   to. Before writing frame n the CPU waits for wgpu's use of frame n - k, the last use of
//!   that texture, as an application bounds its frames in flight; no other CPU wait.
//! - **frames in flight, 2 textures, released at the write**: the same with no release ahead,
//!   so each `write` submits its texture's release behind the hand-back of the frame before
//!   (which waits for that frame's kernel): what the release ahead saves.
//! - **K = 4 frames per hand-off**: `write`, four kernel launches (four frames), `finish`, the
//!   use, wait: the hand-off's cost spread over four frames.

use super::{FRAME_DT, Rig, Wgpu};
use crate::gpu::Gpu;
use crate::measure::{Case, Plan, Variant, interleaved_rows, per_frame_rounds};
use crate::roles::tagged;
use crate::watchdog;
use crate::wgpu_present::Role;
use crate::wgpu_present::handoffs::ROUND;
use anyhow::{Context as _, Result};
use cuda_gl::wgpu_interop::SharedTexture;

/// Frames (kernel launches) per hand-off in the K row (it divides [`ROUND`]).
const PER_HANDOFF: usize = 4;

/// The sustained rows' state: the group's rig (the floor's buffer and texture, the sink, the
/// animation time) and the ring of shared textures.
struct Rounds<'r> {
    rig: &'r mut Rig,
    ring: Vec<SharedTexture>,
    /// A clone of each ring texture, for the uses (only of a texture no write holds).
    textures: Vec<wgpu::Texture>,
}

impl Rounds<'_> {
    /// A round of the floor's frames.
    fn floor(&mut self, gpu: &Gpu, w: &Wgpu, size: (u32, u32)) -> Result<()> {
        let rig = &mut *self.rig;
        for _ in 0..ROUND {
            rig.frames.t += FRAME_DT;
            gpu.plasma_synced(&rig.frames.device, size, rig.frames.t)?;
            w.use_texel(&rig.frames.untouched, &rig.frames.sink)?;
        }
        Ok(())
    }

    /// A round of hand-offs of ring texture 0, `frames` kernels each, each used and waited for.
    fn one_texture(&mut self, gpu: &Gpu, w: &Wgpu, size: (u32, u32), frames: usize) -> Result<()> {
        let rig = &mut *self.rig;
        let (shared, texture) = (
            self.ring.first_mut().context("the ring is empty")?,
            self.textures.first().context("the ring is empty")?,
        );
        for _ in 0..ROUND / frames {
            // SAFETY: (1) of `write`: nothing is submitted until `finish`, and the clone of the
            // texture is used only after it.
            let write = unsafe { shared.write(&gpu.stream) }?;
            for _ in 0..frames {
                rig.frames.t += FRAME_DT;
                gpu.plasma_into_surface(write.surface(), size, rig.frames.t)?;
            }
            write.finish()?;
            w.use_texel(texture, &rig.frames.sink)?;
        }
        Ok(())
    }

    /// A round through the first `k` (2 or more) ring textures, frame n into texture n % k
    /// while wgpu uses frame n - 1; each texture released ahead after its use when `ahead`.
    fn ring(&mut self, gpu: &Gpu, w: &Wgpu, size: (u32, u32), k: usize, ahead: bool) -> Result<()> {
        let rig = &mut *self.rig;
        let (ring, textures) = (
            self.ring.get_mut(..k).context("the ring is too short")?,
            self.textures.get(..k).context("the ring is too short")?,
        );
        // `uses[j]`: the submit of frame j's use.
        let mut uses = Vec::with_capacity(ROUND);
        for n in 0..ROUND {
            if let Some(last_use) = n.checked_sub(k).and_then(|j| uses.get(j)) {
                w.wait(Clone::clone(last_use))?;
            }
            rig.frames.t += FRAME_DT;
            let (now, before) = (n % k, (n + k - 1) % k);
            let [current, previous] = ring
                .get_disjoint_mut([now, before])
                .map_err(|e| anyhow::anyhow!("ring textures {now} and {before}: {e}"))?;
            // SAFETY: (1) of `write`: until `finish`, the only submit is the use of frame
            // n - 1, in texture (n - 1) % k, another texture (k >= 2); the clone of this one
            // is used only by its own frame's use, submitted after its `finish`.
            let write = unsafe { current.write(&gpu.stream) }?;
            gpu.plasma_into_surface(write.surface(), size, rig.frames.t)?;
            if n > 0 {
                uses.push(w.submit_texels(&[(&textures[(n - 1) % k], &rig.frames.sink)]));
                if ahead {
                    // SAFETY: (1) of `release_ahead`: texture (n - 1) % k is used next by
                    // frame n - 1 + k's use, submitted after that frame's `finish`.
                    unsafe { previous.release_ahead() }?;
                }
            }
            write.finish()?;
        }
        let last = w.submit_texels(&[(&textures[(ROUND - 1) % k], &rig.frames.sink)]);
        // wgpu's submits run in order: the last use's end is every frame's.
        w.wait(last)
    }
}

/// The sustained rows at `size`, in their own interleaved rounds, as µs per frame; `rig` is the
/// group's rig of that size.
pub(super) fn rows(
    gpu: &Gpu,
    w: &Wgpu,
    plan: &Plan,
    size: (u32, u32),
    rig: &mut Rig,
) -> Result<Vec<Case>> {
    let (width, height) = size;
    let group = format!(
        "wgpu present {width}x{height}: sustained hand-offs (µs per frame = round of {ROUND} \
         frames incl. the last wait / {ROUND}; median over rounds)"
    );
    // Making the ring is set-up: the watchdog measures it from here.
    watchdog::enter(watchdog::Stage::Setup);
    let ring = (0..3)
        .map(|_| w.shared_texture(gpu, size))
        .collect::<Result<Vec<_>>>()?;
    let textures = ring.iter().map(|s| s.texture().clone()).collect();
    let mut state = Rounds {
        rig,
        ring,
        textures,
    };
    w.check(&format!("making the {width}x{height} ring"))?;
    let rounds = plan.rounds(ROUND);
    let name = |what: &str| format!("{what} {width}x{height}, µs per frame");
    let rows: Vec<(Role, Variant<'_, Rounds<'_>>)> = vec![
        (
            Role::RoundFloor,
            Variant::new(
                name("handoff floor (wgpu) in rounds: kernel + sync + wgpu use"),
                |s: &mut Rounds<'_>| s.floor(gpu, w, size),
            ),
        ),
        (
            Role::RoundShared,
            Variant::new(
                name("SharedTexture, 1 texture, in rounds: write + kernel + finish + wgpu use"),
                |s: &mut Rounds<'_>| s.one_texture(gpu, w, size, 1),
            ),
        ),
        (
            Role::Ring2,
            Variant::new(
                name(
                    "SharedTexture frames in flight, 2 textures: frame n written while wgpu uses n-1",
                ),
                |s: &mut Rounds<'_>| s.ring(gpu, w, size, 2, true),
            ),
        ),
        (
            Role::Ring2AtWrite,
            Variant::new(
                name(
                    "SharedTexture frames in flight, 2 textures, each released at its write (no release ahead)",
                ),
                |s: &mut Rounds<'_>| s.ring(gpu, w, size, 2, false),
            ),
        ),
        (
            Role::Ring3,
            Variant::new(
                name(
                    "SharedTexture frames in flight, 3 textures: frame n written while wgpu uses n-1",
                ),
                |s: &mut Rounds<'_>| s.ring(gpu, w, size, 3, true),
            ),
        ),
        (
            Role::PerHandoff4,
            Variant::new(
                name("SharedTexture, 4 frames per hand-off: write + 4 kernels + finish + wgpu use"),
                |s: &mut Rounds<'_>| s.one_texture(gpu, w, size, PER_HANDOFF),
            ),
        ),
    ];
    let measured = interleaved_rows(&rounds, &group, &mut state, rows)?;
    gpu.stream.synchronize()?;
    w.check(&group)?;
    drop(state);
    let mut cases = tagged(measured, size);
    per_frame_rounds(&mut cases, ROUND);
    Ok(cases)
}
