"""The one family table (module_utils/_family/table.py, issue 29 item 1): every list of families the collection
keeps is derived from it, and the few places that must name families in code or YAML (the node dispatcher's lazy
branches, the judge's rule adapters, the modules' documented choices, the playbooks' lists and tags) are held to it
here."""

import ast
import os
import re

import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils import _node_collect
from ansible_collections.zhisuan.ops.plugins.module_utils._family import table

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
PLUGINS = os.path.join(REPO, "collections", "ansible_collections", "zhisuan", "ops", "plugins")
# The playbook of each run that has a check_node task, and the run kind it records.
RUN_PLAYBOOKS = {"acceptance": "acceptance.yml", "burnin": "burnin.yml", "diagnose": "diagnose.yml",
                 "inspect": "inspect.yml", "delivery": "delivery.yml", "remediate": "remediate.yml"}


def test_the_table_is_consistent():
    names = [family.name for family in table.FAMILIES]
    assert len(names) == len(set(names))
    assert len(table.PARTS) == len(table.PART_BY_NAME)
    for family in table.FAMILIES:
        assert family.scope in ("node", "controller", "cluster"), family.name
        assert set(family.runs) <= set(table.RUNS) and set(family.opt_in) <= set(family.runs), family.name
    orders = [family.report_order for family in table.FAMILIES if family.report_order is not None]
    assert len(orders) == len(set(orders))
    for part in table.PARTS:
        assert part.family in table.BY_NAME, part.name
        assert set(part.shapes) <= {"mapping", "list", "null"}
        if part.node:
            assert part.module and part.module.startswith("zhisuan.ops.") and part.judge_step, part.name
            assert set(part.judge) <= set(table.JUDGE_OPTIONS), part.name
            for spec in list(part.collect.values()) + list(part.judge.values()):
                assert 2 <= len(spec) <= 3 and isinstance(spec[0], tuple) and spec[0], (part.name, spec)
        else:
            assert not (part.collect or part.judge or part.module), part.name
    # the GPU facts come first: the other node parts' rules name GPUs with them
    assert table.NODE_PARTS[0].gpu_facts and sum(part.gpu_facts for part in table.PARTS) == 1


