#!/usr/bin/env python3
"""Lab stand-in for ``nvidia-smi`` on one simulated GPU node: ``-q -x``, ``nvlink -s`` and ``--gpu-reset -i N``.

``-q -x`` replays a REAL captured ``nvidia-smi -q -x`` document (tests/fixtures/nvidia-smi/*.xml) and only edits
values in it: the capture's single ``<gpu>`` element is replicated N times with per-copy identifying values
(PCI bus id, UUID, serial, minor number, module id), MIG is switched off, then the node's faults are applied
as value edits (see lab/README.md for the exact edit each fault makes). It never invents an output format.

``nvlink -s`` replays the real 8-GPU A100 capture (nvlink-status-a100-sxm4-8gpu.txt) for an A100-SXM4 node, with
each header's UUID (and number) edited to the GPU's ``-q -x`` values; other models replay the real "no NVLink"
form (excerpt-l40s-nvlink-s.txt) with the header edited the same way.

``nvlink -e`` replays the real H100 error-counter capture (nvlink-e-h100-healthy-excerpt.txt, links 0, 1 and 17) for
a node with NVLink, headers edited as for ``nvlink -s``; an ``nvlink_errors`` fault edits one counter's value to
``per_read`` times the number of ``nvlink -e`` calls so far (kept in the state file as ``nvlink_e_reads``), so two
reads a window apart see it grow. A node without NVLink prints nothing.

``nvlink -R``, ``nvlink -c`` and ``nvlink -gt d`` (an A100-SXM4 node only; issue 23) edit real captures the same way:

* ``-R`` replays the real HGX A100 capture of GPU 0 (nvlink-R-a100-sxm4-nvswitch-gpu0.txt: 12 links, two to each
  of 6 NVSwitches with the switch port); the capture holds GPU 0 only, so GPU k's port numbers are GPU 0's minus
  2k (mod 36, an NVSwitch's port count): each port is claimed once. A link that is down (``nvlink_down``) is not
  listed (the driver lists the active links); ``nvlink_remote_port`` sets one link's port (two links on one port);
* ``-c`` replays GPU 0's first link block of the real H800 capture (nvlink-c-h800-8gpu-excerpt.txt, six
  capabilities) once per link of the node's ``-s`` block, renumbered; ``nvlink_capability`` sets one capability
  of one link to ``false``;
* ``-gt d`` prints, per link, the real H800 idle read's line (nvlink-gt-d-h800-gpu0-idle.txt, link n mod 8) plus
  the data the lab's nvbandwidth moved over the link (``nvlink_traffic_kib`` in the state file, grown by every
  device-to-device testcase nvbandwidth runs); a link that is down or has an ``nvlink_idle`` fault moves nothing.

``--gpu-reset -i N`` (``-r -i N``) prints the driver's success lines and clears the GPU's reset-clearable faults
from the state file; a GPU with a ``gpu_process`` is refused with the driver's "In use by another client" text.

Invoked through the per-node wrapper written by ``lab/labctl.py up``::

    nvidia_smi.py --state /abs/nodes/<node>/state.json -q -x

The state file is read on every call, so rewriting it changes a running lab. Standard library only: the
wrapper runs this file with ``python -I -S``.
"""

import copy
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (  # noqa: E402
    DGX_A100_PCI_BUSES, FIXTURES_DIR, LabError, hangs, own_faults, run_sim, save_state, split_argv, unsupported,
)

TOOLS = ("nvidia-smi",)

# The message a real nvidia-smi prints on stdout (rc 9) when it cannot reach the kernel driver.
DRIVER_NOT_LOADED_MESSAGE = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n\n"
)
DRIVER_NOT_LOADED_RC = 9

# DGX_A100_PCI_BUSES (from _common): the PCI bus numbers of the eight GPUs of a DGX A100.
MAX_GPUS = len(DGX_A100_PCI_BUSES)
MAX_NODE_INDEX = 999

