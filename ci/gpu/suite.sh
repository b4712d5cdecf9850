#!/usr/bin/env bash
# The default GPU run, on the GPU host, from a bundle of release binaries in .gpu/ (tests/, bin/,
# bench/ and env.sh; see docs/guide/gpu-testing.md, "GPU tests on a host without Rust"): every test
# binary (for cuda-gl: gpu_suite, one module per feature, and the few that need a process of
# their own) under a timeout with `--test-threads=1` (faults last; its destructive cases stay off),
# the kernel log's Xid lines before and after, and a one-line summary per binary.
#
# Usage: bash ci/gpu/suite.sh [--twice] [--faults-one-by-one] [--watchdog] [--examples]
#                             [--window-examples] [--mesa [--mesa-present]] [--bench ARGS...]
#   --twice              the whole run twice in a row (no hang and no new Xid in either)
#   --faults-one-by-one  each non-destructive fault case alone, then a drawing test, then the
#                        kernel log: which cases leave the GPU able to draw
#   --watchdog           the demo and the benchmark with a kernel that outlasts a 2 s watchdog
#   --examples           every numbered example (screenshots into $OUT/shots.tgz), 12 a second
#                        time on wgpu's GL route (--gl; the bundle's --all-features has wgpu-gl),
#                        and the demo's first run with no display (it falls back to headless on
#                        its own)
#   --window-examples    then examples 09 (winit + glutin), 11 (eframe, glow), 12 (winit + wgpu)
#                        and 14 (eframe, wgpu) in a window under Xvfb, with NVIDIA's GLX; 12 and
#                        14 with NVIDIA's Vulkan (VK_DRIVER_FILES) and lavapipe beside it: where
#                        NVIDIA's Vulkan cannot present to Xvfb (not NVIDIA's X server), they
#                        open their window on lavapipe, run staged and say why (with no adapter
#                        that can present, they exit 2 and say why). Needs .xvfb/ and .gl/
#                        (fetch-xvfb-debs.sh, fetch-gl-debs.sh, then ci/gpu/fetch-xkb-debs.sh for
#                        winit's xkbcommon and lavapipe); sources .xvfb/start.sh in a subshell
#                        (screenshots into $OUT/window-shots.tgz)
#   --no-suite           skip the test binaries (with --bench, --examples, ...)
#   --only REGEX         only the test binaries whose file names match REGEX (and with
#                        SUITE_TESTS=REGEX in the environment, only gpu_suite's tests that match)
# gpu_suite's bounded-wait tests (modules bounded_waits, bounded_external_waits, wgpu_recovery,
# and tests named *gives_up_after*) each spin a kernel past cuda-gl's wait limit: they run with
# CUDA_GL_WAIT_LIMIT_MS=3000 (SUITE_WAIT_LIMIT_MS=N in the environment sets another; 10000 is the
# library's default), about 4.5 s each instead of 13. Every other test keeps the default 10 s:
# a 2160p frame, a soak or a slow first launch may wait longer than 3 s and must not time out.
# With SUITE_RESUME=FILE in the environment, every test binary run whole and every gpu_suite test
# that ends (passed, failed or hung; not one killed from outside) is written to FILE with its exit
# status, and those FILE names already are skipped, their earlier failures said again in the
# summary: a device call cut off by its time limit goes on where it stopped in the next call on
# the same machine (its files outside the carried paths stay while it is warm). FILE starts with
# the bundle's fingerprint (names, sizes and times of .gpu/tests/*): a FILE of another bundle is
# emptied first.
#   --mesa               then, with Mesa's EGL and lavapipe beside NVIDIA's CUDA (needs .mesa/, from
#                        ci/gpu/fetch-mesa-egl-debs.sh): the tests that need GL or Vulkan not on the CUDA
#                        GPU (not_nvidia_gl, the demo's staged default run, examples 10, 13, 15),
#                        required to run
#   --mesa-present       with --mesa: also the benchmark's present group under Mesa (staged rows
#                        only; its files go to $OUT/bench-mesa), then its wgpu present group
#                        under Mesa (only the staged rows on lavapipe: no Vulkan adapter is the
#                        CUDA GPU there; its files go to $OUT/bench-mesa-wgpu)
#   --bench ARGS         then the interop benchmark with ARGS (its files go to $OUT/bench)
# Writes $OUT/summary.txt and $OUT/logs.tgz (every binary's output). The logs are kept outside
# $OUT and packed into logs.tgz after every binary, so that a run stopped by the device call's
# time limit still brings them back (a device call returns only a few files from $OUT).
set -u
cd "$(dirname "$0")/../.."
source .gpu/env.sh
out=${OUT:-/tmp/cuda-gl-gpu}
mkdir -p "$out"
logs=$(mktemp -d)/logs
mkdir -p "$logs"
pack() { tar czf "$out/logs.tgz.tmp" -C "$(dirname "$logs")" logs && mv "$out/logs.tgz.tmp" "$out/logs.tgz"; }
sum="$out/summary.txt"
# Also every 20 s, so that a call that runs out of time still brings back the running binary's log.
(while sleep 20; do pack 2>/dev/null; done) &
packer=$!
trap 'kill $packer 2>/dev/null' EXIT
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }
xid() { say "--- kernel log, $1: $(dmesg 2>/dev/null | grep -c Xid) Xid lines"; dmesg 2>/dev/null | grep Xid | tail -3 | tee -a "$sum"; }
# run NAME TIMEOUT CMD...: runs CMD, logs its output as NAME, says its exit status and last result.
# earlier_rc KEY: prints KEY's exit status from an earlier call (SUITE_RESUME) and succeeds, or
# fails when KEY has not ended before. ended KEY RC: records it there, unless the run was killed
# from outside (SIGKILL or SIGTERM: the call's own limit), which a later call runs again.
earlier_rc() {
    [ -n "${SUITE_RESUME:-}" ] || return 1
    local line
    line=$(grep -F -- "$1 rc=" "$SUITE_RESUME" 2>/dev/null | grep -E -- "^.{${#1}} rc=[0-9]+$" | tail -1)
    [ -n "$line" ] && echo "${line##* rc=}"
}
ended() {
    if [ -n "${SUITE_RESUME:-}" ] && (($2 != 137 && $2 != 143)); then
        echo "$1 rc=$2" >>"$SUITE_RESUME"
    fi
}
if [ -n "${SUITE_RESUME:-}" ]; then
    bundle="bundle $(stat -c '%n %s %Y' .gpu/tests/* 2>/dev/null | md5sum | cut -c1-16)"
    [ "$(head -1 "$SUITE_RESUME" 2>/dev/null)" = "$bundle" ] || echo "$bundle" >"$SUITE_RESUME"
