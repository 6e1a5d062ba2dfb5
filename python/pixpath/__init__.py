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
from . import _pixpath as _ext

__all__ = [name for name in dir(_ext) if not name.startswith("_")]
