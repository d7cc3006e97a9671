# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""A Redfish service as the modules see it: one client, the vendor adapter that matches the service, and the
discovered systems, managers and chassis.

Reads of single resources that fail with an HTTP error are not fatal: they are collected in ``errors`` as
``{resource, error}`` (``"HTTP 404"``), and the facts they would have filled stay None. An authentication failure or a
BMC that stops answering is fatal and propagates.
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCError, BMCHTTPError
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.client import RedfishClient
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.wire import TOOL, recordable
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import link, odata_id
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.vendors import select_adapter

MAX_NAMED = 5


def connect(module, **kwargs):
    """A ``RedfishClient`` from the shared connection options of ``module`` (use it in a ``with``)."""
    params = module.params
    return RedfishClient(params["bmc_address"], username=params.get("bmc_username"), password=params.get("bmc_password"),
                         port=params.get("bmc_port"), auth=params.get("auth") or "auto",
                         validate_certs=params.get("validate_certs", True), ca_path=params.get("ca_path"),
                         timeout=params.get("timeout"), warn=module.warn, **kwargs)


def error_text(exc):
    if isinstance(exc, BMCHTTPError) and exc.status is not None:
        return "HTTP %s" % exc.status
    return exc.detail


def is_reference(member):
    return all(key.startswith("@") for key in member)


def last_segment(uri):
    return (uri or "").rstrip("/").rsplit("/", 1)[-1]


