// pixpath's own GPU JPEG decoder (src/cuda/own_jpeg_decode.h): one picture at a time, host
// bytes -> RGBA in CUDA memory, with where the time goes per step (CUDA events between the
// steps on one stream; host steps by the wall clock), p50 over the rounds, for each
// subsequence size asked; nvJPEG's single-picture decode (nvjpegDecode, DEFAULT backend, RGBI
// into CUDA memory) and the CPU path (tjDecompress2) on the same file in the same run. For the
// GPU machine (scripts/gpu-check-run, OWN=1):
//   own_jpeg_benchmark [--rounds N] [--subsequence-bits B[,B...]] [--sync coop|chain|both]
//                      [--variants on|off|both] [--transfer on|off|both]
//                      [--pieces on|off|both] [--arithmetic simd|c]
//                      [--no-cpu] FILE.jpg...
#include <cuda_runtime.h>
#include <nvjpeg.h>
#include <turbojpeg.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
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
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return double(v[v.size() / 2]);
}

void usage() {
  std::printf(
      "usage: own_jpeg_benchmark [options] FILE.jpg...\n"
      "  pixpath's own GPU JPEG decoder, one picture at a time: host bytes -> RGBA in CUDA\n"
      "  memory, the p50 of each step and of the whole (CUDA end: the stream has finished the\n"
      "  RGBA), side by side with nvJPEG's single-picture decode and tjDecompress2.\n"
      "  --rounds N                timed decodes per file and setting (default 30, after 3 untimed)\n"
      "  --subsequence-bits B,...  bits per subsequence, one column each (default 256,512,1024)\n"
      "  --sync coop|chain|both    synchronisation rounds in one cooperative kernel (default),\n"
      "                            as a chain of round kernels, or both side by side\n"
      "  --variants on|off|both    step 2 once per block index of the MCU (default on), or not\n"
      "  --transfer on|off|both    step 3a, the transfer maps before the rounds (default on;\n"
      "                            needs the variants and the cooperative launch), or not\n"
      "  --pieces on|off|both      step 5 in pieces, 4 threads a subsequence (default on;\n"
      "                            needs the variants), or one thread a subsequence\n"
      "  --arithmetic simd|c       IDCT arithmetic: libjpeg-turbo's SIMD (default) or C code\n"
      "  --no-cpu                  skip tjDecompress2\n"
      "  --help                    this text\n");
}

// One column of a file's table: a subsequence size and a sync kind.
struct Setting {
  uint32_t bits = 1024;
  bool coop = true;
  bool variants = true;
  bool transfer = true;
  bool pieces = true;
  std::string name() const {
    return std::to_string(bits) + (coop ? "" : " chain") + (variants ? "" : " novar") +
           (transfer ? "" : " nomaps") + (pieces ? "" : " whole");
  }
};

// The p50s of one column.
struct Column {
  std::string error;
  double parse = 0, phase[kPhaseCount] = {}, rgba = 0, overhead = 0, gpu_span = 0, total = 0;
  int rounds_p50 = 0, rounds_max = 0, serial = 0, coop = 0, passes_max = 0;
  size_t subsequences = 0, upload_bytes = 0;
};

