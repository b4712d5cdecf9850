//! CUDA frames into a `wgpu::Texture` on wgpu's Vulkan backend, handed over on the GPU (feature
//! `wgpu`, Linux), or on wgpu's GL backend (feature `wgpu-gl`: [the GL route](#the-gl-route)).
//!
//! - Adapter first, then device, as in wgpu: [`find_adapter`] finds the Vulkan adapter whose
//!   device UUID is the CUDA device's (read its `limits()` and `features()` to choose the
//!   `wgpu::DeviceDescriptor`), and [`open_device`] opens a wgpu device on it with
//!   `VK_KHR_external_memory_fd` and `VK_KHR_external_semaphore_fd` enabled (through wgpu-hal's
//!   `open_with_callback`); [`check_device`] and [`check_adapter`] check a device or adapter
//!   that the application made itself, and say what is wrong.
//! - [`SharedTexture`]: a Vulkan image on a dedicated allocation of exportable memory, wrapped
//!   as a `wgpu::Texture` and imported into CUDA as an array with a surface object, with one
//!   timeline semaphore shared by both: CUDA waits for wgpu's last use, a kernel writes, CUDA
//!   signals; wgpu's next submit waits for that signal. No host copy and no CPU wait per frame.
//! - [`WgpuTarget`]: the safe display target on wgpu (frames, `show`, `show_video`), whose
//!   texture only wgpu commands write; [`WgpuVideoPlanes`]: a decoded NV12 or P010 frame's luma
//!   and chroma planes in two plain wgpu textures, for the application's own shader.
//! - With feature `wgpu-gl`, `open_gl_adapter` (`unsafe`: wgpu's GL backend trusts that its
//!   context is current) opens wgpu's GL backend over a GL context on the CUDA GPU as an
//!   adapter, `open_gl_device` opens a device on it, and `check_gl_device` checks one; on such a
//!   device the interop mode of a [`WgpuTarget`] and of [`WgpuVideoPlanes`] takes the GL route.
//!
//! Every function here that takes the CUDA context takes `&Arc<Context>`, as the rest of
//! cuda-gl does (what [`Context::new`](crate::Context::new) returns; pass `&ctx`), whether it
//! keeps a clone (the targets, the planes, the shared texture) or not (the adapter and device
//! calls and checks): one rule, as cudarc's `Arc<CudaContext>`.
//!
//! ```no_run
//! use cuda_gl::wgpu_interop::{SharedFormat, SharedTexture, find_adapter, open_device};
//! use cuda_gl::{Context, Device, LaunchConfig, Module, Stream, StreamFlags};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let ptx = String::new();
//! let ctx = Context::new(&Device::get(0)?)?;
//! let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
//!     backends: wgpu::Backends::VULKAN,
//!     ..wgpu::InstanceDescriptor::new_without_display_handle()
//! });
//! let adapter = find_adapter(&instance, &ctx)?;
//! let (device, queue) = open_device(&adapter, &ctx, &Default::default())?;
//! let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;
//! let module = Module::from_ptx(&ctx, &ptx)?;
//! let fill = module.function("surface_fill_rgba8")?; // (surface, int w, int h, unsigned seed)
//! let mut shared = SharedTexture::new(&ctx, &device, &queue, (1920, 1080), SharedFormat::Rgba8Unorm)?;
//! for frame in 0..600u32 {
//!     // SAFETY: no submit uses the texture until `finish` (this program submits only after it).
//!     let write = unsafe { shared.write(&stream) }?; // after wgpu's uses so far, on the GPU
//!     // SAFETY: the kernel writes 1920 x 1080 RGBA8 texels through the surface, on `stream`.
//!     unsafe {
//!         fill.launch(LaunchConfig::for_image(1920, 1080), &stream, (write.surface(), 1920i32, 1080i32, frame))?;
//!     }
//!     write.finish()?; // wgpu's next submit waits for the kernel, on the GPU
//!     // ... sample `shared.texture()` in a render pass, submit, present ...
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Contracts relied on
//!
//! Each `unsafe` block names the one it rests on.
//!
//! 1. **`wgpu_hal::vulkan::Adapter::open_with_callback`**: the features and limits passed are
//!    the adapter's (checked against `Adapter::features`/`limits` first); the callback only adds
//!    extensions the physical device offers (checked) to `args.extensions` (not to the create
//!    info, which wgpu-hal overwrites) and removes or turns off nothing. wgpu-hal 30 enables
//!    `timelineSemaphore` whenever the device supports it, which the checks require.
//! 2. **`wgpu::Adapter::create_device_from_hal`**: the device was opened from this adapter's own
//!    wgpu-hal adapter, with exactly the descriptor's features.
//! 3. **`wgpu_hal::vulkan::Device::texture_from_raw` and `wgpu::Device::create_texture_from_hal`**:
//!    the image was created on that device as the descriptors say (2D, one level and sample, the
//!    format wgpu-hal maps the wgpu format to, usage `SAMPLED | TRANSFER_SRC | TRANSFER_DST |
//!    STORAGE`, which wgpu-hal maps the hal descriptor's `RESOURCE | COPY_SRC | COPY_DST |
//!    STORAGE_READ_WRITE` to, no `MUTABLE_FORMAT`, no view formats), with its memory bound. The
//!    wgpu descriptor leaves storage out (wgpu never binds the texture as storage, and R8Unorm
//!    storage would need an adapter feature): wgpu-hal creates every view with
//!    `VkImageViewUsageCreateInfo` limited to the view's usage, so the extra image usage is
//!    never used by wgpu; with a drop callback and `TextureMemory::External`,
//!    wgpu-hal destroys neither, and the callback holds them until wgpu destroys the texture,
//!    which wgpu does only once every submit that used it is done. The initial state
//!    `UNINITIALIZED` is the image's real layout, `UNDEFINED`; textures from hal count as
//!    initialized, so wgpu never clears CUDA's texels.
//! 4. **`wgpu::CommandEncoder::as_hal_mut`**: the raw command buffer is only recorded into (never
//!    ended or destroyed), and the encoder is used for nothing else (wgpu 30 forbids mixing the
//!    raw and wgpu encoding APIs on one encoder: the barriers get encoders of their own).
//! 5. **Submission order** (Vulkan spec, "Semaphore Signaling" and "Semaphore Waiting"): a
//!    signal's first scope covers every command earlier in submission order on the queue, and a
//!    wait's second scope every command later, within the wait's stage mask (cuda-gl's waits
//!    give `ALL_COMMANDS`: every stage); `Queue::add_signal_semaphore` and
//!    `add_wait_semaphore` apply to the queue's next submit, internal ones included, and wgpu 30
//!    submits to the hal queue even for `Queue::submit([])`. Every submit carrying raw barriers
//!    also carries a `transition_resources` of each texture whose image they name (a hand-off
//!    of several textures, a video frame's planes, transitions all of them in one command
//!    buffer), so wgpu counts it as a use of each and destroys none before it.
//! 6. **Layouts and ownership**: see the hand-off's notes (wgpu records no transfer from
//!    `VK_QUEUE_FAMILY_EXTERNAL`; cuda-gl records the release and the acquire itself, and the
//!    layout wgpu-hal 30 gives `TextureUses::RESOURCE` is `SHADER_READ_ONLY_OPTIMAL`). A
//!    [`WgpuTarget`]'s present samples the image in its shader blit (a bind group of the
//!    image's view, `textureLoad`), recorded only into the command buffer that goes in the
//!    acquire's own submit, after the acquire's barriers and its tracked transition: wgpu's
//!    tracker holds `RESOURCE` for the image there, the state a sampled binding needs, so
//!    wgpu records no barrier of its own for it, and the blit reads the image in the layout
//!    the raw acquire left it in, visible to it (the acquire's second scope is every later
//!    command, `MEMORY_READ`). The view wgpu-hal makes for the binding asks only usages the
//!    image has (contract 3). The release that follows the blit in the same submit (and any
//!    later release) has every earlier command in its first scope, the blit's read included;
//!    a second tracked transition before it brings wgpu's state back to `RESOURCE` where the
//!    present copies instead, and after a [`WgpuVideoPlanes`] upload's copies (which read
//!    their shared textures as `COPY_SRC`; wgpu puts its own barriers before each command
//!    buffer that needs another state), so the raw release always finds
//!    `SHADER_READ_ONLY_OPTIMAL`. A [`WgpuVideoPlanes`] upload's blits read their shared
//!    textures as the present's blit reads its image, under the same argument. The
//!    application's command buffer given to [`CudaWrite::finish_then_release`] goes where the
//!    present's blit goes: whatever state it leaves the texture in (sampled, `COPY_SRC`,
//!    `COPY_DST`: its usages allow no other), wgpu records its own barrier before it and the
//!    second tracked transition brings the state back to `RESOURCE` before the release.
//! 7. **External memory and semaphores**: a successful `cuImportExternalMemory` or
//!    `cuImportExternalSemaphore` takes the file descriptor (closed by cuda-gl on failure);
//!    CUDA's surface, array and import are destroyed before Vulkan frees the memory, and CUDA's
//!    semaphore before Vulkan's (one struct, field order).
//!
//! # The GL route
//!
//! On a device of wgpu's GL backend over a GL context on the CUDA GPU that the program keeps
//! current (from `open_gl_adapter` and `open_gl_device`), a [`WgpuTarget`] in interop mode
//! draws each frame in place into a GL texture that cuda-gl made in that context and registered
//! with CUDA: mapped on the frame's stream when its surface is asked for, unmapped at the
//! present, which then submits wgpu's blit of it into the texture the application samples;
//! [`WgpuVideoPlanes`] in interop mode copies each plane into a GL texture of that kind (one map
//! of both, two copies, one unmap), then submits wgpu's copies of both into the textures the
//! application samples. GL has no semaphore to share: map and unmap order CUDA's work and GL's
//! in the one context. No CPU wait.
//!
//! # Contracts relied on by the GL route
//!
//! Each `unsafe` block names the one it rests on (`SAFETY G1`, ...).
//!
//! - **G1. `wgpu_hal::gles::Adapter::new_external`**: the GL context is current when the
//!   adapter is made (asked just before), and whenever wgpu makes, uses or drops anything of it:
//!   the caller of `open_gl_adapter` vouches for that (its `# Safety` 1), cuda-gl's calls on
//!   its behalf included. So the GL context current in a [`WgpuTarget`]'s calls is the one
//!   wgpu's device runs on: the frame texture is made in it, and every map and unmap of its
//!   registration checks that this same context is current (the registration's owner check).
//! - **G2. `wgpu::Instance::create_adapter_from_hal`** asks for an adapter "created from this
//!   instance's internal handle": an adapter of `new_external` is of no instance. wgpu-core 30
//!   (`Instance::create_adapter_from_hal`) only keeps it in the instance's registry, and the
//!   adapter's GL context has no EGL display of an instance's (`AdapterContext::egl` is
//!   `None`), so no instance state is used.
//! - **G3. `wgpu_hal::gles::Device::texture_from_raw` and
//!   `wgpu::Device::create_texture_from_hal`**: the name is a texture that cuda-gl made in the
//!   device's context (G1) as the descriptors say: `GL_TEXTURE_2D` (the target wgpu-hal gives
//!   a 2-D descriptor of one layer), one level, one sample, of the internal format wgpu-hal
//!   maps the format to (`GL_RGBA8`, `GL_RGBA32F`, `GL_R8`, `GL_R32F`, and the video planes'
//!   `GL_RG8`, `GL_R16`, `GL_RG16`; immutable storage where
//!   the context has it, as wgpu-hal's own: a test compares the two on any GL); initialized
//!   (cleared by CUDA before it is wrapped); GL has no layout, so `UNINITIALIZED` is its state.
//!   With a drop callback wgpu-hal never deletes it (`destroy_texture` deletes only textures
//!   without one): the callback holds cuda-gl's texture until wgpu destroys its texture, which
//!   wgpu does once no submit uses it, but also whenever the device is destroyed or lost (it
//!   destroys every texture then: safe code can do that while CUDA holds the texture mapped,
//!   so cuda-gl makes the texture itself rather than register one of wgpu's). cuda-gl deletes
//!   it once both wgpu's callback and the target have let go, after its registration is gone,
//!   with its context current (checked; otherwise it is leaked).
//! - **G4. Ordering**: `cuGraphicsMapResources` orders the stream's later work after the GL
//!   commands issued in the context before it, and `cuGraphicsUnmapResources` the GL commands
//!   issued after it after the stream's work before it (CUDA's graphics interoperability).
//!   wgpu-hal's GL queue issues a submit's GL commands inside `Queue::submit` (wgpu-hal 30,
//!   `gles/queue.rs`), and nothing but the present's blit (the video planes' copies), submitted
//!   after the unmap, uses the frame texture (plane textures) in wgpu (never handed out): the
//!   blit reads what CUDA wrote, and the next map comes after the blit's reads.
//! - **G5. `as_hal` guards** (device, texture) are only read and dropped at once: a texture's
//!   holds wgpu's destruction lock while it lives.
//!
//! # Other threads on the queue
//! Other threads may submit on the application's wgpu queue while a [`WgpuTarget`]'s present,
//! a [`WgpuVideoPlanes::upload`] or a [`CudaWrite`] hands images over (their own passes, which
//! may sample the target's or the planes' textures). CUDA writes only cuda-gl's private shared
//! textures, never a texture the application samples. The semaphore's signal is added after
//! the release barriers were submitted, and a signal's first scope covers every command
//! earlier in submission order. The wait is added before the acquire's barriers are submitted,
//! and a wait's second scope covers every command later in submission order, at every stage
//! (the wait's stage mask is `ALL_COMMANDS`). (Vulkan spec, "Semaphore Signaling", "Semaphore
//! Waiting" and `vkQueueSubmit`; contract 5 above.)
//!
//! wgpu attaches them to the queue's next submit, whichever thread makes it, so a submit of
//! another thread that takes one keeps the order: one that takes the wait runs only after
//! CUDA's work, and CUDA waits for the commands of one that takes the signal (either is
//! delayed, never reordered). (A [`SharedTexture`]'s own texture is another matter: between
//! `write` and `finish` no submit may use it, see [`SharedTexture::write`].)
//!
//! On [the GL route](#the-gl-route) there is no semaphore: CUDA's map and unmap in the one GL
//! context order the work, and wgpu is called only where that context is current, by one
//! thread at a time (`open_gl_adapter`'s `# Safety`).
//!
//! # Lifetimes, whatever is dropped first
//! The [`SharedTexture`] holds clones of the wgpu device and queue; its CUDA and Vulkan objects are
//! shared between it and the drop callback of wgpu's texture, and released by whichever lets go
//! last: by then wgpu is done with every submit that used them, and CUDA with every write (each is
//! followed by an event that the release waits for, at most the [wait limit](crate::wait_limit),
//! 10 s by default; a leaked [`CudaWrite`] is recovered by synchronizing the CUDA context, at most
//! the wait limit, or its objects are leaked). Dropping the application's `wgpu::Device` or `Queue`
//! first changes nothing.
//!
//! # A CUDA fault stalls wgpu's queue
//! Each hand-back to wgpu (a [`CudaWrite::finish`], a [`WgpuTarget`] frame's present, a
//! [`WgpuVideoPlanes::upload`] in interop mode) queues, on the application's wgpu queue, a wait
//! for a semaphore value that CUDA signals once the write's work is done: the submit returns at
//! once, and the GPU waits. If the CUDA context takes a sticky error before that signal runs
//! (a kernel of the application's that faults, in any stream of the context), the signal never
//! comes, and every later submit on that wgpu queue waits behind it: Vulkan's semaphore waits
//! have no timeout. Nothing is undefined, but the queue stalls for good. What the application
//! can do: wait for its own submits with a limit, `device.poll(wgpu::PollType::Wait {
//! submission_index: Some(index), timeout: Some(limit) })` (a timeout is `PollError::Timeout`),
//! rather than `PollType::wait_indefinitely()`; check its CUDA work's errors
//! ([`Stream::synchronize`](crate::Stream::synchronize) returns the fault); and after a fault,
//! drop the CUDA context's objects and the wgpu device and make new ones (a context with a
//! sticky error refuses all further work).

