//! The command line: the run flags, and the `reference` and `compare` subcommands.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// The largest width or height `--size` accepts (GL's usual `GL_MAX_TEXTURE_SIZE`).
pub const MAX_DIMENSION: u32 = 16384;

/// Frames a `--bench` run measures when `--frames` is not given.
pub const DEFAULT_BENCH_FRAMES: u64 = 1000;

/// Frames a `--headless` run renders when `--frames` is not given.
pub const DEFAULT_HEADLESS_FRAMES: u64 = 60;

/// Seconds a run that could not open its default window renders headless instead, when
/// `--frames` is not given.
pub const FALLBACK_SECONDS: f64 = 3.0;

const EXAMPLES: &str = "\
Examples:
  plasma-demo                                   window; CUDA through a display target (interop on
                                                NVIDIA's GL, else staged), the CPU without CUDA;
                                                without a display: 3 s headless and a screenshot
  plasma-demo --path staged                     frames through host memory, as on any GL
  plasma-demo --vsync --path surface            the kernel writes the GL texture in place (surface)
  plasma-demo --path pbo                        through a pixel buffer and glTexSubImage2D instead
  plasma-demo --headless --path stream --burst 8  frames streamed in bursts, latency reported
  plasma-demo --headless --backend cuda --size 1920x1080 --time 1.5 --screenshot frame.png
  plasma-demo --bench --json > bench.json       headless benchmark, per-stage median and p99
  plasma-demo reference --size 320x180 --time 1.5 --out ref.png
  plasma-demo compare frame.png ref.png --tolerance 2

Logging: RUST_LOG=debug (default: warnings and errors).";

/// CUDA -> OpenGL plasma: a CUDA kernel writes every frame, and a `cuda_gl::display::DisplayTarget`
/// puts it on screen through the fastest way that works on this machine (`--path auto`), or
/// straight into an OpenGL pixel buffer (`--path pbo`) or texture (`--path surface`).
#[derive(Debug, Parser)]
#[command(
    name = "plasma-demo",
    version,
    args_conflicts_with_subcommands = true,
    after_help = EXAMPLES,
    long_about = "CUDA -> OpenGL plasma: a CUDA kernel writes every frame, and cuda-gl's \
                  DisplayTarget puts it on screen through the fastest way that works here \
                  (--path auto, the default: interop where the OpenGL context is NVIDIA's, \
                  staged through host memory on any other), or the kernel writes an OpenGL \
                  pixel buffer (--path pbo) or texture (--path surface) in place, with no copy \
                  through the host.\n\nWithout a subcommand it renders: in a window \
                  (default; where no window can be opened, 3 s headless and a screenshot \
                  instead), headless through EGL (--headless), or as a benchmark (--bench). The \
                  `reference` subcommand writes the CPU reference image without any OpenGL, and \
                  `compare` checks two PNGs against each other."
)]
pub struct Cli {
    /// A tool instead of rendering.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// How to render (when no subcommand is given).
    #[command(flatten)]
    pub run: RunArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write the CPU reference image of one frame as a PNG, without OpenGL or CUDA.
    Reference(ReferenceArgs),
    /// Compare two PNGs pixel by pixel; exit 0 when every channel is within the tolerance, 1
    /// when not, 2 on an error (unreadable file, different sizes).
    Compare(CompareArgs),
}

/// Which implementation computes the frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// CUDA when possible; otherwise say why in one line and use the CPU. With the display paths
    /// (`--path auto`, `interop`, `staged`) only a machine without CUDA (no driver, no device)
    /// falls back; with `surface`, `pbo` and `stream` also an OpenGL context that is not
    /// NVIDIA's.
    Auto,
    /// The CUDA kernel; fail with the reason when CUDA (or the path) cannot run here.
    Cuda,
    /// The CPU port of the kernel, uploaded with glBufferSubData into the pixel buffer: the
    /// path without interop, and the reference.
    Cpu,
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Cuda => "cuda",
            BackendChoice::Cpu => "cpu",
        })
    }
}

