// Writes seed corpora for the decoder fuzz targets: small pictures in every coding and
// variant the encoders make (sizes 1x1 .. 33x17, alpha, subsamplings, restart, rgb formats
// and compressions); from the first recording given, draws and packets for the network
// targets; from every recording, its video streams for fuzz_video.
// Usage: fuzz_seed_corpus OUTDIR [RECORDING...]  ->  OUTDIR/<target>/<name>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <zlib.h>

#include "pixpath/codecs/registry.h"
#include "pixpath/core/pixel_ops.h"
#include "pixpath/net/xpra/bencode.h"
#include "pixpath/net/xpra/rencode.h"
#include "pixpath/net/xpra/framing.h"
#include "pixpath/paint/recording.h"

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

using xpra::Value;

// A recorded draw as the xpra 3.1 "draw" packet it came from.
Value draw_packet(const DrawPacket& d) {
  Value o{Value::Dict{}};
  const DrawOptions& op = d.options;
  if (!op.rgb_format.empty()) o.set("rgb_format", op.rgb_format);
  if (op.zlib) o.set("zlib", op.zlib);
  if (op.lz4) o.set("lz4", op.lz4);
  if (op.store) o.set("store", *op.store);
  if (op.delta) o.set("delta", *op.delta);
  if (op.store || op.delta) o.set("bucket", op.bucket);
  if (op.flush) o.set("flush", *op.flush);
  if (op.alpha_offset) o.set("alpha-offset", *op.alpha_offset);
  if (op.scaled_width) o.set("scaled_size", Value::list({*op.scaled_width, *op.scaled_height}));
  if (op.quality >= 0) o.set("quality", op.quality);
  if (!op.paint) o.set("paint", 0);
  Value data = d.data;
  if (d.coding == "scroll") {
    Value::List rects;
    for (const auto& r : op.scroll) rects.push_back(Value::list({r.x, r.y, r.w, r.h, r.dx, r.dy}));
    data = Value(std::move(rects));
  }
  return Value::list({"draw", d.wid, d.x, d.y, d.w, d.h, d.coding, data, d.sequence, d.rowstride, o});
}

std::vector<uint8_t> zlib_of(const std::vector<uint8_t>& in) {
  uLongf n = compressBound(uLong(in.size()));
  std::vector<uint8_t> out(n);
  if (compress2(out.data(), &n, in.data(), uLong(in.size()), 1) != Z_OK) return {};
  out.resize(n);
  return out;
}

