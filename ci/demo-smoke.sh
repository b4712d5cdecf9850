#!/usr/bin/env bash
# Smoke test of plasma-demo on a machine without a GPU, under Xvfb (step `demo` of ci/test.sh):
#
# 1. the CPU backend renders FRAMES frames in a window (GLFW, OpenGL 3.3 core on Mesa) and exits
#    0, saving the last frame as a PNG;
# 2. the demo writes the CPU reference image of the same size and time, without any OpenGL;
# 3. the two must be identical pixel for pixel (`plasma-demo compare` with tolerance 0);
# 4. the same three steps headless (EGL, Mesa's surfaceless platform);
# 5. `--backend cuda` must fail cleanly without a CUDA driver: a non-zero exit and exactly one
#    line of its own on stderr. Where a CUDA driver is installed it may instead succeed (with the
#    default `--path auto`, Xvfb's Mesa OpenGL gets the display target's staged mode).
#
# The demo is built once in the dev profile, like `cargo test --workspace` in ci/test.sh, so the
# dependencies (GLFW's CMake build included) are reused; DEMO_CARGO_PROFILE=--release overrides.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# ---- the demo's command line ------------------------------------------------------------------
DEMO_CARGO_PROFILE="${DEMO_CARGO_PROFILE:-}"
SIZE=320x180
TIME=1.5
FRAMES=60
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
OUT_DIR=$TARGET_DIR/ci
CPU_PNG=$OUT_DIR/cpu.png
HEADLESS_PNG=$OUT_DIR/headless.png
REF_PNG=$OUT_DIR/ref.png
CUDA_PNG=$OUT_DIR/cuda.png
# Render with the CPU backend in a window and screenshot the last frame.
RENDER_CPU_ARGS=(--backend cpu --frames "$FRAMES" --screenshot "$CPU_PNG" --size "$SIZE" --time "$TIME")
# The same, headless through EGL.
RENDER_HEADLESS_ARGS=(--headless --backend cpu --frames "$FRAMES" --screenshot "$HEADLESS_PNG" --size "$SIZE" --time "$TIME")
# Write the CPU reference image (no OpenGL).
REFERENCE_ARGS=(reference --size "$SIZE" --time "$TIME" --out "$REF_PNG")
# The CUDA backend in a window (fails without a CUDA driver).
RENDER_CUDA_ARGS=(--backend cuda --frames "$FRAMES" --screenshot "$CUDA_PNG" --size "$SIZE" --time "$TIME")
# Xvfb for the windowed runs.
XVFB=(xvfb-run -a -s "-screen 0 1280x720x24")
# ------------------------------------------------------------------------------------------------

PROFILE_ARGS=()
read -r -a PROFILE_ARGS <<<"$DEMO_CARGO_PROFILE"
PROFILE_DIR=debug
for arg in "${PROFILE_ARGS[@]}"; do
    [[ "$arg" == --release ]] && PROFILE_DIR=release
done
DEMO=$TARGET_DIR/$PROFILE_DIR/plasma-demo
smoke_log() { printf 'demo-smoke: %s\n' "$*" >&2; }

mkdir -p "$OUT_DIR"
rm -f "$CPU_PNG" "$HEADLESS_PNG" "$REF_PNG" "$CUDA_PNG"

# Build once, then run the binary directly: the runs print only the demo's own output.
cargo build -p plasma-demo "${PROFILE_ARGS[@]}"
[[ -x "$DEMO" ]] || {
    smoke_log "no $DEMO after the build"
    exit 1
}

require_png() {
    [[ -s "$1" ]] || {
        smoke_log "$2 wrote no $1"
        exit 1
    }
}

smoke_log "CPU backend in a window under Xvfb: ${RENDER_CPU_ARGS[*]}"
"${XVFB[@]}" "$DEMO" "${RENDER_CPU_ARGS[@]}"
require_png "$CPU_PNG" "the windowed CPU run"

smoke_log "CPU backend headless (EGL): ${RENDER_HEADLESS_ARGS[*]}"
"$DEMO" "${RENDER_HEADLESS_ARGS[@]}"
require_png "$HEADLESS_PNG" "the headless CPU run"

smoke_log "reference image: ${REFERENCE_ARGS[*]}"
"$DEMO" "${REFERENCE_ARGS[@]}"
require_png "$REF_PNG" "plasma-demo reference"

smoke_log "exact compare (tolerance 0)"
"$DEMO" compare "$CPU_PNG" "$REF_PNG" --tolerance 0
"$DEMO" compare "$HEADLESS_PNG" "$REF_PNG" --tolerance 0

have_cuda_driver() {
    local ldconfig
    ldconfig="$(command -v ldconfig || echo /sbin/ldconfig)"
    # No `grep -q`: it would close the pipe early and pipefail would report ldconfig's SIGPIPE.
    "$ldconfig" -p 2>/dev/null | grep 'libcuda\.so\.1' >/dev/null
}

smoke_log "CUDA backend in a window under Xvfb: ${RENDER_CUDA_ARGS[*]}"
err_file="$OUT_DIR/cuda.stderr"
rc=0
"${XVFB[@]}" "$DEMO" "${RENDER_CUDA_ARGS[@]}" 2>"$err_file" || rc=$?
cat "$err_file" >&2
if ((rc == 0)); then
    if have_cuda_driver; then
        smoke_log "CUDA backend ran (a CUDA driver is present)"
        smoke_log "ok"
        exit 0
    fi
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
if ! demo_lines | grep '^plasma-demo: error: ' >/dev/null; then
    smoke_log "the CUDA backend's line is not the demo's error line"
    exit 1
fi
smoke_log "CUDA backend refused as expected (exit $rc): $(demo_lines)"
smoke_log "ok"
