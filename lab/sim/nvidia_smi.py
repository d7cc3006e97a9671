#!/usr/bin/env python3
"""Lab stand-in for ``nvidia-smi -q -x`` on one simulated GPU node.

It replays a REAL captured ``nvidia-smi -q -x`` document (tests/fixtures/nvidia-smi/*.xml) and only edits
values in it: the capture's single ``<gpu>`` element is replicated N times with per-copy identifying values
(PCI bus id, UUID, serial, minor number, module id), MIG is switched off, then the node's faults are applied
as value edits (see lab/README.md for the exact edit each fault makes). It never invents an output format.

Invoked through the per-node wrapper written by ``lab/labctl.py up``::

    nvidia_smi.py --state /abs/nodes/<node>/state.json -q -x

The state file is read on every call, so rewriting it changes a running lab. Standard library only: the
wrapper runs this file with ``python -I -S``.
"""

import copy
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import LabError, hang_if_asked, load_state, normalize_fault, split_argv, unsupported  # noqa: E402

TOOLS = ("nvidia-smi",)

# The message a real nvidia-smi prints on stdout (rc 9) when it cannot reach the kernel driver.
DRIVER_NOT_LOADED_MESSAGE = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n\n"
)
DRIVER_NOT_LOADED_RC = 9

# PCI bus numbers of the eight GPUs of a DGX A100 (nvidia-smi prints them upper case).
DGX_A100_PCI_BUSES = ("07", "0F", "47", "4E", "87", "90", "B7", "BD")
MAX_GPUS = len(DGX_A100_PCI_BUSES)
MAX_NODE_INDEX = 999

# Accepted spellings of the one invocation the lab implements.
QUERY_FLAGS = ("-q", "--query")
XML_FLAGS = ("-x", "--xml-format")

# Fault catalog: kind -> {param: type}. `hang` and `unreachable` are generic (lab/sim/_common.py).
FAULT_KINDS = {
    "ecc_volatile_uncorrectable": {"gpu": int, "count": int},
    "pcie_width": {"gpu": int, "width": int},
    "gpu_missing": {"gpu": int},
    "temperature": {"gpu": int, "gpu_temp_c": int},
    "throttle": {"gpu": int, "reason": str},
    "driver_version": {"version": str},
    "driver_not_loaded": {},
    "truncated": {"bytes": int},
}

# HW slowdown sub-reasons: the driver reports the parent "hw_slowdown" reason Active with them.
HW_SLOWDOWN_CHILDREN = ("hw_thermal_slowdown", "hw_power_brake_slowdown")
REASON_GROUPS = (
    ("clocks_event_reasons", "clocks_event_reason_"),  # driver >= 535 schema
    ("clocks_throttle_reasons", "clocks_throttle_reason_"),  # older schema (515)
)


def check_fault(fault, node, where="fault"):
    """Range checks of one (normalized) fault of this simulator against the node."""
    kind = fault["kind"]
    gpus = node["gpus"]
    if "gpu" in fault and not 0 <= fault["gpu"] < gpus:
        raise LabError(f"{where}: fault {kind!r} names gpu {fault['gpu']}, the node has GPUs 0..{gpus - 1}")
    if kind == "ecc_volatile_uncorrectable" and fault["count"] < 0:
        raise LabError(f"{where}: 'count' must be >= 0")
    if kind == "pcie_width" and fault["width"] not in (1, 2, 4, 8, 12, 16, 32):
        raise LabError(f"{where}: 'width' must be a PCIe link width (1, 2, 4, 8, 12, 16, 32)")
    if kind == "truncated" and fault["bytes"] < 0:
        raise LabError(f"{where}: 'bytes' must be >= 0")


def _own_faults(state, gpus):
    out = []
    for i, raw in enumerate(state.get("faults", [])):
        kind = raw.get("kind") if isinstance(raw, dict) else raw
        if kind in FAULT_KINDS:
            fault = normalize_fault(raw, FAULT_KINDS, f"faults[{i}]")
            check_fault(fault, {"gpus": gpus}, f"faults[{i}]")
            out.append(fault)
    return out


