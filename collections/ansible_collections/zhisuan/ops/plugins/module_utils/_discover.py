# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""Find BMCs in address ranges: a Redfish service root (HTTPS GET, no credentials needed) and the IPMI RMCP/ASF
presence ping (UDP 623) on every address and port; with credentials, the Redfish system's vendor, model and
serial. Probes run in parallel, each with a timeout; nothing is ever sent but reads."""

import socket
import struct
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.zhisuan.ops.plugins.module_utils._errors import (
    BMCAuthError, BMCError, MissingLibrary, OptionError, ZhisuanError,
)
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.client import RedfishClient
from ansible_collections.zhisuan.ops.plugins.module_utils._redfish.transform import text

try:
    import netaddr
except ImportError:  # reported by expand() as a MissingLibrary error
    netaddr = None

# RMCP header (version 6, reserved, sequence 0xFF = no ACK, class 6 = ASF) + ASF Presence Ping (IANA 4542, type
# 0x80, tag, reserved, data length 0): DMTF ASF 2.0 (DSP0136) section 3.2.4.
_ASF_IANA = 4542
_PING = struct.pack(">BBBBIBBBB", 0x06, 0x00, 0xFF, 0x06, _ASF_IANA, 0x80, 0x5A, 0x00, 0x00)
_PONG_TYPE = 0x40
# Supported Entities bit 7: IPMI supported (DSP0136, Presence Pong data).
_IPMI_SUPPORTED = 0x80


def parse_pong(data):
    """``{"ipmi": bool, "iana": int}`` from an ASF Presence Pong, or None for anything else."""
    if len(data) < 12 or data[0] != 0x06 or data[3] != 0x06:
        return None
    iana, msg_type = struct.unpack(">IB", data[4:9])
    if iana != _ASF_IANA or msg_type != _PONG_TYPE:
        return None
    body = data[12:]
    if len(body) < 9:
        return {"ipmi": False, "iana": None}
    oem_iana = struct.unpack(">I", body[0:4])[0]
    return {"ipmi": bool(body[8] & _IPMI_SUPPORTED), "iana": oem_iana}


def probe_ipmi(address, port, timeout):
    """An IPMI BMC answers the RMCP presence ping; returns a finding or None."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.settimeout(timeout)
        sock.sendto(_PING, (address, port))
        data = sock.recvfrom(512)[0]
    except (socket.timeout, OSError):
        return None
    finally:
        sock.close()
    pong = parse_pong(bytearray(data))
    if pong is None or not pong["ipmi"]:
        return None
    return {"address": address, "port": port, "protocol": "ipmi", "vendor": None, "model": None, "serial": None,
            "auth": None}


def probe_redfish(address, port, timeout, username=None, password=None, validate_certs=True, ca_path=None):
    """A Redfish service answers GET /redfish/v1; with credentials its first system names vendor, model, serial."""
    client = RedfishClient(address, username=username, password=password, port=port, auth="basic",
                           validate_certs=validate_certs, ca_path=ca_path, timeout=timeout, retries=0)
    found = {"address": address, "port": port, "protocol": "redfish", "vendor": None, "model": None, "serial": None,
             "auth": None}
    try:
        root = client.request("GET", "/redfish/v1", authenticate=False).data
    except BMCAuthError:
        root = {}
    except ZhisuanError as exc:
        if "certificate" not in str(exc).lower():
            return None
        # something speaks TLS there with a certificate we do not trust: a BMC to report, not to hide
        found["tls_error"] = str(exc)
        return found
    if not isinstance(root, dict) or "@odata.id" not in root and "RedfishVersion" not in root:
        return None
    found["vendor"] = text(root.get("Vendor"))
    found["model"] = text(root.get("Product"))
    found["redfish_version"] = text(root.get("RedfishVersion"))
    if username is None:
        return found
    try:
        systems = client.request("GET", "/redfish/v1/Systems").data.get("Members") or []
        if systems:
            system = client.request("GET", systems[0]["@odata.id"]).data
            found["vendor"] = text(system.get("Manufacturer")) or found["vendor"]
            found["model"] = text(system.get("Model")) or found["model"]
            found["serial"] = text(system.get("SerialNumber"))
        found["auth"] = "ok"
    except BMCAuthError:
        found["auth"] = "failed"
    except (BMCError, KeyError, TypeError, AttributeError):
        found["auth"] = "unreadable"
    return found


def expand(cidrs, max_addresses):
    """The host addresses of ``cidrs`` (ranges such as ``10.0.0.0/24`` or single addresses), in order; at most
    ``max_addresses`` of them. Raises OptionError for a range that is not one or that would pass the limit."""
    if netaddr is None:
        raise MissingLibrary("netaddr", missing_required_lib("netaddr"))
    addresses = []
    for cidr in cidrs:
        try:
            network = netaddr.IPNetwork(cidr)
        except (netaddr.AddrFormatError, ValueError) as exc:
            raise OptionError("cidr", "bmc_discover: %r is not an address range: %s" % (cidr, exc))
        if network.size > max_addresses - len(addresses):
            raise OptionError("cidr", "bmc_discover: %s has %d addresses, over max_addresses %d"
                              % (cidr, network.size, max_addresses))
        hosts = list(network.iter_hosts()) if network.size > 2 else list(network)
        addresses.extend(str(address) for address in hosts)
    return addresses


def run_discovery(module):
    """bmc_discover: expand ``cidr``, probe every address, return what answered."""
    params = module.params
    addresses = expand(params["cidr"], params["max_addresses"])
    bmcs = discover(addresses, params["redfish_ports"], params["ipmi_ports"], timeout=params["timeout"],
                    workers=params["workers"], username=params["bmc_username"], password=params["bmc_password"],
                    validate_certs=params["validate_certs"], ca_path=params["ca_path"])
    return {"bmcs": bmcs, "probed": len(addresses)}


def discover(addresses, redfish_ports=(443,), ipmi_ports=(623,), timeout=2.0, workers=32, username=None,
             password=None, validate_certs=True, ca_path=None):
    """Probe every address on every port; return the findings sorted by address, protocol and port."""
    jobs = []
    for address in addresses:
        for port in redfish_ports:
            jobs.append((probe_redfish, (address, port, timeout, username, password, validate_certs, ca_path)))
        for port in ipmi_ports:
            jobs.append((probe_ipmi, (address, port, timeout)))
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs) or 1))) as pool:
        results = list(pool.map(lambda job: job[0](*job[1]), jobs))
    found = [item for item in results if item]
    return sorted(found, key=lambda item: (_sort_key(item["address"]), item["protocol"], item["port"]))


def _sort_key(address):
    try:
        return (0, socket.inet_pton(socket.AF_INET, address))
    except OSError:
        return (1, address.encode())
