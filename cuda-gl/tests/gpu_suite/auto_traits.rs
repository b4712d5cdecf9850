//! The auto traits of every public type, asserted at compile time, so that a change to them is
//! deliberate: a type that gains `Send` may carry a GL call to a thread where another context is
//! current, and a guard that gains `Send` may unmap on a thread with no GL context.
//!
//! Why each is what it is:
//! - handles whose calls bind the CUDA context themselves (context, streams, events, modules,
//!   device memory) are `Send + Sync`;
//! - registered resources are `Send + Sync`: every call and `Drop` checks that the GL context
//!   that registered them is current (`Error::WrongGlContext`);
//! - mapping guards and objects over a mapping borrow the registration and the stream and carry
//!   raw handles: neither `Send` nor `Sync`;
//! - the external-memory types that call GL (`ExternalRing`, `GlMemoryBuffer`, their guards) are
//!   neither: their GL calls belong to the thread where their context is current.
#![allow(dead_code)]

use static_assertions::{assert_impl_all, assert_not_impl_any};

use cuda_gl::{
    ArrayFormat, MappedArray, MappedMipmappedArray, Surface, SurfaceObject, Tex, TexDesc, TexObject,
};
use cuda_gl::{
    Context, CudaError, Device, DeviceBuffer, DeviceLabel, DevicePtr, Error, Event, Function,
    GlDeviceList, ImageTarget, LaunchConfig, MapFlags, MappedAll, MappedBuffer, MappedImage,
    Module, PinnedBuffer, RegisterFlags, RegisteredBuffer, RegisteredImage, Stream, StreamFlags,
};

// Plain values.
assert_impl_all!(Device: Send, Sync, Copy);
assert_impl_all!(GlDeviceList: Send, Sync, Copy);
assert_impl_all!(DeviceLabel: Send, Sync);
assert_impl_all!(CudaError: Send, Sync);
assert_impl_all!(Error: Send, Sync);
assert_impl_all!(LaunchConfig: Send, Sync, Copy);
assert_impl_all!(StreamFlags: Send, Sync, Copy);
assert_impl_all!(RegisterFlags: Send, Sync, Copy);
assert_impl_all!(MapFlags: Send, Sync, Copy);
assert_impl_all!(ImageTarget: Send, Sync, Copy);
assert_impl_all!(ArrayFormat: Send, Sync, Copy);
assert_impl_all!(cuda_gl::BufferName: Send, Sync, Copy);
assert_impl_all!(cuda_gl::TextureName: Send, Sync, Copy);
assert_impl_all!(cuda_gl::RenderbufferName: Send, Sync, Copy);
assert_impl_all!(TexDesc: Send, Sync, Copy);

