"""Would NV12 planes reach GL faster through memory GL imports than through map/unmap?

`VideoPlanes::upload` (GL) costs ~2x its handoff floor (H100, driver 580.159.04, 2026-12-07):
its map, copies and unmap are one run on cuda-gl's private stream, and what is left is GL's
first use of textures CUDA just wrote through a map (planes_probe.py). This probe measures the
other way that cuda-gl already has for buffers (`external::ExternalRing`): CUDA-owned memory
(`cuMemCreate` with a POSIX file descriptor) that GL imports (`GL_EXT_memory_object_fd`) as a
buffer object, ordered by CPU waits instead of map/unmap; the planes then reach the R8 + RG8
textures by GL's own copy out of that buffer (`glTextureSubImage2D` with it bound as the pixel
unpack buffer), and GL samples the textures as before.

Cases, at 1920x1080 and 3840x2160, interleaved in 3 rounds as planes_probe.py runs them (its
helpers, floor and data check are imported from it; every iteration ends synchronized):
- the floor: the frame written into plain device memory, a stream sync, GL's use of untouched
  planes (planes_probe.py's);
- today's path: map both textures, 2 copies, unmap, all on the private stream joined by events,
  then GL's use (planes_probe.py's "ALL on a private stream" case, NONE flags, immutable);
- external, copied: the frame's planes copied by CUDA (one cuMemcpyAsync of the frame's bytes)
  into the imported memory, a stream sync, GL's two uploads out of it, GL's use, and a fence
  after GL's uploads that the next iteration's CUDA copy waits for on the CPU
  (glClientWaitSync), as the ring's slot does;
- external, in place: the frame written straight into the imported memory (a decoder told to
  decode into it), the sync, the uploads, the use, the fence; no copy by CUDA.
Each case's texel (0, 0) of both planes must hold the last frame's byte (`data ok`).

Run on the GPU host as planes_probe.py is (`source .gpu/env.sh` first):
    python3 ci/gpu/probes/planes_external_probe.py [--iters 300] [--sizes 1920x1080,3840x2160]
        [--write-spin-us US] [--json PATH]
It needs nothing else (no nvcc, no cuda-python).
"""
import argparse
import ctypes
import json
import os
import sys
import time

from ctypes import POINTER, byref, c_int, c_size_t, c_uint, c_uint64, c_ushort, c_void_p, c_ubyte

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import planes_probe as pp  # noqa: E402  (makes the GL context and the CUDA context)

U, I, P = c_uint, c_int, c_void_p


class MemLocation(ctypes.Structure):
    _fields_ = [("type", c_int), ("id", c_int)]


class AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", c_ubyte), ("gpuDirectRDMACapable", c_ubyte),
                ("usage", c_ushort), ("reserved", c_ubyte * 4)]


class AllocationProp(ctypes.Structure):
    _fields_ = [("type", c_int), ("requestedHandleTypes", c_int), ("location", MemLocation),
                ("win32HandleMetaData", c_void_p), ("allocFlags", AllocFlags)]


class AccessDesc(ctypes.Structure):
    _fields_ = [("location", MemLocation), ("flags", c_int)]


sig = pp.sig
cuMemGetAllocationGranularity = sig("cuMemGetAllocationGranularity", POINTER(c_size_t),
                                    POINTER(AllocationProp), c_int)
cuMemCreate = sig("cuMemCreate", POINTER(c_uint64), c_size_t, POINTER(AllocationProp), c_uint64)
cuMemAddressReserve = sig("cuMemAddressReserve", POINTER(c_uint64), c_size_t, c_size_t, c_uint64,
                          c_uint64)
cuMemMap = sig("cuMemMap", c_uint64, c_size_t, c_size_t, c_uint64, c_uint64)
cuMemSetAccess = sig("cuMemSetAccess", c_uint64, c_size_t, POINTER(AccessDesc), c_size_t)
cuMemExportToShareableHandle = sig("cuMemExportToShareableHandle", c_void_p, c_uint64, c_int,
                                   c_uint64)
