#!/usr/bin/env python3
"""The smallest reproducer of a driver crash: a call that queues work on a stream while another
thread is inside cuStreamBeginCapture on that same stream.

Plain CUDA driver calls through ctypes, no other library. Thread A loops on one stream S:
cuStreamBeginCapture (relaxed mode), cuStreamEndCapture, cuGraphDestroy. Thread B loops, in one
of these modes (results on an H200, driver 580.159.04, in records/gpu-runs.md, 2026-12-02):

  none          sleeps: A alone (never crashed)
  is-capturing  cuStreamIsCapturing(S): a query (never crashed)
  record-other  cuEventRecord(E, P) on another stream P (never crashed)
  record        cuEventRecord(E, S) (crashed in every run: SIGSEGV in B's record, while A was in
                cuStreamBeginCapture)
  memset        cuMemsetD8Async on S, what cudarc's memset_zeros calls (crashed in every run)
  record-query  cuEventRecord(E, S), cuEventQuery(E)
  wait-on-s     cuEventRecord(E, P), cuStreamWaitEvent(S, E)
  sync          cuEventRecord(E, S), cuStreamSynchronize(S) (what cuda-gl's join did before)
  ctx-sync      cuCtxSynchronize()
  query-wait    record on S, query, cuStreamWaitEvent(P, E) if plain (what cuda-gl's join does)

Each mode runs in a child process for a fixed time; the parent prints how it ended, and the
Python stack of each thread of the first crash (faulthandler).

usage: capture_race.py [seconds per run] [runs per mode] [mode ...]
"""
import ctypes
import faulthandler
import os
import signal
import subprocess
import sys
import threading
import time

CU_STREAM_NON_BLOCKING = 1
CU_STREAM_CAPTURE_MODE_RELAXED = 2
CU_EVENT_DISABLE_TIMING = 2
CUDA_ERROR_NOT_READY = 600


def child(mode, seconds):
    faulthandler.enable(all_threads=True)
    cu = ctypes.CDLL("libcuda.so.1")
    def ok(rc, what):
        if rc != 0:
            raise SystemExit(f"{what} failed: {rc}")
    ok(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    ok(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    ok(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    ok(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    s, p, e = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    ok(cu.cuStreamCreate(ctypes.byref(s), CU_STREAM_NON_BLOCKING), "cuStreamCreate")
    ok(cu.cuStreamCreate(ctypes.byref(p), CU_STREAM_NON_BLOCKING), "cuStreamCreate")
    ok(cu.cuEventCreate(ctypes.byref(e), CU_EVENT_DISABLE_TIMING), "cuEventCreate")
    cu.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    cu.cuMemsetD8Async.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p]
    buf = ctypes.c_uint64()
    ok(cu.cuMemAlloc_v2(ctypes.byref(buf), 4096), "cuMemAlloc")
    stop = threading.Event()
    counts = {"captures": 0, "calls": 0, "refused": 0}

    def capturer():
        cu.cuCtxSetCurrent(ctx)
        graph = ctypes.c_void_p()
        while not stop.is_set():
            if cu.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED) != 0:
                continue
            if cu.cuStreamEndCapture(s, ctypes.byref(graph)) == 0 and graph.value:
                cu.cuGraphDestroy(graph)
            counts["captures"] += 1

    def caller():
        cu.cuCtxSetCurrent(ctx)
        relaxed = ctypes.c_int(CU_STREAM_CAPTURE_MODE_RELAXED)
        cu.cuThreadExchangeStreamCaptureMode(ctypes.byref(relaxed))
        while not stop.is_set():
            if mode == "none":
                time.sleep(0.0001)
            elif mode == "is-capturing":
                status = ctypes.c_int()
                cu.cuStreamIsCapturing(s, ctypes.byref(status))
            elif mode == "record":
                cu.cuEventRecord(e, s)
            elif mode == "record-other":
                cu.cuEventRecord(e, p)
            elif mode == "ctx-sync":
                if cu.cuCtxSynchronize() != 0:
                    counts["refused"] += 1
            elif mode == "memset":
                cu.cuMemsetD8Async(buf, 1, 4096, s)
            elif mode == "wait-on-s":
                cu.cuEventRecord(e, p)
                cu.cuStreamWaitEvent(s, e, 0)
            elif mode == "sync":
                cu.cuEventRecord(e, s)
                if cu.cuStreamSynchronize(s) != 0:
                    counts["refused"] += 1
            elif mode == "record-query":
                cu.cuEventRecord(e, s)
                cu.cuEventQuery(e)
            else:
                cu.cuEventRecord(e, s)
                rc = cu.cuEventQuery(e)
                if rc in (0, CUDA_ERROR_NOT_READY):
                    cu.cuStreamWaitEvent(p, e, 0)
                else:
                    counts["refused"] += 1
            counts["calls"] += 1

    threads = [threading.Thread(target=capturer), threading.Thread(target=caller)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    cu.cuStreamSynchronize(p)
    print(f"{mode}: {counts['calls']} calls ({counts['refused']} saw a capture), "
          f"{counts['captures']} captures, no crash", flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], float(sys.argv[3]))
        return
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    modes = sys.argv[3:] or ["sync", "query-wait"]
    for mode in modes:
        crashed = 0
        for run in range(runs):
            r = subprocess.run([sys.executable, __file__, "--child", mode, str(seconds)],
                               capture_output=True, text=True, timeout=seconds + 60)
            if r.returncode < 0:
                crashed += 1
                how = signal.Signals(-r.returncode).name
                print(f"{mode} run {run + 1}: died with {how}", flush=True)
                if crashed == 1:
                    print(r.stderr, flush=True)
            else:
                print(f"{mode} run {run + 1}: rc {r.returncode}: {r.stdout.strip()}"
                      f"{r.stderr.strip()}", flush=True)
        print(f"== {mode}: {crashed} of {runs} runs crashed", flush=True)


if __name__ == "__main__":
    main()
