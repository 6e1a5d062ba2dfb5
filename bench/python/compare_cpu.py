#!/usr/bin/env python3
"""pixpath vs the Python peers on the CPU, on the same files: single-picture latency and
throughput per thread count (the median of --tp-rounds interleaved rounds), for 1080p and 4K
screen JPEGs, PNG and WebP.

Every decoder is asked for what an image pipeline wants: RGB pixels in an array-like object
(numpy, or for pixpath a Picture exporting the buffer protocol; np.asarray on it is free).
Peers: Pillow (to a numpy array, and Image.load() alone), simplejpeg, PyTurboJPEG (the TurboJPEG
2 API on Debian's libjpeg-turbo), OpenCV (cv2.imdecode, RGB). pixpath also decodes into a
reused buffer (decode(data, into=array)).

Inputs: the screen captures of bench/cuda/make_screen_jpegs.sh (Xvfb with xterms, xclock,
xeyes, glxgears; run with KEEP_PPM=1 so the PPMs stay), encoded here: JPEG q50 4:2:0 and q90
4:4:4 (cjpeg, as the GPU benchmark), PNG (Pillow, level 6) and WebP (Pillow, lossy q80).

Usage (the environment: bench/python/setup-venv; pixpath's extension on PYTHONPATH):
  PYTHONPATH=build/default/python /opt/pixpath-bench-python/bin/python3 \
      bench/python/compare_cpu.py [--data DIR] [--out docs/python-peers] [--seconds S]
Writes OUT/TAG-results.json and the SVG plots OUT/TAG-latency.svg, OUT/TAG-threads.svg (TAG:
--tag, default "cpu"), and prints a Markdown table.
"""
import argparse
import concurrent.futures
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

import pixpath

ROOT = Path(__file__).resolve().parents[2]


def make_inputs(data: Path):
    """Screen captures (PPM) -> JPEG, PNG, WebP; reuses what is there."""
    data.mkdir(parents=True, exist_ok=True)
    names = [f"screen{s}{x}" for s in ("1080", "4k")
             for x in ("_q50_420.jpg", "_q90_444.jpg", ".png", "_q80.webp")]
    if all((data / n).exists() for n in names):  # encoded already (e.g. staged elsewhere)
        return {label_of(n): data / n for n in names}
    if not (data / "screen4k.ppm").exists():
        env = dict(os.environ, KEEP_PPM="1")
        subprocess.run(["bash", str(ROOT / "bench/cuda/make_screen_jpegs.sh"), str(data)], check=True, env=env)
    from PIL import Image
    files = {}
    for size in ("1080", "4k"):
        ppm = data / f"screen{size}.ppm"
        for q, samp, name in ((50, "2x2", "q50_420"), (90, "1x1", "q90_444")):
            out = data / f"screen{size}_{name}.jpg"
            if not out.exists():
                subprocess.run(["cjpeg", "-quality", str(q), "-sample", samp, "-outfile", str(out), str(ppm)], check=True)
            files[f"{size} JPEG {name}"] = out
        im = Image.open(ppm).convert("RGB")
        png = data / f"screen{size}.png"
        if not png.exists():
            im.save(png, "PNG", compress_level=6)
        files[f"{size} PNG"] = png
        webp = data / f"screen{size}_q80.webp"
        if not webp.exists():
            im.save(webp, "WEBP", quality=80)
        files[f"{size} WebP q80"] = webp
    return files


def label_of(name):
    size = "1080" if name.startswith("screen1080") else "4k"
    if name.endswith(".jpg"):
        return f"{size} JPEG {name.split('_', 1)[1][:-4]}"
    return f"{size} PNG" if name.endswith(".png") else f"{size} WebP q80"


