# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE: this module_utils file is not part of the collection's public API and may change without notice.

"""The field table of ``nvidia-smi -q`` / ``-q -x`` (``nvidia_smi`` parses with it): every fact's XML tag and text
label side by side, the remapped-rows and throttle-reason fields, the sections and keys known to carry nothing the
facts use (``IGNORED``), and the sections whose every child must be known (``CHECKED_SECTIONS``)."""


def _power(*fields):
    """Power fields live in <gpu_power_readings> (v12+ / "GPU Power Readings") or <power_readings> (older)."""
    return tuple("%s/%s" % (section, field) for field in fields for section in ("gpu_power_readings", "power_readings"))


# fact path, kind, tree paths (XML spelling and text spelling, slugged; the first one present wins).
FIELDS = (
    ("name", "str", ("product_name",)),
    ("brand", "str", ("product_brand",)),
    ("architecture", "str", ("product_architecture",)),
    ("uuid", "str", ("uuid", "gpu_uuid")),
    ("serial", "str", ("serial", "serial_number")),
    ("vbios_version", "str", ("vbios_version",)),
    ("persistence_mode", "bool", ("persistence_mode",)),
    ("mig_mode.current", "str", ("mig_mode/current_mig", "mig_mode/current")),
    ("mig_mode.pending", "str", ("mig_mode/pending_mig", "mig_mode/pending")),
    ("memory.total_mib", "num", ("fb_memory_usage/total",)),
    ("memory.used_mib", "num", ("fb_memory_usage/used",)),
    ("memory.reserved_mib", "num", ("fb_memory_usage/reserved",)),
    ("temperature.gpu_c", "num", ("temperature/gpu_temp", "temperature/gpu_current_temp")),
    ("temperature.memory_c", "num", ("temperature/memory_temp", "temperature/memory_current_temp")),
    ("temperature.shutdown_c", "num", ("temperature/gpu_temp_max_threshold", "temperature/gpu_shutdown_temp")),
    ("temperature.slowdown_c", "num", ("temperature/gpu_temp_slow_threshold", "temperature/gpu_slowdown_temp")),
    ("temperature.max_operating_c", "num",
     ("temperature/gpu_temp_max_gpu_threshold", "temperature/gpu_max_operating_temp")),
    ("temperature.memory_max_c", "num",
     ("temperature/gpu_temp_max_mem_threshold", "temperature/memory_max_operating_temp")),
    ("temperature.tlimit_c", "num", ("temperature/gpu_temp_tlimit", "temperature/gpu_t_limit_temp")),
    ("temperature.shutdown_tlimit_c", "num",
     ("temperature/gpu_temp_max_tlimit_threshold", "temperature/gpu_shutdown_t_limit_temp")),
    ("temperature.slowdown_tlimit_c", "num",
     ("temperature/gpu_temp_slow_tlimit_threshold", "temperature/gpu_slowdown_t_limit_temp")),
    ("temperature.max_operating_tlimit_c", "num",
     ("temperature/gpu_temp_max_gpu_tlimit_threshold", "temperature/gpu_max_operating_t_limit_temp")),
    ("temperature.memory_max_tlimit_c", "num",
     ("temperature/gpu_temp_max_mem_tlimit_threshold", "temperature/memory_max_operating_t_limit_temp")),
    # "Power Draw" until ~550; newer drivers print "Average Power Draw" + "Instantaneous Power Draw".
    ("power.draw_w", "float", _power("power_draw", "average_power_draw")),
    ("power.instant_draw_w", "float", _power("instant_power_draw", "instantaneous_power_draw")),
    ("power.limit_w", "float", _power("current_power_limit", "enforced_power_limit", "power_limit")),
    ("power.default_limit_w", "float", _power("default_power_limit")),
    ("power.min_limit_w", "float", _power("min_power_limit")),
    ("power.max_limit_w", "float", _power("max_power_limit")),
    ("clocks.graphics_mhz", "num", ("clocks/graphics_clock", "clocks/graphics")),
    ("clocks.sm_mhz", "num", ("clocks/sm_clock", "clocks/sm")),
    ("clocks.memory_mhz", "num", ("clocks/mem_clock", "clocks/memory")),
    ("clocks.max_graphics_mhz", "num", ("max_clocks/graphics_clock", "max_clocks/graphics")),
    ("clocks.max_sm_mhz", "num", ("max_clocks/sm_clock", "max_clocks/sm")),
    ("clocks.max_memory_mhz", "num", ("max_clocks/mem_clock", "max_clocks/memory")),
    ("pcie.gen_current", "num",
     ("pci/pci_gpu_link_info/pcie_gen/current_link_gen", "pci/gpu_link_info/pcie_generation/current")),
    ("pcie.gen_max", "num", ("pci/pci_gpu_link_info/pcie_gen/max_link_gen", "pci/gpu_link_info/pcie_generation/max")),
    ("pcie.width_current", "num",
     ("pci/pci_gpu_link_info/link_widths/current_link_width", "pci/gpu_link_info/link_width/current")),
    ("pcie.width_max", "num", ("pci/pci_gpu_link_info/link_widths/max_link_width", "pci/gpu_link_info/link_width/max")),
    ("pcie.replays", "num", ("pci/replay_counter", "pci/replays_since_reset")),
    ("fan_speed_pct", "num", ("fan_speed",)),
    # NVSwitch systems: the fabric manager's training of this GPU into the NVLink fabric ("Completed"/"Success").
    ("fabric.state", "str", ("fabric/state",)),
    ("fabric.status", "str", ("fabric/status",)),
    # Multi-node NVLink (GB200/GB300 NVL72): the NVLink domain the GPU joined (0 and a zero UUID when none) and the
    # fabric's health flags (drivers 550+; text spellings of the real 590 capture, "N/A" when not reported).
    ("fabric.clique_id", "str", ("fabric/cliqueid", "fabric/clique_id")),
    ("fabric.cluster_uuid", "str", ("fabric/clusteruuid", "fabric/cluster_uuid")),
    ("fabric.health.summary", "str", ("fabric/health/summary",)),
    ("fabric.health.bandwidth", "str", ("fabric/health/bandwidth",)),
    ("fabric.health.route_recovery", "str", ("fabric/health/route_recovery_in_progress",)),
    ("fabric.health.route_unhealthy", "str", ("fabric/health/route_unhealthy",)),
    ("fabric.health.access_timeout_recovery", "str", ("fabric/health/access_timeout_recovery",)),
    ("fabric.health.incorrect_configuration", "str", ("fabric/health/incorrect_configuration",)),
    ("performance_state", "str", ("performance_state",)),
    ("ecc.mode_current", "bool", ("ecc_mode/current_ecc", "ecc_mode/current")),
    ("ecc.mode_pending", "bool", ("ecc_mode/pending_ecc", "ecc_mode/pending")),
    ("retired_pages.single_bit", "num",
     ("retired_pages/multiple_single_bit_retirement/retired_count", "retired_pages/single_bit_ecc")),
    ("retired_pages.double_bit", "num",
     ("retired_pages/double_bit_retirement/retired_count", "retired_pages/double_bit_ecc")),
    # XML prints both <pending_blacklist> and <pending_retirement>; text prints "Pending Page Blacklist"
    # (older: "Pending Page Retirement"). True when any of them says Yes.
    ("retired_pages.pending", "any", ("retired_pages/pending_blacklist", "retired_pages/pending_retirement",
                                      "retired_pages/pending_page_blacklist", "retired_pages/pending_page_retirement",
                                      "retired_pages/pending")),
)
REMAPPED_ROWS = (
    ("correctable", "num", ("remapped_row_corr", "correctable_error")),
    ("uncorrectable", "num", ("remapped_row_unc", "uncorrectable_error")),
    ("pending", "bool", ("remapped_row_pending", "pending")),
    ("failure", "bool", ("remapped_row_failure", "remapping_failure_occurred")),
)
# The bank remap availability histogram (NVML nvmlRowRemapperHistogramValues_t: banks with all, some, few or none of
# their reserved rows left): XML <row_remapper_histogram><row_remapper_histogram_max>, text "Bank Remap Availability
# Histogram" / "Max" (both "N bank(s)").
REMAP_HISTOGRAM_SECTIONS = ("row_remapper_histogram", "bank_remap_availability_histogram")
REMAP_HISTOGRAM_KEYS = ("max", "high", "partial", "low", "none")
THROTTLE_SECTIONS = ("clocks_event_reasons", "clocks_throttle_reasons")
THROTTLE_KEYS = ("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
                 "hw_power_brake_slowdown", "sync_boost", "sw_thermal_slowdown", "display_clocks_setting")