// Seeds for the network targets from a real recording: its small draws as bencoded packets
// (bencode, draw), as framed streams in every packing a server uses (chunk: plain, zlib and
// lz4-less raw chunk), and its first records as a small recording (recording).
int recording_seeds(const std::filesystem::path& root, const std::string& file) {
  auto reader = paint::RecordingReader::open(file);
  if (!reader.ok()) {
    std::fprintf(stderr, "fuzz_seed_corpus: %s\n", reader.error().message().c_str());
    return 0;
  }
  auto events = reader->read_all();
  if (!events.ok()) {
    std::fprintf(stderr, "fuzz_seed_corpus: %s\n", events.error().message().c_str());
    return 0;
  }
  int n = 0, draws = 0;
  std::vector<uint8_t> rec = paint::encode_recording_header();
  std::vector<uint8_t> stream;
  for (const auto& e : *events) {
    if (rec.size() < 48 * 1024) {
      if (auto r = paint::encode_record(e); r.ok() && rec.size() + r->size() < 64 * 1024) {
        rec.insert(rec.end(), r->begin(), r->end());
      }
    }
    if (e.type == paint::RecordType::WindowNew) {
      auto f = xpra::frame_packet(Value::list({"new-window", e.wid, e.x, e.y, e.w, e.h,
                                               Value(Value::Dict{}), Value(Value::Dict{})}));
      stream.insert(stream.end(), f.begin(), f.end());
      continue;
    }
    if (e.type != paint::RecordType::Draw || e.draw.data.size() > 12 * 1024 || draws >= 40) continue;
    const Value pkt = draw_packet(e.draw);
    const auto body = xpra::bencode_encode(pkt);
    const std::string name = std::to_string(draws) + "_" + e.draw.coding.substr(0, e.draw.coding.find('/'));
    put(root / "bencode", name, {}, body);
    put(root / "draw", name, {}, body);
    n += 2;
    if (draws < 12) {
      std::vector<uint8_t> plain, zlib, raw;
      xpra::append_chunk(plain, 0, 0, 0, body);
      xpra::append_chunk(zlib, 0, 1, 0, zlib_of(body));
      if (e.draw.coding != "scroll") {  // data in raw chunk 7, a placeholder in the packet
        Value main = pkt;
        main.as_list()[7] = Value("");
        xpra::append_chunk(raw, 0, 0, 7, e.draw.data.span());
        xpra::append_chunk(raw, 0, 0, 0, xpra::bencode_encode(main));
        put(root / "chunk", name + "_raw", {uint8_t(draws)}, raw);
        ++n;
      }
      put(root / "chunk", name + "_plain", {uint8_t(draws)}, plain);
      put(root / "chunk", name + "_zlib", {uint8_t(draws)}, zlib);
      n += 2;
      // xpra 6.x: rencodeplus main chunks (with the flush bit), lz4 or brotli, and the data in
      // an lz4-compressed raw chunk.
      const auto rbody = xpra::rencode_encode(pkt);
      put(root / "rencode", name, {}, rbody);
      put(root / "draw", name + "_rencode", {}, rbody);
      n += 2;
      for (auto comp : {xpra::PacketCompressor::None, xpra::PacketCompressor::Lz4,
                        xpra::PacketCompressor::Brotli}) {
        auto f = xpra::frame_packet(pkt, {xpra::PacketEncoder::Rencodeplus, comp, 3, 0});
        if (!f.ok()) continue;
        put(root / "chunk", name + "_rencode_" + std::string(xpra::to_string(comp)),
            {uint8_t(draws)}, *f);
        ++n;
      }
      if (e.draw.coding != "scroll") {
        Value main = pkt;
        main.as_list()[7] = Value(SharedBytes{});
        auto c = xpra::compress_payload(e.draw.data.span(), xpra::PacketCompressor::Lz4, 1);
        if (c.ok()) {
          std::vector<uint8_t> rraw;
          xpra::append_chunk(rraw, 0, c->level, 7, c->bytes);
          xpra::append_chunk(rraw, xpra::kProtoRencodeplus | xpra::kProtoFlush, 0, 0,
                             xpra::rencode_encode(main));
          put(root / "chunk", name + "_rencode_raw", {uint8_t(draws)}, rraw);
          ++n;
        }
      }
      auto f = xpra::frame_packet(pkt);
      if (stream.size() < 32 * 1024) stream.insert(stream.end(), f.begin(), f.end());
    }
    ++draws;
  }
  put(root / "chunk", "session_stream", {0}, stream);
  put(root / "recording", "sample_head", {}, rec);
  n += 2;
  // Hello, ping, window packets.
  Value caps{Value::Dict{}};
  caps.set("version", "3.1.3");
  caps.set("encodings", Value::string_list({"rgb24", "png", "jpeg"}));
  std::vector<uint8_t> misc;
  for (const Value& p : {Value::list({"hello", caps}), Value::list({"ping", 123, 456}),
                         Value::list({"window-move-resize", 1, 0, 0, 10, 10}),
                         Value::list({"lost-window", 1}), Value::list({"disconnect", "bye"})}) {
    auto f = xpra::frame_packet(p);
    misc.insert(misc.end(), f.begin(), f.end());
  }
  put(root / "chunk", "control_packets", {7}, misc);
  ++n;
  // The same as xpra 6.x sends them, and a value of every rencodeplus kind.
  caps.set("version", "6.5.5");
  caps.set("rencodeplus", true);
  caps.set("latency", Value::from_double(0.25));
  caps.set("nothing", Value::none());
  caps.set("wid", int64_t{1} << 40);
  caps.set("negative", Value::list({-1, -33, -300, -70000, int64_t{-1} << 40}));
  caps.set("blob", Value(SharedBytes::copy_of(std::string_view("\x00\x01\xff", 3))));
  Value::List long_list(70, Value("x"));
  caps.set("long", Value(long_list));
  Value::Dict big_dict;
  for (int i = 0; i < 30; ++i) big_dict.emplace_back(i, std::string(i * 3, 'v'));
  caps.set("dict", Value(big_dict));
  std::vector<uint8_t> misc6;
  for (const Value& p : {Value::list({"hello", caps}), Value::list({"ping", 123, 456}),
                         Value::list({"window-move-resize", 1, 0, 0, 10, 10}),
                         Value::list({"lost-window", 1}), Value::list({"disconnect", "bye"})}) {
    auto f = xpra::frame_packet(p, {xpra::PacketEncoder::Rencodeplus,
                                    xpra::PacketCompressor::Brotli, 5, 100});
    if (f.ok()) misc6.insert(misc6.end(), f->begin(), f->end());
  }
  put(root / "chunk", "control_packets_rencode", {7}, misc6);
  auto text_int = xpra::rencode_encode(Value::list({"x", caps}));
  const uint8_t big[] = {61, '1', '8', '4', '4', '6', '7', '4', '4', '0', '7', '3',
                         '7', '0', '9', '5', '5', '1', '6', '1', '5', 127};
  text_int[0] += 1;  // one more item in the fixed list: a text integer beyond int64
  text_int.insert(text_int.end(), std::begin(big), std::end(big));
  put(root / "rencode", "hello_every_kind", {}, text_int);
  const uint8_t f32[] = {194, 66, 0x3f, 0xc0, 0, 0, 59, 1, 2, 127};
  put(root / "rencode", "float32_terminated_list", {}, {std::begin(f32), std::end(f32)});
  n += 3;
  // What a hostile 6.x server sends (tests/hostile has the same cases against the client): a
  // truncated terminated list, a byte string longer than what follows, a length beyond 64
  // bits, nesting past the depth limit, and, framed, a brotli bomb (a packet that inflates past
  // the fuzzers' 8 MiB limit from a few hundred bytes) and packets in lzo and yaml.
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> bad = {
      {"truncated_list", {59, 0x84, 'p', 'i', 'n', 'g', 1, 2}},
      {"short_bytes", {0xC2, 0x84, 'p', 'i', 'n', 'g', '9', '9', '9', '/', 'a', 'b'}},
      {"huge_length", {0xC2, 0x84, 'p', 'i', 'n', 'g', '9', '9', '9', '9', '9', '9', '9', '9',
                       '9', '9', '9', '9', '9', '9', '9', '9', '9', '9', '9', '9', '9', ':'}},
      {"deep_lists", std::vector<uint8_t>(40, 0xC1)},
      {"deep_dicts", {103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0,
                      103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0,
                      103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0,
                      103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 103, 0, 0}},
  };
  for (const auto& [bad_name, bytes] : bad) {
    put(root / "rencode", "hostile_" + bad_name, {}, bytes);
    std::vector<uint8_t> framed;
    xpra::append_chunk(framed, xpra::kProtoRencodeplus | xpra::kProtoFlush, 0, 0, bytes);
    put(root / "chunk", "hostile_rencode_" + bad_name, {3}, framed);
    n += 2;
  }
  {
    const auto bomb = xpra::rencode_encode(
        Value::list({"ping", Value(SharedBytes::copy_of(std::vector<uint8_t>(16u << 20, 0)))}));
    auto z = xpra::compress_payload(bomb, xpra::PacketCompressor::Brotli, 5);
    if (z.ok()) {
      std::vector<uint8_t> framed;
      xpra::append_chunk(framed, xpra::kProtoRencodeplus, z->level, 0, z->bytes);
      put(root / "chunk", "hostile_brotli_bomb", {5}, framed);
      std::vector<uint8_t> raw;  // the same as a raw chunk (a draw's data slot)
      xpra::append_chunk(raw, 0, z->level, 7, z->bytes);
      put(root / "chunk", "hostile_brotli_bomb_raw", {5}, raw);
      n += 2;
    }
    const auto ping = xpra::rencode_encode(Value::list({"ping", 1, 2}));
    std::vector<uint8_t> lzo, yaml;
    xpra::append_chunk(lzo, xpra::kProtoRencodeplus, xpra::kLevelLzo | 1, 0, ping);
    xpra::append_chunk(yaml, xpra::kProtoYaml, 0, 0, ping);
    put(root / "chunk", "hostile_lzo", {1}, lzo);
    put(root / "chunk", "hostile_yaml", {1}, yaml);
    n += 2;
  }
  return n;
}

