# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""Which check families each run has, and which of them a run selects: the one place that maps runs to families.

Families are chosen two ways that end in the same list: ``--tags <family>`` (``ansible_run_tags`` /
``ansible_skip_tags``), or the variables (``zhisuan_families`` in any run, ``zhisuan_acceptance_families``,
``zhisuan_diag_level`` / ``zhisuan_diag_families``). Tags narrow what the variables select. A selection that
matches nothing is an error that says what was asked and what the run has. The opt-in families (``OPT_IN``: the
cluster platform and the job) are never selected by default: a tag or a variable names them (``zhisuan_job`` the
job), and a tag naming one selects it whatever the variables list.
"""

from __future__ import annotations

from ansible_collections.zhisuan.ops.plugins.module_utils._family import table as family_table

# Every run's families, in the order the run checks them (and the record lists them): the family table's.
RUN_FAMILIES = dict((kind, family_table.run_families(kind)) for kind in family_table.RUNS)

# Families a run has but selects only when they are named (--tags or a family variable; job also by zhisuan_job):
# the cluster platform needs the site's scheduler, the job family a job (docs/platform.md, docs/jobs.md).
OPT_IN = dict((kind, family_table.opt_in(kind)) for kind in family_table.RUNS if family_table.opt_in(kind))
# A family that cannot run without a variable: selecting it without the variable is an error.
REQUIRES = {"job": ("zhisuan_job", "-e zhisuan_job=<job id>")}

# The run-specific family variable of a run (zhisuan_families works in every run and wins).
RUN_VARIABLES = {"acceptance": "zhisuan_acceptance_families", "diagnose": "zhisuan_diag_families"}

# Diagnosis levels (O&M reference architecture: presence, basic information, connectivity, PCIe bandwidth, ECC,
# memory, stress): the families each runs and the dcgmi diag level. ``custom``: zhisuan_diag_families at
# zhisuan_dcgm_level (default 1).
DIAG_LEVELS = {
    "quick": {"families": ("gpu", "xid", "dcgm"), "dcgm_level": 1},
    "standard": {"families": ("gpu", "xid", "dcgm"), "dcgm_level": 2},
    "deep": {"families": ("gpu", "xid", "dcgm", "burn"), "dcgm_level": 3},
    "custom": {"families": ("gpu", "xid"), "dcgm_level": 1},
}

# The runs site.yml chains: a tag of one of them is not an error in the others (that run is skipped instead).
SITE_KINDS = ("delivery", "burnin", "acceptance")

# Tags Ansible itself gives a meaning to; they select no family.
_NEUTRAL_TAGS = frozenset(("all", "always", "tagged"))

ALL_FAMILIES = tuple(sorted(set(family for families in RUN_FAMILIES.values() for family in families)))


class SelectionError(ValueError):
    """The run's family selection is empty or names something that is not a family of the run."""


def _names(value, where):
    """A list of family names from a list or a comma-separated string (an AWX survey's text answer)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",")]
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
        raise SelectionError("%s must be a list of family names, got %r" % (where, value))
    return [item.strip() for item in value if item.strip()]


def _ordered(kind, names):
    wanted = set(names)
    return [family for family in RUN_FAMILIES[kind] if family in wanted]


def unknown_families(kind, names):
    """The names in ``names`` that are not families of the ``kind`` run (in their given order)."""
    known = set(RUN_FAMILIES[kind])
    return [name for name in names if name not in known]


def variable_families(kind, variables):
    """``(name of the variable, families)`` the variables choose for a run, before tags; ``(None, None)`` = all.

    ``variables`` is a mapping of the inventory/extra variables (missing keys = not set). Raises SelectionError for a
    diagnosis level that does not exist.
    """
    if variables.get("zhisuan_families") not in (None, "", []):
        return "zhisuan_families", _names(variables["zhisuan_families"], "zhisuan_families")
    if kind == "diagnose":
        level = variables.get("zhisuan_diag_level") or "quick"
        if not isinstance(level, str) or level not in DIAG_LEVELS:
            raise SelectionError("zhisuan_diag_level must be one of %s, got %r" % (", ".join(DIAG_LEVELS), level))
        # -e zhisuan_job=<id> adds the job family to the level's (diagnose.yml reads the job's logs first)
        job = ["job"] if variables.get("zhisuan_job") not in (None, "") else []
        if level == "custom" and variables.get("zhisuan_diag_families") not in (None, "", []):
            return "zhisuan_diag_families", _names(variables["zhisuan_diag_families"], "zhisuan_diag_families") + job
        return "zhisuan_diag_level=%s" % level + (" and zhisuan_job" if job else ""), list(DIAG_LEVELS[level]["families"]) + job
    name = RUN_VARIABLES.get(kind)
    if name and variables.get(name) not in (None, "", []):
        return name, _names(variables[name], name)
    return None, None


def dcgm_level(kind, variables):
    """The dcgmi diag level of a run: the diagnosis level's, else zhisuan_dcgm_level, else 3 for acceptance, 1."""
    if kind == "diagnose":
        level = variables.get("zhisuan_diag_level") or "quick"
        if isinstance(level, str) and level != "custom" and level in DIAG_LEVELS:
            return DIAG_LEVELS[level]["dcgm_level"]
    if variables.get("zhisuan_dcgm_level") not in (None, ""):
        return variables["zhisuan_dcgm_level"]
    return 3 if kind == "acceptance" else 1


