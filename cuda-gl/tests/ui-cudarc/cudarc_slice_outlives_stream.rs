// A cudarc slice borrows the stream of the map too: the stream cannot be dropped under it.
use cuda_gl::RegisteredBuffer;
use cudarc::driver::CudaContext;

fn drop_stream(res: &mut RegisteredBuffer, cu: &std::sync::Arc<CudaContext>) {
    let stream = cu.new_stream().unwrap();
    let mut mapped = res.map(&stream).unwrap();
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let view = unsafe { mapped.as_cudarc_slice_mut::<u8>() }.unwrap();
    drop(stream);
    let _ = view.len();
}

fn main() {}
