"""The lab BMC's machine: its sensors, SDRs, FRU, firmware, and the ipmi_sim configuration files made from them.

A Supermicro-style HGX node (2 CPUs, up to 8 GPUs, 6 fans, 2 PSUs). lab/bmc/ipmi_sim.py writes these files per node
and starts ipmi_sim on them; ipmitool's output is ipmi_sim's, nothing here prints it.
"""

from __future__ import annotations

import os
import re
import subprocess
import time

from _common import LabError

# The machine: (name, sensor number, sensor type, entity, unit, m, r_exp, raw reading, thresholds (raw)).
# Readings are raw bytes: value = m * raw * 10**r_exp. Threshold keys: lnr lcr lnc unc ucr unr.
_TEMP = ("Temperature", 0x01, "degrees_C", 1, 0)
_CPU_T = {"unc": 90, "ucr": 95, "unr": 100}
_GPU_T = {"unc": 83, "ucr": 87, "unr": 90}
_FAN_T = {"lnr": 3, "lcr": 5, "lnc": 7}
_V12_T = {"lnr": 170, "lcr": 175, "lnc": 179, "unc": 215, "ucr": 221, "unr": 223}
_THRESHOLD_ORDER = ("lnc", "lcr", "lnr", "unc", "ucr", "unr")   # bit 0..5 of ipmi_sim's threshold mask
# Threshold event bits (ipmi_sim_cmd(5)): lnc/lcr/lnr going low = 0/2/4, unc/ucr/unr going high = 7/9/11.
_EVENT_BIT = {"lnc": 0, "lcr": 2, "lnr": 4, "unc": 7, "ucr": 9, "unr": 11}
_SDR_EVENT = {"lnc": "lncgl", "lcr": "lcgl", "lnr": "lnrgl", "unc": "uncgh", "ucr": "ucgh", "unr": "unrgh"}
_SDR_READABLE = {"lnc": "lnc", "lcr": "lc", "lnr": "lnr", "unc": "unc", "ucr": "uc", "unr": "unr"}
_SDR_THRESH = {"lnc": "lnc", "lcr": "lc", "lnr": "lnr", "unc": "unc", "ucr": "uc", "unr": "unr"}

PSU_STATUS = {1: 0x40, 2: 0x41}
PSU_POWER = {1: 0x44, 2: 0x45}
DIMM_STATUS = 0x60


def analog_sensors(gpus=8):
    """The node's threshold sensors, in SDR order."""
    sensors = [
        ("CPU1 Temp", 0x01, "processor", 1, _TEMP, 48, _CPU_T),
        ("CPU2 Temp", 0x02, "processor", 2, _TEMP, 51, _CPU_T),
        ("Inlet Temp", 0x05, "system_board", 1, _TEMP, 24, {"unc": 40, "ucr": 45, "unr": 50}),
    ]
    for i in range(gpus):
        sensors.append(("GPU%d Temp" % (i + 1), 0x10 + i, "add-in_card", i + 1, _TEMP, 36 + (i % 4), _GPU_T))
    fan = ("Fan", 0x04, "RPM", 100, 0)
    for i, raw in enumerate((84, 86, 82, 85, 83, 84)):
        sensors.append(("FAN%d" % (i + 1), 0x20 + i, "fan_cooling_device", i + 1, fan, raw, _FAN_T))
    sensors.append(("12V", 0x30, "system_board", 1, ("Voltage", 0x02, "Volts", 6, -2), 203, _V12_T))
    watts = ("Current", 0x03, "Watts", 10, 0)
    sensors.append(("PSU1 Power", PSU_POWER[1], "power_supply", 1, watts, 118, {}))
    sensors.append(("PSU2 Power", PSU_POWER[2], "power_supply", 2, watts, 121, {}))
    return [dict(name=n, num=num, entity=ent, instance=inst, type=t[0], type_code=t[1], unit=t[2], m=t[3], r_exp=t[4],
                 raw=raw, thresholds=th) for n, num, ent, inst, t, raw, th in sensors]


# Discrete sensors: (name, number, sensor type, type code, entity, instance, initial state bits, event bits).
DISCRETE = (
    ("PSU1 Status", PSU_STATUS[1], "Power_Supply", 0x08, "power_supply", 1, (0,), (0, 1, 3)),
    ("PSU2 Status", PSU_STATUS[2], "Power_Supply", 0x08, "power_supply", 2, (0,), (0, 1, 3)),
    ("DIMM Status", DIMM_STATUS, "Memory", 0x0C, "memory_device", 1, (), (0, 1)),
)

