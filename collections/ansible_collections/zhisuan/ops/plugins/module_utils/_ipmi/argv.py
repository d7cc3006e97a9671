# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The shared IPMI connection argspec and the ipmitool command lines built from it.

The password never appears on a command line (argv is visible in ``ps`` and is returned as ``cmd`` in errors): it
travels in the ``IPMI_PASSWORD`` environment variable of the ipmitool process, which ``-E`` tells ipmitool to read.
"""

from ansible.module_utils.basic import env_fallback

from ansible_collections.zhisuan.ops.plugins.module_utils._runner import DEFAULT_TIMEOUT

TOOL = "ipmitool"
PASSWORD_ENV = "ZHISUAN_BMC_PASSWORD"

# Mirrored 1:1 by plugins/doc_fragments/_ipmi.py.
IPMI_ARGSPEC = {
    "bmc_address": {"type": "str", "required": True},
    "bmc_port": {"type": "int", "default": 623},
    "bmc_username": {"type": "str"},
    "bmc_password": {"type": "str", "no_log": True, "fallback": (env_fallback, [PASSWORD_ENV])},
    "interface": {"type": "str", "default": "lanplus", "choices": ["lanplus", "lan"]},
    "cipher_suite": {"type": "int", "default": 3},
    "ipmitool_path": {"type": "str", "default": "ipmitool"},
    "timeout": {"type": "int", "default": DEFAULT_TIMEOUT},
}


class Connection(object):
    """How to reach one BMC with ipmitool: the options before the command, and the environment."""

    __slots__ = ("program", "address", "port", "username", "password", "interface", "cipher_suite", "timeout")

    def __init__(self, address, port=623, username=None, password=None, interface="lanplus", cipher_suite=3,
                 program=TOOL, timeout=DEFAULT_TIMEOUT):
        self.program = program
        self.address = address
        self.port = port
        self.username = username
        self.password = password
        self.interface = interface
        self.cipher_suite = cipher_suite
        self.timeout = timeout

    @classmethod
    def from_params(cls, params):
        return cls(params["bmc_address"], params["bmc_port"], params["bmc_username"], params["bmc_password"],
                   params["interface"], params["cipher_suite"], params["ipmitool_path"], params["timeout"])

    @property
    def target(self):
        """The BMC as it is named in messages: ``address:port`` (never a credential)."""
        return "%s:%s" % (self.address, self.port)

    def options(self, extra=()):
        """ipmitool's options before the command (``extra``: e.g. ``-v``), without the password."""
        argv = [self.program, "-I", self.interface, "-H", self.address, "-p", str(self.port)]
        if self.interface == "lanplus" and self.cipher_suite is not None:
            # without -C ipmitool 1.8.19 first asks for the cipher suites; BMCs that do not answer that cost 10 s
            argv += ["-C", str(self.cipher_suite)]
        if self.username is not None:
            argv += ["-U", self.username]
        if self.password is not None:
            argv.append("-E")
        return argv + list(extra)

    def env(self):
        """The ipmitool process's extra environment: the password, and UTC so SEL times are printed in UTC."""
        env = {"TZ": "UTC"}
        if self.password is not None:
            env["IPMI_PASSWORD"] = self.password
        return env


def command(conn, args, extra=()):
    """``(argv, env)`` of ``ipmitool <connection options> <args>``."""
    return conn.options(extra) + list(args), conn.env()


# The commands the modules run.
MC_INFO = ("mc", "info")
CHASSIS_STATUS = ("chassis", "status")
POWER_STATUS = ("chassis", "power", "status")
FRU_PRINT = ("fru", "print")
SENSOR = ("sensor",)
SDR_ELIST = ("sdr", "elist")
SEL_ELIST = ("sel", "elist")
# state option of ipmi_power -> the `chassis power` verb
POWER_VERBS = {"on": "on", "soft_off": "soft", "off": "off", "reset": "reset", "cycle": "cycle"}
