# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Baseline judgement rules: firmware and software versions against the site baseline (``zhisuan_baseline``),
drift of a version across the fleet, and BIOS attributes against their baseline (delivery guide §3.3, §5.2).

Pure functions, stdlib only.

Versions (``gather_versions``) are ``{key: [(label, version or None), ...]}`` with the keys
``bios``, ``bmc``, ``cpld``, ``gpu_vbios``, ``nic_firmware``, ``psu_firmware``, ``drive_firmware`` (BMC firmware
inventory), ``driver``, ``cuda``, ``gpu_vbios`` (in-band GPU facts win over the BMC's view), ``nccl``, ``ofed``,
``fabric_manager``, ``dcgm``, ``kernel`` (host_info software). A version ``None`` means "looked, not installed".

A baseline entry (``zhisuan_baseline.<key>``) is a version (``"1.8.2"``; ``"535"`` also accepts ``535.161.08``),
a list of accepted versions, or a regular expression (``{regex: "^96\\\\.00\\\\."}`` or ``"regex:^96\\\\.00\\\\."``).
Quote versions in YAML: an unquoted ``23.10`` is the number 23.1.
"""

from __future__ import annotations

import fnmatch
import re

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _firmware_classes
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._readings import items, mapping, text
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import version_matches

FIRMWARE_KEYS = {"bios": "bios", "bmc": "bmc", "cpld": "cpld", "gpu": "gpu_vbios", "nic": "nic_firmware",
                 "psu": "psu_firmware", "drive": "drive_firmware", "gpu_baseboard": "gpu_baseboard",
                 "pcie_switch": "pcie_switch"}
SOFTWARE_KEYS = ("nccl", "ofed", "fabric_manager", "dcgm", "kernel")
NAMES = {
    "bios": "BIOS", "bmc": "BMC firmware", "cpld": "CPLD firmware", "gpu_vbios": "GPU VBIOS",
    "nic_firmware": "NIC firmware", "psu_firmware": "PSU firmware", "drive_firmware": "drive firmware",
    "gpu_baseboard": "GPU baseboard firmware", "pcie_switch": "PCIe switch firmware",
    "driver": "NVIDIA driver", "cuda": "CUDA", "nccl": "NCCL", "ofed": "MLNX_OFED/DOCA-OFED",
    "fabric_manager": "Fabric Manager", "dcgm": "DCGM", "kernel": "kernel",
}
_ENABLED = frozenset(("enabled", "enable", "true", "on", "yes", "1"))
_DISABLED = frozenset(("disabled", "disable", "false", "off", "no", "0"))


def _name(key):
    return NAMES.get(key, key)


def _slug(key):
    return re.sub(r"[^a-z0-9_]+", "_", str(key).lower()).strip("_") or "attribute"


def _entries(value, key):
    """A versions value (str, list of str, {label: version}, [(label, version)]) as [(label, version)]."""
    if value is None or isinstance(value, (str, int, float)):
        return [(key, None if value is None else str(value))]
    if isinstance(value, dict):
        return [(str(label), None if version is None else str(version)) for label, version in value.items()]
    entries = []
    for position, item in enumerate(value):
        if isinstance(item, (list, tuple)) and len(item) == 2:
            entries.append((str(item[0]), None if item[1] is None else str(item[1])))
        else:
            entries.append(("%s %d" % (key, position), None if item is None else str(item)))
    return entries


# Where each firmware key is looked for, for the error when it is found nowhere.
LOOKED = {
    "bios": "the BMC firmware inventory (items the firmware table classes as bios) and the ComputerSystem's BiosVersion",
    "bmc": "the BMC firmware inventory (items classed as bmc) and the Manager's FirmwareVersion",
}


def _part_names(bmc):
    """``{part id: its name and model}`` of the PCIe devices, network adapters and drives of the ``bmc`` facts: what a
    firmware item's ``RelatedItem`` (Lenovo XCC ``Slot_27.1`` -> ``PCIeDevices/slot_27``) names."""
    names = {}
    for key in ("pcie_devices", "nics", "drives"):
        for part in items(mapping(bmc).get(key)):
            if isinstance(part, dict) and text(part.get("id")):
                names[part["id"]] = " ".join(value for value in (text(part.get("name")), text(part.get("model"))) if value)
    return names


def _firmware_label(item, key):
    return str(item.get("name") or item.get("id") or key)


def gather_versions(firmware=None, gpu_facts=None, software=None, bmc=None, classes=None, vendor=None):
    """Versions from the BMC firmware inventory, the ``gpu`` facts and the ``host.software`` facts.

    With ``classes`` (``_firmware_classes.compile_table`` of data/firmware_classes.yml) each inventory item is
    classed by the table (``vendor``'s rules first; pending, backup and other inactive images give no version),
    else by the ``component`` the collector gave it. With the ``bmc`` facts, a BIOS or BMC version the inventory
    does not give is read from ``system.bios_version`` (each of ``systems`` where the BMC has several) and
    ``manager.firmware_version``."""
    versions = {}
    parts = _part_names(bmc)
    for item in items(firmware):
        if not isinstance(item, dict):
            continue
        if classes is not None:
            related = [parts.get(str(uri).rstrip("/").rsplit("/", 1)[-1]) for uri in items(item.get("related"))]
            component = _firmware_classes.classify(item, classes, vendor, related=[name for name in related if name])
        else:
            component = item.get("component") if isinstance(item.get("component"), str) else None
        key = FIRMWARE_KEYS.get(component)
        if key is None or not isinstance(item.get("version"), (str, int, float)) or item.get("version") == "":
            continue
        versions.setdefault(key, []).append((_firmware_label(item, key), str(item["version"])))
    bmc = mapping(bmc)
    if bmc and "bios" not in versions:
        systems = [system for system in items(bmc.get("systems")) if isinstance(system, dict)] or [mapping(bmc.get("system"))]
        found = [("System.BiosVersion" + (" (%s)" % system.get("id") if len(systems) > 1 else ""),
                  text(system.get("bios_version"))) for system in systems if text(system.get("bios_version"))]
        if found:
            versions["bios"] = found
    if bmc and "bmc" not in versions and text(mapping(bmc.get("manager")).get("firmware_version")):
        versions["bmc"] = [("Manager.FirmwareVersion", text(mapping(bmc.get("manager")).get("firmware_version")))]
    gpu_facts = mapping(gpu_facts)
    gpus = [gpu for gpu in items(gpu_facts.get("gpus")) if isinstance(gpu, dict)]
    vbios = [("GPU %s" % gpu.get("index", position), text(gpu.get("vbios_version"))) for position, gpu in enumerate(gpus)
             if text(gpu.get("vbios_version"))]
    if vbios:
        versions["gpu_vbios"] = vbios
    software = mapping(software)
    driver = text(gpu_facts.get("driver_version")) or text(software.get("nvidia_driver"))
    if gpu_facts or "nvidia_driver" in software:
        versions["driver"] = [("driver", driver)]
    if gpu_facts:
        versions["cuda"] = [("cuda", text(gpu_facts.get("cuda_version")))]
    for key in SOFTWARE_KEYS:
        if key in software:
            versions[key] = [(key, text(software.get(key)))]
    return versions


def firmware_health(host, firmware):
    """``baseline.firmware.health``: a warning per firmware inventory item whose ``Status.Health`` is not OK (Cray EX
    ``Node0.ManagementEthernet`` Warning, UnavailableOffline: the part's firmware cannot be read or is not running)."""
    checks = []
    for item in items(firmware):
        if not isinstance(item, dict) or item.get("health") not in ("Warning", "Critical"):
            continue
        name = _firmware_label(item, "firmware")
        ident = text(item.get("id"))
        if ident and ident != name:
            name = "%s (%s)" % (name, ident)
        state = text(item.get("state"))
        checks.append(make_check(
            "baseline.firmware.health", host, "warn", component=name, observed="%s%s" % (
                item["health"], ", %s" % state if state else ""), expected="OK",
            remedy="investigate", evidence="version=%s" % (item.get("version") or "none"),
            message="The BMC reports the firmware of %s as %s%s: the part's firmware is not in service; look at the "
                    "part before the versions are trusted" % (name, item["health"], " (%s)" % state if state else "")))
    return checks


def _search(pattern, version):
    try:
        return re.search(pattern, version) is not None
    except re.error as exc:
        raise ValueError("baseline regex %r does not compile: %s" % (pattern, exc))


def accepts(spec, version):
    """Whether ``version`` is one the baseline entry ``spec`` accepts (see the module docstring)."""
    if version is None:
        return False
    if isinstance(spec, (list, tuple)):
        return any(accepts(item, version) for item in spec)
    if isinstance(spec, dict):
        if "regex" not in spec:
            raise ValueError("a baseline entry given as a mapping needs a 'regex' key, got %r" % (spec,))
        return _search(str(spec["regex"]), version)
    text = str(spec).strip()
    if text.startswith("regex:"):
        return _search(text[len("regex:"):], version)
    return version_matches(version, text)


def _spec_text(spec):
    if isinstance(spec, (list, tuple)):
        return " or ".join(_spec_text(item) for item in spec)
    if isinstance(spec, dict):
        return "/%s/" % spec.get("regex")
    text = str(spec)
    return "/%s/" % text[len("regex:"):] if text.startswith("regex:") else text


def judge_baseline(host, versions, baseline, thresholds=None):
    """One ``baseline.<key>.version`` check per key of ``baseline`` (in the order given). ``thresholds`` is accepted
    for symmetry with the other families."""
    checks = []
    versions = versions or {}
    for key, spec in (baseline or {}).items():
        check_id = "baseline.%s.version" % _slug(key)
        name = _name(key)
        want = _spec_text(spec)
        if key not in versions:
            checks.append(make_check(check_id, host, "error", component=name, observed=None, expected=want,
                                     remedy="investigate",
                                     message="The %s version was not collected (not reported by the BMC, or its "
                                             "collect task did not run), so it cannot be compared with %s%s"
                                             % (name, want, "; looked in %s" % LOOKED[key] if key in LOOKED else "")))
            continue
        entries = _entries(versions[key], key)
        evidence = ", ".join("%s=%s" % (label, version or "not installed") for label, version in entries)
        if all(version is None for _label, version in entries):
            checks.append(make_check(check_id, host, "fail", component=name, observed="not installed", expected=want,
                                     remedy="update_firmware", evidence=evidence,
                                     message="%s is not installed on the node; the baseline is %s" % (name, want)))
            continue
        wrong = [(label, version) for label, version in entries if not accepts(spec, version)]
        observed = sorted(set(version or "not installed" for _label, version in entries))
        if not wrong:
            checks.append(make_check(check_id, host, "pass", component=name, observed=", ".join(observed), expected=want,
                                     message="%s %s matches the baseline %s" % (name, ", ".join(observed), want),
                                     evidence=evidence))
            continue
        if len(entries) == 1:
            message = "%s is %s but the baseline is %s: bring it to the baseline" % (name, wrong[0][1] or "not installed", want)
        else:
            message = "%d of %d %s entries are off the baseline %s: %s" % (
                len(wrong), len(entries), name, want,
                ", ".join("%s %s" % (label, version or "not installed") for label, version in wrong))
        checks.append(make_check(check_id, host, "fail", component=name, observed=", ".join(observed), expected=want,
                                 remedy="update_firmware", message=message, evidence=evidence))
    fabric_manager = _fabric_manager_check(host, versions)
    if fabric_manager is not None:
        checks.append(fabric_manager)
    return checks


def _fabric_manager_check(host, versions):
    """``baseline.fabric_manager.driver``: the Fabric Manager installed on an NVSwitch node must be the driver's own
    version (NVIDIA's Fabric Manager user guide; FM refuses to start with another driver, the NVLink fabric stays
    uninitialised and CUDA fails with error 802). Judged whatever the baseline says, only where both were read."""
    driver = [version for _label, version in _entries(versions.get("driver"), "driver") if version]
    fm = [version for _label, version in _entries(versions.get("fabric_manager"), "fabric_manager") if version]
    if not driver or not fm or "driver" not in versions or "fabric_manager" not in versions:
        return None
    evidence = "driver=%s, fabric_manager=%s" % (driver[0], ", ".join(fm))
    wrong = [version for version in fm if version != driver[0]]
    if wrong:
        return make_check("baseline.fabric_manager.driver", host, "fail", component="Fabric Manager",
                          observed=", ".join(fm), expected="== %s (the driver)" % driver[0], remedy="update_firmware",
                          evidence=evidence,
                          message="Fabric Manager %s does not match the NVIDIA driver %s: it will not start, and the "
                                  "NVLink fabric stays down (CUDA error 802); install the Fabric Manager of the "
                                  "driver's version" % (", ".join(wrong), driver[0]))
    return make_check("baseline.fabric_manager.driver", host, "pass", component="Fabric Manager", observed=fm[0],
                      expected="== %s (the driver)" % driver[0], evidence=evidence,
                      message="Fabric Manager %s matches the NVIDIA driver" % fm[0])


def _host_value(entries):
    found = sorted(set(version for _label, version in entries if version is not None))
    if not found:
        return None
    return found[0] if len(found) == 1 else "mixed (%s)" % ", ".join(found)


def summarize_baseline(versions):
    """The report's facts for the host's versions: ``{"versions": {key: version, or "mixed (a, b)"}}``, the shape
    the asset list and the baseline table read."""
    result = {}
    for key, value in (versions or {}).items():
        result[key] = _host_value(_entries(value, key))
    return {"versions": result}


def judge_fleet_baseline(hosts_versions):
    """Cluster checks ``baseline.<key>.drift`` (host ``cluster``): every node should run one version of each
    component. ``hosts_versions`` is ``{host: versions}``; a node without a component (or without it installed) is
    left out of that component's comparison. Drift names each node and its version."""
    by_key = {}
    for host in sorted(hosts_versions or {}):
        for key, value in (hosts_versions[host] or {}).items():
            version = _host_value(_entries(value, key))
            if version is not None:
                by_key.setdefault(key, {})[host] = version
    checks = []
    for key in sorted(by_key):
        per_host = by_key[key]
        groups = {}
        for host, version in per_host.items():
            groups.setdefault(version, []).append(host)
        name = _name(key)
        check_id = "baseline.%s.drift" % _slug(key)
        evidence = ", ".join("%s=%s" % (host, per_host[host]) for host in sorted(per_host))
        if len(groups) == 1:
            version = list(groups)[0]
            checks.append(make_check(check_id, "cluster", "pass", component=name, observed=version,
                                     expected="one version on every node",
                                     message="All %d nodes run %s %s" % (len(per_host), name, version), evidence=evidence))
            continue
        ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
        parts = []
        for version, hosts in ordered:
            where = ("%d nodes" % len(hosts)) if (version == ordered[0][0] and len(hosts) > 3) else ", ".join(hosts)
            parts.append("%s on %s" % (version, where))
        checks.append(make_check(check_id, "cluster", "fail", component=name,
                                 observed="%d versions" % len(groups), expected="one version on every node",
                                 remedy="update_firmware", evidence=evidence,
                                 message="%s differs across nodes: %s" % (name, "; ".join(parts))))
    return checks


def bios_names(table, vendor):
    """The portable-name -> vendor attribute names mapping for ``vendor`` from the loaded ``data/bios_attributes.yml``
    (its ``vendors`` section), falling back to ``generic``."""
    vendors = (table or {}).get("vendors") or {}
    return dict(vendors.get(vendor) or vendors.get("generic") or {})


def _bios_accepts(want, value):
    if isinstance(want, (list, tuple)):
        return any(_bios_accepts(item, value) for item in want)
    text = str(value).strip().lower()
    if isinstance(want, bool):
        return text in (_ENABLED if want else _DISABLED)
    return text == str(want).strip().lower()


def _want_text(want):
    if isinstance(want, (list, tuple)):
        return " or ".join(_want_text(item) for item in want)
    if isinstance(want, bool):
        return "enabled" if want else "disabled"
    return str(want)


def judge_bios(host, attributes, expected_attributes, vendor_names=None):
    """One ``baseline.bios.<name>`` check per entry of ``expected_attributes`` (portable names such as
    ``above_4g_decoding`` looked up in ``vendor_names``, or the vendor's own attribute names). A vendor name may be
    a glob (``Socket*Pcie*AdvertiseACS``): every attribute it matches must have the value. ``true``/``false`` accept
    the vendors' spellings (Enabled/Enable/True/On ...)."""
    checks = []
    vendor_names = vendor_names or {}
    for key, want in (expected_attributes or {}).items():
        check_id = "baseline.bios.%s" % _slug(key)
        names = vendor_names.get(key) or [key]
        if isinstance(names, str):
            names = [names]
        component = "BIOS %s" % key
        if attributes is None:
            checks.append(make_check(check_id, host, "skip", component=component, expected=_want_text(want),
                                     message="The BIOS attributes were not collected"))
            continue
        matched = []
        for pattern in names:
            matched = [(name, attributes[name]) for name in sorted(attributes) if fnmatch.fnmatchcase(name, pattern)]
            if matched:
                break
        if not matched:
            checks.append(make_check(check_id, host, "skip", component=component, expected=_want_text(want),
                                     message="This BIOS has no attribute for %s (looked for %s)" % (key, ", ".join(names))))
            continue
        wrong = [(name, value) for name, value in matched if not _bios_accepts(want, value)]
        evidence = ", ".join("%s=%s" % (name, value) for name, value in matched[:16])
        if len(matched) > 16:
            evidence += " … %d more" % (len(matched) - 16)
        observed = ", ".join(sorted(set(str(value) for _attr, value in matched)))
        if wrong:
            checks.append(make_check(check_id, host, "fail", component=component, observed=observed,
                                     expected=_want_text(want), remedy="tune", evidence=evidence,
                                     message="BIOS %s is %s but the baseline wants %s: set %s as a pending BIOS setting "
                                             "and reboot" % (key, ", ".join("%s=%s" % item for item in wrong[:4]),
                                                             _want_text(want), wrong[0][0])))
        else:
            checks.append(make_check(check_id, host, "pass", component=component, observed=observed,
                                     expected=_want_text(want), evidence=evidence,
                                     message="BIOS %s is %s as the baseline wants" % (key, observed)))
    return checks