fi
run() {
    local name=$1 limit=$2 start=$SECONDS rc
    shift 2
    if rc=$(earlier_rc "$name"); then say "$name rc=$rc: ran in an earlier call (SUITE_RESUME)"; return; fi
    timeout "$limit" "$@" >"$logs/$name.log" 2>&1
    rc=$?
    say "$name rc=$rc $((SECONDS - start))s $(grep -E '^test result|frames/s|watchdog|^[0-9]{2}_[a-z_]+: ' "$logs/$name.log" | tail -1)"
    ended "$name" "$rc"
    pack
}
tests() { ls .gpu/tests | grep -v -E -e '^(compile_fail|xtask)' -e '^(plasma-demo|cudarc_interop)$' -e '^[0-9]{2}_' | grep -E -- "$only"; }
# The gpu_suite tests that spin a kernel past cuda-gl's wait limit (see the usage above).
bounded='^(bounded_waits|bounded_external_waits|wgpu_recovery)::|gives_up_after'
# gpu_suite holds one module per feature: each of its tests runs alone under 90 s, so that one
# hang costs 90 s and names itself instead of taking the whole call's time and every later result.
each_test() {
    local bin=$1 name=$2 t rc fails=0 hangs=0 passed=0 earlier=0 start=$SECONDS limit
    : >"$logs/$name.log"
    for t in $("$bin" --list 2>/dev/null | sed -n 's/: test$//p' | grep -E -- "${SUITE_TESTS:-.}"); do
        if rc=$(earlier_rc "$name $t"); then
            earlier=$((earlier + 1))
            if ((rc == 124)); then hangs=$((hangs + 1)); say "  HANG (90 s, an earlier call) $t"
            elif ((rc != 0)); then fails=$((fails + 1)); say "  FAIL rc=$rc (an earlier call) $t"
            else passed=$((passed + 1)); fi
            continue
        fi
        limit=()
        [[ $t =~ $bounded ]] && limit=(CUDA_GL_WAIT_LIMIT_MS="${SUITE_WAIT_LIMIT_MS:-3000}")
        echo "=== $t ${limit[*]}" >>"$logs/$name.log"
        env "${limit[@]}" timeout 90 "$bin" --exact "$t" --test-threads=1 >>"$logs/$name.log" 2>&1
        rc=$?
        if ((rc == 0)); then passed=$((passed + 1))
        elif ((rc == 124)); then hangs=$((hangs + 1)); say "  HANG (90 s) $t"
        else fails=$((fails + 1)); say "  FAIL rc=$rc $t"; fi
        ended "$name $t" "$rc"
    done
    say "$name $((SECONDS - start))s: $passed passed, $fails failed, $hangs hung$( ((earlier)) && echo " ($earlier of them in an earlier call)")"
    pack
}
suite() {
    local t
    for t in $(tests | grep -v '^faults') $(tests | grep '^faults'); do
        if [[ $t == gpu_suite-* ]]; then each_test ".gpu/tests/$t" "$1$t"; continue; fi
        run "$1$t" 300 ".gpu/tests/$t" --test-threads=1
    done
}
twice=0 one_by_one=0 watchdog=0 examples=0 window_examples=0 suite=1 mesa=0 mesa_present=0
bench=() only=.
while (($#)); do
    case $1 in
    --twice) twice=1 ;;
    --faults-one-by-one) one_by_one=1 ;;
    --watchdog) watchdog=1 ;;
    --examples) examples=1 ;;
    --window-examples) window_examples=1 ;;
    --no-suite) suite=0 ;;
    --only) shift; only=$1 ;;
    --mesa) mesa=1 ;;
    --mesa-present) mesa_present=1 ;;
    --bench) shift; bench=(--out "$out/bench" "$@"); break ;;
    esac
    shift
