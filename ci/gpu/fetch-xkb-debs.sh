#!/usr/bin/env bash
# Adds xkbcommon to .xvfb/ (from ../shared/gpu/fetch-xvfb-debs.sh, run that first): winit loads
# libxkbcommon(-x11) at run time to read the keyboard of an X11 window, and a GPU host may not
# have it. `source .xvfb/start.sh` unpacks every .deb of .xvfb/ into /opt/x and puts its
# libraries on LD_LIBRARY_PATH, these with them. For `ci/gpu/suite.sh --window-examples`.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
[ -d .xvfb ] || { echo "no .xvfb/: run ../shared/gpu/fetch-xvfb-debs.sh first" >&2; exit 1; }
lists=$(mktemp -d)
mkdir -p "$lists/partial"
o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$lists"
apt-get $o update -qq
(cd .xvfb && apt-get $o download libxkbcommon0 libxkbcommon-x11-0 libxcb-xkb1 2>&1 \
  | grep -v '^W: Download is performed unsandboxed' || true)
ls .xvfb/libxkbcommon* .xvfb/libxcb-xkb*