// CUDA handles: every call binds the context first.
assert_impl_all!(Context: Send, Sync);
assert_impl_all!(Stream: Send, Sync);
assert_impl_all!(Event: Send, Sync);
assert_impl_all!(Module: Send, Sync);
assert_impl_all!(Function: Send, Sync);
assert_impl_all!(DeviceBuffer<u32>: Send, Sync);
assert_impl_all!(PinnedBuffer<u32>: Send, Sync);
// A kernel argument: a number with a lifetime.
assert_impl_all!(DevicePtr<'static>: Send, Sync, Copy);
assert_impl_all!(Surface<'static>: Send, Sync, Copy);
assert_impl_all!(Tex<'static>: Send, Sync, Copy);

// Registered resources: the owning GL context is checked on every call and in Drop.
assert_impl_all!(RegisteredBuffer: Send, Sync);
assert_impl_all!(RegisteredImage: Send, Sync);

// Guards and objects over a mapping stay on the mapping's thread.
assert_not_impl_any!(MappedBuffer<'static>: Send, Sync);
assert_not_impl_any!(MappedImage<'static>: Send, Sync);
assert_not_impl_any!(MappedAll<'static, (MappedBuffer<'static>, MappedImage<'static>)>: Send, Sync);
assert_not_impl_any!(MappedAll<'static, Vec<MappedBuffer<'static>>>: Send, Sync);
assert_not_impl_any!(MappedArray<'static>: Send, Sync);
assert_not_impl_any!(MappedMipmappedArray<'static>: Send, Sync);
// Owned surface and texture objects make no driver call when they drop (they are retired into
// the registration, behind a mutex), and they cannot outlive the mapping they borrow.
assert_impl_all!(SurfaceObject<'static>: Send, Sync);
assert_impl_all!(TexObject<'static>: Send, Sync);
// A batch entry is a mutable borrow of a resource.
// The display target's GL calls go to the context current on the calling thread; its frames
// borrow it.
assert_not_impl_any!(cuda_gl::display::DisplayTarget: Send, Sync);
assert_not_impl_any!(cuda_gl::display::Frame<'static, cuda_gl::Stream>: Send, Sync);

// Video: plain values, and the converter, a CUDA handle (its kernel) that binds the context
// for each call and makes no GL call.
assert_impl_all!(cuda_gl::video::VideoLayout: Send, Sync, Copy);
assert_impl_all!(cuda_gl::video::ColorSpace: Send, Sync, Copy);
assert_impl_all!(cuda_gl::video::VideoError: Send, Sync);
assert_impl_all!(cuda_gl::video::VideoFrame<'static>: Send, Sync, Copy);
assert_impl_all!(cuda_gl::video::Converter: Send, Sync);
// The video planes' calls check that the GL context of their textures is current (their GL
// calls, and the registrations' map, go to that context): they may move to its thread. Their
// stream mode's ring (`unsafe impl Send, Sync`) is held by them alone, and `&VideoPlanes`
// reaches no GL or CUDA call.
assert_impl_all!(cuda_gl::video::VideoPlanes: Send, Sync);

#[cfg(feature = "egl")]
mod egl {
    use cuda_gl::egl::{
        EglDeviceInfo, EglError, EglErrorCode, EglPlatform, HeadlessConfig, HeadlessContext,
        Offscreen,
    };
    use static_assertions::{assert_impl_all, assert_not_impl_any};

    assert_impl_all!(EglPlatform: Send, Sync, Copy);
    assert_impl_all!(EglErrorCode: Send, Sync, Copy);
    assert_impl_all!(EglDeviceInfo: Send, Sync);
    assert_impl_all!(EglError: Send, Sync);
    assert_impl_all!(HeadlessConfig: Send, Sync);
    // EGL calls are thread-safe; a context moves between threads released, as EGL allows.
    assert_impl_all!(HeadlessContext: Send);
    assert_not_impl_any!(HeadlessContext: Sync);
    // Its drop makes GL calls, to the context current on the dropping thread.
    assert_not_impl_any!(Offscreen: Send, Sync);
}

#[cfg(unix)]
mod external {
    use cuda_gl::external::{
        CudaWrite, ExportableMemory, ExternalGl, ExternalRing, FrameRead, FrameStream, FrameWrite,
        GlMemoryBuffer, GlRead,
    };
    use static_assertions::{assert_impl_all, assert_not_impl_any};

    // Loaded entry points and CUDA memory: no GL call in their drops.
    assert_impl_all!(ExternalGl: Send, Sync);
    assert_impl_all!(ExportableMemory: Send, Sync);
    // Their drops and calls go to the GL context current on the calling thread.
    assert_not_impl_any!(ExternalRing: Send, Sync);
    assert_not_impl_any!(GlMemoryBuffer: Send, Sync);
    assert_not_impl_any!(GlRead<'static>: Send, Sync);
    assert_not_impl_any!(CudaWrite<'static>: Send, Sync);
    assert_not_impl_any!(FrameStream: Send, Sync);
    // What the producer and consumer get: addresses and names, no GL call of their own.
    assert_impl_all!(FrameWrite<'static>: Send, Sync);
    assert_impl_all!(FrameRead: Send, Sync, Copy);
}

#[cfg(feature = "cudarc")]
mod cudarc_views {
    use cuda_gl::cudarc_interop::{MappedView, MappedViewMut};
    use static_assertions::assert_not_impl_any;

    assert_not_impl_any!(MappedView<'static, u32>: Send, Sync);
    assert_not_impl_any!(MappedViewMut<'static, u32>: Send, Sync);
}

/// The guards are covariant in their lifetime: a guard of a longer borrow passes where a shorter
/// one is asked for (these compile only if so).
#[allow(dead_code)]
fn guards_are_covariant<'short, 'long: 'short>(
    buffer: cuda_gl::MappedBuffer<'long>,
    image: cuda_gl::MappedImage<'long>,
) -> (cuda_gl::MappedBuffer<'short>, cuda_gl::MappedImage<'short>) {
    (buffer, image)
}

#[cfg(feature = "wgpu")]
mod wgpu_interop {
    use cuda_gl::Stream;
    use cuda_gl::wgpu_interop::{CudaWrite, SharedTexture, WgpuTarget, WgpuVideoPlanes};
    use static_assertions::{assert_impl_all, assert_not_impl_any};

    // Vulkan and CUDA handles only (no GL call): it may move to and be shared with the thread
    // that drives wgpu; every CUDA call binds its context first.
    assert_impl_all!(SharedTexture: Send, Sync);
    // The write guard: CUDA and wgpu calls only, as the texture's, over a `Send + Sync` stream.
    assert_impl_all!(CudaWrite<'static, Stream>: Send, Sync);
    // The wgpu display target and video planes, alike: CUDA objects whose calls bind the
    // context, wgpu objects (`Send + Sync` in wgpu), and on the GL route cuda-gl's GL textures,
    // whose map, unmap and deletion check their GL context; the drop of either on the GL route
    // leaks wgpu's objects rather than have wgpu delete them in another context. wgpu's own
    // GL calls are `open_gl_adapter`'s contract, as for the application's wgpu objects. A
    // render thread or an ECS resource may own the target; a decoding thread the planes.
    assert_impl_all!(WgpuTarget: Send, Sync);
    assert_impl_all!(WgpuVideoPlanes: Send, Sync);
    // Its frames borrow the target and the stream, and hold mappings: they stay put.
    assert_not_impl_any!(cuda_gl::display::Frame<'static, Stream>: Send, Sync);
}

// The wgpu target in egui: the target, an egui texture id and wgpu objects, as the target.
#[cfg(feature = "egui-wgpu")]
static_assertions::assert_impl_all!(cuda_gl::egui_interop::EguiWgpuImage: Send, Sync);

#[cfg(feature = "egui")]
mod egui_interop {
    use cuda_gl::egui_interop::EguiImage;
    use static_assertions::assert_not_impl_any;

    // Its GL calls go to the context current on the calling thread.
    assert_not_impl_any!(EguiImage: Send, Sync);
}

#[test]
fn auto_traits_are_asserted_at_compile_time() {
    // The assertions above are checked when this module compiles (with the rest of the suite,
    // which CI builds); this test names them in the test list.
}
