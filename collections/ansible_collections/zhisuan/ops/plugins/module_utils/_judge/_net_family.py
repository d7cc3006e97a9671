# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The judge registry's entry points for the network families (``nic``, ``rdma_ports``, ``cabling``):
``(host, facts, ctx) -> (None, checks)`` and ``(facts, profile, ctx) -> summary``, where ``facts`` is net_info's
``net`` and ``ctx`` the judge Context (``expected`` is ``zhisuan_expected``, whose ``net`` part is used;
``thresholds`` is ``zhisuan_thresholds.net``; ``extra["plan"]`` the loaded cabling plan)."""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._judge import _cabling, _rdma, net


def _net_expected(ctx):
    expected = getattr(ctx, "expected", None) or {}
    return expected.get("net") or {}


def nic_rules(host, facts, ctx):
    return None, net.judge_nic(host, facts, expected=_net_expected(ctx), thresholds=getattr(ctx, "thresholds", None))


def nic_summary(facts, profile, ctx):
    return net.summarize_net(facts)


def rdma_rules(host, facts, ctx):
    return None, _rdma.judge_rdma_ports(host, (facts or {}).get("ib"), expected=_net_expected(ctx),
                                        thresholds=getattr(ctx, "thresholds", None))


def rdma_summary(facts, profile, ctx):
    return _rdma.summarize_rdma((facts or {}).get("ib"))


def cabling_rules(host, facts, ctx):
    return None, _cabling.judge_cabling(host, facts, (getattr(ctx, "extra", None) or {}).get("plan"))


def cabling_summary(facts, profile, ctx):
    return dict((port, "%s %s" % (item.get("switch"), item.get("switch_port")))
                for port, item in sorted(((facts or {}).get("lldp") or {}).items()))
