//! The wgpu present group: `cuda_gl::wgpu_interop::WgpuTarget` per frame, at 1920x1080 and
//! 3840x2160 RGBA8, against its limits measured in the same interleaved rounds (medians).
//!
//! Every row ends with the same **wgpu use + wait**: a `copy_texture_to_texture` of one texel of
//! the row's texture into a 1x1 sink texture, submitted, then
//! `Device::poll(PollType::Wait { submission_index, timeout: 10 s })` for that submit, so that
//! the rows differ only by how the frame reaches the texture. The rows, at each size:
//!
//! - **handoff floor (wgpu)**: the plasma kernel writes a frame into plain device memory,
//!   `cuStreamSynchronize`, then the wgpu use of an untouched texture of the frame's size. No
//!   interop call: what handing work from CUDA to wgpu costs through the CPU.
//! - **wgpu interop** (`Mode::Interop`, on the device from `open_device`): the plasma kernel
//!   draws the frame through `Frame::surface` (the target's shared image, written in place),
//!   `Frame::present` (CUDA's signal, wgpu's acquire and its GPU copy of the image into the
//!   texture the application samples), then the wgpu use of `target.texture()`. No CPU wait
//!   but the use's own. Against the floor, target <= [`INTEROP_TARGET`]. The present writes the
//!   texture with cuda-gl's shader blit (a compute pass for RGBA8).
//! - **SharedTexture raw hand-off**: `SharedTexture::write` on the bench stream, the same
//!   kernel through `CudaWrite::surface`, `finish`, then the wgpu use of the shared texture
//!   itself (no present blit): interop minus this row is what the target's extra GPU pass
//!   costs. Against the plain-call route through wgpu, target <= [`handoffs::PLAIN_TARGET`];
//!   its ratios to the plain-call route and to the floor are reported too. Beside it,
//!   **released ahead**: the same on a shared texture of its own with
//!   `SharedTexture::release_ahead` after the use (the docs' advice for frames in flight), so
//!   that the next write's CUDA wait finds the release already made; its ratio to the
//!   plain-call route through wgpu, for reading.
//! - **plain calls** (`wgpu_present/plain.rs`): the same hand-off made of ash and driver calls
//!   alone on the same device (an exportable image and timeline semaphore imported into CUDA;
//!   CUDA's wait, the kernel through the surface, CUDA's signal; one `vkQueueSubmit` on wgpu's
//!   queue waiting for it, with the acquire from `VK_QUEUE_FAMILY_EXTERNAL` and the use's
//!   1-texel copy made with `vkCmdCopyImage`; `vkWaitSemaphores`), and **plain calls +
//!   release**, with Vulkan's release to the external family too (which that file explains the
//!   route does not need). Their ratios: to the floor, and to the plain route.
//! - **plain calls through wgpu** (`wgpu_present/plain_wgpu.rs`): the plain route's frame
//!   with its Vulkan half handed to wgpu as an application on wgpu would: the same commands
//!   recorded raw into a wgpu command buffer, the semaphore's wait and signal added to
//!   wgpu-hal's queue, one `Queue::submit`, and the `Device::poll` wait of every row. wgpu's
//!   cost per submit is then on both sides of the raw hand-off's target. Its ratio: to the
//!   plain route.
//! - **gyroflow's way** (`wgpu_present/gyroflow.rs`, for reading): the route gyroflow takes,
//!   made of ash and driver calls on the same device: a LINEAR image whose memory CUDA imports
//!   and maps as a buffer (`cuExternalMemoryGetMappedBuffer`), the floor's kernel writing the
//!   frame into it as pitched device memory, `cuStreamSynchronize`, then the wgpu use of the
//!   image. Its ratio to the floor, and the interop frame's to it; no target. Where the driver
//!   refuses a LINEAR exportable RGBA8 image (or its set-up fails), it says why and is left
//!   out.
//! - **sustained** (`wgpu_present/sustained.rs`, in interleaved rounds of their own, µs per
//!   frame): the floor and the raw hand-off frame after frame, two and three shared textures
//!   round-robin (frames in flight: frame n written while wgpu uses frame n - 1), and four
//!   frames per hand-off; each against the floor in rounds.
//! - **wgpu staged** (`Mode::Staged`, forced on the same device): `Frame::present` of a frame
//!   no kernel drew (the target's canvas copied out into pinned memory in bands, each handed to
//!   `Queue::write_texture` once its copy has finished), then the wgpu use, as the GL present
//!   group's staged row. Beside it, its raw limits: `cuMemcpyDtoHAsync` of a frame from device
//!   memory into pinned memory + `cuStreamSynchronize`, and `Queue::write_texture` of a frame
//!   from that (host) memory into a frame-sized texture + the wgpu use (whose submit carries
//!   the write) + wait. The staged row's ratio to their sum is reported, with no target.
//! - **staged on another GPU** (`wgpu_present/other_gpu.rs`, after the rows above): the same
//!   three staged rows on a plain wgpu device of a Vulkan adapter that is not the CUDA GPU
//!   (Mesa's lavapipe, first), where auto chooses staged; against the sum of its limits there,
//!   target <= [`other_summary::OTHER_TARGET`].
//!
//! - **the present's transfer, for reading**: wgpu's `copy_texture_to_texture` of a frame
//!   between two plain textures, and from the shared image (between hand-offs) into a plain
//!   texture; and cuda-gl's shader blit (`cuda-gl/src/wgpu_interop/blit.rs`, included here), by
//!   compute pass and by render pass, the same two ways. Each is submitted, then the wgpu use
//!   of its destination. The summary puts each blit beside the copy of the same source.
//!
//! - **the GL route** (the benchmark's feature `wgpu-gl`, `gl_rows.rs`; run before the
//!   ordering group and the Vulkan rows, whose Vulkan work may leave the EGL display
//!   unusable): on a wgpu device of wgpu's GL backend over the benchmark's GL context (from
//!   `open_gl_device`), its own handoff floor (the same kernel into plain device memory +
//!   sync, then the same wgpu use on that device), the GL-route interop frame (the kernel
//!   through `Frame::surface`, the frame texture mapped and written in place,
//!   `Frame::present`: unmap and the blit into the sampled texture, then the wgpu use), and
//!   for reading a forced staged frame there. See `gl_summary.rs`.
//!
//! Needs the benchmark's feature `wgpu` (on in the GPU bundle, built `--all-features`) and
//! NVIDIA's Vulkan driver for wgpu (headless: `VK_DRIVER_FILES=.../nvidia_icd.json`). When
//! `open_device` finds no Vulkan adapter that is the CUDA GPU (or the adapter lacks what the
//! hand-off needs), the rows on it print why and measure nothing, and so do the staged rows on
//! another GPU where no Vulkan adapter is another GPU (NVIDIA's Vulkan alone); that is not a
//! failure, and the GL rows do the same where the benchmark's GL context is not on the CUDA
//! GPU. Under Mesa (`source .mesa/mesa-env.sh`: lavapipe the only Vulkan, llvmpipe the only
//! GL) only the staged rows on another GPU run. The Vulkan rows use no GL, and run last (after
//! the ordering group too); the GL rows run before both, and an error of theirs ends the run
//! before the Vulkan rows (build with `--features wgpu` alone, without `wgpu-gl`, to measure
//! the Vulkan rows without them).

