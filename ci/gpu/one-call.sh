#!/usr/bin/env bash
# What one device call can check when machines are scarce (each start may fail, and a session
# may get a single call): on the GPU host, from the repository root, with `.gl` and `.gpupack`
# carried, in about 590 s:
#   1. gpu_suite's tests matching SUITE_TESTS (default: the video, cudarc, planes, release-ahead
#      and raw-device tests) through device-call.sh, stopped after SUITE_LIMIT s (200); a
#      later call on the same warm machine resumes it (device-call.sh);
#   2. examples 13 (synthetic video) and 15 (NVDEC), their output checked by themselves;
#   3. the benchmark's wgpu present group and video group with --quick (200 iterations),
#      stopped after WP_LIMIT (150) and VID_LIMIT (120) s.
# Writes to $OUT: summary.txt, logs.tgz, resume.txt (device-call.sh), 15.png, examples.tgz
# (both examples' output and the suite's whole log), bench.tgz (both groups' files and logs):
# six files, within a call's eight. The kernel log's Xid lines are printed after each step.
#
# Usage: bash ci/gpu/one-call.sh   (after bundle.sh and pack.sh here; see docs/guide/gpu-testing.md)
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/cuda-gl-gpu}
mkdir -p "$out"
t0=$(date +%s)
step() { echo "[+$(($(date +%s) - t0)) s] $*"; dmesg 2>/dev/null | grep -i xid | tail -3; }
logs=$(mktemp -d)
SUITE_TESTS=${SUITE_TESTS:-'video|cudarc|planes|wgpu_ahead|raw_device'} CALL_LIMIT=${SUITE_LIMIT:-200} \
    bash ci/gpu/device-call.sh --only '^(gpu_suite|cuda_gl)-' >"$logs/suite.log" 2>&1
grep -E 'failed|panicked|FAIL|HANG|summary|^---' "$logs/suite.log" | tail -40
step "suite subset done"
source .gpu/env.sh
CUDA_GL_REQUIRE_GPU=1 timeout 40 .gpu/bin/13_video >"$logs/13.log" 2>&1
echo "13_video: exit $?: $(tail -1 "$logs/13.log")"
timeout 60 .gpu/bin/15_nvdec --screenshot "$out/15.png" >"$logs/15.log" 2>&1
echo "15_nvdec: exit $?"; tail -12 "$logs/15.log"
step "examples done"
tar czf "$out/examples.tgz" -C "$logs" suite.log 13.log 15.log
bench=$(ls .gpu/bench/interop-* 2>/dev/null | head -1)
if [ -z "$bench" ]; then
    echo "no benchmark in .gpu/bench: pack without --no-bench"
    exit 0
fi
timeout "${WP_LIMIT:-150}" "$bench" --quick --out "$logs/bw" --wgpu-present-only >"$logs/bw.log" 2>&1
echo "wgpu present group: exit $?"; grep -E 'x |target' "$logs/bw.log" | tail -25
step "wgpu present group done"
timeout "${VID_LIMIT:-120}" "$bench" --quick --out "$logs/bv" --video-only >"$logs/bv.log" 2>&1
echo "video group: exit $?"; grep -E 'x |target' "$logs/bv.log" | tail -25
step "video group done"
tar czf "$out/bench.tgz" -C "$logs" bw bv bw.log bv.log 2>/dev/null
ls "$out"
