// cuda-gl's own kernel: one-channel images through a colour map into RGBA8, for
// DisplayTarget::set_color_map (cuda-gl/src/display/colormap.rs). The colours come from a
// 256-entry table that cuda-gl computes on the host (Palette::color), so that the CPU and the
// GPU share one definition of each palette.
//
// One thread per pixel. The value v (a byte 0..255 for R8, a float for R32F, read byte by byte
// since neither the address nor the pitch a caller gives need be a multiple of 4) becomes
// t = (v - lo) * inv_span, clamped to [0, 1] (NaN to 0), and the pixel is lut[(int)(t * 255 +
// 0.5)]. Compiled with --fmad=false, so the host computes the same t.

extern "C" __global__ void cuda_gl_colormap(const unsigned char* src, size_t src_pitch,
                                            int is_float, unsigned char* dst, size_t dst_pitch,
                                            int width, int height, float lo, float inv_span,
                                            const uchar4* lut)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    const unsigned char* row = src + (size_t)y * src_pitch;
    float v;
    if (is_float) {
        const unsigned char* p = row + (size_t)x * 4;
        v = __uint_as_float((unsigned int)p[0] | ((unsigned int)p[1] << 8) |
                            ((unsigned int)p[2] << 16) | ((unsigned int)p[3] << 24));
    } else {
        v = (float)row[x];
    }
    float t = (v - lo) * inv_span;
    if (!(t > 0.0f)) {
        t = 0.0f;
    }
    if (t > 1.0f) {
        t = 1.0f;
    }
    int index = (int)(t * 255.0f + 0.5f);
    ((uchar4*)(dst + (size_t)y * dst_pitch))[x] = lut[index];
}