use crate::measure::{Case, Ratio};
use crate::report::verdict;
use crate::roles::{RoleTag, SizeSummary, keyed, median, row_name};
use gl_summary::GlSummary;
use handoffs::{Gyroflow, Plain, Sustained};
use other_summary::OtherSummary;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use transfer::Transfer;

#[cfg(feature = "wgpu")]
#[path = "wgpu_present/device.rs"]
mod device;
#[cfg(feature = "wgpu")]
#[path = "wgpu_present/frames.rs"]
mod frames;
#[cfg(feature = "wgpu-gl")]
#[path = "wgpu_present/gl_rows.rs"]
mod gl_rows;
#[path = "wgpu_present/gl_summary.rs"]
mod gl_summary;
#[path = "wgpu_present/handoffs.rs"]
mod handoffs;
#[cfg(feature = "wgpu")]
#[path = "wgpu_present/other_gpu.rs"]
mod other_gpu;
#[path = "wgpu_present/other_summary.rs"]
mod other_summary;
#[cfg(feature = "wgpu")]
#[path = "wgpu_present/rows.rs"]
mod rows;
#[path = "wgpu_present/transfer.rs"]
mod transfer;
// A plain 2D texture, as the examples and the wgpu GPU tests make theirs.
#[cfg(feature = "wgpu")]
#[path = "../../../cuda-gl/examples/common/wgpu_texture.rs"]
mod wgpu_texture;

