"""What a lab wrapper execs for a simulator with a render cache: ``_launch.py SIM --state STATE [args...]``.

Kept tiny on purpose: a script run as ``__main__`` is compiled on every call, an imported module is read from its
.pyc. The work (a cache hit, or running SIM's ``main``) is in ``_simcache.py``."""
import sys

sys.path.insert(0, __file__.rpartition("/")[0] or ".")  # -I: the script's dir is not on sys.path
import _simcache  # noqa: E402

sys.exit(_simcache.main(sys.argv[1:]))
