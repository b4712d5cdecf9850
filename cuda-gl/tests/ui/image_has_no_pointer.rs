// A mapped image gives CUDA arrays, never a linear device pointer.
use cuda_gl::{RegisteredImage, Stream};

fn frame(res: &mut RegisteredImage, stream: &Stream) -> cuda_gl::Result<()> {
    let mapped = res.map(stream)?;
    let _ptr = mapped.device_ptr();
    Ok(())
}

fn main() {}
