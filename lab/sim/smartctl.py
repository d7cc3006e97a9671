#!/usr/bin/env python3
"""Lab stand-in for ``smartctl -j -a /dev/nvmeN`` (smartmontools 7.x JSON) on one simulated node.

It replays the REAL captured report of a healthy Micron 7450 NVMe drive
(tests/fixtures/smartctl/nvme-null-Micron_7450_MTFDKCC3T8TFR-nvme11.json, prometheus-community/smartctl_exporter's
test data) for whichever NVMe device it is asked about, and only edits values in it:

* ``device.name`` / ``device.info_name`` name the device asked for (byte-identical to the capture for /dev/nvme11);
* ``drive_critical_warning`` sets the log page's critical warning byte to ``bits`` and, as smartctl reports a drive
  with a warning (the SAMSUNG MZWLL3T2HAJQ capture beside it), ``smart_status`` to ``passed: false`` with the byte and
  one boolean per bit, and bit 3 ("disk failing") in ``smartctl.exit_status``;
* ``drive_media_errors``, ``drive_wear``, ``drive_spare`` and ``drive_temperature`` set ``media_errors``,
  ``percentage_used``, ``available_spare`` and ``temperature`` of the log page.

Every fault names its ``device`` (default ``/dev/nvme0``). Invoked through the per-node wrapper written by
``lab/labctl.py up``::

    smartctl.py --state /abs/nodes/<node>/state.json -j -a /dev/nvme0

Standard library only: the wrapper runs this file with ``python -I -S``.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import FIXTURES_DIR, json_loads, own_faults, run_sim, split_argv, unsupported  # noqa: E402

TOOLS = ("smartctl",)
CAPTURE = os.path.join(FIXTURES_DIR, "smartctl", "nvme-null-Micron_7450_MTFDKCC3T8TFR-nvme11.json")
_DEVICE = (str, "/dev/nvme0")
# Fault catalog: kind -> {param: type}. `hang` (tool smartctl) and `unreachable` are generic (lab/sim/_common.py).
FAULT_KINDS = {
    "drive_critical_warning": {"device": _DEVICE, "bits": int},
    "drive_media_errors": {"device": _DEVICE, "count": int},
    "drive_wear": {"device": _DEVICE, "percent": int},
    "drive_spare": {"device": _DEVICE, "percent": int},
    "drive_temperature": {"device": _DEVICE, "celsius": int},
}
_LOG_FIELD = {"drive_media_errors": ("media_errors", "count"), "drive_wear": ("percentage_used", "percent"),
              "drive_spare": ("available_spare", "percent"), "drive_temperature": ("temperature", "celsius")}
# smartctl's names of the critical warning bits (bit 0 first) and the "disk failing" exit status bit
_BITS = ("spare_below_threshold", "temperature_above_or_below_threshold", "reliability_degraded",
         "media_read_only", "volatile_memory_backup_failed", "persistent_memory_region_unreliable")
_FAILING = 8


def render(state, device):
    import json
    with open(CAPTURE, encoding="utf-8") as fh:
        report = json_loads(fh.read())
    report["device"]["info_name"] = report["device"]["name"] = device
    log = report["nvme_smart_health_information_log"]
    for fault in own_faults(state, FAULT_KINDS):
        if fault["device"] != device:
            continue
        if fault["kind"] == "drive_critical_warning":
            bits = fault["bits"] & 0xff
            log["critical_warning"] = bits
            nvme = {"value": bits, "other": 0}
            nvme.update((name, bool(bits & (1 << bit))) for bit, name in enumerate(_BITS))
            report["smart_status"] = {"nvme": dict(sorted(nvme.items())), "passed": not bits}
            if bits:
                report["smartctl"]["exit_status"] |= _FAILING
        else:
            field, param = _LOG_FIELD[fault["kind"]]
            log[field] = fault[param]
    return json.dumps(report, indent="\t")


def main(argv=None):
    state_path, args = split_argv(argv, "smartctl")
    if len(args) != 3 or args[:2] != ["-j", "-a"] or not args[2].startswith("/dev/nvme"):
        return unsupported("smartctl", args, "only -j -a /dev/nvmeN")
    return run_sim("smartctl", state_path, lambda state: render(state, args[2]))


if __name__ == "__main__":
    sys.exit(main())
