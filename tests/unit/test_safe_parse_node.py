# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Python 3.6 stand-ins of _safe_parse (str.isascii, datetime.fromisoformat), also run under python3.6 by
tests/node_python.py: this file keeps to 3.6 syntax and imports nothing but pytest and the module_utils."""

import datetime
import sys

import pytest

from ansible_collections.zhisuan.ops.plugins.module_utils import _safe_parse
from ansible_collections.zhisuan.ops.plugins.module_utils._gpu.reset import ResetRefused, select
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import parse_time

UTC = datetime.timezone.utc
# (text, the datetime Python 3.7+'s fromisoformat gives): the forms the node-side readers pass it
ISO_FORMS = [
    ("2024-05-01", datetime.datetime(2024, 5, 1)),
    ("2024-05-01T10:00", datetime.datetime(2024, 5, 1, 10, 0)),
    ("2024-05-01T10:00:07", datetime.datetime(2024, 5, 1, 10, 0, 7)),
    ("2024-05-01 10:00:07", datetime.datetime(2024, 5, 1, 10, 0, 7)),
    ("2024-05-01T10:00:07.250", datetime.datetime(2024, 5, 1, 10, 0, 7, 250000)),
    ("2024-05-01T10:00:07.123456", datetime.datetime(2024, 5, 1, 10, 0, 7, 123456)),
    ("2024-05-01T10:00:07+00:00", datetime.datetime(2024, 5, 1, 10, 0, 7, tzinfo=UTC)),
    ("2024-05-01T10:00:07+08:00",
     datetime.datetime(2024, 5, 1, 10, 0, 7, tzinfo=datetime.timezone(datetime.timedelta(hours=8)))),
    ("2024-05-01T10:00:07.500-05:30",
     datetime.datetime(2024, 5, 1, 10, 0, 7, 500000,
                       tzinfo=datetime.timezone(-datetime.timedelta(hours=5, minutes=30)))),
]
NOT_ISO = ["", "yesterday", "2024-13-01T10:00:00", "2024-02-30", "2024-05-01T25:00:00", "2024/05/01",
           "2024-05-01T10:00:07+0800x", "20240501"]


@pytest.mark.parametrize("text,expected", ISO_FORMS)
def test_fromisoformat_py36_reads_what_fromisoformat_reads(text, expected):
    assert _safe_parse.fromisoformat_py36(text) == expected
    assert _safe_parse.fromisoformat(text) == expected
    assert _safe_parse.fromisoformat(text).utcoffset() == expected.utcoffset()


@pytest.mark.parametrize("text", NOT_ISO)
def test_fromisoformat_py36_refuses_what_fromisoformat_refuses(text):
    with pytest.raises(ValueError):
        _safe_parse.fromisoformat_py36(text)
    if sys.version_info < (3, 11):  # 3.11 reads more forms (20240501); 3.7-3.10 refuse what the stand-in refuses
        with pytest.raises(ValueError):
            _safe_parse.fromisoformat(text)


def test_iso_time_and_redfish_times_on_this_python():
    assert _safe_parse.iso_time("2024-05-01T10:00:00Z") == datetime.datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert _safe_parse.iso_time("2024-05-01 18:00:00+08:00") == datetime.datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert _safe_parse.iso_time("not a time") is None
    assert parse_time("2024-05-01T18:00:00+08:00") == datetime.datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert parse_time("2024-05-01T10:00:00Z") == datetime.datetime(2024, 5, 1, 10, tzinfo=UTC)


@pytest.mark.parametrize("text,expected", [
    ("0", True), ("0123", True), ("9" * 40, True), ("", False), (" 1", False), ("1\n", False), ("-1", False),
    ("1.0", False), ("\u00b2", False), ("\u0663", False), ("\uff11", False),
])
def test_ascii_digits_is_isascii_and_isdigit(text, expected):
    assert _safe_parse.ascii_digits(text) is expected
    if hasattr(str, "isascii"):
        assert (text.isascii() and text.isdigit()) is expected
    assert _safe_parse.is_ascii_digits(text) is (expected and len(text) <= _safe_parse.MAX_DIGITS)


def test_gpu_reset_selects_by_ascii_index_only():
    facts = {"gpus": [{"index": 0, "pci_bus_id": "0000:17:00.0"}, {"index": 1, "pci_bus_id": "0000:2A:00.0"}]}
    assert [gpu["index"] for dummy, gpu in select(facts, ["1", "00000000:17:00.0"])] == [0, 1]
    with pytest.raises(ResetRefused) as refused:  # ARABIC-INDIC DIGIT ONE: int() reads it as 1, it is no index
        select(facts, ["\u0661"])
    assert "not on this node" in str(refused.value)
