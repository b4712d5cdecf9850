#!/usr/bin/env bash
# Adds what the window examples need beyond Xvfb to .xvfb/ (from ../shared/gpu/fetch-xvfb-debs.sh,
# run that first), for `ci/gpu/suite.sh --window-examples`:
# - xkbcommon: winit loads libxkbcommon(-x11) at run time to read the keyboard of an X11 window,
#   and a GPU host may not have it;
# - Mesa's lavapipe (the CPU Vulkan driver) alone, out of mesa-vulkan-drivers, as
#   libvulkan_lvp.so.xz (1.5 MiB: the whole package is 8 MiB, and .xvfb/, .gl/ and a packed bundle
#   must fit in one device call), with the libraries it needs that Xvfb's Mesa does not bring:
#   where NVIDIA's Vulkan driver cannot present to Xvfb (not NVIDIA's X server), the wgpu window
#   examples (12, 14) open their window on lavapipe.
# `source .xvfb/start.sh` unpacks every .deb of .xvfb/ into /opt/x and puts its libraries on
# LD_LIBRARY_PATH; suite.sh unpacks lavapipe and registers it beside the other Vulkan drivers.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
[ -d .xvfb ] || { echo "no .xvfb/: run ../shared/gpu/fetch-xvfb-debs.sh first" >&2; exit 1; }
lists=$(mktemp -d)
mkdir -p "$lists/partial"
o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$lists"
apt-get $o update -qq
(cd .xvfb && apt-get $o download libxkbcommon0 libxkbcommon-x11-0 libxcb-xkb1 libwayland-client0 \
  libdrm2 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
(cd "$lists" && apt-get $o download mesa-vulkan-drivers 2>&1 \
  | grep -v '^W: Download is performed unsandboxed' || true)
dpkg -x "$lists"/mesa-vulkan-drivers_*.deb "$lists/mesa"
xz -9 -c "$lists/mesa/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so" >.xvfb/libvulkan_lvp.so.xz
rm -rf "$lists"
ls .xvfb/libxkbcommon* .xvfb/libxcb-xkb* .xvfb/libvulkan_lvp.so.xz
du -sh .xvfb