# FRU 0 (the system): what `ipmitool fru print` shows. Serials get the node's index.
FRU = {
    "chassis_type": 0x17,               # Rack Mount Chassis
    "chassis_part": "CSE-GP801TS",
    "chassis_serial": "C8010MM%06d",
    "board_mfg": "Supermicro",
    "board_product": "X13DEG-OAD",
    "board_serial": "OM23BS%06d",
    "board_part": "X13DEG-OAD",
    "product_mfg": "Supermicro",
    "product_name": "SYS-821GE-TNHR",
    "product_part": "SYS-821GE-TNHR",
    "product_version": "0123456789",
    "product_serial": "S4920000%04d",
    "product_asset": "",
}
MANUFACTURER_ID = 0x2A7C     # 10876, Super Micro Computer Inc. (IANA)
PRODUCT_ID = 0x1D10
DEVICE_ID = 0x20
DEFAULT_FIRMWARE = "1.02"


# ---------------------------------------------------------------------------------------------------------- config

def check_path(path):
    if re.search(r"[\s'\"\\$`]", path):
        raise LabError("ipmi_sim: the lab directory %r must not contain spaces, quotes or shell characters "
                       "(ipmi_sim splits its chassis_control command line on blanks)" % path)


def fw_bytes(firmware):
    match = re.match(r"^(\d{1,3})\.(\d{2})$", str(firmware))
    if not match or int(match.group(1)) > 127:
        raise LabError("ipmi_sim: firmware %r is not MAJOR.MINOR with two minor digits (e.g. 1.02)" % (firmware,))
    return int(match.group(1)), int(match.group(2), 16)


def sdr_text(gpus, analog=None, discrete=None):
    """The SDR repository in sdrcomp's source format (compiled with `sdrcomp -r`): the node's sensors, or the
    ``analog`` (dicts as ``analog_sensors`` makes them) and ``discrete`` (tuples as ``DISCRETE``) given."""
    out = []
    for s in analog_sensors(gpus) if analog is None else analog:
        lines = ["sdr type 1", "sensor_owner_id 0x20", "sensor_owner_lun 0", "channel_number 0",
                 "sensor_number %d" % s["num"], "entity_id %s" % s["entity"], "entity_instance %d" % s["instance"],
                 "sensor_type %s" % s["type"], "init_scanning true", "init_events true", "init_thresholds true",
                 "init_sensor_type true", "default_event_gen_on true", "default_sensor_scan_on true",
                 "sensor_auto_rearm true", "sensor_threshold_access %s" % ("readable" if s["thresholds"] else "no"),
                 "sensor_event_msg_ctrl per_state", "event_reading_type_code 1", "analog_data_format unsigned",
                 "rate_unit none", "modifier_unit none", "percentage false", "base_unit %s" % s["unit"],
                 "modifier_unit_code unspecified", "linearization linear", "m %d" % s["m"], "tolerance 0", "b 0",
                 "accuracy 1", "accuracy_exp 0", "sensor_direction input", "r_exp %d" % s["r_exp"], "b_exp 0",
                 "sensor_maximum 255", "sensor_minimum 0"]
        for key, raw in s["thresholds"].items():
            lines += ["assert_%s true" % _SDR_EVENT[key], "deassert_%s true" % _SDR_EVENT[key],
                      "%s_thrsh_readable true" % _SDR_READABLE[key], "%s_thresh %d" % (_SDR_THRESH[key], raw)]
        lines += ['id_string "%s"' % s["name"], "endsdr", ""]
        out += lines
    for name, num, stype, _code, entity, instance, _initial, events in DISCRETE if discrete is None else discrete:
        lines = ["sdr type 2", "sensor_owner_id 0x20", "sensor_owner_lun 0", "channel_number 0",
                 "sensor_number %d" % num, "entity_id %s" % entity, "entity_instance %d" % instance,
                 "sensor_type %s" % stype, "init_scanning true", "init_events true", "init_sensor_type true",
                 "default_event_gen_on true", "default_sensor_scan_on true", "sensor_event_msg_ctrl per_state",
                 "event_reading_type_code 0x6f"]
        for bit in events:
            lines += ["assert_event%d true" % bit, "deassert_event%d true" % bit, "event%d_state_ret true" % bit]
        lines += ['id_string "%s"' % name, "endsdr", ""]
        out += lines
    return "\n".join(out)


