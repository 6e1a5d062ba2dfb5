// make_video_recording: writes a short recording (recording.h) of synthetic video draws, one
// window per coding, for the tests that need streams every decoder takes — NVDEC included,
// which takes 4:2:0 but not the 4:4:4 h264 of tests/data/sample-video.pxrec (a real xpra 3.1.3
// server's). Streams come from codecs::testing::encode_video (libx264, libvpx), moving
// content, one key frame then P frames, each draw with xpra's video options (csc, frame).
//
// Usage: make_video_recording [--size WxH] [--frames N] [--codings h264,vp8,vp9] OUT.pxrec
// Made tests/data/sample-video-420.pxrec (defaults). A developer's tool beside the `pixpath`
// command, not part of any library.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "codecs/testing/video_streams.h"
#include "pixpath/paint/recording.h"

using namespace pixpath;

int main(int argc, char** argv) {
  CLI::App app{"Write a recording of synthetic 4:2:0 video draws, one window per coding"};
  std::string out, size = "320x240";
  std::vector<std::string> codings = {"h264", "vp8", "vp9"};
  int frames = 12;
  app.add_option("OUT", out, "The recording to write (.pxrec)")->required();
  app.add_option("--size", size, "Each window's size, WxH")->capture_default_str();
  app.add_option("--frames", frames, "Frames per stream")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--codings", codings, "Comma-separated video codings")->delimiter(',')->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  int w = 0, h = 0;
  if (std::sscanf(size.c_str(), "%dx%d", &w, &h) != 2 || w < 16 || h < 16 || w > 4096 || h > 4096) {
    std::fprintf(stderr, "make_video_recording: --size must be WxH between 16 and 4096, not '%s'\n", size.c_str());
    return 2;
  }
  auto fail = [](const Error& e) {
    std::fprintf(stderr, "make_video_recording: %s\n", e.message().c_str());
    return 1;
  };
  auto writer = paint::RecordingWriter::create(out);
  if (!writer.ok()) return fail(writer.error());
  int64_t t = 0, sequence = 0, wid = 0;
  for (const std::string& coding : codings) {
    auto stream = codecs::testing::encode_video(coding, w, h, frames);
    if (!stream.ok()) return fail(stream.error());
    ++wid;
    paint::RecordedEvent win;
    win.type = paint::RecordType::WindowNew;
    win.time_us = t;
    win.wid = wid;
    win.x = int(wid - 1) * w;
    win.w = w;
    win.h = h;
    if (auto r = writer->write(win); !r.ok()) return fail(r.error());
    for (size_t i = 0; i < stream->packets.size(); ++i) {
      paint::RecordedEvent e;
      e.type = paint::RecordType::Draw;
      e.time_us = t += 33333;
      e.wid = wid;
      e.draw.wid = wid;
      e.draw.w = w;
      e.draw.h = h;
      e.draw.coding = coding;
      e.draw.data = SharedBytes::copy_of(stream->packets[i]);
      e.draw.sequence = ++sequence;
      e.draw.options.csc = "YUV420P";
      e.draw.options.frame = int64_t(i);
      if (auto r = writer->write(e); !r.ok()) return fail(r.error());
    }
  }
  if (auto r = writer->close(); !r.ok()) return fail(r.error());
  std::printf("%s: %zu windows, %d frames each, %dx%d 4:2:0\n", out.c_str(), codings.size(), frames, w, h);
  return 0;
}
