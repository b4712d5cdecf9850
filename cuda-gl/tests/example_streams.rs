//! The stream writers of example 15 (`examples/common/h264_pcm.rs`, `hevc_pcm.rs`), checked
//! against a decoder that is not NVIDIA's: ffmpeg decodes each stream back to the frames written
//! (lossless: every sample), and ffprobe reads the colour description from its VUI. No GPU: CI
//! runs it. libde265 (`libde265-dec265`) decodes the HEVC streams too. Without either on the
//! PATH it prints why and passes, unless `CUDA_GL_REQUIRE_FFMPEG=1` (as CI sets it).

#[path = "../examples/common/bitstream.rs"]
mod bitstream;
#[path = "../examples/common/h264_pcm.rs"]
mod h264_pcm;
#[path = "../examples/common/hevc_pcm.rs"]
mod hevc_pcm;

use anyhow::{Context as _, Result, bail, ensure};
use bitstream::Signal;
use std::io::Write as _;
use std::process::{Command, Stdio};

/// Runs ffmpeg (or ffprobe) with `args` on `input` as its standard input, and returns its
/// standard output; `None` when it is not installed.
fn run(tool: &str, args: &[&str], input: &[u8]) -> Result<Option<Vec<u8>>> {
    let child = Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).context(format!("starting {tool}")),
    };
    let mut stdin = child.stdin.take().context("no stdin")?;
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output()?;
    let written = writer
        .join()
        .map_err(|_| anyhow::anyhow!("the writer thread panicked"))?;
    // ffprobe stops reading once it has seen the stream's headers: the rest of the input then
    // meets a closed pipe, which is no error of the stream's (the exit status says).
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
    ensure!(
        out.status.success(),
        "{tool} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(Some(out.stdout))
}

/// The frames of `clip`, a `format` stream, decoded by ffmpeg as `pix_fmt` (raw, frame after
/// frame); `None` without ffmpeg. Any error in the stream fails (`-err_detect explode`).
fn decode(format: &str, pix_fmt: &str, clip: &[u8]) -> Result<Option<Vec<u8>>> {
    let args = [
        "-v",
        "error",
        "-err_detect",
        "explode",
        "-f",
        format,
        "-i",
        "-",
        "-f",
        "rawvideo",
        "-pix_fmt",
        pix_fmt,
        "-",
    ];
    run("ffmpeg", &args, clip)
}

/// Checks that `clip` is `units` NAL units, each after a 4-byte start code, whose bytes hold no
/// `00 00 00`, `00 00 01` or `00 00 02` (H.264 7.4.1, H.265 7.4.2: emulation prevention), and
/// end in a nonzero byte. ffmpeg would decode some streams that break this.
fn check_escaped(clip: &[u8], units: usize) -> Result<()> {
    let starts: Vec<usize> = (0..clip.len().saturating_sub(3))
        .filter(|&i| clip[i..i + 4] == [0, 0, 0, 1])
        .collect();
    ensure!(
        starts.len() == units,
        "{} start codes, not {units}",
        starts.len()
    );
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(clip.len());
        let unit = &clip[start + 4..end];
        let bad = unit
            .windows(3)
            .position(|w| w[0] == 0 && w[1] == 0 && w[2] <= 2);
        ensure!(
            bad.is_none(),
            "NAL unit {k}: a start code's prefix at byte {bad:?}"
        );
        ensure!(
            unit.last().is_some_and(|&b| b != 0),
            "NAL unit {k} ends in a zero byte"
        );
    }
    Ok(())
}