mod blit;
#[cfg(test)]
mod blit_tests;
mod cuda_image;
mod device;
mod format;
#[cfg(feature = "wgpu-gl")]
mod gl_device;
#[cfg(feature = "wgpu-gl")]
mod gl_mode;
#[cfg(all(test, feature = "wgpu-gl"))]
mod gl_tests;
#[cfg(feature = "wgpu-gl")]
mod gl_texture;
mod handoff;
mod interop_mode;
mod place;
mod read_back;
mod scope;
mod staged_mode;
mod target;
mod texture;
mod timeline;
mod video_planes;
mod vk_image;
mod vk_info;

pub use crate::error::wgpu::WgpuError;
pub use device::{check_adapter, check_device, find_adapter, open_device};
pub use format::SharedFormat;
#[cfg(feature = "wgpu-gl")]
pub use gl_device::{check_gl_device, open_gl_adapter, open_gl_device};
#[cfg(feature = "egui-wgpu")]
pub(crate) use scope::scoped;
pub use target::WgpuTarget;
pub use texture::{CudaWrite, SharedTexture};
pub use video_planes::WgpuVideoPlanes;

/// wgpu-hal's Vulkan backend.
type Vulkan = wgpu::hal::api::Vulkan;

/// Mesa's lavapipe (software Vulkan) for the unit tests that need a wgpu device but no CUDA:
/// one module, which the tests of `read_back` and `interop_mode` share.
#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]
#[path = "../../tests/harness/lavapipe.rs"]
mod lavapipe_harness;
