//! Error type of the [`wgpu_interop`](crate::wgpu_interop) module (feature `wgpu`).
//!
//! It lives here, with [`Error`](super::Error), so that `Error::Wgpu` can hold a [`WgpuError`]
//! without the error types depending on the `wgpu_interop` module (as `egl.rs` does for EGL);
//! `cuda_gl::wgpu_interop` re-exports it.

/// What the wgpu/Vulkan side of [`wgpu_interop`](crate::wgpu_interop) refused or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WgpuError {
    /// The wgpu adapter or device does not run on wgpu's Vulkan backend.
    #[error(
        "{call}: the wgpu {what} runs on the {backend} backend, not Vulkan\nhelp: the GPU-side \
         hand-off needs wgpu's Vulkan backend: create the instance with \
         `wgpu::Backends::VULKAN`, find the adapter with `cuda_gl::wgpu_interop::find_adapter` \
         and open the device with `cuda_gl::wgpu_interop::open_device` (or, with feature \
         `wgpu-gl`, open wgpu's GL backend on a GL context on the CUDA GPU with \
         `cuda_gl::wgpu_interop::open_gl_adapter`, then `open_gl_device`)"
    )]
    NotVulkan {
        /// The call that refused it.
        call: &'static str,
        /// `adapter` or `device`.
        what: &'static str,
        /// The backend it runs on, e.g. `Gl`.
        backend: String,
    },

    /// The wgpu adapter or device does not run on wgpu's GL backend (the GL route's check).
    #[error(
        "{call}: the wgpu {what} runs on the {backend} backend, not GL\nhelp: the GL route \
         needs wgpu's GL backend on a GL context on the CUDA GPU: open the adapter with \
         `cuda_gl::wgpu_interop::open_gl_adapter` and the device with `open_gl_device` \
         (feature `wgpu-gl`); a device on wgpu's Vulkan backend is checked with \
         `cuda_gl::wgpu_interop::check_device`"
    )]
    NotGl {
        /// The call that refused it.
        call: &'static str,
        /// `adapter` or `device`.
        what: &'static str,
        /// The backend it runs on, e.g. `Vulkan`.
        backend: String,
    },

    /// The wgpu adapter or device runs on a GL context that wgpu made itself (on its own EGL
    /// display, from a `wgpu::Instance` with `Backends::GL`): wgpu makes that context current
    /// only inside its own calls, so CUDA can map no texture of it.
    #[error(
        "{call}: wgpu's GL backend here runs on a GL context that wgpu made itself (its own \
         EGL display), which is current only inside wgpu's own calls, so CUDA cannot map its \
         textures\nhelp: open the adapter with `cuda_gl::wgpu_interop::open_gl_adapter` on a \
         GL context on the CUDA GPU that your program keeps current (headless: \
         `cuda_gl::egl::HeadlessContext::for_cuda_device`), then the device with \
         `open_gl_device`; or use wgpu's Vulkan backend with \
         `cuda_gl::wgpu_interop::find_adapter` and `open_device`"
    )]
    GlOwnContext {
        /// The call that refused it.
        call: &'static str,
    },

    /// wgpu's GL backend does not take the GL context current on this thread (wgpu-hal needs
    /// OpenGL 3.3, or OpenGL ES 3.0, or later).
    #[error(
        "{call}: wgpu's GL backend does not take the current GL context ({version})\nhelp: \
         make an OpenGL 3.3 (or OpenGL ES 3.0) or later context current before the call: \
         `cuda_gl::egl::HeadlessContext::for_cuda_device` makes an OpenGL 4.5 core one; \
         RUST_LOG=wgpu_hal=warn says what wgpu refused"
    )]
    GlUnusable {
        /// The call that refused it.
        call: &'static str,
        /// The context's `GL_VERSION`.
        version: String,
    },

    /// No Vulkan adapter of the wgpu instance is the CUDA device (compared by device UUID).
    #[error(
        "{call}: no Vulkan adapter is the CUDA device {cuda} (adapters seen: {seen})\nhelp: \
         install NVIDIA's Vulkan driver (libnvidia-gl, its ICD file nvidia_icd.json), or point \
         the Vulkan loader at it with VK_DRIVER_FILES=/path/to/nvidia_icd.json; with several \
         GPUs, check that CUDA_VISIBLE_DEVICES does not hide it"
    )]
    NoAdapter {
        /// The call that looked.
        call: &'static str,
        /// The CUDA device, by name and UUID.
        cuda: String,
        /// Each Vulkan adapter seen, by name and UUID (`none` when there was none).
        seen: String,
    },

    /// The wgpu adapter or device is on another GPU than the CUDA context.
    #[error(
        "{call}: the wgpu {what} ({vulkan}) is another GPU than the CUDA context's ({cuda})\n\
         help: find the adapter with `cuda_gl::wgpu_interop::find_adapter`, which picks the \
         Vulkan adapter whose device UUID is the CUDA device's, and open the device on it with \
         `cuda_gl::wgpu_interop::open_device`; or make the CUDA context on the adapter's GPU"
    )]
    OtherGpu {
        /// The call that refused it.
        call: &'static str,
        /// `adapter` or `device`.
        what: &'static str,
        /// The Vulkan device, by name and UUID.
        vulkan: String,
        /// The CUDA device, by name and UUID.
        cuda: String,
    },

    /// The Vulkan device lacks something the hand-off needs: an extension (not offered, or not
    /// enabled on a device the application opened itself), Vulkan 1.2, or timeline semaphores.
    #[error(
        "{call}: the Vulkan device {device} lacks {missing}\nhelp: open the wgpu device with \
         `cuda_gl::wgpu_interop::open_device`, which enables VK_KHR_external_memory_fd and \
         VK_KHR_external_semaphore_fd; if the adapter does not offer them, use NVIDIA's Vulkan \
         driver (Mesa's lavapipe has no VK_KHR_external_semaphore_fd)"
    )]
    Missing {
        /// The call that refused it.
        call: &'static str,
        /// The Vulkan device, by name.
        device: String,
        /// What is missing, e.g. `VK_KHR_external_semaphore_fd (not enabled)`.
        missing: String,
    },

    /// The Vulkan driver cannot export an image of this format, or a timeline semaphore, as an
    /// `OPAQUE_FD`.
    #[error(
        "{call}: the Vulkan driver cannot export {what} as an OPAQUE_FD\nhelp: use another \
         format (RGBA8 is exportable on NVIDIA's driver), or a driver that supports external \
         memory and semaphores (NVIDIA's)"
    )]
    NotExportable {
        /// The call that said so.
        call: &'static str,
        /// What, e.g. `an R8G8B8A8_UNORM optimal-tiling image`.
        what: String,
    },

    /// The Vulkan driver exports images of this format only up to a size smaller than the one
    /// asked for (`maxExtent` of an exportable image), which may be below wgpu's own
    /// `max_texture_dimension_2d`: a limit of the interop mode, not of the size itself.
    #[error(
        "{call}: the Vulkan driver exports {format} images of at most {}x{} texels, not \
         {}x{}\nhelp: use a smaller size, or the staged mode (Mode::Staged), which only wgpu's \
         own limits bound: WgpuTarget::new and WgpuVideoPlanes made with mode None fall back to it \
         by themselves (a WgpuTarget's resize keeps its mode: make a new target)",
        .max.0, .max.1, .size.0, .size.1
    )]
    ExportTooLarge {
        /// The call that refused it.
        call: &'static str,
        /// The Vulkan format, e.g. `R8_UNORM`.
        format: String,
        /// The width and height asked for.
        size: (u32, u32),
        /// The largest exportable width and height.
        max: (u32, u32),
    },

    /// The wgpu device was opened without a feature that a texture format needs
    /// (`TEXTURE_FORMAT_16BIT_NORM` for `R16Unorm` and `Rg16Unorm`: P010 planes).
    #[error(
        "{call}: {what} needs the wgpu feature {feature}, which the device was not opened \
         with\nhelp: add `wgpu::Features::{feature}` to the device descriptor's \
         `required_features` (`cuda_gl::wgpu_interop::open_device` adds \
         TEXTURE_FORMAT_16BIT_NORM itself where the adapter offers it: see \
         `adapter.features()`); on an adapter without it, show P010 frames converted to RGBA8 \
         with `WgpuTarget::show_video`"
    )]
    MissingFeature {
        /// The call that refused it.
        call: &'static str,
        /// The missing features, e.g. `TEXTURE_FORMAT_16BIT_NORM`.
        feature: String,
        /// What needs them, e.g. `a R16Unorm texture`.
        what: String,
    },

    /// The shared texture was destroyed through wgpu (`wgpu::Texture::destroy` on a clone of
    /// it), so wgpu refuses every use of it.
    #[error(
        "{call}: the shared texture was destroyed with wgpu::Texture::destroy\nhelp: drop the \
         SharedTexture instead of destroying its wgpu texture, and make a new one"
    )]
    TextureDestroyed {
        /// The call that found it.
        call: &'static str,
    },

    /// A Vulkan call failed.
    #[error("{call} failed: {result}\nhelp: {help}")]
    Vulkan {
        /// The Vulkan call, e.g. `vkAllocateMemory`.
        call: &'static str,
        /// Its result code, e.g. `ERROR_OUT_OF_DEVICE_MEMORY`.
        result: String,
        /// What to do about it.
        help: &'static str,
    },

    /// wgpu refused a call of cuda-gl's on the application's objects (caught by an error
    /// scope, not left to wgpu's uncaptured-error handler, which panics by default).
    #[error(
        "{call}: wgpu refused it: {message}\nhelp: sample and copy the textures that cuda-gl \
         writes (a WgpuTarget's texture(), WgpuVideoPlanes' luma() and chroma(), a \
         SharedTexture's texture()), but never destroy them; take them again after a resize or \
         a frame of another size (the old ones are no longer written); after a lost device, \
         open a new device and make them anew"
    )]
    Refused {
        /// The call, e.g. `wgpu::Queue::write_texture`.
        call: &'static str,
        /// wgpu's message.
        message: String,
    },

    /// wgpu ran out of memory in a call of cuda-gl's on the application's device (caught by
    /// an error scope).
    #[error(
        "{call}: wgpu is out of memory: {message}\nhelp: free GPU memory (textures, buffers, \
         other processes' work), or use a smaller target"
    )]
    OutOfMemory {
        /// The call, e.g. `wgpu::Device::create_texture`.
        call: &'static str,
        /// wgpu's message.
        message: String,
    },

    /// wgpu refused to open the device (`Adapter::create_device_from_hal` or wgpu-hal's
    /// device creation).
    #[error(
        "{call} failed: {message}\nhelp: ask for features and limits that the adapter offers \
         (`adapter.features()`, `adapter.limits()`)"
    )]
    OpenDevice {
        /// The call, e.g. `wgpu_hal::vulkan::Adapter::open_with_callback`.
        call: &'static str,
        /// wgpu's message.
        message: String,
    },
}

