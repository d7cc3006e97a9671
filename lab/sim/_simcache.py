"""The render cache of the lab's simulated tools: a repeated call replays a stored rendering, byte for byte.

A node tool's wrapper runs ``_launch.py SIM --state STATE [args...]``, which calls ``main`` here:

* **hit**: the entry ``<dir of STATE>/cache/<SIM>@<arg>@<arg>...`` (each argument %-escaped) exists and every file
  signature in its header still matches (``st_dev st_ino st_size st_mtime_ns st_ctime_ns`` of the state file, of
  each lab/sim module the render loaded, of each file it read: captures, fixtures), and so do the magic line (entry
  format, Python version) and stdout's encoding: its stdout bytes are written, rc 0, nothing on stderr. This path
  imports nothing (``sys`` and ``posix`` are built in and loaded at startup).
* **miss**: import SIM and run its ``main`` as the wrapper did before; if SIM says the call is cacheable
  (``SIM.cacheable(args, state)``: a pure function of the state file, the arguments, the code and the files it
  reads) and the run ended with rc 0 and nothing on stderr, store what it wrote on stdout -- only if the state
  file's signature is the same after the render as before it, and no file the key names was modified within
  ``RACY_NS`` before the render began (a later write in the same timestamp tick could not be told apart: such a
  render is just not stored; the next call stores it). Entries are written atomically (tmp + ``os.replace``).

Never cacheable (each simulator's ``cacheable`` says which of its calls are): a call that writes the state file,
reads another node's state, depends on the clock, sleeps, is random, or hangs. Delete ``nodes/<node>/cache/`` to
clear a node's entries (``labctl down`` removes them with the lab).
"""

import sys
from posix import stat as _stat  # `os` is not loaded yet under -S; the built-in posix module is

MAGIC = "zhisuan-lab-sim-cache 1 python %x" % sys.hexversion
MAX_NAME = 200  # longer entry names (very long argument lists) are not cached
# A file modified less than this before a render started is "racy": a write after the render could carry the same
# timestamp (file times come from the kernel's coarse clock, one tick behind). 2 s on a filesystem with whole-second
# times (nanoseconds 0).
RACY_NS = 50_000_000
RACY_COARSE_NS = 2_000_000_000
_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._,=+-")
# Files under these are not regular data (their stat says nothing of their content): a render that reads one of
# them is not stored.
_PSEUDO = ("/proc/", "/sys/", "/dev/")


def entry_path(sim, state_path, args):
    """The cache entry of ``SIM args`` on the node of ``state_path`` (None: not cacheable by name)."""
    if not sim.isidentifier():
        return None
    parts = [sim]
    for arg in args:
        raw = arg.encode("utf-8", "surrogateescape")
        parts.append("".join(chr(c) if c in _SAFE else "%%%02X" % c for c in raw))
    name = "@".join(parts)
    if len(name) > MAX_NAME:
        return None
    return "%s/cache/%s" % (state_path.rpartition("/")[0] or ".", name)