cuMemcpyDtoDAsync = sig("cuMemcpyDtoDAsync_v2", c_uint64, c_uint64, c_size_t, P)

proc = pp.proc
glCreateMemoryObjectsEXT = proc("glCreateMemoryObjectsEXT", None, I, POINTER(U))
glImportMemoryFdEXT = proc("glImportMemoryFdEXT", None, U, c_uint64, U, I)
glCreateBuffers = proc("glCreateBuffers", None, I, POINTER(U))
glNamedBufferStorageMemEXT = proc("glNamedBufferStorageMemEXT", None, U, ctypes.c_ssize_t, U,
                                  c_uint64)
glBindBuffer = proc("glBindBuffer", None, U, U)
glFenceSync = proc("glFenceSync", c_void_p, U, U)
glClientWaitSync = proc("glClientWaitSync", U, c_void_p, U, c_uint64)
glDeleteSync = proc("glDeleteSync", None, c_void_p)
GL_PIXEL_UNPACK_BUFFER, GL_UNPACK_ALIGNMENT = 0x88EC, 0x0CF5
GL_HANDLE_TYPE_OPAQUE_FD_EXT, GL_SYNC_GPU_COMMANDS_COMPLETE = 0x9586, 0x9117
GL_SYNC_FLUSH_COMMANDS_BIT, GL_TIMEOUT_EXPIRED, GL_WAIT_FAILED = 0x1, 0x911B, 0x911D


class Imported:
    """`nbytes` (rounded up to the granularity) of CUDA memory exported as a POSIX fd and
    imported by GL as a buffer object; its CUDA address and GL buffer name."""

    def __init__(self, nbytes):
        prop = AllocationProp(type=1, requestedHandleTypes=1,  # PINNED, POSIX_FILE_DESCRIPTOR
                              location=MemLocation(type=1, id=pp.dev.value))  # DEVICE
        gran = c_size_t()
        pp.ck(cuMemGetAllocationGranularity(byref(gran), byref(prop), 0), "granularity")
        self.size = -(-nbytes // gran.value) * gran.value
        handle, self.ptr = c_uint64(), c_uint64()
        pp.ck(cuMemCreate(byref(handle), self.size, byref(prop), 0), "cuMemCreate")
        pp.ck(cuMemAddressReserve(byref(self.ptr), self.size, 0, 0, 0), "cuMemAddressReserve")
        pp.ck(cuMemMap(self.ptr.value, self.size, 0, handle.value, 0), "cuMemMap")
        access = AccessDesc(location=MemLocation(type=1, id=pp.dev.value), flags=3)  # READWRITE
        pp.ck(cuMemSetAccess(self.ptr.value, self.size, byref(access), 1), "cuMemSetAccess")
        fd = c_int(-1)
        pp.ck(cuMemExportToShareableHandle(ctypes.cast(byref(fd), c_void_p), handle.value, 1, 0),
              "cuMemExportToShareableHandle")
        memory, self.buffer = U(), U()
        glCreateMemoryObjectsEXT(1, byref(memory))
        glImportMemoryFdEXT(memory.value, self.size, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd.value)
        glCreateBuffers(1, byref(self.buffer))
        glNamedBufferStorageMemEXT(self.buffer.value, self.size, memory.value, 0)
        e = pp.glGetError()
        if e:
            raise pp.CudaFailed(f"GL's import of {self.size} bytes: GL error {e:#x}")
        self.fence = None

    def wait_for_gl(self):
        """The CPU waits for the fence after GL's last read of the buffer (at most 1 s)."""
        if self.fence is None:
            return
        r = glClientWaitSync(self.fence, GL_SYNC_FLUSH_COMMANDS_BIT, 1_000_000_000)
        glDeleteSync(self.fence)
        self.fence = None
        if r in (GL_TIMEOUT_EXPIRED, GL_WAIT_FAILED):
            raise pp.CudaFailed(f"glClientWaitSync -> {r:#x}")

    def upload(self, planes, frame_size):
        """GL's copies of the luma (offset 0) and the chroma (offset w*h) out of the buffer
        into the planes' textures, then the fence after them."""
        w, h = frame_size
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, self.buffer.value)
        pp.glPixelStorei(GL_UNPACK_ALIGNMENT, 1)
        luma, chroma = planes
        pp.glTextureSubImage2D(luma.name, 0, 0, 0, w, h, pp.GL_RED, pp.GL_UNSIGNED_BYTE, None)
        pp.glTextureSubImage2D(chroma.name, 0, 0, 0, w // 2, h // 2, pp.GL_RG,
                               pp.GL_UNSIGNED_BYTE, c_void_p(w * h))
        pp.glPixelStorei(GL_UNPACK_ALIGNMENT, 4)
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0)
        self.fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0)


