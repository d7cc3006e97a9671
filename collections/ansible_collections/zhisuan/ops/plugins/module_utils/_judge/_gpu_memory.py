# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The memory-error checks of one GPU (``MemoryChecks``): ECC mode and counters, row remapping, retired pages.
``gpu.judge_gpu`` documents the thresholds."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge._gpu_base import GpuCheckBase
from ansible_collections.zhisuan.ops.plugins.module_utils._judge._util import evidence_of, fmt, plural

# ECC off is only a finding on datacenter parts; consumer brands ship with it off.
_CONSUMER_BRANDS = frozenset(("geforce", "titan"))


class MemoryChecks(GpuCheckBase):
    """ECC, row remapping and page retirement of one GPU."""

    __slots__ = ()

    # -- memory errors -----------------------------------------------------------------------------------------

    def ecc(self, limits):
        ecc = self.gpu.get("ecc")
        label = self.label
        if not ecc:
            for check_id in ("gpu.ecc.mode", "gpu.ecc.volatile_uncorrectable", "gpu.ecc.aggregate_uncorrectable"):
                self.add(check_id, "skip", message="%s: ECC is not supported or not reported (N/A)" % label,
                         evidence="ecc=N/A")
            return
        current = ecc.get("mode_current")
        pending = ecc.get("mode_pending")
        evidence = evidence_of(("ecc.mode_current", current), ("ecc.mode_pending", pending))
        if current is None:
            self.missing("gpu.ecc.mode", "ecc.mode_current", "ECC mode", expected="enabled")
        elif not current and str(self.gpu.get("brand") or "").lower() in _CONSUMER_BRANDS:
            self.add("gpu.ecc.mode", "skip", observed="disabled",
                     message="%s: ECC is disabled on a consumer GPU (%s brand); not judged" % (label, self.gpu["brand"]),
                     evidence=evidence_of(("brand", self.gpu.get("brand")), ("ecc.mode_current", current)))
        elif not current:
            if pending:
                self.add("gpu.ecc.mode", "warn", observed="disabled", expected="enabled",
                         message="%s: ECC is disabled now and enabled at the next reset: reset the GPU to apply it"
                                 % label, remedy="reset_gpu", evidence=evidence)
            else:
                self.add("gpu.ecc.mode", "warn", observed="disabled", expected="enabled",
                         message="%s: ECC is disabled on a GPU that supports it: memory errors go undetected; "
                                 "enable it (nvidia-smi -e 1) and reset the GPU" % label,
                         remedy="tune", evidence=evidence)
        elif pending is False:
            self.add("gpu.ecc.mode", "warn", observed="enabled", expected="enabled",
                     message="%s: ECC is enabled now but will be disabled at the next reset (pending mode)" % label,
                     remedy="tune", evidence=evidence)
        else:
            self.add("gpu.ecc.mode", "pass", observed="enabled", expected="enabled",
                     message="%s: ECC is enabled" % label, evidence=evidence)

        ecc_off = current is False
        self._ecc_counter("gpu.ecc.volatile_uncorrectable", "volatile_uncorrected",
                          limits["ecc_volatile_uncorrected_max"], "since the driver loaded",
                          "volatile uncorrectable ECC count", "fail", "reset_gpu",
                          "drain the node and reset the GPU; RMA if they come back", ecc_off)
        self._ecc_counter("gpu.ecc.aggregate_uncorrectable", "aggregate_uncorrected",
                          limits["ecc_aggregate_uncorrected_max"], "over its lifetime",
                          "lifetime uncorrectable ECC count", "warn", "monitor",
                          "watch the count and the remapped rows; RMA if it keeps growing", ecc_off)

    def _ecc_counter(self, check_id, key, allowed, when, what, bad_status, remedy, advice, ecc_off):
        """One uncorrectable ECC counter (volatile or aggregate) against its allowance."""
        ecc = self.gpu["ecc"]
        label = self.label
        expected = "== 0" if allowed == 0 else "<= %s" % fmt(allowed)
        count = ecc.get(key)
        corrected = key.replace("uncorrected", "corrected")
        evidence = evidence_of(("ecc." + key, count), ("ecc." + corrected, ecc.get(corrected)))
        if count is None:
            if ecc_off:
                self.add(check_id, "skip", expected=expected,
                         message="%s: ECC is disabled, so no ECC error is counted" % label, evidence=evidence)
            else:
                self.missing(check_id, "ecc." + key, what, expected=expected)
        elif count > allowed:
            self.add(check_id, bad_status, observed=count, expected=expected,
                     message="%s has %s %s: %s" % (label, plural(count, "uncorrectable ECC error"), when, advice),
                     remedy=remedy, evidence=evidence)
        else:
            found = plural(count, "uncorrectable ECC error") if count else "no uncorrectable ECC errors"
            self.add(check_id, "pass", observed=count, expected=expected,
                     message="%s has %s %s" % (label, found, when), evidence=evidence)

    def remap(self, limits):
        rows = self.gpu.get("remapped_rows")
        label = self.label
        if not rows:
            for check_id in ("gpu.remap.pending", "gpu.remap.failure", "gpu.remap.uncorrectable"):
                self.add(check_id, "skip", message=self._repair_skip("row remapping"), evidence="remapped_rows=N/A")
            return
        evidence = evidence_of(("remapped_rows.correctable", rows.get("correctable")),
                               ("remapped_rows.uncorrectable", rows.get("uncorrectable")),
                               ("remapped_rows.pending", rows.get("pending")),
                               ("remapped_rows.failure", rows.get("failure")))
        self._flag("gpu.remap.pending", rows.get("pending"), "remapped_rows.pending", "row remapping pending flag",
                   "has a row remapping pending: drain the node and reset the GPU; the remap completes on reset",
                   "has no row remapping pending", "reset_gpu", evidence)
        self._flag("gpu.remap.failure", rows.get("failure"), "remapped_rows.failure", "row remapping failure flag",
                   "failed to remap a row (no spare rows left in a bank): the memory cannot heal itself any more; "
                   "replace the GPU (RMA)",
                   "has had no row remapping failure", "rma", evidence)

        allowed = limits["remapped_rows_uncorrectable_max"]
        count = rows.get("uncorrectable")
        expected = "<= %s" % fmt(allowed)
        if count is None:
            self.missing("gpu.remap.uncorrectable", "remapped_rows.uncorrectable",
                         "count of rows remapped for uncorrectable errors", expected=expected)
        elif count > allowed:
            self.add("gpu.remap.uncorrectable", "fail", observed=count, expected=expected,
                     message="%s has %s remapped for uncorrectable errors, more than %s: replace the GPU (RMA)"
                             % (label, plural(count, "row"), fmt(allowed)),
                     remedy="rma", evidence=evidence)
        elif self._banks_exhausted(rows, limits, count, evidence):
            return
        else:
            self.add("gpu.remap.uncorrectable", "pass", observed=count, expected=expected,
                     message="%s has %s remapped for uncorrectable errors" % (label, plural(count, "row")),
                     evidence=evidence)

    def _banks_exhausted(self, rows, limits, count, evidence):
        """Fail ``gpu.remap.uncorrectable`` (``rma``) when more banks than allowed have no reserved row left
        (histogram "None"): the next uncorrectable error in such a bank cannot be remapped. True when it failed."""
        banks = rows.get("banks") if isinstance(rows.get("banks"), dict) else {}
        exhausted = banks.get("none")
        allowed = limits["remap_banks_exhausted_max"]
        if not isinstance(exhausted, int) or isinstance(exhausted, bool) or exhausted <= allowed:
            return False
        evidence += "; " + evidence_of(*(("remapped_rows.banks." + key, banks.get(key))
                                         for key in ("max", "high", "partial", "low", "none")))
        self.add("gpu.remap.uncorrectable", "fail", observed="%s with no spare row" % plural(exhausted, "bank"),
                 expected="<= %s banks with no spare row" % fmt(allowed),
                 message="%s has %s with no reserved row left (bank remap availability None; %s remapped for "
                         "uncorrectable errors): the next uncorrectable error in such a bank cannot be remapped; "
                         "drain the node and replace the GPU (RMA)" % (self.label, plural(exhausted, "bank"),
                                                                       plural(count, "row")),
                 remedy="rma", evidence=evidence)
        return True

    def _repair_skip(self, absent):
        """The skip text of a memory-repair mechanism the GPU does not report, told from what it does report (never
        from a guess about its generation, so the remap and retired-page skips of one GPU cannot contradict)."""
        pages = self.gpu.get("retired_pages") or {}
        retires = any(pages.get(key) is not None for key in ("single_bit", "double_bit", "pending"))
        remaps = bool(self.gpu.get("remapped_rows"))
        arch = self.gpu.get("architecture")
        which = "this GPU" if not arch else "this %s GPU" % arch
        if absent == "row remapping" and retires:
            return "%s: row remapping is not reported (N/A); %s retires pages instead (gpu.retired_pages.*)" % (
                self.label, which)
        if absent == "page retirement" and remaps:
            return "%s: page retirement is not reported (N/A); %s remaps rows instead (gpu.remap.*)" % (
                self.label, which)
        return ("%s: neither row remapping nor page retirement is reported (N/A), so the memory repair state of "
                "%s cannot be judged" % (self.label, which))

    def _flag(self, check_id, value, path, what, bad, good, remedy, evidence):
        """A yes/no flag that must be "no" (row remapping pending or failed)."""
        if value is None:
            self.missing(check_id, path, what, expected="no")
        elif value:
            self.add(check_id, "fail", observed="yes", expected="no", message="%s %s" % (self.label, bad),
                     remedy=remedy, evidence=evidence)
        else:
            self.add(check_id, "pass", observed="no", expected="no", message="%s %s" % (self.label, good),
                     evidence=evidence)

    def retired_pages(self, limits):
        pages = self.gpu.get("retired_pages") or {}
        label = self.label
        single = pages.get("single_bit")
        double = pages.get("double_bit")
        pending = pages.get("pending")
        evidence = evidence_of(("retired_pages.single_bit", single), ("retired_pages.double_bit", double),
                               ("retired_pages.pending", pending))
        if pending is None:
            if "retired_pages.pending" in self.unreadable:
                self.missing("gpu.retired_pages.pending", "retired_pages.pending", "page retirement pending flag",
                             expected="no")
            else:
                self.add("gpu.retired_pages.pending", "skip", expected="no",
                         message=self._repair_skip("page retirement"), evidence=evidence)
        elif pending:
            self.add("gpu.retired_pages.pending", "fail", observed="yes", expected="no",
                     message="%s has memory pages pending retirement: drain the node and reset the GPU (or reload "
                             "the driver) so they are retired" % label,
                     remedy="reset_gpu", evidence=evidence)
        else:
            self.add("gpu.retired_pages.pending", "pass", observed="no", expected="no",
                     message="%s has no memory pages pending retirement" % label, evidence=evidence)

        allowed = limits["retired_pages_max"]
        expected = "<= %s" % fmt(allowed)
        if single is None and double is None:
            if "retired_pages.single_bit" in self.unreadable or "retired_pages.double_bit" in self.unreadable:
                self.missing("gpu.retired_pages.count", "retired_pages.single_bit", "retired page count",
                             expected=expected)
            else:
                self.add("gpu.retired_pages.count", "skip", expected=expected,
                         message=self._repair_skip("page retirement"), evidence=evidence)
            return
        total = (single or 0) + (double or 0)
        if total > allowed:
            self.add("gpu.retired_pages.count", "fail", observed=total, expected=expected,
                     message="%s has %s retired (%s single-bit, %s double-bit), more than %s: replace the GPU (RMA)"
                             % (label, plural(total, "memory page"), fmt(single), fmt(double), fmt(allowed)),
                     remedy="rma", evidence=evidence)
        else:
            self.add("gpu.retired_pages.count", "pass", observed=total, expected=expected,
                     message="%s has %s retired" % (label, plural(total, "memory page")), evidence=evidence)