def test_the_derived_lists_are_those_the_collection_wrote_by_hand_before():
    """What each list was before it was derived (commit d383d8af), with what was added since: the drive family, the
    storage_aggregate part (the check_storage role's filter before), the verify, remediate and remediate_plan parts
    (the post-repair verification, a remediation's outcome and the plan's word, graded in Python since issue 29 item
    3) and the platform parts (the platform_checks filter's kinds before). The table must give the same."""
    from ansible_collections.zhisuan.ops.plugins.action import check as check_action
    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _families, _judging, _kpi, _preflight
    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report_i18n, _report_values

    node = ("gpu", "gpu_bandwidth", "xid", "dcgm", "dcgm_health", "tuning", "drive")
    assert _node_collect.ORDER == node and check_action.ORDER == node
    assert check_action.NODE_FAMILIES == {
        "gpu": "Judge GPU facts on the controller",
        "gpu_bandwidth": "Judge the bandwidth against the profile's floors",
        "xid": "Judge the XID events",
        "dcgm": "Judge the diagnostics",
        "dcgm_health": "Judge the health watches",
        "tuning": "Judge the tuning",
        "drive": "Judge the drive health",
    }
    assert check_action.JUDGE_OPTIONS == ("profile", "profile_overrides", "profiles_dir", "expected", "thresholds",
                                          "xid_catalog_overrides")
    assert _families.RUN_FAMILIES == {
        "delivery": ("bmc", "tuning", "baseline"),
        "acceptance": ("gpu", "xid", "dcgm", "nic", "rdma", "cabling", "nccl", "storage", "k8s", "slurm"),
        "burnin": ("gpu", "burn"),
        "diagnose": ("gpu", "xid", "dcgm", "burn", "job"),
        "inspect": ("gpu", "xid", "dcgm", "tuning", "drive", "k8s", "slurm"),
        "remediate": ("gpu", "xid"),
    }
    assert _families.OPT_IN == {"acceptance": ("k8s", "slurm"), "inspect": ("drive", "k8s", "slurm"),
                                "diagnose": ("job",)}
    assert _preflight.THRESHOLD_KEYS == frozenset((
        "gpu", "xid", "dcgm", "burn", "bmc", "baseline", "tuning", "net", "rdma", "nccl", "storage", "fleet", "k8s",
        "job", "drive"))
    assert _report_values.FAMILY_ORDER == ("bmc", "baseline", "tuning", "gpu", "xid", "dcgm", "burn", "cabling",
                                           "nic", "rdma", "nccl", "storage")
    assert table.labels() == dict((name, name) for name in (
        "bmc", "baseline", "tuning", "gpu", "xid", "dcgm", "burn", "cabling", "nic", "rdma", "nccl", "storage", "host",
        "run", "verify", "drive"))
    assert _kpi.GPU_FAMILIES == ("gpu", "xid", "dcgm", "burn")
    registry = dict((name, (family.name, family.tool, family.facts_key, family.collect, family.shapes))
                    for name, family in _judging.FAMILIES.items())
    assert registry == {
        "gpu": ("gpu", "nvidia-smi", "gpu", ("nvidia_smi", "nvidia-smi"), (dict,)),
        "xid": ("xid", "kernel-log", "xid", ("kernel_log", "kernel-log"), (dict,)),
        "dcgm": ("dcgm", "dcgmi", "dcgm", ("dcgmi", "dcgmi"), (dict,)),
        "gpu_bandwidth": ("gpu", "nvbandwidth", "bandwidth", ("nvbandwidth", "nvbandwidth"), (dict,)),
        "dcgm_health": ("dcgm", "dcgmi", "dcgm_health", ("dcgmi_health", "dcgmi health"), (dict,)),
        "burn": ("burn", "gpu_burn", "burn", ("gpu_burn", "gpu_burn"), (dict,)),
        "burn_stability": ("burn", "nvidia-smi", "stability", ("nvidia_smi", "nvidia-smi"), (dict,)),
        "bmc": ("bmc", "bmc", "bmc", ("bmc", "bmc"), (dict,)),
        "baseline": ("baseline", "bmc", "firmware", ("bmc", "bmc"), (list, type(None))),
        "tuning": ("tuning", "host", "host", ("host", "host"), (dict,)),
        "nccl": ("nccl", "nccl-tests", "nccl", ("nccl_tests", "nccl-tests"), (dict,)),
        "nccl_bisect": ("nccl", "nccl-tests", "bisect", ("nccl_tests", "nccl-tests"), (dict,)),
        "storage": ("storage", "fio", "storage", ("fio", "fio"), (dict,)),
        "storage_aggregate": ("storage", "fio", "storage_aggregate", ("fio_aggregate", "fio"), (dict,)),
        "nic": ("nic", "ethtool", "net", ("ethtool", "ethtool"), (dict,)),
        "rdma_ports": ("rdma", "ibstat", "net", ("ibstat", "ibstat"), (dict,)),
        "cabling": ("cabling", "lldpctl", "net", ("lldpctl", "lldpctl"), (dict,)),
        "drive": ("drive", "smartctl", "drive", ("smartctl", "smartctl"), (dict,)),
        "verify": ("verify", "verify_node", "verify", ("verify_node", "verify_node"), (dict,)),
        "remediate": ("remediate", "remediate_node", "remediate", ("remediate_node", "remediate_node"), (dict,)),
        "remediate_plan": ("remediate", "remediation plan", "remediate_plan", ("plan", "remediation plan"), (dict,)),
        # the cluster platform, the platform_checks filter's kinds before (issue 29 item 3)
        "k8s_node": ("k8s", "kubectl", "k8s", ("kubectl", "kubectl"), (dict,)),
        "k8s_cluster": ("k8s", "kubectl", "k8s", ("kubectl", "kubectl"), (dict,)),
        "slurm_node": ("slurm", "scontrol", "slurm", ("scontrol", "scontrol"), (dict,)),
        "slurm_cluster": ("slurm", "scontrol", "slurm", ("scontrol", "scontrol"), (dict,)),
        "job": ("job", "job_log", "job", ("job_log", "job_log"), (dict,)),
    }
    assert _preflight.KNOWN_TOOLS >= table.tool_keys()


def _branches(path, function):
    """The names a dispatcher function compares ``name`` with (its ``if name == "...":`` lines), in order."""
    with open(path) as handle:
        tree = ast.parse(handle.read())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for statement in node.body:
                if isinstance(statement, ast.If) and isinstance(statement.test, ast.Compare):
                    found.append(statement.test.comparators[0].value)
    return found


def test_the_node_dispatcher_has_one_lazy_branch_per_node_part():
    assert _branches(os.path.join(PLUGINS, "module_utils", "_node_collect.py"), "collector") == list(table.NODE_ORDER)
    for part in table.NODE_PARTS:
        collector = _node_collect.collector(part.name)
        assert collector.module == part.module and collector.check_mode == part.check_mode
        assert "timeout" in collector.argspec
    for part in table.PARTS:
        if not part.node:
            try:
                _node_collect.collector(part.name)
            except KeyError:
                continue
            raise AssertionError("%s is collected by its own role, not by node_collect" % part.name)