Column run_own(const std::vector<uint8_t>& data, const Setting& s, int rounds,
               codecs::jpeg::IdctArithmetic arithmetic, DeviceBuffers& buffers,
               cudaStream_t stream, uint8_t* rgba, size_t pitch, cudaEvent_t ev0, cudaEvent_t ev1) {
  Column col;
  Options opt;
  opt.time_phases = true;
  opt.subsequence_bits = s.bits;
  opt.cooperative_sync = s.coop;
  opt.phase_variants = s.variants;
  opt.transfer_maps = s.transfer;
  opt.write_pieces = s.pieces;
  opt.arithmetic = arithmetic;
  std::vector<double> total, parse, conv, overhead, span;
  std::vector<std::vector<float>> phases(kPhaseCount);
  std::vector<int> sync_rounds;
  for (int r = 0; r < rounds + 3; ++r) {
    const auto t0 = Clock::now();
    auto p = codecs::jpeg::parse_baseline_jpeg(data);
    const double parse_ms = ms_since(t0);
    if (!p.ok()) {
      col.error = p.error().message();
      return col;
    }
    Report rep;
    auto planes = decode_to_planes(data, *p, opt, buffers, stream, &rep);
    if (!planes.ok()) {
      col.error = planes.error().message();
      return col;
    }
    cudaEventRecord(ev0, stream);
    auto c = planes_to_rgba(*p, *planes, rgba, pitch, stream);
    cudaEventRecord(ev1, stream);
    if (cudaStreamSynchronize(stream) != cudaSuccess || !c.ok()) {
      col.error = c.ok() ? std::string(cudaGetErrorString(cudaGetLastError())) : c.error().message();
      return col;
    }
    const double all = ms_since(t0);
    if (r < 3) continue;
    float conv_ms = 0;
    cudaEventElapsedTime(&conv_ms, ev0, ev1);
    total.push_back(all);
    parse.push_back(parse_ms);
    conv.push_back(conv_ms);
    double gpu = 0;
    for (int ph = kPhaseUpload; ph < kPhaseCount; ++ph) gpu += rep.phase_ms[ph];
    span.push_back(gpu);
    overhead.push_back(rep.wall_ms - rep.phase_ms[kPhaseHost] - gpu);
    for (int ph = 0; ph < kPhaseCount; ++ph) phases[size_t(ph)].push_back(rep.phase_ms[ph]);
    sync_rounds.push_back(rep.sync_rounds);
    col.serial += rep.serial_sweep;
    col.passes_max = std::max(col.passes_max, rep.transfer_passes);
    col.coop = rep.cooperative;
    col.subsequences = rep.subsequences;
    col.upload_bytes = rep.upload_bytes;
  }
  col.total = p50(total);
  col.parse = p50(parse);
  col.rgba = p50(conv);
  col.overhead = p50(overhead);
  col.gpu_span = p50(span);
  for (int ph = 0; ph < kPhaseCount; ++ph) col.phase[ph] = p50(phases[size_t(ph)]);
  col.rounds_p50 = int(p50(sync_rounds));
  col.rounds_max = *std::max_element(sync_rounds.begin(), sync_rounds.end());
  return col;
}

// nvJPEG's own single-picture decode (the anchor of docs/gpu-path.md): nvjpegDecode, DEFAULT
// backend, interleaved RGB into CUDA memory, stream synchronised; p50 of the host wall time.
double run_nvjpeg(nvjpegHandle_t h, nvjpegJpegState_t st, const std::vector<uint8_t>& data, int w,
                  int hgt, int rounds, cudaStream_t stream, std::string* error) {
  uint8_t* rgb = nullptr;
  if (cudaMalloc(&rgb, size_t(w) * 3 * size_t(hgt)) != cudaSuccess) {
    *error = "cudaMalloc";
    return -1;
  }
  nvjpegImage_t img{};
  img.channel[0] = rgb;
  img.pitch[0] = unsigned(w) * 3;
  std::vector<double> ms;
  for (int r = 0; r < rounds + 3; ++r) {
    const auto t0 = Clock::now();
    const nvjpegStatus_t s = nvjpegDecode(h, st, data.data(), data.size(), NVJPEG_OUTPUT_RGBI, &img, stream);
    if (s != NVJPEG_STATUS_SUCCESS || cudaStreamSynchronize(stream) != cudaSuccess) {
      *error = "nvjpegDecode status " + std::to_string(int(s));
      break;
    }
    if (r >= 3) ms.push_back(ms_since(t0));
  }
  cudaFree(rgb);
  return error->empty() ? p50(ms) : -1;
}

double run_cpu(const std::vector<uint8_t>& data, int w, int h, int rounds) {
  std::vector<uint8_t> host(size_t(w) * 4 * size_t(h));
  std::vector<double> ms;
  tjhandle t = tjInitDecompress();
  for (int r = 0; r < rounds + 1; ++r) {
    const auto t0 = Clock::now();
    tjDecompress2(t, data.data(), (unsigned long)data.size(), host.data(), w, w * 4, h, TJPF_RGBA, 0);
    if (r) ms.push_back(ms_since(t0));
  }
  tjDestroy(t);
  return p50(ms);
}

