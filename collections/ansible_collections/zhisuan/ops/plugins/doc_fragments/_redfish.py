# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this doc fragment is not part of the collection's public API and may change without notice.

from __future__ import annotations


class ModuleDocFragment(object):

    # Mirrors REDFISH_ARGSPEC in plugins/module_utils/_redfish/argspec.py.
    DOCUMENTATION = r"""
options:
  bmc_address:
    description:
      - The BMC to talk to, a host name or address, C(host:port), or a URL C(https://host[:port]).
      - C(http://host[:port]) reaches a BMC without TLS (a lab); the task then warns that the credentials travel
        unencrypted.
      - A C(user:password@) part of a URL is ignored; give the credentials in O(bmc_username) and O(bmc_password).
    type: str
    required: true
  bmc_username:
    description:
      - User name on the BMC. If not set, the environment variable E(ZHISUAN_BMC_USERNAME) is used.
      - Without a user name only the Redfish service root can be read.
    type: str
  bmc_password:
    description:
      - Password of O(bmc_username). If not set, the environment variable E(ZHISUAN_BMC_PASSWORD) is used.
      - It is never returned, logged or shown in an error, and neither is the session token.
    type: str
  bmc_port:
    description:
      - TCP port of the Redfish service, when not the scheme's default (443 for https) or the port written in
        O(bmc_address).
      - When set, it wins over a port given in O(bmc_address); leave it unset to use the address's own port.
    type: int
  auth:
    description:
      - V(auto) (the default) tries a session as V(session) does; when the service root lists no
        C(SessionService), the service refuses to create sessions (HTTP 404, 405 or 501) or creates one without
        returning an C(X-Auth-Token), it falls back to basic authentication and says so in a warning. Wrong
        credentials are an error in every mode, never a fallback.
      - V(session) logs in once (C(POST) to the service's session collection), sends the C(X-Auth-Token) it gets
        on every request and deletes the session at the end of the task; a service without usable sessions is an
        error (V(auth_failed)).
      - V(basic) sends the credentials on every request (HTTP basic authentication).
      - M(zhisuan.ops.redfish_info) reports the scheme used as C(bmc.auth).
    type: str
    choices: [auto, basic, session]
    default: auto
  validate_certs:
    description:
      - Check the BMC's TLS certificate. BMCs ship self-signed certificates; give their CA in O(ca_path) rather than
        turning this off.
    type: bool
    default: true
  ca_path:
    description:
      - A PEM file with the CA certificate(s) that signed the BMC's certificate (for a self-signed certificate, the
        certificate itself). Used when O(validate_certs=true).
    type: path
  timeout:
    description:
      - Seconds each HTTP request may take.
    type: int
    default: 30
notes:
  - Every request goes through one HTTP client (Ansible's C(open_url)). Connection errors and HTTP 503 are retried
    three times with a growing pause (1, 2, 4 s, or the service's C(Retry-After)); a C(POST) or C(PATCH) is retried
    only when the connection was refused, so an action is never sent twice.
  - Collections are read page by page (C(Members@odata.nextLink)), with C($expand=.($levels=1)) where the service
    root advertises it, and a member listed twice is read once. When an expanded GET fails (HTTP 400, 404, 405, 406,
    500 or 501) or lists no C(Members), the collection is read member by member and C($expand) is not used again in
    that task; a warning says so.
  - The vendor is detected from the service root and the systems, and vendor differences (where GPUs, the SEL and
    pending BIOS settings are; how a power cycle is done) are handled by one adapter per vendor, reported as
    C(vendor) (C(generic), C(nvidia), C(dell), C(supermicro), C(hpe), C(lenovo), C(inspur)).
  - On failure the task returns C(error_kind) (V(auth_failed), V(unreachable), V(http_error) or V(bmc_error)),
    C(tool=redfish), C(msg), and, where there was one, the HTTP C(status) and the C(resource) asked for.
  - "These modules talk to the BMC from the host they run on; run them on the controller with
    C(delegate_to: localhost) and C(bmc_address) from the inventory."
"""

    ACTIONGROUP_REDFISH = r"""
options: {}
attributes:
  action_group:
    description: Use C(group/zhisuan.ops.redfish) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - zhisuan.ops.redfish
"""
