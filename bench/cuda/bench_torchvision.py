"""torchvision.io.decode_jpeg(device="cuda") on the same files as cuda_gpu_jpeg_benchmark:
p50 host wall of N single decodes (each followed by torch.cuda.synchronize), and per image in
a batch of 8. Usage: python3 bench_torchvision.py [--iters N] FILE.jpg..."""
import statistics
import sys
import time

import torch
import torchvision
from torchvision.io import decode_jpeg, read_file


def p50(fn, iters, warmup=5):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main():
    args = sys.argv[1:]
    iters = 50
    if args and args[0] == "--iters":
        iters = int(args[1])
        args = args[2:]
    print(f"torch {torch.__version__} torchvision {torchvision.__version__} {torch.cuda.get_device_name(0)}")
    print("| file | route | p50 ms |\n|---|---|---|")
    for path in args:
        data = read_file(path)
        name = path.rsplit("/", 1)[-1]

        def single():
            decode_jpeg(data, device="cuda")
            torch.cuda.synchronize()

        def batch8():
            decode_jpeg([data] * 8, device="cuda")
            torch.cuda.synchronize()

        def cpu():
            decode_jpeg(data)

        print(f"| {name} | torchvision decode_jpeg cuda, single | {p50(single, iters):.3f} |", flush=True)
        print(f"| {name} | torchvision decode_jpeg cuda, batch of 8, per image | {p50(batch8, max(iters // 2, 10)) / 8:.3f} |", flush=True)
        print(f"| {name} | torchvision decode_jpeg cpu | {p50(cpu, 10, 2):.3f} |", flush=True)


if __name__ == "__main__":
    main()