#[cfg(feature = "wgpu")]
pub use device::Wgpu;
#[cfg(feature = "wgpu-gl")]
pub(crate) use gl_rows::GROUP as GL_GROUP;
#[cfg(feature = "wgpu")]
pub use rows::group;
// The GL rows run apart from the rest of the group (see `interop.rs`).
#[cfg(feature = "wgpu-gl")]
pub(crate) use rows::measure;

/// The target ratio of a wgpu interop frame to the wgpu handoff floor (issue 43).
pub const INTEROP_TARGET: f64 = 0.90;
/// The name of the staged rows' limit.
const SUM: &str = "DtoH + write_texture";

/// The group's entry in the report's list of cases.
pub const LEGEND: &str = "\
- **wgpu present** (`cuda_gl::wgpu_interop::WgpuTarget`, RGBA8, 1920x1080 and 3840x2160, \
  feature `wgpu`): every row ends with the same wgpu use + wait (a 1-texel \
  `copy_texture_to_texture` of the row's texture into a 1x1 texture, submitted, and \
  `Device::poll(PollType::Wait)` for that submit, at most 10 s). Handoff floor (wgpu): the \
  plasma kernel into plain device memory + `cuStreamSynchronize` + the wgpu use of an \
  untouched texture, no interop call. Interop (`Mode::Interop`, device from `open_device`): \
  the kernel draws through `Frame::surface`, `Frame::present` (semaphore hand-off and wgpu's \
  GPU copy into the sampled texture), the wgpu use of `target.texture()`; target <= 0.90 x \
  the floor. The `SharedTexture` raw hand-off (`write`, the same kernel through the surface, \
  `finish`, the wgpu use of the shared texture: no present blit): target <= 1.05 x the same \
  hand-off made of plain calls through wgpu (CUDA wait, kernel, signal; the acquire from \
  `VK_QUEUE_FAMILY_EXTERNAL` and a 1-texel `vkCmdCopyImage` recorded raw into a wgpu command \
  buffer, the semaphore's wait and signal added to wgpu-hal's queue, one `Queue::submit`, \
  `Device::poll`), and for reading against plain calls (ash and driver calls on the same \
  device: the same, in one raw `vkQueueSubmit`, then `vkWaitSemaphores`; the image in \
  `GENERAL` throughout), whose ratio to the floor is given, as is the ratio of the route \
  through wgpu and of the plain route with Vulkan's release added to it. For reading, \
  gyroflow's way (ash and driver calls on the same device: a LINEAR image whose memory CUDA \
  maps as a buffer, the floor's kernel into it, `cuStreamSynchronize`, the wgpu use of the \
  image; no semaphore), against the floor and the interop frame. Sustained, in \
  rounds of 20 frames (µs per frame, against the floor in rounds): the raw hand-off, two and \
  three shared textures round-robin (frame n written while wgpu uses n - 1), four frames per \
  hand-off. Staged (`Mode::Staged`, forced, same device): `Frame::present` of a frame no \
  kernel drew + the wgpu use, against the sum of two raw rows of the same rounds: \
  `cuMemcpyDtoHAsync` of a frame into pinned memory + `cuStreamSynchronize`, and \
  `Queue::write_texture` of a frame from that memory + the wgpu use + wait; no target. For \
  reading, the present's transfer: wgpu's `copy_texture_to_texture` of a frame and cuda-gl's \
  shader blit (compute pass, render pass), each between plain textures and from the shared \
  image, submitted, + the wgpu use of the destination; the summary gives each blit / copy. \
  Then the three staged rows on a plain wgpu device of a Vulkan adapter that is not the CUDA \
  GPU (lavapipe first), where auto chooses staged: target <= 1.10 x DtoH + `write_texture` \
  there. Rows whose adapter this machine lacks (no Vulkan adapter is the CUDA GPU, or none is \
  another GPU) say why and measure nothing.\n";