impl WgpuError {
    /// The refusal in a word, for a display target's one-line report.
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            Self::NotVulkan { .. } => "not_vulkan",
            Self::NoAdapter { .. } => "no_adapter",
            Self::OtherGpu { .. } => "other_gpu",
            Self::Missing { .. } => "missing_extension",
            Self::NotExportable { .. } => "not_exportable",
            Self::MissingFeature { .. } => "missing_feature",
            Self::ExportTooLarge { .. } => "export_limit",
            Self::NotGl { .. } => "not_gl",
            Self::GlOwnContext { .. } => "wgpu_own_gl_context",
            Self::GlUnusable { .. } => "gl_unusable",
            _ => "wgpu",
        }
    }

    /// Whether [`find_adapter`](crate::wgpu_interop::find_adapter) and
    /// [`open_device`](crate::wgpu_interop::open_device) are the fix: a device that is
    /// not wgpu's Vulkan one on the CUDA GPU with the extensions (what a display report's
    /// `fix` then says).
    pub(crate) fn fixed_by_open_device(&self) -> bool {
        matches!(
            self,
            Self::NotVulkan { .. } | Self::OtherGpu { .. } | Self::Missing { .. }
        )
    }

    /// Whether `open_gl_adapter` and `open_gl_device` are the fix: a device on
    /// wgpu's GL backend that cuda-gl cannot map textures of (what a display report's `fix`
    /// then says).
    pub(crate) fn fixed_by_open_gl_device(&self) -> bool {
        matches!(self, Self::GlOwnContext { .. })
    }

    /// Whether the error says that this machine cannot do it (no Vulkan adapter on the CUDA
    /// GPU, a missing extension or export, a GL context too old for wgpu), rather than a bug
    /// of the program: see
    /// [`Error::is_unsupported_setup`](super::Error::is_unsupported_setup).
    pub fn is_unsupported_setup(&self) -> bool {
        matches!(
            self,
            Self::NoAdapter { .. } | Self::NotExportable { .. } | Self::GlUnusable { .. }
        ) || matches!(self, Self::Missing { missing, .. } if !missing.contains("not enabled"))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Every variant names the call and ends with what to do.
    #[test]
    fn each_error_names_its_call_and_says_what_to_do() {
        let call = "cuda_gl::wgpu_interop::check_device";
        let errors = [
            WgpuError::NotVulkan {
                call,
                what: "device",
                backend: "Gl".into(),
            },
            WgpuError::NoAdapter {
                call,
                cuda: "NVIDIA H200 (uuid)".into(),
                seen: "none".into(),
            },
            WgpuError::NotGl {
                call,
                what: "device",
                backend: "Vulkan".into(),
            },
            WgpuError::GlOwnContext { call },
            WgpuError::GlUnusable {
                call,
                version: "2.1 Mesa 24.0.5".into(),
            },
            WgpuError::OtherGpu {
                call,
                what: "adapter",
                vulkan: "llvmpipe (uuid)".into(),
                cuda: "NVIDIA H200 (uuid)".into(),
            },
            WgpuError::Missing {
                call,
                device: "NVIDIA H200".into(),
                missing: "VK_KHR_external_semaphore_fd (not enabled)".into(),
            },
            WgpuError::NotExportable {
                call,
                what: "a timeline semaphore".into(),
            },
            WgpuError::MissingFeature {
                call,
                feature: "TEXTURE_FORMAT_16BIT_NORM".into(),
                what: "a R16Unorm texture".into(),
            },
            WgpuError::ExportTooLarge {
                call,
                format: "R8_UNORM".into(),
                size: (40000, 16),
                max: (32768, 32768),
            },
            WgpuError::TextureDestroyed { call },
            WgpuError::Vulkan {
                call,
                result: "ERROR_OUT_OF_DEVICE_MEMORY (-2)".into(),
                help: "free some memory",
            },
            WgpuError::OpenDevice {
                call,
                message: "features".into(),
            },
            WgpuError::OutOfMemory {
                call,
                message: "Not enough memory left.".into(),
            },
            WgpuError::Refused {
                call,
                message: "Texture has been destroyed".into(),
            },
        ];
        for e in errors {
            let text = e.to_string();
            assert!(text.starts_with(call), "{text}");
            let help = text.split("\nhelp: ").nth(1).unwrap_or_default();
            assert!(help.len() > 10, "no help line: {text}");
        }
    }

    /// Every caller's textures are named in the help of a refusal: the wgpu target's, the
    /// video planes', the shared texture's (it named only the target's).
    #[test]
    fn a_refusals_help_fits_each_texture_cuda_gl_writes() {
        let text = WgpuError::Refused {
            call: "wgpu::Queue::write_texture",
            message: "Texture has been destroyed".into(),
        }
        .to_string();
        let help = text.split("\nhelp: ").nth(1).unwrap_or_default();
        for name in ["WgpuTarget", "WgpuVideoPlanes", "luma()", "SharedTexture"] {
            assert!(help.contains(name), "{help}");
        }
    }

    #[test]
    fn only_what_the_machine_lacks_is_an_unsupported_setup() {
        let missing = |what: &str| WgpuError::Missing {
            call: "c",
            device: "d".into(),
            missing: what.into(),
        };
        assert!(
            missing("VK_KHR_external_memory_fd (not offered by the driver)").is_unsupported_setup()
        );
        assert!(!missing("VK_KHR_external_memory_fd (not enabled)").is_unsupported_setup());
        let other = WgpuError::OtherGpu {
            call: "c",
            what: "device",
            vulkan: "v".into(),
            cuda: "c".into(),
        };
        assert!(!other.is_unsupported_setup());
    }
}
