// pixpath's own GPU JPEG decoder (src/cuda/own_jpeg_decode.h, not routed yet): one picture at a
// time, host bytes -> RGBA in CUDA memory, with where the time goes per step (CUDA events) and
// the CPU path (tjDecompress2) on the same file for scale. For the GPU machine:
//   own_jpeg_benchmark [--rounds N] [--subsequence-bits B] [--arithmetic simd|c] FILE.jpg...
#include <cuda_runtime.h>
#include <turbojpeg.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "own_jpeg_decode.h"

namespace {

using namespace pixpath;
using namespace pixpath::cuda::own_jpeg;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

template <class T>
double p50(std::vector<T> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return double(v[v.size() / 2]);
}

void usage() {
  std::printf(
      "usage: own_jpeg_benchmark [options] FILE.jpg...\n"
      "  pixpath's own GPU JPEG decoder, one picture at a time: host bytes -> RGBA in CUDA\n"
      "  memory (parse, decode_to_planes, planes_to_rgba, stream synchronised), p50 over the\n"
      "  rounds, with the p50 of each step and tjDecompress2 on the same file.\n"
      "  --rounds N            timed decodes per file (default 50, after 3 untimed)\n"
      "  --subsequence-bits B  bits per subsequence (default 1024)\n"
      "  --arithmetic simd|c   IDCT arithmetic: libjpeg-turbo's SIMD (default) or C code\n"
      "  --help                this text\n");
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 50;
  Options opt;
  opt.time_phases = true;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--subsequence-bits" && i + 1 < argc) {
      opt.subsequence_bits = uint32_t(std::max(8, std::atoi(argv[++i])));
    } else if (a == "--arithmetic" && i + 1 < argc) {
      const std::string m = argv[++i];
      if (m != "simd" && m != "c") {
        std::fprintf(stderr, "own_jpeg_benchmark: --arithmetic takes simd or c\n");
        return 2;
      }
      opt.arithmetic = m == "c" ? codecs::jpeg::IdctArithmetic::C : codecs::jpeg::IdctArithmetic::Simd;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "own_jpeg_benchmark: unknown option %s (--help)\n", a.c_str());
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    usage();
    return 2;
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::fprintf(stderr, "own_jpeg_benchmark: no CUDA device\n");
    return 1;
  }
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  DeviceBuffers buffers;
  std::printf("| file | bytes | subsequences | sync rounds | total p50 ms | parse |");
  for (int p = 0; p < kPhaseCount; ++p) std::printf(" %s |", kPhaseNames[p]);
  std::printf(" rgba | tjDecompress2 p50 ms |\n|---|---|---|---|---|---|");
  for (int p = 0; p <= kPhaseCount; ++p) std::printf("---|");
  std::printf("---|\n");
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), {});
    auto parsed = codecs::jpeg::parse_baseline_jpeg(data);
    if (!parsed.ok()) {
      std::printf("| %s | %zu | %s |\n", f.c_str(), data.size(), parsed.error().message().c_str());
      continue;
    }
    uint8_t* rgba = nullptr;
    const size_t pitch = size_t(parsed->width) * 4;
    if (cudaMalloc(&rgba, pitch * size_t(parsed->height)) != cudaSuccess) return 1;
    std::vector<double> total, parse, conv;
    std::vector<std::vector<float>> phases(kPhaseCount);
    Report rep;
    std::string error;
    for (int r = 0; r < rounds + 3 && error.empty(); ++r) {
      const auto t0 = Clock::now();
      auto p = codecs::jpeg::parse_baseline_jpeg(data);
      const double parse_ms = ms_since(t0);
      auto planes = decode_to_planes(data, *p, opt, buffers, stream, &rep);
      if (!planes.ok()) {
        error = planes.error().message();
        break;
      }
      const auto t1 = Clock::now();
      auto c = planes_to_rgba(*p, *planes, rgba, pitch, stream);
      cudaStreamSynchronize(stream);
      if (!c.ok()) error = c.error().message();
      if (r < 3) continue;
      total.push_back(ms_since(t0));
      parse.push_back(parse_ms);
      conv.push_back(ms_since(t1));
      for (int ph = 0; ph < kPhaseCount; ++ph) phases[size_t(ph)].push_back(rep.phase_ms[ph]);
    }
    cudaFree(rgba);
    if (!error.empty()) {
      std::printf("| %s | %zu | %s |\n", f.c_str(), data.size(), error.c_str());
      continue;
    }
    std::vector<double> tj;
    std::vector<uint8_t> host(pitch * size_t(parsed->height));
    tjhandle t = tjInitDecompress();
    for (int r = 0; r < std::min(rounds, 20) + 1; ++r) {
      const auto t0 = Clock::now();
      tjDecompress2(t, data.data(), (unsigned long)data.size(), host.data(), parsed->width,
                    int(pitch), parsed->height, TJPF_RGBA, 0);
      if (r) tj.push_back(ms_since(t0));
    }
    tjDestroy(t);
    std::printf("| %s | %zu | %zu | %d%s | %.3f | %.3f |", f.c_str(), data.size(),
                rep.subsequences, rep.sync_rounds, rep.serial_sweep ? " + serial walk" : "",
                p50(total), p50(parse));
    for (int ph = 0; ph < kPhaseCount; ++ph) std::printf(" %.3f |", p50(phases[size_t(ph)]));
    std::printf(" %.3f | %.3f |\n", p50(conv), p50(tj));
  }
  cudaStreamDestroy(stream);
  return 0;
}