# Offset of the ID string's type/length byte, per SDR record type (IPMI 2.0 section 43).
_ID_OFFSET = {1: 47, 2: 31}


def compile_sdrs(text, names, workdir):
    """``sdrcomp -r`` the SDR text; returns the records (bytes), each ID string stored as 8-bit ASCII.

    sdrcomp packs names such as ``FAN1`` into 6-bit ASCII, which ipmitool prints as garbage; real BMCs store 8-bit
    ASCII, so the name byte is rewritten (type/length 0xC0 | length) and the record length fixed.
    """
    src = os.path.join(workdir, "sdrs.txt")
    with open(src, "w", encoding="ascii") as fh:
        fh.write(text)
    proc = subprocess.run(["sdrcomp", "-r", src], capture_output=True, timeout=30, check=False)
    if proc.returncode != 0:
        raise LabError("ipmi_sim: sdrcomp failed: %s" % proc.stderr.decode("utf-8", "replace").strip())
    data, records, pos = proc.stdout, [], 0
    while pos < len(data):
        if pos + 5 > len(data):
            raise LabError("ipmi_sim: sdrcomp output ends inside a record header")
        rtype, length = data[pos + 3], data[pos + 4]
        record = bytearray(data[pos:pos + 5 + length])
        pos += 5 + length
        name = names[len(records)].encode("ascii")
        offset = _ID_OFFSET[rtype]
        record = record[:offset] + bytes([0xC0 | len(name)]) + name
        record[4] = len(record) - 5
        records.append(bytes(record))
    if len(records) != len(names):
        raise LabError("ipmi_sim: sdrcomp produced %d records for %d sensors" % (len(records), len(names)))
    return records


def _fru_field(text):
    raw = text.encode("ascii")
    return bytes([0xC0 | len(raw)]) + raw


def _fru_area(body):
    body = bytes(body) + b"\xc1"
    while (len(body) + 1) % 8:
        body += b"\x00"
    body = bytearray(body)
    body[1] = (len(body) + 1) // 8
    return bytes(body) + bytes([(-sum(body)) & 0xFF])


