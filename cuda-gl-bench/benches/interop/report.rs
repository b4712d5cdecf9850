//! The outputs: `benchmarks.md` (also printed), `benchmarks.json` and `benchmarks.svg`.

use crate::measure::{Case, Plan};
use anyhow::{Context as _, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// `met` or `MISSED`: whether a ratio met its target, as every summary says it.
pub fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

/// `text` (an error, say) on one line: its lines trimmed, empty ones left out, joined by spaces
/// (cuda-gl's errors end in a `help:` line).
pub fn one_line(text: &impl std::fmt::Display) -> String {
    text.to_string()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run-wide metadata.
#[derive(Debug, Clone, Serialize)]
pub struct Meta {
    /// When the run started, `YYYY-MM-DD HH:MM:SS UTC`.
    pub date_utc: String,
    /// The same instant in seconds since the Unix epoch.
    pub unix_time_s: u64,
    /// The command line, as the process received it.
    pub command: String,
    /// `cuda_gl::driver_version()`, e.g. 13000.
    pub driver_api_version: i32,
    /// The same as `major.minor`, e.g. `13.0`.
    pub driver_api: String,
    /// Iterations, warm-up and interleaving block of every case but the CPU frames.
    pub plan: Plan,
    /// The same for the CPU frames.
    pub cpu_plan: Plan,
    /// Threads the CPU frames render with.
    pub cpu_threads: usize,
}

/// One device's results.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReport {
    /// CUDA ordinal.
    pub ordinal: usize,
    /// CUDA device name (empty when opening it failed).
    pub name: String,
    /// PCI bus id.
    pub pci_bus_id: String,
    /// `GL_RENDERER`.
    pub gl_renderer: String,
    /// `GL_VERSION`.
    pub gl_version: String,
    /// Every measured case, in run order.
    pub cases: Vec<Case>,
    /// What the present group found about the GL (its `DisplayTarget` report line, vendor,
    /// whether interop was refused), when it ran.
    pub present: Option<crate::present::Setup>,
    /// What the wgpu present group found (the wgpu adapter and auto's report line, or why it
    /// skipped), when it ran.
    pub wgpu_present: Option<crate::wgpu_present::Setup>,
    /// What the video group found (the GL target's report line, the wgpu adapter or why its
    /// wgpu rows skipped), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<crate::video::Setup>,
    /// Why the device's run stopped, if it did.
    pub error: Option<String>,
}

/// Everything written out.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Run-wide metadata.
    pub meta: Meta,
    /// Per-device results.
    pub devices: Vec<DeviceReport>,
    /// `streaming.<WxH>`: the chosen point of each size's streaming curve, from the first
    /// device that ran the streaming group.
    pub streaming: std::collections::BTreeMap<String, crate::streaming::StreamSummary>,
    /// `registration.<buffer|image|map_unmap>`: the safe API against raw driver calls (medians
    /// in µs per round and their ratio), from the first device that ran the registration group.
    pub registration: std::collections::BTreeMap<String, crate::registration::Summary>,
    /// `present.<interop|staged>.<WxH>`: `DisplayTarget` per frame against its limit (with
    /// the report line and the GL beside them), from the first device that ran the present
    /// group; absent when none did.
    pub present: Option<crate::present::PresentReport>,
    /// `wgpu_present`: `WgpuTarget` per frame against its limits, by size (with the wgpu
    /// adapter, or why the group skipped), from the first device that ran the wgpu present
    /// group; absent when none did.
    pub wgpu_present: Option<crate::wgpu_present::WgpuReport>,
    /// `video.<gl|wgpu>.<WxH>`: NV12 shown against RGBA8 shown, and the planes against the
    /// handoff floor of the same bytes (with the GL target's report line and the wgpu adapter),
    /// from the first device that ran the video group; absent when none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<crate::video::VideoReport>,
}

/// The current time as `YYYY-MM-DD HH:MM:SS UTC` and as Unix seconds.
pub fn utc_now() -> (String, u64) {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    (format_utc(secs), secs)
}

