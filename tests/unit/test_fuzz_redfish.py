# SPDX-License-Identifier: GPL-3.0-or-later
"""Redfish answers damaged the ways real BMCs damage them (issue 12): one document of a captured tree is mutated
(wrong JSON types for Members, @odata.id, Members@odata.nextLink, ProtocolFeaturesSupported.ExpandQuery and
everything else; huge, infinite and NaN numbers; deep nesting; keys dropped) and the whole read runs on it.

The damaged tree is served by a fake transport at the client's HTTP seam (``RedfishClient._send``): every answer
still goes through the client's own body reading (``_response``), paging, ``$expand`` handling and the service,
inventory, firmware, log and judge code, exactly as for a live BMC. Only typed ZhisuanErrors may come out, within
the hang limit, and the facts carry no NaN or infinite number."""

from __future__ import annotations

import io
import json
import os
from urllib.error import HTTPError
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.zhisuan.ops.plugins.module_utils._judge.bmc import judge_bmc, summarize_bmc
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.client import RedfishClient
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.inventory import collect_bmc, collect_firmware
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.logs import collect_log
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.service import RedfishService
from fuzzing import FIXTURES, FUZZ, assert_total, json_mutations, json_text

pytestmark = pytest.mark.fuzz

ROOT = "/redfish/v1"
TREES = ("nvidia-dgx-h100-viking", "nvidia-gb200-nvl", "dell-poweredge-r750-h100-pcie", "dmtf-public-rackmount1")
# the documents the inventory, firmware and log reads touch first: damage there reaches the most code
HOT = ("", "Systems", "Chassis", "Managers", "UpdateService", "SessionService")


def _load(tree):
    base = os.path.join(FIXTURES, "redfish", tree)
    documents = {}
    for folder, _dirs, files in os.walk(base):
        if "index.json" in files:
            relative = os.path.relpath(folder, base)
            path = ROOT if relative == "." else ROOT + "/" + relative.replace(os.sep, "/")
            with open(os.path.join(folder, "index.json"), "rb") as handle:
                documents[path] = json.loads(handle.read().decode("utf-8"))
    return documents


DOCUMENTS = dict((tree, _load(tree)) for tree in TREES)


class ServedClient(RedfishClient):
    """A RedfishClient whose transport answers from a dict of path -> JSON text (404 for the rest; the query is
    ignored, as sushy-static does; POST to a session collection answers 201 with a token)."""

    def __init__(self, served, **kwargs):
        RedfishClient.__init__(self, "127.0.0.1:8443", username="root", password="fuzz-secret-1", retries=0,
                               sleep=lambda _s: None, **kwargs)
        self.served = served

    def _send(self, method, url, data, headers, basic):
        path = urlsplit(url).path.rstrip("/") or "/"
        if method == "POST" and path.endswith("/Sessions"):
            return 201, {"X-Auth-Token": "fuzz-token", "Location": path + "/1"}, b'{"@odata.id": "%s/1"}' % path.encode()
        if method == "DELETE":
            return 204, {}, b""
        if method == "GET" and path in self.served:
            return 200, {"Content-Type": "application/json"}, self.served[path].encode("utf-8")
        raise HTTPError(url, 404, "Not Found", {}, io.BytesIO(b'{"error": {"message": "not found"}}'))


def _served(tree, damaged_path, damaged):
    served = dict((path, json.dumps(document)) for path, document in DOCUMENTS[tree].items())
    served[damaged_path] = damaged
    return served


def read_everything(served):
    """What check_bmc reads of one BMC (inventory, firmware, SEL), judged."""
    with ServedClient(served) as client:
        service = RedfishService(client)
        facts = collect_bmc(service)
        firmware = collect_firmware(service)
        log = collect_log(service, "sel")
    checks = judge_bmc("node01", facts, expected={"gpu_count": 8, "psu_count": 2, "dimm_count": 4}, log=log)
    summary = summarize_bmc(facts, firmware=firmware)
    json.dumps([facts, firmware, log, checks, summary], allow_nan=False)
    return {"facts": facts, "firmware": firmware, "log": log, "checks": checks}


@st.composite
def damaged_trees(draw):
    tree = draw(st.sampled_from(TREES))
    paths = sorted(DOCUMENTS[tree])
    hot = [ROOT + ("/" + name if name else "") for name in HOT if ROOT + ("/" + name if name else "") in DOCUMENTS[tree]]
    path = draw(st.sampled_from(hot) if draw(st.booleans()) else st.sampled_from(paths))
    damaged = json_text(draw(json_mutations(DOCUMENTS[tree][path])))
    return tree, path, damaged


def test_the_fake_transport_reads_every_captured_tree_cleanly():
    for tree in TREES:
        result = read_everything(_served(tree, ROOT, json.dumps(DOCUMENTS[tree][ROOT])))
        assert result["facts"]["system"]["id"], tree
        assert result["facts"]["auth"] == "session"


@FUZZ
@given(damaged_trees())
def test_damaged_redfish_answers_give_facts_or_typed_errors(case):
    tree, path, damaged = case
    assert_total("redfish read of %s with %s damaged" % (tree, path), read_everything, _served(tree, path, damaged))


@FUZZ
@given(st.sampled_from(TREES), st.sampled_from(("Members", "@odata.id", "Members@odata.nextLink", "@odata.nextLink")),
       st.sampled_from(({"@odata.id": "/redfish/v1/Systems"}, ["x", None], 7, 1e308, "", None, [[[[[]]]]], True)))
def test_collection_links_of_any_type(tree, key, value):
    served = _served(tree, ROOT, json.dumps(DOCUMENTS[tree][ROOT]))
    for collection in ("Systems", "Chassis", "Managers"):
        path = ROOT + "/" + collection
        if path in DOCUMENTS[tree]:
            document = dict(DOCUMENTS[tree][path])
            document[key] = value
            served[path] = json.dumps(document)
    assert_total("collections of %s with %s=%r" % (tree, key, value), read_everything, served)


@FUZZ
@given(st.sampled_from(TREES), st.sampled_from(("yes", ["NoLinks"], {"NoLinks": "1"}, 1e308, None, {"Levels": [True]})))
def test_expand_query_of_any_type(tree, value):
    root = dict(DOCUMENTS[tree][ROOT])
    root["ProtocolFeaturesSupported"] = {"ExpandQuery": value}
    result, _error = assert_total("ExpandQuery=%r" % (value,), read_everything, _served(tree, ROOT, json.dumps(root)))
    assert result is not None and result["facts"]["system"]["id"]
