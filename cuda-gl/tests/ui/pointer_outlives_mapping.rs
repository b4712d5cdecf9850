// The device pointer of a mapping cannot be kept after the unmap.
use cuda_gl::{DevicePtr, RegisteredBuffer, Stream};

fn leak<'a>(res: &'a mut RegisteredBuffer, stream: &'a Stream) -> DevicePtr<'a> {
    let mapped = res.map(stream).unwrap();
    mapped.device_ptr()
}

fn main() {}