def fru_bytes(index):
    """FRU 0 of a node (IPMI Platform Management FRU Information Storage Definition v1.0)."""
    f = FRU
    chassis = _fru_area(bytes([0x01, 0, f["chassis_type"]]) + _fru_field(f["chassis_part"])
                        + _fru_field(f["chassis_serial"] % index))
    minutes = int((time.mktime((2024, 3, 18, 8, 0, 0, 0, 0, 0)) - time.mktime((1996, 1, 1, 0, 0, 0, 0, 0, 0))) // 60)
    board = _fru_area(bytes([0x01, 0, 0x19]) + minutes.to_bytes(3, "little") + _fru_field(f["board_mfg"])
                      + _fru_field(f["board_product"]) + _fru_field(f["board_serial"] % index)
                      + _fru_field(f["board_part"]) + _fru_field(""))
    product = _fru_area(bytes([0x01, 0, 0x19]) + _fru_field(f["product_mfg"]) + _fru_field(f["product_name"])
                        + _fru_field(f["product_part"]) + _fru_field(f["product_version"])
                        + _fru_field(f["product_serial"] % index) + _fru_field(f["product_asset"]) + _fru_field(""))
    offset = 1
    header = [0x01, 0]
    for area in (chassis, board, product):
        header.append(offset)
        offset += len(area) // 8
    header += [0, 0]
    header.append((-sum(header)) & 0xFF)
    return bytes(header) + chassis + board + product


def _mask(bits):
    return "".join("1" if (14 - i) in bits else "0" for i in range(15))


def emu_text(node_dir, records, gpus, firmware):
    major, minor = fw_bytes(firmware)
    lines = [
        "# ipmi_sim emulator commands (ipmi_sim_cmd(5)), written by lab/bmc/ipmi_sim.py",
        "mc_setbmc 0x20",
        "mc_add 0x20 0x%02x no-device-sdrs 0x01 0x%02x 0x%02x 0x9f 0x%04x 0x%04x"
        % (DEVICE_ID, major, minor, MANUFACTURER_ID, PRODUCT_ID),
        "sel_enable 0x20 1000 0x0a",
    ]
    for record in records:
        lines.append("main_sdr_add 0x20 " + " ".join("0x%02x" % byte for byte in record))
    for s in analog_sensors(gpus):
        num = s["num"]
        lines.append("sensor_add 0x20 0 0x%02x 0x%02x 0x01" % (num, s["type_code"]))
        lines.append("sensor_set_value 0x20 0 0x%02x %d 0" % (num, s["raw"]))
        th = s["thresholds"]
        if th:
            enabled = "".join("1" if key in th else "0" for key in reversed(_THRESHOLD_ORDER))
            values = " ".join(str(th.get(key, 0)) for key in reversed(_THRESHOLD_ORDER))
            lines.append("sensor_set_threshold 0x20 0 0x%02x settable %s %s" % (num, enabled, values))
            mask = _mask({_EVENT_BIT[key] for key in th})
            lines.append("sensor_set_event_support 0x20 0 0x%02x enable scanning per-state %s %s %s %s"
                         % (num, mask, mask, mask, mask))
    for _name, num, _stype, code, _entity, _instance, initial, events in DISCRETE:
        lines.append("sensor_add 0x20 0 0x%02x 0x%02x 0x6f" % (num, code))
        for bit in initial:
            lines.append("sensor_set_bit 0x20 0 0x%02x %d 1 0" % (num, bit))
        mask = _mask(set(events))
        lines.append("sensor_set_event_support 0x20 0 0x%02x enable scanning per-state %s %s %s %s"
                     % (num, mask, mask, mask, mask))
    fru = os.path.join(node_dir, "fru0.bin")
    lines.append('mc_add_fru_data 0x20 0 %d file 0 "%s"' % (os.path.getsize(fru), fru))
    lines.append("mc_enable 0x20")
    return "\n".join(lines) + "\n"


def lan_conf(name, address, port, console_port, node_dir, username, password):
    return "\n".join((
        "# ipmi_sim LAN configuration (ipmi_lan(5)), written by lab/bmc/ipmi_sim.py",
        'name "%s"' % name,
        "set_working_mc 0x20",
        "  startlan 1",
        "    addr %s %d" % (address, port),
        "    priv_limit admin",
        "    allowed_auths_callback md5",
        "    allowed_auths_user md5",
        "    allowed_auths_operator md5",
        "    allowed_auths_admin md5",
        "    guid a123456789abcdefa123456789abcdef",
        "  endlan",
        '  chassis_control "%s %s"' % (os.path.join(node_dir, "chassis_control"), os.path.join(node_dir, "power")),
        '  user 2 true "%s" "%s" admin 10 md5' % (username, password),
        "console %s %d" % (address, console_port),
        "",
    ))


# The chassis_control program ipmi_sim runs: `<prog> <power file> get power` / `set power 0|1` / `set reset 1` /
# `set shutdown 1` (soft off: the power goes off SOFT_OFF_DELAY seconds later, as after an OS shutdown).
CHASSIS_CONTROL = """#!/bin/sh
# chassis_control for ipmi_sim (lab/bmc/ipmi_sim.py): the node's power state lives in the file named first.
f="$1"; op="$2"; shift 2
h="$(dirname "$f")/boot_hook"
case "$op" in
get)
    for p in "$@"; do
        case "$p" in
            power) echo "power:$(cat "$f")" ;;
            boot) echo "boot:default" ;;
            *) echo "Invalid parameter: $p"; exit 1 ;;
        esac
    done ;;
set)
    while [ $# -ge 2 ]; do
        p="$1"; v="$2"; shift 2
        case "$p" in
            power) old="$(cat "$f")"; echo "$v" > "$f"
                   # a lab node boots: its boot_hook (lab/bmc/power_hook.py) clears the power-cycle faults
                   if [ "$old" = 0 ] && [ "$v" = 1 ] && [ -x "$h" ]; then "$h"; fi ;;
            shutdown) ( sleep %d; echo 0 > "$f" ) </dev/null >/dev/null 2>&1 & ;;
            reset) if [ "$v" = 1 ] && [ -x "$h" ]; then "$h"; fi ;;
            boot) ;;
            identify) [ $# -ge 1 ] && shift ;;
            *) echo "Invalid parameter: $p"; exit 1 ;;
        esac
    done ;;
*) echo "Unknown operation: $op"; exit 1 ;;
esac
exit 0
"""
