# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""The report's one error type, shared by its modules (_report, _report_view, _report_formats, _report_i18n)."""

from __future__ import annotations


class ReportError(Exception):
    """A report could not be rendered or written; the message says why and names the file."""
