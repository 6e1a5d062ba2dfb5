"""Shared fixtures: synthetic screen-like pictures and their encodings made with Pillow.

The suite tests whichever `pixpath` Python imports: the build tree's (ctest python_test sets
PYTHONPATH=<build>/python) or an installed one (scripts/test-python-wheel runs it against the
installed wheel, from outside the checkout). PIXPATH_TEST_PACKAGE=<folder> makes the run fail
at once unless the package imported is the one in that folder."""
import io
import os
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import pixpath

_expected = os.environ.get("PIXPATH_TEST_PACKAGE")
if _expected and Path(pixpath.__file__).resolve().parent != Path(_expected).resolve():
    raise ImportError(f"PIXPATH_TEST_PACKAGE is {_expected}, but the pixpath imported is "
                      f"{Path(pixpath.__file__).parent}")


def pytest_report_header(config):
    return f"pixpath {pixpath.__version__}: {Path(pixpath.__file__).parent}"


def screen_like(width, height, alpha=False, seed=1):
    """Text-like strokes on flat colours with a gradient band: what a desktop looks like."""
    rng = np.random.default_rng(seed)
    img = np.empty((height, width, 4 if alpha else 3), np.uint8)
    img[...] = (236, 236, 236, 255)[: img.shape[2]]
    img[: height // 8] = (40, 60, 120, 255)[: img.shape[2]]
    xs = np.linspace(0, 255, width, dtype=np.uint16)
    img[height // 3: height // 2, :, 0] = xs.astype(np.uint8)
    img[height // 3: height // 2, :, 1] = (255 - xs).astype(np.uint8)
    for _ in range(max(4, width * height // 2000)):
        y, x = rng.integers(0, height - 3), rng.integers(0, width - 12)
        img[y:y + 2, x:x + rng.integers(3, 12), :3] = rng.integers(0, 80, 3)
    if alpha:
        img[..., 3] = np.linspace(0, 255, height, dtype=np.uint8)[:, None]
    return img


def encode(array, fmt, **kw):
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[1 if array.ndim == 2 else array.shape[2]]
    buf = io.BytesIO()
    Image.fromarray(array, mode).save(buf, fmt, **kw)
    return buf.getvalue()


def pil_decode(data, mode=None):
    im = Image.open(io.BytesIO(data))
    im.load()
    return np.asarray(im.convert(mode) if mode else im)


@pytest.fixture(scope="session")
def rgb_picture():
    return screen_like(203, 97)  # odd sizes: padded strides, partial MCUs


@pytest.fixture(scope="session")
def rgba_picture():
    return screen_like(131, 77, alpha=True, seed=2)


def gpu_reason():
    """Why GPU tests skip here (no GPU module, driver or device), or None where they run."""
    try:
        pixpath.gpu_info()
    except pixpath.Error as e:
        return f"no GPU decoder here: {e}"
    return None


def wait_stream_releases(timeout=10.0):
    """Pictures whose DLPack consumer let go are dropped by pixpath's releaser thread once the
    consumer's stream is done: wait for it (the streams are idle when this is called)."""
    end = time.monotonic() + timeout
    while pixpath.counters()["pending_stream_releases"] and time.monotonic() < end:
        time.sleep(0.005)
    assert pixpath.counters()["pending_stream_releases"] == 0
