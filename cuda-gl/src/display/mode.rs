//! The modes, and the one place that dispatches on them: [`Mode`] names them, [`ByMode`] holds
//! one mode's state or frame, and `dispatch!` is the one `match` that calls into either.
//! Adding a mode: its file (implementing [`Present`]), a variant of `Mode` and `ByMode`, its
//! [`Variant`], and an arm in each of the three `match`es here.

use super::interop::{Interop, InteropFrame};
use super::present::{Present, PresentFrame};
use super::staged::{Staged, StagedFrame};
use super::stream::{StreamFrame, Streamed};
use super::texture::Texture;
use crate::context::Context;
use crate::error::Result;
use crate::graphics::Surface;
use crate::memory::DevicePtr;
use crate::stream::AsStream;
use std::sync::Arc;

/// How a [`DisplayTarget`](super::DisplayTarget)'s frames reach its texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// The texture is registered with CUDA and written on the GPU: GL on NVIDIA's GPU that
    /// runs CUDA.
    Interop,
    /// Frames go through pinned host memory and a GL upload: any GL.
    Staged,
    /// Frames are copied into a few slots of CUDA memory imported into GL (a
    /// [`FrameStream`](crate::external::FrameStream)) and from there into the texture, ordered
    /// by events and fences instead of a map per frame: throughput at a few frames of latency.
    /// GL on the CUDA GPU with `GL_EXT_memory_object_fd`. Never chosen by `auto`.
    Stream,
}

impl Mode {
    /// The modes `auto` tries, fastest first.
    pub const AUTO_ORDER: [Mode; 2] = [Mode::Interop, Mode::Staged];

    /// The mode's name, as the report spells it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Interop => "interop",
            Mode::Staged => "staged",
            Mode::Stream => "stream",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One value per mode: a mode's state ([`Backend`]) or a frame of it ([`ModeFrame`]).
#[derive(Debug)]
pub(super) enum ByMode<I, St, Sr> {
    Interop(I),
    Staged(St),
    Stream(Sr),
}

/// Runs `$body` with `$m` bound to the mode's value of a [`ByMode`]: the one `match` that
/// calls into the modes.
macro_rules! dispatch {
    ($value:expr, $m:ident => $body:expr) => {
        match $value {
            ByMode::Interop($m) => $body,
            ByMode::Staged($m) => $body,
            ByMode::Stream($m) => $body,
        }
    };
}

/// What the dispatch knows of a mode's type: its [`Mode`], and its frames' variant.
trait Variant: Present {
    const MODE: Mode;

    fn wrap<'t, S: AsStream + 't>(frame: Self::Frame<'t, S>) -> ModeFrame<'t, S>
    where
        Self: 't;
}

impl Variant for Interop {
    const MODE: Mode = Mode::Interop;

    fn wrap<'t, S: AsStream + 't>(frame: Self::Frame<'t, S>) -> ModeFrame<'t, S> {
        ByMode::Interop(frame)
    }
}

impl Variant for Staged {
    const MODE: Mode = Mode::Staged;

    fn wrap<'t, S: AsStream + 't>(frame: Self::Frame<'t, S>) -> ModeFrame<'t, S> {
        ByMode::Staged(frame)
    }
}

impl Variant for Streamed {
    const MODE: Mode = Mode::Stream;

    fn wrap<'t, S: AsStream + 't>(frame: Self::Frame<'t, S>) -> ModeFrame<'t, S> {
        ByMode::Stream(frame)
    }
}

/// `P`'s mode.
fn mode_of<P: Variant>(_: &P) -> Mode {
    P::MODE
}

/// A frame of `state`, a `P`'s, as the dispatch holds it.
fn begin<'t, P: Variant, S: AsStream>(
    state: &'t mut P,
    texture: &'t Texture,
    stream: &'t S,
) -> Result<ModeFrame<'t, S>> {
    Ok(P::wrap(state.begin(texture, stream)?))
}

/// The state of a target's mode.
pub(super) type Backend = ByMode<Interop, Staged, Streamed>;

/// A frame of a target's mode, begun on a stream of type `S`.
pub(super) type ModeFrame<'t, S> =
    ByMode<InteropFrame<'t, S>, StagedFrame<'t, S>, StreamFrame<'t, S>>;

impl Backend {
    /// The state of `mode` for `texture`, in CUDA context `ctx`.
    ///
    /// # Errors
    /// As the mode's [`Present::new`].
    pub(super) fn new(mode: Mode, ctx: &Arc<Context>, texture: &Texture) -> Result<Backend> {
        Ok(match mode {
            Mode::Interop => ByMode::Interop(Interop::new(ctx, texture)?),
            Mode::Staged => ByMode::Staged(Staged::new(ctx, texture)?),
            Mode::Stream => ByMode::Stream(Streamed::new(ctx, texture)?),
        })
    }

    /// The mode.
    pub(super) fn mode(&self) -> Mode {
        dispatch!(self, m => mode_of(m))
    }

    /// As [`Present::begin`].
    pub(super) fn begin<'t, S: AsStream>(
        &'t mut self,
        texture: &'t Texture,
        stream: &'t S,
    ) -> Result<ModeFrame<'t, S>> {
        dispatch!(self, m => begin(m, texture, stream))
    }

    /// As [`Present::flush`].
    pub(super) fn flush(&mut self, texture: &Texture) -> Result<()> {
        dispatch!(self, m => m.flush(texture))
    }

    /// As [`Present::release`].
    pub(super) fn release(&mut self) -> Result<()> {
        dispatch!(self, m => m.release())
    }
}

impl<S: AsStream> ModeFrame<'_, S> {
    /// As [`PresentFrame::surface`].
    pub(super) fn surface(&self) -> Result<Surface<'_>> {
        dispatch!(self, f => f.surface())
    }

    /// As [`PresentFrame::pixels`].
    pub(super) fn pixels(&self) -> Result<DevicePtr<'_>> {
        dispatch!(self, f => f.pixels())
    }

    /// As [`PresentFrame::present`].
    pub(super) fn present(self) -> Result<()> {
        dispatch!(self, f => f.present())
    }
}