done
# What the driver says about the GPUs before anything runs (no privileges needed): a GPU that
# needs a reset after a kernel fault hangs every later program that draws with GL.
say "--- driver health: $(timeout 10 nvidia-smi --query-gpu=index,retired_pages.pending,remapped_rows.pending,remapped_rows.failure --format=csv,noheader 2>&1 | tr '\n' ';')"
xid start
if ((suite)); then
    suite ""
    xid "after the suite"
fi
if ((twice)); then
    suite "second-"
    xid "after the second suite"
fi
if ((one_by_one)); then
    faults=$(ls .gpu/tests/faults-* | head -1)
    reference=$(ls .gpu/tests/gpu_reference-* | head -1)
    for case in $("$faults" --list 2>/dev/null | sed -n 's/: test$//p'); do
        run "fault-$case" 120 "$faults" --exact "$case" --test-threads=1
        run "draw-after-$case" 120 "$reference" --test-threads=1
        xid "after $case and a drawing test"
    done
fi
if ((watchdog)); then
    run demo-watchdog 60 .gpu/bin/plasma-demo --headless --backend cuda --frames 3 --watchdog-secs 2 --debug-spin-ms 8000
    run bench-watchdog 60 "$(ls .gpu/bench/interop-* | head -1)" --quick --watchdog-secs 2 --debug-spin-ms 8000
    run demo-after-watchdog 60 .gpu/bin/plasma-demo --headless --backend cuda --frames 120
    xid "after the watchdog runs"
fi
if ((examples)); then
    mkdir -p "$out/shots"
    for e in $(ls .gpu/bin | grep -E '^[0-9]{2}_'); do
        run "example-$e" 120 ".gpu/bin/$e" --screenshot "$out/shots/$e.png"
    done
    if [ -x .gpu/bin/12_wgpu_window ]; then
        run example-12_wgpu_window-gl 120 .gpu/bin/12_wgpu_window --gl \
            --screenshot "$out/shots/12_wgpu_window-gl.png"
    fi
    (cd "$out/shots" && env -u DISPLAY -u WAYLAND_DISPLAY timeout 60 "$OLDPWD/.gpu/bin/plasma-demo") \
        >"$logs/demo-first-run.log" 2>&1
    say "demo first run (no display) rc=$? $(grep -E 'headless|frames/s|screenshot' "$logs/demo-first-run.log" | tr '\n' ' ')"
    find /tmp -maxdepth 1 -name 'plasma-demo-*.png' -exec cp {} "$out/shots/" \;
    xid "after the examples"
    tar czf "$out/shots.tgz" -C "$out" shots && rm -rf "$out/shots"
