# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Several node-side families collected in one module run (``zhisuan.ops.node_collect``): each family's collect
function is called with its own options, validated against the argspec of its own module, as if that module had run;
a family that fails gives the result its module would have failed with, and the others run. One AnsiballZ round trip
per node instead of one per family."""

import copy
import time

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.zhisuan.ops.plugins.module_utils._base import TOOL_ARGSPEC, apply_output_limit, check_timeout, failure_fields
from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ZhisuanError
from ansible_collections.zhisuan.ops.plugins.module_utils._family import table


class Collector(object):
    """One node part: the module it stands for and whether it may run in check mode (the family table's), that
    module's options and its collect function."""

    def __init__(self, name, argspec, collect):
        part = table.PART_BY_NAME[name]
        self.module = part.module
        self.argspec = dict(copy.deepcopy(TOOL_ARGSPEC), **copy.deepcopy(argspec))
        self.collect = collect
        self.check_mode = part.check_mode


# In the order they run (the family table's): the GPU facts first, the others name GPUs with them on the controller.
ORDER = table.NODE_ORDER


def collector(name):
    """The part's collector. Its code is imported only when a run asks for the part: a node checked for gpu, xid
    and dcgm never loads the tuning or bandwidth collectors (the module's payload carries them all). One branch per
    node part of the family table (tests/unit/test_family_table.py holds them to it)."""
    if name == "gpu":
        from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.collect import GPU_INFO_ARGSPEC, collect_gpu_facts
        return Collector(name, GPU_INFO_ARGSPEC, collect_gpu_facts)
    if name == "gpu_bandwidth":
        from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.bandwidth_collect import (
            GPU_BANDWIDTH_ARGSPEC,
            collect_bandwidth,
        )
        return Collector(name, GPU_BANDWIDTH_ARGSPEC, collect_bandwidth)
    if name == "xid":
        from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.xid_collect import XID_INFO_ARGSPEC, collect_xid_facts
        return Collector(name, XID_INFO_ARGSPEC, collect_xid_facts)
    if name == "dcgm":
        from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.dcgm_collect import DCGM_DIAG_ARGSPEC, collect_dcgm_diag
        return Collector(name, DCGM_DIAG_ARGSPEC, collect_dcgm_diag)
    if name == "dcgm_health":
        from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.dcgm_collect import DCGM_HEALTH_ARGSPEC, collect_dcgm_health
        return Collector(name, DCGM_HEALTH_ARGSPEC, collect_dcgm_health)
    if name == "tuning":
        from ansible_collections.zhisuan.ops.plugins.module_utils._host.collect import HOST_INFO_ARGSPEC, collect_host_facts
        return Collector(name, HOST_INFO_ARGSPEC, collect_host_facts)
    if name == "drive":
        from ansible_collections.zhisuan.ops.plugins.module_utils._storage.drive_collect import DRIVE_ARGSPEC, collect_drives
        return Collector(name, DRIVE_ARGSPEC, collect_drives)
    raise KeyError(name)


class FamilyModule(object):
    """What a collect function uses of its module: the family's own validated options and the real module's
    warnings."""

    def __init__(self, module, params):
        self.params = params
        self.warn = module.warn


def _options(name, family, given):
    """The family's options with its module's defaults, or raises ValueError naming what was wrong."""
    if not isinstance(given, dict):
        raise ValueError("the options of %s must be a dictionary, got %s" % (name, type(given).__name__))
    validated = ArgumentSpecValidator(family.argspec).validate(
        dict((key, value) for key, value in given.items() if value is not None))
    if validated.error_messages:
        raise ValueError("; ".join(validated.error_messages))
    return validated.validated_parameters


def collect_one(module, name, given):
    """The result ``name``'s own module would have returned (``failed`` with its error fields when it failed,
    ``skipped`` in check mode for a family that does not run there)."""
    family = collector(name)
    if module.check_mode and not family.check_mode:
        return {"skipped": True, "msg": "%s does not run in check mode" % family.module}
    try:
        params = _options(name, family, given or {})
    except ValueError as exc:
        return {"failed": True, "error_kind": "bad_option", "tool": family.module,
                "msg": "%s: %s" % (family.module, exc)}
    try:
        check_timeout(params)
        apply_output_limit(params)
        result = family.collect(FamilyModule(module, params))
    except ZhisuanError as exc:
        return dict(failure_fields(exc), failed=True)
    finally:
        # each family's own cap: the next family starts from the per-tool defaults
        apply_output_limit({})
    result.setdefault("changed", False)
    return result


def collect_families(module):
    """``collected`` (family -> what its module returned) and ``timing`` (family -> seconds on the node)."""
    options = module.params["options"] or {}
    results, timing = {}, {}
    for name in ORDER:
        if name not in module.params["families"]:
            continue
        started = time.monotonic()
        results[name] = collect_one(module, name, options.get(name))
        timing[name] = round(time.monotonic() - started, 3)
    return {"collected": results, "timing": timing}