/// What a row of the group measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
// Without the feature no row is made (the summaries still read the report's rows).
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))]
pub enum Role {
    /// Kernel into device memory + stream sync + the wgpu use of an untouched texture.
    Floor,
    /// A `WgpuTarget` interop frame drawn through its surface, presented, used.
    Interop,
    /// `SharedTexture::write`, the kernel through its surface, `finish`, the wgpu use.
    SharedRaw,
    /// A forced staged `WgpuTarget` frame that no kernel drew, presented, used.
    StagedPresent,
    /// The raw `cuMemcpyDtoHAsync` of a frame into pinned memory + sync (a staged limit).
    Dtoh,
    /// `Queue::write_texture` of a frame from host memory + the wgpu use (a staged limit).
    WriteTexture,
    /// wgpu's `copy_texture_to_texture` of a frame between two plain textures + the wgpu use:
    /// what the interop present's copy cost on its own, before the blit (for reading).
    CopyAlone,
    /// The same copy from the `SharedTexture`'s image (exportable memory, imported by CUDA,
    /// between hand-offs) into a plain texture + the wgpu use: whether the interop present's
    /// copy costs more because its source is the shared image (for reading).
    CopyFromShared,
    /// [`Role::SharedRaw`] on a shared texture of its own, released ahead after its use
    /// (`SharedTexture::release_ahead`), as the docs tell frames in flight to: the next
    /// write's CUDA wait finds the release already made.
    SharedRawAhead,
    /// [`Role::SharedRaw`] on a shared texture of its own, its wgpu use given to
    /// `CudaWrite::finish_then_release`: the hand-back, the use and the release ahead in one
    /// submit, the release's signal in a second (two submits a frame, where the raw row makes
    /// four).
    SharedRawOneSubmit,
    /// The same hand-off as [`Role::SharedRaw`] made of plain ash and driver calls, with the
    /// acquire only (`wgpu_present/plain.rs`).
    PlainRoute,
    /// [`Role::PlainRoute`] with Vulkan's release to `VK_QUEUE_FAMILY_EXTERNAL` too.
    PlainRelease,
    /// [`Role::PlainRoute`] with its Vulkan half submitted through wgpu: the same commands
    /// recorded into a wgpu command buffer, the semaphore operations added to wgpu-hal's queue,
    /// one `Queue::submit`, `Device::poll` (`wgpu_present/plain_wgpu.rs`).
    PlainWgpu,
    /// gyroflow's way (`wgpu_present/gyroflow.rs`): the kernel into CUDA's buffer mapping of a
    /// LINEAR image's memory, the stream's sync, the wgpu use of the image (for reading).
    Gyroflow,
    /// The floor's frame in rounds (µs per frame): the sustained rows' floor.
    RoundFloor,
    /// The raw hand-off of one shared texture in rounds (µs per frame).
    RoundShared,
    /// Two shared textures round-robin, frame n written while wgpu uses n - 1 (µs per frame).
    Ring2,
    /// [`Role::Ring2`] with no release ahead: each texture released by its write, behind the
    /// hand-back of the frame before (µs per frame).
    Ring2AtWrite,
    /// Three shared textures round-robin (µs per frame).
    Ring3,
    /// Four frames (kernels) per hand-off of one shared texture (µs per frame).
    PerHandoff4,
    /// cuda-gl's shader blit by compute pass between two plain textures + the wgpu use (for
    /// reading, beside [`Role::CopyAlone`]).
    ComputeBlitAlone,
    /// The compute blit from the shared image into a plain texture + the wgpu use (beside
    /// [`Role::CopyFromShared`]): what the interop present's blit costs on its own.
    ComputeBlitFromShared,
    /// The shader blit by render pass between two plain textures + the wgpu use.
    RenderBlitAlone,
    /// The render blit from the shared image into a plain texture + the wgpu use.
    RenderBlitFromShared,
    /// The GL route's floor: the kernel into device memory + sync + the wgpu use of an
    /// untouched texture, on the device of wgpu's GL backend.
    GlFloor,
    /// A `WgpuTarget` interop frame by the GL route drawn through its surface, presented, used.
    GlInterop,
    /// A forced staged `WgpuTarget` frame that no kernel drew on the GL device, presented, used.
    GlStaged,
    /// A staged `WgpuTarget` frame that no kernel drew, presented, used, on a plain device of a
    /// Vulkan adapter that is not the CUDA GPU (`wgpu_present/other_gpu.rs`).
    OtherGpuStaged,
    /// The raw DtoH of a frame into pinned memory + sync, in the other adapter's rounds.
    OtherGpuDtoh,
    /// `Queue::write_texture` of a frame from host memory + the wgpu use, on the other adapter.
    OtherGpuWriteTexture,
}

