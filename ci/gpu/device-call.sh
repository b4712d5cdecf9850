#!/usr/bin/env bash
# One device call of a GPU run that may take more than one call: on the GPU host, from the
# repository root, with `.gl` and `.gpupack` carried (ci/gpu/pack.sh). Unpacks .gpupack/gpu.txz
# once per machine (again when the pack is newer), then runs ci/gpu/suite.sh with ARGS,
# resuming where an earlier call on the same warm machine stopped (SUITE_RESUME; the machine
# keeps the files outside the carried paths while it is warm). Stops CALL_LIMIT seconds (575 by
# default) after it began, before a 600 s call limit, and copies the resume file into $OUT.
#
# Usage: bash ci/gpu/device-call.sh [suite.sh ARGS...]   e.g. --examples, or --no-suite --bench ...
set -u
cd "$(dirname "$0")/../.."
if [ ! -f .gpu/.unpacked ] || [ .gpupack/gpu.txz -nt .gpu/.unpacked ]; then
    rm -rf .gpu && tar xJf .gpupack/gpu.txz && touch .gpu/.unpacked
fi
# wgpu's Vulkan backend headless: the loader finds NVIDIA's ICD only when pointed at it.
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$icd" ]; then export VK_DRIVER_FILES=${VK_DRIVER_FILES:-$icd}; fi
export SUITE_RESUME=${SUITE_RESUME:-$PWD/.gpu/resume.txt}
echo "start $(date -u +%H:%M:%S)"
timeout -k 5 "${CALL_LIMIT:-575}" bash ci/gpu/suite.sh "$@"
echo "suite.sh rc=$? end $(date -u +%H:%M:%S)"
pkill -f '\.gpu/(tests|bin|bench)/' 2>/dev/null
cp "$SUITE_RESUME" "${OUT:-/tmp}/" 2>/dev/null
true