def select_families(kind, run_tags=None, skip_tags=None, variables=None, site=False):
    """The families a run checks, from its tags and its variables; raises SelectionError when that is nothing.

    Returns ``{"families": [...], "source": text, "dcgm_level": n, "skip": bool}``. ``skip`` is true only inside
    site.yml (``site``), for a run none of whose families the tags name while another run of the site does.
    """
    if kind not in RUN_FAMILIES:
        raise SelectionError("unknown run kind %r (known: %s)" % (kind, ", ".join(sorted(RUN_FAMILIES))))
    variables = dict(variables or {})
    run_families = list(RUN_FAMILIES[kind])
    tags = [tag for tag in _names(run_tags, "--tags") or [] if tag not in _NEUTRAL_TAGS]
    skipped = set(_names(skip_tags, "--skip-tags") or [])
    var_name, chosen = variable_families(kind, variables)
    # names a variable gives that are not this run's families are the node's inventory mistake: preflight reports
    # them on the node; here they select nothing
    # without a variable: every family, less the opt-in ones unless the tags name them
    opt_in = OPT_IN.get(kind, ())
    selected = (_ordered(kind, chosen) if chosen is not None
                else [family for family in run_families if family not in opt_in or family in tags])
    source = var_name or "every family of the %s run" % kind
    if tags:
        site_families = set(family for other in SITE_KINDS for family in RUN_FAMILIES[other]) if site else set()
        strangers = [tag for tag in tags if tag not in run_families and tag not in site_families]
        if strangers:
            raise SelectionError(
                "--tags %s: %s not a family of the %s run (its families: %s)"
                % (",".join(tags), ", ".join(strangers) + (" is" if len(strangers) == 1 else " are"), kind,
                   ", ".join(run_families)))
        # an opt-in family named by a tag is selected even where a variable lists the others (it is never in a
        # default list: the lab's zhisuan_acceptance_families does not forbid --tags slurm)
        selected = [family for family in run_families
                    if family in tags and (family in selected or family in opt_in)]
        source = "--tags %s" % ",".join(tags) + (" within %s" % var_name if var_name else "")
    if skipped:
        selected = [family for family in selected if family not in skipped]
        source += ", --skip-tags %s" % ",".join(sorted(skipped))
    for family in selected:
        if family in REQUIRES and variables.get(REQUIRES[family][0]) in (None, ""):
            raise SelectionError("the %s family of the %s run needs %s (%s selects it)" % (family, kind, REQUIRES[family][1], source))
    result = {"families": selected, "source": source, "dcgm_level": dcgm_level(kind, variables), "skip": False}
    if selected:
        return result
    if site and tags and not [tag for tag in tags if tag in run_families]:
        result["skip"] = True
        return result
    raise SelectionError(
        "the family selection of the %s run is empty: %s selects none of its families (%s)%s"
        % (kind, source, ", ".join(run_families),
           "; %s = %s" % (var_name, ", ".join(chosen) or "[]") if var_name and chosen is not None else ""))
