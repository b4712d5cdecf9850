// cuda-gl's own kernel: decoded 4:2:0 video (NV12, P010) into RGBA8, for video::Converter
// (cuda-gl/src/video/convert.rs). The numbers of the conversion come from the host
// (ColorSpace::coefficients in cuda-gl/src/video/color.rs), so that the CPU reference
// (video::convert_cpu) and the GPU share one definition, and, compiled with --fmad=false, the
// same float operations in the same order: the same bytes.
//
// One thread per output pixel (a grid-stride loop in y, so that any height fits the grid).
// Pixel (x, y) reads luma (x, y) and the chroma pair (x / 2, y / 2): the nearest chroma sample,
// sited at the left of each pair of columns and between each pair of rows (MPEG-2's 4:2:0,
// "left" siting, the usual one), without interpolation. Samples are read byte by byte, so no
// address or pitch need be aligned; a P010 sample is its little-endian 16-bit word >> 6.
//
// Y' = (y - y_offset) * y_gain; Cb = u - c_offset; Cr = v - c_offset;
// R = Y' + r_v * Cr; G = Y' + g_u * Cb + g_v * Cr; B = Y' + b_u * Cb, each clamped to
// [0, 255] and rounded half up (floor(c + 0.5)); alpha is 255. The pixel is written as one
// uchar4 when the destination's address and pitch are multiples of 4, else byte by byte.

struct Coefficients {
    float y_offset;
    float y_gain;
    float c_offset;
    float r_v;
    float g_u;
    float g_v;
    float b_u;
};

__device__ static float sample(const unsigned char* p, int wide)
{
    unsigned int s = wide ? (((unsigned int)p[0] | ((unsigned int)p[1] << 8)) >> 6) : p[0];
    return (float)s;
}

__device__ static unsigned char quantize(float c)
{
    c = fminf(fmaxf(c, 0.0f), 255.0f);
    return (unsigned char)(c + 0.5f);
}

extern "C" __global__ void cuda_gl_video_rgba8(const unsigned char* luma, size_t luma_pitch,
                                               const unsigned char* chroma, size_t chroma_pitch,
                                               int wide, unsigned char* dst, size_t dst_pitch,
                                               unsigned int width, unsigned int height,
                                               Coefficients k)
{
    size_t x = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width) {
        return;
    }
    size_t bytes = wide ? 2 : 1;
    bool aligned = (((size_t)dst | dst_pitch) & 3) == 0;
    size_t step = (size_t)gridDim.y * blockDim.y;
    for (size_t y = (size_t)blockIdx.y * blockDim.y + threadIdx.y; y < height; y += step) {
        float yf = (sample(luma + y * luma_pitch + x * bytes, wide) - k.y_offset) * k.y_gain;
        const unsigned char* pair = chroma + (y / 2) * chroma_pitch + (x / 2) * 2 * bytes;
        float uf = sample(pair, wide) - k.c_offset;
        float vf = sample(pair + bytes, wide) - k.c_offset;
        float r = yf + k.r_v * vf;
        float g = yf + k.g_u * uf + k.g_v * vf;
        float b = yf + k.b_u * uf;
        uchar4 px = make_uchar4(quantize(r), quantize(g), quantize(b), 255);
        unsigned char* out = dst + y * dst_pitch + x * 4;
        if (aligned) {
            *(uchar4*)out = px;
        } else {
            out[0] = px.x;
            out[1] = px.y;
            out[2] = px.z;
            out[3] = px.w;
        }
    }
}