/// How the CUDA kernel's pixels reach the GL texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ValueEnum)]
pub enum PathChoice {
    /// A `cuda_gl::display::DisplayTarget` in the fastest mode that works here: `interop` where
    /// the OpenGL context is NVIDIA's on the CUDA GPU, otherwise `staged`. Its one-line report
    /// (the mode, why faster ones were refused, the fix) is among the first lines printed.
    Auto,
    /// The display target in interop mode: `plasma_surface` draws the frame through its
    /// surface, the registered texture itself, mapped for the frame (no copy). Fails where the
    /// OpenGL context is not NVIDIA's on the CUDA GPU.
    Interop,
    /// The display target in staged mode: `plasma_surface` draws the frame into a CUDA array,
    /// which is copied into pinned host memory and uploaded by GL, band by band; works with
    /// any OpenGL (Mesa, another GPU's, WSL2).
    Staged,
    /// Map a pixel buffer object, let `plasma_pbo` fill it, unmap, then glTexSubImage2D from it
    /// (a copy on the GPU).
    Pbo,
    /// Map the texture itself and let `plasma_surface` write it through a surface object: no
    /// pixel buffer and no copy.
    Surface,
    /// Stream frames through `cuda_gl::external::FrameStream`: `plasma_pbo` writes each frame
    /// into a slot of CUDA memory that GL imported, in bursts of `--burst` frames, and GL
    /// uploads and draws every frame from its slot; no map or unmap. Sustained throughput for a
    /// few frames of latency.
    Stream,
}

impl fmt::Display for PathChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathChoice::Auto => "auto",
            PathChoice::Interop => "interop",
            PathChoice::Staged => "staged",
            PathChoice::Pbo => "pbo",
            PathChoice::Surface => "surface",
            PathChoice::Stream => "stream",
        })
    }
}

impl PathChoice {
    /// Whether the path puts frames on screen through a `cuda_gl::display::DisplayTarget`
    /// (`auto`, `interop`, `staged`), rather than registering the demo's own GL objects.
    pub fn is_display(self) -> bool {
        matches!(
            self,
            PathChoice::Auto | PathChoice::Interop | PathChoice::Staged
        )
    }
}

