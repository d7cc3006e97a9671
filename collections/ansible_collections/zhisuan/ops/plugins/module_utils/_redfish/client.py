# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""THE one HTTP seam to a Redfish service, over Ansible's ``open_url`` machinery (``ansible.module_utils.urls``).

Every request of every Redfish module goes through ``RedfishClient.request``: authentication (a session with
``X-Auth-Token``, deleted again on exit, or basic; ``auto`` tries a session and falls back to basic when the service
refuses sessions or answers without a token), certificate checks (``validate_certs`` true by default, a
``ca_path`` for a BMC's own CA), a timeout, retries with backoff on connection errors and on HTTP 503, paging over
``Members@odata.nextLink`` and ``$expand`` where the service root says it supports it (an expanded GET that fails
or lists no ``Members`` is read again member by member, and ``$expand`` is not used again for that client). Failures
are typed ``BMCError`` subclasses whose text never contains the password or the session token.

The URL, service-root and payload helpers it uses (``base_url``, ``expand_supported``, ``sessions_uri``, the depth
check) are pure and live in ``wire``. Every answer body is read by ``Response``/``_response`` (``_send`` is the transport below it): a body that is not
JSON, nests deeper than ``MAX_DEPTH`` or carries ``NaN``/``Infinity`` is a ``BMCError``, and the fields the client
itself follows (``Members``, ``@odata.id``, ``Members@odata.nextLink``, ``ExpandQuery``, session links) are type
checked, so an odd answer is a typed error or is passed over, never a Python exception.

Requests go through ``urls.Request``, the class ``open_url`` is made of, with one TLS context per client: building a
context loads the system CA store (some 35 ms), which ``open_url`` would do again for every request of the hundreds
one inventory takes.
"""

import http.client
import inspect
import json
import time
from urllib.error import HTTPError, URLError

from ansible.module_utils.urls import ConnectionError as UrlsConnectionError
from ansible.module_utils.urls import Request, make_context

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import BMCAuthError, BMCError, BMCHTTPError, BMCUnreachable
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.wire import (
    AUTH_MODES, EXPAND_BROKEN, EXPAND_QUERY, IDEMPOTENT, MASK, MAX_DEPTH, MAX_PAGES, MAX_RETRY_AFTER, RETRY_STATUSES, ROOT,
    TOOL, as_dict, base_url, error_body, expand_supported, is_tls, link_uri, no_constant, read_error_body, recordable,
    redfish_message, sessions_uri, with_query,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._safe_parse import ascii_digits, depth_ok

# ansible-core 2.17+ lets a request reuse one TLS context (``Request.open(context=...)``); 2.16 builds one per
# request from ``validate_certs`` and ``ca_path`` (the same settings, only slower)
OPEN_TAKES_CONTEXT = "context" in inspect.signature(Request.open).parameters


class BMCErrorBody(BMCError):
    """A GET answered with a Redfish error body instead of the resource (often with HTTP 200); ``detail`` is short
    (``HTTP 200 with an error body (<MessageId>; <Message>)``), as ``service.errors`` shows it."""


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

    def __init__(self, address, username=None, password=None, port=None, auth="auto", validate_certs=True,
                 ca_path=None, timeout=30, retries=3, backoff=1.0, warn=None, sleep=None):
        self.base_url, self.address = base_url(address, port)
        if auth not in AUTH_MODES:
            raise BMCError(TOOL, "auth must be one of %s, got %r" % (", ".join(AUTH_MODES), auth))
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
        self.expand_fallback = False
        self._expand_works = False
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
        elif self.auth in ("session", "auto"):
            self._login()
        else:
            self.auth_used = "basic"
        return self.root

    def _login(self):
        """Create a session (``auth`` session or auto). Where the service has none, refuses to create one (HTTP
        404/405/501) or answers without an ``X-Auth-Token``: ``auto`` falls back to basic authentication with a
        warning, ``session`` fails with a BMCAuthError that says so (set ``auth: basic`` or ``auto``)."""
        uri = sessions_uri(self.root)
        if uri is None:
            self._no_session("the BMC at %s has no SessionService" % self.address, None, None)
            return
        body = {"UserName": self.username, "Password": self.password or ""}
        try:
            response = self.request("POST", uri, body=body, authenticate=False)
        except BMCHTTPError as exc:
            if exc.status not in (404, 405, 501):
                raise
            self._no_session("the BMC at %s refused to create a session (HTTP %s on POST %s)"
                             % (self.address, exc.status, uri), exc.status, uri)
            return
        token = response.header("X-Auth-Token")
        location = response.header("Location") or as_dict(response.data).get("@odata.id")
        location = self.path_of(location) if link_uri(location) else None
        if not token or not isinstance(token, str):
            self._no_session("the BMC at %s answered POST %s with HTTP %s but returned no X-Auth-Token"
                             % (self.address, uri, response.status), response.status, uri)
            # a session the service did create is deleted again, with basic authentication
            self.session_uri = location
            return
        self.token = token
        self.session_uri = location
        self.auth_used = "session"

    def _no_session(self, why, status, uri):
        if self.auth == "session":
            raise BMCAuthError(TOOL, self._scrub("%s; set auth (bmc_auth) to basic or auto" % why), status=status,
                               resource=uri)
        self.warn("%s; using basic authentication" % why)
        self.auth_used = "basic"

    def close(self):
        """Delete the session, if one was created. A failure to delete is a warning, not an error."""
        if self.token is None and self.session_uri is None:
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
        """The JSON document at ``path`` (a dict). Raises a BMCError subclass; an answer that is a Redfish error body
        (``wire.error_body``) is a ``BMCErrorBody`` whatever its HTTP status, so no reader takes it for the resource."""
        response = self.request("GET", path)
        data = response.data
        if not isinstance(data, dict):
            raise BMCError(TOOL, "GET %s returned no JSON object" % path, resource=path)
        why = error_body(data)
        if why is not None:
            raise BMCErrorBody(TOOL, self._scrub("HTTP %s with an error body (%s)" % (response.status, why)),
                               status=response.status, resource=path)
        return data

    def post(self, path, body, headers=None):
        return self.request("POST", path, body=body, headers=headers)

    def patch(self, path, body, headers=None):
        return self.request("PATCH", path, body=body, headers=headers)

    def members(self, path, expand=True):
        """Every member of the collection at ``path``: expanded resources where the service expanded them,
        ``{"@odata.id": ...}`` references otherwise. Follows ``Members@odata.nextLink`` (and OData's
        ``@odata.nextLink``); a member repeated on a later page is listed once; members without a string
        ``@odata.id`` are passed over.

        An expanded GET that fails (HTTP 400/404/405/406/500/501), is not an object or lists no ``Members`` is
        read again without ``$expand``. When that plain GET reads, ``$expand`` is broken on this service: it is off
        for the rest of this client's session (a warning says so once). When the plain GET fails too, the
        collection itself is missing: that error is raised and ``$expand`` stays on (once an expanded GET has
        worked on this service, an expanded 404 is taken as a missing collection at once). A collection whose
        ``Members`` is not a list is a BMCError. A later page that cannot be read is an error for the collection
        (``read_members`` keeps what was read instead)."""
        result, failure = self.read_members(path, expand=expand)
        if failure is not None and failure[1] is not None:
            raise failure[1]
        return result

    def read_members(self, path, expand=True, max_pages=MAX_PAGES):
        """``(members, failure)`` as ``members`` reads them, page by page, keeping the members of the pages read when
        a later page cannot be read: ``failure`` is None, or ``(page URI, BMCError, text)`` for the page that failed
        (``(next URI, None, text)`` when the collection has more than ``max_pages`` pages). A first page that
        cannot be read raises, as ``members`` does."""
        if not (expand and self.can_expand):
            return self._pages(path, None, max_pages)
        why = None
        try:
            first = self.get(with_query(path, EXPAND_QUERY))
            if isinstance(first.get("Members"), list):
                self._expand_works = True
                if not any(error_body(member) is not None for member in first["Members"]):
                    return self._pages(path, first, max_pages)
                # a member expanded as an error body has lost its @odata.id: the collection is read plain and its
                # members one by one, so the one that cannot be read is named (and $expand stays on)
                return self._pages(path, None, max_pages)
            why = "an answer without a Members list"
        except (BMCAuthError, BMCUnreachable):
            raise
        except BMCHTTPError as exc:
            if exc.status not in EXPAND_BROKEN or (exc.status == 404 and self._expand_works):
                raise  # a 404 where $expand has worked before: the collection is missing
            why = "HTTP %s" % exc.status
        except BMCError as exc:  # not JSON, too deep, not an object
            why = exc.detail
        plain = self.get(path)
        if isinstance(plain.get("Members"), list):
            self._expand_broken(path, why)
        return self._pages(path, plain, max_pages)

    def _expand_broken(self, path, why):
        self.can_expand = False
        self.expand_fallback = True
        self.warn("the BMC at %s advertises $expand but answered GET %s?%s with %s; reading each member instead "
                  "(and not using $expand again in this task)" % (self.address, path, EXPAND_QUERY, why))

    def _pages(self, path, first, max_pages=MAX_PAGES):
        uri, page = path, first
        seen, found, result = set(), set(), []
        while uri and uri not in seen:
            if len(seen) >= max_pages:
                return result, (uri, None, "not read: the collection %s has more than %d pages" % (path, max_pages))
            seen.add(uri)
            if page is None:
                try:
                    page = self.get(uri)
                except BMCError as exc:
                    if uri == path or not recordable(exc):
                        raise
                    return result, (uri, exc, exc.detail)
            members = page.get("Members")
            if members is None:
                members = []
            if not isinstance(members, list):
                raise BMCError(TOOL, "the collection at %s has Members of type %s, not a list"
                               % (uri, type(members).__name__), resource=uri)
            for member in members:
                ident = link_uri(member.get("@odata.id")) if isinstance(member, dict) else None
                if ident is None or ident in found:
                    continue
                found.add(ident)
                result.append(member if member.get("@odata.id") == ident else dict(member, **{"@odata.id": ident}))
            uri = link_uri(page.get("Members@odata.nextLink")) or link_uri(page.get("@odata.nextLink"))
            page = None
        return result, None

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
                status, answer_headers, payload = self._send(method, url, data, send, basic)
                return self._response(method, path, status, answer_headers, payload)
            except HTTPError as exc:
                payload = read_error_body(exc)
                if exc.code in RETRY_STATUSES and attempt < self.retries:
                    self._pause(attempt, exc.headers)
                    attempt += 1
                    continue
                raise self._http_error(method, path, exc.code, payload)
            except (URLError, UrlsConnectionError, OSError, http.client.HTTPException) as exc:
                reason = getattr(exc, "reason", exc)
                if is_tls(reason):
                    raise BMCUnreachable(TOOL, self._scrub(
                        "the TLS certificate of %s could not be verified (%s); give the BMC's CA certificate in "
                        "ca_path, or set validate_certs=false" % (self.base_url, reason)), resource=path)
                if attempt < self.retries and (method in IDEMPOTENT or isinstance(reason, ConnectionRefusedError)):
                    self._pause(attempt, None)
                    attempt += 1
                    continue
                raise BMCUnreachable(TOOL, self._scrub("%s %s on %s failed: %s" % (method, path, self.address, reason)),
                                     resource=path)

    def _send(self, method, url, data, headers, basic):
        """The transport: one HTTP exchange as ``(status, headers, body bytes)``; HTTP errors raise ``HTTPError``."""
        context = self._tls_context()  # built even where open() cannot take it: a bad ca_path is the same error
        tls = {"context": context} if OPEN_TAKES_CONTEXT else {"validate_certs": self.validate_certs,
                                                               "ca_path": self.ca_path}
        answer = Request().open(method, url, data=data, headers=headers, timeout=self.timeout,
                                url_username=self.username if basic else None,
                                url_password=(self.password or "") if basic else None,
                                force_basic_auth=basic, follow_redirects="safe", use_netrc=False, **tls)
        return answer.status, answer.headers, answer.read()

    # -- helpers ----------------------------------------------------------------------------------------------

    def _tls_context(self):
        if self._context is None:
            try:
                self._context = make_context(cafile=self.ca_path, validate_certs=self.validate_certs)
            except (IOError, OSError, ValueError) as exc:
                raise BMCError(TOOL, "cannot use ca_path %s: %s" % (self.ca_path, exc))
        return self._context

    def url(self, path):
        if not isinstance(path, str) or not path:
            raise BMCError(TOOL, "the BMC linked to %r, which is not a URI" % (path,))
        if path.startswith("http://") or path.startswith("https://"):
            if not path.startswith(self.base_url + "/"):
                raise BMCError(TOOL, "the BMC pointed at %s, which is not on %s" % (path, self.address))
            return path
        return self.base_url + path

    def path_of(self, location):
        """The path part of an absolute URL of this BMC, or ``location`` itself."""
        if isinstance(location, str) and location.startswith(self.base_url):
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
        if ascii_digits(retry_after):
            delay = min(int(retry_after), MAX_RETRY_AFTER)
        self._sleep(delay)

    def _response(self, method, path, status, headers, payload):
        names = dict((str(key).lower(), value) for key, value in (headers or {}).items())
        data = None
        if payload and payload.strip():
            try:
                data = json.loads(payload.decode("utf-8", "replace"), parse_constant=no_constant)
            except RecursionError:
                raise BMCError(TOOL, "%s %s answered HTTP %s with JSON nested too deeply to read"
                               % (method, path, status), status=status, resource=path)
            except ValueError as exc:
                raise BMCError(TOOL, self._scrub("%s %s answered HTTP %s but not with JSON (%s): %r"
                                                 % (method, path, status, exc, payload[:80])), status=status, resource=path)
            if not depth_ok(data, MAX_DEPTH):
                raise BMCError(TOOL, "%s %s answered HTTP %s with JSON nested deeper than %d levels"
                               % (method, path, status, MAX_DEPTH), status=status, resource=path)
        return Response(method, path, status, names, data)

    def _http_error(self, method, path, status, payload):
        reason = redfish_message(payload)
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