# Accepted spellings of the invocations the lab implements.
QUERY_FLAGS = ("-q", "--query")
XML_FLAGS = ("-x", "--xml-format")
NVLINK_STATUS_FLAGS = ("-s", "--status")
NVLINK_ERRORS_FLAGS = ("-e", "--errorcounters")
# `nvidia-smi nvlink -e`: a real capture (relative to tests/fixtures); its counter names by fault counter.
NVLINK_ERRORS_CAPTURE = "nvidia-smi/nvlink-e-h100-healthy-excerpt.txt"
NVLINK_ERROR_COUNTERS = {"replay": "Replay", "recovery": "Recovery", "crc": "CRC"}
RESET_FLAGS = ("-r", "--gpu-reset")
ID_FLAGS = ("-i", "--id")
NVLINK_REMOTE_FLAGS = ("-R", "--remotelinkinfo")
NVLINK_CAPABILITY_FLAGS = ("-c", "--capabilities")
NVLINK_THROUGHPUT_FLAGS = ("-gt", "--getthroughput")
IMPLEMENTED = "-q -x, nvlink -s, nvlink -e, nvlink -R, nvlink -c, nvlink -gt d, topo -m, --gpu-reset -i N"
# Real captures of the other nvlink forms (relative to tests/fixtures), for an A100-SXM4 node.
NVLINK_REMOTE_CAPTURE = "nvidia-smi/nvlink-R-a100-sxm4-nvswitch-gpu0.txt"
NVLINK_CAPABILITY_CAPTURE = "nvidia-smi/nvlink-c-h800-8gpu-excerpt.txt"
NVLINK_THROUGHPUT_CAPTURE = "nvidia-smi/nvlink-gt-d-h800-gpu0-idle.txt"
NVSWITCH_PORTS = 36
# nvlink -c capability names as the driver prints them, by fault name (nvlink_capability's `capability`).
NVLINK_CAPABILITIES = {"p2p": "P2P is supported", "sysmem_access": "Access to system memory supported",
                       "p2p_atomics": "P2P atomics supported", "sysmem_atomics": "System memory atomics supported",
                       "sli": "SLI is supported", "link": "Link is supported"}

# `nvidia-smi nvlink -s` captures (relative to tests/fixtures): the first whose key is in the -q -x product name.
NVLINK_CAPTURES = (("A100-SXM4", "nvidia-smi/nvlink-status-a100-sxm4-8gpu.txt"),)
# Models without NVLink: the real "no NVLink" form, one block used for every GPU.
NO_NVLINK_CAPTURE = "nvidia-smi/excerpt-l40s-nvlink-s.txt"
# What nvidia-smi nvlink -s prints for a link that is down (real capture nvlink-s-h100-pcie-x2-bridge-partial.txt).
NVLINK_INACTIVE = "<inactive>"
NVLINK_HEADER_RE = re.compile(r"^GPU (\d+): (.*?) \(UUID: (GPU-[0-9A-Za-z-]+)\)$")

# <process_info> layout of a real -q -x (the A100 capture has no process): the A10G capture's element, values edited.
PROCESS_CAPTURE = "nvidia-smi/q-x-a10g-515.xml"

# What the real nvidia-smi prints after `nvidia-smi -i N -r`: one line per GPU reset, then "All done." (published
# terminal transcripts, e.g. yandex-cloud/docs' GPU MIG guide; no capture of it is in the fixture pool).
RESET_OK = "GPU {bus_id} was successfully reset.\nAll done.\n"
# ... and when a process holds the GPU (exit status 255), as quoted by yandex-cloud/docs' troubleshooting page and in
# NVIDIA mig-manager logs.
RESET_IN_USE = (
    "\nThe following GPUs could not be reset:\n  GPU {bus_id}: In use by another client\n\n"
    "1 device is currently being used by one or more other processes (e.g., Fabric Manager, CUDA application, "
    "graphics application such as an X server, or a monitoring application such as another instance of "
    "nvidia-smi). Please first kill all processes using this device and all compute applications running in the "
    "system.\n"
)
RESET_IN_USE_RC = 255
# Faults a GPU reset clears (volatile state); gpu_missing, pcie_width, nvlink_down and the rest stay.
RESET_CLEARS = ("ecc_volatile_uncorrectable", "throttle", "temperature", "fabric_status", "remap_pending")

