"""pixpath for Python: the picture path of a remote-display client.

Decode pictures (JPEG, PNG, WebP and xpra's rgb24/rgb32, jpega, png/P, png/L) into
:class:`Picture` objects that export the buffer protocol (numpy, Pillow, memoryview) with
the right read-only flags, or straight into your own buffer (``into=``); decode JPEG on an
NVIDIA GPU (``device="cuda"``) into pictures exported with DLPack and
``__cuda_array_interface__``; decode video streams (h264, vp8, vp9) with
:class:`VideoDecoder` on the CPU or with NVDEC; paint xpra draw packets with pixpath's paint engine into
framebuffers you can read as numpy arrays; play recordings; attach to an xpra server.

The GIL is released while decoding and painting. Failures raise :class:`Error` with the
``code``, ``coding``, ``stage`` and ``reason`` of pixpath's own errors.
"""
from ._pixpath import *  # noqa: F401,F403
from ._pixpath import __version__  # noqa: F401

# Spelled out, not computed from the extension at import time, so that type checkers and
# stubtest can read it; python/tests/test_api.py checks that it names exactly the extension's
# public names.
__all__ = [
    "Client", "CpuBacking", "DecodeWarning", "Error", "PaintEngine", "Picture", "ReleaseDomain",
    "VideoDecoder", "attach", "codings", "counters", "decode", "gpu_info", "inspect",
    "libraries", "play", "read_recording", "video_codings",
]