// Delta sequences (8-byte records, see fuzz_delta.cc): store then delta, wrong sequence,
// wrong size, wrong format, out-of-range bucket.
int delta_seeds(const std::filesystem::path& root) {
  const std::vector<std::vector<uint8_t>> seqs = {
      {3, 3, 1, 1, 1, 0, 0, 9, /**/ 3, 3, 1, 3, 2, 1, 0, 5, /**/ 3, 3, 1, 2, 0, 2, 0, 1},
      {7, 7, 2, 5, 3, 0, 17, 1, /**/ 7, 7, 2, 7, 3, 3, 17, 2, /**/ 6, 7, 2, 2, 0, 3, 0, 3},
      {1, 1, 0, 9, 0, 0, 0, 0, /**/ 1, 1, 0, 2, 0, 0, 0, 0, /**/ 1, 1, 0, 10, 0, 0, 0, 0},
      {2, 2, 7, 1, 1, 0, 0, 0, /**/ 2, 2, 0, 2, 0, 1, 0, 0, /**/ 2, 2, 1, 19, 2, 1, 0, 4},
  };
  int n = 0;
  for (const auto& s : seqs) put(root / "delta", "seq" + std::to_string(n++), {}, s);
  return n;
}

// Scroll rectangles (see fuzz_scroll.cc): one rectangle up, down, sideways; several.
int scroll_seeds(const std::filesystem::path& root) {
  auto rect = [](int x, int y, int w, int h, int dx, int dy) {
    std::vector<uint8_t> r;
    for (int v : {x, y, w, h, dx, dy}) {
      r.push_back(uint8_t(v & 0xFF));
      r.push_back(uint8_t((v >> 8) & 0xFF));
    }
    return r;
  };
  std::vector<std::vector<uint8_t>> seeds;
  seeds.push_back(rect(0, 8, 40, 24, 0, -8));
  seeds.push_back(rect(0, 0, 40, 24, 0, 8));
  seeds.push_back(rect(2, 2, 10, 10, 5, -1));
  auto two = rect(0, 10, 30, 10, 0, -10);
  auto more = rect(0, 25, 30, 5, 0, 3);
  two.insert(two.end(), more.begin(), more.end());
  seeds.push_back(two);
  int n = 0;
  for (auto& s : seeds) put(root / "scroll", "rects" + std::to_string(n++), {39, 31}, s);
  return n;
}

