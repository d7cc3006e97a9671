#!/usr/bin/env python3
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node-side code keeps to Python 3.6 (issue 27 item 2; README "On your cluster").

The node-side files are the modules and every module_utils file a module imports, transitively, with the package
``__init__.py`` files on the way: what AnsiballZ ships to a node. Three checks, each usable alone:

* ``static``: an AST walk of each node-side file for syntax, standard-library modules and APIs newer than Python 3.6
  (and top-level imports of anything but the standard library and Ansible). Always runs: no interpreter needed. Each
  finding is ``file:line: feature (Python X.Y)``.
* ``compile``: every node-side file compiled by each of python3.6 .. python3.13 found here (PATH, then pyenv).
* ``tests``: the node-side parsers' own unit tests (NODE_TESTS) run by pytest under python3.6 and python3.8, each in
  a throwaway venv built from PyPI (``--venv-root``, default .nodepy/ in the checkout).

``python3 tests/node_python.py [static] [compile] [tests]`` (all three by default); exit 1 when a check fails, 0
with a line naming each interpreter not found (a machine without it still gets the static check).
"""

import argparse
import ast
import glob
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
COLL = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops")
MODULE_UTILS = os.path.join(COLL, "plugins", "module_utils")
PREFIX = "ansible_collections.zhisuan.ops.plugins.module_utils"

MINIMUM = (3, 6)
COMPILE_VERSIONS = ["3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
TEST_VERSIONS = ["3.6", "3.8"]
# the last pytest that installs on each old Python
PYTEST_FOR = {"3.6": "pytest==7.0.1", "3.7": "pytest==7.4.4", "3.8": "pytest==8.3.5"}
# pip that still reads Requires-Python from the index correctly on that Python (3.6's bundled pip 18 does not)
PIP_FOR = {"3.6": "pip==21.3.1", "3.7": "pip==24.0", "3.8": "pip==24.3.1"}
# tests/unit files that test node-side parsers only (no Ansible, no hypothesis): run under the old Pythons
NODE_TESTS = [
    "test_dcgm_parse.py", "test_fio_parse.py", "test_host_sysinfo.py", "test_ipmi_parse.py", "test_ipmi_sel.py",
    "test_net_parse.py", "test_nvidia_smi.py", "test_perftest.py", "test_slurm_parse.py", "test_topo.py",
    "test_xid.py", "test_safe_parse_node.py",
]
# tests in them that check something only the controller's Python can (ast.parse(feature_version=) is 3.8+)
CONTROLLER_ONLY = ["test_module_utils_is_stdlib_only_and_py39_syntax"]

# standard-library modules newer than 3.6
NEW_MODULES = {
    "dataclasses": (3, 7), "contextvars": (3, 7), "importlib.resources": (3, 7), "importlib.metadata": (3, 8),
    "zoneinfo": (3, 9), "graphlib": (3, 9), "tomllib": (3, 11),
}
# attribute names (any object's) that are newer than 3.6: str/bytes/datetime/time/math/functools/shlex/typing APIs
NEW_ATTRIBUTES = {
    "isascii": ((3, 7), "str.isascii()"),
    "fromisoformat": ((3, 7), "datetime.fromisoformat()"),
    "time_ns": ((3, 7), "time.time_ns()"),
    "monotonic_ns": ((3, 7), "time.monotonic_ns()"),
    "perf_counter_ns": ((3, 7), "time.perf_counter_ns()"),
    "nullcontext": ((3, 7), "contextlib.nullcontext"),
    "isqrt": ((3, 8), "math.isqrt()"),
    "prod": ((3, 8), "math.prod()"),
    "dist": ((3, 8), "math.dist()"),
    "comb": ((3, 8), "math.comb()"),
    "cached_property": ((3, 8), "functools.cached_property"),
    "removeprefix": ((3, 9), "str.removeprefix()"),
    "removesuffix": ((3, 9), "str.removesuffix()"),
    "waitstatus_to_exitcode": ((3, 9), "os.waitstatus_to_exitcode()"),
    "bit_count": ((3, 10), "int.bit_count()"),
    "UTC": ((3, 11), "datetime.UTC"),
}
# names of typing newer than 3.6, and module.attribute pairs whose name alone is too common to flag everywhere
NEW_QUALIFIED = {
    ("functools", "cache"): (3, 9), ("shlex", "join"): (3, 8), ("asyncio", "run"): (3, 7),
    ("typing", "Literal"): (3, 8), ("typing", "Protocol"): (3, 8), ("typing", "TypedDict"): (3, 8),
    ("typing", "Final"): (3, 8), ("typing", "final"): (3, 8), ("typing", "Annotated"): (3, 9),
    ("typing", "ParamSpec"): (3, 10), ("typing", "TypeAlias"): (3, 10), ("typing", "TypeGuard"): (3, 10),
    ("typing", "Self"): (3, 11), ("typing", "Never"): (3, 11), ("typing", "LiteralString"): (3, 11),
}
BUILTIN_GENERICS = {"list", "dict", "tuple", "set", "frozenset", "type"}
NODE_IMPORTS = {"ansible", "ansible_collections"}


def _version(version):
    return "%d.%d" % version


def _resolve(name):
    """The file of module_utils module ``name`` (a package's ``__init__.py``), or None."""
    rel = name[len(PREFIX):].lstrip(".").replace(".", os.sep)
    base = os.path.join(MODULE_UTILS, rel)
    if os.path.isfile(base + ".py"):
        return base + ".py"
    init = os.path.join(base, "__init__.py")
    return init if os.path.isfile(init) else None


def _imports(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(PREFIX):
            found.append(_resolve(node.module))
            found.extend(_resolve(node.module + "." + alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend(_resolve(alias.name) for alias in node.names if alias.name.startswith(PREFIX))
    return [item for item in found if item]


def node_side_files():
    """Every module and the module_utils files it ships, transitively (sorted absolute paths)."""
    modules = os.path.join(COLL, "plugins", "modules")
    todo = [os.path.join(modules, name) for name in os.listdir(modules) if name.endswith(".py")]
    seen = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo.extend(_imports(path))
        folder = os.path.dirname(path)
        while folder.startswith(MODULE_UTILS + os.sep):
            init = os.path.join(folder, "__init__.py")
            if os.path.isfile(init):
                todo.append(init)
            folder = os.path.dirname(folder)
    return sorted(seen)


def _annotations(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if arg is not None and arg.annotation is not None:
                    yield arg.annotation
            if getattr(node, "returns", None) is not None:
                yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


def _guarded(tree):
    """Import nodes inside a function or a try whose handler catches ImportError (optional at run time)."""
    guarded = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            guarded.update(id(child) for child in ast.walk(node) if isinstance(child, (ast.Import, ast.ImportFrom)))
        elif isinstance(node, ast.Try):
            names = set()
            for handler in node.handlers:
                for part in ast.walk(handler.type) if handler.type is not None else ():
                    if isinstance(part, ast.Name):
                        names.add(part.id)
            if names & {"ImportError", "ModuleNotFoundError", "Exception"}:
                for child in node.body:
                    guarded.update(id(sub) for sub in ast.walk(child) if isinstance(sub, (ast.Import, ast.ImportFrom)))
    return guarded


def scan_source(source, path, minimum=MINIMUM):
    """``[(line, feature, version)]`` for what in ``source`` needs a newer Python than ``minimum``."""
    tree = ast.parse(source, path)
    found = []

    def need(node, feature, version):
        if version > minimum:
            found.append((getattr(node, "lineno", 0), feature, version))

    guarded = _guarded(tree)
    stdlib = set(sys.stdlib_module_names)
    for node in _annotations(tree):
        for part in ast.walk(node):
            if isinstance(part, ast.BinOp) and isinstance(part.op, ast.BitOr):
                need(part, "X | Y union in an annotation", (3, 10))
    for node in ast.walk(tree):
        kind = type(node).__name__
        if kind == "NamedExpr":
            need(node, "assignment expression (:=)", (3, 8))
        elif kind == "Match":
            need(node, "match statement", (3, 10))
        elif kind == "TryStar":
            need(node, "except*", (3, 11))
        elif kind == "TypeAlias":
            need(node, "type statement", (3, 12))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if node.args.posonlyargs:
                need(node, "positional-only parameters (/)", (3, 8))
            if getattr(node, "type_params", None):
                need(node, "type parameters (def f[T])", (3, 12))
        elif isinstance(node, ast.ClassDef) and getattr(node, "type_params", None):
            need(node, "type parameters (class C[T])", (3, 12))
        elif isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:
                if alias.name == "annotations":
                    need(node, "from __future__ import annotations", (3, 7))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif node.level:
                names = []
            else:
                names = [node.module] + [node.module + "." + alias.name for alias in node.names]
            modules = [module for module in NEW_MODULES
                       if any(name == module or name.startswith(module + ".") for name in names)]
            for module in modules:
                need(node, "module %s" % module, NEW_MODULES[module])
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                for alias in node.names:
                    version = NEW_QUALIFIED.get((node.module, alias.name))
                    if version:
                        need(node, "%s.%s" % (node.module, alias.name), version)
            top = names[0].split(".")[0] if names else None
            if top and top not in stdlib and top not in NODE_IMPORTS and id(node) not in guarded:
                found.append((node.lineno, "import of %s, not in the standard library (a bare node lacks it; import "
                                            "it inside the function that needs it)" % top, None))
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in BUILTIN_GENERICS:
            need(node, "builtin generic %s[...]" % node.value.id, (3, 9))
        if isinstance(node, ast.Attribute):
            if node.attr in NEW_ATTRIBUTES:
                version, feature = NEW_ATTRIBUTES[node.attr]
                need(node, feature, version)
            if isinstance(node.value, ast.Name):
                version = NEW_QUALIFIED.get((node.value.id, node.attr))
                if version:
                    need(node, "%s.%s" % (node.value.id, node.attr), version)
        if isinstance(node, ast.Call):
            func = node.func
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
            for keyword in node.keywords:
                if owner == "subprocess" and keyword.arg in ("capture_output", "text"):
                    need(keyword.value, "subprocess %s=" % keyword.arg, (3, 7))
                if isinstance(func, ast.Name) and func.id == "zip" and keyword.arg == "strict":
                    need(keyword.value, "zip(strict=)", (3, 10))
    return sorted(found, key=lambda item: (item[0], item[1]))


def static_check(paths=None, minimum=MINIMUM):
    """``["file:line: feature (Python X.Y+, nodes may have 3.6)"]`` over the node-side files."""
    problems = []
    for path in paths or node_side_files():
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        rel = os.path.relpath(path, REPO)
        rel = path if rel.startswith(os.pardir) else rel
        for line, feature, version in scan_source(source, path, minimum):
            needs = " (Python %s+; nodes may have %s)" % (_version(version), _version(minimum)) if version else ""
            problems.append("%s:%d: %s%s" % (rel, line, feature, needs))
    return problems


def find_interpreter(version):
    """The path of a working python<version>: under pyenv ($PYENV_ROOT or ~/.pyenv) first, then on PATH (a pyenv
    shim that is not that version, or anything else that does not run as it, is passed over); else None."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates = sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin", "python" + version)),
                        reverse=True)
    candidates.append(shutil.which("python" + version))
    for candidate in candidates:
        if not candidate or not os.access(candidate, os.X_OK):
            continue
        try:
            proc = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
                                  timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if proc.returncode == 0 and proc.stdout.strip() == version:
            return candidate
    return None


_COMPILE = """
import sys
bad = 0
for path in sys.argv[1:]:
    with open(path, "rb") as handle:
        source = handle.read()
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        bad += 1
        print("%s:%s: %s" % (exc.filename, exc.lineno, exc.msg))
sys.exit(1 if bad else 0)
"""


def compile_with(python, paths=None, timeout=300):
    """``(ok, output)``: every node-side file compiled by ``python`` (nothing written)."""
    proc = subprocess.run([python, "-c", _COMPILE] + list(paths or node_side_files()), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout, check=False)
    return proc.returncode == 0, proc.stdout.replace(REPO + os.sep, "")


def _venv(python, version, venv_root, timeout=600):
    """A venv of ``python`` with pytest installed (kept in venv_root/<version>, made once)."""
    folder = os.path.join(venv_root, version)
    bin_python = os.path.join(folder, "bin", "python")
    marker = os.path.join(folder, ".installed")
    if not os.path.isfile(marker):
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([python, "-m", "venv", folder], check=True, timeout=timeout)
        pip = [bin_python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run(pip + [PIP_FOR[version]], check=True, timeout=timeout)
        subprocess.run(pip + [PYTEST_FOR[version]], check=True, timeout=timeout)
        with open(marker, "w", encoding="utf-8") as handle:
            handle.write(PYTEST_FOR[version] + "\n")
    return bin_python


def run_node_tests(python, version, venv_root, timeout=900):
    """``(ok, output)``: NODE_TESTS run by pytest under ``python``. The test files are controller code (they start
    with ``from __future__ import annotations``): copies without that line run, beside tests/fixtures."""
    bin_python = _venv(python, version, venv_root)
    with tempfile.TemporaryDirectory(prefix="nodepy-") as work:
        unit = os.path.join(work, "unit")
        os.mkdir(unit)
        os.symlink(os.path.join(REPO, "tests", "fixtures"), os.path.join(work, "fixtures"))
        for name in NODE_TESTS:
            with open(os.path.join(REPO, "tests", "unit", name), encoding="utf-8") as handle:
                lines = [line for line in handle if line.strip() != "from __future__ import annotations"]
            with open(os.path.join(unit, name), "w", encoding="utf-8") as handle:
                handle.writelines(lines)
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "collections"), PYTHONDONTWRITEBYTECODE="1")
        argv = [bin_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", work, unit,
                "-k", " and ".join("not " + name for name in CONTROLLER_ONLY)]
        proc = subprocess.run(argv, cwd=unit, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=timeout, check=False)
    return proc.returncode == 0, proc.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checks", nargs="*", help="static, compile, tests (default: all three)")
    parser.add_argument("--venv-root", default=os.path.join(REPO, ".nodepy"))
    args = parser.parse_args(argv)
    checks = args.checks or ["static", "compile", "tests"]
    unknown = sorted(set(checks) - {"static", "compile", "tests"})
    if unknown:
        parser.error("unknown check %s (static, compile, tests)" % ", ".join(unknown))
    failed = False
    files = node_side_files()
    if "static" in checks:
        problems = static_check(files)
        for problem in problems:
            print(problem)
        print("node-python static: %d node-side files, %d problems" % (len(files), len(problems)))
        failed = failed or bool(problems)
    if "compile" in checks:
        for version in COMPILE_VERSIONS:
            python = find_interpreter(version)
            if python is None:
                print("node-python compile: python%s not found (PATH, pyenv): not compiled with it" % version)
                continue
            ok, output = compile_with(python, files)
            print(output, end="")
            print("node-python compile: python%s (%s): %s" % (version, python, "ok" if ok else "FAILED"))
            failed = failed or not ok
    if "tests" in checks:
        for version in TEST_VERSIONS:
            python = find_interpreter(version)
            if python is None:
                print("node-python tests: python%s not found (PATH, pyenv): parser tests not run with it" % version)
                continue
            try:
                ok, output = run_node_tests(python, version, args.venv_root)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
                ok = False
                output = "node-python tests: could not make the python%s venv with %s from PyPI in %s: %s" % (
                    version, PYTEST_FOR[version], args.venv_root, exc)
            tail = output.strip().splitlines()
            print("\n".join(tail if not ok else tail[-1:]))
            print("node-python tests: python%s (%s): %s" % (version, python, "ok" if ok else "FAILED"))
            failed = failed or not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
