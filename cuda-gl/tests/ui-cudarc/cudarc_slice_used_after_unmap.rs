// A cudarc slice cannot be used once its mapping is unmapped.
use cuda_gl::RegisteredBuffer;
use cudarc::driver::CudaStream;
use std::sync::Arc;

fn copy_after_unmap(res: &mut RegisteredBuffer, stream: &Arc<CudaStream>) {
    let mapped = res.map(stream).unwrap();
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let view = unsafe { mapped.as_cudarc_slice::<u32>() }.unwrap();
    mapped.unmap().unwrap();
    let _ = stream.clone_dtoh(&view);
}

fn main() {}
