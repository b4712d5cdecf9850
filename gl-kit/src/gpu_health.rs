//! What the NVIDIA driver reports about a GPU's health before a run, asked without privileges.
//!
//! A kernel fault earlier on a GPU (kernel log: Xid 31) can leave it unable to switch graphics
//! contexts until it is reset (Xid 109 for every later process that draws). The kernel log needs
//! privileges to read, and driver 580's `nvidia-smi` reports no "reset required" state, but it
//! tells any user whether memory pages or rows wait for a reset to be retired or remapped, and
//! whether a remapping failed. A benchmark or a test run that starts on such a GPU says so first,
//! so that a hang or a slow run is not mistaken for a regression; the watchdog covers the rest.

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `nvidia-smi --query-gpu` fields asked for, and what a `Yes` (or a count above 0) means.
/// Driver 580 offers no "reset required" field and no Xid history to unprivileged users (the
/// kernel log needs root); these are the states it does report that a reset resolves.
const FIELDS: [(&str, &str); 3] = [
    (
        "retired_pages.pending",
        "memory pages wait to be retired at the next reset",
    ),
    (
        "remapped_rows.pending",
        "memory rows wait to be remapped at the next reset",
    ),
    ("remapped_rows.failure", "a memory row remapping failed"),
];

/// How long `nvidia-smi` may take; a GPU in trouble can make it slow, and a start-up check must
/// never hang the program it guards.
pub const QUERY_LIMIT: Duration = Duration::from_secs(5);

/// One line per GPU whose driver reports a state that needs a reset, each naming what to do; empty
/// when every GPU is healthy, and also when `nvidia-smi` is missing, fails, does not know a
/// field, or takes longer than `limit` (the check is advisory: it never stops a run).
pub fn warnings(limit: Duration) -> Vec<String> {
    let fields: Vec<&str> = FIELDS.iter().map(|(f, _)| *f).collect();
    match query(&fields, limit) {
        Some(csv) => parse(&csv),
        None => Vec::new(),
    }
}

/// Prints [`warnings`] on stderr, prefixed with `program`, and returns how many were printed.
pub fn print_warnings(program: &str) -> usize {
    let lines = warnings(QUERY_LIMIT);
    for line in &lines {
        eprintln!("{program}: {line}");
    }
    lines.len()
}

/// `nvidia-smi --query-gpu=index,pci.bus_id,FIELDS --format=csv,noheader,nounits`, or `None`.
fn query(fields: &[&str], limit: Duration) -> Option<String> {
    let mut child = Command::new("nvidia-smi")
        .arg(format!("--query-gpu=index,pci.bus_id,{}", fields.join(",")))
        .arg("--format=csv,noheader,nounits")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if start.elapsed() >= limit => {
                // Best effort: a child that cannot be killed is left to the OS.
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let mut out = String::new();
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    Some(out)
}

/// The warnings in `nvidia-smi`'s CSV: one line per GPU and field that reports trouble.
fn parse(csv: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for row in csv.lines().filter(|l| !l.trim().is_empty()) {
        let cells: Vec<&str> = row.split(',').map(str::trim).collect();
        let [index, bus, values @ ..] = cells.as_slice() else {
            continue;
        };
        for ((field, meaning), value) in FIELDS.iter().zip(values) {
            let trouble =
                value.eq_ignore_ascii_case("yes") || value.parse::<u64>().is_ok_and(|n| n > 0);
            if trouble {
                lines.push(format!(
                    "warning: GPU {index} ({bus}): {meaning} ({field} = {value}). After a kernel \
                     fault (kernel log: Xid 31), drawing with GL on this GPU can hang (Xid 109) \
                     until it is reset: reset it (`nvidia-smi -r`, as root, with no process on \
                     it) or use another GPU"
                ));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_healthy_gpu_gives_no_warning_and_trouble_names_the_gpu_and_the_field() {
        // As driver 580's nvidia-smi prints a healthy H200.
        assert!(parse("0, 00000000:00:06.0, No, No, No\n").is_empty());
        let lines = parse("0, 00000000:00:06.0, No, No, No\n1, 00000000:00:07.0, Yes, No, 2\n");
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains("GPU 1 (00000000:00:07.0)"),
            "{}",
            lines[0]
        );
        assert!(
            lines[0].contains("retired_pages.pending = Yes"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].contains("remapped_rows.failure = 2"),
            "{}",
            lines[1]
        );
        assert!(lines[0].contains("nvidia-smi -r"), "{}", lines[0]);
    }

    #[test]
    fn fields_the_driver_does_not_know_are_not_trouble() {
        // nvidia-smi prints "[N/A]" or "[Not Supported]" for what a GPU cannot report.
        assert!(parse("0, 00000000:00:06.0, [N/A], [Not Supported], [N/A]\n").is_empty());
        assert!(parse("garbage\n\n").is_empty());
    }

    #[test]
    fn a_missing_nvidia_smi_is_no_warning_and_no_hang() {
        let start = Instant::now();
        let lines = warnings(Duration::from_secs(5));
        assert!(start.elapsed() < Duration::from_secs(6));
        // On a machine without NVIDIA's driver there is nothing to report; on a GPU host each
        // line must be a well-formed warning.
        assert!(
            lines.iter().all(|l| l.starts_with("warning: GPU ")),
            "{lines:?}"
        );
    }
}
