# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""``scontrol show node|job|partition`` as an operator pastes it - the multi-line form without ``-o`` - into the
one-line records the ``-o`` parsers read. Pure, standard library only.

The multi-line form (Slurm 17.11 to 24.x; tests/fixtures/slurm holds a 17.11 capture from another project and one of
the lab's real 22.05): a record starts with ``NodeName=`` / ``JobId=`` / ``PartitionName=`` at the start of a line,
its other ``Key=value`` lines are indented (three spaces), records are separated by a blank line; the ``Reason=``
line, when there is one, comes last. The ``-o`` form (one record a line) passes through unchanged, so one reader takes
both. ``records(text)`` returns ``[(first line number, one-line record)]``.
"""

import re

_START = re.compile(r"^(?:NodeName|JobId|PartitionName|ReservationName)=\S")


def records(text):
    """``[(line number of the record's first line, the record as one line)]`` of either form."""
    out = []
    current, first = None, None
    for number, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            if current is not None:
                out.append((first, " ".join(current)))
                current = None
            continue
        if _START.match(line):
            if current is not None:
                out.append((first, " ".join(current)))
            current, first = [line.strip()], number
        elif current is not None and line[:1] in (" ", "\t"):
            current.append(line.strip())
        else:
            # a line outside any record (a banner, a shell prompt, a damaged line): its own record, which the
            # record parser names in a warning
            if current is not None:
                out.append((first, " ".join(current)))
                current = None
            out.append((number, line.strip()))
    if current is not None:
        out.append((first, " ".join(current)))
    return out


def one_line(text):
    """The text with every multi-line record joined into one line (``-o`` form)."""
    return "\n".join(record for dummy, record in records(text))
