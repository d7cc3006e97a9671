# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Typed errors raised in module_utils and turned into fail_json (or an ``error`` check) once at the edge."""


class ZhisuanError(Exception):
    """Base class. ``tool`` names the program or data source, ``detail`` says what was wrong."""

    kind = "error"
    # attributes passed on by as_dict() when they are set
    fields = ("cmd", "rc", "stdout", "stderr")
    # the message is "<tool>: <detail>"; False for errors whose detail already says all (a module option)
    prefixed = True

    def __init__(self, tool, detail, cmd=None, rc=None, stdout=None, stderr=None, result=None):
        self.tool = tool
        self.detail = detail
        self.cmd = cmd
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        # what the module had done or read before it failed (changed, diff, node, ...): returned with the failure by
        # the module edge (_base.run_module), never part of as_dict()
        self.result = result
        super().__init__(self.message)

    @property
    def message(self):
        if not self.prefixed:
            return self.detail
        return "%s: %s" % (self.tool, self.detail)

    def as_dict(self):
        """Fields for fail_json / a check's evidence (never contains secrets: argv only, no env)."""
        result = {"error_kind": self.kind, "tool": self.tool, "msg": self.message}
        for key in self.fields:
            value = getattr(self, key)
            if value is not None:
                result[key] = value
        return result


class OptionError(ZhisuanError):
    """A module option that the argspec cannot check (a range, a pattern, a path on the node, a combination with its
    own wording). ``tool`` names the option; the message is the detail alone."""

    kind = "bad_option"
    prefixed = False


class Refused(ZhisuanError):
    """A guard refused the change asked for and the task asked to fail then (``strict``, or a state that cannot be
    reached from the one read). The message is the detail alone; ``result`` carries what was read."""

    kind = "refused"
    prefixed = False


class MissingLibrary(ZhisuanError):
    """A Python library the module needs is not installed where it runs; ``tool`` names it, the message is Ansible's
    ``missing_required_lib`` text."""

    kind = "missing_library"
    prefixed = False


class ToolNotFound(ZhisuanError):
    kind = "not_found"


class ToolTimeout(ZhisuanError):
    kind = "timed_out"


class ToolFailed(ZhisuanError):
    kind = "failed"


class ToolOutputTooLarge(ZhisuanError):
    """A program printed more than its output cap (``_runner.MAX_OUTPUT``, or the module's ``max_output``): it was
    stopped (process group killed) before its output could cost the node more memory. ``limit`` is the cap in bytes;
    ``stdout``/``stderr`` hold the clipped head of what it printed."""

    kind = "output_too_large"
    fields = ZhisuanError.fields + ("limit",)

    def __init__(self, tool, detail, limit=None, **kwargs):
        self.limit = limit
        super().__init__(tool, detail, **kwargs)


class ParseError(ZhisuanError):
    kind = "unparsable"


class BMCError(ZhisuanError):
    """A BMC did not do what was asked. ``tool`` is the protocol (``redfish``), ``detail`` what went wrong.

    ``status`` is the HTTP status when there was one, ``resource`` the path asked for. Neither the detail nor
    these fields ever carry a password or a session token.
    """

    kind = "bmc_error"
    fields = ZhisuanError.fields + ("status", "resource")

    def __init__(self, tool, detail, status=None, resource=None, **kwargs):
        self.status = status
        self.resource = resource
        super().__init__(tool, detail, **kwargs)


class BMCAuthError(BMCError):
    """The BMC refused the credentials (HTTP 401/403, or a session that could not be created)."""

    kind = "auth_failed"


class BMCUnreachable(BMCError):
    """No answer: connection refused or timed out, name not resolved, or the TLS certificate not trusted."""

    kind = "unreachable"


class BMCHTTPError(BMCError):
    """The BMC answered with an HTTP error status (other than an authentication failure)."""

    kind = "http_error"