def decoders(kind):
    """name -> function(bytes) -> array-like RGB pixels, for one file kind."""
    from PIL import Image
    out = {}
    out["pixpath"] = lambda d: pixpath.decode(d)
    out["pixpath into="] = None  # filled per file (needs the size)
    out["Pillow"] = lambda d: np.asarray(Image.open(io.BytesIO(d)).convert("RGB"))

    def pil_load(d):
        im = Image.open(io.BytesIO(d))
        im.load()
        return im
    out["Pillow load() only"] = pil_load
    if kind == "JPEG":
        import simplejpeg
        out["simplejpeg"] = lambda d: simplejpeg.decode_jpeg(d, colorspace="RGB")
        from turbojpeg import TJPF_RGB, TurboJPEG
        tj = TurboJPEG(os.environ.get("TURBOJPEG_LIB"))  # default: the system's libturbojpeg
        out["PyTurboJPEG"] = lambda d: tj.decode(d, pixel_format=TJPF_RGB)
    try:
        import cv2
    except ImportError:  # reported in versions(); the run says which peers it had
        return out
    flag = getattr(cv2, "IMREAD_COLOR_RGB", None)
    if flag is not None:
        out["OpenCV"] = lambda d: cv2.imdecode(np.frombuffer(d, np.uint8), flag)
    else:
        out["OpenCV"] = lambda d: cv2.cvtColor(cv2.imdecode(np.frombuffer(d, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    return out


def latency_ms(libs, data, seconds, rounds=5, min_runs=7):
    """Single-thread latency of every decoder, interleaved: `rounds` rounds, each giving every
    decoder seconds/rounds in turn, so that a machine's drift (other load, clock changes)
    falls on all of them alike rather than on whichever ran first. Per decoder: median and
    best wall ms, runs, and the median of the thread's CPU ms (time.thread_time: what the
    decode cost, apart from waiting for a core on a shared machine)."""
    wall = {n: [] for n in libs}
    cpu = {n: [] for n in libs}
    for fn in libs.values():
        for _ in range(2):
            fn(data)
    for _ in range(rounds):
        for name, fn in libs.items():
            end = time.perf_counter() + seconds / rounds
            n = 0
            while time.perf_counter() < end or n < -(-min_runs // rounds):
                c0 = time.thread_time()
                t0 = time.perf_counter()
                fn(data)
                t1 = time.perf_counter()
                cpu[name].append((time.thread_time() - c0) * 1000)
                wall[name].append((t1 - t0) * 1000)
                n += 1
    return {n: (statistics.median(wall[n]), min(wall[n]), len(wall[n]), statistics.median(cpu[n]))
            for n in libs}


def throughput(make_fn, data, threads, seconds):
    """Pictures per second with `threads` threads decoding the same file in a loop."""
    stop = threading.Event()
    counts = [0] * threads

    def work(i):
        fn = make_fn()
        fn(data)
        barrier.wait()
        n = 0
        while not stop.is_set():
            fn(data)
            n += 1
        counts[i] = n

    barrier = threading.Barrier(threads + 1)
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        futs = [pool.submit(work, i) for i in range(threads)]
        barrier.wait()
        t0 = time.perf_counter()
        time.sleep(seconds)
        stop.set()
        for f in futs:
            f.result()
        wall = time.perf_counter() - t0
    return sum(counts) / wall


def check_same_pixels(name, fn, data, reference):
    got = np.asarray(fn(data))
    if got.shape != reference.shape:
        raise SystemExit(f"{name}: shape {got.shape}, pixpath {reference.shape}")
    diff = np.abs(got.astype(np.int16) - reference.astype(np.int16))
    return int(diff.max())


def plot(results, out: Path, tag: str):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    files = list(results["files"])
    libs = sorted({lib for f in files for lib in results["files"][f]["latency_ms"]},
                  key=lambda n: (not n.startswith("pixpath"), n))
    fig, ax = plt.subplots(figsize=(12, 5.5))
    width = 0.8 / len(libs)
    for i, lib in enumerate(libs):
        vals = [results["files"][f]["best_ms"].get(lib, float("nan")) for f in files]
        ax.bar(np.arange(len(files)) + i * width, vals, width, label=lib)
    ax.set_xticks(np.arange(len(files)) + 0.4 - width / 2)
    ax.set_xticklabels(files, rotation=20, ha="right")
    ax.set_ylabel("ms per picture (best of the runs, one thread)")
    ax.set_yscale("log")
    ax.set_title(f"Single-picture decode latency to RGB pixels — {results['machine']['cpu']}")
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / f"{tag}-latency.svg")
    plt.close(fig)

    cols = 4
    rows = (len(files) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(14, 3.6 * rows), squeeze=False)
    for ax, f in zip(axes.flat, files):
        tp = results["files"][f]["throughput"]
        for lib in libs:
            if lib in tp:
                ts = sorted(int(t) for t in tp[lib])
                ax.plot(ts, [tp[lib][str(t)] for t in ts], marker="o", label=lib)
        ax.set_title(f, fontsize=9)
        ax.set_xlabel("threads")
        ax.set_ylabel("pictures/s")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(files):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(f"Decode throughput per thread count — {results['machine']['cpu']}")
    fig.tight_layout()
    fig.savefig(out / f"{tag}-threads.svg")
    plt.close(fig)


def targets(results):
    """The issue's CPU targets per file, from the medians (wall and thread CPU ms) and the
    throughput at the largest thread count: >= 1.5x Pillow; within 5% of simplejpeg and
    PyTurboJPEG at one thread (pixpath / peer <= 1.05); ahead of them with threads."""
    lines = []
    for label, e in results["files"].items():
        lat, cpu, tp = e["latency_ms"], e["cpu_ms"], e["throughput"]
        px = "pixpath"
        parts = [f"x Pillow {lat['Pillow'] / lat[px]:.2f} (cpu {cpu['Pillow'] / cpu[px]:.2f})"]
        for peer in ("simplejpeg", "PyTurboJPEG"):
            if peer in lat:
                parts.append(f"/{peer} {lat[px] / lat[peer]:.3f} (cpu {cpu[px] / cpu[peer]:.3f})")
        tmax = max(tp[px], key=int)
        rivals = {n: v[tmax] for n, v in tp.items() if not n.startswith("pixpath") and n != "Pillow load() only"}
        if rivals:
            best = max(rivals, key=rivals.get)
            parts.append(f"{tmax}T {tp[px][tmax]:.0f}/s vs {best} {rivals[best]:.0f}/s")
        lines.append(f"TARGET {label:20s} " + "  ".join(parts))
    return lines


def machine():
    cpu = platform.processor() or "cpu"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "loadavg_start": os.getloadavg()}


def versions():
    import PIL
    import simplejpeg
    import turbojpeg
    try:
        import cv2
        cv = cv2.__version__
    except ImportError:
        cv = "not installed"
    return {"pixpath": pixpath.__version__, "pixpath libraries": pixpath.libraries(),
            "Pillow": PIL.__version__, "simplejpeg": simplejpeg.__version__,
            "PyTurboJPEG": turbojpeg.__version__, "OpenCV": cv, "numpy": np.__version__}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/tmp/pixpath-bench-data", help="input folder (made when absent)")
    ap.add_argument("--out", default=str(ROOT / "docs/python-peers"), help="results and plots")
    ap.add_argument("--seconds", type=float, default=1.0, help="per latency and throughput measurement")
    ap.add_argument("--threads", default="1,2,4", help="thread counts for throughput")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved latency rounds (each decoder SECONDS in all)")
    ap.add_argument("--tp-rounds", type=int, default=3,
                    help="interleaved throughput rounds per thread count (SECONDS each; the median is kept)")
    ap.add_argument("--tag", default="cpu", help="output names: OUT/TAG-results.json, TAG-latency.svg, TAG-threads.svg")
    ap.add_argument("--only", default="", help="comma-separated substrings of file names to run")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = make_inputs(Path(args.data))
    if args.only:
        files = {k: v for k, v in files.items() if any(s in k for s in args.only.split(","))}
    threads = [int(t) for t in args.threads.split(",")]
    results = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine(),
               "versions": versions(), "command": " ".join(sys.argv), "files": {}}
    print(json.dumps({k: results[k] for k in ("date", "machine", "versions")}, indent=1), flush=True)
    for label, path in files.items():
        data = path.read_bytes()
        kind = "JPEG" if "JPEG" in label else "PNG" if "PNG" in label else "WebP"
        ref = np.asarray(pixpath.decode(data))
        libs = decoders(kind)
        buf = np.empty(ref.shape, np.uint8)
        libs["pixpath into="] = lambda d, b=buf: pixpath.decode(d, into=b)
        entry = {"bytes": len(data), "size": f"{ref.shape[1]}x{ref.shape[0]}", "latency_ms": {}, "best_ms": {}, "cpu_ms": {},
                 "runs": {}, "max_abs_diff_vs_pixpath": {}, "throughput": {}}
        for name, fn in libs.items():
            if name != "Pillow load() only":
                entry["max_abs_diff_vs_pixpath"][name] = check_same_pixels(name, fn, data, ref)
        lat = latency_ms(libs, data, args.seconds, args.rounds)
        for name, fn in libs.items():
            ms, best, n, cpu_ms = lat[name]
            entry["latency_ms"][name] = round(ms, 3)
            entry["best_ms"][name] = round(best, 3)
            entry["cpu_ms"][name] = round(cpu_ms, 3)
            entry["runs"][name] = n

        def make_for(name, fn):
            if name == "pixpath into=":  # a buffer of its own per thread
                return lambda: (lambda d, b=np.empty(ref.shape, np.uint8): pixpath.decode(d, into=b))
            return lambda: fn
        # Throughput in interleaved rounds (the decoders' order rotated each round), the median
        # per decoder: one pass per decoder, one after the other, let the host's drift (other
        # tenants, clocks) land on whichever decoder ran then.
        names = list(libs)
        for t in threads:
            runs = {name: [] for name in names}
            for r in range(args.tp_rounds):
                for name in names[r % len(names):] + names[:r % len(names)]:
                    runs[name].append(throughput(make_for(name, libs[name]), data, t, args.seconds))
            for name in names:
                entry["throughput"].setdefault(name, {})[str(t)] = round(statistics.median(runs[name]), 1)
        for name in names:
            ms, best, cpu_ms, tp = (entry["latency_ms"][name], entry["best_ms"][name],
                                    entry["cpu_ms"][name], entry["throughput"][name])
            print(f"{label:22s} {name:20s} {ms:8.3f} ms (best {best:7.3f}, cpu {cpu_ms:7.3f})  " +
                  "  ".join(f"{t}T {v:7.1f}/s" for t, v in tp.items()), flush=True)
        results["files"][label] = entry
    results["machine"]["loadavg_end"] = os.getloadavg()
    (out / f"{args.tag}-results.json").write_text(json.dumps(results, indent=1))
    plot(results, out, args.tag)
    print("\n| file | " + " | ".join(next(iter(results["files"].values()))["latency_ms"]) + " |")
    for label, e in results["files"].items():
        print(f"| {label} | " + " | ".join(f"{e['latency_ms'].get(n, float('nan')):.2f}" for n in e["latency_ms"]) + " |")
    print("\nthread CPU ms (median), one thread:")
    for label, e in results["files"].items():
        print(f"| {label} | " + " | ".join(f"{e['cpu_ms'].get(n, float('nan')):.2f}" for n in e["cpu_ms"]) + " |")
    print("\ntargets (>= 1.5x Pillow; pixpath/peer <= 1.05 at one thread; ahead with threads):")
    print("\n".join(targets(results)))


if __name__ == "__main__":
    main()
