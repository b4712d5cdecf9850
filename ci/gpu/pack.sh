#!/usr/bin/env bash
# Packs the GPU bundle (.gpu/, from ../shared/gpu/bundle.sh --all-features) into
# .gpupack/gpu.txz (about 5 MiB; git-ignored), so that a device call can carry it beside .gl/,
# .mesa/ and .xvfb/ within its 64 MiB: the example binaries that bundle.sh also copies into
# .gpu/tests/ go (they stay in .gpu/bin/), with the test binaries that need cargo there
# (trybuild) or test nothing on a GPU (xtask). On the GPU host: `tar xJf .gpupack/gpu.txz` first.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
[ -d .gpu/tests ] || { echo "no .gpu/: run ../shared/gpu/bundle.sh --all-features first" >&2; exit 1; }
grep -qxF '/.gpupack/' .git/info/exclude 2>/dev/null || echo '/.gpupack/' >> .git/info/exclude
(cd .gpu/tests && rm -f -- [0-9][0-9]_* cudarc_interop plasma-demo xtask-* compile_fail-*)
rm -f .gpu/bin/xtask
mkdir -p .gpupack
tar cJf .gpupack/gpu.txz .gpu
du -sh .gpu .gpupack/gpu.txz