/// The flags of a rendering run (no subcommand).
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Which implementation computes the frames: `auto` tries CUDA and falls back to the CPU
    /// with a one-line reason (with the display paths only where there is no CUDA driver or
    /// device), `cuda` fails instead of falling back, `cpu` never uses CUDA.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,

    /// How CUDA's pixels reach the texture. Through cuda-gl's DisplayTarget: `auto` (default:
    /// interop where the OpenGL context is NVIDIA's, staged elsewhere; the report line says
    /// which and why), `interop` (the kernel draws the registered texture through a surface)
    /// or `staged` (through pinned host memory and a GL upload, on any OpenGL). Benchmarked zero-copy paths, on NVIDIA's OpenGL only: `surface` (the kernel
    /// writes the texture in place), `pbo` (pixel buffer + glTexSubImage2D, a copy on the GPU),
    /// or `stream` (frames in bursts through external memory, GL drawing every frame a few
    /// frames behind). The CPU backend always uploads through the pixel buffer.
    #[arg(long, value_enum, default_value_t = PathChoice::Auto)]
    pub path: PathChoice,

    /// Frames per burst of `--path stream` (the stream has twice as many slots): larger bursts
    /// hand over between CUDA and GL less often, for more latency.
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u64).range(1..=32))]
    pub burst: u64,

    /// Frame size WIDTHxHEIGHT, e.g. 1920x1080: the window's initial size (it follows the
    /// window when resized), or the size of the headless frame.
    #[arg(long, value_name = "WxH", default_value = "1280x720")]
    pub size: Size,

    /// Stop after N frames (and take the screenshot of the last one). Default: run until the
    /// window closes; 60 headless; 1000 measured frames with --bench.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub frames: Option<u64>,

    /// Animate at this fixed time in seconds instead of the wall clock since start, e.g. for
    /// screenshots that must match the reference.
    #[arg(long, value_name = "SECONDS", value_parser = parse_time)]
    pub time: Option<f32>,

    /// Wait for the display's vertical sync when swapping (default off: as many frames as the
    /// GPU can render). Only with a window.
    #[arg(long, conflicts_with = "headless")]
    pub vsync: bool,

    /// CUDA device ordinal for --headless and --bench: the EGL context is opened on this GPU.
    /// With a window, the GPU that runs the window's OpenGL context is used; with a display
    /// path, this one where that OpenGL runs on no CUDA GPU.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub device: usize,

    /// Save the last frame as a PNG (top row first, as on screen), read back from the texture.
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,

    /// No window: a headless OpenGL context through EGL on the CUDA device (--device); with
    /// `--backend cpu` (or when `auto` falls back), or a display path other than `interop`
    /// where EGL has no OpenGL on that device, any OpenGL that EGL offers, e.g. Mesa.
    #[arg(long, conflicts_with = "windowed")]
    pub headless: bool,

    /// Benchmark: render --frames frames (default 1000) after --warmup frames and print each
    /// stage's median and p99 (map, kernel, unmap, upload, draw, total), measured with CUDA
    /// events and GL timer queries on the GPU and the wall clock on the CPU. Runs headless
    /// unless --windowed is given.
    #[arg(long)]
    pub bench: bool,

    /// With --bench: run the benchmark in a window instead of headless.
    #[arg(long, requires = "bench")]
    pub windowed: bool,

    /// With --bench: print the results as one JSON object on stdout instead of a table.
    #[arg(long, requires = "bench")]
    pub json: bool,

    /// With --bench: frames rendered before measuring starts.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "bench")]
    pub warmup: u64,

    /// Exit with status 3 and one line naming the stuck stage when one stage of a frame (map,
    /// kernel, draw, present, ...) takes longer than this many seconds, as on a GPU that a
    /// kernel fault left unable to switch graphics contexts (Xid 109 in `dmesg`), instead of
    /// hanging. 0 turns it off. Default: $CUDA_GL_WATCHDOG_SECS, else 10.
    #[arg(long, value_name = "SECONDS")]
    pub watchdog_secs: Option<u64>,

    /// Test hook of the watchdog: the first frame launches a CUDA kernel that keeps the GPU busy
    /// for this many milliseconds (spinning, writing nothing), so a run stalls without harming
    /// the GPU.
    #[arg(long, value_name = "MS", hide = true)]
    pub debug_spin_ms: Option<u64>,
}

/// Where a run renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    /// A GLFW window with an OpenGL 3.3 core context.
    Window,
    /// A headless EGL context and an offscreen framebuffer.
    Headless,
}

/// How a run opens its display: [`RunArgs::plan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Headless, as asked: `--headless`, or `--bench` without `--windowed`.
    Headless,
    /// A window. With `fallback`, a window that cannot be opened (GLFW fails) means a headless
    /// run instead, because the window was only the default; without, it is an error, because
    /// the flags asked for a window (`--windowed`, `--vsync`).
    Window {
        /// Run headless when the window cannot be opened.
        fallback: bool,
    },
    /// Headless instead of the default window, because the environment names no display (no
    /// `DISPLAY`, no `WAYLAND_DISPLAY`): a headless GPU server.
    NoDisplay,
}

/// Whether the environment names a display server: a non-empty `DISPLAY` (X11) or
/// `WAYLAND_DISPLAY`. `var` reads a variable (`std::env::var_os` in the program).
pub fn display_named(var: impl Fn(&str) -> Option<OsString>) -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .into_iter()
        .any(|name| var(name).is_some_and(|value| !value.is_empty()))
}

impl RunArgs {
    /// Whether the flags ask for a window (`--windowed`, `--vsync`), so that a run without one
    /// is an error rather than a headless fallback.
    pub fn window_required(&self) -> bool {
        self.windowed || self.vsync
    }

