//! Mesa's lavapipe (software Vulkan) for the wgpu tests that need no GPU: included with
//! `#[path]` by `tests/blit_lavapipe.rs` and by the read-back's unit tests
//! (`src/wgpu_interop/read_back/tests.rs`). Needs `apt-get install mesa-vulkan-drivers
//! libvulkan1` (`ci/test.sh` installs it).

/// Lavapipe's adapter, or `None` after printing why `test` is skipped; a failure instead under
/// `CUDA_GL_REQUIRE_VULKAN_SW=1` (which `ci/test.sh` sets) or `CUDA_GL_REQUIRE_MESA=1`.
pub fn lavapipe(test: &str) -> Option<wgpu::Adapter> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let mut listed = std::pin::pin!(instance.enumerate_adapters(wgpu::Backends::VULKAN));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    // Ready at once on native wgpu.
    let std::task::Poll::Ready(adapters) = listed.as_mut().poll(&mut cx) else {
        panic!("{test}: wgpu's adapter list was not ready at once");
    };
    let found = adapters
        .into_iter()
        .find(|a| a.get_info().device_type == wgpu::DeviceType::Cpu);
    if found.is_none() {
        let reason = "no software Vulkan adapter (lavapipe): install mesa-vulkan-drivers and \
                      libvulkan1, or point VK_DRIVER_FILES at Mesa's lvp_icd json";
        let required = ["CUDA_GL_REQUIRE_VULKAN_SW", "CUDA_GL_REQUIRE_MESA"]
            .into_iter()
            .find(|v| std::env::var(v).is_ok_and(|v| v == "1"));
        if let Some(var) = required {
            panic!("{test}: {var}=1, but the test cannot run: {reason}");
        }
        eprintln!("{test}: skipped: {reason}");
    }
    found
}
