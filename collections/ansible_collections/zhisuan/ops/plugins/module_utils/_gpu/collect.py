# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""gpu_info's work: one nvidia-smi round trip (or a saved dump) → normalised facts."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import ToolNotFound
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu import nvidia_smi
from ansible_collections.zhisuan.ops.plugins.module_utils._runner import run


def read_dump(path):
    """Text of a saved nvidia-smi dump. Raises ToolNotFound naming the file."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError) as exc:
        raise ToolNotFound("nvidia-smi", "cannot read saved output %s: %s" % (path, exc.strerror or exc))


def collect_gpu_facts(module):
    params = module.params
    if params["src"]:
        facts = nvidia_smi.parse(read_dump(params["src"]), warn=module.warn)
    else:
        result = run([params["nvidia_smi_path"], "-q", "-x"], timeout=params["timeout"], tool="nvidia-smi")
        facts = nvidia_smi.parse_xml(result.stdout, warn=module.warn)
    return {"gpu": facts}