// fuzz_video seeds from a recording's video draws (scripts/record-video-sample): each stream
// (from a `frame` 0 draw or a window's first, of one window, coding, encoded size and csc) as
// the target's input —
// the 4 header bytes, then up to 12 packets (2-byte length, flags: frame 0, delayed). Streams
// whose encoded size the header cannot say (odd, or over 128) are left out.
int video_seeds(const std::filesystem::path& root, const std::string& file) {
  auto reader = paint::RecordingReader::open(file);
  if (!reader.ok()) return 0;
  auto events = reader->read_all();
  if (!events.ok()) return 0;
  struct Stream {
    std::vector<uint8_t> bytes;
    int packets = 0;
  };
  std::map<int64_t, Stream> open;  // by window
  std::set<int64_t> seen;          // windows that had a video draw
  int n = 0;
  auto flush = [&](int64_t wid) {
    auto it = open.find(wid);
    if (it == open.end()) return;
    if (it->second.packets > 0 && n < 24) {
      put(root / "video", std::filesystem::path(file).stem().string() + "_" + std::to_string(n), {},
          it->second.bytes);
      ++n;
    }
    open.erase(it);
  };
  for (const auto& e : *events) {
    if (e.type == paint::RecordType::WindowLost) flush(e.wid);
    if (e.type != paint::RecordType::Draw) continue;
    const DrawPacket& d = e.draw;
    const int coding = d.coding == "h264" ? 0 : d.coding == "vp8" ? 1 : d.coding == "vp9" ? 2 : -1;
    if (coding < 0) continue;
    const int w = d.options.scaled_width.value_or(d.w), h = d.options.scaled_height.value_or(d.h);
    // A stream starts at `frame` 0, or at a window's first video draw (xpra 3.1's vpx encoder
    // numbers its frames from 1).
    const bool first = seen.insert(d.wid).second;
    const bool starts = d.options.frame == 0 || first;
    if (starts) {
      flush(d.wid);
      const int csc = d.options.csc == "YUV420P" ? 0 : d.options.csc == "YUV422P" ? 1
                    : d.options.csc == "YUV444P" ? 2 : 3;
      if (w % 2 == 0 && h % 2 == 0 && w >= 2 && h >= 2 && w <= 128 && h <= 128)
        open[d.wid].bytes = {uint8_t(coding), uint8_t(csc), uint8_t(w / 2 - 1), uint8_t(h / 2 - 1)};
    }
    auto it = open.find(d.wid);
    if (it == open.end() || d.data.size() > 0xffff) continue;
    Stream& s = it->second;
    const uint8_t flags = uint8_t((starts ? 1 : 0) | (d.options.delayed > 0 ? 2 : 0));
    s.bytes.insert(s.bytes.end(), {uint8_t(d.data.size()), uint8_t(d.data.size() >> 8), flags});
    s.bytes.insert(s.bytes.end(), d.data.data(), d.data.data() + d.data.size());
    if (++s.packets == 12) flush(d.wid);
  }
  while (!open.empty()) flush(open.begin()->first);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUTDIR [RECORDING...]\n", argv[0]);
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
  if (argc >= 3) n += recording_seeds(root, argv[2]);
  for (int i = 2; i < argc; ++i) n += video_seeds(root, argv[i]);
  n += delta_seeds(root);
  n += scroll_seeds(root);
  std::printf("wrote %d seeds under %s\n", n, root.c_str());
  return 0;
}
