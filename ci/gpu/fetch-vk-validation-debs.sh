#!/usr/bin/env bash
# Downloads Khronos' Vulkan validation layer (Debian 12's vulkan-validationlayers, about 4.5 MiB)
# into .vkval/ at the root of this checkout (git-ignored), with `vkval-env.sh`. On a GPU host,
# `source .vkval/vkval-env.sh` unpacks it into /opt/vkval, puts the layer on the Vulkan loader's
# path and sets CUDA_GL_VK_VALIDATION=1: the wgpu tests (gpu_suite's wgpu_* modules) then run
# their instance under the layer and fail on any validation error (layouts, queue-family
# ownership, semaphores), e.g.
#   source .vkval/vkval-env.sh && SUITE_TESTS='wgpu|egui_wgpu' bash ci/gpu/suite.sh --only gpu_suite
# Needs .gl/ (its Vulkan loader) and VK_DRIVER_FILES pointing at NVIDIA's ICD.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
lists=$(mktemp -d)
mkdir -p .vkval "$lists/partial"
o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$lists"
apt-get $o update -qq
(cd .vkval && apt-get $o download vulkan-validationlayers 2>&1 \
  | grep -v '^W: Download is performed unsandboxed' || true)
cp "$(dirname "$(readlink -f "$0")")/vkval-env.sh" .vkval/vkval-env.sh
du -sh .vkval
