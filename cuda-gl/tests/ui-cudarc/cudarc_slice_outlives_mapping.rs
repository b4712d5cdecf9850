// A cudarc slice of a mapping cannot be kept after the mapping guard is gone.
use cuda_gl::RegisteredBuffer;
use cuda_gl::cudarc_interop::MappedViewMut;
use cudarc::driver::CudaStream;
use std::sync::Arc;

fn leak<'a>(res: &'a mut RegisteredBuffer, stream: &'a Arc<CudaStream>) -> MappedViewMut<'a, u32> {
    let mut mapped = res.map(stream).unwrap();
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    unsafe { mapped.as_cudarc_slice_mut::<u32>() }.unwrap()
}

fn main() {}