def test_the_judge_has_one_rule_adapter_per_part():
    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _judging

    assert list(_judging.ADAPTERS) == [part.name for part in table.NODE_PARTS] + [
        part.name for part in table.PARTS if not part.node]
    assert sorted(_judging.FAMILIES) == sorted(table.PART_BY_NAME)


def _doc_choices(module, option):
    with open(os.path.join(PLUGINS, "modules", module + ".py")) as handle:
        tree = ast.parse(handle.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "DOCUMENTATION":
            return yaml.safe_load(node.value.value)["options"][option]["choices"]
    raise AssertionError("no DOCUMENTATION in %s" % module)


def test_the_modules_document_the_table_s_parts():
    assert _doc_choices("check", "families") == list(table.NODE_ORDER)
    assert _doc_choices("node_collect", "families") == list(table.NODE_ORDER)
    assert _doc_choices("judge", "family") == sorted(table.PART_BY_NAME)


def _plays(name):
    with open(os.path.join(REPO, "playbooks", name)) as handle:
        return yaml.safe_load(handle)


def _walk(tasks):
    for task in tasks or []:
        yield task
        for key in ("block", "rescue", "always"):
            for inner in _walk(task.get(key)):
                yield inner


_INTERSECT = re.compile(r"intersect\(\[([^\]]*)\]\)")


def test_the_playbooks_lists_of_families_are_the_table_s():
    """Every ``intersect([...])`` list of a run's playbook names families of that run; the check_node task's list,
    its ``when`` and its first tags are exactly the run's node families (the table's)."""
    checked = 0
    for kind, name in RUN_PLAYBOOKS.items():
        with open(os.path.join(REPO, "playbooks", name)) as handle:
            text = handle.read()
        for listed in _INTERSECT.findall(text):
            families = [item.strip().strip("'\"") for item in listed.split(",") if item.strip()]
            assert set(families) <= set(table.run_families(kind)), (name, families)
            checked += 1
        for play in _plays(name):
            for task in _walk(play.get("tasks")):
                role = (task.get("ansible.builtin.import_role") or {}).get("name")
                if role != "check_node":
                    continue
                listed = _INTERSECT.search(task["vars"]["check_node_families"]).group(1)
                families = [item.strip().strip("'\"") for item in listed.split(",")]
                assert tuple(families) == table.node_families(kind), (name, families)
                checked += 1
            for task in _walk(play.get("tasks")):
                if any((inner.get("ansible.builtin.import_role") or {}).get("name") == "check_node"
                       for inner in task.get("block") or []):
                    # the node families, and the run's families that read the GPU facts (burn-in's burn)
                    tags = task["tags"]
                    assert tags[:len(table.node_families(kind))] == list(table.node_families(kind)), (name, tags)
                    assert set(tags) <= set(table.run_families(kind)), (name, tags)
                    when = _INTERSECT.search(str(task.get("when")))
                    if when:
                        listed = tuple(item.strip().strip("'\"") for item in when.group(1).split(","))
                        assert listed == table.node_families(kind), (name, listed)
                    checked += 1
    assert checked >= 10


def test_the_report_names_the_table_s_families():
    """The report's family names are marked with N_ in _report_i18n (Babel extracts literal calls only): they must
    be the table's labels, each in the shipped catalog."""
    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _report_i18n

    assert _report_i18n.FAMILY_NAMES == table.labels()
    with open(os.path.join(PLUGINS, os.pardir, "data", "locale", "report.pot")) as handle:
        catalog = handle.read()
    for label in table.labels().values():
        assert 'msgid "%s"' % label in catalog, label


def test_the_other_family_lists_name_the_table_s_families():
    """Lists that are choices of their own (a diagnosis level's families, the check_node role's default, the
    translated families) name families of the table, of the right run."""
    from ansible_collections.zhisuan.ops.plugins.plugin_utils import _check_vars, _families, _hostvars, _report_i18n

    for level, spec in _families.DIAG_LEVELS.items():
        assert set(spec["families"]) <= set(table.run_families("diagnose")), level
    with open(os.path.join(REPO, "roles", "check_node", "defaults", "main.yml")) as handle:
        default = yaml.safe_load(handle)["check_node_families"]
    assert tuple(default) == table.node_families("acceptance")
    selected, _kept, _record = _check_vars.node_selection(_hostvars.HostView({}, lambda value: value))
    assert set(table.PART_BY_NAME[name].family for name in selected) == set(default)
    assert set(_report_i18n.TRANSLATED_FAMILIES) <= set(table.labels())