/// A wgpu present row's role and frame size.
pub type WgpuTag = RoleTag<Role>;

/// What a group of rows on one wgpu device found (`rows::measure` makes it): the adapter
/// (`name (driver driver_info)`) and the `Report` line of `WgpuTarget::new` with no mode forced
/// on it (1920x1080), or why the rows measured nothing (no adapter of theirs here, say).
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The adapter, when the group opened a device on one.
    pub adapter: Option<String>,
    /// The auto probe's report line.
    pub display: Option<String>,
    /// Why the rows measured nothing.
    pub skipped: Option<String>,
}

/// What the group found: on the CUDA GPU's wgpu Vulkan device (`open_device`), on the GL route
/// (feature `wgpu-gl`) and on another adapter, each the adapter and the mode auto chose there,
/// or why it measured nothing.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// The Vulkan rows on the CUDA GPU.
    pub vulkan: Found,
    /// The GL route's rows (their fields `gl_` in `benchmarks.json`).
    pub gl: Found,
    /// The staged rows on another adapter (`other_gpu_`).
    pub other: Found,
}

/// The setup's fields in `benchmarks.json`, flat beside the summaries: `adapter`, `display`,
/// `skipped` of the Vulkan rows, then the GL route's with `gl_` before each, then the other
/// adapter's with `other_gpu_`; an absent one left out.
impl Serialize for Setup {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(None)?;
        for (prefix, found) in [
            ("", &self.vulkan),
            ("gl_", &self.gl),
            ("other_gpu_", &self.other),
        ] {
            let fields = [
                ("adapter", &found.adapter),
                ("display", &found.display),
                ("skipped", &found.skipped),
            ];
            for (name, value) in fields {
                if let Some(value) = value {
                    map.serialize_entry(&format!("{prefix}{name}"), value)?;
                }
            }
        }
        map.end()
    }
}

/// `wgpu_present.sizes.<WxH>` of `benchmarks.json`: the three ratios of one size and the
/// medians they are made of, µs.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The interop frame's median.
    pub interop_us: f64,
    /// The wgpu handoff floor's median.
    pub floor_us: f64,
    /// `interop_us / floor_us`.
    pub interop_ratio: f64,
    /// The target `interop_ratio` should meet (at most).
    pub interop_target_max: f64,
    /// Whether `interop_ratio <= interop_target_max`.
    pub interop_target_met: bool,
    /// The `SharedTexture` raw hand-off's median.
    pub shared_raw_us: f64,
    /// `shared_raw_us / floor_us` (no target).
    pub shared_raw_ratio: f64,
    /// `interop_us - shared_raw_us`: what the target's present transfer (its shader blit,
    /// a copy before it) and its submit cost. The name stays for the records.
    pub present_copy_us: f64,
    /// The staged present's median.
    pub staged_us: f64,
    /// The raw DtoH's median.
    pub dtoh_us: f64,
    /// The raw `write_texture` + use's median.
    pub write_texture_us: f64,
    /// `staged_us / (dtoh_us + write_texture_us)` (no target).
    pub staged_ratio_to_sum: f64,
    /// The present's transfer, each way measured (no target).
    pub transfer: Transfer,
    /// The plain-call route, and the raw hand-off against it.
    pub plain: Plain,
    /// The sustained rows against the floor in rounds.
    pub sustained: Sustained,
    /// gyroflow's way beside the floor and the interop frame (for reading); absent where the
    /// driver refused its image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gyroflow: Option<Gyroflow>,
}

