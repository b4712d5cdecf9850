//! Tests' headless GL: whatever this machine has, with no CUDA (Mesa's llvmpipe on CI and on
//! machines without NVIDIA's EGL, NVIDIA's GL on a GPU host), or a skip with the reason where
//! it has no EGL and none is required.
#![allow(clippy::panic)]

use super::{EglError, GlProfile, HeadlessConfig, HeadlessContext};

/// Whether a machine without a usable GL must fail these tests rather than skip them: on a GPU
/// host (`CUDA_GL_REQUIRE_GPU=1`), or under Mesa there (`CUDA_GL_REQUIRE_MESA=1`).
pub(crate) fn required() -> bool {
    ["CUDA_GL_REQUIRE_GPU", "CUDA_GL_REQUIRE_MESA"]
        .iter()
        .any(|knob| std::env::var(knob).is_ok_and(|v| v == "1"))
}

/// A headless GL context of `config` current on this thread, or `None` (after saying why) where
/// this machine has no EGL library and none is required.
pub(crate) fn any_gl_with(test: &str, config: &HeadlessConfig) -> Option<HeadlessContext> {
    match HeadlessContext::any_gl_with(config) {
        Ok(gl) => Some(gl),
        Err(e @ EglError::LibraryNotFound { .. }) if !required() => {
            eprintln!("{test}: skipped, no EGL: {e}");
            None
        }
        Err(e) => panic!("{test}: HeadlessContext::any_gl_with failed: {e}"),
    }
}

/// A compatibility-profile context of GL 4.6, 4.5 or 4.3, the first the driver makes: where the
/// application's pixel-transfer state exists, and where Mesa's queries differ from the core
/// profile's.
pub(crate) fn compat_config() -> HeadlessConfig {
    HeadlessConfig::default()
        .with_gl_versions(&[(4, 6), (4, 5), (4, 3)])
        .with_profile(GlProfile::Compatibility)
}

/// The test kernels of the GPU tests (`ext_fill_u32_slow` spins), for the crate's GPU lib tests.
pub(crate) const TEST_PTX: &str = include_str!("../../tests/kernels/test_kernels.ptx");

/// A headless GL context on CUDA device 0, current on this thread, or `None` after saying why;
/// a failure instead under `CUDA_GL_REQUIRE_GPU=1`: for the crate's GPU lib tests.
pub(crate) fn on_gpu(test: &str) -> Option<HeadlessContext> {
    let skip = |why: String| {
        if std::env::var("CUDA_GL_REQUIRE_GPU").is_ok_and(|v| v == "1") {
            panic!("{test}: CUDA_GL_REQUIRE_GPU=1, but the GPU test cannot run: {why}");
        }
        eprintln!("{test}: skipped: {why}");
        None
    };
    let device = match crate::Device::get(0) {
        Ok(d) => d,
        Err(e) => return skip(format!("no CUDA device 0: {e}")),
    };
    match HeadlessContext::for_cuda_device(&device) {
        Ok(gl) => Some(gl),
        Err(e) => skip(format!("no headless GL context on CUDA device 0: {e}")),
    }
}

/// [`any_gl_with`] the default configuration.
pub(crate) fn any_gl(test: &str) -> Option<HeadlessContext> {
    any_gl_with(test, &HeadlessConfig::default())
}

/// Warnings logged on this thread from now on, with a capturing logger installed for the
/// process (once; other tests' threads log into it too, and are told apart by thread).
pub(crate) struct Warnings {
    from: usize,
}

/// One warning: the thread that logged it and its message.
type Warning = (std::thread::ThreadId, String);

static WARNINGS: std::sync::Mutex<Vec<Warning>> = std::sync::Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            let mut all = WARNINGS.lock().unwrap_or_else(|p| p.into_inner());
            all.push((std::thread::current().id(), record.args().to_string()));
        }
    }

    fn flush(&self) {}
}

impl Warnings {
    /// Starts capturing.
    pub(crate) fn start() -> Warnings {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        INSTALL.call_once(|| {
            if log::set_logger(&Capture).is_ok() {
                log::set_max_level(log::LevelFilter::Warn);
            }
        });
        let from = WARNINGS.lock().unwrap_or_else(|p| p.into_inner()).len();
        Warnings { from }
    }

    /// The warnings this thread logged since [`start`](Self::start).
    pub(crate) fn here(&self) -> Vec<String> {
        let me = std::thread::current().id();
        let all = WARNINGS.lock().unwrap_or_else(|p| p.into_inner());
        (all.get(self.from..).unwrap_or_default().iter())
            .filter(|(thread, _)| *thread == me)
            .map(|(_, message)| message.clone())
            .collect()
    }
}
