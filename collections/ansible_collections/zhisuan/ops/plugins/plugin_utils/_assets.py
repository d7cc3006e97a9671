# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The asset list (delivery guide §6.2: asset list and rack U-position map) from ``results.json`` and inventory.

Pure: ``asset_rows(results, hostvars)`` builds one row per host of the run; ``component_rows(results)`` one row per
part; ``to_csv(rows, columns)`` renders them; ``serial_duplicate_check(hosts)`` is the cluster check
``assets.serial.duplicate``. Every value comes from the host facts the run's checks judged (the families'
summaries in ``results.json``), never from a second reading, so the list and the report cannot disagree.

``assets.csv`` columns (ASSET_COLUMNS, a stable header: new columns are only ever added at the end), each empty
when unknown:

``node``            inventory_hostname
``rack``, ``u``     inventory vars ``zhisuan_rack`` and ``zhisuan_u`` (the rack and the lowest U the node occupies)
``status``          the host's status in the run (pass, warn, fail, error, unreachable)
``manufacturer``, ``model``, ``serial``  the system as the BMC reports it (``facts.bmc``, from ``summarize_bmc``)
``bmc_address``     inventory ``bmc_address``, else the address the BMC facts were read from
``bios_version``, ``bmc_firmware``       what the baseline checks compared (``facts.baseline.versions``: the
                    firmware inventory first, as ``gather_versions`` reads it); else ``facts.bmc``
``cpld_firmware``, ``gpu_vbios``, ``nic_firmware``, ``psu_firmware``  ``facts.baseline.versions`` (from
                    ``summarize_baseline``: one version, or ``mixed (a, b)``)
