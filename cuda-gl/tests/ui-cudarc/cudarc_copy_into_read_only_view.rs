// A texture copied out into a read-only cudarc view of a mapped buffer: `copy_to_cudarc` writes
// its destination, and a read-only view (`MappedView`) is not a `CudarcDest`.
use cuda_gl::{RegisteredBuffer, RegisteredImage};
use cudarc::driver::CudaStream;
use std::sync::Arc;

fn copy(image: &mut RegisteredImage, buffer: &mut RegisteredBuffer, stream: &Arc<CudaStream>) {
    let mapped_buffer = buffer.map(stream).unwrap();
    // SAFETY: no capture is begun and ended on `stream` meanwhile.
    let mut view = unsafe { mapped_buffer.as_cudarc_slice::<u32>() }.unwrap();
    let mapped_image = image.map(stream).unwrap();
    let array = mapped_image.array(0, 0).unwrap();
    array.copy_to_cudarc(&mut view, stream).unwrap();
}

fn main() {}
