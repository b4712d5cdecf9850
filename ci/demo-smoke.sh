#!/usr/bin/env bash
# Smoke test of plasma-demo on a machine without a GPU, under Xvfb (step `demo` of ci/test.sh):
#
# 1. the CPU backend renders FRAMES frames in a window and saves the last one as a PNG;
# 2. the demo writes the CPU reference image of the same size and time, without a window;
# 3. the two images must be identical pixel for pixel (the demo's `compare` exits non-zero
#    otherwise);
# 4. the CUDA backend must fail cleanly without a GPU: a non-zero exit and a one-line reason on
#    stderr. Where a CUDA driver is present it must instead succeed.
#
# The demo's command line is spelled out once, in the variables below; align them with the demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# ---- the demo's command line ------------------------------------------------------------------
# Dev profile on purpose: `cargo test` has already built the demo's dependencies in it, and a
# release build would double CI's build time. Set DEMO_CARGO_PROFILE=--release to override.
DEMO_CARGO_PROFILE="${DEMO_CARGO_PROFILE:-}"
SIZE=320x180
TIME=1.5
FRAMES=60
OUT_DIR=target/ci
CPU_PNG=$OUT_DIR/cpu.png
REF_PNG=$OUT_DIR/ref.png
CUDA_PNG=$OUT_DIR/cuda.png
# Render with the CPU backend in a window and screenshot the last frame.
RENDER_CPU_ARGS=(--backend cpu --frames "$FRAMES" --screenshot "$CPU_PNG" --size "$SIZE" --time "$TIME")
# Write the CPU reference image (no window).
REFERENCE_ARGS=(--reference-png "$REF_PNG" --size "$SIZE" --time "$TIME")
# Exact comparison of the decoded pixels of two PNGs; non-zero exit on any difference.
COMPARE_ARGS=(compare "$CPU_PNG" "$REF_PNG")
# The CUDA backend (fails without a GPU).
RENDER_CUDA_ARGS=(--backend cuda --frames "$FRAMES" --screenshot "$CUDA_PNG" --size "$SIZE" --time "$TIME")
# Xvfb for the windowed runs.
XVFB=(xvfb-run -a -s "-screen 0 1280x720x24")
# ------------------------------------------------------------------------------------------------

PROFILE_ARGS=()
read -r -a PROFILE_ARGS <<<"$DEMO_CARGO_PROFILE"
CARGO_ARGS=(--quiet -p plasma-demo "${PROFILE_ARGS[@]}")
demo() { cargo run "${CARGO_ARGS[@]}" -- "$@"; }
smoke_log() { printf 'demo-smoke: %s\n' "$*" >&2; }

mkdir -p "$OUT_DIR"
rm -f "$CPU_PNG" "$REF_PNG" "$CUDA_PNG"

# Build first, so that the runs below print only the demo's own output.
cargo build -p plasma-demo "${PROFILE_ARGS[@]}"

smoke_log "CPU backend under Xvfb: ${RENDER_CPU_ARGS[*]}"
"${XVFB[@]}" cargo run "${CARGO_ARGS[@]}" -- "${RENDER_CPU_ARGS[@]}"
[[ -s "$CPU_PNG" ]] || {
    smoke_log "the CPU backend wrote no $CPU_PNG"
    exit 1
}

smoke_log "reference image: ${REFERENCE_ARGS[*]}"
demo "${REFERENCE_ARGS[@]}"
[[ -s "$REF_PNG" ]] || {
    smoke_log "the demo wrote no $REF_PNG"
    exit 1
}

smoke_log "exact compare: ${COMPARE_ARGS[*]}"
demo "${COMPARE_ARGS[@]}"

have_cuda_driver() {
    local ldconfig
    ldconfig="$(command -v ldconfig || echo /sbin/ldconfig)"
    "$ldconfig" -p 2>/dev/null | grep 'libcuda\.so\.1' >/dev/null
}

smoke_log "CUDA backend under Xvfb: ${RENDER_CUDA_ARGS[*]}"
err_file="$OUT_DIR/cuda.stderr"
rc=0
"${XVFB[@]}" cargo run "${CARGO_ARGS[@]}" -- "${RENDER_CUDA_ARGS[@]}" 2>"$err_file" || rc=$?
cat "$err_file" >&2
if have_cuda_driver; then
    # A CUDA driver is installed: the backend must work (Xvfb's GL is Mesa, so interop may still
    # be refused; then the reason must still be one line).
    if ((rc == 0)); then
        smoke_log "CUDA backend ran (a CUDA driver is present)"
        exit 0
    fi
fi
if ((rc == 0)); then
    smoke_log "the CUDA backend succeeded on a machine without a CUDA driver"
    exit 1
fi
# The demo's own lines: non-empty, and not the GL stack's chatter under Xvfb.
demo_lines() { grep -v -E '^(libEGL|libGL|MESA|Mesa|ATTENTION|glx:)' "$err_file" | grep . || true; }
lines="$(demo_lines | wc -l)"
if ((lines != 1)); then
    smoke_log "the CUDA backend failed (exit $rc) but printed $lines lines on stderr, not one"
    exit 1
fi
smoke_log "CUDA backend refused as expected (exit $rc): $(demo_lines)"
smoke_log "ok"