# Fault catalog: kind -> {param: type}. `hang` and `unreachable` are generic (lab/sim/_common.py).
FAULT_KINDS = {
    "ecc_volatile_uncorrectable": {"gpu": int, "count": int},
    "ecc_aggregate_uncorrectable": {"gpu": int, "count": int},
    "pcie_width": {"gpu": int, "width": int},
    "gpu_missing": {"gpu": int},
    "temperature": {"gpu": int, "gpu_temp_c": int},
    "throttle": {"gpu": int, "reason": str},
    "driver_version": {"version": str},
    "driver_not_loaded": {},
    "truncated": {"bytes": int},
    "nvlink_down": {"gpu": int, "link": int},
    "gpu_process": {"gpu": int, "pid": int, "name": str},
    "nvlink_errors": {"gpu": int, "link": int, "counter": str, "per_read": int},
    "fabric_status": {"gpu": int, "status": str},
    "remap_pending": {"gpu": int},
    "remap_failure": {"gpu": int},
    "remap_banks_exhausted": {"gpu": int, "banks": int},
    "mig": {"gpu": int},
    "nvlink_remote_port": {"gpu": int, "link": int, "port": int},
    "nvlink_capability": {"gpu": int, "link": int, "capability": str},
    "nvlink_idle": {"gpu": int, "link": int},
}

# HW slowdown sub-reasons: the driver reports the parent "hw_slowdown" reason Active with them.
# Faults that edit values inside one GPU's element.
GPU_VALUE_FAULTS = ("ecc_volatile_uncorrectable", "ecc_aggregate_uncorrectable", "pcie_width", "temperature",
                    "throttle", "gpu_process", "remap_pending", "remap_failure", "remap_banks_exhausted")
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
    if kind in ("ecc_volatile_uncorrectable", "ecc_aggregate_uncorrectable") and fault["count"] < 0:
        raise LabError(f"{where}: 'count' must be >= 0")
    if kind == "nvlink_down" and fault["link"] < 0:
        raise LabError(f"{where}: 'link' must be >= 0")
    if kind == "nvlink_errors" and (fault["counter"] not in NVLINK_ERROR_COUNTERS or fault["per_read"] < 0):
        raise LabError(f"{where}: fault nvlink_errors needs counter in {sorted(NVLINK_ERROR_COUNTERS)} and "
                       f"per_read >= 0")
    if kind == "gpu_process" and (fault["pid"] <= 0 or not fault["name"].strip()):
        raise LabError(f"{where}: 'pid' must be > 0 and 'name' non-empty")
    if kind == "pcie_width" and fault["width"] not in (1, 2, 4, 8, 12, 16, 32):
        raise LabError(f"{where}: 'width' must be a PCIe link width (1, 2, 4, 8, 12, 16, 32)")
    if kind == "remap_banks_exhausted" and fault["banks"] <= 0:
        raise LabError(f"{where}: 'banks' must be > 0")
    if kind == "fabric_status" and not fault["status"].strip():
        raise LabError(f"{where}: 'status' must be non-empty (e.g. Insufficient Resources)")
    if kind == "truncated" and fault["bytes"] < 0:
        raise LabError(f"{where}: 'bytes' must be >= 0")
    if kind in ("nvlink_remote_port", "nvlink_capability", "nvlink_idle") and fault["link"] < 0:
        raise LabError(f"{where}: 'link' must be >= 0")
    if kind == "nvlink_remote_port" and not 0 <= fault["port"] < NVSWITCH_PORTS:
        raise LabError(f"{where}: 'port' must be an NVSwitch port 0..{NVSWITCH_PORTS - 1}")
    if kind == "nvlink_capability" and fault["capability"] not in NVLINK_CAPABILITIES:
        raise LabError(f"{where}: fault nvlink_capability needs capability in {sorted(NVLINK_CAPABILITIES)}")


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
        uuid.text = node_uuid(uuid.text, node_index, index)
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
    elif kind == "ecc_aggregate_uncorrectable":
        agg = _find(gpu, "ecc_errors/aggregate/dram_uncorrectable", what)
        try:
            agg.text = str(int(agg.text) + fault["count"])
        except (TypeError, ValueError):
            raise LabError(f"{what}: the capture's aggregate dram_uncorrectable is {agg.text!r}, not a number")
    elif kind == "gpu_process":
        _add_process(_find(gpu, "processes", what), fault)
    elif kind in ("remap_pending", "remap_failure", "remap_banks_exhausted"):
        _remap_fault(gpu, fault, what)
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


