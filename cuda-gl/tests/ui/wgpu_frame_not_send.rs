// A wgpu target moves to another thread (`Send + Sync`, as wgpu's own objects: the outer spawn
// compiles); its frames do not: a frame borrows the target and the stream, and on wgpu's GL
// backend holds a mapping made in the GL context current on the thread that began it.
use cuda_gl::Stream;
use cuda_gl::wgpu_interop::WgpuTarget;

fn hand_off(mut target: WgpuTarget, stream: Stream) {
    std::thread::spawn(move || {
        let frame = target.frame(&stream);
        std::thread::scope(|s| {
            s.spawn(move || drop(frame));
        });
    });
}

fn main() {}