def _find(elem, path, what):
    found = elem.find(path)
    if found is None:
        raise LabError(f"the capture has no <{path}> under <{elem.tag}> ({what})")
    return found


def _split_capture(raw):
    """Return (header, root, trailer): the text before/after the root element, kept byte-exact."""
    start = raw.find("<nvidia_smi_log")
    end_tag = "</nvidia_smi_log>"
    end = raw.rfind(end_tag)
    if start < 0 or end < 0:
        raise LabError("the capture is not an nvidia-smi -q -x document (no <nvidia_smi_log> root)")
    root = ET.fromstring(raw[start:end + len(end_tag)])
    return raw[:start], root, raw[end + len(end_tag):]


def _set_identity(gpu, index, node_index):
    """Per-copy identifying values (the only edits a healthy node gets besides MIG)."""
    bus = DGX_A100_PCI_BUSES[index]
    pci = _find(gpu, "pci", "identity")
    domain = (pci.findtext("pci_domain") or "0000").strip()
    bus_id = f"{int(domain, 16):08X}:{bus}:00.0"
    gpu.set("id", bus_id)
    _find(pci, "pci_bus", "identity").text = bus
    _find(pci, "pci_bus_id", "identity").text = bus_id
    uuid = _find(gpu, "uuid", "identity")
    if uuid.text and len(uuid.text) >= 6:
        uuid.text = uuid.text[:-6] + f"{node_index:04x}{index:02x}"
    serial = gpu.find("serial")
    if serial is not None and serial.text and serial.text.isdigit() and serial.text.strip("0"):
        serial.text = serial.text[:-5] + f"{node_index:03d}{index:02d}"
    minor = gpu.find("minor_number")
    if minor is not None:
        minor.text = str(index)
    module = gpu.find("gpu_module_id")
    if module is not None and module.text and module.text.isdigit() and int(module.text) > 0:
        module.text = str(index + 1)


def _disable_mig(gpu):
    """MIG off, as a non-MIG node prints it: mig_mode Disabled, <mig_devices> holding just 'None'."""
    mode = gpu.find("mig_mode")
    if mode is None:
        return
    current, pending = mode.find("current_mig"), mode.find("pending_mig")
    if current is None or current.text != "Enabled":
        return
    current.text = "Disabled"
    if pending is not None:
        pending.text = "Disabled"
    devices = gpu.find("mig_devices")
    if devices is not None and len(devices):
        child_indent = devices.text or ""
        close_indent = devices[-1].tail or ""
        for child in list(devices):
            devices.remove(child)
        # Layout of a real non-MIG <mig_devices> (q-x-a10g-515.xml, q-x-tesla-t4-515.xml).
        devices.text = child_indent + "None" + close_indent


def _apply_gpu_fault(gpu, fault):
    kind = fault["kind"]
    what = f"fault {kind}"
    if kind == "ecc_volatile_uncorrectable":
        vol = _find(gpu, "ecc_errors/volatile/dram_uncorrectable", what)
        agg = _find(gpu, "ecc_errors/aggregate/dram_uncorrectable", what)
        try:
            agg_before = int(agg.text)
        except (TypeError, ValueError):
            raise LabError(f"{what}: the capture's aggregate dram_uncorrectable is {agg.text!r}, not a number")
        vol.text = str(fault["count"])
        agg.text = str(agg_before + fault["count"])
    elif kind == "pcie_width":
        _find(gpu, "pci/pci_gpu_link_info/link_widths/current_link_width", what).text = f"{fault['width']}x"
    elif kind == "temperature":
        _find(gpu, "temperature/gpu_temp", what).text = f"{fault['gpu_temp_c']} C"
    elif kind == "throttle":
        for group_tag, prefix in REASON_GROUPS:
            group = gpu.find(group_tag)
            if group is None:
                continue
            reason = group.find(prefix + fault["reason"])
            if reason is None:
                known = sorted(c.tag[len(prefix):] for c in group if c.tag.startswith(prefix))
                raise LabError(f"{what}: reason {fault['reason']!r} is not in the capture; known: {known}")
            reason.text = "Active"
            if fault["reason"] in HW_SLOWDOWN_CHILDREN:
                _find(group, prefix + "hw_slowdown", what).text = "Active"
            return
        raise LabError(f"{what}: the capture has no clocks_event_reasons / clocks_throttle_reasons")


