"""Throughput with T Python threads decoding one JPEG in a loop, with the process's page faults
and CPU time per picture (getrusage): pixpath.decode() against simplejpeg. What it shows is
where the memory of each picture comes from: a decoder that maps fresh pages per picture pays
page faults and kernel time that grow with the thread count.

    PYTHONPATH=build/default/python /opt/pixpath-bench-python/bin/python3 \\
        bench/python/thread_faults.py FILE.jpg THREADS [SECONDS]
"""
import resource
import sys
import threading
import time

import pixpath
import simplejpeg


def main():
    data = open(sys.argv[1], "rb").read()
    threads = int(sys.argv[2])
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
    libs = {"pixpath": lambda d: pixpath.decode(d),
            "simplejpeg": lambda d: simplejpeg.decode_jpeg(d, colorspace="RGB")}
    for name, fn in libs.items():
        for _ in range(2):
            fn(data)
        stop = threading.Event()
        counts = [0] * threads

        def work(i, fn=fn, stop=stop, counts=counts):
            n = 0
            while not stop.is_set():
                fn(data)
                n += 1
            counts[i] = n

        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for t in ts:
            t.start()
        time.sleep(seconds)
        stop.set()
        for t in ts:
            t.join()
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        n = max(1, sum(counts))
        cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
        print(f"{name:10s} T={threads} {n / wall:7.1f}/s  minor faults/picture "
              f"{(r1.ru_minflt - r0.ru_minflt) / n:8.1f}  CPU ms/picture {cpu / n * 1000:6.2f} "
              f"(kernel {(r1.ru_stime - r0.ru_stime) / n * 1000:5.2f})", flush=True)


if __name__ == "__main__":
    main()