/// Formats Unix seconds as `YYYY-MM-DD HH:MM:SS UTC` (proleptic Gregorian calendar; Howard
/// Hinnant's `civil_from_days`).
fn format_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn ratio_cell(case: &Case) -> String {
    let Some(ratio) = &case.ratio else {
        return String::new();
    };
    let mut cell = format!("{:.3} vs {}", ratio.value, ratio.to);
    if let Some(max) = ratio.target_max {
        let _ = write!(cell, " (target <= {max}: {})", verdict(ratio.value <= max));
    }
    cell
}

/// The markdown table of one device.
fn table(cases: &[Case]) -> String {
    let mut out = String::from("| Group | Case | median µs | p99 µs | ratio |\n");
    out.push_str("|---|---|---:|---:|---|\n");
    let mut last_group = "";
    for case in cases {
        let group = if case.group == last_group {
            ""
        } else {
            case.group.as_str()
        };
        last_group = &case.group;
        let _ = writeln!(
            out,
            "| {group} | {} | {:.1} | {:.1} | {} |",
            case.name,
            case.stats.median_us,
            case.stats.p99_us,
            ratio_cell(case)
        );
    }
    out
}

const LEGEND: &str = "\
Every iteration is timed with `Instant` around the whole work, which ends synchronized \
(`cuStreamSynchronize` and/or `glFinish`), so GPU time counts. Cases of one group run \
interleaved, in alternating blocks, so drift affects them equally.

- **1-2**: `cuGraphicsMapResources`, `cuGraphicsResourceGetMappedPointer`, `cuMemsetD8Async` \
  of the whole 1080p RGBA8 PBO (8,294,400 B), `cuGraphicsUnmapResources`, \
  `cuStreamSynchronize`: plain `cuda-gl-sys` calls vs `RegisteredBuffer::map` / \
  `MappedBuffer::unmap` / `Stream::synchronize` (the memset is the same raw call in both). \
  Target ratio <= 1.02.
- **3**: map, get the pointer of every buffer, unmap, sync: 1 PBO; 8 PBOs with 8 map and 8 \
  unmap calls; 8 PBOs with one `map_all` and one unmap call.
- **4**: map + pointer + unmap + sync of one PBO on a created non-blocking stream, a created \
  blocking stream, `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD`.
- **5**: fill a 1080p PBO with the plasma kernel: through interop, or kernel into device \
  memory + `cuMemcpyDtoHAsync` into pinned memory + sync + `glBufferSubData` (host staging), \
  each + `glFinish`.
- **6**: a full plasma frame, drawn with a full-screen triangle sampling the frame texture \
  into an FBO of the same size, then `glFinish` (+ stream sync). PBO: map, `plasma_pbo`, \
  unmap, `glTexSubImage2D` from the PBO, draw. Surface: texture registered \
  `SURFACE_LOAD_STORE | WRITE_DISCARD`, map, `plasma_surface` through the cached surface \
  object, unmap, draw (no upload). Staging: kernel into device memory, DtoH into pinned \
  memory, sync, `glTexSubImage2D` from host, draw. CPU: the CPU plasma on every core, \
  `glTexSubImage2D` from host, draw.
- **7**: the handoff floor of group 6, with no interop call: `plasma_pbo` into plain device \
  memory of the frame's size + stream sync, then the same draw as the frames (a full-screen \
  triangle sampling an untouched texture of that size) + `glFinish`, so that floor and frames do \
  the same GL work. Every frame's ratio is to the floor of its size. Baselines: CUDA alone and \
  GL alone.
";

