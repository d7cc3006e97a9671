# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""What goes over the wire to a Redfish service, without the transport (pure): the base URL of a ``bmc_address``,
what the service root advertises (``$expand``, sessions), the checks on an answer's shape, and the text of a
Redfish error body. ``client.RedfishClient`` is the one seam that sends requests; it uses these."""

import json
import ssl
from urllib.parse import urlsplit

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCAuthError, BMCError, BMCUnreachable

TOOL = "redfish"
ROOT = "/redfish/v1"
EXPAND_QUERY = "$expand=.($levels=1)"
RETRY_STATUSES = (503,)
IDEMPOTENT = ("GET", "HEAD", "DELETE")
MAX_PAGES = 1000
MAX_RETRY_AFTER = 60
MASK = "********"
MAX_DEPTH = 64
AUTH_MODES = ("auto", "session", "basic")
EXPAND_BROKEN = (400, 404, 405, 406, 500, 501)


def base_url(address, port=None):
    """``(base URL, address as shown)`` from ``bmc_address`` (a host, ``host:port``, an IPv6 address, bracketed or
    not, or an http(s) URL).

    Any user:password@ part is dropped. A port written in the address is used unless ``port`` is given: ``port``
    (the module's ``bmc_port``) is only ever set explicitly, so it wins.
    """
    if not isinstance(address, str):
        raise BMCError(TOOL, "bmc_address must be a host name, address or URL, got %r" % (address,))
    text = address.strip()
    if "://" not in text:
        if text.count(":") > 1 and not text.startswith("["):
            text = "[%s]" % text  # a bare IPv6 address
        text = "https://" + text
    try:
        parts = urlsplit(text)
        host, own_port = parts.hostname, parts.port
    except ValueError as exc:
        raise BMCError(TOOL, "bmc_address %r is not a host name, address or URL: %s" % (address, exc))
    if parts.scheme not in ("http", "https") or not host:
        raise BMCError(TOOL, "bmc_address %r is not a host name, address or http(s) URL" % (address,))
    netloc = "[%s]" % host if ":" in host else host
    if port is not None and not (isinstance(port, int) and 0 < port < 65536):
        raise BMCError(TOOL, "bmc_port %r is not a TCP port (1-65535)" % (port,))
    if port or own_port:
        netloc += ":%d" % (port or own_port)
    return "%s://%s" % (parts.scheme, netloc), netloc


def expand_supported(root):
    """Whether the service root advertises ``$expand=.($levels=1)`` (ExpandQuery with NoLinks and Levels)."""
    features = as_dict((root or {}).get("ProtocolFeaturesSupported"))
    expand = as_dict(features.get("ExpandQuery"))
    return expand.get("NoLinks") is True and expand.get("Levels") is True


def sessions_uri(root):
    """The session collection the service root names, or None when it has no SessionService."""
    uri = link_uri(as_dict(as_dict(as_dict(root).get("Links")).get("Sessions")).get("@odata.id"))
    if uri:
        return uri
    if link_uri(as_dict(as_dict(root).get("SessionService")).get("@odata.id")):
        return ROOT + "/SessionService/Sessions"
    return None


def as_dict(value):
    return value if isinstance(value, dict) else {}


def link_uri(value):
    """A link target: a non-empty string starting with ``/`` or ``http``, else None."""
    if isinstance(value, str) and value.strip() and (value.startswith("/") or value.startswith("http")):
        return value.strip()
    return None


def no_constant(name):
    raise ValueError("%s is not a JSON number" % name)


def recordable(exc):
    """Whether a failed read may be noted and passed over (True), or must end the run (auth failure, BMC gone)."""
    return not isinstance(exc, (BMCAuthError, BMCUnreachable))


def with_query(path, query):
    return path + ("&" if "?" in path else "?") + query


def read_error_body(exc):
    try:
        return exc.read()
    except Exception:  # pylint: disable=broad-except
        return b""


def is_tls(reason):
    if isinstance(reason, (ssl.SSLCertVerificationError, ssl.CertificateError)):
        return True
    return isinstance(reason, ssl.SSLError) or "CERTIFICATE_VERIFY_FAILED" in str(reason)


def error_body(document):
    """The text of a Redfish error body that came in place of a resource (whatever its HTTP status), else None.

    An answer is an error body when it carries an ``error`` object, or ``@Message.ExtendedInfo`` without an
    ``@odata.type`` (a resource may annotate itself with messages, but it always says what type it is): some BMCs
    answer a resource they cannot build with HTTP 200 and such a body, which must not be read as the resource."""
    if not isinstance(document, dict):
        return None
    error = document.get("error")
    if isinstance(error, dict):
        extended = error.get("@Message.ExtendedInfo")
    elif "@Message.ExtendedInfo" in document and not document.get("@odata.type"):
        error, extended = {}, document.get("@Message.ExtendedInfo")
    else:
        return None
    texts = [error.get("code"), error.get("message")]
    for item in extended if isinstance(extended, list) else [extended]:
        if isinstance(item, dict):
            texts.extend((item.get("MessageId"), item.get("Message")))
    seen = []
    for value in texts:
        if isinstance(value, str) and value.strip() and value.strip() not in seen:
            seen.append(value.strip())
    return "; ".join(seen)[:300] or "no message"


def redfish_message(payload):
    """The human text of a Redfish error body (``error.message`` and its extended messages), or ''."""
    try:
        document = json.loads(payload.decode("utf-8", "replace")) if payload else None
    except ValueError:
        return ""
    except RecursionError:
        return ""
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return ""
    extended = error.get("@Message.ExtendedInfo")
    texts = [error.get("message")] + [item.get("Message") for item in (extended if isinstance(extended, list) else [])
                                      if isinstance(item, dict)]
    seen = []
    for text in texts:
        if isinstance(text, str) and text and text not in seen:
            seen.append(text)
    return "; ".join(seen)
