// CodecRegistry: which codings this build can decode and encode, with the runtime versions of
// the libraries behind them and each codec's options and limits. Adding a coding touches its
// own file and one registration line, never the core or the paint engine.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pixpath/codecs/decoder.h"
#include "pixpath/codecs/encoder.h"

namespace pixpath::codecs {

struct LibraryVersion {
  std::string name;     // "libjpeg-turbo"
  std::string version;  // as the library reports it at run time
};

struct CodecDescription {
  std::string coding;
  bool decode = false, encode = false;
  std::string library;
  std::vector<std::string> outputs;  // formats decode_into() writes directly
  std::vector<std::string> options;  // draw / encode options honoured
};

class CodecRegistry {
 public:
  // The CPU codecs built into this library. Immutable after construction; thread-safe.
  static const CodecRegistry& builtin();

  const Decoder* decoder(std::string_view coding) const;  // null when unknown
  const Encoder* encoder(std::string_view coding) const;
  std::vector<std::string> decodable_codings() const;     // in preference order
  std::vector<CodecDescription> describe() const;
  std::vector<LibraryVersion> library_versions() const;

  CodecRegistry(const CodecRegistry&) = delete;
  CodecRegistry& operator=(const CodecRegistry&) = delete;
  ~CodecRegistry();

  struct Entry;  // one coding: its decoder, encoder and description (registry.cc)

 private:
  CodecRegistry();
  std::vector<Entry> entries_;
};

}  // namespace pixpath::codecs
