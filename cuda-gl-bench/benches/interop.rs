//! The interop benchmark: what mapping GL objects into CUDA costs, through plain driver calls and
//! through the safe API, and what whole frames cost by path, against the floor of handing work
//! from CUDA to GL without interop at all.
//!
//! Needs an NVIDIA GPU with the NVIDIA EGL driver (headless is fine). Run with
//!
//! ```text
//! cargo bench -p cuda-gl-bench --bench interop -- [--quick | --iters N] [--out DIR]
//!     [--device N | --all-devices] [--warmup N] [--cpu-iters N] [--watchdog-secs N]
//!     [--registration-only] [--frames-in-flight-only] [--streaming-only] [--present-only]
//!     [--ordering-only] [--wgpu-present-only] [--video-only]
//! ```
//!
//! gl-kit's watchdog ends the run with status 3 and one line naming the stuck step when one
//! iteration (or the set-up) takes longer than `--watchdog-secs` (default `CUDA_GL_WATCHDOG_SECS`,
//! else 10; 0 turns it off), as on a GPU that a kernel fault left unable to switch graphics
//! contexts. `--debug-spin-ms N`, its test hook, first keeps the GPU busy for N ms.
//!
//! It writes `benchmarks.md` (also printed), `benchmarks.json` and `benchmarks.svg` into `--out`
//! (default `target/bench`, relative to the working directory). See `cases.rs` for what each
//! case measures.

#[path = "interop/cases.rs"]
mod cases;
#[path = "interop/external.rs"]
mod external;
#[path = "interop/fast.rs"]
mod fast;
#[path = "interop/glres.rs"]
mod glres;
#[path = "interop/gpu.rs"]
mod gpu;
#[path = "interop/latency.rs"]
mod latency;
#[path = "interop/measure.rs"]
mod measure;
#[path = "interop/ordering.rs"]
mod ordering;
#[path = "interop/present.rs"]
mod present;
#[path = "interop/registration.rs"]
mod registration;
#[path = "interop/report.rs"]
mod report;
#[path = "interop/roles.rs"]
mod roles;
#[path = "interop/streaming.rs"]
mod streaming;
#[path = "interop/texel.rs"]
mod texel;
#[path = "interop/video.rs"]
mod video;
#[path = "interop/wgpu_present.rs"]
mod wgpu_present;

// The demo's kernel, read as files rather than through the demo's crate: its PTX below, and its
// CPU twin (the CPU frame path renders with it). The bench uses only part of the twin, and its
// unit tests (`cfg(test)` in clippy's check of this target) run with the demo's.
#[allow(dead_code, unused_imports)]
#[path = "../../plasma-demo/src/plasma_cpu.rs"]
mod plasma_cpu;

use gl_kit::{gpu_health, watchdog};

use anyhow::{Context as _, Result};
use measure::Plan;
use report::{DeviceReport, Meta, Report};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `plasma_pbo` and `plasma_surface`, as committed by `cargo xtask ptx`.
const PLASMA_PTX: &str = include_str!("../../plasma-demo/kernels/plasma.ptx");

