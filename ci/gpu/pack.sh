#!/usr/bin/env bash
# Packs the GPU bundle (.gpu/, from ../shared/gpu/bundle.sh --all-features) into
# .gpupack/gpu.txz (git-ignored), so that a device call can carry it beside .gl/, .mesa/ and
# .xvfb/ within its 64 MiB: the example binaries that bundle.sh also copies into .gpu/tests/ go
# (they stay in .gpu/bin/), with the test binaries that need cargo there (trybuild) or test
# nothing on a GPU (xtask). On the GPU host: `tar xJf .gpupack/gpu.txz` first.
#
# Usage: bash ci/gpu/pack.sh [--tests REGEX] [--bins REGEX] [--no-bench] [--to DIR] [--from DIR]
#   --tests REGEX  keep only the test binaries whose names match REGEX (the whole bundle with
#                  .mesa/ exceeds the carry: e.g. --tests '^(gpu_suite|gpu_display|not_nvidia)')
#   --bins REGEX   keep only the programs in .gpu/bin/ (examples, the demo) matching REGEX
#   --no-bench     leave the benchmark out
#   --to DIR       write DIR/gpu.txz instead of .gpupack/gpu.txz (DIR must be git-ignored to be
#                  carried: .gpupack-mesa/ and .gpupack-win/ are), so that a call carrying .mesa/
#                  or .xvfb/ (about 45 MiB each) carries a slim pack and not the whole one. E.g.
#                  --to .gpupack-mesa --tests '^(not_nvidia|gpu_display)' --bins '^(10|13|15)_' --no-bench
#                  --to .gpupack-win --tests '^$' --bins '^(09|11|12|14)_' --no-bench
#                  then on the GPU host: tar xJf .gpupack-mesa/gpu.txz && bash ci/gpu/suite.sh --no-suite --mesa
#   --from DIR     pack DIR/.gpu (a worktree's bundle) into this checkout's .gpupack/
set -euo pipefail
root=$(git rev-parse --show-toplevel)
keep=. bins=. bench=1 to=.gpupack from=$root
while [ $# -gt 0 ]; do
    case $1 in
    --tests) shift; keep=$1 ;;
    --bins) shift; bins=$1 ;;
    --no-bench) bench=0 ;;
    --to) shift; to=${1%/} ;;
    --from) shift; from=$(cd "$1" && pwd) ;;
    *) echo "pack.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
cd "$root"
[ -d "$from/.gpu/tests" ] || { echo "no $from/.gpu/: run ../shared/gpu/bundle.sh --all-features first" >&2; exit 1; }
# A worktree's .git is a file: ask git where its exclude file is.
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qxF "/$to/" "$exclude" 2>/dev/null || echo "/$to/" >> "$exclude"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -a "$from/.gpu" "$stage/.gpu"
(cd "$stage/.gpu/tests" && rm -f -- [0-9][0-9]_* cudarc_interop plasma-demo xtask-* compile_fail-*)
(cd "$stage/.gpu/tests" && for t in *; do [[ $t =~ $keep ]] || rm -f -- "$t"; done)
rm -f "$stage/.gpu/bin/xtask"
(cd "$stage/.gpu/bin" && for b in *; do [[ $b =~ $bins ]] || rm -f -- "$b"; done)
((bench)) || rm -rf "$stage/.gpu/bench"/*
mkdir -p "$to"
tar cJf "$to/gpu.txz" -C "$stage" .gpu
du -sh "$stage/.gpu" "$to/gpu.txz"
