# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Parser of ``nvidia-smi topo -m``: the GPU/NIC connection matrix, CPU and NUMA affinity, and the NIC legend.

Pure: text in, facts out (see ``parse_topo``). It reads what drivers print:

* tab-separated output (the driver's own) and the same table re-spaced by a copy/paste (spaces only);
* the header underlined with terminal escape codes (``ESC[4m`` ... ``ESC[0m``), which recent drivers print
  whether or not stdout is a terminal;
* NIC columns named ``NIC0``.. with a ``NIC Legend:`` (``NIC0: mlx5_0``), or named after the device (``mlx5_0``,
  older drivers);
* an empty affinity field (the driver prints ``\\t\\t`` when the CPU affinity is unknown), and the empty field the
  driver prints between ``NUMA Affinity`` and ``GPU NUMA ID``.
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ParseError

TOOL = "nvidia-smi topo"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TRAILING = re.compile(r"CPU Affinity|NUMA Affinity|GPU NUMA ID")
_TRAILING_KEYS = {"CPU Affinity": "cpu_affinity", "NUMA Affinity": "numa_affinity", "GPU NUMA ID": "gpu_numa_id"}
_LEGEND_NIC = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")
_GPU = re.compile(r"^GPU([0-9]{1,4})$")
# X (self), NV# (NVLink bond), the PCIe path classes, and SOC (older drivers' name for SYS).
KNOWN_LINKS = re.compile(r"^(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)$")


def _clean(text):
    return _ANSI.sub("", text).replace("\r", "")


def _find_header(lines):
    """Index of the header line: the first line (before the legend) that names GPU0 and is not a row.

    The driver indents the header (a tab, after the escape codes); a row starts with its label, followed by the
    diagonal ``X`` for GPU0's own row."""
    for number, line in enumerate(lines):
        if line.strip().startswith("Legend"):
            break
        names = line.split()
        if "GPU0" not in names:
            continue
        if line[:1] in ("\t", " ") or len(names) < 2 or names[1] != "X":
            return number
    return None


def _header_names(line):
    """(device column names, trailing column keys) of the header line."""
    cut = _TRAILING.search(line)
    head = line[:cut.start()] if cut else line
    devices = head.replace("\t", " ").split()
    trailing = [_TRAILING_KEYS[name] for name in _TRAILING.findall(line[cut.start():])] if cut else []
    return devices, trailing


def _split_row(line, count, trailing, tabbed):
    """(label, cells, trailing values) of one matrix row."""
    if tabbed:
        fields = line.split("\t")
        label = fields[0].strip()
        cells = [field.strip() for field in fields[1:1 + count]]
        rest = [field.strip() for field in fields[1 + count:]]
        # The driver prints an empty field before "GPU NUMA ID" (and NIC rows end in empty fields): drop empty
        # fields from the right until the row has no more values than the header has trailing columns.
        while len(rest) > len(trailing) and "" in rest:
            del rest[len(rest) - 1 - rest[::-1].index("")]
        rest = rest + [""] * (len(trailing) - len(rest))
    else:
        tokens = line.split()
        label = tokens[0] if tokens else ""
        cells = tokens[1:1 + count]
        rest = tokens[1 + count:]
        if rest and len(rest) < len(trailing):
            # a re-spaced table loses empty fields: the value missing is the leftmost (CPU affinity)
            rest = [""] * (len(trailing) - len(rest)) + rest
        rest = rest + [""] * (len(trailing) - len(rest))
    return label, cells, rest


def _affinity_value(key, text):
    text = text.strip()
    if text in ("", "N/A"):
        return None
    if key in ("numa_affinity", "gpu_numa_id"):
        # a NUMA node is a number; anything else the driver never prints for one is unreadable (None)
        return int(text) if re.match(r"^[0-9]{1,6}$", text) else None
    return text


def _legend(lines, start):
    legend = {}
    for line in lines[start:]:
        match = _LEGEND_NIC.match(line)
        if match:
            legend[match.group(1)] = match.group(2)
    return legend


def parse_topo(text, warn=None):
    """Facts of one ``nvidia-smi topo -m`` output::

        {"devices": ["GPU0", "GPU1", "NIC0"],            # the matrix columns, in order
         "gpus": [{"name": "GPU0", "index": 0, "cpu_affinity": "0-47,96-143", "numa_affinity": 0, "gpu_numa_id": None}],
         "nics": [{"name": "NIC0", "device": "mlx5_0"}],  # device: from the NIC legend (the column name when none)
         "matrix": {"GPU0": {"GPU0": "X", "GPU1": "NV18", "NIC0": "PIX"}, ...}}

    Raises ParseError (tool ``nvidia-smi topo``) when there is no matrix, a row has the wrong number of cells or a
    device of the header has no row. An unknown link word is kept as printed and reported through ``warn``.
    """
    if text is None or not text.strip():
        raise ParseError(TOOL, "empty output")
    lines = _clean(text).split("\n")
    header_at = _find_header(lines)
    if header_at is None:
        raise ParseError(TOOL, "no matrix header (a line naming GPU0 as a column) in the output")
    devices, trailing = _header_names(lines[header_at])
    if len(set(devices)) != len(devices):
        raise ParseError(TOOL, "duplicate column names in the header: %s" % " ".join(devices))
    tabbed = "\t" in lines[header_at]
    matrix = {}
    affinity = {}
    legend_at = len(lines)
    for number in range(header_at + 1, len(lines)):
        line = lines[number]
        if line.strip().startswith("Legend"):
            legend_at = number
            break
        if not line.strip():
            continue
        label, cells, rest = _split_row(line, len(devices), trailing, tabbed and "\t" in line)
        if label not in devices:
            raise ParseError(TOOL, "line %d: row %r is not a column of the header (%s)" % (number + 1, label, " ".join(devices)))
        if label in matrix:
            raise ParseError(TOOL, "line %d: second row for %s" % (number + 1, label))
        if len(cells) != len(devices) or any(cell == "" for cell in cells):
            raise ParseError(TOOL, "line %d: row %s has %d link cells, the header has %d columns"
                             % (number + 1, label, len([cell for cell in cells if cell]), len(devices)))
        row = {}
        for column, cell in zip(devices, cells):
            if not KNOWN_LINKS.match(cell) and warn is not None:
                warn("nvidia-smi topo: unknown link %r between %s and %s; kept as printed, please report" % (cell, label, column))
            row[column] = cell
        if row[label] != "X":
            raise ParseError(TOOL, "line %d: row %s does not have X on the diagonal (%r)" % (number + 1, label, row[label]))
        matrix[label] = row
        affinity[label] = dict((key, _affinity_value(key, value)) for key, value in zip(trailing, rest))
    missing = [name for name in devices if name not in matrix]
    if missing:
        raise ParseError(TOOL, "no row for %s" % ", ".join(missing))
    legend = _legend(lines, legend_at)
    gpus = []
    nics = []
    for name in devices:
        match = _GPU.match(name)
        if match:
            record = {"name": name, "index": int(match.group(1))}
            for key in ("cpu_affinity", "numa_affinity", "gpu_numa_id"):
                record[key] = affinity[name].get(key)
            gpus.append(record)
        else:
            nics.append({"name": name, "device": legend.get(name, name)})
    return {"devices": devices, "gpus": gpus, "nics": nics, "matrix": matrix}
