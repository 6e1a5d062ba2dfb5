#!/usr/bin/env python3
"""pixpath vs the Python GPU peers on the same screen JPEGs: single-picture latency (p50 of
host wall time, each decode followed by torch.cuda.synchronize(), so the pixels are ready on
the device), to a torch tensor on the GPU:
  - pixpath: pixpath.decode(data, device="cuda") then torch.from_dlpack (no copy; RGBA)
  - torchvision.io.decode_jpeg(device="cuda") (RGB, nvJPEG through torch)
  - nvImageCodec (nvidia.nvimgcodec.Decoder().decode, then torch.as_tensor), when installed
and on the CPU: pixpath.decode (RGB) vs torchvision.io.decode_jpeg (RGB, libjpeg-turbo).
Also pictures/s with 1, 2 and 4 threads for the GPU routes.

Usage: python3 compare_gpu.py [--out DIR] [--iters N] FILE.jpg...
(the staged python-gpu-check.sh runs it; from a checkout: PYTHONPATH=build/default/python)
Writes DIR/gpu-results.json and DIR/gpu-latency.svg (when matplotlib is there) and prints
Markdown tables.
"""
import argparse
import concurrent.futures
import json
import statistics
import threading
import time
from pathlib import Path

import pixpath


def p50_ms(fn, iters, warmup=5):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def per_second(fn, threads, seconds=1.5):
    stop = threading.Event()
    counts = [0] * threads

    def work(i):
        n = 0
        while not stop.is_set():
            fn()
            n += 1
        counts[i] = n

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        futs = [pool.submit(work, i) for i in range(threads)]
        t0 = time.perf_counter()
        time.sleep(seconds)
        stop.set()
        for f in futs:
            f.result()
    return sum(counts) / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/out/python-peers")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import torch
    import torchvision
    from torchvision.io import decode_jpeg
    try:
        from nvidia import nvimgcodec
        # One decoder per thread: a decoder used from a thread other than its creator's failed
        # on the H200 ("std::future_error: Broken promise", None returned).
        nv_local = threading.local()

        def nvdec_here():
            if not hasattr(nv_local, "decoder"):
                nv_local.decoder = nvimgcodec.Decoder()
            return nv_local.decoder
        nvdec = nvdec_here
        nv_version = getattr(nvimgcodec, "__version__", "?")
    except ImportError as e:
        nvdec, nv_version = None, f"not installed ({e})"
    info = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "torchvision": torchvision.__version__, "nvimgcodec": nv_version,
            "pixpath": pixpath.__version__}
    print(json.dumps(info, indent=1), flush=True)
    results = {"info": info, "files": {}}
    for path in args.files:
        data = Path(path).read_bytes()
        tdata = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        name = Path(path).name
        routes = {}

        def pixpath_cuda():
            t = torch.from_dlpack(pixpath.decode(data, device="cuda"))
            torch.cuda.synchronize()
            return t

        def tv_cuda():
            t = decode_jpeg(tdata, device="cuda")
            torch.cuda.synchronize()
            return t
        routes["pixpath cuda (DLPack)"] = pixpath_cuda
        routes["torchvision cuda"] = tv_cuda
        if nvdec is not None:
            def nv_cuda():
                img = nvdec().decode(data)
                if img is None:
                    raise RuntimeError("nvImageCodec returned no picture")
                t = torch.as_tensor(img, device="cuda")
                torch.cuda.synchronize()
                return t
            routes["nvImageCodec cuda"] = nv_cuda
        routes["pixpath cpu"] = lambda: pixpath.decode(data)
        routes["torchvision cpu"] = lambda: decode_jpeg(tdata)
        # same pixels? (RGB of each against pixpath's CPU decode; nvJPEG's IDCT differs a little)
        import numpy as np
        ref = np.asarray(pixpath.decode(data)).astype(np.int16)
        diffs = {}
        for rname, fn in routes.items():
            t = fn()
            a = t.cpu().numpy() if hasattr(t, "cpu") else np.asarray(t)
            if a.ndim == 3 and a.shape[0] in (3, 4) and a.shape[-1] not in (3, 4):
                a = a.transpose(1, 2, 0)  # CHW (torchvision) -> HWC
            diffs[rname] = int(np.abs(a[..., :3].astype(np.int16) - ref).max())
        entry = {"bytes": len(data), "p50_ms": {}, "per_s": {}, "max_abs_diff_vs_pixpath_cpu": diffs}
        for rname, fn in routes.items():
            iters = args.iters if "cuda" in rname else max(10, args.iters // 5)
            entry["p50_ms"][rname] = round(p50_ms(fn, iters), 3)
            if "cuda" in rname:
                entry["per_s"][rname] = {t: round(per_second(fn, t), 1) for t in (1, 2, 4)}
            print(f"{name:28s} {rname:24s} p50 {entry['p50_ms'][rname]:8.3f} ms  "
                  + "  ".join(f"{t}T {v:.0f}/s" for t, v in entry["per_s"].get(rname, {}).items()), flush=True)
        results["files"][name] = entry
    (out / "gpu-results.json").write_text(json.dumps(results, indent=1))
    routes = list(next(iter(results["files"].values()))["p50_ms"])
    print("\n| file | " + " | ".join(routes) + " |\n|---|" + "---|" * len(routes))
    for name, e in results["files"].items():
        print(f"| {name} | " + " | ".join(f"{e['p50_ms'].get(r, float('nan')):.3f}" for r in routes) + " |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
        files = list(results["files"])
        fig, ax = plt.subplots(figsize=(11, 5))
        w = 0.8 / len(routes)
        for i, r in enumerate(routes):
            ax.bar(np.arange(len(files)) + i * w, [results["files"][f]["p50_ms"].get(r, np.nan) for f in files], w, label=r)
        ax.set_xticks(np.arange(len(files)) + 0.4 - w / 2)
        ax.set_xticklabels(files, rotation=15, ha="right")
        ax.set_yscale("log")
        ax.set_ylabel("ms per picture (p50, one thread, synchronised)")
        ax.set_title(f"JPEG decode to a torch tensor — {info['gpu']}")
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(out / "gpu-latency.svg")
    except ImportError:
        print("(matplotlib not installed: no plot; gpu-results.json has the numbers)")


if __name__ == "__main__":
    main()
