# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugin_utils/_hostvars.py: one view of a host's variables for the check action, the record and the preflight,
templated by Ansible's own Templar."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:  # ansible-core 2.19+: templates in data must be trusted; before 2.19 (make compat) every string is templated
    from ansible.template import trust_as_template
except ImportError:
    def trust_as_template(value):
        return value

from ansible_collections.zhisuan.ops.plugins.plugin_utils._hostvars import UNDEFINED, HostView


def counting(template):
    calls = []

    def wrapped(value):
        calls.append(value)
        return template(value)
    return wrapped, calls


def test_paths_into_mappings_and_undefined_apart_from_null():
    view = HostView({"zhisuan_tools": {"nvidia_smi": "/opt/nvidia-smi"}, "check_gpu_timeout": None, "n": 3},
                    lambda value: value)
    assert view.lookup(("zhisuan_tools", "nvidia_smi")) == "/opt/nvidia-smi"
    assert view.lookup(("zhisuan_tools", "dcgmi")) is UNDEFINED
    assert view.lookup(("n", "deeper")) is UNDEFINED  # a path through something that is not a mapping
    assert view.lookup("check_gpu_timeout") is None  # null is a value
    assert view.lookup("missing") is UNDEFINED
    assert view.get("missing", "fallback") == "fallback" and view.get("check_gpu_timeout", "fallback") is None
    assert "n" in view and "missing" not in view


def test_each_variable_is_templated_once_and_the_runs_data_never():
    inventory = {"site_row": "R7", "zhisuan_rack": trust_as_template("{{ site_row }}-A"),
                 "results_node": {"checks": [trust_as_template("{{ not_a_template_here }}")]}}
    templar = Templar(loader=DataLoader(), variables=inventory)
    template, calls = counting(templar.template)
    view = HostView(inventory, template, data=("results_node",))
    assert view.get("zhisuan_rack") == "R7-A"
    assert view.get("zhisuan_rack") == "R7-A"
    assert view.lookup(("results_node", "checks")) == ["{{ not_a_template_here }}"]
    assert calls == ["{{ site_row }}-A"]


def test_another_host_is_templated_in_its_own_context():
    node = {"site_row": "R9", "zhisuan_rack": trust_as_template("{{ site_row }}-B")}
    controller = Templar(loader=DataLoader(), variables={"site_row": "controller's"})
    view = HostView.of_host(node, controller)
    assert view.get("zhisuan_rack") == "R9-B"
    assert controller.template(trust_as_template("{{ site_row }}")) == "controller's"  # the task's templar unchanged


def test_a_value_that_cannot_be_templated_is_collected_once_or_raised():
    node = {"zhisuan_thresholds": trust_as_template("{{ site_thresholds.gpu }}"), "zhisuan_rack": "R1"}
    errors = []
    view = HostView.of_host(node, Templar(loader=DataLoader(), variables={}), errors=errors)
    assert view.get("zhisuan_thresholds", {}) == {}
    assert view.get("zhisuan_thresholds") is None
    assert view.get("zhisuan_rack") == "R1"
    assert len(errors) == 1 and errors[0][0] == "zhisuan_thresholds" and "site_thresholds" in errors[0][1]
    assert "\n" not in errors[0][1]
    with pytest.raises(AnsibleError):
        HostView.of_host(node, Templar(loader=DataLoader(), variables={})).get("zhisuan_thresholds")


def test_a_host_without_variables_reads_as_empty():
    view = HostView(None, lambda value: value)
    assert view.get("zhisuan_rack") is None and "zhisuan_rack" not in view
