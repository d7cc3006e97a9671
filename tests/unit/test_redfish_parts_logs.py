# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 22 on the replayed captures (test_redfish_wire.ReplayBMC): an answer that is a Redfish error body is an
unreadable resource whatever its HTTP status; every event log of Systems, Managers and Chassis is read, page by page,
keeping what was read when a page fails; log entries are classified hardware / audit / informational; and the health
of every part (drives, storage, NICs, PCIe devices, memory, processors) is judged per part. Fault states are made by
editing the captured documents in the test."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCError
from ansible_collections.zhisuan.ops.plugins.module_utils._judge.bmc import judge_bmc
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.client import BMCErrorBody
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.inventory import collect_bmc
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.service import RedfishService
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.wire import error_body
from test_redfish_wire import ReplayBMC, _error, client_for

GPU3 = "/redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_SXM_3"
CHASSIS = "/redfish/v1/Chassis/1U"


def read(bmc, **kwargs):
    warnings = []
    with client_for(bmc, warnings, **kwargs) as client:
        facts = collect_bmc(RedfishService(client))
    return facts, warnings


def by_id(checks, ident):
    return [check for check in checks if check["id"] == ident]


def _as_error_body(message_id="Base.1.8.InternalError"):
    """An edit that answers the captured resource with an error body (served with HTTP 200 by ReplayBMC)."""
    return lambda document: _error("The request failed due to an internal service error.", message_id)


def _messages_only(document):
    """Only the ``@Message.ExtendedInfo`` of a resource, without its ``@odata.type`` (some BMCs answer so)."""
    return {"@Message.ExtendedInfo": [{"MessageId": "Base.1.8.ResourceNotFound",
                                       "Message": "The requested resource of type %s was not found." % document.get("Name")}]}


# -- error bodies ---------------------------------------------------------------------------------------------------

def test_error_body_tells_an_error_answer_from_a_resource_that_annotates_itself():
    assert "InternalError" in error_body(_error("boom", "Base.1.8.InternalError"))
    assert "ResourceNotFound" in error_body(_messages_only({"Name": "Drive"}))
    annotated = {"@odata.type": "#Chassis.v1_14_0.Chassis", "Id": "1U",
                 "@Message.ExtendedInfo": [{"MessageId": "Base.1.8.PropertyUnknown"}]}
    assert error_body(annotated) is None
    assert error_body({"@odata.type": "#Chassis.v1_14_0.Chassis", "Id": "1U"}) is None
    assert error_body({"error": "text"}) is None and error_body([1]) is None


@pytest.mark.parametrize("expand", [True, False])
def test_a_gpu_answered_with_an_error_body_and_http_200_is_unreadable_not_a_gpu(expand):
    class Plain(ReplayBMC):
        def _get(self, request):
            if "$expand" in request.query and not expand:
                return 501, {}, _error("not implemented")
            return ReplayBMC._get(self, request)

    with Plain("dgx", edits={GPU3: _as_error_body()}) as bmc:
        facts, _ = read(bmc)
        client = client_for(bmc, [])
        with client:
            with pytest.raises(BMCErrorBody) as info:
                client.get(GPU3)
    assert info.value.status == 200 and "HTTP 200 with an error body" in info.value.detail
    assert isinstance(info.value, BMCError) and "InternalError" in info.value.detail
    assert len(facts["gpus"]) == 7 and all(gpu["id"] for gpu in facts["gpus"])
    assert "GPU_SXM_3" not in [gpu["id"] for gpu in facts["gpus"]]
    assert any("error body" in item["error"] and "GPU_SXM_3" in item["resource"] + item["error"]
               for item in facts["errors"])
    assert facts["unreadable"]["gpus"] == [GPU3 + " (HTTP 200 with an error body (Base.1.8.InternalError; "
                                                  "The request failed due to an internal service error.))"]
    checks = judge_bmc("dgx01", facts, expected={"gpu_count": 8})
    assert by_id(checks, "bmc.readout.resources")[0]["status"] == "warn"
    assert "GPU_SXM_3" in by_id(checks, "bmc.readout.resources")[0]["evidence"]
    gpu = by_id(checks, "bmc.gpu.count")[0]
    assert gpu["status"] == "error" and "GPU_SXM_3" in gpu["message"]


def test_a_chassis_answered_with_messages_only_is_not_a_chassis_without_id():
    with ReplayBMC("dmtf", edits={CHASSIS: _messages_only}) as bmc:
        facts, _ = read(bmc, auth="basic")
    assert facts["chassis"] is None  # its only member could not be read: nothing was looked at
    assert [item for item in facts["errors"] if item["resource"] == CHASSIS and "ResourceNotFound" in item["error"]]
    checks = judge_bmc("n1", facts)
    assert by_id(checks, "bmc.readout.resources")[0]["status"] == "warn"
