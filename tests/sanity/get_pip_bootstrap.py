# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for the get-pip.py that ``ansible-test --venv`` downloads from a host this machine cannot reach.

ansible-test runs this file as ``__main__`` inside a fresh virtual environment with pip's own options and the pinned
packages (``pip==24.2``) as arguments. We bootstrap pip from Python's bundled ``ensurepip`` wheel and then let pip
install the requested packages from PyPI. ``make sanity`` copies it to ~/.ansible/test/cache/get_pip_<ver>.py.
"""

import subprocess
import sys

PIP_ONLY_FLAGS = ("--no-setuptools", "--no-wheel")

subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"])
args = [arg for arg in sys.argv[1:] if arg not in PIP_ONLY_FLAGS]
subprocess.check_call([sys.executable, "-m", "pip", "install", "--disable-pip-version-check"] + args)