const USAGE: &str = "\
usage: interop [--iters N | --quick] [--warmup N] [--cpu-iters N] [--out DIR]
               [--device N | --all-devices]
               [--registration-only] [--frames-in-flight-only] [--ordering-only]
               [--streaming-only] [--present-only] [--wgpu-present-only] [--video-only]
  --iters N      measured iterations per case (default 1000)
  --quick        200 measured iterations per case
  --warmup N     warm-up iterations per case (default 100)
  --cpu-iters N  measured iterations of the CPU frame path (default: as --iters)
  --out DIR      output directory (default target/bench)
  --device N     the CUDA device to run on (default 0); the GL context is on the same GPU
  --all-devices  run on every CUDA device, one set of rows per device
  --registration-only
                 run only the registration group (register + unregister of a 1080p PBO and of
                 a 1080p RGBA8 texture, safe API vs raw driver calls, --iters / 5 rounds: 200
                 by default) and group 1-2, whose safe/raw ratio it reports as map + unmap
  --frames-in-flight-only
                 run only the frames-in-flight group (external-memory ring vs map/unmap ring)
  --streaming-only
                 run only the streaming group (FrameStream vs the pipelined floor)
  --present-only
                 run only the present group (cuda_gl::display::DisplayTarget per frame at
                 1920x1080 and 3840x2160: interop vs the handoff floor, staged vs its raw DtoH
                 and GL upload); alone, it also runs on an OpenGL that is not NVIDIA's (Mesa),
                 where interop is refused and only the staged rows are measured
  --ordering-only
                 run the ordering-mechanisms group (Vulkan semaphores, stream memory operations,
                 two threads, each against the pipelined floor); not in the default run, and
                 last but for the wgpu present group: on driver 580 its Vulkan work left the
                 process's EGL display uninitialised, so no GL group can follow it
  --wgpu-present-only
                 run only the wgpu present group (cuda_gl::wgpu_interop::WgpuTarget per frame
                 at 1920x1080 and 3840x2160, each row ending with the same 1-texel wgpu copy +
                 wait: interop vs the wgpu handoff floor, the SharedTexture raw hand-off vs the
                 same hand-off made of plain ash and driver calls, gyroflow's way (CUDA writes
                 a LINEAR image's memory, CPU sync) for reading, the sustained rows (frames in
                 flight with 2 and 3 shared textures, 4 frames per hand-off) vs the floor in
                 rounds, staged vs its raw DtoH and write_texture); needs the feature `wgpu`
                 (in the default run when built with it) and NVIDIA's Vulkan driver (headless:
                 VK_DRIVER_FILES=.../nvidia_icd.json), else it says why and measures nothing.
                 Then, where a Vulkan adapter is not the CUDA GPU (lavapipe, as under
                 .mesa/mesa-env.sh), staged there vs DtoH + write_texture, target <= 1.10.
                 Its Vulkan rows use no GL and run after the ordering group. With `wgpu-gl`,
                 its GL-route rows (WgpuTarget on wgpu's GL backend over the benchmark's GL
                 context, from open_gl_device: interop and staged vs that device's handoff
                 floor) run first, before the ordering group; on a GL that is not on the CUDA
                 GPU they say why and measure nothing
  --video-only   run the video group (NV12 frames at 1920x1080 and 3840x2160:
                 DisplayTarget::show_video vs show of RGBA8, target <= 1.10; VideoPlanes vs
                 the handoff floor of the same bytes, target <= 1.05; with the feature `wgpu`,
                 the same on WgpuTarget and WgpuVideoPlanes, with no target); not in the
                 default run; needs NVIDIA's GL. The seven -only flags combine: the groups
                 named run in this order, but the video group's GL rows run after the present
                 group and its wgpu rows last
  --watchdog-secs N
                 exit with status 3 when one iteration or the set-up takes longer than N s
                 (default $CUDA_GL_WATCHDOG_SECS, else 10; 0: off)
  --debug-spin-ms N
                 test hook of the watchdog: keep the GPU busy for N ms before the first case
  --bench        accepted and ignored (cargo passes it)";

/// Why `--wgpu-present-only` is refused by a benchmark built without its feature `wgpu`.
const NO_WGPU: &str = "--wgpu-present-only needs the benchmark built with its feature `wgpu` \
                       (cargo bench -p cuda-gl-bench --features wgpu; the GPU bundle, built \
                       --all-features, has it)";

/// Iterations per interleaved block.
const BLOCK: usize = 50;

/// Which devices to run on.
#[derive(Debug, Clone, Copy)]
enum Devices {
    One(usize),
    All,
}

