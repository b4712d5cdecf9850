#!/usr/bin/env bash
# CI for the cuda-gl workspace. Run as root (or with password-less sudo) on a fresh Debian 12 or
# Ubuntu 24.04 machine that has Rust through rustup; no GPU is needed (GPU tests skip themselves).
#
# 1. installs the missing system packages (only those `dpkg -s` does not report installed);
# 2. runs the steps below in order, stopping at the first failure, timing each one:
#      fmt, layering (ci/layering.sh: file sizes, driver calls only in result/, no import cycles;
#      ci/doc_links.py: every relative markdown link resolves),
#      clippy, test, doc, package (cargo package of cuda-gl-sys and cuda-gl, verified, and
#      cargo publish --dry-run of cuda-gl-sys), bindgen (reproducibility), ptx (reproducibility),
#      demo (smoke test);
# 3. ends with one line: `ci summary: fmt ok (3 s), ...; 9 passed, 0 skipped, 0 failed (612 s)`.
#
# Usage: ci/test.sh [STEP...]   (no STEP: all of them; e.g. `ci/test.sh fmt ptx` runs two)
#
# Every cargo command shares target/, so clippy, test and doc are the only three builds of the
# workspace (the xtask and the demo reuse the test build's dependencies; package verifies the two
# library crates from their .crate files, on the dependencies already built).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export CARGO_INCREMENTAL=0
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_RETRIES="${PIP_RETRIES:-2}"
export PIP_DEFAULT_TIMEOUT="${PIP_DEFAULT_TIMEOUT:-30}"

# System packages: the GLFW build (cmake, X11 headers), Xvfb for the demo's smoke test, Mesa's
# EGL/GL for headless contexts, GL headers for bindgen, libclang for bindgen, Mesa's lavapipe
# (software Vulkan) for the shader blit's test on the CPU (cuda-gl/tests/blit_lavapipe.rs).
APT_PACKAGES=(
    cmake pkg-config
    libx11-dev libxrandr-dev libxinerama-dev libxcursor-dev libxi-dev libxkbcommon-dev
    xvfb xauth
    libegl1 libegl-mesa0 libgl1-mesa-dri libgl-dev libegl-dev
    libclang-dev
    mesa-vulkan-drivers libvulkan1
    ffmpeg libde265-examples
)

ci_log() { printf 'ci: %s\n' "$*" >&2; }

# Prints the packages of APT_PACKAGES (plus python3-pip when `python3 -m pip` is missing) that
# are not installed, space-separated.
missing_packages() {
    local pkg missing=()
    for pkg in "${APT_PACKAGES[@]}"; do
        if ! dpkg -s "$pkg" 2>/dev/null | grep '^Status: install ok installed' >/dev/null; then
            missing+=("$pkg")
        fi
    done
    if ! python3 -m pip --version >/dev/null 2>&1; then
        missing+=(python3-pip)
    fi
    echo "${missing[*]}"
}

