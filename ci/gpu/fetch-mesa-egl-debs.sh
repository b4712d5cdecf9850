#!/usr/bin/env bash
# Downloads Mesa's EGL vendor library with its software renderer (llvmpipe), and Mesa's Vulkan
# drivers with lavapipe, into .mesa/ at the root of this checkout (git-ignored), about 46 MiB, with
# `mesa-env.sh`. On an NVIDIA GPU host, `source .mesa/mesa-env.sh` unpacks it into /opt/mesa and
# points libglvnd's EGL at Mesa alone and the Vulkan loader at lavapipe alone, so a headless GL
# context is llvmpipe and the only Vulkan adapter lavapipe, while the CUDA driver stays NVIDIA's:
# the setup in which cuda-gl must return Error::NotNvidiaGl (tests/not_nvidia_gl.rs) and a wgpu
# target must run staged (tests/not_nvidia_vulkan.rs). Needs .gl/ too (its Vulkan loader).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
grep -qxF '/.mesa/' .git/info/exclude 2>/dev/null || echo '/.mesa/' >> .git/info/exclude
lists=$(mktemp -d)
mkdir -p .mesa "$lists/partial"
o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$lists"
apt-get $o update -qq
(cd .mesa && apt-get $o download libegl-mesa0 libgbm1 libwayland-client0 libwayland-server0 \
  libgl1-mesa-dri libglapi-mesa libllvm15 libz3-4 libsensors5 libdrm2 libdrm-amdgpu1 \
  libdrm-intel1 libdrm-nouveau2 libdrm-radeon1 libpciaccess0 libxcb-dri2-0 libxcb-dri3-0 \
  libxcb-present0 libxcb-randr0 libxcb-sync1 libxcb-xfixes0 libxcb-shm0 libxshmfence1 \
  libx11-xcb1 libelf1 libedit2 libbsd0 libmd0 mesa-vulkan-drivers 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
cp "$(dirname "$(readlink -f "$0")")/mesa-env.sh" .mesa/mesa-env.sh
du -sh .mesa
