# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The asset list (delivery guide §6.2: asset list and rack U-position map) from ``results.json`` and inventory.

Pure: ``asset_rows(results, hostvars)`` builds one row per host of the run; ``to_csv(rows)`` renders them.

Columns (ASSET_COLUMNS), each empty when unknown:

``node``            inventory_hostname
``rack``, ``u``     inventory vars ``zhisuan_rack`` and ``zhisuan_u`` (the rack and the lowest U the node occupies)
``status``          the host's status in the run (pass, warn, fail, error, unreachable)
``manufacturer``, ``model``, ``serial``  the system as the BMC reports it (``facts.bmc``, from ``summarize_bmc``)
``bmc_address``     inventory ``bmc_address``, else the address the BMC facts were read from
``bios_version``, ``bmc_firmware``       ``facts.bmc``; else ``facts.baseline.versions`` (bios, bmc)
``cpld_firmware``, ``gpu_vbios``, ``nic_firmware``, ``psu_firmware``  ``facts.baseline.versions`` (from
                    ``summarize_baseline``: one version, or ``mixed (a, b)``)
``gpu_model``, ``gpu_count``, ``driver_version``  ``facts.gpu`` (the GPU family's summary)

Rows are sorted by rack, then U (numerically), then node name (numbers in names compared as numbers).
"""

from __future__ import annotations

import csv
import io
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key

ASSET_COLUMNS = (
    "node", "rack", "u", "status", "manufacturer", "model", "serial", "bmc_address", "bios_version", "bmc_firmware",
    "cpld_firmware", "gpu_vbios", "nic_firmware", "psu_firmware", "gpu_model", "gpu_count", "driver_version",
)
_VERSION_COLUMNS = (("cpld_firmware", "cpld"), ("gpu_vbios", "gpu_vbios"), ("nic_firmware", "nic_firmware"),
                    ("psu_firmware", "psu_firmware"))


def _text(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _u_key(value):
    text = _text(value).strip()
    return (0, float(text), "") if re.match(r"^\d+(\.\d+)?$", text) else (1, 0.0, text)


def asset_rows(results, hostvars):
    """One dict per host of ``results["hosts"]`` (and per inventory host of ``hostvars`` that the run did not
    reach), keyed by ASSET_COLUMNS. ``hostvars`` maps host -> the vars used: ``zhisuan_rack``, ``zhisuan_u``,
    ``bmc_address``. Neither argument is modified."""
    hosts = dict((results or {}).get("hosts") or {})
    hostvars = hostvars or {}
    rows = []
    for name in set(hosts) | set(hostvars):
        record = hosts.get(name) or {}
        facts = record.get("facts") or {}
        bmc = facts.get("bmc") or {}
        gpu = facts.get("gpu") or {}
        versions = (facts.get("baseline") or {}).get("versions") or {}
        inv = hostvars.get(name) or {}
        row = {
            "node": name,
            "rack": inv.get("zhisuan_rack"),
            "u": inv.get("zhisuan_u"),
            "status": record.get("status") if record else "not run",
            "manufacturer": bmc.get("manufacturer"),
            "model": bmc.get("model"),
            "serial": bmc.get("serial"),
            "bmc_address": inv.get("bmc_address") or bmc.get("address"),
            "bios_version": bmc.get("bios_version") or versions.get("bios"),
            "bmc_firmware": bmc.get("bmc_firmware") or versions.get("bmc"),
            "gpu_model": gpu.get("model"),
            "gpu_count": gpu.get("count"),
            "driver_version": gpu.get("driver_version") or versions.get("driver"),
        }
        for column, key in _VERSION_COLUMNS:
            row[column] = versions.get(key)
        rows.append(dict((column, _text(row.get(column))) for column in ASSET_COLUMNS))
    rows.sort(key=lambda row: (row["rack"] == "", row["rack"], _u_key(row["u"]), natural_key(row["node"])))
    return rows


def _cell(value):
    """A CSV cell a spreadsheet will not run as a formula (a leading =, +, @, tab or a non-numeric - gets a ')."""
    if value[:1] in ("=", "+", "@", "\t", "\r") or (value[:1] == "-" and not re.match(r"^-\d+(\.\d+)?$", value)):
        return "'" + value
    return value


def to_csv(rows, columns=ASSET_COLUMNS):
    """CSV text (header row first, ``\\n`` line ends) of ``rows``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(columns))
    for row in rows:
        writer.writerow([_cell(_text(row.get(column))) for column in columns])
    return out.getvalue()
