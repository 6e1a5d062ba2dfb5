// Writes seed corpora for the decoder fuzz targets: small pictures in every coding and
// variant the encoders make (sizes 1x1 .. 33x17, alpha, subsamplings, restart, rgb formats
// and compressions). Usage: fuzz_seed_corpus OUTDIR  ->  OUTDIR/<target>/<name>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "pixpath/codecs/registry.h"
#include "pixpath/core/pixel_ops.h"

using namespace pixpath;
using namespace pixpath::codecs;

namespace {

Picture make(PixelFormat f, int w, int h) {
  Picture p = Picture::allocate(f, w, h).value();
  auto v = p.write().value();
  for (int y = 0; y < h; ++y) {
    auto row = v.planes[0].row(y);
    for (size_t x = 0; x < row.size(); ++x) row[x] = uint8_t((x * 37 + size_t(y) * 11) ^ (x / 5));
  }
  return p;
}

void put(const std::filesystem::path& dir, const std::string& name, const std::vector<uint8_t>& header,
         const std::vector<uint8_t>& data) {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size()));
  out.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  const auto& reg = CodecRegistry::builtin();
  int n = 0;
  struct Size { int w, h; };
  for (Size s : {Size{1, 1}, Size{17, 13}, Size{33, 17}}) {
    const std::string sz = std::to_string(s.w) + "x" + std::to_string(s.h);
    Picture rgb = make(PixelFormat::RGB, s.w, s.h);
    Picture rgba = make(PixelFormat::RGBA, s.w, s.h);
    Picture gray = make(PixelFormat::GRAY8, s.w, s.h);
    for (auto [sub, sn] : {std::pair{Subsampling::S420, "420"}, std::pair{Subsampling::S422, "422"},
                           std::pair{Subsampling::S444, "444"}, std::pair{Subsampling::Gray, "gray"}}) {
      EncodeParams ep;
      ep.subsampling = sub;
      ep.quality = 75;
      ep.restart_interval = sub == Subsampling::S422 ? 1 : 0;
      auto e = reg.encoder("jpeg")->encode(*rgb.read(), ep);
      if (e.ok()) { put(root / "jpeg", sn + std::string("_") + sz, {}, e->data); ++n; }
    }
    if (auto e = reg.encoder("jpega")->encode(*rgba.read(), {}); e.ok()) {
      const uint32_t off = uint32_t(*e->options.alpha_offset);
      put(root / "jpega", sz, {uint8_t(off), uint8_t(off >> 8), uint8_t(off >> 16), uint8_t(off >> 24)}, e->data);
      ++n;
    }
    for (auto [name, pic, coding] : {std::tuple{"rgb", &rgb, "png"}, std::tuple{"rgba", &rgba, "png"},
                                     std::tuple{"gray", &gray, "png/L"}}) {
      if (auto e = reg.encoder(coding)->encode(*pic->read(), {}); e.ok()) {
        put(root / "png", std::string(name) + "_" + sz, {}, e->data);
        ++n;
      }
    }
    for (int q : {50, 100}) {
      for (auto [name, pic] : {std::pair{"rgb", &rgb}, std::pair{"rgba", &rgba}}) {
        EncodeParams ep;
        ep.quality = q;
        if (auto e = reg.encoder("webp")->encode(*pic->read(), ep); e.ok()) {
          put(root / "webp", std::string(name) + "_q" + std::to_string(q) + "_" + sz, {}, e->data);
          ++n;
        }
      }
    }
    // rgb: header (w-1, h-1, pad+8, format index, compression, level, 0, 0).
    for (auto [fi, f] : {std::pair{0, PixelFormat::RGB}, std::pair{3, PixelFormat::BGRX}, std::pair{6, PixelFormat::RGBA}}) {
      Picture pic = make(f, s.w, s.h);
      for (auto [ci, comp] : {std::pair{0, RgbCompression::None}, std::pair{1, RgbCompression::Zlib},
                              std::pair{2, RgbCompression::Lz4}}) {
        EncodeParams ep;
        ep.compression = comp;
        const char* coding = info(f).bytes_per_pixel[0] == 3 ? "rgb24" : "rgb32";
        if (auto e = reg.encoder(coding)->encode(*pic.read(), ep); e.ok()) {
          put(root / "rgb", std::string(name(f)) + "_c" + std::to_string(ci) + "_" + sz,
              {uint8_t(s.w - 1), uint8_t(s.h - 1), 8, uint8_t(fi), uint8_t(ci), 1, 0, 0}, e->data);
          ++n;
        }
      }
    }
  }
  std::printf("wrote %d seeds under %s\n", n, root.c_str());
  return 0;
}
