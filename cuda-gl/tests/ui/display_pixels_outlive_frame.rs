//! A frame's pixels kept past the frame: the next frame (or a resize) may free or reuse them.
use cuda_gl::display::DisplayTarget;

fn keep(target: &mut DisplayTarget, stream: &cuda_gl::Stream) -> cuda_gl::DevicePtr<'static> {
    let frame = target.frame(stream).unwrap();
    let pixels = frame.pixels().unwrap();
    pixels.ptr()
}

fn main() {
    let _ = keep;
}