def render(state):
    """Build the node's ``nvidia-smi -q -x`` output (bytes) from its state dict."""
    with open(state["capture"], encoding="utf-8") as fh:
        raw = fh.read()
    gpus = state["gpus"]
    node_index = state["index"]
    if not 1 <= gpus <= MAX_GPUS:
        raise LabError(f"gpus must be 1..{MAX_GPUS}, got {gpus}")
    if not 0 <= node_index <= MAX_NODE_INDEX:
        raise LabError(f"node index must be 0..{MAX_NODE_INDEX}, got {node_index}")
    faults = _own_faults(state, gpus)
    header, root, trailer = _split_capture(raw)

    children = list(root)
    template = root.find("gpu")
    if template is None:
        raise LabError("the capture has no <gpu> element")
    pos = children.index(template)
    sep = children[pos - 1].tail if pos else root.text  # indentation before a <gpu>
    last_tail = template.tail
    for old in root.findall("gpu"):
        root.remove(old)

    copies = []
    for i in range(gpus):
        gpu = copy.deepcopy(template)
        _set_identity(gpu, i, node_index)
        _disable_mig(gpu)
        copies.append(gpu)

    for fault in faults:
        if fault["kind"] in ("ecc_volatile_uncorrectable", "pcie_width", "temperature", "throttle"):
            _apply_gpu_fault(copies[fault["gpu"]], fault)
        elif fault["kind"] == "driver_version":
            drv = _find(root, "driver_version", "fault driver_version")
            old = drv.text
            drv.text = fault["version"]
            for gpu in copies:  # the GSP firmware ships with the driver and reports the same version
                gsp = gpu.find("gsp_firmware_version")
                if gsp is not None and gsp.text == old:
                    gsp.text = fault["version"]

    missing = {f["gpu"] for f in faults if f["kind"] == "gpu_missing"}
    present = [g for i, g in enumerate(copies) if i not in missing]
    for n, gpu in enumerate(present):
        gpu.tail = sep if n < len(present) - 1 else last_tail
        root.insert(pos + n, gpu)
    if not present and pos:
        children[pos - 1].tail = last_tail  # keep the closing tag's indentation
    attached = root.find("attached_gpus")
    if attached is not None:
        attached.text = str(len(present))

    out = (header + ET.tostring(root, encoding="unicode") + trailer).encode("utf-8")
    for fault in faults:
        if fault["kind"] == "truncated":
            out = out[: fault["bytes"]]
    return out


def _is_query_xml(args):
    if len(args) != 2:
        return False
    return (args[0] in QUERY_FLAGS and args[1] in XML_FLAGS) or (args[0] in XML_FLAGS and args[1] in QUERY_FLAGS)


def check_state(state):
    """Render once (labctl up): a fault the capture cannot carry fails at `up`."""
    render(state)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    state_path, args = split_argv(argv, "nvidia-smi")
    if not _is_query_xml(args):
        return unsupported("nvidia-smi", args, "only -q -x")
    try:
        state = load_state(state_path)
        hang_if_asked(state, "nvidia-smi")
        if any(f.get("kind") == "driver_not_loaded" for f in state["faults"]):
            sys.stdout.write(DRIVER_NOT_LOADED_MESSAGE)
            sys.stdout.flush()
            return DRIVER_NOT_LOADED_RC
        data = render(state)
    except (OSError, ValueError, ET.ParseError, LabError) as exc:
        sys.stderr.write(f"lab nvidia-smi: {exc}\n")
        return 3
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
