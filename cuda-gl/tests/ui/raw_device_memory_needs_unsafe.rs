// `DevicePtr::from_raw` is safe because nothing reads or writes through a `DevicePtr` without
// `unsafe`: every reader of memory cuda-gl does not own (a decoder's surface, another library's
// allocation) is an unsafe call whose `# Safety` carries the whole contract. Each call below
// must fail to compile outside an `unsafe` block.
use cuda_gl::display::{DeviceImage, DisplayTarget, Format, Layout};
use cuda_gl::video::{ColorSpace, Converter, VideoFormat, VideoFrame, VideoLayout, VideoPlanes};
use cuda_gl::wgpu_interop::{WgpuTarget, WgpuVideoPlanes};
use cuda_gl::{DevicePtr, Stream};

fn image() -> cuda_gl::Result<DeviceImage<'static>> {
    let layout = Layout::new((64, 64), 256, Format::Rgba8)?;
    Ok(DeviceImage::new(
        DevicePtr::from_raw(0x7f00_0000_0000),
        layout,
    ))
}

fn frame() -> cuda_gl::Result<VideoFrame<'static>> {
    let layout = VideoLayout::packed((64, 64), VideoFormat::Nv12)?;
    Ok(VideoFrame::new(
        DevicePtr::from_raw(0x7f00_0000_0000),
        layout,
    ))
}

fn gl_target(target: &mut DisplayTarget, stream: &Stream) -> cuda_gl::Result<()> {
    target.show_raw(image()?, stream)?;
    target.show_video_raw(&frame()?, ColorSpace::default(), stream)
}

fn wgpu_target(target: &mut WgpuTarget, stream: &Stream) -> cuda_gl::Result<()> {
    target.show_raw(image()?, stream)?;
    target.show_video_raw(&frame()?, ColorSpace::default(), stream)
}

fn planes(
    gl: &mut VideoPlanes,
    wgpu: &mut WgpuVideoPlanes,
    stream: &Stream,
) -> cuda_gl::Result<()> {
    gl.upload_raw(&frame()?, stream)?;
    wgpu.upload_raw(&frame()?, stream).map(drop)
}

fn converter(converter: &Converter, stream: &Stream) -> cuda_gl::Result<()> {
    converter.convert(&frame()?, ColorSpace::default(), &image()?, stream)
}

fn main() {}