    /// How this run opens its display, given whether the environment names one
    /// ([`display_named`]): headless when asked; otherwise a window, except that with no display
    /// and no flag asking for a window it runs headless at once ([`Plan::NoDisplay`]).
    pub fn plan(&self, display_named: bool) -> Plan {
        match self.display() {
            Display::Headless => Plan::Headless,
            Display::Window if self.window_required() || display_named => Plan::Window {
                fallback: !self.window_required(),
            },
            Display::Window => Plan::NoDisplay,
        }
    }

    /// Where this run renders: headless with --headless, and for --bench unless --windowed.
    pub fn display(&self) -> Display {
        if self.headless || (self.bench && !self.windowed) {
            Display::Headless
        } else {
            Display::Window
        }
    }

    /// `--debug-spin-ms` as a duration.
    pub fn debug_spin(&self) -> Option<std::time::Duration> {
        self.debug_spin_ms.map(std::time::Duration::from_millis)
    }

    /// How many frames to render (`None`: until the window closes).
    pub fn frame_limit(&self) -> Option<u64> {
        match (self.frames, self.bench, self.display()) {
            (Some(n), _, _) => Some(n),
            (None, true, _) => Some(DEFAULT_BENCH_FRAMES),
            (None, false, Display::Headless) => Some(DEFAULT_HEADLESS_FRAMES),
            (None, false, Display::Window) => None,
        }
    }
}

/// The flags of `plasma-demo reference`.
#[derive(Debug, Clone, Args)]
pub struct ReferenceArgs {
    /// Frame size WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH", default_value = "1280x720")]
    pub size: Size,
    /// Animation time in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0, value_parser = parse_time)]
    pub time: f32,
    /// Where to write the PNG (top row first, as the demo's --screenshot).
    #[arg(long, value_name = "PNG")]
    pub out: PathBuf,
}

/// The flags of `plasma-demo compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The first PNG.
    pub a: PathBuf,
    /// The second PNG.
    pub b: PathBuf,
    /// The largest difference allowed in any channel (0: identical).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub tolerance: u8,
}

/// A frame size in pixels, written `WIDTHxHEIGHT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Size {
    /// Width in pixels, 1..=[`MAX_DIMENSION`].
    pub width: u32,
    /// Height in pixels, 1..=[`MAX_DIMENSION`].
    pub height: u32,
}

impl Size {
    /// A size; `None` when either side is 0 or above [`MAX_DIMENSION`].
    pub fn new(width: u32, height: u32) -> Option<Size> {
        let ok = |d: u32| (1..=MAX_DIMENSION).contains(&d);
        (ok(width) && ok(height)).then_some(Size { width, height })
    }

    /// Width times height.
    pub fn pixels(self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Bytes of an RGBA8 frame of this size.
    pub fn rgba_bytes(self) -> usize {
        self.pixels() * 4
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

impl FromStr for Size {
    type Err = String;

    fn from_str(s: &str) -> Result<Size, String> {
        let text = s.trim();
        let Some((w, h)) = text.split_once(['x', 'X']) else {
            return Err(format!(
                "`{text}` is not WIDTHxHEIGHT: write the size as e.g. 1280x720"
            ));
        };
        let side = |name: &str, v: &str| -> Result<u32, String> {
            let v = v.trim();
            let n: u32 = v.parse().map_err(|_| {
                format!("the {name} `{v}` is not a whole number of pixels (e.g. 1280x720)")
            })?;
            if !(1..=MAX_DIMENSION).contains(&n) {
                return Err(format!(
                    "the {name} {n} is out of range: it must be 1..={MAX_DIMENSION}"
                ));
            }
            Ok(n)
        };
        Ok(Size {
            width: side("width", w)?,
            height: side("height", h)?,
        })
    }
}

/// Parses `--time`: a finite number of seconds.
fn parse_time(s: &str) -> Result<f32, String> {
    let t: f32 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds (e.g. 1.5)"))?;
    if t.is_finite() {
        Ok(t)
    } else {
        Err(format!(
            "the time must be a finite number of seconds, not {s}"
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
