#!/usr/bin/env bash
# The house rules of cuda-gl's source tree, checked without building anything:
# 1. no file in cuda-gl/src is longer than 600 lines (one job per file);
# 2. only cuda-gl/src/result/ calls the driver's functions (`drv!` or `sys::driver()`), so one
#    module holds every raw call and can be audited;
# 3. no import cycle between cuda-gl's top-level modules (ci/module_cycles.py);
# 4. cuda-gl/src never calls the `gl` crate's functions (`gl::GetError`, `gl::load_with`, ...):
#    its GL calls go through its own table in cuda-gl/src/glapi/, because any safe code can
#    overwrite the `gl` crate's global pointers. Constants (`gl::TEXTURE_2D`) are fine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fail=0
while read -r lines file; do
    [[ "$file" == total ]] && continue
    if ((lines > 600)); then
        echo "layering: $file has $lines lines (at most 600: split it by job)"
        fail=1
    fi
done < <(find cuda-gl/src -name '*.rs' -print0 | xargs -0 wc -l)
# `macro_rules! drv` and the `use` of it are the definition, not calls.
calls=$(grep -rnE '\bdrv!\(|driver\(\)\?\.cu|\.cu[A-Z][A-Za-z0-9_]*\(' cuda-gl/src \
    --include='*.rs' | grep -vE '^cuda-gl/src/result(\.rs|/)' | grep -vE '^\S+:[0-9]+:\s*//' || true)
if [[ -n "$calls" ]]; then
    echo "layering: driver calls outside cuda-gl/src/result (move each into result as one fn):"
    echo "$calls" | sed 's/^/    /'
    fail=1
fi
# CamelCase names after `gl::` are the crate's functions; ALL_CAPS ones are constants. Comment
# lines (the docs' examples of application code) are not calls of cuda-gl's.
gl_calls=$(grep -rnE '\bgl::([A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*|load_with|load)\b' cuda-gl/src \
    --include='*.rs' | grep -vE '^\S+:[0-9]+:\s*//' || true)
if [[ -n "$gl_calls" ]]; then
    echo "layering: calls of the gl crate's functions in cuda-gl/src (call GL through glapi's table):"
    echo "$gl_calls" | sed 's/^/    /'
    fail=1
fi
python3 ci/module_cycles.py || fail=1
if ((fail == 0)); then
    echo "layering: ok"
fi
exit "$fail"
