# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``nvidia-smi -q -x`` XML or ``nvidia-smi -q`` text -> one neutral tree of :class:`Node`.

Both forms end up as the same shape: a root whose children are the header fields
(``timestamp``, ``driver_version``, ...) and one ``gpu`` node per GPU block (``ident`` = the bus id
printed in the block header). Every node's ``key`` is its label "slugged" (lower case, runs of
non-alphanumerics -> ``_``), so an XML tag and a text label that differ only in spelling collapse to
one key; real differences are resolved by the alias tables in ``nvidia_smi.py``.
"""

import re
import xml.etree.ElementTree as ET

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError

TOOL = "nvidia-smi"

_SLUG_RE = re.compile(r"[^0-9a-z]+")
# "    Label          : value" (the label never holds " :"; values may hold ":", e.g. bus ids, times)
_TEXT_FIELD_RE = re.compile(r"^(\S.*?)\s+:\s*(.*)$")
_GPU_HEADER_RE = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])$")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def slug(label):
    """``"GPU T.Limit Temp"`` -> ``"gpu_t_limit_temp"``; XML tags come out unchanged."""
    return _SLUG_RE.sub("_", label.lower()).strip("_")


class Node(object):
    """One field or section. ``value`` is the printed string (``None`` for a section header)."""

    __slots__ = ("key", "label", "value", "children", "ident", "line")

    def __init__(self, label, value=None, ident=None, line=0, key=None):
        self.label = label
        self.key = key if key is not None else slug(label)
        self.value = value
        self.children = []
        self.ident = ident
        self.line = line

    def child(self, key):
        for node in self.children:
            if node.key == key:
                return node
        return None

    def children_named(self, key):
        return [node for node in self.children if node.key == key]

    def at(self, path):
        """Follow a ``"section/sub/field"`` path of keys; ``None`` when any step is missing."""
        node = self
        for key in path.split("/"):
            node = node.child(key)
            if node is None:
                return None
        return node

    def __repr__(self):
        return "Node(%r, %r, %d children)" % (self.key, self.value, len(self.children))


def prepare(text):
    """Shared input checks: returns the text without a BOM or leading/trailing blank space."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if text is None or not text.strip():
        raise ParseError(TOOL, "empty output")
    text = text.lstrip("\ufeff").strip()
    if _CONTROL_RE.search(text):
        raise ParseError(TOOL, "output contains binary data (NUL or control bytes), not nvidia-smi -q text or XML")
    return text


def _from_element(elem):
    kids = list(elem)
    text = (elem.text or "").strip()
    node = Node(elem.tag, None if kids else text, ident=elem.get("id"))
    node.children = [_from_element(kid) for kid in kids]
    if kids and text:  # e.g. <mig_devices>None</mig_devices> never has children, but be safe
        node.value = text
    return node


def xml_tree(text):
    """Parse ``nvidia-smi -q -x`` output. Raises ParseError for malformed/truncated XML or a wrong root."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ParseError(TOOL, "XML output is malformed or truncated (%s)" % exc)
    except (ValueError, LookupError) as exc:
        raise ParseError(TOOL, "XML output cannot be decoded (%s)" % exc)
    if root.tag != "nvidia_smi_log":
        raise ParseError(TOOL, "XML root element is <%s>, expected <nvidia_smi_log>" % root.tag)
    return _from_element(root)


def text_tree(text, warn):
    """Parse ``nvidia-smi -q`` text by indentation. Odd lines are kept (and reported through ``warn``)."""
    root = Node("", key="")
    stack = [(-1, root)]
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip().expandtabs(4)
        stripped = line.lstrip(" ")
        if not stripped or (stripped.startswith("=") and "NVSMI LOG" in stripped):
            continue
        indent = len(line) - len(stripped)
        header = _GPU_HEADER_RE.match(stripped)
        if header and indent == 0:
            node = Node(stripped, ident=header.group(1), line=lineno, key="gpu")
        else:
            field = _TEXT_FIELD_RE.match(stripped)
            if field:
                node = Node(field.group(1), field.group(2).strip(), line=lineno)
            else:
                node = Node(stripped, line=lineno)
        while stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    _report_odd_lines(root, warn)
    return root


def _report_odd_lines(node, warn):
    for kid in node.children:
        if kid.value is None and not kid.children and kid.key != "gpu":
            warn("nvidia-smi: unexpected line %d %r (neither 'Label : value' nor a section); please report"
                 % (kid.line, kid.label[:80]))
        _report_odd_lines(kid, warn)


def warn_once(warn):
    """A ``warn`` callback that passes each distinct message on once (None: drop them)."""
    seen = set()

    def emit(msg):
        if warn is not None and msg not in seen:
            seen.add(msg)
            warn(msg)
    return emit
