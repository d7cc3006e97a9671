# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""gpu_reset's work: read the GPU facts, refuse unsafe resets, run ``nvidia-smi --gpu-reset -i N``, re-verify.

Guards (each refusal names the GPU and why; nothing is reset when any guard refuses):

* the GPU is not on the node (no GPU with that index or PCI bus id);
* a process uses the GPU (listed with pid and name from ``nvidia-smi -q -x``), or the driver did not list its
  processes;
* the GPU has NVLink and a process runs on another NVLink GPU: ``nvidia-smi nvlink -s`` does not say where a link
  leads, and on an NVSwitch board every NVLink GPU shares the fabric, so such a process may be an NVLink job that
  the reset would break. When the NVLink state could not be read, any process on another GPU refuses the reset.

``-i`` takes nvidia-smi's enumeration index: the GPU's position in the ``-q -x`` output just read (the facts'
``index`` is the minor number, which need not be the same).
"""

import re

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.collect import collect_facts
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import ascii_digits

TOOL = "gpu_reset"
_BUS_ID_RE = re.compile(r"^(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$")


class ResetRefused(ZhisuanError):
    """A guard refused the reset; ``refusals`` lists ``{gpu, reason, processes}`` for fail_json."""

    kind = "refused"

    def __init__(self, detail, refusals):
        super().__init__(TOOL, detail)
        self.refusals = refusals

    def as_dict(self):
        result = super().as_dict()
        result["refusals"] = self.refusals
        return result


class ResetFailed(ZhisuanError):
    """A reset (or the re-verification after it) failed; ``done`` lists the GPUs already reset."""

    def __init__(self, tool, detail, done, cause=None):
        self.kind = cause.kind if cause is not None else "not_verified"
        keep = {}
        if cause is not None:
            keep = dict(cmd=cause.cmd, rc=cause.rc, stdout=cause.stdout, stderr=cause.stderr)
        super().__init__(tool, detail, **keep)
        self.done = done

    def as_dict(self):
        result = super().as_dict()
        result["changed"] = bool(self.done)
        result["reset"] = self.done
        return result


def normalize_bus_id(text):
    """``4e:00.0`` / ``00000000:4E:00.0`` -> ``0000:4E:00.0`` (the facts' form); None when not a bus id."""
    match = _BUS_ID_RE.match(str(text).strip())
    if not match:
        return None
    domain, bus, device, function = match.groups()
    return "%04X:%s:%s.%s" % (int(domain or "0", 16), bus.upper(), device.upper(), function)


def label_of(gpu):
    return "GPU %s (%s)" % (gpu.get("index"), gpu.get("pci_bus_id") or "?")


def _identity(position, gpu):
    return {"index": gpu.get("index"), "nvidia_smi_index": position, "pci_bus_id": gpu.get("pci_bus_id"),
            "uuid": gpu.get("uuid")}


def select(facts, targets):
    """``[(position, gpu)]`` for the requested GPUs, in bus order, without repeats. Raises ResetRefused for a GPU
    that is not on the node."""
    gpus = facts.get("gpus") or []
    chosen = {}
    unknown = []
    for target in targets:
        text = str(target).strip()
        bus_id = normalize_bus_id(text)
        found = None
        for position, gpu in enumerate(gpus):
            if (ascii_digits(text) and gpu.get("index") == int(text)) or (bus_id and gpu.get("pci_bus_id") == bus_id):
                found = position
                break
        if found is None:
            unknown.append(text)
        else:
            chosen[found] = gpus[found]
    if unknown:
        known = ", ".join(label_of(gpu) for gpu in gpus) or "none"
        detail = ("refused: not on this node (by index or PCI bus id): %s; the driver lists %s"
                  % (", ".join(repr(item) for item in unknown), known))
        raise ResetRefused(detail, [{"gpu": item, "reason": "unknown_gpu", "processes": [],
                                     "message": "GPU %r is not on this node" % item} for item in unknown])
    return sorted(chosen.items())


def _procs(gpu):
    return [{"gpu": gpu.get("index"), "pid": proc.get("pid"), "name": proc.get("name")}
            for proc in gpu.get("processes") or []]


def _proc_text(procs):
    return ", ".join("pid %s (%s)" % (proc["pid"], proc["name"] or "?") for proc in procs)


def refusals(facts, selected):
    """The guards: ``[{gpu, reason, processes, message}]``, empty when every selected GPU may be reset."""
    gpus = facts.get("gpus") or []
    targets = set(position for position, _gpu in selected)
    nvlink_error = facts.get("nvlink_error")
    found = []
    for _position, gpu in selected:
        label = label_of(gpu)
        if gpu.get("processes") is None:
            found.append({"gpu": label, "reason": "processes_unknown", "processes": [],
                          "message": "%s: nvidia-smi did not list its processes, so it cannot be shown to be idle"
                                     % label})
            continue
        procs = _procs(gpu)
        if procs:
            found.append({"gpu": label, "reason": "in_use", "processes": procs,
                          "message": "%s is in use by %s; stop %s (drain the node) first"
                                     % (label, _proc_text(procs), "it" if len(procs) == 1 else "them")})
            continue
        if gpu.get("nvlink") is None and not nvlink_error:
            continue
        others = [other for position, other in enumerate(gpus) if position not in targets
                  and (nvlink_error or other.get("nvlink") is not None)]
        busy = [proc for other in others for proc in _procs(other)]
        unknown = [label_of(other) for other in others if other.get("processes") is None]
        if busy or unknown:
            if nvlink_error:
                why = "the NVLink state could not be read (%s), so a process on another GPU may be an NVLink job" % nvlink_error
            else:
                why = "it shares the NVLink fabric with the other NVLink GPUs, so their processes may be an NVLink job"
            what = []
            if busy:
                what.append("running: %s on GPU %s" % (_proc_text(busy), ", ".join(sorted(set(str(p["gpu"]) for p in busy)))))
            if unknown:
                what.append("processes not listed for %s" % ", ".join(unknown))
            found.append({"gpu": label, "reason": "nvlink_job", "processes": busy,
                          "message": "%s: %s (%s); stop that job first or reset those GPUs together with it"
                                     % (label, why, "; ".join(what))})
    return found


def plan(facts, targets):
    """The GPUs to reset, ``[(position, gpu)]``. Raises ResetRefused naming every refusal."""
    selected = select(facts, targets)
    found = refusals(facts, selected)
    if found:
        raise ResetRefused("refused, nothing was reset: %s" % "; ".join(item["message"] for item in found), found)
    return selected


def _summary(facts, selected, reset_state):
    """Diff view of the selected GPUs: the fields a reset is meant to clear, and whether it ran."""
    by_bus = dict((gpu.get("pci_bus_id"), gpu) for gpu in facts.get("gpus") or [])
    result = {}
    for _position, wanted in selected:
        gpu = by_bus.get(wanted.get("pci_bus_id"))
        label = label_of(wanted)
        if gpu is None:
            result[label] = {"present": False}
            continue
        ecc = gpu.get("ecc") or {}
        rows = gpu.get("remapped_rows") or {}
        nvlink = gpu.get("nvlink") or {}
        result[label] = {
            "present": True,
            "reset": reset_state,
            "ecc_volatile_uncorrected": ecc.get("volatile_uncorrected"),
            "remapped_rows_pending": rows.get("pending"),
            "retired_pages_pending": (gpu.get("retired_pages") or {}).get("pending"),
            "nvlink_active": nvlink.get("active"),
            "processes": len(gpu.get("processes") or []),
        }
    return {"gpus": result}


def _reset_all(nvidia_smi_path, timeout, selected):
    done = []
    for position, gpu in selected:
        try:
            run([nvidia_smi_path, "--gpu-reset", "-i", str(position)], timeout=timeout, tool="nvidia-smi")
        except ZhisuanError as exc:
            detail = "%s was not reset: %s" % (label_of(gpu), exc.detail)
            if done:
                detail += " (already reset: %s)" % ", ".join("GPU %s" % item["index"] for item in done)
            raise ResetFailed(exc.tool, detail, done, cause=exc)
        done.append(_identity(position, gpu))
    return done


def _verify(nvidia_smi_path, timeout, done, warn):
    """Facts after the reset; every reset GPU must still be listed."""
    try:
        after = collect_facts(nvidia_smi_path, timeout, with_links=True, warn=warn)
    except ZhisuanError as exc:
        raise ResetFailed(exc.tool, "the reset ran but the GPU facts could not be read afterwards: %s" % exc.detail,
                          done, cause=exc)
    listed = set(gpu.get("pci_bus_id") for gpu in after.get("gpus") or [])
    gone = [item for item in done if item["pci_bus_id"] not in listed]
    if gone:
        raise ResetFailed(TOOL, "%s reset but not listed by nvidia-smi afterwards: it fell off the bus; power cycle "
                                "the node" % ", ".join("GPU %s (%s) was" % (item["index"], item["pci_bus_id"])
                                                       for item in gone), done)
    return after


def reset_gpus(module):
    """The module's runner: plan (guards), then reset and re-verify, or only predict in check mode."""
    params = module.params
    if not params["gpus"]:
        raise ResetRefused("refused: gpus must name at least one GPU (index or PCI bus id)", [])
    before = collect_facts(params["nvidia_smi_path"], params["timeout"], with_links=True, warn=module.warn)
    selected = plan(before, params["gpus"])
    names = ", ".join(label_of(gpu) for _position, gpu in selected)
    result = {"changed": True, "reset": [_identity(position, gpu) for position, gpu in selected]}
    if module.check_mode:
        result.update(gpu=before, msg="would reset %s" % names)
        after = _summary(before, selected, True)
    else:
        result["reset"] = _reset_all(params["nvidia_smi_path"], params["timeout"], selected)
        result["gpu"] = _verify(params["nvidia_smi_path"], params["timeout"], result["reset"], module.warn)
        result["msg"] = "reset %s" % names
        after = _summary(result["gpu"], selected, True)
    if getattr(module, "_diff", False):
        result["diff"] = {"before": _summary(before, selected, False), "after": after}
    return result