/// The whole `benchmarks.md`.
pub fn markdown(report: &Report) -> String {
    let meta = &report.meta;
    let mut out = String::from("# cuda-gl interop benchmarks\n\n");
    for dev in &report.devices {
        let _ = writeln!(
            out,
            "- GPU {}: {} (PCI {}); OpenGL: {} on {}",
            dev.ordinal, dev.name, dev.pci_bus_id, dev.gl_version, dev.gl_renderer
        );
    }
    let _ = writeln!(
        out,
        "- CUDA driver API version: {} (`cuda_gl::driver_version()` = {})",
        meta.driver_api, meta.driver_api_version
    );
    let _ = writeln!(out, "- Date: {}", meta.date_utc);
    let _ = writeln!(out, "- Command: `{}`", meta.command);
    let _ = writeln!(
        out,
        "- Iterations per case: {} measured after {} warm-up, interleaved in blocks of {}; \
         CPU frames: {} after {} warm-up, on {} threads",
        meta.plan.iters,
        meta.plan.warmup,
        meta.plan.block,
        meta.cpu_plan.iters,
        meta.cpu_plan.warmup,
        meta.cpu_threads
    );
    out.push('\n');
    for dev in &report.devices {
        if report.devices.len() > 1 {
            let _ = writeln!(out, "## GPU {}: {}\n", dev.ordinal, dev.name);
        }
        if !dev.cases.is_empty() {
            out.push_str(&table(&dev.cases));
            out.push('\n');
        }
        if let Some(error) = &dev.error {
            let _ = writeln!(out, "**The run on GPU {} stopped:** {error}\n", dev.ordinal);
        }
    }
    for dev in &report.devices {
        out.push_str(&crate::registration::summary_markdown(&dev.cases));
    }
    for dev in &report.devices {
        out.push_str(&crate::present::summary_markdown(
            &dev.cases,
            dev.present.as_ref(),
        ));
    }
    for dev in &report.devices {
        out.push_str(&crate::wgpu_present::summary_markdown(
            &dev.cases,
            dev.wgpu_present.as_ref(),
        ));
    }
    for dev in &report.devices {
        out.push_str(&crate::video::summary_markdown(
            &dev.cases,
            dev.video.as_ref(),
        ));
    }
    for dev in &report.devices {
        let summary = crate::fast::summary(&dev.cases);
        if summary.is_empty() {
            continue;
        }
        if report.devices.len() > 1 {
            let _ = writeln!(
                out,
                "## The fast path on GPU {}: {}\n",
                dev.ordinal, dev.name
            );
        } else {
            out.push_str("## The fast path\n\n");
        }
        out.push_str(&summary);
    }
    for dev in &report.devices {
        out.push_str(&crate::streaming::summary_markdown(&dev.cases));
    }
    out.push_str("## Cases\n\n");
    out.push_str(LEGEND);
    out.push_str(crate::registration::LEGEND);
    out.push_str(crate::fast::LEGEND);
    out.push_str(crate::streaming::LEGEND);
    out.push_str(crate::present::LEGEND);
    if report.devices.iter().any(|d| d.wgpu_present.is_some()) {
        out.push_str(crate::wgpu_present::LEGEND);
    }
    if report.devices.iter().any(|d| d.video.is_some()) {
        out.push_str(crate::video::LEGEND);
    }
    out
}

/// Writes `benchmarks.md`, `benchmarks.json` and `benchmarks.svg` into `dir`.
pub fn write_all(report: &Report, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the output directory {}", dir.display()))?;
    let md = dir.join("benchmarks.md");
    std::fs::write(&md, markdown(report)).with_context(|| format!("writing {}", md.display()))?;
    let json = dir.join("benchmarks.json");
    let text = serde_json::to_string_pretty(report).context("serialising the report")?;
    std::fs::write(&json, text + "\n").with_context(|| format!("writing {}", json.display()))?;
    let svg = dir.join("benchmarks.svg");
    chart(report, &svg).with_context(|| format!("drawing {}", svg.display()))?;
    Ok(())
}

const PATHS: [(&str, RGBColor); 5] = [
    ("floor", RGBColor(120, 120, 120)),
    ("PBO", RGBColor(31, 119, 180)),
    ("surface", RGBColor(44, 160, 44)),
    ("staging", RGBColor(255, 127, 14)),
    ("CPU", RGBColor(214, 39, 40)),
];