# XML: <clocks_event_reason_gpu_idle> / <clocks_throttle_reason_gpu_idle>; text: "Idle", "Display Clock Setting".
THROTTLE_ALIASES = {"idle": "gpu_idle", "display_clock_setting": "display_clocks_setting"}
THROTTLE_PREFIXES = ("clocks_event_reason_", "clocks_throttle_reason_")
# How long each cause has held the clocks down since the driver loaded, in microseconds (drivers 535+): text "Clocks
# Event Reasons Counters" / "SW Power Capping", "HW Power Braking", ...; XML <clocks_event_reasons_counters> with
# <clocks_event_reasons_counters_sw_power_cap>, ..._sw_therm_slowdown, ..._hw_therm_slowdown, ..._hw_power_brake
# (driver 575's tags, the NVML field names).
THROTTLE_COUNTER_KEYS = ("sw_power_cap", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
                         "hw_power_brake_slowdown")
THROTTLE_COUNTER_ALIASES = {"sw_power_capping": "sw_power_cap", "sw_therm_slowdown": "sw_thermal_slowdown",
                            "hw_therm_slowdown": "hw_thermal_slowdown", "hw_power_braking": "hw_power_brake_slowdown",
                            "hw_power_brake": "hw_power_brake_slowdown"}
THROTTLE_COUNTER_PREFIX = "clocks_event_reasons_counters_"