class RedfishService(object):
    """``client`` must be open (its service root read)."""

    def __init__(self, client):
        self.client = client
        self.root = client.root or {}
        self.errors = []
        # every single read that failed, as (uri, error text): the members of a collection one by one, where
        # ``errors`` sums them up per collection
        self.unread = []
        self._cache = {}

    # -- reading ------------------------------------------------------------------------------------------------

    def get(self, uri):
        """The resource at ``uri``; any failure is fatal."""
        return self.client.get(uri)

    def try_get(self, uri):
        """The resource at ``uri``, or None (the failure noted in ``errors``)."""
        if not uri:
            return None
        try:
            return self.client.get(uri)
        except BMCError as exc:
            if not recordable(exc):
                raise
            self.record(uri, exc)
            return None

    def first_readable(self, uris):
        """The first of ``uris`` that reads, or None; when none does, the first failure is noted."""
        first = None
        for uri in uris:
            try:
                return self.client.get(uri)
            except BMCError as exc:
                if not recordable(exc):
                    raise
                first = first or (uri, exc)
        if first is not None:
            self.record(*first)
        return None

    def members(self, uri, keep=None):
        """The member resources of the collection at ``uri`` (None when the collection, or every member, cannot be read).

        ``keep(member_uri)`` may skip members before they are read. Members the service did not expand are read one
        by one; those that fail are noted as one ``errors`` entry for the collection."""
        if not uri:
            return None
        try:
            references = self.client.members(uri)
        except BMCError as exc:
            if not recordable(exc):
                raise
            self.record(uri, exc)
            return None
        return self.resolve(references, uri, keep=keep)

    def read_members(self, uri, max_pages):
        """``(members, failure)``: the member resources of the collection at ``uri`` page by page, up to
        ``max_pages`` pages, keeping what was read when a later page fails. ``members`` is None when the collection
        (its first page) cannot be read; ``failure`` is None or ``{"resource", "error"}`` naming the page that
        could not be read (also noted in ``errors``). Members that fail one by one are noted as in ``members``."""
        if not uri:
            return None, None
        try:
            references, failure = self.client.read_members(uri, max_pages=max_pages)
        except BMCError as exc:
            if not recordable(exc):
                raise
            self.record(uri, exc)
            return None, {"resource": uri, "error": error_text(exc)}
        found = self.resolve(references, uri)
        if failure is None:
            return found, None
        page, exc, why = failure
        note = {"resource": page, "error": error_text(exc) if exc is not None else why}
        self.errors.append(dict(note))
        self.unread.append((page, note["error"]))
        return found if found is not None else [], note

    def resolve(self, references, where, keep=None):
        """The resources behind ``references`` (members a service expanded are kept as they are, the others read one
        by one), each once. ``keep(uri)`` may skip some before they are read. Failures are noted as one entry for
        ``where``; when every one fails the answer is None (nothing could be looked at), not an empty list."""
        result, failed, wanted, seen = [], [], 0, set()
        for member in references:
            if not isinstance(member, dict) or not isinstance(member.get("@odata.id"), str):
                continue
            if member["@odata.id"] in seen or (keep is not None and not keep(member["@odata.id"])):
                continue
            seen.add(member["@odata.id"])
            wanted += 1
            if not is_reference(member):
                result.append(member)
                continue
            try:
                result.append(self.client.get(member["@odata.id"]))
            except BMCError as exc:
                if not recordable(exc):
                    raise
                failed.append((member["@odata.id"], error_text(exc)))
        self._record_members(where, failed, wanted)
        return None if failed and len(failed) == wanted else result

    def record(self, uri, exc):
        self.errors.append({"resource": uri, "error": error_text(exc)})
        self.unread.append((uri, error_text(exc)))

    def _record_members(self, uri, failed, wanted):
        self.unread.extend(failed)
        if len(failed) == 1:
            self.errors.append({"resource": failed[0][0], "error": failed[0][1]})
        elif failed:
            kinds = []
            for _uri, text in failed:
                if text not in kinds:
                    kinds.append(text)
            counts = ", ".join("%s for %d" % (text, sum(1 for item in failed if item[1] == text)) for text in kinds)
            names = [last_segment(item[0]) for item in failed[:MAX_NAMED]]
            more = ", ..." if len(failed) > MAX_NAMED else ""
            self.errors.append({"resource": uri, "error": "%s of %d members: %s%s" % (counts, wanted, ", ".join(names), more)})

    # -- discovery ------------------------------------------------------------------------------------------------

    def _once(self, key, read):
        if key not in self._cache:
            self._cache[key] = read()
        return self._cache[key]

    @property
    def systems(self):
        return self._once("systems", lambda: self.members(link(self.root, "Systems")) or [])

    @property
    def managers(self):
        return self._once("managers", lambda: self.members(link(self.root, "Managers")) or [])

    @property
    def chassis(self):
        """The chassis members, None when the service has no readable Chassis collection."""
        return self._once("chassis", lambda: self.members(link(self.root, "Chassis")))

    @property
    def adapter(self):
        """The vendor adapter, from the service root and the systems (the chassis, whose ``Manufacturer`` names the
        maker too, when no system can be read)."""
        return self._once("adapter", lambda: select_adapter(self.root, self.systems or self.chassis or []))

    def readable_system(self):
        """The host's ComputerSystem, or None when the service lists none that can be read (noted in ``errors``:
        the facts are then read from the Chassis side). Authentication failures and a BMC gone stay fatal."""
        try:
            return self.system
        except BMCError as exc:
            if not recordable(exc):
                raise
            where = exc.resource or "/redfish/v1 (no Systems link)"
            if not any(item["resource"] == where for item in self.errors):
                self.errors.append({"resource": where, "error": "no readable ComputerSystem"})
                self.unread.append((where, "no readable ComputerSystem"))
            return None

    @property
    def system(self):
        """The host's ComputerSystem, as the adapter picks it. Fatal when the service lists none."""
        system = self._once("system", lambda: self.adapter.primary_system(self.systems))
        if system is None:
            raise BMCError(TOOL, "the BMC at %s lists no readable ComputerSystem under %s"
                           % (self.client.address, link(self.root, "Systems")), resource=link(self.root, "Systems"))
        return system

    def manager_of(self, system):
        """The manager that manages ``system`` (its ``Links.ManagedBy``), else the first manager, else None."""
        wanted = [item.get("@odata.id") for item in ((system or {}).get("Links") or {}).get("ManagedBy") or []
                  if isinstance(item, dict)]
        for manager in self.managers:
            if odata_id(manager) in wanted:
                return manager
        return self.managers[0] if self.managers else None

    def log_services_of(self, owner, keep=None):
        """The LogService resources of a manager or system (None when it has no readable LogServices)."""
        return self.members(link(owner, "LogServices"), keep=keep)