fi
if ((window_examples)); then
    mkdir -p "$out/window-shots"
    # In a subshell: start.sh exports DISPLAY and NVIDIA's GLX vendor for the processes it starts.
    # Sourced, not through a pipe (a pipe would run it in a subshell of its own, and lose both).
    (
        source .xvfb/start.sh >"$logs/xvfb-start.log" 2>&1
        say "xvfb: $(tail -1 "$logs/xvfb-start.log")"
        # winit compiles its keymap with xkbcommon, which looks for the keyboard data here.
        export XKB_CONFIG_ROOT=${XKB_CONFIG_ROOT:-/opt/x/usr/share/X11/xkb}
        # NVIDIA's Vulkan may not present to Xvfb (not NVIDIA's X server): lavapipe (added to
        # .xvfb/ by ci/gpu/fetch-xkb-debs.sh; its libraries come with Xvfb's Mesa) goes beside
        # it, and the wgpu windows (12, 14) open on whichever adapter can present, and say which
        # and why.
        lvp=/opt/x/libvulkan_lvp.so
        if [ -f .xvfb/libvulkan_lvp.so.xz ] && xz -dc .xvfb/libvulkan_lvp.so.xz >"$lvp"; then
            printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "1.3.230"}}\n' \
                "$lvp" >/opt/x/lvp_icd.json
            # VK_DRIVER_FILES replaces the loader's search (it may name NVIDIA's ICD alone):
            # extend it; without it, VK_ADD_DRIVER_FILES adds to the drivers the system has.
            if [ -n "${VK_DRIVER_FILES:-}" ]; then
                export VK_DRIVER_FILES=$VK_DRIVER_FILES:/opt/x/lvp_icd.json
            else
                export VK_ADD_DRIVER_FILES=/opt/x/lvp_icd.json
            fi
            say "wgpu windows: lavapipe beside the other Vulkan drivers (${VK_DRIVER_FILES:-$VK_ADD_DRIVER_FILES})"
        else
            say "wgpu windows: no lavapipe in .xvfb/ (ci/gpu/fetch-xkb-debs.sh): 12 and 14 say they cannot run"
        fi
        for e in $(ls .gpu/bin | grep -E '^(09|11|12|14)_'); do
            run "window-example-$e" 120 ".gpu/bin/$e" --window --screenshot "$out/window-shots/$e.png"
        done
        kill "$XVFB_PID" 2>/dev/null
    )
    xid "after the window examples"
    tar czf "$out/window-shots.tgz" -C "$out" window-shots && rm -rf "$out/window-shots"
fi
if ((mesa)); then
    # In a subshell: mesa-env.sh points libglvnd's EGL at Mesa for the processes it starts.
    (
        source .mesa/mesa-env.sh >/dev/null
        export CUDA_GL_REQUIRE_MESA=1
        run mesa-not_nvidia_gl 300 "$(ls .gpu/tests/not_nvidia_gl-* | head -1)" --test-threads=1
        # wgpu on lavapipe beside NVIDIA's CUDA: the wgpu target refuses interop and runs staged.
        run mesa-not_nvidia_vulkan 300 "$(ls .gpu/tests/not_nvidia_vulkan-* | head -1)" --test-threads=1
        run mesa-demo-staged 300 "$(ls .gpu/tests/gpu_display-* | head -1)" --test-threads=1 \
            --exact on_mesa_next_to_cuda_the_default_run_is_staged
        # "Show this array" (10), decoded video (13) and NVDEC's frames (15) where GL is not
        # NVIDIA's: they take any GL, and the target goes staged.
        for e in 10_show_field 13_video 15_nvdec; do
            if [ -x ".gpu/bin/$e" ]; then
                run "mesa-$e" 120 ".gpu/bin/$e"
            else
                say "mesa-$e: not run: no .gpu/bin/$e (bundle.sh builds it)"
            fi
        done
        if ((mesa_present)); then
            run bench-mesa-present 200 "$(ls .gpu/bench/interop-* | head -1)" --present-only \
                --out "$out/bench-mesa"
            run bench-mesa-wgpu 300 "$(ls .gpu/bench/interop-* | head -1)" --wgpu-present-only \
                --out "$out/bench-mesa-wgpu"
        fi
    )
    xid "after the Mesa runs"
fi
if ((${#bench[@]})); then
    run bench 560 "$(ls .gpu/bench/interop-* | head -1)" "${bench[@]}"
    xid "after the benchmark"
fi
kill "$packer" 2>/dev/null
pack && rm -rf "$logs"
