//! The vocabulary of the modes that the display target, the wgpu target and the video planes
//! share: [`Mode`] names them, [`Report`] says which was chosen and why, and [`first_mode`]
//! chooses. A module of its own below all three, which each import (re-exported at
//! `cuda_gl::display`).

mod report;

pub use report::Report;
pub(crate) use report::first_mode;
#[cfg(all(test, feature = "wgpu"))]
pub(crate) use report::refused_in_every_mode;

/// How a [`DisplayTarget`](crate::display::DisplayTarget)'s frames reach its texture (and, for
/// the modes they have, a wgpu target's or video planes').
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// The texture is registered with CUDA and written on the GPU: GL on NVIDIA's GPU that
    /// runs CUDA.
    Interop,
    /// Frames go through pinned host memory and a GL upload: any GL.
    Staged,
    /// Frames are copied into slots of CUDA memory imported into GL and from there into the
    /// texture, ordered by events and fences instead of a map per frame. A display target's
    /// (a [`FrameStream`](crate::external::FrameStream)) trades a few frames of latency for
    /// throughput; video planes' waits on the CPU for each upload's copies, with no latency.
    /// GL on the CUDA GPU with `GL_EXT_memory_object_fd`. Never chosen by `auto`.
    Stream,
}

impl Mode {
    /// The modes `auto` tries, fastest first.
    pub const AUTO_ORDER: [Mode; 2] = [Mode::Interop, Mode::Staged];

    /// The mode's name, as the report spells it (and as `Display` writes it): `"interop"`,
    /// `"staged"` or `"stream"`.
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