/// The parsed command line.
#[derive(Debug)]
struct Args {
    iters: usize,
    warmup: usize,
    cpu_iters: Option<usize>,
    out: PathBuf,
    devices: Devices,
    /// Run only the registration group (and group 1-2, whose ratio it reports).
    registration_only: bool,
    /// Run only the frames-in-flight group.
    in_flight_only: bool,
    /// Run only the ordering-mechanisms group.
    ordering_only: bool,
    /// Run only the streaming group.
    streaming_only: bool,
    /// Run only the present group.
    present_only: bool,
    /// Run only the wgpu present group.
    wgpu_present_only: bool,
    /// Run the video group.
    video_only: bool,
    /// `--watchdog-secs`.
    watchdog_secs: Option<u64>,
    /// `--debug-spin-ms`.
    debug_spin: Option<Duration>,
}

/// Parses the arguments after the program name; `Ok(None)` for `--help`.
fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let mut parsed = Args {
        iters: 1000,
        warmup: 100,
        cpu_iters: None,
        out: PathBuf::from("target/bench"),
        devices: Devices::One(0),
        registration_only: false,
        in_flight_only: false,
        ordering_only: false,
        streaming_only: false,
        present_only: false,
        wgpu_present_only: false,
        video_only: false,
        watchdog_secs: None,
        debug_spin: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let count = |name: &str, text: String| {
            text.parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{name} takes a positive integer, not `{text}`"))
        };
        match arg.as_str() {
            "--bench" => {}
            "--help" | "-h" => return Ok(None),
            "--quick" => parsed.iters = 200,
            "--iters" => parsed.iters = count("--iters", value("--iters")?)?,
            "--warmup" => {
                let text = value("--warmup")?;
                parsed.warmup = text
                    .parse()
                    .map_err(|_| format!("--warmup takes an integer, not `{text}`"))?;
            }
            "--cpu-iters" => parsed.cpu_iters = Some(count("--cpu-iters", value("--cpu-iters")?)?),
            "--out" => parsed.out = PathBuf::from(value("--out")?),
            "--device" => {
                let text = value("--device")?;
                let n = text
                    .parse()
                    .map_err(|_| format!("--device takes a device ordinal, not `{text}`"))?;
                parsed.devices = Devices::One(n);
            }
            "--all-devices" => parsed.devices = Devices::All,
            "--registration-only" => parsed.registration_only = true,
            "--frames-in-flight-only" => parsed.in_flight_only = true,
            "--ordering-only" => parsed.ordering_only = true,
            "--streaming-only" => parsed.streaming_only = true,
            "--present-only" => parsed.present_only = true,
            "--wgpu-present-only" if cfg!(feature = "wgpu") => parsed.wgpu_present_only = true,
            "--wgpu-present-only" => return Err(NO_WGPU.to_string()),
            "--video-only" => parsed.video_only = true,
            "--watchdog-secs" => {
                let text = value("--watchdog-secs")?;
                let secs = text.parse().map_err(|_| {
                    format!("--watchdog-secs takes whole seconds (0: off), not `{text}`")
                })?;
                parsed.watchdog_secs = Some(secs);
            }
            "--debug-spin-ms" => {
                let ms = count("--debug-spin-ms", value("--debug-spin-ms")?)?;
                parsed.debug_spin = Some(Duration::from_millis(ms as u64));
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(Some(parsed))
}

/// An error chain on one line: `context: cause: cause`, line breaks in messages folded.
fn one_line(error: &anyhow::Error) -> String {
    report::one_line(&format!("{error:#}"))
}

/// Runs every case group on one device.
fn run_device(ordinal: usize, plan: &Plan, cpu_plan: &Plan, args: &Args) -> Result<DeviceReport> {
    watchdog::enter(watchdog::Stage::Setup);
    let others = args.registration_only || args.in_flight_only || args.ordering_only;
    let others = others || args.streaming_only || args.video_only;
    // The present group alone runs on any OpenGL (its staged rows need no interop), and so
    // does the wgpu present group (its GL-route rows skip, saying why, off the CUDA GPU).
    let choice = if (args.present_only || args.wgpu_present_only) && !others {
        gpu::GlChoice::Any
    } else {
        gpu::GlChoice::Nvidia
    };
    let gpu = gpu::Gpu::open(ordinal, PLASMA_PTX, choice)?;
    if let Some(duration) = args.debug_spin {
        debug_spin(&gpu, duration)?;
    }
    let info = gpu.info.clone();
    eprintln!(
        "interop: GPU {ordinal}: {} (PCI {}), OpenGL {} on {}",
        info.name, info.pci_bus_id, info.gl_version, info.gl_renderer
    );
    let mut all = Vec::new();
    let progress = |what: &str| eprintln!("interop: GPU {ordinal}: {what}");
    // With no `--*-only` flag every group runs but ordering's (and wgpu present's without the
    // feature `wgpu`); with some, only those.
    let every = !(others || args.present_only || args.wgpu_present_only);
    if every || args.registration_only {
        progress("raw driver calls vs safe API");
        all.extend(cases::safe_api_overhead(&gpu, plan)?);
        // After group 1-2, whose map + unmap ratio it prints beside its own.
        progress("registration: register + unregister, raw driver calls vs safe API");
        all.extend(registration::registration(&gpu, plan)?);
        registration::print_summary(&all);
    }
    if every {
        progress("one PBO vs 8 PBOs");
        all.extend(cases::pbo_count(&gpu, plan)?);
        progress("stream kinds");
        all.extend(cases::stream_kinds(&gpu, plan)?);
        progress("host staging");
        all.extend(cases::host_staging(&gpu, plan)?);
        for (w, h) in cases::FRAME_SIZES {
            progress(&format!("frames {w}x{h}"));
            all.extend(cases::frames(&gpu, plan, cpu_plan, (w, h))?);
        }
        progress("baselines");
        all.extend(cases::baselines(&gpu, plan)?);
        for size in fast::FAST_SIZES {
            let (w, h) = size;
            progress(&format!("fast path {w}x{h}: one frame per handoff"));
            all.extend(fast::one_frame_per_handoff(&gpu, plan, size)?);
            progress(&format!("fast path {w}x{h}: K frames per handoff"));
            all.extend(fast::k_frames_per_handoff(&gpu, plan, size)?);
            progress(&format!("fast path {w}x{h}: frames in flight"));
            all.extend(fast::frames_in_flight(&gpu, plan, size)?);
        }
    }
    if every || args.in_flight_only {
        progress("frames in flight: external-memory ring vs map/unmap ring");
        all.extend(external::frames_in_flight(&gpu, plan)?);
    }
    if every || args.streaming_only {
        for size in streaming::STREAM_SIZES {
            progress(&format!(
                "streaming {}x{}: FrameStream vs the pipelined floor",
                size.0, size.1
            ));
            all.extend(streaming::streaming(&gpu, plan, size)?);
        }
    }
    let present = if every || args.present_only {
        Some(present_group(&gpu, plan, &mut all, progress)?)
    } else {
        None
    };
    #[cfg_attr(not(feature = "wgpu"), allow(unused_mut))]
    let mut video = if args.video_only {
        Some(video::gl_group(&gpu, plan, &mut all, progress)?)
    } else {
        None
    };
    // The wgpu present group's GL-route rows: before the ordering group and the group's Vulkan
    // rows, whose Vulkan work may leave the EGL display unusable.
    // A failure there ends no other group: the Vulkan rows still run, the files are written,
    // and the run then fails naming it (one device call must not lose every row to one group).
    #[cfg(feature = "wgpu-gl")]
    let mut gl_failed = None;
    #[cfg(feature = "wgpu-gl")]
    let wgpu_gl = if every || args.wgpu_present_only {
        match wgpu_present::measure(&gpu, plan, &mut all, &progress, &wgpu_present::GL_GROUP) {
            Ok(setup) => setup,
            Err(e) => {
                eprintln!("error: the wgpu present group's GL rows: {e:#} (going on without them)");
                let setup = wgpu_present::Found {
                    skipped: Some(format!("failed: {e:#}")),
                    ..Default::default()
                };
                gl_failed = Some(e);
                setup
            }
        }
    } else {
        wgpu_present::Found::default()
    };
    #[cfg(all(feature = "wgpu", not(feature = "wgpu-gl")))]
    let wgpu_gl = wgpu_present::Found::default();
    if args.ordering_only {
        progress("ordering mechanisms");
        all.extend(ordering::ordering(&gpu, plan)?);
    }
    // Last: its Vulkan device may leave the process's EGL display unusable (see
    // `--ordering-only`), and it uses no GL itself.
    #[cfg(feature = "wgpu")]
    let wgpu_present = if every || args.wgpu_present_only {
        Some(wgpu_present::group(
            &gpu, plan, &mut all, progress, wgpu_gl,
        )?)
    } else {
        None
    };
    #[cfg(not(feature = "wgpu"))]
    let wgpu_present = None;
    // The video group's wgpu rows come last for the same reason.
    #[cfg(feature = "wgpu")]
    if let Some(setup) = video.as_mut() {
        video::wgpu_group(&gpu, plan, &mut all, progress, setup)?;
    }
    if let Some(setup) = &video {
        video::finish(&all, setup);
    }
    let groups = Groups {
        present,
        wgpu_present,
        video,
    };
    #[cfg_attr(not(feature = "wgpu-gl"), allow(unused_mut))]
    let mut device = finish_device(ordinal, &gpu, info, all, groups)?;
    #[cfg(feature = "wgpu-gl")]
    if let Some(e) = gl_failed {
        device.error = Some(format!(
            "the wgpu present group's GL rows: {}",
            one_line(&e)
        ));
    }
    Ok(device)
}

/// The present group at each of its sizes, after the auto probe whose report line it prints;
/// its setup (the GL, whether interop was refused) for the report.
fn present_group(
    gpu: &gpu::Gpu,
    plan: &Plan,
    all: &mut Vec<measure::Case>,
    progress: impl Fn(&str),
) -> Result<present::Setup> {
    let setup = present::probe(gpu)?;
    let first = all.len();
    for (w, h) in present::PRESENT_SIZES {
        progress(&format!(
            "present {w}x{h}: DisplayTarget per frame vs its limits"
        ));
        all.extend(present::present(gpu, plan, &setup, (w, h))?);
    }
    present::print_summary(all.get(first..).unwrap_or_default(), &setup);
    Ok(setup)
}

/// The watchdog's test hook: queues plasma.ptx's `debug_spin` on the stream every case uses, so
/// that the first case waits `duration` for the GPU, as it would on a hung one.
fn debug_spin(gpu: &gpu::Gpu, duration: Duration) -> Result<()> {
    let module = cuda_gl::Module::from_ptx(&gpu.ctx, PLASMA_PTX)?;
    let spin = module.function("debug_spin")?;
    let ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    let one = cuda_gl::LaunchConfig {
        grid: (1, 1, 1),
        block: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `debug_spin(unsigned long long ns)` takes one u64 and touches no memory.
    unsafe { spin.launch(one, &gpu.stream, (ns,)) }.context("launching debug_spin")?;
    Ok(())
}

/// What the groups that report a setup found, for the device's report.
struct Groups {
    present: Option<present::Setup>,
    wgpu_present: Option<wgpu_present::Setup>,
    video: Option<video::Setup>,
}

/// Checks the context for late errors and packs one device's results.
fn finish_device(
    ordinal: usize,
    gpu: &gpu::Gpu,
    info: gpu::DeviceInfo,
    all: Vec<measure::Case>,
    groups: Groups,
) -> Result<DeviceReport> {
    gpu.ctx
        .synchronize()
        .context("the final context synchronize reported an error")?;
    Ok(DeviceReport {
        ordinal,
        name: info.name,
        pci_bus_id: info.pci_bus_id,
        gl_renderer: info.gl_renderer,
        gl_version: info.gl_version,
        cases: all,
        present: groups.present,
        wgpu_present: groups.wgpu_present,
        video: groups.video,
        error: None,
    })
}

/// Runs the benchmark; `Ok(false)` when some device of `--all-devices` failed.
fn run(args: &Args, command: String) -> Result<bool> {
    // First, so that a machine without a driver gets cuda-gl's error and nothing else.
    let version = cuda_gl::driver_version().context("no usable CUDA driver")?;
    let ordinals: Vec<usize> = match args.devices {
        Devices::One(n) => vec![n],
        Devices::All => (0..cuda_gl::Device::count().context("counting CUDA devices")?).collect(),
    };
    anyhow::ensure!(!ordinals.is_empty(), "the CUDA driver reports no device");
    let plan = Plan {
        iters: args.iters,
        warmup: args.warmup,
        block: BLOCK,
    };
    let cpu_plan = plan.with_iters(args.cpu_iters.unwrap_or(args.iters));
    let (date_utc, unix_time_s) = report::utc_now();

    let mut devices = Vec::new();
    let mut all_ok = true;
    for &ordinal in &ordinals {
        match run_device(ordinal, &plan, &cpu_plan, args) {
            Ok(device) => {
                // A group that failed while the others ran (written, and the run fails).
                all_ok &= device.error.is_none();
                devices.push(device);
            }
            Err(e) if ordinals.len() == 1 => return Err(e.context(format!("GPU {ordinal}"))),
            Err(e) => {
                let message = one_line(&e);
                eprintln!("interop: GPU {ordinal} failed: {message}");
                all_ok = false;
                devices.push(DeviceReport {
                    ordinal,
                    name: cuda_gl::Device::get(ordinal)
                        .and_then(|d| d.name())
                        .unwrap_or_default(),
                    pci_bus_id: String::new(),
                    gl_renderer: String::new(),
                    gl_version: String::new(),
                    cases: Vec::new(),
                    present: None,
                    wgpu_present: None,
                    video: None,
                    error: Some(message),
                });
            }
        }
    }

    // Writing the report is host work.
    watchdog::enter(watchdog::Stage::Idle);
    let streaming = devices
        .iter()
        .map(|d| streaming::summaries(&d.cases))
        .find(|s| !s.is_empty())
        .unwrap_or_default();
    let registration = devices
        .iter()
        .map(|d| registration::summaries(&d.cases))
        .find(|s| !s.is_empty())
        .unwrap_or_default();
    let present = devices
        .iter()
        .find_map(|d| present::summaries(&d.cases, d.present.as_ref()?));
    let wgpu_present = devices
        .iter()
        .find_map(|d| Some(wgpu_present::summaries(&d.cases, d.wgpu_present.as_ref()?)));
    let video = devices
        .iter()
        .find_map(|d| video::summaries(&d.cases, d.video.as_ref()?));
    let report = Report {
        streaming,
        registration,
        present,
        wgpu_present,
        video,
        meta: Meta {
            date_utc,
            unix_time_s,
            command,
            driver_api_version: version,
            driver_api: format!("{}.{}", version / 1000, version % 1000 / 10),
            plan,
            cpu_plan,
            cpu_threads: cases::cpu_threads(),
        },
        devices,
    };
    println!("{}", report::markdown(&report));
    report::write_all(&report, &args.out)?;
    eprintln!(
        "interop: wrote benchmarks.md, benchmarks.json and benchmarks.svg to {}",
        args.out.display()
    );
    Ok(all_ok)
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let args = match parse_args(argv.get(1..).unwrap_or_default()) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("interop: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Err(message) = watchdog::arm("interop", args.watchdog_secs) {
        eprintln!("interop: {message}");
        return ExitCode::from(2);
    }
    // Figures measured on a GPU that needs a reset would mislead: say so before they start.
    gpu_health::print_warnings("interop");
    match run(&args, argv.join(" ")) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("interop: error: {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}
