//! The present group's raw copies, made with plain driver calls: the staged limits (a frame
//! from device memory into pinned memory) and, for reading, the same from a CUDA array (where
//! a frame drawn through a staged target's surface lives), straight or through device memory.

use crate::glres::{Buffer, Source, Texture};
use crate::gpu::cu;
use anyhow::{Result, ensure};
use cuda_gl::{Context, DeviceBuffer, Event, PinnedBuffer, Stream, sys};
use std::sync::Arc;

/// A 2-D CUDA array of RGBA8 frames, made for surface load/store like a staged target's;
/// destroyed on drop (after the group's last synchronize).
pub struct RawArray {
    raw: sys::CUarray,
    row: usize,
    height: usize,
}

impl RawArray {
    /// An array of `w` x `h` RGBA8 pixels in the CUDA context bound before the group.
    pub fn new(driver: &sys::Driver, (w, h): (u32, u32)) -> Result<RawArray> {
        let desc = sys::CUDA_ARRAY3D_DESCRIPTOR {
            Width: w as usize,
            Height: h as usize,
            Depth: 0,
            Format: sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8,
            NumChannels: 4,
            Flags: sys::CUDA_ARRAY3D_SURFACE_LDST,
        };
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` and `desc` are live locals; a context is current (bound by the group).
        cu("cuArray3DCreate", unsafe {
            driver.cuArray3DCreate_v2(&mut raw, &desc)
        })?;
        Ok(RawArray {
            raw,
            row: w as usize * 4,
            height: h as usize,
        })
    }
}

impl Drop for RawArray {
    fn drop(&mut self) {
        if let Ok(driver) = sys::driver() {
            // SAFETY: made by `new`, and nothing is queued on it any more: the group
            // synchronizes its stream before dropping its rig.
            let rc = unsafe { driver.cuArrayDestroy(self.raw) };
            if let Err(e) = cu("cuArrayDestroy", rc) {
                eprintln!("interop: present: {e:#}");
            }
        }
    }
}

/// `dst`'s memory as a copy destination of `bytes` bytes.
fn host_of(dst: &mut PinnedBuffer<u8>, bytes: usize) -> Result<*mut std::ffi::c_void> {
    ensure!(dst.len() == bytes, "the pinned buffer is not a frame long");
    Ok(dst.as_ptr().cast_mut().cast())
}

/// `cuStreamSynchronize` of `stream`.
fn sync(driver: &sys::Driver, stream: &Stream) -> Result<()> {
    // SAFETY: `stream` is live.
    cu("cuStreamSynchronize", unsafe {
        driver.cuStreamSynchronize(stream.raw())
    })
}

/// One raw staged limit: `cuMemcpyDtoHAsync` of the whole of `src` into `dst`, then
/// `cuStreamSynchronize`.
pub fn dtoh(
    driver: &sys::Driver,
    src: &DeviceBuffer<u8>,
    dst: &mut PinnedBuffer<u8>,
    stream: &Stream,
) -> Result<()> {
    let bytes = src.byte_len();
    let host = host_of(dst, bytes)?;
    // SAFETY: `host` is the start of the `bytes` bytes of page-locked memory `dst` owns,
    // borrowed mutably here so nothing reads them, with no copy of the safe API into them
    // pending (the group queues none); `src` is `bytes` bytes of device memory of the CUDA
    // context bound before the group; `stream` is a live stream of it. Both stay allocated
    // until the synchronize below has returned (a failure there ends the run).
    cu("cuMemcpyDtoHAsync", unsafe {
        driver.cuMemcpyDtoHAsync_v2(host, src.device_ptr().as_raw(), bytes, stream.raw())
    })?;
    sync(driver, stream)
}

/// For reading: `cuMemcpy2DAsync` of the whole of `src` into `dst` (a staged target's copy
/// of a surface frame, made raw), then `cuStreamSynchronize`; with `via`, the array is first
/// copied into that device memory, then that into `dst`.
pub fn array_dtoh(
    driver: &sys::Driver,
    src: &RawArray,
    via: Option<&mut DeviceBuffer<u8>>,
    dst: &mut PinnedBuffer<u8>,
    stream: &Stream,
) -> Result<()> {
    let bytes = src.row * src.height;
    let host = host_of(dst, bytes)?;
    let mut copy = sys::CUDA_MEMCPY2D {
        srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
        srcArray: src.raw,
        WidthInBytes: src.row,
        Height: src.height,
        ..Default::default()
    };
    match via {
        Some(device) => {
            ensure!(
                device.byte_len() == bytes,
                "the device buffer is not a frame long"
            );
            copy.dstMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
            copy.dstDevice = device.device_ptr().as_raw();
            copy.dstPitch = src.row;
            // SAFETY: the array is `row` bytes by `height` rows; the device memory is that
            // long (checked), of the bound context, borrowed mutably; both live until the
            // synchronize below. The stream is live.
            cu("cuMemcpy2DAsync", unsafe {
                driver.cuMemcpy2DAsync_v2(&copy, stream.raw())
            })?;
            // SAFETY: as in `dtoh`; queued after the copy above on the same stream.
            cu("cuMemcpyDtoHAsync", unsafe {
                driver.cuMemcpyDtoHAsync_v2(host, device.device_ptr().as_raw(), bytes, stream.raw())
            })?;
        }
        None => {
            copy.dstMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_HOST;
            copy.dstHost = host;
            copy.dstPitch = src.row;
            // SAFETY: the array is `row` bytes by `height` rows; `host` is that many bytes of
            // pinned memory, borrowed mutably with no other copy pending; both live until the
            // synchronize below. The stream is live.
            cu("cuMemcpy2DAsync", unsafe {
                driver.cuMemcpy2DAsync_v2(&copy, stream.raw())
            })?;
        }
    }
    sync(driver, stream)
}

/// The staged present made of plain calls, for reading: two pinned buffers used in turn, frame
/// n+1's `cuMemcpyDtoHAsync` queued (an event recorded after it) before frame n is uploaded
/// from the other buffer once its event has completed, the upload the staged target makes on
/// this GL (`glBufferSubData` into a pixel buffer, then from it, on NVIDIA's; straight from
/// pinned memory on any other). What the copies cost when they overlap as far as this machine
/// lets them, with no library in between.
pub struct DoubleBuffer {
    slots: [PinnedBuffer<u8>; 2],
    copied: [Event; 2],
    /// The slot whose copy was queued last (uploaded next).
    last: Option<usize>,
}

impl DoubleBuffer {
    /// Two buffers of `bytes` bytes and their events.
    pub fn new(ctx: &Arc<Context>, bytes: usize) -> Result<DoubleBuffer> {
        Ok(DoubleBuffer {
            slots: [
                PinnedBuffer::zeroed(ctx, bytes)?,
                PinnedBuffer::zeroed(ctx, bytes)?,
            ],
            copied: [Event::new(ctx, false)?, Event::new(ctx, false)?],
            last: None,
        })
    }

    /// One frame: `src`'s copy into the free buffer queued, then the other buffer's frame
    /// uploaded into `texture` (through `pbo` when `through_pbo`).
    pub fn frame(
        &mut self,
        driver: &sys::Driver,
        src: &DeviceBuffer<u8>,
        stream: &Stream,
        (texture, pbo, through_pbo): (&Texture, &Buffer, bool),
    ) -> Result<()> {
        let next = self.last.map_or(0, |l| 1 - l);
        let bytes = src.byte_len();
        let host = host_of(&mut self.slots[next], bytes)?;
        // SAFETY: as in `dtoh`: the buffer is `bytes` bytes of pinned memory owned by `self`,
        // whose previous upload has returned (uploads read it synchronously), and which lives
        // until the group's last synchronize; `src` is `bytes` bytes of device memory of the
        // bound context; `stream` is live.
        cu("cuMemcpyDtoHAsync", unsafe {
            driver.cuMemcpyDtoHAsync_v2(host, src.device_ptr().as_raw(), bytes, stream.raw())
        })?;
        self.copied[next].record(stream)?;
        if let Some(last) = self.last.replace(next) {
            self.copied[last].synchronize()?;
            // The event above says the DMA into it has completed.
            let pixels = self.slots[last].as_slice()?;
            if through_pbo {
                pbo.write(pixels)?;
                texture.upload_from_pbo(pbo)?;
            } else {
                texture.upload_from_host(pixels)?;
            }
        }
        Ok(())
    }
}

/// The staged target's banded present made of plain calls, for reading: the frame's rows in
/// bands cut as the target cuts them ([`band_rows`]), each `cuMemcpyDtoHAsync`'d into a pinned
/// buffer of its own with an event recorded after it, all queued first; then each band, once
/// its event has completed, handed to GL as [`Through`] says: uploaded into its rows from
/// pinned memory (the target on any GL but NVIDIA's), written whole into a pixel buffer of its
/// own and uploaded from it (the target on NVIDIA's GL), or, for reading, written into one
/// frame-sized buffer at its offset (`glBufferSubData`) with the frame uploaded once at the
/// end. What the target's present costs with no library in between.
pub struct Bands {
    /// (first row, rows) of each band.
    rows: Vec<(u32, u32)>,
    row_bytes: usize,
    slots: Vec<PinnedBuffer<u8>>,
    copied: Vec<Event>,
    /// A pixel buffer per band, each the band's size (NVIDIA's GL only; else empty).
    band_pbos: Vec<Buffer>,
}

/// How [`Bands::frame`] hands the bands to GL.
#[derive(Clone, Copy)]
pub enum Through<'a> {
    /// Each band uploaded into its rows from pinned memory.
    Host,
    /// Each band written into this frame-sized pixel buffer at its offset, the frame uploaded
    /// once at the end.
    Pbo(&'a Buffer),
    /// Each band written whole into a pixel buffer of its own and uploaded from it into its
    /// rows: every `glBufferSubData` covers its whole buffer.
    BandBuffers,
}

/// The bands of a frame of `h` rows of `row_bytes`, as the staged target cuts them
/// (`cuda-gl/src/display/staged.rs`, `CLIENT_UPLOAD` and `BUFFER_WRITE`): the first of
/// 256 KiB, each next one 4 times the last for uploads from client memory, or twice the last up
/// to 1 MiB for writes into a pixel buffer; at most 32, the last taking the rest.
fn band_rows(row_bytes: usize, h: u32, written: bool) -> Vec<(u32, u32)> {
    let (growth, cap) = if written {
        (2, 1 << 20)
    } else {
        (4, usize::MAX)
    };
    let mut out = Vec::new();
    let (mut first, mut bytes) = (0u32, 256usize << 10);
    while first < h {
        let fit = u32::try_from((bytes / row_bytes.max(1)).max(1)).unwrap_or(u32::MAX);
        let rows = if out.len() + 1 == 32 {
            h - first
        } else {
            fit.min(h - first)
        };
        out.push((first, rows));
        first += rows;
        bytes = bytes.saturating_mul(growth).min(cap);
    }
    out
}

impl Bands {
    /// The bands of a `w` x `h` RGBA8 frame, as the staged target cuts it on this GL
    /// (`written` into a pixel buffer: NVIDIA's).
    pub fn new(ctx: &Arc<Context>, (w, h): (u32, u32), written: bool) -> Result<Bands> {
        let row_bytes = w as usize * 4;
        let rows = band_rows(row_bytes, h, written);
        let slots = rows
            .iter()
            .map(|&(_, n)| PinnedBuffer::zeroed(ctx, row_bytes * n as usize))
            .collect::<cuda_gl::Result<Vec<_>>>()?;
        let copied = rows
            .iter()
            .map(|_| Event::new(ctx, false))
            .collect::<cuda_gl::Result<Vec<_>>>()?;
        let band_pbos = if written {
            slots
                .iter()
                .enumerate()
                .map(|(i, slot)| Buffer::new(slot.len(), &format!("band {i}'s PBO")))
                .collect::<Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        Ok(Bands {
            rows,
            row_bytes,
            slots,
            copied,
            band_pbos,
        })
    }

    /// One frame from `src` (one frame long) into `texture`, handed to GL as `through` says.
    pub fn frame(
        &mut self,
        driver: &sys::Driver,
        src: &DeviceBuffer<u8>,
        stream: &Stream,
        (texture, through): (&Texture, Through<'_>),
    ) -> Result<()> {
        let frame: usize = self.slots.iter().map(PinnedBuffer::len).sum();
        ensure!(src.byte_len() == frame, "the source is not a frame long");
        for ((slot, event), &(first, _)) in self.slots.iter_mut().zip(&self.copied).zip(&self.rows)
        {
            let bytes = slot.len();
            let host = host_of(slot, bytes)?;
            let from = src.device_ptr().byte_add(first as usize * self.row_bytes)?;
            // SAFETY: as in `dtoh`: the band's buffer is `bytes` bytes of pinned memory owned
            // by `self`, read by the previous frame's upload before it returned; `from` is
            // `bytes` bytes inside `src` (the bands cover the frame, checked above), device
            // memory of the bound context; `stream` is live; everything lives until the
            // group's last synchronize.
            cu("cuMemcpyDtoHAsync", unsafe {
                driver.cuMemcpyDtoHAsync_v2(host, from.as_raw(), bytes, stream.raw())
            })?;
            event.record(stream)?;
        }
        ensure!(
            !matches!(through, Through::BandBuffers) || self.band_pbos.len() == self.slots.len(),
            "no pixel buffer per band (made on NVIDIA's GL only)"
        );
        for (i, ((slot, event), &(first, rows))) in self
            .slots
            .iter()
            .zip(&self.copied)
            .zip(&self.rows)
            .enumerate()
        {
            event.synchronize()?;
            // The event above says the DMA into it has completed.
            let pixels = slot.as_slice()?;
            match through {
                Through::Host => texture.upload_rows((first, rows), Source::Host(pixels))?,
                Through::Pbo(pbo) => pbo.write_at(first as usize * self.row_bytes, pixels)?,
                Through::BandBuffers => {
                    let pbo = &self.band_pbos[i];
                    pbo.write(pixels)?;
                    texture.upload_rows((first, rows), Source::Buffer(pbo.name()))?;
                }
            }
        }
        if let Through::Pbo(pbo) = through {
            texture.upload_from_pbo(pbo)?;
        }
        Ok(())
    }
}