def _remap_fault(gpu, fault, what):
    """Row-remapper values of a capture that prints them (the A10G's <remapped_rows>; the A100 capture's is N/A):
    pending / failure flag Yes, or ``banks`` banks moved from the histogram's Max to its None row."""
    rows = gpu.find("remapped_rows")
    if rows is None or not len(rows):
        raise LabError(f"{what}: the capture prints no row-remapper values (<remapped_rows>N/A</remapped_rows>); use a "
                       "model whose capture has them (a10g)")
    if fault["kind"] == "remap_pending":
        _find(rows, "remapped_row_pending", what).text = "Yes"
    elif fault["kind"] == "remap_failure":
        _find(rows, "remapped_row_failure", what).text = "Yes"
    else:
        top = _find(rows, "row_remapper_histogram/row_remapper_histogram_max", what)
        spare = int((top.text or "0").split()[0])
        if fault["banks"] > spare:
            raise LabError(f"{what}: 'banks' is {fault['banks']}, the capture has {spare} banks")
        top.text = f"{spare - fault['banks']} bank(s)"
        _find(rows, "row_remapper_histogram/row_remapper_histogram_none", what).text = f"{fault['banks']} bank(s)"


def _set_fabric(copies, faults):
    """An NVSwitch board's fabric as the driver prints it: every GPU's <fabric> State Completed / Status Success (the
    A100 capture's values are N/A), then each faulted GPU's <status> = the fault's status (a real node printed
    "Insufficient Resources": Azure/azhpc-images#506)."""
    for gpu in copies:
        _find(gpu, "fabric/state", "fault fabric_status").text = "Completed"
        _find(gpu, "fabric/status", "fault fabric_status").text = "Success"
    for fault in faults:
        _find(copies[fault["gpu"]], "fabric/status", "fault fabric_status").text = fault["status"]


def _process_template():
    """The real <process_info> element of the A10G capture (pid 725, /usr/lib/xorg/Xorg)."""
    with open(os.path.join(FIXTURES_DIR, PROCESS_CAPTURE), encoding="utf-8") as fh:
        _, root, _ = _split_capture(fh.read())
    info = root.find("gpu/processes/process_info")
    if info is None:
        raise LabError(f"{PROCESS_CAPTURE} has no <process_info>")
    return info


def _add_process(processes, fault):
    """Append a copy of the real <process_info> with pid, type (C: compute) and process_name edited."""
    info = copy.deepcopy(_process_template())
    what = "fault gpu_process"
    _find(info, "pid", what).text = str(fault["pid"])
    _find(info, "type", what).text = "C"
    _find(info, "process_name", what).text = fault["name"]
    # The capture's layout: <process_info> 4 spaces deeper than <processes>, whose tail indents its siblings.
    outer = processes.tail or "\n"
    inner = outer + "    "
    if len(processes):
        processes[-1].tail = inner
    else:
        processes.text = inner
    info.tail = outer
    processes.append(info)


def _build(state):
    """The node's -q -x tree: (header, root, trailer, faults, present lab GPU indices), faults applied."""
    with open(state["capture"], encoding="utf-8") as fh:
        raw = fh.read()
    gpus = state["gpus"]
    node_index = state["index"]
    if not 1 <= gpus <= MAX_GPUS:
        raise LabError(f"gpus must be 1..{MAX_GPUS}, got {gpus}")
    if not 0 <= node_index <= MAX_NODE_INDEX:
        raise LabError(f"node index must be 0..{MAX_NODE_INDEX}, got {node_index}")
    faults = own_faults(state, FAULT_KINDS, check_fault, gpus)
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
    in_mig = set(fault["gpu"] for fault in faults if fault["kind"] == "mig")
    for i in range(gpus):
        gpu = copy.deepcopy(template)
        _set_identity(gpu, i, node_index)
        if i not in in_mig:  # `mig`: the GPU keeps the capture's MIG mode and its MIG devices
            _disable_mig(gpu)
        copies.append(gpu)

    for fault in faults:
        if fault["kind"] in GPU_VALUE_FAULTS:
            _apply_gpu_fault(copies[fault["gpu"]], fault)
        elif fault["kind"] == "driver_version":
            drv = _find(root, "driver_version", "fault driver_version")
            old = drv.text
            drv.text = fault["version"]
            for gpu in copies:  # the GSP firmware ships with the driver and reports the same version
                gsp = gpu.find("gsp_firmware_version")
                if gsp is not None and gsp.text == old:
                    gsp.text = fault["version"]

    fabric = [f for f in faults if f["kind"] == "fabric_status"]
    if fabric:
        _set_fabric(copies, fabric)

    missing = {f["gpu"] for f in faults if f["kind"] == "gpu_missing"}
    present = [i for i in range(gpus) if i not in missing]
    for n, i in enumerate(present):
        copies[i].tail = sep if n < len(present) - 1 else last_tail
        root.insert(pos + n, copies[i])
    if not present and pos:
        children[pos - 1].tail = last_tail  # keep the closing tag's indentation
    attached = root.find("attached_gpus")
    if attached is not None:
        attached.text = str(len(present))
    return header, root, trailer, faults, present


