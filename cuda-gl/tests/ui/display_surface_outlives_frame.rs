//! A frame's surface kept past the frame: in interop mode the texture is unmapped at the
//! present, so a kernel given the surface later would write an unmapped texture.
use cuda_gl::display::DisplayTarget;

fn keep(target: &mut DisplayTarget, stream: &cuda_gl::Stream) -> cuda_gl::Surface<'static> {
    let frame = target.frame(stream).unwrap();
    let surface = frame.surface().unwrap();
    frame.present().unwrap();
    surface
}

fn main() {
    let _ = keep;
}