const char* target_for(const std::string& file) {
  if (file.find("screen4k_q50_420") != std::string::npos) return "<= 1.5 at the CUDA end (<= 1.8 GL end)";
  if (file.find("screen1080_q50_420") != std::string::npos) return "<= 0.8 at the GL end (~0.49 CUDA end)";
  if (file.find("screen4k_q90_444") != std::string::npos) return "<= 2.0 at the GL end (the aim)";
  return "";
}

const char* sampling_name(const codecs::jpeg::BaselineJpeg& j) {
  if (j.component_count == 1) return "gray";
  const int h = j.components[0].h / j.components[1].h, v = j.components[0].v / j.components[1].v;
  if (h == 1 && v == 1) return "4:4:4";
  if (h == 2 && v == 1) return "4:2:2";
  if (h == 2 && v == 2) return "4:2:0";
  if (h == 1 && v == 2) return "4:4:0";
  return "other";
}

void print_legend(int rounds, const std::vector<Setting>& settings) {
  std::printf(
      "own_jpeg_benchmark: pixpath's own GPU JPEG decoder, one picture at a time, host bytes ->\n"
      "RGBA in CUDA memory. p50 of %d rounds per column; columns = subsequence bits (\"chain\":\n"
      "sync rounds as a chain of kernels instead of one cooperative kernel; \"novar\": step 2\n"
      "without the block-phase variants; \"nomaps\": without step 3a). Steps, in order:\n"
      "  parse        host: markers and tables (parse_baseline_jpeg)\n"
      "  host prep    host: unstuffing, subsequence arrays, Huffman lookups, packing the upload\n"
      "  upload       GPU: the one host-to-device copy (pinned)\n"
      "  speculative  GPU: every subsequence decoded from a guessed start (step 2; with\n"
      "               variants: once per block index of the MCU, with checkpoints)\n"
      "  sync         GPU: step 3a's transfer maps (passes, composition), then the\n"
      "               synchronisation rounds until no start changes (step 3; no host wait)\n"
      "  offsets      GPU: exclusive scan of the slot counts, checks (step 4)\n"
      "  write        GPU: zeroing + decode again writing coefficients (step 5)\n"
      "  dc           GPU: DC prediction, segmented scan (step 6)\n"
      "  idct         GPU: dequantisation + islow IDCT of all components, one launch\n"
      "  rgba         GPU: fancy upsampling + YCbCr->RGBA (the colour step)\n"
      "  host overhead = call wall time - host prep - GPU span (launch cost not hidden behind\n"
      "                GPU work, plus the one read-back + stream wait)\n"
      "  CUDA end     wall time, parse start -> RGBA finished on the stream (the issue's\n"
      "               \"CUDA end\"). GL hand-over not measured here: the GL end is about 0.31 ms\n"
      "               later (docs/gpu-path.md; cuda_gpu_jpeg_benchmark --sync-probe).\n"
      "  sync rounds  p50 / max rounds that changed a start state; \"+serial\" = cap hit, serial walk\n"
      "  map passes   most passes of step 3a (0: it did not run)\n",
      rounds);
  std::printf("settings:");
  for (const Setting& s : settings) std::printf(" [%s]", s.name().c_str());
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 30;
  bool cpu = true;
  std::string sync_kind = "coop", variant_kind = "on", transfer_kind = "on", piece_kind = "on";
  std::vector<uint32_t> bits_list = {256, 512, 1024};
  codecs::jpeg::IdctArithmetic arithmetic = codecs::jpeg::IdctArithmetic::Simd;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--subsequence-bits" && i + 1 < argc) {
      bits_list.clear();
      std::stringstream ss(argv[++i]);
      for (std::string b; std::getline(ss, b, ',');) bits_list.push_back(uint32_t(std::max(8, std::atoi(b.c_str()))));
    } else if (a == "--sync" && i + 1 < argc) {
      sync_kind = argv[++i];
      if (sync_kind != "coop" && sync_kind != "chain" && sync_kind != "both") {
        std::fprintf(stderr, "own_jpeg_benchmark: --sync takes coop, chain or both\n");
        return 2;
      }
    } else if (a == "--variants" && i + 1 < argc) {
      variant_kind = argv[++i];
      if (variant_kind != "on" && variant_kind != "off" && variant_kind != "both") {
        std::fprintf(stderr, "own_jpeg_benchmark: --variants takes on, off or both\n");
        return 2;
      }
    } else if (a == "--transfer" && i + 1 < argc) {
      transfer_kind = argv[++i];
      if (transfer_kind != "on" && transfer_kind != "off" && transfer_kind != "both") {
        std::fprintf(stderr, "own_jpeg_benchmark: --transfer takes on, off or both\n");
        return 2;
      }
    } else if (a == "--pieces" && i + 1 < argc) {
      piece_kind = argv[++i];
      if (piece_kind != "on" && piece_kind != "off" && piece_kind != "both") {
        std::fprintf(stderr, "own_jpeg_benchmark: --pieces takes on, off or both\n");
        return 2;
      }
    } else if (a == "--arithmetic" && i + 1 < argc) {
      const std::string m = argv[++i];
      if (m != "simd" && m != "c") {
        std::fprintf(stderr, "own_jpeg_benchmark: --arithmetic takes simd or c\n");
        return 2;
      }
      arithmetic = m == "c" ? codecs::jpeg::IdctArithmetic::C : codecs::jpeg::IdctArithmetic::Simd;
    } else if (a == "--no-cpu") {
      cpu = false;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "own_jpeg_benchmark: unknown option %s (--help)\n", a.c_str());
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty() || bits_list.empty()) {
    usage();
    return 2;
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::fprintf(stderr, "own_jpeg_benchmark: no CUDA device\n");
    return 1;
  }
  std::vector<Setting> settings;
  for (uint32_t b : bits_list) {
    for (int v = 1; v >= 0; --v) {
      if ((v && variant_kind == "off") || (!v && variant_kind == "on")) continue;
      for (int m = 1; m >= 0; --m) {
        if ((m && transfer_kind == "off") || (!m && transfer_kind == "on")) continue;
        for (int w = 1; w >= 0; --w) {
          if ((w && piece_kind == "off") || (!w && piece_kind == "on")) continue;
          if (sync_kind != "chain") settings.push_back({b, true, v == 1, m == 1, w == 1});
          if (sync_kind != "coop") settings.push_back({b, false, v == 1, m == 1, w == 1});
        }
      }
    }
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  print_legend(rounds, settings);
  std::printf("device: %s, %d SMs\n\n", prop.name, prop.multiProcessorCount);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEvent_t ev0, ev1;
  cudaEventCreate(&ev0);
  cudaEventCreate(&ev1);
  nvjpegHandle_t nvh = nullptr;
  nvjpegJpegState_t nvst = nullptr;
  const bool have_nvjpeg = nvjpegCreateSimple(&nvh) == NVJPEG_STATUS_SUCCESS &&
                           nvjpegJpegStateCreate(nvh, &nvst) == NVJPEG_STATUS_SUCCESS;
  DeviceBuffers buffers;
  struct Summary {
    std::string file, best;
    double own = -1, nv = -1, tj = -1;
  };
  std::vector<Summary> summary;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), {});
    auto parsed = codecs::jpeg::parse_baseline_jpeg(data);
    if (!parsed.ok()) {
      std::printf("== %s: %zu bytes: %s\n\n", f.c_str(), data.size(), parsed.error().message().c_str());
      continue;
    }
    const int w = parsed->width, h = parsed->height;
    std::printf("== %s: %dx%d %s, %zu bytes, %zu restart intervals\n", f.c_str(), w, h,
                sampling_name(*parsed), data.size(), parsed->segments.size());
    uint8_t* rgba = nullptr;
    const size_t pitch = size_t(w) * 4;
    if (cudaMalloc(&rgba, pitch * size_t(h)) != cudaSuccess) return 1;
    std::vector<Column> cols;
    for (const Setting& s : settings) {
      cols.push_back(run_own(data, s, rounds, arithmetic, buffers, stream, rgba, pitch, ev0, ev1));
    }
    cudaFree(rgba);
    std::printf("| step (p50 ms) |");
    for (const Setting& s : settings) std::printf(" %s |", s.name().c_str());
    std::printf("\n|---|");
    for (size_t k = 0; k < settings.size(); ++k) std::printf("---|");
    std::printf("\n");
    auto row = [&](const char* name, auto get) {
      std::printf("| %s |", name);
      for (const Column& c : cols) {
        if (!c.error.empty()) std::printf(" - |");
        else std::printf(" %.3f |", double(get(c)));
      }
      std::printf("\n");
    };
    row("parse", [](const Column& c) { return c.parse; });
    for (int ph = 0; ph < kPhaseCount; ++ph) {
      row(kPhaseNames[ph], [ph](const Column& c) { return c.phase[ph]; });
    }
    row("rgba", [](const Column& c) { return c.rgba; });
    row("GPU span (upload..idct)", [](const Column& c) { return c.gpu_span; });
    row("host overhead", [](const Column& c) { return c.overhead; });
    row("**CUDA end**", [](const Column& c) { return c.total; });
    std::printf("| subsequences |");
    for (const Column& c : cols) std::printf(" %zu |", c.subsequences);
    std::printf("\n| sync rounds p50 / max |");
    for (const Column& c : cols) {
      std::printf(" %d / %d%s%s |", c.rounds_p50, c.rounds_max, c.serial ? " +serial" : "",
                  c.coop ? "" : " (chain)");
    }
    std::printf("\n| map passes (max) |");
    for (const Column& c : cols) std::printf(" %d |", c.passes_max);
    std::printf("\n| upload KB |");
    for (const Column& c : cols) std::printf(" %.0f |", double(c.upload_bytes) / 1024.0);
    std::printf("\n");
    for (size_t k = 0; k < cols.size(); ++k) {
      if (!cols[k].error.empty()) std::printf("column %s failed: %s\n", settings[k].name().c_str(), cols[k].error.c_str());
    }
    Summary sm;
    sm.file = f;
    for (size_t k = 0; k < cols.size(); ++k) {
      if (cols[k].error.empty() && (sm.own < 0 || cols[k].total < sm.own)) {
        sm.own = cols[k].total;
        sm.best = settings[k].name();
      }
    }
    std::string nv_error;
    if (have_nvjpeg) sm.nv = run_nvjpeg(nvh, nvst, data, w, h, rounds, stream, &nv_error);
    if (cpu) sm.tj = run_cpu(data, w, h, std::min(rounds, 10));
    std::printf("nvJPEG single (nvjpegDecode DEFAULT, RGBI, stream synchronised): %.3f ms%s%s; "
                "tjDecompress2 (one core): %.3f ms\n\n",
                sm.nv, have_nvjpeg ? "" : " (no nvJPEG)", nv_error.empty() ? "" : (" " + nv_error).c_str(), sm.tj);
    summary.push_back(sm);
  }
  std::printf("== summary: CUDA end p50 ms (own: the best column)\n"
              "| file | own | own column | nvJPEG single | own / nvJPEG | tjDecompress2 | issue 19 target |\n"
              "|---|---|---|---|---|---|---|\n");
  for (const Summary& s : summary) {
    std::printf("| %s | %.3f | %s | %.3f | %.2f | %.3f | %s |\n", s.file.c_str(), s.own, s.best.c_str(),
                s.nv, s.nv > 0 && s.own > 0 ? s.own / s.nv : 0.0, s.tj, target_for(s.file));
  }
  if (nvst) nvjpegJpegStateDestroy(nvst);
  if (nvh) nvjpegDestroy(nvh);
  cudaEventDestroy(ev0);
  cudaEventDestroy(ev1);
  cudaStreamDestroy(stream);
  return 0;
}
