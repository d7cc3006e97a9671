# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Property-based damage of real captures (hypothesis), shared by every fuzz test.

A fuzz test takes a real fixture, lets hypothesis damage it the ways real outputs get damaged (empty, truncated,
byte flips, ``N/A``/``ERR!`` values, huge, infinite and negative numbers, locale decimal commas, Unicode digits,
wrong JSON types, deep nesting) and asserts the parser is *total*: it returns facts or raises the project's typed
``ZhisuanError``, never anything else, never for longer than ``HANG_SECONDS``.

    from fuzzing import FUZZ, text_mutations, assert_total

    @FUZZ
    @given(text_mutations(fixture_text("nvidia-smi/q-a10-535.129.03.txt")))
    def test_nvidia_smi_text_is_total(text):
        assert_total("nvidia_smi.parse_text", parse_text, text)

The example budget is fixed and the search derandomized, so ``make test`` is fast and repeatable:
``ZHISUAN_FUZZ_EXAMPLES`` (default 40 per test) raises it, ``make fuzz`` runs a long search. Every call of
``assert_total`` is counted and the total is printed at the end of the pytest run.
"""

from __future__ import annotations

import json
import math
import os
import time

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ZhisuanError

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")
HANG_SECONDS = 5.0
EXAMPLES = int(os.environ.get("ZHISUAN_FUZZ_EXAMPLES", "40"))

# One profile for every fuzz test: fixed budget, fixed search (derandomize = a fixed seed), no deadline of
# hypothesis's own (assert_total measures the hang limit), no example database written into the tree.
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)

CASES = {"run": 0}

# Values real tools print where a number should be, and numbers no healthy reading can have.
ODD_VALUES = (
    "", "N/A", "[N/A]", "ERR!", "[Unknown Error]", "Not Supported", "[Not Supported]", "Unknown", "-", "--", "null",
    "nan", "NaN", "inf", "-inf", "Infinity", "-1", "-2147483648", "4294967295", "18446744073709551615",
    "9" * 400, "1e999", "1e308", "1.2.3", "1,5", "1 234", "0x7fffffff", "\u0663\u0664", "\u00b2", "１２",
    "\x00", "\ufffd", "true", "[]", "{}",
)
ODD_JSON = (
    None, True, False, 0, -1, 1e308, float("inf"), float("-inf"), float("nan"), 10 ** 40, -(10 ** 40), "", "N/A",
    "ERR!", "1.2.3", "\u0663", [], {}, [None], {"": None}, [[[[]]]],
)


def fixture_text(relpath):
    """A real capture from tests/fixtures as text (undecodable bytes replaced, as the runner does)."""
    with open(os.path.join(FIXTURES, relpath), "rb") as handle:
        return handle.read().decode("utf-8", errors="replace")


def fixture_json(relpath):
    return json.loads(fixture_text(relpath))


def _numbers(text):
    """Spans of the decimal numbers in text: where a damaged output most often differs from a good one."""
    spans = []
    start = None
    for index, char in enumerate(text + " "):
        if char.isascii() and (char.isdigit() or (char == "." and start is not None)):
            if start is None:
                start = index
        elif start is not None:
            spans.append((start, index))
            start = None
    return spans


@st.composite
def text_mutations(draw, text):
    """A damaged copy of ``text``: one to three of the damages real outputs show, applied in turn."""
    rounds = draw(st.integers(min_value=1, max_value=3))
    for _ in range(rounds):
        kind = draw(st.sampled_from((
            "empty", "truncate", "flip", "number", "number", "number", "drop_line", "dup_line", "insert",
            "whitespace", "locale", "crlf",
        )))
        if kind == "empty":
            return draw(st.sampled_from(("", "\n", " \n\n", "\x00")))
        if not text:
            break
        if kind == "truncate":
            text = text[:draw(st.integers(min_value=0, max_value=len(text)))]
        elif kind == "flip":
            pos = draw(st.integers(min_value=0, max_value=len(text) - 1))
            text = text[:pos] + chr(ord(text[pos]) ^ (1 << draw(st.integers(0, 6)))) + text[pos + 1:]
        elif kind == "number":
            spans = _numbers(text)
            if spans:
                start, end = draw(st.sampled_from(spans))
                text = text[:start] + draw(st.sampled_from(ODD_VALUES)) + text[end:]
        elif kind in ("drop_line", "dup_line"):
            lines = text.splitlines(True)
            if lines:
                pos = draw(st.integers(min_value=0, max_value=len(lines) - 1))
                lines[pos:pos + 1] = [] if kind == "drop_line" else [lines[pos], lines[pos]]
                text = "".join(lines)
        elif kind == "insert":
            pos = draw(st.integers(min_value=0, max_value=len(text)))
            junk = draw(st.sampled_from((
                "\nSegmentation fault (core dumped)\n", "\n\n\n", ": : :", "\t", "{", "}", "<", "/>", "\"", "|",
                "\nFailed to initialize NVML: Driver/library version mismatch\n", "\x1b[31m", "\u202e",
            )))
            text = text[:pos] + junk + text[pos:]
        elif kind == "whitespace":
            text = text.replace("  ", " ") if draw(st.booleans()) else text.replace(" ", "\t")
        elif kind == "locale":
            text = text.replace(".", ",")
        elif kind == "crlf":
            text = text.replace("\n", "\r\n")
    return text


def _paths(value, prefix=()):
    yield prefix
    if len(prefix) >= 40:  # do not walk into a deep nesting an earlier round made (RecursionError in the generator)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
    else:
        copy = list(value)
    copy[head] = _replace(value[head], rest, new)
    return copy


def _nested(depth):
    value = 0
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def json_mutations(draw, obj):
    """A damaged copy of a parsed JSON document: values of the wrong type, odd numbers, keys dropped, deep nesting."""
    rounds = draw(st.integers(min_value=1, max_value=3))
    for _ in range(rounds):
        paths = list(_paths(obj))
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(("odd", "odd", "odd", "drop", "nest", "wrap")))
        if kind == "odd":
            obj = _replace(obj, path, draw(st.sampled_from(ODD_JSON)))
        elif kind == "drop" and path:
            parent = path[:-1]
            container = obj
            for key in parent:
                container = container[key]
            container = dict(container) if isinstance(container, dict) else list(container)
            del container[path[-1]]
            obj = _replace(obj, parent, container)
        elif kind == "nest":
            obj = _replace(obj, path, _nested(draw(st.sampled_from((50, 2000, 100000)))))
        elif kind == "wrap":
            current = obj
            for key in path:
                current = current[key]
            obj = _replace(obj, path, [current] if draw(st.booleans()) else {"value": current})
    return obj


def json_text(obj):
    """JSON text of a mutated document as a tool would print it (NaN/Infinity allowed, as Python's json writes)."""
    try:
        return json.dumps(obj)
    except (RecursionError, ValueError):
        return "[" * 100000 + "]" * 100000


@st.composite
def json_text_mutations(draw, text):
    """Either a type-level damage of the parsed document or a text-level damage of the raw JSON."""
    if draw(st.booleans()):
        return json_text(draw(json_mutations(json.loads(text))))
    return draw(text_mutations(text))


def _finite(value, where="result"):
    """Facts never carry a non-finite float: the judge and json.dumps(allow_nan=False) must see numbers or null."""
    if isinstance(value, float):
        assert math.isfinite(value), "%s: non-finite float %r in facts" % (where, value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _finite(item, "%s.%s" % (where, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _finite(item, "%s[%d]" % (where, index))


def assert_total(name, func, *args, allowed=(ZhisuanError,), finite=True, **kwargs):
    """Call ``func`` and assert it is total: it returns or raises one of ``allowed``, within HANG_SECONDS.

    Returns ``(result, error)``: exactly one of them is not None. With ``finite`` the result must not hold a
    NaN or infinite float anywhere.
    """
    CASES["run"] += 1
    started = time.monotonic()
    result = error = None
    try:
        result = func(*args, **kwargs)
    except allowed as exc:  # the typed error a parser is allowed to raise
        error = exc
        assert str(exc), "%s raised %s with no message" % (name, type(exc).__name__)
    elapsed = time.monotonic() - started
    assert elapsed < HANG_SECONDS, "%s took %.1f s (a hang)" % (name, elapsed)
    if error is None and finite:
        _finite(result, name)
    return result, error


class CollectModule(object):
    """What a collect function uses of an AnsibleModule (params, check_mode, warn), for feeding it a real tool's
    damaged output through the real runner. ``fail_json`` is the module edge's: a collect path never reaches it
    on a tool's output, so it fails the test."""

    check_mode = False

    def __init__(self, params):
        self.params = params
        self.warnings = []

    def warn(self, msg):
        self.warnings.append(msg)

    def fail_json(self, **kwargs):
        raise AssertionError("fail_json(%r) on a tool's output" % (kwargs,))


def capped(value, depth=0):
    """Mutated facts with a subtree nested deeper than any parser returns (JSON readers stop at 64 levels) cut to one
    damaged value: facts never come deeper, and hypothesis cannot print a 100000-level example."""
    if depth > 60:
        return [0]
    if isinstance(value, dict):
        return dict((key, capped(item, depth + 1)) for key, item in value.items())
    if isinstance(value, list):
        return [capped(item, depth + 1) for item in value]
    return value


def statuses(checks):
    """The set of statuses of a list of check records."""
    return {check["status"] for check in checks}


def assert_not_all_pass(name, checks):
    """Damaged or empty input must never be judged healthy: at least one check is not a pass."""
    assert checks, "%s: no check at all" % name
    assert statuses(checks) != {"pass"}, "%s: every check passed on damaged input" % name


def _retyped(value):
    """The values of another type that a fact cache, a templated variable or an older module hands back for
    ``value``: a string where a list or a number is, a list where a mapping is, None, numbers as strings, ..."""
    choices = [None]
    if isinstance(value, bool):
        choices += [str(value), str(value).lower(), int(value), [value]]
    elif isinstance(value, (int, float)):
        choices += [str(value), "%s " % value, [value], {"value": value}, bool(value)]
    elif isinstance(value, str):
        choices += [[value], {"value": value}, len(value), value.split(), value.encode("utf-8", "replace").hex()[:40]]
    elif isinstance(value, list):
        choices += [json.dumps(value, default=str), ", ".join(str(item) for item in value),
                    dict((str(index), item) for index, item in enumerate(value)), value[0] if value else {}, len(value)]
    elif isinstance(value, dict):
        choices += [list(value.values()), [[key, item] for key, item in value.items()], json.dumps(value, default=str),
                    list(value), str(value)]
    return choices


@st.composite
def type_mutations(draw, obj):
    """A copy of real facts with one to three values (the whole document included) turned into another type: what
    the judge may be handed instead of a module's fresh result."""
    rounds = draw(st.integers(min_value=1, max_value=3))
    for _ in range(rounds):
        path = draw(st.sampled_from(list(_paths(obj))))
        current = obj
        for key in path:
            current = current[key]
        obj = _replace(obj, path, draw(st.sampled_from(_retyped(current))))
    return obj