/// `clip` (HEVC) decoded by libde265's `libde265-dec265` into planar frames, as ffmpeg's
/// `yuv420p10le`; `None` when it is not installed. It reads and writes files, not pipes.
fn dec265(clip: &[u8]) -> Result<Option<Vec<u8>>> {
    let dir = std::env::temp_dir().join(format!("cuda-gl-dec265-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (input, output) = (dir.join("clip.hevc"), dir.join("out.yuv"));
    std::fs::write(&input, clip)?;
    let ran = Command::new("libde265-dec265")
        .arg("-q")
        .arg("-o")
        .arg(&output)
        .arg(&input)
        .output();
    let decoded = match ran {
        Ok(out) if out.status.success() => Some(std::fs::read(&output)?),
        Ok(out) => bail!(
            "libde265-dec265 failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).context("starting libde265-dec265"),
    };
    std::fs::remove_dir_all(&dir)?;
    Ok(decoded)
}

/// Whether ffmpeg is missing and that is allowed (printed); an error when it is required.
fn skip(missing: bool) -> Result<bool> {
    if !missing {
        return Ok(false);
    }
    if std::env::var("CUDA_GL_REQUIRE_FFMPEG").is_ok_and(|v| v == "1") {
        bail!("CUDA_GL_REQUIRE_FFMPEG=1 but ffmpeg or libde265-dec265 is not on the PATH");
    }
    eprintln!("skipped: no ffmpeg or libde265-dec265 on the PATH to decode the streams with");
    Ok(true)
}

/// ffmpeg's planar 4:2:0 frames (Y, then U, then V; asked for as decoded, so that no range
/// or format conversion runs) as semi-planar ones (Y, then U and V interleaved): NV12's and
/// P010's layout. `sample` is the bytes of a sample.
fn semi_planar(planar: &[u8], (w, h): (u32, u32), sample: usize) -> Vec<u8> {
    let luma = w as usize * h as usize * sample;
    let chroma = luma / 4;
    let mut out = Vec::with_capacity(planar.len());
    for frame in planar.chunks(luma + 2 * chroma) {
        let (y, uv) = frame.split_at(luma);
        let (u, v) = uv.split_at(chroma);
        out.extend_from_slice(y);
        for (u, v) in u.chunks(sample).zip(v.chunks(sample)) {
            out.extend_from_slice(u);
            out.extend_from_slice(v);
        }
    }
    out
}

/// Frames of noise, with runs of zero bytes that need emulation prevention.
fn noise(bytes: usize, frame: u32) -> Vec<u8> {
    let mut out: Vec<u8> = (0..bytes as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(frame * 977) >> 13) as u8)
        .collect();
    for b in out.iter_mut().take(64) {
        *b = 0;
    }
    out
}

/// ffprobe's colour fields of a stream, `key=value` lines.
fn colours(format: &str, stream: &[u8]) -> Result<Option<String>> {
    let args = ["-v", "error", "-f", format, "-show_streams", "-i", "-"];
    Ok(run("ffprobe", &args, stream)?.map(|out| {
        String::from_utf8_lossy(&out)
            .lines()
            .filter(|l| l.starts_with("color_") || l.starts_with("profile="))
            .collect::<Vec<_>>()
            .join(" ")
    }))
}

/// Checks that `decoder` gave back the samples `written` of the `w` x `h` frames (naming the
/// first byte that differs).
fn ensure_decoded(decoder: &str, decoded: &[u8], written: &[u8], (w, h): (u32, u32)) -> Result<()> {
    ensure!(
        decoded == written,
        "{w}x{h}: {decoder} decoded other samples than written (from byte {:?})",
        decoded.iter().zip(written).position(|(a, b)| a != b)
    );
    Ok(())
}

/// Checks that ffprobe reads each of `wants` (`key=value`) among the colour fields of `clip`, a
/// `format` stream of `w` x `h` frames.
fn ensure_colours(format: &str, clip: &[u8], wants: &[&str], (w, h): (u32, u32)) -> Result<()> {
    let colours = colours(format, clip)?.unwrap_or_default();
    for want in wants {
        ensure!(
            colours.contains(want),
            "{w}x{h}: ffprobe read {colours}, no {want}"
        );
    }
    Ok(())
}

#[test]
fn h264_pcm_decodes_to_the_frames_written() -> Result<()> {
    // Example 15's signal and size (1920x1080).
    let signal = Signal::BT601_LIMITED;
    for (w, h) in [(64, 32), (78, 42), (1002, 334), (1920, 1080)] {
        let stream = h264_pcm::PcmStream::new(w, h, signal)?;
        let (mut clip, mut written) = (stream.headers(), Vec::new());
        for f in 0..3 {
            let frame = noise(stream.frame_bytes(), f);
            clip.extend(stream.frame(f, &frame)?);
            written.extend(frame);
        }
        check_escaped(&clip, 2 + 3)?; // SPS, PPS, 3 pictures
        let Some(decoded) = decode("h264", "yuv420p", &clip)? else {
            return skip(true).map(drop);
        };
        let decoded = semi_planar(&decoded, (w, h), 1);
        ensure_decoded("ffmpeg", &decoded, &written, (w, h))?;
        let wants = [
            "profile=Constrained Baseline",
            "color_range=tv",
            "color_space=bt470bg",
            "color_transfer=bt709",
            "color_primaries=smpte170m",
        ];
        ensure_colours("h264", &clip, &wants, (w, h))?;
    }
    Ok(())
}

#[test]
fn hevc_pcm_decodes_to_the_frames_written() -> Result<()> {
    // Example 15's signal and size (1282x722).
    let signal = Signal::BT2020_FULL;
    for (w, h) in [(64, 32), (96, 64), (1282, 722)] {
        let stream = hevc_pcm::HevcPcmStream::new(w, h, signal)?;
        let (mut clip, mut written) = (stream.headers(), Vec::new());
        for f in 0..3 {
            let frame = noise(stream.frame_bytes(), f);
            clip.extend(stream.frame(&frame)?);
            // What a decoder gives back: each word's 10 bits, the low 6 bits 0.
            for word in frame.chunks_exact(2) {
                let sample = u16::from_le_bytes([word[0], word[1]]) & 0xffc0;
                written.extend(sample.to_le_bytes());
            }
        }
        check_escaped(&clip, 3 + 3)?; // VPS, SPS, PPS, 3 pictures
        let Some(decoded) = decode("hevc", "yuv420p10le", &clip)? else {
            return skip(true).map(drop);
        };
        // libde265, a second decoder, whose PCM handling follows the reference decoder's
        // (ffmpeg finds PCM samples by byte, and forgives what follows the slice's end).
        let Some(second) = dec265(&clip)? else {
            return skip(true).map(drop);
        };
        for (decoder, planar) in [("ffmpeg", decoded), ("libde265", second)] {
            // The decoder's 10-bit samples, in the top bits of each word as P010 holds them.
            let decoded: Vec<u8> = semi_planar(&planar, (w, h), 2)
                .chunks_exact(2)
                .flat_map(|s| (u16::from_le_bytes([s[0], s[1]]) << 6).to_le_bytes())
                .collect();
            ensure_decoded(decoder, &decoded, &written, (w, h))?;
        }
        let wants = [
            "profile=Main 10",
            "color_range=pc",
            "color_space=bt2020nc",
            "color_transfer=bt2020-10",
            "color_primaries=bt2020",
        ];
        ensure_colours("hevc", &clip, &wants, (w, h))?;
    }
    Ok(())
}

#[test]
fn odd_and_oversized_frames_are_refused() {
    let signal = Signal {
        primaries: 1,
        transfer: 1,
        matrix: 1,
        full_range: false,
    };
    for (w, h) in [(0, 2), (3, 2), (2, 5)] {
        assert!(h264_pcm::PcmStream::new(w, h, signal).is_err(), "{w}x{h}");
        assert!(
            hevc_pcm::HevcPcmStream::new(w, h, signal).is_err(),
            "{w}x{h}"
        );
    }
    assert!(h264_pcm::PcmStream::new(8192, 8192, signal).is_err());
    assert!(hevc_pcm::HevcPcmStream::new(8192, 8192, signal).is_err());
    let stream = h264_pcm::PcmStream::new(64, 32, signal).map_err(|e| e.to_string());
    let short = stream.and_then(|s| s.frame(0, &[0; 10]).map_err(|e| e.to_string()));
    assert!(short.is_err(), "a frame of the wrong length is refused");
}
