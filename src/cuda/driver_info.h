// What the module knows of the driver and nvJPEG it runs on, read once per device: the NVIDIA
// kernel module's version (/proc/driver/nvidia/version), the CUDA driver API version, nvJPEG's
// version, and from those the status of the known nvjpegDecode leak (which decides how long
// the start-up self-test runs).
#pragma once

#include <string>

namespace pixpath::cuda {

struct DriverFacts {
  std::string nvidia_version;  // "580.159.03", "" when unknown
  int nvidia_major = -1;
  int cuda_driver_version = 0;  // e.g. 13000
  int nvjpeg_major = 0, nvjpeg_minor = 0, nvjpeg_patch = 0;
  // The nvjpegDecode leak tied to the CUDA context (gpu-path.md): fixed in the Linux 525
  // series (522.6 on Windows). "known_bad" forces a longer self-test; "unknown" forces one.
  std::string leak_status;
};

DriverFacts read_driver_facts();

}  // namespace pixpath::cuda
