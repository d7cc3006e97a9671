# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this plugin_utils file is not part of the collection's public API and may change without notice.

"""THE one HTTP seam of the controller's plugins to the monitoring stack (a Pushgateway, Alertmanager, a findings
webhook), over Ansible's ``open_url`` machinery (``ansible.module_utils.urls.Request``), like the Redfish client
(module_utils/_redfish/client.py) is for BMCs: every request has a timeout, certificates are checked unless the
caller says not (``validate_certs`` defaults to true), a CA file can be given, and an answer is read to a bound.

Errors are ``HTTPError`` naming the service, the method, the URL (without any user:password part) and the reason;
the body of an error answer is kept short. Credentials in a URL are sent as basic auth, never echoed.
"""

from __future__ import annotations

import json
from urllib.error import HTTPError as UrlHTTPError
from urllib.error import URLError
from urllib.parse import urlsplit, urlunsplit

from ansible.module_utils.urls import Request

MAX_ANSWER = 4 * 1024 * 1024
DEFAULT_TIMEOUT = 10


class HTTPError(Exception):
    """A request that did not succeed. ``status`` is the HTTP status (None: no answer)."""

    def __init__(self, service, message, status=None):
        super(HTTPError, self).__init__("%s: %s" % (service, message))
        self.service = service
        self.status = status


def shown(url):
    """The URL as it may be shown: any user:password@ part dropped."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def join(base, path):
    return base.rstrip("/") + "/" + path.lstrip("/")


def request(service, method, url, body=None, content_type=None, timeout=DEFAULT_TIMEOUT, validate_certs=True,
            ca_path=None, headers=None):
    """Send one request; ``(status, answer bytes)``. ``body``: bytes, str, or anything JSON can write."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise HTTPError(service, "URL %r cannot be read: %s" % (shown(url), exc))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HTTPError(service, "URL %r is not an http(s) URL" % (shown(url),))
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise HTTPError(service, "the timeout must be a positive number of seconds, got %r" % (timeout,))
    all_headers = dict(headers or {})
    data = body
    if body is not None and not isinstance(body, (bytes, str)):
        data = json.dumps(body, sort_keys=True)
        content_type = content_type or "application/json"
    if isinstance(data, str):
        data = data.encode("utf-8")
    if content_type:
        all_headers["Content-Type"] = content_type
    what = "%s %s" % (method, shown(url))
    try:
        answer = Request().open(method, shown(url), data=data, headers=all_headers, timeout=timeout,
                                validate_certs=validate_certs, ca_path=ca_path,
                                url_username=parts.username, url_password=parts.password,
                                force_basic_auth=bool(parts.username))
        text = answer.read(MAX_ANSWER + 1)
        status = answer.getcode()
    except UrlHTTPError as exc:
        try:
            detail = exc.read(300).decode("utf-8", "replace").strip()
        except Exception:  # pylint: disable=broad-except
            detail = ""
        raise HTTPError(service, "%s answered HTTP %s%s" % (what, exc.code, (": " + detail) if detail else ""),
                        status=exc.code)
    except URLError as exc:
        raise HTTPError(service, "%s failed: %s" % (what, exc.reason))
    except (OSError, ValueError) as exc:  # timeouts (socket.timeout is an OSError), a refused connection
        raise HTTPError(service, "%s failed: %s" % (what, exc))
    if len(text) > MAX_ANSWER:
        raise HTTPError(service, "%s answered more than %d bytes" % (what, MAX_ANSWER), status=status)
    return status, text


def request_json(service, method, url, body=None, **kwargs):
    """``request`` whose answer is JSON (None for an empty answer)."""
    status, text = request(service, method, url, body=body, **kwargs)
    if not text.strip():
        return status, None
    try:
        return status, json.loads(text.decode("utf-8"))
    except ValueError as exc:
        raise HTTPError(service, "%s %s answered what is not JSON: %s" % (method, shown(url), exc), status=status)