def signature(path):
    try:
        st = _stat(path)
    except (OSError, ValueError):
        return None
    return "%d %d %d %d %d" % (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _stdout_line():
    return "stdout %s %s" % (sys.stdout.encoding, sys.stdout.errors)


def lookup(entry, state_path):
    """The stored stdout bytes of ``entry`` if it is still valid, else None."""
    try:
        with open(entry, "rb") as fh:
            blob = fh.read()
    except OSError:
        return None
    head, sep, body = blob.partition(b"\n\n")
    if not sep:
        return None
    lines = head.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 3 or lines[0] != MAGIC or lines[1] != _stdout_line():
        return None
    for n, line in enumerate(lines[2:]):
        parts = line.split(" ", 5)
        if len(parts) != 6 or (n == 0 and parts[5] != state_path):
            return None
        if signature(parts[5]) != " ".join(parts[:5]):
            return None
    return body


def main(argv):
    """``SIM --state STATE [args...]``: replay a valid entry, else run SIM (and maybe store its output)."""
    if not argv:
        sys.stderr.write("lab: internal: _launch.py SIM --state FILE [args...] (run it through the lab wrapper)\n")
        return 2
    entry = None
    if len(argv) >= 3 and argv[1] == "--state" and sys.stdout is not None and sys.stderr is not None:
        entry = entry_path(argv[0], argv[2], argv[3:])
    if entry is not None:
        body = lookup(entry, argv[2])
        if body is not None:
            out = sys.stdout.buffer
            out.write(body)
            out.flush()
            return 0
        reads = []
        sys.addaudithook(_recorder(reads))  # before the simulator is imported: it may read files at import time
    sim = __import__(argv[0])
    if entry is None or not hasattr(sim, "cacheable"):
        return sim.main(argv[1:])
    return _render(sim, argv, entry, reads)


# --------------------------------------------------------------------------------------------- the miss path

def _recorder(reads):
    """An audit hook recording the paths opened for reading and the directories listed."""
    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            if isinstance(flags, int) and flags & 3 or isinstance(mode, str) and any(c in mode for c in "wax+"):
                return
        elif event in ("os.listdir", "os.scandir"):
            path = args[0]
        else:
            return
        if isinstance(path, bytes):
            path = path.decode("utf-8", "surrogateescape")
        if isinstance(path, str):
            reads.append(path)
    return hook


def _render(sim, argv, entry, reads):
    import io
    import os
    import time

    state_path, args = argv[2], argv[3:]
    t0 = time.time_ns()
    before = _stat_or_none(state_path)
    try:
        from _common import floods, load_state
        state = load_state(state_path) if before is not None else None
        # a flooding tool never finishes (nothing to store, and the tee would hold what it prints)
        ok = before is not None and bool(sim.cacheable(args, state)) and not any(
            floods(state, tool) for tool in getattr(sim, "TOOLS", ()))
    except Exception:  # a state the simulator will refuse: it says so itself
        ok = False
    if not ok:
        return sim.main(argv[1:])

    out_rec, err_rec = [], []
    real_out, real_err = sys.stdout, sys.stderr
    tee_out, tee_err = _tee(io, real_out, out_rec), _tee(io, real_err, err_rec)
    sys.stdout, sys.stderr = tee_out, tee_err
    try:
        rc = sim.main(argv[1:])
    finally:
        try:
            tee_out.flush()
            tee_err.flush()
        finally:
            sys.stdout, sys.stderr = real_out, real_err
    if rc not in (0, None) or any(err_rec) or _stat_or_none(state_path) != before:
        return rc
    try:
        _store(os, entry, state_path, before, reads, t0, b"".join(out_rec))
    except OSError:
        pass  # a cache that cannot be written is no cache; the call itself succeeded
    return rc


def _stat_or_none(path):
    try:
        st = _stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _racy(mtime_ns, t0):
    return mtime_ns >= t0 - (RACY_COARSE_NS if mtime_ns % 1_000_000_000 == 0 else RACY_NS)


def _store(os, entry, state_path, state_sig, reads, t0, payload):
    if _racy(state_sig[3], t0):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    state_abs = os.path.abspath(state_path)
    cache_dir = os.path.dirname(os.path.abspath(entry))
    skip = tuple(os.path.join(p, "") for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})
    deps = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and os.path.dirname(os.path.abspath(path)) == here:
            deps[os.path.abspath(path)] = None
    for path in reads:
        path = os.path.abspath(path)
        if path.startswith(_PSEUDO):
            return
        if path == state_abs or path.endswith(".pyc") or "/__pycache__/" in path or path.startswith(skip) \
                or os.path.dirname(path) == cache_dir:
            continue
        deps[path] = None
    lines = [MAGIC, _stdout_line(), "%d %d %d %d %d %s" % (state_sig + (state_path,))]
    for path in deps:
        st = _stat(path)
        if _racy(st.st_mtime_ns, t0) or "\n" in path:
            return
        lines.append("%d %d %d %d %d %s" % (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, path))
    if "\n" in state_path:
        return
    os.makedirs(cache_dir, exist_ok=True)
    tmp = "%s/.%s.tmp%d" % (cache_dir, os.path.basename(entry), os.getpid())
    try:
        with open(tmp, "wb") as fh:
            fh.write("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n\n" + payload)
        os.replace(tmp, entry)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _tee(io, stream, record):
    """A text stream like ``stream`` whose bytes go to ``stream.buffer`` and are recorded too (order kept)."""

    class Tee(io.BufferedIOBase):
        def writable(self):
            return True

        def write(self, data):
            record.append(bytes(data))
            return stream.buffer.write(data)

        def flush(self):
            stream.buffer.flush()

        def fileno(self):
            return stream.buffer.fileno()

        def isatty(self):
            return stream.buffer.isatty()

    return io.TextIOWrapper(Tee(), encoding=stream.encoding, errors=stream.errors, newline="\n",
                            line_buffering=stream.line_buffering, write_through=stream.write_through)