def external_cases(size, frame, spin_us):
    w, h = size
    chroma = (w // 2, h // 2)
    cases = []

    def add(name, body, planes):
        cases.append(pp.Case(size, name, body, planes, planes))

    copied = Imported(frame.bytes)
    planes = [pp.Image(pp.GL_R8, size), pp.Image(pp.GL_RG8, chroma)]

    def body_copied(i, m):
        frame.write(i); m("write")
        copied.wait_for_gl(); m("fence")
        pp.ck(cuMemcpyDtoDAsync(copied.ptr.value, frame.ptr.value, frame.bytes, pp.stream), "copy")
        m("copy")
        pp.ck(pp.cuStreamSynchronize(pp.stream), "sync"); m("sync")
        copied.upload(planes, size); m("upload")
        pp.gl_use([im.use() for im in planes]); m("gl")
    add("external, copied: CUDA copies the frame into GL-imported memory + sync, "
        "GL uploads the planes from it + GL use", body_copied, planes)

    # A frame whose bytes are the imported memory: the decoder writes there.
    in_place = pp.Frame(size, spin_us)
    inner = Imported(in_place.rgba_bytes)
    # (The spin kernel, with --write-spin-us, keeps its first pointer: it writes nothing.)
    in_place.ptr = c_uint64(inner.ptr.value)
    planes_in_place = [pp.Image(pp.GL_R8, size), pp.Image(pp.GL_RG8, chroma)]

    def body_in_place(i, m):
        inner.wait_for_gl(); m("fence")
        in_place.write(i); m("write")
        pp.ck(pp.cuStreamSynchronize(pp.stream), "sync"); m("sync")
        inner.upload(planes_in_place, size); m("upload")
        pp.gl_use([im.use() for im in planes_in_place]); m("gl")
    add("external, in place: the frame written into GL-imported memory + sync, "
        "GL uploads the planes from it + GL use", body_in_place, planes_in_place)
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--sizes", default="1920x1080,3840x2160")
    ap.add_argument("--write-spin-us", type=int, default=0, metavar="US")
    ap.add_argument("--json", default=os.path.join(os.environ["OUT"], "planes_external.json")
                    if os.environ.get("OUT") else "")
    args = ap.parse_args()
    print(f"GL_RENDERER {pp.glGetString(0x1F01).decode()}; "
          f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}; write spin {args.write_spin_us} µs; "
          f"{args.iters} iterations per case in 3 interleaved rounds", flush=True)
    today = "NONE immutable: map2 + 2 copies + unmap ALL on a private stream joined by events"
    out, rounds = [], 3
    for text in args.sizes.split(","):
        size = tuple(int(v) for v in text.split("x"))
        frame = pp.Frame(size, args.write_spin_us)
        base = pp.make_cases(size, frame)
        cases = [base[0]] + [c for c in base if c.name == today]
        cases += external_cases(size, frame, args.write_spin_us)
        for c in cases:
            pp.run_case(c, 10, 0)
            c.samples.clear(); c.phases.clear()
        for r in range(rounds):
            for c in cases:
                pp.run_case(c, max(1, args.iters // rounds), 1000 * r)
                pp.check_data(c, frame)
        pp.report(cases, out)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"iters": args.iters, "write_spin_us": args.write_spin_us,
                           "rows": out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
