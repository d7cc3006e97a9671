# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""From a collect task's registered result to check records: the family registry the judge action dispatches on.

A collect task that failed (tool not found, timed out, failed, unparsable, output over its cap) becomes one check
with status ``error``; an unreachable host is reported as such, with no checks; otherwise the family's pure rules run
on the facts. Facts the rules cannot read (of the wrong type: a fact cache or a templated variable can hand them back)
become that family's ``error`` check too, here, at the one edge every family passes: the rules never raise on them.
"""

from __future__ import annotations

import linecache
import os

import yaml

from ansible_collections.zhisuan.ops.plugins.module_utils._family import table as family_table
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _stability as stability_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import bandwidth as bandwidth_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import baseline as baseline_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.baseline import bios_names as vendor_bios_names
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import bmc as bmc_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _firmware_classes as firmware_classes
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import tuning as tuning_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import burn as burn_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import dcgm as dcgm_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import drive as drive_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import gpu as gpu_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import nccl as nccl_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import platform as platform_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import xid as xid_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import storage as storage_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import remediate as remediate_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import verify as verify_rules
from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _net_family as net_family
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._nvlink_checks import nvlink_summary
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._parts import gpu_parts
from ansible_collections.zhisuan.ops.plugins.plugin_utils._profiles import cached_profiles, resolve_profile_name, warm_profiles
from ansible_collections.zhisuan.ops.plugins.plugin_utils._xid_catalog import load_catalog
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._check import make_check
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import ThresholdError
from ansible_collections.zhisuan.ops.plugins.plugin_utils._yaml import safe_load


class Family(object):
    """What the judge needs to know about one check family.

    ``rules(host, facts, ctx) -> (profile or None, checks)``; ``summarize(facts, profile, ctx) -> dict`` (the
    host's report facts for the family).
    """

    def __init__(self, name, tool, facts_key, rules, summarize, collect=None, shapes=(dict,), prepare=None):
        self.name = name
        self.prepare = prepare
        self.tool = tool
        self.facts_key = facts_key
        self.rules = rules
        self.summarize = summarize
        # ``(id suffix, component)`` of the collect-error check when two registry entries of one family share a tool
        # (dcgmi diag and dcgmi health): each failed collect is its own row, never two identical ones.
        self.collect = collect or (tool.replace("-", "_"), tool)
        # the types its collect module returns the facts as (a mapping; the firmware inventory is a list or null)
        self.shapes = shapes


class Context(object):
    """Everything a family's rules may use besides its own facts: the inventory's view of the node."""

    def __init__(self, profiles=None, profile_name=None, expected=None, thresholds=None, overrides=None,
                 gpu_facts=None, extra=None):
        self.profiles = profiles or {}
        self.profile_name = profile_name
        self.expected = expected or {}
        self.thresholds = thresholds or {}
        self.overrides = overrides or {}
        self.gpu_facts = gpu_facts or None
        self.extra = extra or {}

    def profile_for(self, gpu_facts):
        """The model profile: the explicit name, else detected from the first GPU name; site overrides merged."""
        gpus = (gpu_facts or {}).get("gpus") or []
        names = [gpu.get("name") for gpu in gpus if gpu.get("name")]
        profile = gpu_rules.select_profile(names[0] if names else None, self.profiles, name=self.profile_name)
        if profile is not None and self.overrides:
            profile = gpu_rules.merge_profile(profile, self.overrides)
        return profile


def _gpu_rules(host, facts, ctx):
    profile = ctx.profile_for(facts)
    return profile, gpu_rules.judge_gpu(host, facts, profile, expected=ctx.expected, thresholds=ctx.thresholds)


def _gpu_summary(facts, profile, ctx=None):
    gpus = facts.get("gpus", [])
    names = sorted(set(gpu.get("name") or "unknown" for gpu in gpus))
    summary = {
        "model": ", ".join(names),
        "count": len(gpus),
        "driver_version": facts.get("driver_version"),
        "cuda_version": facts.get("cuda_version"),
        "profile": profile.get("name") if profile else None,
        # each GPU's bus id, name, serial, VBIOS and UUID: the asset list's component rows
        "devices": gpu_parts(facts),
    }
    summary.update(nvlink_summary(facts))
    return summary


def _burn_rules(host, facts, ctx):
    profile = ctx.profile_for(ctx.gpu_facts)
    return profile, burn_rules.judge_burn(host, facts, profile, thresholds=ctx.thresholds, gpu_facts=ctx.gpu_facts)


def _stability_rules(host, facts, ctx):
    return None, stability_rules.judge_stability(
        host, facts.get("before"), facts.get("during") or [], facts.get("after"),
        xid_before=facts.get("xid_before"), xid_after=facts.get("xid_after"), thresholds=ctx.thresholds,
        after_error=facts.get("after_error"))


def _stability_summary(facts, profile, ctx=None):
    return stability_rules.summarize_stability(
        facts.get("before"), facts.get("during") or [], facts.get("after"),
        xid_before=facts.get("xid_before"), xid_after=facts.get("xid_after"), watch=facts.get("watch"))


def _xid_rules(host, facts, ctx):
    catalog = ctx.extra.get("xid_catalog")
    if catalog is None:
        catalog = load_catalog(overrides=ctx.extra.get("xid_catalog_overrides"))
    return None, xid_rules.judge_xid(host, facts, catalog, gpu_facts=ctx.gpu_facts, thresholds=ctx.thresholds)


def _dcgm_diag_rules(host, facts, ctx):
    return None, dcgm_rules.judge_dcgm_diag(host, facts, gpu_facts=ctx.gpu_facts, thresholds=ctx.thresholds)


def _dcgm_health_rules(host, facts, ctx):
    return None, dcgm_rules.judge_dcgm_health(host, facts, gpu_facts=ctx.gpu_facts)


def _bandwidth_rules(host, facts, ctx):
    """nvbandwidth's facts against the profile: the one of the node's GPUs (gpu facts), else of the CUDA devices."""
    named = ctx.gpu_facts or {"gpus": [{"name": device.get("name")} for device in (facts or {}).get("devices") or []
                                       if isinstance(device, dict)]}
    profile = ctx.profile_for(named)
    return profile, bandwidth_rules.judge_bandwidth(host, facts, profile, thresholds=ctx.thresholds,
                                                    gpu_facts=ctx.gpu_facts)


def _facts_only(summarize):
    """A summary function of ``(facts, profile)`` as the registry calls it."""
    return lambda facts, profile, ctx: summarize(facts, profile)


def _bmc_rules(host, facts, ctx):
    return None, bmc_rules.judge_bmc(host, facts, expected=ctx.expected, thresholds=ctx.thresholds,
                                     log=ctx.extra.get("log"), since=ctx.extra.get("since"),
                                     log_errors=ctx.extra.get("log_errors"))


def _bmc_summary(facts, profile, ctx):
    return bmc_rules.summarize_bmc(facts, firmware=ctx.extra.get("firmware"))


def _versions(facts, ctx):
    return baseline_rules.gather_versions(firmware=facts, gpu_facts=ctx.gpu_facts, software=ctx.extra.get("software"),
                                          bmc=ctx.extra.get("bmc"), classes=ctx.extra.get("firmware_table"),
                                          vendor=ctx.extra.get("vendor") or (ctx.extra.get("bmc") or {}).get("vendor"))


def _baseline_rules(host, facts, ctx):
    checks = baseline_rules.judge_baseline(host, _versions(facts, ctx), ctx.extra.get("baseline") or {},
                                           thresholds=ctx.thresholds)
    checks += baseline_rules.firmware_health(host, facts)
    if ctx.extra.get("bios_expected"):
        checks += baseline_rules.judge_bios(host, ctx.extra.get("bios_attributes") or {}, ctx.extra["bios_expected"],
                                            vendor_names=ctx.extra.get("bios_names"))
    return None, checks


def _baseline_summary(facts, profile, ctx):
    return baseline_rules.summarize_baseline(_versions(facts, ctx))


def _tuning_rules(host, facts, ctx):
    return None, tuning_rules.judge_tuning(host, facts, gpu_facts=ctx.gpu_facts, expected=ctx.expected,
                                           thresholds=ctx.thresholds)


def _prepare_baseline(extra, xid_catalog_overrides=None, bios_names=None):
    extra["firmware_table"] = firmware_table(extra.get("firmware_classes"))
    if extra.get("bios_expected") and bios_names is not None:
        extra["bios_names"] = bios_names(extra.get("vendor"))


def _prepare_xid(extra, xid_catalog_overrides=None, bios_names=None):
    extra["xid_catalog"] = cached_catalog(xid_catalog_overrides or None)


def _platform(judge):
    """A platform part's rules (``_judge/platform.py``): its summary comes from the same judgement, kept in the
    context for the summary adapter (the job's classification is computed once)."""
    def rules(host, facts, ctx):
        checks, summary = judge(host, facts, dict(ctx.extra, thresholds=ctx.thresholds))
        ctx.extra["_platform_summary"] = summary
        return None, checks
    return rules


def _platform_summary(facts, profile, ctx):
    return ctx.extra.pop("_platform_summary", {})


# The rule adapters, one line per part of the family table: ``(rules, summarize[, prepare])``; ``prepare(extra,
# xid_catalog_overrides, bios_names)`` adds what the part's rules read from shipped tables to the context.
# tests/unit/test_family_table.py holds them to the table.
ADAPTERS = {
    "gpu": (_gpu_rules, _gpu_summary),
    "gpu_bandwidth": (_bandwidth_rules, _facts_only(bandwidth_rules.summarize_bandwidth)),
    "xid": (_xid_rules, _facts_only(xid_rules.summarize_xid), _prepare_xid),
    "dcgm": (_dcgm_diag_rules, _facts_only(dcgm_rules.summarize_dcgm_diag)),
    "dcgm_health": (_dcgm_health_rules, _facts_only(dcgm_rules.summarize_dcgm_health)),
    "tuning": (_tuning_rules, lambda facts, profile, ctx: tuning_rules.summarize_tuning(facts)),
    "drive": (lambda host, facts, ctx: (None, drive_rules.judge_drive(host, facts, ctx.thresholds)),
              _facts_only(drive_rules.summarize_drive)),
    "burn": (_burn_rules, _facts_only(burn_rules.summarize_burn)),
    "burn_stability": (_stability_rules, _stability_summary),
    "bmc": (_bmc_rules, _bmc_summary),
    "baseline": (_baseline_rules, _baseline_summary, _prepare_baseline),
    "nccl": (nccl_rules.family_rules, nccl_rules.family_summary),
    "nccl_bisect": (nccl_rules.bisect_rules, nccl_rules.bisect_summary),
    "storage": (lambda host, facts, ctx: (None, storage_rules.judge_storage(host, facts, thresholds=ctx.thresholds)),
                _facts_only(storage_rules.summarize_storage)),
    "storage_aggregate": (lambda host, facts, ctx: (None, storage_rules.judge_aggregate(
        storage_rules.aggregate(facts), thresholds=ctx.thresholds)),
        lambda facts, profile, ctx: storage_rules.aggregate(facts)),
    "nic": (net_family.nic_rules, net_family.nic_summary),
    "rdma_ports": (net_family.rdma_rules, net_family.rdma_summary),
    "cabling": (net_family.cabling_rules, net_family.cabling_summary),
    "k8s_node": (_platform(platform_rules.k8s_node), _platform_summary),
    "k8s_cluster": (_platform(platform_rules.k8s_cluster), _platform_summary),
    "slurm_node": (_platform(platform_rules.slurm_node), _platform_summary),
    "slurm_cluster": (_platform(platform_rules.slurm_cluster), _platform_summary),
    "job": (_platform(platform_rules.job), _platform_summary),
    "verify": (lambda host, facts, ctx: (None, verify_rules.judge_verify(host, facts)),
               lambda facts, profile, ctx: verify_rules.summarize_verify(facts)),
    "remediate": (lambda host, facts, ctx: (None, remediate_rules.judge_remediate(host, facts)),
                  lambda facts, profile, ctx: remediate_rules.summarize_remediate(facts)),
    "remediate_plan": (lambda host, facts, ctx: (None, remediate_rules.judge_plan(host, facts)),
                       lambda facts, profile, ctx: remediate_rules.plan_outcome(facts)),
}
_SHAPE_TYPES = {"mapping": dict, "list": list, "null": type(None)}


def _registry():
    families = {}
    for part in family_table.PARTS:
        adapter = ADAPTERS[part.name]
        families[part.name] = Family(part.family, part.tool, part.facts_key, adapter[0], adapter[1],
                                     collect=part.collect_id,
                                     shapes=tuple(_SHAPE_TYPES[shape] for shape in part.shapes),
                                     prepare=adapter[2] if len(adapter) > 2 else None)
    return families


# part -> what the judge needs to know about it (the family table's parts with their rule adapters)
FAMILIES = _registry()


def _collect_error(family, host, collected):
    kind = collected.get("error_kind") or "failed"
    msg = collected.get("msg") or "the collect task failed without a message"
    evidence = []
    if collected.get("cmd"):
        cmd = collected["cmd"]
        evidence.append("cmd: %s" % (" ".join(cmd) if isinstance(cmd, list) else cmd))
    if collected.get("rc") is not None:
        evidence.append("rc: %s" % collected["rc"])
    for stream in ("stderr", "stdout"):
        text = (collected.get(stream) or "").strip()
        if text:
            evidence.append("%s: %s" % (stream, text[:500]))
    suffix, component = family.collect
    return make_check(
        "%s.collect.%s" % (family.name, suffix), host, "error",
        component=component, observed=kind.replace("_", " "), expected="%s answers with readable output" % component,
        message=msg, remedy="investigate", evidence="\n".join(evidence))


# What rules raise on a fact of a type the collect module never returns (a string where a list is, a list where a
# mapping is, None, a number as a string). A ValueError that the collection's own code raises names a setting
# (thresholds, expected, a baseline, a profile) and is passed on; one raised by a conversion is a fact's.
_FACT_ERRORS = (AttributeError, TypeError, KeyError, IndexError, ValueError, OverflowError, ZeroDivisionError)
_COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _where(exc):
    """``(function, file relative to plugins/, line, source line)`` of the innermost frame of ``exc``."""
    trace = exc.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    if trace is None:
        return None, None, None, ""
    path = trace.tb_frame.f_code.co_filename
    relative = os.path.relpath(path, _COLLECTION_DIR) if path.startswith(_COLLECTION_DIR + os.sep) else None
    return trace.tb_frame.f_code.co_name, relative, trace.tb_lineno, linecache.getline(path, trace.tb_lineno).strip()


def _a_setting(exc):
    """Whether ``exc`` names a setting (raised by the collection's own code) rather than a fact it could not read."""
    if isinstance(exc, ThresholdError):
        return True
    if not isinstance(exc, ValueError):
        return False
    _function, relative, _line, source = _where(exc)
    return relative is not None and source.startswith("raise ")


_SHAPE_NAMES = {dict: "a mapping", list: "a list", type(None): "null"}


def _shape(value, shapes=(dict,)):
    """What ``value`` is, and what it should have been when it is none of ``shapes``."""
    name = _SHAPE_NAMES.get(type(value)) or "a %s" % type(value).__name__
    if isinstance(value, shapes):
        return name
    return "%s, not %s" % (name, " or ".join(_SHAPE_NAMES.get(shape, shape.__name__) for shape in shapes))


def _facts_error(family, host, facts, exc=None):
    """The family's ``error`` check for facts that are not a mapping, or that its rules could not read (``exc``):
    what was wrong, and where the rules met it."""
    if exc is None:
        what = "they are %s" % _shape(facts, family.shapes)
    else:
        function, relative, line, _source = _where(exc)
        where = ", in %s (%s:%s)" % (function, relative, line) if relative else ""
        what = "the %s rules could not read them: %s: %s%s" % (family.name, type(exc).__name__, str(exc)[:300], where)
    suffix, component = family.collect
    return make_check(
        "%s.collect.%s" % (family.name, suffix), host, "error",
        component=component, observed="facts of the wrong type",
        expected="the facts %s returns (%s, %s)" % (
            component, family.facts_key, " or ".join(_SHAPE_NAMES.get(shape, shape.__name__) for shape in family.shapes)),
        message="the %s facts of the %s family are of the wrong type (%s); collect them again (a fact cache or a "
                "templated variable may hold a damaged copy)" % (family.facts_key, family.name, what),
        remedy="investigate", evidence="facts (%s): %s" % (_shape(facts, family.shapes), repr(facts)[:500]))


def judge_collected(family_name, host, collected, ctx=None):
    """Return ``(checks, summary, unreachable)`` for one host's registered collect result."""
    family = FAMILIES[family_name]
    ctx = ctx or Context()
    collected = collected or {}
    if collected.get("unreachable"):
        return [], {}, True
    if collected.get("failed") or family.facts_key not in collected:
        if collected.get("skipped"):
            return [], {}, False
        return [_collect_error(family, host, collected)], {}, False
    facts = collected[family.facts_key]
    if not isinstance(facts, family.shapes):
        # what the collect module never returns is no reading at all
        return [_facts_error(family, host, facts)], {}, False
    try:
        profile, checks = family.rules(host, facts, ctx)
        summary = family.summarize(facts, profile, ctx)
    except _FACT_ERRORS as exc:
        if _a_setting(exc):
            raise
        return [_facts_error(family, host, facts, exc)], {}, False
    return checks, summary, False


# Profiles read once per process (a worker judges one host; the controller's main process may judge many).
_CATALOG_CACHE = {}


def warm_caches():
    """Read the shipped profiles and Xid catalog into this process's caches now. Called where an action plugin is
    imported: the strategy imports it in the controller's main process before it forks a worker per node, so every
    worker inherits what was read instead of reading it again (a node's judgement otherwise re-reads 14 YAML files).
    A file that cannot be read is left for the judgement that needs it to report."""
    warm_profiles()
    try:
        cached_catalog()
    except ValueError:
        pass


def cached_catalog(overrides=None):
    """The Xid catalog; the shipped one alone is read once per process (a site's overrides are read each time: an
    inventory mapping cannot be a cache key). Raises ValueError naming the file that is wrong."""
    if overrides is not None:
        return load_catalog(overrides=overrides)
    if None not in _CATALOG_CACHE:
        _CATALOG_CACHE[None] = load_catalog()
    return _CATALOG_CACHE[None]


# Portable BIOS attribute names -> each vendor's names, shipped with the collection.
BIOS_TABLE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "bios_attributes.yml")


def shipped_bios_names(vendor):
    """The portable BIOS attribute names -> ``vendor``'s names, from the shipped table (data/bios_attributes.yml).
    Raises ValueError naming the table when it cannot be read."""
    try:
        with open(BIOS_TABLE) as handle:
            table = safe_load(handle)
    except (IOError, OSError, yaml.YAMLError) as exc:
        raise ValueError("cannot read the BIOS attribute table %s: %s" % (BIOS_TABLE, exc))
    return vendor_bios_names(table, vendor)


# What firmware inventory items are (data/firmware_classes.yml), shipped with the collection.
FIRMWARE_TABLE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "firmware_classes.yml")
_FIRMWARE_CACHE = {}