# Installs the missing packages: directly as root, through `sudo -n` otherwise; without either,
# prints the apt-get line to run and exits 1.
install_packages() {
    local missing=()
    read -r -a missing <<<"$(missing_packages)"
    if ((${#missing[@]} == 0)); then
        ci_log "system packages: all present"
        return 0
    fi
    local install=(apt-get install -y --no-install-recommends "${missing[@]}")
    ci_log "system packages: installing ${missing[*]}"
    if [[ "$(id -u)" == 0 ]]; then
        DEBIAN_FRONTEND=noninteractive apt-get update
        DEBIAN_FRONTEND=noninteractive "${install[@]}"
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n env DEBIAN_FRONTEND=noninteractive apt-get update
        sudo -n env DEBIAN_FRONTEND=noninteractive "${install[@]}"
    else
        ci_log "missing system packages and neither root nor password-less sudo; run as root:"
        echo "apt-get update && DEBIAN_FRONTEND=noninteractive ${install[*]}" >&2
        exit 1
    fi
}

# Adds clippy and rustfmt to the active toolchain when they are missing.
ensure_rust_components() {
    if ! command -v cargo >/dev/null 2>&1; then
        ci_log "cargo not found; install Rust with rustup first"
        exit 1
    fi
    local components=()
    cargo clippy --version >/dev/null 2>&1 || components+=(clippy)
    cargo fmt --version >/dev/null 2>&1 || components+=(rustfmt)
    if ((${#components[@]} > 0)); then
        if ! command -v rustup >/dev/null 2>&1; then
            ci_log "missing ${components[*]} and no rustup to add them"
            exit 1
        fi
        ci_log "adding rustup components: ${components[*]}"
        rustup component add "${components[@]}"
    fi
}

# ---- steps --------------------------------------------------------------------------------------
# A step function returns non-zero to fail; to skip, it sets SKIP_REASON and returns 0. Step
# functions run inside `if`, where `set -e` is off, so they chain with `&&` or `|| return`.

SKIP_REASON=""

step_fmt() { cargo fmt --all --check; }

# The house rules of cuda-gl/src (no build needed): see ci/layering.sh; and the markdown's
# relative links (ci/doc_links.py).
step_layering() { bash ci/layering.sh && python3 ci/doc_links.py; }

step_clippy() {
    cargo clippy --workspace --all-targets --all-features -- -D warnings || return
    # The cudarc interop without the other features, so its cfg gates stand on their own. cudarc
    # needs no CUDA toolkit here: .cargo/config.toml sets CUDARC_CUDA_VERSION.
    cargo clippy -p cuda-gl --lib --features cudarc -- -D warnings || return
    # wgpu's Vulkan route without the GL route (`wgpu-gl`), as an application on Vulkan builds it.
    cargo clippy -p cuda-gl --lib --features wgpu,egl -- -D warnings || return
    # With default features, as most users build it: what only an optional feature uses must
    # not warn there.
    cargo clippy -p cuda-gl --lib -- -D warnings
}

# Lavapipe is installed above: the blit's CPU test fails rather than skips without it.
step_test() {
    CUDA_GL_REQUIRE_VULKAN_SW=1 CUDA_GL_REQUIRE_FFMPEG=1 cargo test --workspace --all-features
}

step_doc() { RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features; }

# The two library crates as crates.io would get them. `cargo package` builds each .crate (what
# the `include` lists of their Cargo.toml let in) and verifies it by building it alone; cargo
# packages workspace members together through a temporary local registry, so cuda-gl's
# dependency on the unpublished cuda-gl-sys resolves. `cargo publish --dry-run` adds the
# registry's own checks for cuda-gl-sys, which depends on published crates only (cuda-gl's
# dry run needs cuda-gl-sys on crates.io first). Both read the crates.io index.
step_package() {
    # Cargo takes a registry crate of one version as never changing: a copy of cuda-gl-sys
    # unpacked from the temporary local registry by an earlier run (CARGO_HOME's
    # registry/src/-<hash>/, the folders of registries that are not crates.io), and its build in
    # a shared target folder, would stand in for today's. So both start afresh, the build in a
    # target folder of its own.
    rm -rf target/package-verify "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/cuda-gl-sys-* \
        "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/cuda-gl-[0-9]*
    CARGO_TARGET_DIR=target/package-verify cargo package -p cuda-gl-sys -p cuda-gl --allow-dirty ||
        return
    CARGO_TARGET_DIR=target/package-verify cargo publish --dry-run -p cuda-gl-sys --allow-dirty
}

have_libclang() {
    local ldconfig
    ldconfig="$(command -v ldconfig || echo /sbin/ldconfig)"
    # No `grep -q`: it would close the pipe early and pipefail would report ldconfig's SIGPIPE.
    "$ldconfig" -p 2>/dev/null | grep libclang >/dev/null
}

step_bindgen() {
    if ! have_libclang; then
        SKIP_REASON="no libclang"
        echo "skipped: no libclang"
        return 0
    fi
    cargo xtask bindgen --check
}

step_ptx() {
    mkdir -p target/ci || return
    # The pinned NVRTC comes from PyPI; CUDA_GL_ALLOW_SKIP=1 lets the task succeed with
    # "skipped" (and its reason) when pip cannot fetch it. A stale .ptx still fails.
    CUDA_GL_ALLOW_SKIP=1 cargo xtask ptx --check 2>&1 | tee target/ci/ptx.log || return
    if grep '^xtask ptx: skipped' target/ci/ptx.log >/dev/null; then
        SKIP_REASON="no NVRTC 12.0: pip could not fetch it"
        echo "skipped: no pinned CUDA compiler (see above)"
    fi
}

step_demo() { bash ci/demo-smoke.sh; }

STEPS=(fmt layering clippy test doc package bindgen ptx demo)
SUMMARY=()
PASSED=0
SKIPPED=0
FAILED=0
CI_START=$SECONDS
SUMMARY_PRINTED=0

print_summary() {
    ((SUMMARY_PRINTED)) && return 0
    SUMMARY_PRINTED=1
    local joined
    joined="$(printf '%s, ' "${SUMMARY[@]}")"
    joined="${joined%, }"
    [[ -n "$joined" ]] || joined="no steps ran"
    echo "ci summary: ${joined}; ${PASSED} passed, ${SKIPPED} skipped, ${FAILED} failed ($((SECONDS - CI_START)) s)"
}

on_exit() {
    local rc=$?
    if ((rc != 0 && FAILED == 0)); then
        SUMMARY+=("setup FAILED")
        FAILED=$((FAILED + 1))
    fi
    print_summary
}
trap on_exit EXIT

run_step() {
    local name=$1 start=$SECONDS rc=0
    SKIP_REASON=""
    echo
    echo "=== ci step: ${name} ==="
    if "step_${name}"; then
        local took=$((SECONDS - start))
        if [[ -n "$SKIP_REASON" ]]; then
            SUMMARY+=("${name} skipped: ${SKIP_REASON} (${took} s)")
            SKIPPED=$((SKIPPED + 1))
        else
            SUMMARY+=("${name} ok (${took} s)")
            PASSED=$((PASSED + 1))
        fi
        echo "=== ci step: ${name}: done in ${took} s ==="
    else
        rc=$?
        local took=$((SECONDS - start))
        SUMMARY+=("${name} FAILED (${took} s)")
        FAILED=$((FAILED + 1))
        echo "=== ci step: ${name}: FAILED (exit ${rc}) after ${took} s ===" >&2
        exit "$rc"
    fi
}

main() {
    if (($# > 0)); then
        local wanted
        for wanted in "$@"; do
            if ! declare -F "step_${wanted}" >/dev/null; then
                ci_log "unknown step '${wanted}'; steps: ${STEPS[*]}"
                exit 2
            fi
        done
        STEPS=("$@")
    fi
    install_packages
    ensure_rust_components
    cargo --version
    local step
    for step in "${STEPS[@]}"; do
        run_step "$step"
    done
}

main "$@"