impl Summary {
    /// The interop figures the progress line and the report's table show, formatted once (µs
    /// to 0.1, ratios to 0.001): interop, floor, their ratio, its target and verdict, the
    /// shared raw hand-off, its ratio, and the present copy.
    fn interop_figures(&self) -> [String; 7] {
        [
            us_text(self.interop_us),
            us_text(self.floor_us),
            ratio_text(self.interop_ratio),
            format!(
                "<= {}: {}",
                self.interop_target_max,
                verdict(self.interop_target_met)
            ),
            us_text(self.shared_raw_us),
            ratio_text(self.shared_raw_ratio),
            us_text(self.present_copy_us),
        ]
    }

    /// The staged figures, as [`interop_figures`](Self::interop_figures): staged, DtoH,
    /// write_texture, and staged to their sum.
    fn staged_figures(&self) -> [String; 4] {
        [
            us_text(self.staged_us),
            us_text(self.dtoh_us),
            us_text(self.write_texture_us),
            ratio_text(self.staged_ratio_to_sum),
        ]
    }
}

/// A median in µs as the summaries show it.
pub(crate) fn us_text(v: f64) -> String {
    format!("{v:.1}")
}

/// A ratio as the summaries show it.
pub(crate) fn ratio_text(v: f64) -> String {
    format!("{v:.3}")
}

/// `wgpu_present` of `benchmarks.json`: the setup's fields, then a summary by `<WxH>` (empty
/// when the group skipped).
#[derive(Debug, Clone, Serialize)]
pub struct WgpuReport {
    /// What the group found.
    #[serde(flatten)]
    pub setup: Setup,
    /// By size.
    pub sizes: BTreeMap<String, Summary>,
    /// The GL route's rows by size (feature `wgpu-gl`; absent when they did not run).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub gl_sizes: BTreeMap<String, GlSummary>,
    /// The staged rows on another adapter by size (absent when they did not run).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub other_gpu_sizes: BTreeMap<String, OtherSummary>,
}

impl SizeSummary<Role> for Summary {
    /// The summary of `size`, when every row of it was measured.
    fn of(cases: &[Case], size: (u32, u32)) -> Option<Summary> {
        let m = |role| median(cases, role, size);
        let (interop_us, floor_us, shared_raw_us) =
            (m(Role::Interop)?, m(Role::Floor)?, m(Role::SharedRaw)?);
        let (staged_us, dtoh_us, write_texture_us) = (
            m(Role::StagedPresent)?,
            m(Role::Dtoh)?,
            m(Role::WriteTexture)?,
        );
        let interop_ratio = interop_us / floor_us;
        Some(Summary {
            interop_us,
            floor_us,
            interop_ratio,
            interop_target_max: INTEROP_TARGET,
            interop_target_met: interop_ratio <= INTEROP_TARGET,
            shared_raw_us,
            shared_raw_ratio: shared_raw_us / floor_us,
            present_copy_us: interop_us - shared_raw_us,
            staged_us,
            dtoh_us,
            write_texture_us,
            staged_ratio_to_sum: staged_us / (dtoh_us + write_texture_us),
            transfer: Transfer::of(cases, size)?,
            plain: Plain::of(cases, size, floor_us, shared_raw_us)?,
            sustained: Sustained::of(cases, size)?,
            gyroflow: Gyroflow::of(cases, size, floor_us, interop_us),
        })
    }

    /// Interop to the floor, staged to the sum of its raw limits, and the ratios of the
    /// hand-off and transfer rows.
    fn ratios(&self, cases: &[Case], size: (u32, u32)) -> Vec<(Role, Ratio)> {
        let handoffs = (&self.plain, &self.sustained, self.gyroflow.as_ref());
        let mut ratios = handoffs::ratios(cases, size, handoffs);
        ratios.extend(self.transfer.ratios(cases, size));
        ratios.push((
            Role::Interop,
            Ratio {
                to: row_name(cases, Role::Floor, size),
                value: self.interop_ratio,
                target_max: Some(INTEROP_TARGET),
            },
        ));
        ratios.push((
            Role::StagedPresent,
            Ratio {
                to: format!("raw {SUM} {}x{}", size.0, size.1),
                value: self.staged_ratio_to_sum,
                target_max: None,
            },
        ));
        ratios
    }
}

