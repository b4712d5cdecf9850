// `show` takes cuda-gl's `DeviceBuffer`; a cudarc slice is refused with a hint towards
// `show_cudarc`, which orders the copy after cudarc's own writes of the slice.
use cuda_gl::display::{DisplayTarget, Format, Layout};
use cuda_gl::Stream;
use cudarc::driver::CudaSlice;

fn show(target: &mut DisplayTarget, field: &CudaSlice<f32>, stream: &Stream) {
    let layout = Layout::packed((64, 64), Format::R32F).unwrap();
    let _ = target.show(field, layout, stream);
}

fn main() {}
