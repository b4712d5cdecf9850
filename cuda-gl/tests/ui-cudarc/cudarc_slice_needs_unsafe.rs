// A cudarc view is `unsafe` to take: cudarc queues the copies through it, so the caller vouches
// that no other thread begins and ends a capture on that stream during such a copy.
use cuda_gl::RegisteredBuffer;
use cudarc::driver::CudaStream;
use std::sync::Arc;

fn view(res: &mut RegisteredBuffer, stream: &Arc<CudaStream>) {
    let mapped = res.map(stream).unwrap();
    let _ = mapped.as_cudarc_slice::<u32>();
}

fn main() {}
