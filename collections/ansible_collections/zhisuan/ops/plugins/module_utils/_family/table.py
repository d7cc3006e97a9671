# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The one family table: every check family, and every judged part of one, written once (issue 29 item 1).

Pure data, importable on the node (``zhisuan.ops.node_collect``) and on the controller (the check and judge actions,
the run's family selection, the preflight, the report). Every other list of families is derived from here:

- ``FAMILIES``: a family is what a run selects (``--tags``, ``zhisuan_families``) and what a check id starts with:
  its scope (``node``: collected on the node; ``controller``: read from the controller, as the BMCs are; ``cluster``:
  the nodes compared or run together), the runs it belongs to (``runs``) and those of them where it runs only when
  named (``opt_in``), the top-level key of ``zhisuan_thresholds`` its rules read (``thresholds``), its place in the
  report (``report_order``) and its English report label (``label``; plugin_utils/_report_i18n.py marks the labels
  for the message catalog), and whether its check components name GPUs (``names_gpus``: the KPIs count the GPUs
  behind its failures). The table's order is the order every run checks them in.
- ``PARTS``: a part is one registry entry of the judge (``zhisuan.ops.judge`` ``family=``): the family its checks
  belong to, the tool and facts key of its collect result, and, for a part collected on the node by
  ``zhisuan.ops.check`` (``node=True``, in ``NODE_ORDER``), the module it stands for, its judge step's name, the
  options its collector takes from the node's variables (``collect``) and those its judge takes (``judge``), and
  when ``zhisuan.ops.check`` collects it (``switch``, ``wanted_by``, ``forced_by``).

An option's spec is ``(sources, default[, conversion])``: the variables it is read from, first defined wins (a name,
or a path ``(variable, key, ...)`` into a mapping), the role's default, and how the role's filter converted it
(``int``, ``int_or_none``, ``or_none``, ``keys``). ``plugin_utils/_check_vars`` resolves them.
"""


class Family(object):
    """One check family (see the module's docstring)."""

    __slots__ = ("name", "scope", "runs", "opt_in", "thresholds", "report_order", "label", "names_gpus")

    def __init__(self, name, scope, runs=(), opt_in=(), thresholds=None, report_order=None, label=None,
                 names_gpus=False):
        self.name = name
        self.scope = scope
        self.runs = tuple(runs)
        self.opt_in = tuple(opt_in)
        self.thresholds = thresholds
        self.report_order = report_order
        self.label = label
        self.names_gpus = names_gpus


class Part(object):
    """One judged part of a family (see the module's docstring). ``collect_id`` is ``(id suffix, component)`` of
    its collect-error check when two parts of one family share a tool; ``shapes`` the types of its facts (names:
    ``mapping``, ``list``, ``null``)."""

    __slots__ = ("name", "family", "tool", "facts_key", "collect_id", "shapes", "node", "module", "check_mode",
                 "judge_step", "collect", "judge", "switch", "wanted_by", "forced_by", "host_fact", "gpu_facts")

    def __init__(self, name, family, tool, facts_key, collect_id=None, shapes=("mapping",), node=False, module=None,
                 check_mode=True, judge_step=None, collect=None, judge=None, switch=None, wanted_by=(),
                 forced_by=None, host_fact=None, gpu_facts=False):
        self.name = name
        self.family = family
        self.tool = tool
        self.facts_key = facts_key
        self.collect_id = collect_id
        self.shapes = tuple(shapes)
        self.node = node
        self.module = module
        self.check_mode = check_mode
        self.judge_step = judge_step
        self.collect = collect or {}
        self.judge = judge or {}
        # (variable, default): a boolean variable that turns the part off although its family is selected
        self.switch = switch
        # other families whose selection collects this part too (their rules read its facts), and a boolean variable
        # that collects it whatever is selected
        self.wanted_by = tuple(wanted_by)
        self.forced_by = forced_by
        # the host fact zhisuan.ops.check sets to the part's facts for the families that follow (nccl, k8s, slurm,
        # baseline read them), and whether its facts are the GPU facts the other parts' rules name GPUs with
        self.host_fact = host_fact
        self.gpu_facts = gpu_facts


def _tool(role_var, tool, default):
    return ((role_var, ("zhisuan_tools", tool)), default)


def _cap(role_var, tool):
    """The output cap (MiB) of a part's programs: the role's variable, else zhisuan_tool_max_output keyed like
    zhisuan_tools; unset leaves the runner's per-tool default."""
    return ((role_var, ("zhisuan_tool_max_output", tool)), None, "int_or_none")


_PROFILE = (("check_gpu_profile", "zhisuan_gpu_profile"), "", "or_none")
_PROFILE_OVERRIDES = (("check_gpu_profile_overrides", "zhisuan_gpu_profile_overrides"), {})
_GPU_THRESHOLDS = (("check_gpu_thresholds", ("zhisuan_thresholds", "gpu")), {})

_DELIVERY, _ACCEPTANCE, _BURNIN, _DIAGNOSE, _INSPECT, _REMEDIATE = (
    "delivery", "acceptance", "burnin", "diagnose", "inspect", "remediate")

FAMILIES = (
    Family("bmc", "controller", runs=(_DELIVERY,), thresholds="bmc", report_order=0, label="bmc"),
    Family("gpu", "node", runs=(_ACCEPTANCE, _BURNIN, _DIAGNOSE, _INSPECT, _REMEDIATE), thresholds="gpu",
           report_order=3, label="gpu", names_gpus=True),
    Family("xid", "node", runs=(_ACCEPTANCE, _DIAGNOSE, _INSPECT, _REMEDIATE), thresholds="xid", report_order=4,
           label="xid", names_gpus=True),
    Family("dcgm", "node", runs=(_ACCEPTANCE, _DIAGNOSE, _INSPECT), thresholds="dcgm", report_order=5,
           label="dcgm", names_gpus=True),
    Family("burn", "node", runs=(_BURNIN, _DIAGNOSE), thresholds="burn", report_order=6, label="burn",
           names_gpus=True),
    Family("tuning", "node", runs=(_DELIVERY, _INSPECT), thresholds="tuning", report_order=2, label="tuning"),
    # opt-in in inspections: a node without smartctl would otherwise turn every inspection's verdict
    Family("drive", "node", runs=(_INSPECT,), opt_in=(_INSPECT,), thresholds="drive", label="drive"),
    Family("baseline", "controller", runs=(_DELIVERY,), thresholds="baseline", report_order=1, label="baseline"),
    Family("nic", "node", runs=(_ACCEPTANCE,), thresholds="net", report_order=8, label="nic"),
    Family("rdma", "cluster", runs=(_ACCEPTANCE,), thresholds="rdma", report_order=9, label="rdma"),
    Family("cabling", "cluster", runs=(_ACCEPTANCE,), thresholds="net", report_order=7, label="cabling"),
    Family("nccl", "cluster", runs=(_ACCEPTANCE,), thresholds="nccl", report_order=10, label="nccl"),
    Family("storage", "node", runs=(_ACCEPTANCE,), thresholds="storage", report_order=11, label="storage"),
    Family("k8s", "cluster", runs=(_ACCEPTANCE, _INSPECT), opt_in=(_ACCEPTANCE, _INSPECT), thresholds="k8s"),
    Family("slurm", "cluster", runs=(_ACCEPTANCE, _INSPECT), opt_in=(_ACCEPTANCE, _INSPECT)),
    Family("job", "cluster", runs=(_DIAGNOSE,), opt_in=(_DIAGNOSE,), thresholds="job"),
    # what no run selects: the comparisons across the fleet (the recorder), and the check ids of the run itself, of
    # a host as a whole (unreachable, preflight) and of a remediation's verification
    Family("fleet", "cluster", thresholds="fleet"),
    Family("host", "controller", label="host"),
    Family("run", "controller", label="run"),
    Family("verify", "node", label="verify"),
    # a remediation's outcome per node (remediate_node), graded on the controller
    Family("remediate", "node"),
)

PARTS = (
    # the node-side parts, in the order zhisuan.ops.check collects and judges them: the GPU facts first, the others
    # name GPUs with them on the controller
    Part("gpu", "gpu", "nvidia-smi", "gpu", node=True, module="zhisuan.ops.gpu_info",
         judge_step="Judge GPU facts on the controller", wanted_by=("xid", "dcgm"), forced_by="check_node_gpu_facts",
         host_fact="check_gpu_facts", gpu_facts=True,
         collect={
             "nvidia_smi_path": _tool("check_gpu_nvidia_smi", "nvidia_smi", "nvidia-smi"),
             "timeout": (("check_gpu_timeout",), 60),
             "max_output": _cap("check_gpu_max_output", "nvidia_smi"),
             "nvlink_errors_window": (("check_gpu_nvlink_errors_window",
                                       ("zhisuan_thresholds", "gpu", "nvlink_errors_window_s")), 0, "int"),
             "throttle_window": (("check_gpu_throttle_window",
                                  ("zhisuan_thresholds", "gpu", "throttle_window_s")), 0, "int"),
             "nvlink_remote": (("check_gpu_nvlink_remote", "zhisuan_gpu_nvlink_remote"), False),
         },
         judge={
             "profile": _PROFILE,
             "profile_overrides": _PROFILE_OVERRIDES,
             "expected": (("check_gpu_expected", "zhisuan_expected"), {}),
             "thresholds": _GPU_THRESHOLDS,
         }),
    # nvbandwidth: host<->device and device<->device bandwidth against the profile's floors
    Part("gpu_bandwidth", "gpu", "nvbandwidth", "bandwidth", node=True, module="zhisuan.ops.gpu_bandwidth",
         judge_step="Judge the bandwidth against the profile's floors", switch=("check_gpu_bandwidth", False),
         collect={
             "nvbandwidth_path": _tool("check_gpu_nvbandwidth", "nvbandwidth", "nvbandwidth"),
             "timeout": (("check_gpu_bandwidth_timeout",), 900, "int"),
             "max_output": _cap("check_gpu_bandwidth_max_output", "nvbandwidth"),
             "nvlink_traffic": (("check_gpu_nvlink_traffic", "zhisuan_gpu_nvlink_traffic"), False),
             "nvidia_smi_path": _tool("check_gpu_nvidia_smi", "nvidia_smi", "nvidia-smi"),
         },
         judge={
             "profile": _PROFILE,
             "profile_overrides": _PROFILE_OVERRIDES,
             "thresholds": _GPU_THRESHOLDS,
         }),
    Part("xid", "xid", "kernel-log", "xid", node=True, module="zhisuan.ops.xid_info",
         judge_step="Judge the XID events",
         collect={
             "journalctl_path": _tool("check_xid_journalctl", "journalctl", "journalctl"),
             "dmesg_path": _tool("check_xid_dmesg", "dmesg", "dmesg"),
             "since": (("check_xid_since", "zhisuan_xid_since"), "-24h"),
             "source": (("check_xid_source",), "auto"),
             "timeout": (("check_xid_timeout",), 60),
             "max_output": _cap("check_xid_max_output", "journalctl"),
         },
         judge={
             "thresholds": (("check_xid_thresholds", ("zhisuan_thresholds", "xid")), {}),
             "xid_catalog_overrides": (("check_xid_catalog_overrides", "zhisuan_xid_catalog_overrides"), None,
                                       "or_none"),
         }),
    Part("dcgm", "dcgm", "dcgmi", "dcgm", node=True, module="zhisuan.ops.dcgm_diag", check_mode=False,
         judge_step="Judge the diagnostics", switch=("check_node_dcgm_diag", True),
         collect={
             # check_node_dcgm_level is the check_node role's (the run's level); the others the check_dcgm role's
             "level": (("check_node_dcgm_level", "check_dcgm_level", "zhisuan_dcgm_level"), 1, "int"),
             "dcgmi_path": _tool("check_dcgm_dcgmi", "dcgmi", "dcgmi"),
             # empty: the module's default for the level
             "timeout": (("check_dcgm_timeout",), None, "int_or_none"),
             "max_output": _cap("check_dcgm_max_output", "dcgmi"),
         },
         judge={
             "thresholds": (("check_dcgm_thresholds", ("zhisuan_thresholds", "dcgm")), {}),
         }),
    Part("dcgm_health", "dcgm", "dcgmi", "dcgm_health", node=True, module="zhisuan.ops.dcgm_health",
         collect_id=("dcgmi_health", "dcgmi health"), judge_step="Judge the health watches",
         switch=("check_dcgm_health", True),
         collect={
             "dcgmi_path": _tool("check_dcgm_dcgmi", "dcgmi", "dcgmi"),
             "timeout": (("check_node_dcgm_health_timeout", "check_dcgm_health_timeout"), 60, "int"),
             "max_output": _cap("check_dcgm_max_output", "dcgmi"),
         }),
    Part("tuning", "tuning", "host", "host", node=True, module="zhisuan.ops.host_info", judge_step="Judge the tuning",
         host_fact="check_tuning_host",
         collect={
             "nvidia_smi_path": _tool("check_tuning_nvidia_smi", "nvidia_smi", "nvidia-smi"),
             "lspci_path": _tool("check_tuning_lspci", "lspci", "lspci"),
             "ofed_info_path": _tool("check_tuning_ofed_info", "ofed_info", "ofed_info"),
             "nv_fabricmanager_path": _tool("check_tuning_nv_fabricmanager", "nv_fabricmanager", "nv-fabricmanager"),
             "dcgmi_path": _tool("check_tuning_dcgmi", "dcgmi", "dcgmi"),
             "acs": (("check_tuning_acs", "zhisuan_read_acs"), True),
             "root": (("check_tuning_root", "zhisuan_host_root"), "/"),
             # the sysctl keys the expected tuning names (their values are judged on the controller)
             "sysctl_keys": (("check_tuning_sysctl_keys", ("zhisuan_expected", "tuning", "sysctl")), {}, "keys"),
             "timeout": (("check_tuning_timeout",), 60),
             "max_output": _cap("check_tuning_max_output", "lspci"),
         },
         judge={
             "expected": (("check_tuning_expected", "zhisuan_expected"), {}),
             "thresholds": (("check_tuning_thresholds", ("zhisuan_thresholds", "tuning")), {}),
         }),
    # every NVMe drive's SMART / Health log (smartctl -j -a): critical warning, media errors, wear, spare, temperature
    Part("drive", "drive", "smartctl", "drive", node=True, module="zhisuan.ops.node_collect",
         judge_step="Judge the drive health",
         collect={
             "smartctl_path": _tool("check_drive_smartctl", "smartctl", "smartctl"),
             "devices": (("check_drive_devices", "zhisuan_drive_devices"), []),
             "root": (("check_drive_root", "zhisuan_host_root"), "/"),
             "timeout": (("check_drive_timeout",), 60, "int"),
             "max_output": _cap("check_drive_max_output", "smartctl"),
         },
         judge={
             "thresholds": (("check_drive_thresholds", ("zhisuan_thresholds", "drive")), {}),
         }),
    # judged on the controller from what their own roles collect
    Part("burn", "burn", "gpu_burn", "burn"),
    # the stability watch around a burn: gpu facts sampled before, during and after, and the XID events
    Part("burn_stability", "burn", "nvidia-smi", "stability"),
    # out-of-band (Redfish or IPMI, per bmc_protocol) and in-band delivery parts
    Part("bmc", "bmc", "bmc", "bmc"),
    Part("baseline", "baseline", "bmc", "firmware", shapes=("list", "null")),
    # nccl-tests: one node (host checks) or a multi-node run (host "cluster"); the slow-node bisection's outcome
    Part("nccl", "nccl", "nccl-tests", "nccl"),
    Part("nccl_bisect", "nccl", "nccl-tests", "bisect"),
    # storage acceptance: fio jobs judged against the site's floors (zhisuan_thresholds.storage)
    Part("storage", "storage", "fio", "storage"),
    # the concurrent run summed over the nodes (host -> storage facts) against the cluster floors; host "cluster"
    Part("storage_aggregate", "storage", "fio", "storage_aggregate", collect_id=("fio_aggregate", "fio")),
    # network: net_info's facts judged three ways (NIC/optics, RDMA ports, LLDP neighbours vs the cabling plan)
    Part("nic", "nic", "ethtool", "net"),
    Part("rdma_ports", "rdma", "ibstat", "net"),
    Part("cabling", "cabling", "lldpctl", "net"),
    # the cluster platform (issue 29 item 3): one node of Kubernetes or Slurm, the GPU nodes together, a job; read on
    # the controller by k8s_node_info, slurm_node_info and job_log (_judge/platform.py)
    Part("k8s_node", "k8s", "kubectl", "k8s"),
    Part("k8s_cluster", "k8s", "kubectl", "k8s"),
    Part("slurm_node", "slurm", "scontrol", "slurm"),
    Part("slurm_cluster", "slurm", "scontrol", "slurm"),
    Part("job", "job", "job_log", "job"),
    # the post-repair verification's five steps, graded from the checks check_gpu and check_burn made in it
    Part("verify", "verify", "verify_node", "verify"),
    # the outcome of one node's remediation: its result check and the history writes that failed
    Part("remediate", "remediate", "remediate_node", "remediate"),
    # a node the remediation did not act on: the plan's word for it (playbooks/remediate.yml)
    Part("remediate_plan", "remediate", "remediation plan", "remediate_plan", collect_id=("plan", "remediation plan")),
)

# The judge options zhisuan.ops.check passes on to a part's judgement.
JUDGE_OPTIONS = ("profile", "profile_overrides", "profiles_dir", "expected", "thresholds", "xid_catalog_overrides")

BY_NAME = dict((family.name, family) for family in FAMILIES)
PART_BY_NAME = dict((part.name, part) for part in PARTS)
NODE_PARTS = tuple(part for part in PARTS if part.node)
NODE_ORDER = tuple(part.name for part in NODE_PARTS)
RUNS = (_DELIVERY, _ACCEPTANCE, _BURNIN, _DIAGNOSE, _INSPECT, _REMEDIATE)


def run_families(kind):
    """The families of the ``kind`` run, in the order it checks them."""
    return tuple(family.name for family in FAMILIES if kind in family.runs)


def opt_in(kind):
    """The families the ``kind`` run selects only when they are named."""
    return tuple(family.name for family in FAMILIES if kind in family.opt_in)


def node_families(kind=None):
    """The families that have a part collected on the node by zhisuan.ops.check (of the ``kind`` run, if given),
    in the table's order: what the check_node role's ``check_node_families`` may name."""
    named = set(part.family for part in NODE_PARTS)
    return tuple(family.name for family in FAMILIES if family.name in named and (kind is None or kind in family.runs))


def threshold_keys():
    """The top-level keys of zhisuan_thresholds."""
    return frozenset(family.thresholds for family in FAMILIES if family.thresholds)


def report_order():
    """The families in the order a delivery engineer reads them in the report (the others follow alphabetically)."""
    placed = [family for family in FAMILIES if family.report_order is not None]
    return tuple(family.name for family in sorted(placed, key=lambda family: family.report_order))


def labels():
    """family -> its report label (the families that have one)."""
    return dict((family.name, family.label) for family in FAMILIES if family.label)


def gpu_families():
    """The families whose check components name GPUs."""
    return tuple(family.name for family in FAMILIES if family.names_gpus)


def tool_keys():
    """The ``zhisuan_tools`` keys the node parts' options read."""
    keys = set()
    for part in NODE_PARTS:
        for spec in part.collect.values():
            keys.update(source[1] for source in spec[0] if isinstance(source, tuple) and source[0] == "zhisuan_tools")
    return frozenset(keys)


def collect_threshold_keys():
    """section -> the ``zhisuan_thresholds.<section>`` keys the node parts' collect options read (windows, ...)."""
    keys = {}
    for part in NODE_PARTS:
        for spec in part.collect.values():
            for source in spec[0]:
                if isinstance(source, tuple) and len(source) == 3 and source[0] == "zhisuan_thresholds":
                    keys.setdefault(source[1], set()).add(source[2])
    return dict((section, frozenset(names)) for section, names in keys.items())


def node_options(table):
    """part -> option -> spec for the node parts: ``table`` is ``"collect"`` or ``"judge"`` (parts with no judge
    options are left out of the judge table, as they take none)."""
    return dict((part.name, dict(getattr(part, table))) for part in NODE_PARTS if getattr(part, table))
