#!/usr/bin/env python3
"""How much the destination memory costs a JPEG decode: pixpath decoding the same file into
  - "4 KiB pages": a block from aligned_alloc(64, size) (what decode()'s pool held before
    core's allocate_host_block: plain 4 KiB pages),
  - "2 MiB pages": a 2 MiB-aligned private mapping advised MADV_HUGEPAGE (what it holds now),
  - a numpy array (numpy advises its large arrays for huge pages too),
and pixpath.decode() itself, simplejpeg and PyTurboJPEG (each returns a new numpy array),
interleaved in rounds, one thread. Reports the median and best thread CPU ms (time.thread_time:
on a shared machine, what the decode cost apart from waiting for a core) and wall ms.

Usage: PYTHONPATH=build/default/python /opt/pixpath-bench-python/bin/python3 \
           bench/python/dest_memory.py [--rounds N] FILE.jpg...
"""
import argparse
import ctypes
import statistics
import time

import numpy as np

import pixpath


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    libc = ctypes.CDLL(None)
    libc.aligned_alloc.restype = ctypes.c_void_p
    libc.aligned_alloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    peers = {}
    try:
        import simplejpeg
        peers["simplejpeg"] = lambda d: simplejpeg.decode_jpeg(d, colorspace="RGB")
    except ImportError:
        pass
    try:
        from turbojpeg import TJPF_RGB, TurboJPEG
        tj = TurboJPEG()
        peers["PyTurboJPEG"] = lambda d: tj.decode(d, pixel_format=TJPF_RGB)
    except (ImportError, OSError):
        pass
    for path in args.files:
        data = open(path, "rb").read()
        h = pixpath.inspect(data)
        shape = (h["height"], h["width"], 3)
        size = shape[0] * shape[1] * 3

        def view(addr):
            return np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(addr)).reshape(shape)
        small = view(libc.aligned_alloc(64, (size + 63) // 64 * 64))
        base = libc.mmap(None, size + (4 << 20), 3, 0x22, -1, 0)  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
        huge_at = (base + (2 << 20) - 1) & ~((2 << 20) - 1)
        libc.madvise(huge_at, size // (2 << 20) * (2 << 20), 14)  # MADV_HUGEPAGE
        huge = view(huge_at)
        arr = np.empty(shape, np.uint8)
        fns = {"into 4 KiB pages (old pool)": lambda d: pixpath.decode(d, into=small),
               "into 2 MiB pages": lambda d: pixpath.decode(d, into=huge),
               "into numpy": lambda d: pixpath.decode(d, into=arr),
               "pixpath.decode()": lambda d: pixpath.decode(d)}
        fns.update(peers)
        cpu = {k: [] for k in fns}
        wall = {k: [] for k in fns}
        for fn in fns.values():
            fn(data), fn(data)
        for _ in range(args.rounds):
            for k, fn in fns.items():
                for _ in range(3):
                    c0, t0 = time.thread_time(), time.perf_counter()
                    fn(data)
                    wall[k].append((time.perf_counter() - t0) * 1000)
                    cpu[k].append((time.thread_time() - c0) * 1000)
        try:
            rollup = open("/proc/self/smaps_rollup").read()
            thp = rollup.split("AnonHugePages:")[1].split()[0] + " kB in 2 MiB pages"
        except (OSError, IndexError):
            thp = "huge pages unknown"
        print(f"\n{path} ({shape[1]}x{shape[0]}), {args.rounds} rounds x 3; this process: {thp}")
        print("| decode | CPU ms median | CPU ms best | wall ms median |\n|---|---:|---:|---:|")
        for k in fns:
            print(f"| {k} | {statistics.median(cpu[k]):.2f} | {min(cpu[k]):.2f} | {statistics.median(wall[k]):.2f} |")


if __name__ == "__main__":
    main()