/// `wgpu_present` of `benchmarks.json` for a device whose run included the group (its setup),
/// skipped or not.
pub fn summaries(cases: &[Case], setup: &Setup) -> WgpuReport {
    WgpuReport {
        setup: setup.clone(),
        sizes: keyed(Summary::each(cases)),
        gl_sizes: keyed(GlSummary::each(cases)),
        other_gpu_sizes: keyed(OtherSummary::each(cases)),
    }
}

/// Prints the group's summary lines (stderr, like the other groups' progress).
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))]
fn print_summary(cases: &[Case]) {
    for ((w, h), s) in Summary::each(cases) {
        let [interop, floor, ratio, target, raw, raw_ratio, copy] = s.interop_figures();
        let [staged, dtoh, write, sum] = s.staged_figures();
        eprintln!(
            "interop: wgpu_present.{w}x{h}: interop {interop} µs, floor {floor} µs: {ratio} x \
             (target {target}); shared raw {raw} µs: {raw_ratio} x floor (present blit {copy} \
             µs); staged {staged} µs vs DtoH {dtoh} + write_texture {write} µs: {sum} x sum"
        );
        let label = format!("wgpu_present.{w}x{h}");
        if let Some(g) = &s.gyroflow {
            g.print(&label);
        }
        s.transfer.print(&label);
        handoffs::print(&label, s.shared_raw_us, (&s.plain, &s.sustained));
    }
}

/// The group's markdown section, for the report; empty when it did not run.
pub fn summary_markdown(cases: &[Case], setup: Option<&Setup>) -> String {
    let mut out = String::new();
    let Some(setup) = setup else {
        return out;
    };
    out.push_str("### wgpu present: `WgpuTarget` per frame vs its limits\n\n");
    out.push_str(&gl_summary::markdown(cases, &setup.gl));
    out.push_str(&other_summary::markdown(cases, &setup.other));
    if let Some(why) = &setup.vulkan.skipped {
        let _ = write!(out, "Skipped (not a failure): {why}.\n\n");
        return out;
    }
    if let (Some(adapter), Some(display)) = (&setup.vulkan.adapter, &setup.vulkan.display) {
        let _ = write!(
            out,
            "wgpu adapter: {adapter}; `{display}` (auto, 1920x1080).\n\n"
        );
    }
    out.push_str(
        "| size | interop µs | floor µs | interop / floor | target | shared raw µs | shared raw / \
         floor | staged µs | DtoH µs | write_texture µs | staged / (DtoH + write_texture) |\n\
         |---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let all = Summary::each(cases);
    for ((w, h), s) in &all {
        let [interop, floor, ratio, target, raw, raw_ratio, _] = s.interop_figures();
        let [staged, dtoh, write, sum] = s.staged_figures();
        let _ = writeln!(
            out,
            "| {w}x{h} | {interop} | {floor} | {ratio} | {target} | {raw} | {raw_ratio} | \
             {staged} | {dtoh} | {write} | {sum} |"
        );
    }
    out.push('\n');
    let gyroflow: Vec<_> = all
        .iter()
        .map(|((w, h), s)| (format!("{w}x{h}"), s.gyroflow.as_ref()))
        .collect();
    out.push_str(&handoffs::gyroflow_markdown(&gyroflow));
    let transfers: Vec<_> = all
        .iter()
        .map(|((w, h), s)| (format!("{w}x{h}"), &s.transfer))
        .collect();
    out.push_str(&transfer::markdown(&transfers));
    let handoff_sizes: Vec<_> = all
        .iter()
        .map(|((w, h), s)| (format!("{w}x{h}"), s.shared_raw_us, &s.plain, &s.sustained))
        .collect();
    out.push_str(&handoffs::markdown(&handoff_sizes));
    out
}