def render(state):
    """Build the node's ``nvidia-smi -q -x`` output (bytes) from its state dict."""
    header, root, trailer, faults, _ = _build(state)
    out = (header + ET.tostring(root, encoding="unicode") + trailer).encode("utf-8")
    for fault in faults:
        if fault["kind"] == "truncated":
            out = out[: fault["bytes"]]
    return out


def _nvlink_blocks(path):
    """[(header line, [link/message lines])] of a real nvlink -s capture."""
    with open(os.path.join(FIXTURES_DIR, path), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    blocks = []
    for line in lines:
        if NVLINK_HEADER_RE.match(line):
            blocks.append((line, []))
        elif blocks and line.strip():
            blocks[-1][1].append(line)
    if not blocks:
        raise LabError(f"{path} has no 'GPU n: ... (UUID: ...)' header")
    return blocks


def render_nvlink(state):
    """Build the node's ``nvidia-smi nvlink -s`` output (bytes): the real capture, headers edited to the GPUs of
    the node's -q -x output (position, name, UUID), nvlink_down links edited to ``<inactive>``."""
    _, root, _, faults, present = _build(state)
    elements = root.findall("gpu")
    product = (elements[0].findtext("product_name") or "") if elements else ""
    capture = next((path for key, path in NVLINK_CAPTURES if key in product), None)
    blocks = _nvlink_blocks(capture or NO_NVLINK_CAPTURE)
    down = {}
    for fault in faults:
        if fault["kind"] == "nvlink_down":
            if capture is None:
                raise LabError(f"fault nvlink_down: a {product or 'GPU'} has no NVLink (no nvlink capture for it)")
            down.setdefault(fault["gpu"], set()).add(fault["link"])
    out = []
    for position, (lab_index, gpu) in enumerate(zip(present, elements)):
        if capture is None:
            header, body = blocks[0]
        elif lab_index < len(blocks):
            header, body = blocks[lab_index]
        else:
            raise LabError(f"the nvlink capture has {len(blocks)} GPU blocks, the node has GPU {lab_index}")
        name = NVLINK_HEADER_RE.match(header).group(2)
        if capture is None:
            name = gpu.findtext("product_name") or name
        out.append(f"GPU {position}: {name} (UUID: {gpu.findtext('uuid')})")
        body = list(body)
        for link in sorted(down.get(lab_index, ())):
            rx = re.compile(r"^(\s*Link %d: ).*$" % link)
            hits = [n for n, line in enumerate(body) if rx.match(line)]
            if not hits:
                raise LabError(f"fault nvlink_down: GPU {lab_index} has no link {link} in the nvlink capture "
                               f"(links 0..{len(body) - 1})")
            body[hits[0]] = rx.match(body[hits[0]]).group(1) + NVLINK_INACTIVE
        out.extend(body)
    # A node whose GPUs are all missing prints nothing (no header to list).
    return ("\n".join(out) + "\n").encode("utf-8") if out else b""


def render_nvlink_errors(state, state_path):
    """Build the node's ``nvidia-smi nvlink -e`` output (bytes): the real capture's block per GPU, header edited to
    the GPU's -q -x position, name and UUID, ``nvlink_errors`` faults edited into their counter's value."""
    _, root, _, faults, present = _build(state)
    elements = root.findall("gpu")
    product = (elements[0].findtext("product_name") or "") if elements else ""
    if not any(key in product for key, _ in NVLINK_CAPTURES):
        if any(fault["kind"] == "nvlink_errors" for fault in faults):
            raise LabError(f"fault nvlink_errors: a {product or 'GPU'} has no NVLink (no nvlink capture for it)")
        return b""
    reads = int(state.get("nvlink_e_reads", 0)) + 1
    state["nvlink_e_reads"] = reads
    save_state(state_path, state)
    with open(os.path.join(FIXTURES_DIR, NVLINK_ERRORS_CAPTURE), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    body = lines[1:]
    out = []
    for position, (lab_index, gpu) in enumerate(zip(present, elements)):
        out.append(f"GPU {position}: {gpu.findtext('product_name')} (UUID: {gpu.findtext('uuid')})")
        block = list(body)
        for fault in faults:
            if fault["kind"] != "nvlink_errors" or fault["gpu"] != lab_index:
                continue
            rx = re.compile(r"^(\s*Link %d: %s Errors: )[0-9]+$" % (fault["link"],
                                                                    NVLINK_ERROR_COUNTERS[fault["counter"]]))
            hits = [n for n, line in enumerate(block) if rx.match(line)]
            if not hits:
                raise LabError(f"fault nvlink_errors: link {fault['link']} is not in the nvlink -e capture "
                               f"(links 0, 1 and 17)")
            block[hits[0]] = rx.match(block[hits[0]]).group(1) + str(fault["per_read"] * reads)
        out.extend(block)
    return ("\n".join(out) + "\n").encode("utf-8") if out else b""


def _is_query_xml(args):
    if len(args) != 2:
        return False
    return (args[0] in QUERY_FLAGS and args[1] in XML_FLAGS) or (args[0] in XML_FLAGS and args[1] in QUERY_FLAGS)


def _reset_target(args):
    """``--gpu-reset -i N`` / ``-r -i N`` (any order) -> N as given; else None."""
    if len(args) != 3:
        return None
    resets = [a for a in args if a in RESET_FLAGS]
    ids = [n for n, a in enumerate(args) if a in ID_FLAGS]
    if len(resets) != 1 or len(ids) != 1 or ids[0] == 2 or args[ids[0] + 1] in RESET_FLAGS:
        return None
    return args[ids[0] + 1]


# `nvidia-smi topo -m` by GPU count: real captures (they name no model, only GPUn/NICn and their links).
TOPO_CAPTURES = {
    8: os.path.join(FIXTURES_DIR, "nvidia-smi", "topo-m-h100x8-8nic.txt"),
    1: os.path.join(FIXTURES_DIR, "nvidia-smi", "excerpt-h100-80gb-hbm3-topo-m.txt"),
}


def _nvlink_node(state, what):
    """(GPUs as [(position, lab index, -q -x element)], their -s link numbers by lab index, faults) of an A100-SXM4
    node; LabError naming ``what`` for a model the other nvlink captures do not cover."""
    _, root, _, faults, present = _build(state)
    elements = root.findall("gpu")
    product = (elements[0].findtext("product_name") or "") if elements else ""
    capture = next((path for key, path in NVLINK_CAPTURES if key in product), None)
    if capture is None:
        return [], {}, faults
    blocks = _nvlink_blocks(capture)
    links = {}
    for lab_index in present:
        if lab_index >= len(blocks):
            raise LabError(f"{what}: the nvlink capture has {len(blocks)} GPU blocks, the node has GPU {lab_index}")
        links[lab_index] = [int(re.match(r"^\s*Link (\d+):", line).group(1)) for line in blocks[lab_index][1]]
    return [(position, lab_index, gpu) for position, (lab_index, gpu) in enumerate(zip(present, elements))], \
        links, faults


def _header(position, gpu):
    return f"GPU {position}: {gpu.findtext('product_name')} (UUID: {gpu.findtext('uuid')})"


def _capture_lines(path):
    with open(os.path.join(FIXTURES_DIR, path), encoding="utf-8") as fh:
        return fh.read().splitlines()


def _down(faults):
    return set((fault["gpu"], fault["link"]) for fault in faults if fault["kind"] == "nvlink_down")


def render_nvlink_remote(state):
    """``nvidia-smi nvlink -R``: the real HGX A100 GPU 0 block per GPU (see the module docstring)."""
    gpus, links, faults = _nvlink_node(state, "nvlink -R")
    body = [line for line in _capture_lines(NVLINK_REMOTE_CAPTURE)[1:] if line.strip()]
    rx = re.compile(r"^(\s*Link )(\d+)(: Remote Device [0-9A-Fa-f:.]+: Link )(\d+)$")
    ports = dict(((f["gpu"], f["link"]), f["port"]) for f in faults if f["kind"] == "nvlink_remote_port")
    down = _down(faults)
    out = []
    for position, lab_index, gpu in gpus:
        out.append(_header(position, gpu))
        active = 0
        for line in body:
            match = rx.match(line)
            link = int(match.group(2))
            if link not in links[lab_index] or (lab_index, link) in down:
                continue
            port = ports.get((lab_index, link), (int(match.group(4)) - 2 * lab_index) % NVSWITCH_PORTS)
            out.append(f"{match.group(1)}{active}{match.group(3)}{port}")  # -R numbers the active links
            active += 1
    return ("\n".join(out) + "\n").encode("utf-8") if out else b""


def render_nvlink_capabilities(state):
    """``nvidia-smi nvlink -c``: the real H800 link block once per link (see the module docstring)."""
    gpus, links, faults = _nvlink_node(state, "nvlink -c")
    lines = _capture_lines(NVLINK_CAPABILITY_CAPTURE)
    block = [line for line in lines[1:7]]  # GPU 0's link 0: its six capability lines
    off = set((f["gpu"], f["link"], NVLINK_CAPABILITIES[f["capability"]]) for f in faults
              if f["kind"] == "nvlink_capability")
    out = []
    for position, lab_index, gpu in gpus:
        out.append(_header(position, gpu))
        for link in links[lab_index]:
            for line in block:
                line = line.replace("Link 0,", "Link %d," % link, 1)
                name = line.split(",", 1)[1].rsplit(":", 1)[0].strip()
                if (lab_index, link, name) in off:
                    line = line.rsplit(":", 1)[0] + ": false"
                out.append(line)
    return ("\n".join(out) + "\n").encode("utf-8") if out else b""


def render_nvlink_throughput(state):
    """``nvidia-smi nvlink -gt d``: the real idle read per link plus what the lab's nvbandwidth moved over it."""
    gpus, links, faults = _nvlink_node(state, "nvlink -gt")
    rx = re.compile(r"^(\s*Link )(\d+)(: Data (?:Tx|Rx): )(\d+)( KiB)$")
    idle = [rx.match(line) for line in _capture_lines(NVLINK_THROUGHPUT_CAPTURE)[1:] if line.strip()]
    moved = int(state.get("nvlink_traffic_kib", 0))
    still = _down(faults) | set((f["gpu"], f["link"]) for f in faults if f["kind"] == "nvlink_idle")
    out = []
    for position, lab_index, gpu in gpus:
        out.append(_header(position, gpu))
        for link in links[lab_index]:
            for match in (m for m in idle if int(m.group(2)) == link % 8):
                value = int(match.group(4)) + (0 if (lab_index, link) in still else moved)
                out.append(f"{match.group(1)}{link}{match.group(3)}{value}{match.group(5)}")
    return ("\n".join(out) + "\n").encode("utf-8") if out else b""


def render_topo(state):
    """The real topology matrix of a node with this many GPUs, as is."""
    if state["gpus"] not in TOPO_CAPTURES:
        raise LabError(f"topo -m: the lab has real matrices for {sorted(TOPO_CAPTURES)} GPUs only "
                       f"(this node has {state['gpus']})")
    with open(TOPO_CAPTURES[state["gpus"]], "rb") as fh:
        return fh.read()


def _command(args):
    if _is_query_xml(args):
        return "query", None
    if args in (["topo", "-m"], ["topo", "--matrix"]):
        return "topo", None
    if len(args) == 2 and args[0] == "nvlink" and args[1] in NVLINK_STATUS_FLAGS:
        return "nvlink", None
    if len(args) == 2 and args[0] == "nvlink" and args[1] in NVLINK_ERRORS_FLAGS:
        return "nvlink_errors", None
    if len(args) == 2 and args[0] == "nvlink" and args[1] in NVLINK_REMOTE_FLAGS:
        return "nvlink_remote", None
    if len(args) == 2 and args[0] == "nvlink" and args[1] in NVLINK_CAPABILITY_FLAGS:
        return "nvlink_capabilities", None
    if len(args) == 3 and args[0] == "nvlink" and args[1] in NVLINK_THROUGHPUT_FLAGS and args[2] == "d":
        return "nvlink_throughput", None
    target = _reset_target(args)
    if target is not None:
        return "reset", target
    return None, None


def node_uuid(capture_uuid, node_index, index):
    """The UUID the lab gives GPU ``index`` of node ``node_index``: the capture's, with the node and GPU number
    written into the last digits of its first group and of its last group. Reports shorten a UUID to its first
    group (``GPU-51000103…``), so that group must differ between GPUs too, not only the tail."""
    tag = f"{node_index:04x}{index:02x}"
    if len(capture_uuid) >= 12 and capture_uuid.startswith("GPU-") and capture_uuid[12:13] == "-":
        capture_uuid = capture_uuid[:6] + tag + capture_uuid[12:]
    return capture_uuid[:-6] + tag


def gpu_uuids(state):
    """UUIDs of the node's GPUs as ``-q -x`` prints them (other simulators print the same, e.g. gpu_burn)."""
    with open(state["capture"], encoding="utf-8") as fh:
        root = ET.fromstring(fh.read().encode("utf-8"))
    capture_uuid = (root.findtext("gpu/uuid") or "").strip()
    return [node_uuid(capture_uuid, state["index"], index) for index in range(state["gpus"])]


def check_state(state):
    """Render once (labctl up): a fault the capture cannot carry fails at `up`."""
    render(state)
    render_nvlink(state)
    render_nvlink_remote(state)
    render_nvlink_capabilities(state)


def reset(state_path, state, target):
    """Reset the GPU at enumeration index ``target``: returns (rc, stdout text). Clears its volatile faults."""
    _, root, _, faults, present = _build(state)
    if not target.isdigit() or int(target) >= len(present):
        raise LabError(f"--gpu-reset -i {target}: the node has GPUs 0..{len(present) - 1} (the lab takes an index)")
    position = int(target)
    lab_index = present[position]
    bus_id = root.findall("gpu")[position].findtext("pci/pci_bus_id")
    if any(f["kind"] == "gpu_process" and f["gpu"] == lab_index for f in faults):
        return RESET_IN_USE_RC, RESET_IN_USE.format(bus_id=bus_id)
    kept = []
    for fault in state["faults"]:
        if isinstance(fault, dict) and fault.get("gpu") == lab_index and fault.get("kind") in RESET_CLEARS \
                and not fault.get("persistent"):
            if fault["kind"] == "ecc_volatile_uncorrectable" and fault.get("count"):
                # the volatile count goes back to 0; the errors stay in the lifetime (aggregate) count
                kept.append({"kind": "ecc_aggregate_uncorrectable", "gpu": lab_index, "count": fault["count"]})
            continue
        kept.append(fault)
    state["faults"] = kept
    save_state(state_path, state)
    return 0, RESET_OK.format(bus_id=bus_id)


def cacheable(args, state):
    """The render cache (lab/sim/_simcache.py) may replay ``-q -x``, ``nvlink -s`` and ``topo -m``: pure functions of
    the state file and the captures. Not ``--gpu-reset`` (writes the state) nor ``nvlink -e`` (counts its reads in
    the state); a hung nvidia-smi never finishes (nothing to store either way)."""
    return _command(args)[0] in ("query", "nvlink", "topo") and not hangs(state, "nvidia-smi")


def main(argv=None):
    state_path, args = split_argv(argv, "nvidia-smi")
    command, target = _command(args)
    if command is None:
        return unsupported("nvidia-smi", args, IMPLEMENTED)

    def work(state):
        if any(f.get("kind") == "driver_not_loaded" for f in state["faults"]):
            sys.stdout.write(DRIVER_NOT_LOADED_MESSAGE)
            sys.stdout.flush()
            return DRIVER_NOT_LOADED_RC
        if command == "reset":
            rc, text = reset(state_path, state, target)
            sys.stdout.write(text)
            sys.stdout.flush()
            return rc
        if command == "nvlink_errors":
            return render_nvlink_errors(state, state_path)
        return {"query": render, "nvlink": render_nvlink, "topo": render_topo, "nvlink_remote": render_nvlink_remote,
                "nvlink_capabilities": render_nvlink_capabilities,
                "nvlink_throughput": render_nvlink_throughput}[command](state)

    return run_sim("nvidia-smi", state_path, work, errors=(OSError, ValueError, ET.ParseError, LabError))


if __name__ == "__main__":
    sys.exit(main())
