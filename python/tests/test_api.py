"""The Python surface itself: the GIL is released while pixpath works, the type stubs
(_pixpath.pyi) declare what the module has and nothing else, and every public name has a
docstring."""
import ast
import re
import threading
import time
from pathlib import Path

import numpy as np

import pixpath
from pixpath import _pixpath
from conftest import encode, screen_like

STUB = Path(_pixpath.__file__).with_name("_pixpath.pyi")


def _slots_run_inside(work):
    """Runs work() (one call into pixpath) on a thread; meanwhile this thread spins in Python.
    Returns (how many distinct 5 ms slots of the middle 70% of work()'s run this thread ran in,
    seconds work took). Were the GIL held through the call, this thread could not run at all
    inside it: 0 slots, whatever the machine's load."""
    slot = 0.005
    started, done = threading.Event(), threading.Event()
    span = []

    def run():
        started.set()
        t0 = time.perf_counter()
        work()
        span.append((t0, time.perf_counter()))
        done.set()

    th = threading.Thread(target=run)
    th.start()
    started.wait()
    stamps = []
    while not done.is_set():
        stamps.append(time.perf_counter())
    th.join()
    t0, t1 = span[0]
    lo, hi = t0 + 0.15 * (t1 - t0), t1 - 0.15 * (t1 - t0)
    return len({int((s - t0) / slot) for s in stamps if lo <= s <= hi}), t1 - t0


def test_decode_releases_the_gil():
    # One long decode (a large PNG: tens of ms on any machine here, more under load).
    big = screen_like(3200, 1800, seed=7)
    big[::3, ::5] = np.arange(big[::3, ::5].size, dtype=np.uint32).reshape(big[::3, ::5].shape) % 251
    png = encode(big, "PNG", compress_level=1)
    pixpath.decode(png)  # warm-up
    out = np.empty(big.shape, np.uint8)
    runs = []
    for _ in range(5):  # a loaded machine may give the spinning thread no core: retry
        runs.append(_slots_run_inside(lambda: pixpath.decode(png, into=out)))
        if runs[-1][0] >= 2:
            break
    np.testing.assert_array_equal(out, big)
    assert max(took for _, took in runs) > 0.01, f"decode too fast to judge: {runs}"
    assert max(n for n, _ in runs) >= 2, f"the Python thread never ran inside decode(): GIL held? {runs}"


def _stub_names():
    tree = ast.parse(STUB.read_text())
    top, classes = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        if isinstance(node, ast.ClassDef):
            members = set()
            for n in node.body:
                if isinstance(n, ast.FunctionDef):
                    members.add(n.name)
                elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                    members.add(n.target.id)
            classes[node.name] = members
        if isinstance(node, ast.FunctionDef):
            classes.setdefault("<module>", set())
    return tree, top, classes


def _public(obj):
    return {n for n in vars(obj) if not n.startswith("_")}


def test_stubs_declare_exactly_the_module():
    _, top, classes = _stub_names()
    module = {n for n in _public(_pixpath) if not isinstance(getattr(_pixpath, n), type(re))}
    missing = module - top
    extra = {n for n in top if not n.startswith("_")} - module  # _x: typing-only helpers
    assert not missing, f"in _pixpath but not in _pixpath.pyi: {sorted(missing)}"
    assert not extra, f"in _pixpath.pyi but not in _pixpath: {sorted(extra)}"
    for name, members in classes.items():
        if name == "<module>" or name.startswith("_"):
            continue
        cls = getattr(_pixpath, name)
        if issubclass(cls, BaseException):  # Error's attributes are set per instance
            continue
        have = {n for c in cls.__mro__ if c.__module__.startswith("pixpath") for n in _public(c)}
        assert not (have - members), f"{name}: not in the stubs: {sorted(have - members)}"
        assert not ({m for m in members if not m.startswith("_")} - have), \
            f"{name}: stubbed but absent: {sorted({m for m in members if not m.startswith('_')} - have)}"


def test_package_all_names_the_module():
    module = {n for n in _public(_pixpath) if not isinstance(getattr(_pixpath, n), type(re))}
    assert sorted(pixpath.__all__) == sorted(module), "pixpath/__init__.py's __all__"
    assert len(set(pixpath.__all__)) == len(pixpath.__all__)


def _pybind_params(doc):
    """Parameter names of pybind11's signature line 'name(a: T, *, b: U = ...) -> R'."""
    first = doc.strip().splitlines()[0]
    inner = first[first.index("(") + 1: first.rindex(")")]
    depth, names, cur = 0, [], ""
    for ch in inner + ",":
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            m = re.match(r"\s*(\*?\*?\w+)", cur)
            if m and m.group(1) not in ("*", "self"):
                names.append(m.group(1))
            cur = ""
        else:
            cur += ch
    return names


def test_stub_function_parameters_match():
    """Parameter names and order of every function and method, from pybind11's signature line:
    mypy's stubtest (scripts/test-python-stubs) cannot read pybind11's signatures (no
    __text_signature__), only names, classes and properties."""
    tree, _, _ = _stub_names()
    checked = 0

    def check(node, fn, where):
        stub = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                if a.arg != "self"]
        got = [n for n in _pybind_params(fn.__doc__) if not n.startswith("*")]
        assert stub == got, f"{where}: stub {stub}, module {got}"

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            check(node, getattr(_pixpath, node.name), node.name)
            checked += 1
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            cls = getattr(_pixpath, node.name)
            for f in node.body:
                if not isinstance(f, ast.FunctionDef) or any(
                        isinstance(d, ast.Name) and d.id == "property" for d in f.decorator_list):
                    continue
                doc = (getattr(cls, f.name, None).__doc__ or "") if hasattr(cls, f.name) else ""
                if not doc.strip().startswith(f.name + "("):
                    # Not pybind11's: the placeholder __init__ of a class without a constructor,
                    # and __buffer__ (the C buffer slot; a method only from Python 3.12).
                    assert f.name in ("__init__", "__buffer__"), f"{node.name}.{f.name}: {doc!r}"
                    continue
                check(f, getattr(cls, f.name), f"{node.name}.{f.name}")
                checked += 1
    assert checked >= 40


def test_public_names_have_docstrings():
    undocumented = []
    for name in sorted(_public(_pixpath)):
        obj = getattr(_pixpath, name)
        if isinstance(obj, type(re)):
            continue
        doc = (obj.__doc__ or "").strip()
        if callable(obj) and not isinstance(obj, type):
            doc = "\n".join(doc.splitlines()[1:]).strip()  # past pybind11's signature line
        if not doc:
            undocumented.append(name)
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            for m in sorted(_public(obj)):
                d = (getattr(obj, m).__doc__ or "").strip()
                if callable(getattr(obj, m)):
                    d = "\n".join(d.splitlines()[1:]).strip()
                if not d:
                    undocumented.append(f"{name}.{m}")
    assert not undocumented, f"no docstring: {undocumented}"