# Fields read elsewhere or deliberately not turned into facts (both spellings). Anything else at GPU
# level, or inside a section the normaliser reads, is reported through warn() as "please report".
IGNORED = {
    "gpu": frozenset((
        "accounted_processes", "accounting_mode", "accounting_mode_buffer_size", "addressing_mode",
        "applications_clocks", "bar1_memory_usage", "board_id", "board_part_number", "c2c_mode", "capabilities",
        "cc_protected_memory_usage", "clock_policy", "clocks_event_reasons_counters", "compute_mode",
        "conf_compute_protected_memory_usage", "default_applications_clocks", "deferred_clocks", "display_active",
        "display_attached", "display_mode", "dram_encryption_mode", "driver_model", "edpp_multiplier",
        "encoder_stats", "fbc_stats", "fru_part_number", "gpu_c2c_mode", "gpu_fru_part_number",
        "gpu_memory_power_readings", "gpu_module_id", "gpu_operation_mode", "gpu_part_number", "gpu_pdi",
        "gpu_recovery_action", "gpu_reset_status", "gpu_virtualization_mode", "gsp_firmware_version", "ibmnpu",
        "inforom_bbx_flush", "inforom_bbx_object_flush", "inforom_version", "max_customer_boost_clocks",
        "mig_device", "mig_devices", "minor_number", "module_id", "module_power_readings", "multigpu_board",
        "platform_info", "power_smoothing", "sparse_operation_mode", "supported_clocks",
        "supported_gpu_target_temp", "utilization", "voltage", "workload_power_profiles",
        # drivers 590/595 (see docs/gpu-facts.md, "Fields deliberately not read"): the XML spellings of the GPU's
        # PDI, the platform (chassis/slot/tray) section and the workload power profiles, the vGPU guest's licensed
        # product, and the clock "Samples" sections of ``-q -d CLOCK`` (text and XML spellings)
        "pdi", "platforminfo", "power_profiles", "vgpu_software_licensed_product",
        "clock_samples", "graphics_clock_samples", "sm_clock_samples", "memory_clock_samples", "video_clock_samples",
        "samples",
    ) + THROTTLE_SECTIONS + ("ecc_errors", "remapped_rows", "processes")),
    "temperature": frozenset(("gpu_target_temperature",)),
    "fb_memory_usage": frozenset(("free",)),
    "gpu_power_readings": frozenset(("power_state", "requested_power_limit", "power_management")),
    "power_readings": frozenset(("power_state", "requested_power_limit", "power_management")),
    "clocks": frozenset(("video_clock", "video")),
    "max_clocks": frozenset(("video_clock", "video")),
    "retired_pages": frozenset(),
    "ecc_mode": frozenset(),
    "mig_mode": frozenset(),
    "remapped_rows": frozenset(("row_remapper_histogram", "bank_remap_availability_histogram",  # read: banks
                                "inactive_correctable_error", "inactive_uncorrectable_error",
                                "remapped_row_corr_inactive", "remapped_row_unc_inactive")),
    "ecc_errors": frozenset(("volatile", "aggregate", "aggregate_uncorrectable_sram_sources",
                             "channel_repair_pending", "tpc_repair_pending", "unrepairable_memory")),
    "ecc_counters": frozenset(("sram_threshold_exceeded",)),
}
# Sections whose every child must be known (a renamed field there would silently lose a fact).
CHECKED_SECTIONS = frozenset(("temperature", "fb_memory_usage", "gpu_power_readings", "power_readings", "clocks",
                              "max_clocks", "retired_pages", "ecc_mode", "mig_mode"))


def _known_keys():
    known = {}
    for _path, _kind, alternatives in FIELDS:
        for alt in alternatives:
            parts = alt.split("/")
            known.setdefault("gpu", set()).add(parts[0])
            if len(parts) > 1:
                known.setdefault(parts[0], set()).add(parts[1])
    for section, keys in IGNORED.items():
        known.setdefault(section, set()).update(keys)
    known["remapped_rows"].update(alt for _f, _k, alts in REMAPPED_ROWS for alt in alts)
    return known


KNOWN = _known_keys()
