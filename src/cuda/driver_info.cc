#include "driver_info.h"

#include <cuda_runtime_api.h>
#include <nvjpeg.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace pixpath::cuda {

DriverFacts read_driver_facts() {
  DriverFacts f;
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (in && std::getline(in, line)) {
    const auto pos = line.find("Kernel Module");
    if (pos != std::string::npos) {
      // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
      std::istringstream ss(line.substr(pos + 13));
      std::string tok;
      while (ss >> tok)
        if (std::isdigit(static_cast<unsigned char>(tok[0])) && tok.find('.') != std::string::npos) {
          f.nvidia_version = tok;
          f.nvidia_major = std::atoi(tok.c_str());
          break;
        }
    }
  }
  (void)cudaDriverGetVersion(&f.cuda_driver_version);
  (void)nvjpegGetProperty(MAJOR_VERSION, &f.nvjpeg_major);
  (void)nvjpegGetProperty(MINOR_VERSION, &f.nvjpeg_minor);
  (void)nvjpegGetProperty(PATCH_LEVEL, &f.nvjpeg_patch);
  if (f.nvidia_major <= 0)
    f.leak_status = "unknown driver version: self-test decides";
  else if (f.nvidia_major < 525)
    f.leak_status = "driver before 525: nvjpegDecode leak known; extended self-test";
  else
    f.leak_status = "driver 525 or newer: nvjpegDecode leak fixed";
  return f;
}

}  // namespace pixpath::cuda