def firmware_table(site=None):
    """The compiled firmware classification table, a site's rules (``zhisuan_firmware_classes``) in front; the
    shipped file is read and compiled once per process (with a site's rules, compiled again for each call: they are
    the host's variables). Raises ValueError naming the file or variable that is wrong."""
    if None not in _FIRMWARE_CACHE:
        try:
            with open(FIRMWARE_TABLE) as handle:
                loaded = safe_load(handle)
        except (IOError, OSError, yaml.YAMLError) as exc:
            raise ValueError("cannot read the firmware classification table %s: %s" % (FIRMWARE_TABLE, exc))
        _FIRMWARE_CACHE["compiled"] = firmware_classes.compile_table(loaded)
        _FIRMWARE_CACHE[None] = loaded
    if not site:
        return _FIRMWARE_CACHE["compiled"]
    return firmware_classes.compile_table(_FIRMWARE_CACHE[None], site=site)


def judge_family(family, host, collected, profile=None, profile_overrides=None, profiles_dir=None, expected=None,
                 thresholds=None, gpu_facts=None, xid_catalog_overrides=None, context=None,
                 bios_names=shipped_bios_names):
    """What ``zhisuan.ops.judge`` does with its options: ``(checks, summary, unreachable)`` for one family.

    Raises ValueError (profiles that cannot be read, a profile name that matches none, an XID catalog override that
    cannot be read) with a message that names what was wrong. ``bios_names(vendor)`` gives the vendor's BIOS
    attribute names for the baseline family (default: the shipped table).
    """
    profiles = cached_profiles(profiles_dir)
    profile_name = None
    if profile:
        # as vendors write it (H100, H100-NVL): the preflight of the run already refused names that match none
        profile_name = resolve_profile_name(profile, profiles)
        if profile_name is None:
            raise ValueError("unknown GPU profile %r (known: %s)" % (profile, ", ".join(sorted(profiles))))
    extra = dict(context or {})
    prepare = FAMILIES[family].prepare if family in FAMILIES else None
    if prepare is not None:
        prepare(extra, xid_catalog_overrides=xid_catalog_overrides, bios_names=bios_names)
    ctx = Context(profiles=profiles, profile_name=profile_name, expected=expected, thresholds=thresholds,
                  overrides=profile_overrides, gpu_facts=gpu_facts, extra=extra)
    return judge_collected(family, host, collected, ctx)