``gpu_model``, ``gpu_count``  ``facts.gpu`` (nvidia-smi, the GPU family's summary); else the GPUs the BMC lists
                    (``facts.bmc.gpu_model``, ``gpu_count``)
``driver_version``  ``facts.gpu``; else ``facts.baseline.versions.driver``

``assets-components.csv`` columns (COMPONENT_COLUMNS): ``node`` and a part's ``kind``, ``slot``, ``manufacturer``,
``model``, ``part_number``, ``serial``, ``firmware``, ``extra_id`` (GPU UUID, MAC address, node GUID) and
``source`` (module_utils/_judge/_parts.py), from ``facts.gpu.devices`` (nvidia-smi), ``facts.bmc.parts``, ``facts.net.parts``
and ``facts.rdma.parts``; a GPU the BMC lists with the serial nvidia-smi gave is one row (nvidia-smi's).

Rows are sorted by rack, then U (numerically), then node name (numbers in names compared as numbers).
"""

from __future__ import annotations

import csv
import io
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._parts import placeholder_serial
from ansible_collections.zhisuan.ops.plugins.module_utils._text import natural_key

ASSET_COLUMNS = (
    "node", "rack", "u", "status", "manufacturer", "model", "serial", "bmc_address", "bios_version", "bmc_firmware",
    "cpld_firmware", "gpu_vbios", "nic_firmware", "psu_firmware", "gpu_model", "gpu_count", "driver_version",
)
COMPONENT_COLUMNS = ("node", "kind", "slot", "manufacturer", "model", "part_number", "serial", "firmware", "extra_id",
                     "source")
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
            # what the baseline checks compared (the firmware inventory before System.BiosVersion)
            "bios_version": versions.get("bios") or bmc.get("bios_version"),
            "bmc_firmware": versions.get("bmc") or bmc.get("bmc_firmware"),
            # nvidia-smi's GPUs when the GPU family ran, else the ones the BMC lists
            "gpu_model": gpu.get("model") if gpu else bmc.get("gpu_model"),
            "gpu_count": gpu.get("count") if gpu else bmc.get("gpu_count"),
            "driver_version": gpu.get("driver_version") or versions.get("driver"),
        }
        for column, key in _VERSION_COLUMNS:
            row[column] = versions.get(key)
        rows.append(dict((column, _text(row.get(column))) for column in ASSET_COLUMNS))
    rows.sort(key=lambda row: (row["rack"] == "", row["rack"], _u_key(row["u"]), natural_key(row["node"])))
    return rows


def _parts(facts):
    """A host's parts from its facts: nvidia-smi's GPUs, the BMC's parts (less the GPUs nvidia-smi already gave by
    serial), the NICs and optics, the RDMA devices."""
    facts = facts if isinstance(facts, dict) else {}

    def listed(key, sub):
        value = (facts.get(key) or {}).get(sub) if isinstance(facts.get(key), dict) else None
        return [part for part in value if isinstance(part, dict)] if isinstance(value, list) else []

    gpus = listed("gpu", "devices")
    in_band = set(_serial_key(part.get("serial")) for part in gpus if not placeholder_serial(part.get("serial")))
    bmc = [part for part in listed("bmc", "parts")
           if not (part.get("kind") == "gpu" and _serial_key(part.get("serial")) in in_band)]
    return gpus + bmc + listed("net", "parts") + listed("rdma", "parts")


def component_rows(results, order=None):
    """One dict per part of every host of ``results["hosts"]``, keyed by COMPONENT_COLUMNS; hosts in ``order``
    (a list of names, e.g. the asset rows' order), else by name."""
    hosts = dict((results or {}).get("hosts") or {})
    names = [name for name in (order or []) if name in hosts] or sorted(hosts, key=natural_key)
    rows = []
    for name in names:
        for part in _parts((hosts.get(name) or {}).get("facts")):
            row = dict(part, node=name)
            rows.append(dict((column, _text(row.get(column))) for column in COMPONENT_COLUMNS))
    return rows


def _serial_key(value):
    return re.sub(r"\s+", "", value).upper() if isinstance(value, str) else ""


def _where(name, part):
    what = " ".join(text for text in (part.get("kind"), part.get("slot")) if text)
    return "%s (%s)" % (name, what or "part")


_LISTED = 20  # serials named in the message and evidence; the rest are counted


def serial_duplicate_check(hosts):
    """The cluster check ``assets.serial.duplicate`` over ``{host: host record}``: a system serial (``facts.bmc``)
    or a part's serial (_parts) that more than one node reports. Placeholders (``_parts.placeholder_serial``) are
    no serial; a part seen twice on one node (the BMC and nvidia-smi, a drive under two collections) is one node."""
    seen = {}
    nodes = 0
    for name in sorted(hosts or {}, key=natural_key):
        record = (hosts or {}).get(name) or {}
        if record.get("status") == "unreachable":
            continue
        facts = record.get("facts") if isinstance(record.get("facts"), dict) else {}
        bmc = facts.get("bmc") if isinstance(facts.get("bmc"), dict) else {}
        found = [(bmc.get("serial"), "%s (system)" % name)]
        found += [(part.get("serial"), _where(name, part)) for part in _parts(facts)]
        counted = False
        for serial, where in found:
            if placeholder_serial(serial):
                continue
            entry = seen.setdefault(_serial_key(serial), {"serial": serial.strip(), "hosts": {}, "system": False})
            entry["hosts"].setdefault(name, where)
            entry["system"] = entry["system"] or where.endswith(" (system)")
            counted = True
        nodes += counted
    if not seen:
        return make_check("assets.serial.duplicate", "cluster", "skip", component="serial numbers",
                          expected="each serial number on one node",
                          message="No serial number was read: the run holds no BMC, GPU or NIC facts")
    shared = [seen[key] for key in sorted(seen) if len(seen[key]["hosts"]) > 1]
    if not shared:
        return make_check("assets.serial.duplicate", "cluster", "pass", component="serial numbers",
                          observed="0 shared", expected="each serial number on one node",
                          evidence="%d serial numbers on %d nodes" % (len(seen), nodes),
                          message="%d serial numbers read on %d nodes, none on more than one node" % (len(seen), nodes))
    # the nodes' own serials first, then by how many nodes share one
    shared.sort(key=lambda entry: (not entry["system"], -len(entry["hosts"]), entry["serial"]))
    parts = ["%s on %d nodes: %s" % (entry["serial"], len(entry["hosts"]),
                                     ", ".join(entry["hosts"][host] for host in sorted(entry["hosts"], key=natural_key)))
             for entry in shared[:_LISTED]]
    more = " (and %d more)" % (len(shared) - _LISTED) if len(shared) > _LISTED else ""
    return make_check("assets.serial.duplicate", "cluster", "fail", component="serial numbers",
                      observed="%d shared" % len(shared), expected="each serial number on one node",
                      remedy="investigate", evidence="; ".join(parts) + more,
                      message="%d serial number%s reported by more than one node (a FRU left unprogrammed or "
                              "copied, or a part recorded on the wrong node): %s%s; have the vendor program each "
                              "node's own serial before the asset list is handed over"
                              % (len(shared), "" if len(shared) == 1 else "s", "; ".join(parts[:5]),
                                 " (and %d more)" % (len(shared) - 5) if len(shared) > 5 else ""))


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
