# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""THE one HTTP seam to a Redfish service, over Ansible's ``open_url`` machinery (``ansible.module_utils.urls``).

Every request of every Redfish module goes through ``RedfishClient.request``: authentication (a session with
``X-Auth-Token``, deleted again on exit, or basic), certificate checks (``validate_certs`` true by default, a
``ca_path`` for a BMC's own CA), a timeout, retries with backoff on connection errors and on HTTP 503, paging over
``Members@odata.nextLink`` and ``$expand`` where the service root says it supports it. Failures are typed
``BMCError`` subclasses whose text never contains the password or the session token.

Requests go through ``urls.Request``, the class ``open_url`` is made of, with one TLS context per client: building a
context loads the system CA store (some 35 ms), which ``open_url`` would do again for every request of the hundreds
one inventory takes.
"""

from __future__ import annotations

import http.client
import json
import ssl
import time
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit

from ansible.module_utils.urls import ConnectionError as UrlsConnectionError
from ansible.module_utils.urls import Request, make_context

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCAuthError, BMCError, BMCHTTPError, BMCUnreachable

TOOL = "redfish"
ROOT = "/redfish/v1"
EXPAND_QUERY = "$expand=.($levels=1)"
RETRY_STATUSES = (503,)
IDEMPOTENT = ("GET", "HEAD", "DELETE")
MAX_PAGES = 1000
MAX_RETRY_AFTER = 60
MASK = "********"


def base_url(address, port=None):
    """``(base URL, address as shown)`` from ``bmc_address`` (a host, ``host:port``, an IPv6 address or an http(s) URL).

    Any user:password@ part is dropped; ``port`` overrides a port in the address.
    """
    text = (address or "").strip()
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
    if port or own_port:
        netloc += ":%d" % (port or own_port)
    return "%s://%s" % (parts.scheme, netloc), netloc


def expand_supported(root):
    """Whether the service root advertises ``$expand=.($levels=1)`` (ExpandQuery with NoLinks and Levels)."""
    features = (root or {}).get("ProtocolFeaturesSupported") or {}
    expand = features.get("ExpandQuery") or {}
    return bool(expand.get("NoLinks")) and bool(expand.get("Levels"))


def sessions_uri(root):
    """The session collection the service root names, or None when it has no SessionService."""
    link = ((root or {}).get("Links") or {}).get("Sessions") or {}
    if link.get("@odata.id"):
        return link["@odata.id"]
    if ((root or {}).get("SessionService") or {}).get("@odata.id"):
        return ROOT + "/SessionService/Sessions"
    return None


def recordable(exc):
    """Whether a failed read may be noted and passed over (True), or must end the run (auth failure, BMC gone)."""
    return not isinstance(exc, (BMCAuthError, BMCUnreachable))


def with_query(path, query):
    return path + ("&" if "?" in path else "?") + query


class Response(object):
    """One HTTP answer: ``status``, ``headers`` (a name → value dict, lower-case names) and JSON ``data``."""

    def __init__(self, method, path, status, headers, data):
        self.method = method
        self.path = path
        self.status = status
        self.headers = headers
        self.data = data

    def header(self, name):
        return self.headers.get(name.lower())


class RedfishClient(object):
    """A connection to one BMC. Use it as a context manager: entering reads the service root and logs in,
    leaving deletes the session.

    ``warn`` receives plain-text warnings (never with secrets); ``sleep`` is the pause between retries.
    """

    def __init__(self, address, username=None, password=None, port=None, auth="session", validate_certs=True,
                 ca_path=None, timeout=30, retries=3, backoff=1.0, warn=None, sleep=None):
        self.base_url, self.address = base_url(address, port)
        self.username = username
        self.password = password
        self.auth = auth
        self.validate_certs = validate_certs
        self.ca_path = ca_path
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._warn = warn
        self._sleep = sleep if sleep is not None else time.sleep
        self.token = None
        self.session_uri = None
        self.auth_used = None
        self.root = None
        self.can_expand = False
        self._context = None

    # -- life cycle -------------------------------------------------------------------------------------------

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, exc_type, exc, traceback):
        self.close()
        return False

    def open(self):
        """Read the service root and authenticate. Returns the service root."""
        if self.base_url.startswith("http://"):
            self.warn("%s is reached over plain HTTP: the credentials travel unencrypted" % self.address)
        try:
            self.root = self.request("GET", ROOT, authenticate=False).data
        except BMCAuthError:
            if self.username is None:
                raise
            self.auth_used = "basic"
            self.root = self.request("GET", ROOT).data
        if not isinstance(self.root, dict):
            raise BMCError(TOOL, "GET %s on %s did not return a Redfish service root" % (ROOT, self.address), resource=ROOT)
        self.can_expand = expand_supported(self.root)
        if self.username is None:
            self.auth_used = None
        elif self.auth == "session":
            self._login()
        else:
            self.auth_used = "basic"
        return self.root

    def _login(self):
        uri = sessions_uri(self.root)
        if uri is None:
            self.warn("the BMC at %s has no SessionService; using basic authentication" % self.address)
            self.auth_used = "basic"
            return
        body = {"UserName": self.username, "Password": self.password or ""}
        try:
            response = self.request("POST", uri, body=body, authenticate=False)
        except BMCHTTPError as exc:
            if exc.status not in (404, 405, 501):
                raise
            self.warn("the BMC at %s refused to create a session (HTTP %s on POST %s); using basic authentication"
                      % (self.address, exc.status, uri))
            self.auth_used = "basic"
            return
        token = response.header("X-Auth-Token")
        if not token:
            raise BMCAuthError(TOOL, "the BMC at %s created a session but returned no X-Auth-Token" % self.address,
                               status=response.status, resource=uri)
        self.token = token
        location = response.header("Location") or (response.data or {}).get("@odata.id")
        self.session_uri = self.path_of(location) if location else None
        self.auth_used = "session"

    def close(self):
        """Delete the session, if one was created. A failure to delete is a warning, not an error."""
        if self.token is None:
            return
        try:
            if self.session_uri:
                self.request("DELETE", self.session_uri)
        except BMCError as exc:
            self.warn("could not delete the Redfish session on %s: %s" % (self.address, exc.detail))
        finally:
            self.token = None
            self.session_uri = None

    # -- requests ---------------------------------------------------------------------------------------------

    def get(self, path):
        """The JSON document at ``path`` (a dict). Raises a BMCError subclass."""
        data = self.request("GET", path).data
        if not isinstance(data, dict):
            raise BMCError(TOOL, "GET %s returned no JSON object" % path, resource=path)
        return data

    def post(self, path, body, headers=None):
        return self.request("POST", path, body=body, headers=headers)

    def patch(self, path, body, headers=None):
        return self.request("PATCH", path, body=body, headers=headers)

    def members(self, path, expand=True):
        """Every member of the collection at ``path``: expanded resources where the service expanded them,
        ``{"@odata.id": ...}`` references otherwise. Follows ``Members@odata.nextLink`` (and OData's
        ``@odata.nextLink``); a member repeated on a later page is listed once."""
        uri = with_query(path, EXPAND_QUERY) if expand and self.can_expand else path
        seen, found, result = set(), set(), []
        while uri and uri not in seen and len(seen) < MAX_PAGES:
            seen.add(uri)
            page = self.get(uri)
            for member in page.get("Members") or []:
                if not isinstance(member, dict) or not member.get("@odata.id"):
                    continue
                if member["@odata.id"] in found:
                    continue
                found.add(member["@odata.id"])
                result.append(member)
            uri = page.get("Members@odata.nextLink") or page.get("@odata.nextLink")
        return result

    def request(self, method, path, body=None, headers=None, authenticate=True):
        """Send one request (with retries) and return its ``Response``. HTTP errors and connection failures
        raise ``BMCAuthError``, ``BMCHTTPError`` or ``BMCUnreachable``."""
        url = self.url(path)
        path = self.path_of(path)
        send = {"Accept": "application/json", "OData-Version": "4.0"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            send["Content-Type"] = "application/json"
        if authenticate and self.token:
            send["X-Auth-Token"] = self.token
        send.update(headers or {})
        basic = authenticate and self.token is None and self.username is not None
        attempt = 0
        while True:
            try:
                answer = Request().open(method, url, data=data, headers=send, timeout=self.timeout,
                                        url_username=self.username if basic else None,
                                        url_password=(self.password or "") if basic else None,
                                        force_basic_auth=basic, follow_redirects="safe", use_netrc=False,
                                        context=self._tls_context())
                return self._response(method, path, answer.status, answer.headers, answer.read())
            except HTTPError as exc:
                payload = _read(exc)
                if exc.code in RETRY_STATUSES and attempt < self.retries:
                    self._pause(attempt, exc.headers)
                    attempt += 1
                    continue
                raise self._http_error(method, path, exc.code, payload)
            except (URLError, UrlsConnectionError, OSError, http.client.HTTPException) as exc:
                reason = getattr(exc, "reason", exc)
                if _is_tls(reason):
                    raise BMCUnreachable(TOOL, self._scrub(
                        "the TLS certificate of %s could not be verified (%s); give the BMC's CA certificate in "
                        "ca_path, or set validate_certs=false" % (self.base_url, reason)), resource=path)
                if attempt < self.retries and (method in IDEMPOTENT or isinstance(reason, ConnectionRefusedError)):
                    self._pause(attempt, None)
                    attempt += 1
                    continue
                raise BMCUnreachable(TOOL, self._scrub("%s %s on %s failed: %s" % (method, path, self.address, reason)),
                                     resource=path)

    # -- helpers ----------------------------------------------------------------------------------------------

    def _tls_context(self):
        if self._context is None:
            try:
                self._context = make_context(cafile=self.ca_path, validate_certs=self.validate_certs)
            except (IOError, OSError, ValueError) as exc:
                raise BMCError(TOOL, "cannot use ca_path %s: %s" % (self.ca_path, exc))
        return self._context

    def url(self, path):
        if path.startswith("http://") or path.startswith("https://"):
            if not path.startswith(self.base_url + "/"):
                raise BMCError(TOOL, "the BMC pointed at %s, which is not on %s" % (path, self.address))
            return path
        return self.base_url + path

    def path_of(self, location):
        """The path part of an absolute URL of this BMC, or ``location`` itself."""
        if location.startswith(self.base_url):
            return location[len(self.base_url):] or "/"
        return location

    def warn(self, text):
        if self._warn is not None:
            self._warn(self._scrub(text))

    def _pause(self, attempt, headers):
        """Sleep before retry ``attempt`` (0-based): the service's ``Retry-After`` seconds (capped), else a backoff
        doubling from ``backoff``."""
        delay = self.backoff * (2 ** attempt)
        retry_after = str(headers.get("Retry-After") or "").strip() if headers is not None else ""
        if retry_after.isdigit():
            delay = min(int(retry_after), MAX_RETRY_AFTER)
        self._sleep(delay)

    def _response(self, method, path, status, headers, payload):
        names = dict((key.lower(), value) for key, value in (headers or {}).items())
        data = None
        if payload and payload.strip():
            try:
                data = json.loads(payload.decode("utf-8", "replace"))
            except ValueError:
                raise BMCError(TOOL, self._scrub("%s %s answered HTTP %s but not with JSON: %r"
                                                 % (method, path, status, payload[:80])), status=status, resource=path)
        return Response(method, path, status, names, data)

    def _http_error(self, method, path, status, payload):
        reason = _redfish_message(payload)
        if status in (401, 403):
            who = " as user %r" % self.username if self.username is not None else " without credentials"
            detail = "authentication failed%s (HTTP %s on %s %s)" % (who, status, method, path)
            if reason:
                detail += ": " + reason
            return BMCAuthError(TOOL, self._scrub(detail + "; check bmc_username and bmc_password"),
                                status=status, resource=path)
        detail = "HTTP %s on %s %s" % (status, method, path)
        if reason:
            detail += ": " + reason
        return BMCHTTPError(TOOL, self._scrub(detail), status=status, resource=path)

    def _scrub(self, text):
        """``text`` with the password and the session token masked, whatever the BMC echoed."""
        text = str(text)
        for secret in (self.password, self.token):
            if secret:
                text = text.replace(secret, MASK)
        return text


def _read(exc):
    try:
        return exc.read()
    except Exception:  # pylint: disable=broad-except
        return b""


def _is_tls(reason):
    if isinstance(reason, (ssl.SSLCertVerificationError, ssl.CertificateError)):
        return True
    return isinstance(reason, ssl.SSLError) or "CERTIFICATE_VERIFY_FAILED" in str(reason)


def _redfish_message(payload):
    """The human text of a Redfish error body (``error.message`` and its extended messages), or ''."""
    try:
        document = json.loads(payload.decode("utf-8", "replace")) if payload else None
    except ValueError:
        return ""
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return ""
    texts = [error.get("message")] + [item.get("Message") for item in error.get("@Message.ExtendedInfo") or []
                                      if isinstance(item, dict)]
    seen = []
    for text in texts:
        if text and text not in seen:
            seen.append(text)
    return "; ".join(seen)
