# Third-party libraries, all from Debian packages (scripts/setup installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(OpenSSL 3 REQUIRED COMPONENTS SSL Crypto)  # HMAC for xpra password challenges, TLS (ssl://, wss://)
pkg_check_modules(TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)
pkg_check_modules(SPNG REQUIRED IMPORTED_TARGET spng)
# The png decoder's fast path inflates the IDAT data with libdeflate (src/codecs/png_decoder.cc).
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)
pkg_check_modules(WEBP REQUIRED IMPORTED_TARGET libwebp libwebpdemux)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
pkg_check_modules(BROTLI REQUIRED IMPORTED_TARGET libbrotlidec libbrotlienc)
# Video draws (h264, vp8, vp9): libavcodec decodes, libyuv converts YUV for the CPU backing
# (libswscale only for the benchmark that chose libyuv; docs/performance.md).
# PIXPATH_WITH_VIDEO=OFF builds without libavcodec (no video codings; src/codecs/
# video_decoder_none.cc): for a small package, e.g. python/stage-gpu's.
option(PIXPATH_WITH_VIDEO "Decode video draws (h264, vp8, vp9) with libavcodec" ON)
if(PIXPATH_WITH_VIDEO)
  pkg_check_modules(AVCODEC REQUIRED IMPORTED_TARGET libavcodec libavutil)
endif()
find_library(PIXPATH_LIBYUV yuv REQUIRED)
find_path(PIXPATH_LIBYUV_INCLUDE libyuv.h REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

if(PIXPATH_WITH_GL)
  pkg_check_modules(EPOXY REQUIRED IMPORTED_TARGET epoxy)
  pkg_check_modules(EGL REQUIRED IMPORTED_TARGET egl)
  pkg_check_modules(GLFW REQUIRED IMPORTED_TARGET glfw3)
  # Xlib on GLFW's display: override-redirect, raising windows (GLFW has neither).
  pkg_check_modules(GLFW_X11 REQUIRED IMPORTED_TARGET x11)
endif()

# The X11 shared-memory backing (no GL): xcb with MIT-SHM, and libX11 for keysym names.
option(PIXPATH_WITH_X11 "Build the X11 shared-memory backing (xcb, xcb-shm)" ON)
if(PIXPATH_WITH_X11)
  pkg_check_modules(XCB REQUIRED IMPORTED_TARGET xcb xcb-shm xcb-render)
  pkg_check_modules(X11 REQUIRED IMPORTED_TARGET x11)
endif()

# CUDA is optional: the GPU module is its own shared library, loaded at run time.
set(PIXPATH_HAVE_CUDA OFF)
if(NOT PIXPATH_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(PIXPATH_HAVE_CUDA ON)
  elseif(PIXPATH_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "PIXPATH_WITH_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "pixpath: GL backing ${PIXPATH_WITH_GL}, CUDA module ${PIXPATH_HAVE_CUDA}, sanitizer ${PIXPATH_SANITIZER}")