/// Per path (in [`PATHS`] order), the median of each frame size (`None` if not measured).
type MediansByPath = Vec<Vec<Option<f64>>>;

/// One device's frame medians: the `(width, height)` sizes in run order, and per path the
/// median per size.
fn frame_medians(dev: &DeviceReport) -> (Vec<(u32, u32)>, MediansByPath) {
    let mut sizes: Vec<(u32, u32)> = Vec::new();
    for tag in dev.cases.iter().filter_map(|c| c.frame.as_ref()) {
        if !sizes.contains(&(tag.width, tag.height)) {
            sizes.push((tag.width, tag.height));
        }
    }
    let medians = PATHS
        .iter()
        .map(|(path, _)| {
            sizes
                .iter()
                .map(|&(w, h)| {
                    dev.cases.iter().find_map(|c| {
                        let tag = c.frame.as_ref()?;
                        (tag.path == *path && (tag.width, tag.height) == (w, h))
                            .then_some(c.stats.median_us)
                    })
                })
                .collect()
        })
        .collect();
    (sizes, medians)
}

/// `benchmarks.svg`: per device, grouped bars of the median per-frame cost by path and size,
/// on a log scale.
fn chart(report: &Report, path: &Path) -> Result<()> {
    let panels = report.devices.len().max(1);
    let root = SVGBackend::new(path, (1100, 620 * panels as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    for (area, dev) in root.split_evenly((panels, 1)).iter().zip(&report.devices) {
        let (sizes, medians) = frame_medians(dev);
        let values = medians.iter().flatten().flatten().copied();
        let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let caption = format!(
            "Per-frame cost by path and size, median (GPU {}: {})",
            dev.ordinal, dev.name
        );
        if sizes.is_empty() || !lo.is_finite() || lo <= 0.0 {
            area.titled(&caption, ("sans-serif", 22))?.draw(&Text::new(
                "no frame results",
                (40, 40),
                ("sans-serif", 18),
            ))?;
            continue;
        }
        let (y_lo, y_hi) = (lo / 2.0, hi * 3.0);
        let mut chart = ChartBuilder::on(area)
            .caption(&caption, ("sans-serif", 22))
            .margin(20)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..sizes.len() as f64, (y_lo..y_hi).log_scale())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("median µs per frame (log scale)")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .draw()?;
        let bar = 0.8 / PATHS.len() as f64;
        for (p, ((name, color), per_size)) in PATHS.iter().zip(&medians).enumerate() {
            let color = *color;
            let bars = per_size.iter().enumerate().filter_map(|(s, v)| {
                let v = (*v)?;
                let x0 = s as f64 + 0.1 + p as f64 * bar;
                Some(Rectangle::new(
                    [(x0, y_lo), (x0 + bar * 0.9, v)],
                    color.filled(),
                ))
            });
            chart.draw_series(bars)?.label(*name).legend(move |(x, y)| {
                Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled())
            });
            let labels = per_size.iter().enumerate().filter_map(|(s, v)| {
                let v = (*v)?;
                let x = s as f64 + 0.1 + (p as f64 + 0.45) * bar;
                let text = if v >= 1000.0 {
                    format!("{:.1} ms", v / 1000.0)
                } else {
                    format!("{v:.0} µs")
                };
                let style = ("sans-serif", 12)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Bottom));
                Some(Text::new(text, (x, v * 1.05), style))
            });
            chart.draw_series(labels)?;
        }
        // Size names under the axis, centred on each group of bars (drawn on the root area in
        // backend pixels, since the x axis itself is continuous and unlabelled).
        for (s, (w, h)) in sizes.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(s as f64 + 0.5, y_lo));
            let style = ("sans-serif", 16)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top));
            root.draw(&Text::new(format!("{w}x{h}"), (x, y + 8), style))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
