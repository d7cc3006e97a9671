# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This file holds the documentation only; the work is done on the controller by plugins/action/report.py.

DOCUMENTATION = r"""
---
module: report
short_description: Render a results.json as the acceptance report (HTML, Markdown, JUnit XML, JSON)
version_added: 0.1.0
description:
  - Reads one C(results.json) (schema C(zhisuan.ops/results/v1)) written by the record stage and renders the
    acceptance report from it alone, so a saved file can be re-rendered at any later time.
  - C(report.html) is one self-contained file (inline CSS and inline SVG pictures, no scripts, no external assets) that
    prints cleanly; it holds the sections a customer signs (delivery guide 6.2) - the run metadata, the verdict
    (pass, conditional or fail), summary counts, a node by check-family status grid (a picture and a table), the open
    issues with their remedies, the asset list and the firmware/driver baseline with drift marked, GPU test data,
    network test data (the RDMA pair heatmap against the floor, the NCCL bus-bandwidth-by-size curves against the
    floor, the cabling as LLDP saw it), storage test data, stability records (burn-in temperature and clock traces),
    remediation actions, per-host details, the cluster-wide checks and a sign-off block. A section with no data is
    left out.
  - With O(history_dir) (or O(history_root), the run's site's folder there), the run is kept in the history folder
    and the report adds the changes since the previous run of the same kind (new, fixed and persisting failures per
    host and check), and O&M KPIs computed from the history (cluster GPU availability, MTTR and MTBF per fault
    class, faults by class, detection-to-repair times).
    Nodes 10 % or more below their peers' median (NCCL busbw, burn Gflop/s, storage bandwidth and IOPS, RDMA pair
    bandwidth) are listed as fleet outliers; they make an otherwise accepted run V(conditional).
  - C(report.md) holds the same content as Markdown tables; C(junit.xml) has one test suite per host (plus C(cluster))
    and one test case per check, for CI systems (valid against the Jenkins xUnit JUnit schema); C(report.json) holds
    the verdict, counts, open issues, changes, fleet outliers and KPIs for dashboards and workflows.
  - The run is B(ACCEPTED) only when no host is C(fail), C(error) or C(unreachable) and no cluster-wide check is
    C(fail) or C(error).
  - Runs on the controller only; nothing is executed on the managed node. The file is validated against the
    collection's results JSON Schema when the C(jsonschema) Python package is installed on the controller.
  - Every format is streamed from one view model into a temporary file in the destination directory, then renamed
    into place (atomically) once every format rendered, so memory stays bounded by the size of the results. A file whose content
    would not change is left alone, so re-rendering the same results reports C(changed=false).
options:
  src:
    description:
      - Path on the controller to the C(results.json) file to render.
      - A relative path is relative to the current directory of C(ansible-playbook).
    type: path
    required: true
  dest:
    description:
      - Directory on the controller to write the reports to. Created when missing.
      - Defaults to the directory of O(src).
    type: path
  formats:
    description:
      - The reports to write; V(html) writes C(report.html), V(markdown) writes C(report.md), V(junit) writes
        C(junit.xml), V(json) writes C(report.json).
    type: list
    elements: str
    choices: [html, markdown, junit, json]
    default: [html, markdown, junit, json]
  template_dir:
    description:
      - Directory holding your own Jinja2 templates C(report.html.j2) and C(report.md.j2), to replace the collection's.
      - Not set means the templates shipped in the collection (C(data/templates)), so an installed collection renders
        reports with nothing else.
    type: path
  language:
    description:
      - The language of the HTML and Markdown reports' fixed texts (headings, verdict, sign-off, remedy and family
        names) and of the check messages that have a translation (GPU, XID, NIC, RDMA, NCCL and BMC families; other
        messages stay in English with their check id). JUnit XML and JSON stay in English.
      - The translations are gettext catalogs shipped in the collection (C(data/locale)).
    type: str
    choices: [en, zh_CN]
    default: en
  history_dir:
    description:
      - Directory on the controller holding the run history, one C(<run id>.json) per run; created when missing.
      - The run is kept there (not in check mode), then every run there is read for the comparison with the previous
        run of the same kind and for the KPIs. Files that are not results documents are skipped with a warning.
      - Not set means the history of the run's site under O(history_root), or no history sections without it.
    type: path
  history_root:
    description:
      - Directory on the controller holding one history folder per site (C(reports/history)); used when
        O(history_dir) is not set. The run's history is C(<history_root>/<site key>), the key the run records
        (C(run.site_key), from C(zhisuan_site_name) or the inventory's folder), else that of its C(run.site.name);
        a run with neither (kept before one history per site) reads O(history_root) itself, as it did then.
      - A run whose C(run.site_key) is not a site key is rendered without history, with a warning. Runs and a
        remediation log left directly in O(history_root) (one history every site shared) are named in a warning
        with the command that moves them into the site's folder.
      - Not set, with O(history_dir) not set, means no history sections.
    type: path
  remediation_log:
    description:
      - The remediation log, JSON lines with one record per action (C(time), C(run_id), C(node), C(cause),
        C(action), C(outcome), C(detected), C(repaired)); records with both times add to the detection-to-repair
        times and MTTR of the cause's class.
      - Defaults to C(remediation.jsonl) in O(history_dir). A missing file is an empty log.
    type: path
  max_results_mib:
    description:
      - The largest O(src) read, in MiB; a bigger file fails the task with its size before it is read (Python holds
        a parsed results document at about 8 times its size; a 1,000-node run of 60 checks a node is 14 MiB).
      - Defaults to the environment variable C(ZHISUAN_MAX_RESULTS_MIB) of the controller, else 512.
      - A kept run of O(history_dir) without its slim index entry is read whole only under the same cap; a bigger one
        is skipped with a warning.
    type: float
  history_keep_runs:
    description:
      - Retention of the history read for the comparison and the KPIs, newest first - at most this many runs (the
        current run counts as one). The runs beyond stay in O(history_dir), unread.
      - A run's time is the time its id starts with, else its file's modification time.
    type: int
    default: 1000
  history_keep_days:
    description:
      - Retention of the history read for the comparison and the KPIs - no run older than this many days. The runs
        beyond stay in O(history_dir), unread.
    type: float
    default: 365
  retests:
    description:
      - Re-tests of some of the run's nodes (run directories or their C(results.json)) folded into O(src). Each
        re-tested node's newest result replaces its first; the run's cluster-wide checks and data stay; the run's
        C(run.retests) lists each re-test (id, start, finish, the hosts it replaced) and the report names them.
      - A re-test of another kind, one that started before O(src), or one with a host O(src) does not have fails the
        task.
      - The folded run is written with its own C(results.json) to O(dest), default the folder of O(src) with
        C(-retested) appended, so it re-renders alone. It is not added to O(history_dir); O(src) and the re-tests stay
        there as they ran.
    type: list
    elements: path
    default: []
  stages:
    description:
      - The other stage runs of a C(site.yml) run (run directories or their C(results.json)), folded with O(src)
        into one site record of kind C(site), so the site ends with one verdict and one report. Each node keeps
        every stage's checks (a check two stages ran, the same id and component, counts once, as the newer stage
        found it);
        a node missing from a stage or unreachable in it gets an error check saying so; its status is the worst of
        its stages; the report's stage view shows each node's delivery, burn-in and acceptance.
      - Each must be a delivery, burn-in or acceptance run; not together with O(retests) (fold the re-tests into
        their run first).
      - The site record is written with its own C(results.json) to O(dest), default the folder of O(src) with
        C(-site) appended. It is not added to O(history_dir); the stage runs stay there as they ran.
    type: list
    elements: path
    default: []
  timezone:
    description:
      - The zone the report shows its times in (run start and finish, the sign-off, the history, re-tests), an IANA
        name such as C(Asia/Shanghai); each time is written with its offset (C(2026-12-01T22:00:00+08:00)).
      - Default the controller's zone (C($TZ), else C(/etc/localtime), else UTC). The records keep their times as
        written. An unknown zone fails the task.
    type: str
  pdf:
    description:
      - Also print C(report.html) to C(report.pdf), the copy a customer signs, with headless Chromium on the controller
        (C(--print-to-pdf --no-pdf-header-footer), so the browser prints no C(file://) path and no date).
      - The print form is compact; verdict, summary, the node by family table (one line per node), open issues,
        the hosts that did not pass, the sign-off with a company seal line; passed and skipped checks are counted
        per family, never listed; the page margin carries the run id and the page number (page N / M).
      - It is in the report's O(language). Needs O(formats) to include V(html).
      - A missing Chromium, a timeout or a failed print is a warning naming Chromium; the other reports are written.
    type: bool
    default: false
  chromium:
    description:
      - The Chromium to print the PDF with, a program name on PATH or a path. Default the first of C(chromium),
        C(chromium-browser), C(google-chrome), C(google-chrome-stable) on PATH.
    type: str
  pdf_timeout:
    description:
      - Seconds Chromium may take to print the PDF; past that its process group is killed and the run goes on with a
        warning.
    type: int
    default: 120
extends_documentation_fragment:
  - action_common_attributes
  - action_common_attributes.conn
  - action_common_attributes.flow
attributes:
  action:
    support: full
  async:
    support: none
  become:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
    details: In check mode the reports are rendered (so template and data errors show) but not written.
  connection:
    support: none
  delegation:
    support: none
    details: Always runs on the controller; use it once per run (V(run_once=true) or a play on C(localhost)).
  diff_mode:
    support: none
  platform:
    platforms: all
requirements:
  - jinja2 (on the controller)
  - jsonschema (on the controller, optional; without it the file is not validated)
notes:
  - Renders are deterministic (no timestamps are added), so the same C(results.json) always gives the same files.
author:
  - zhisuan.ops contributors (@zhisuan-ops)
"""

EXAMPLES = r"""
- name: Render every report next to the results file
  zhisuan.ops.report:
    src: reports/out/20250114T093000Z-acceptance/results.json
  run_once: true
  register: report

- name: Only the JUnit file, for the CI job
  zhisuan.ops.report:
    src: "{{ zhisuan_report_dir }}/results.json"
    dest: "{{ lookup('ansible.builtin.env', 'CI_PROJECT_DIR') }}/artifacts"
    formats: [junit]
  delegate_to: localhost
  run_once: true

- name: The report in Chinese, for the customer's signature
  zhisuan.ops.report:
    src: "{{ zhisuan_report_dir }}/results.json"
    language: zh_CN
    pdf: true
  run_once: true
"""

RETURN = r"""
paths:
  description:
    - The file written (or, in check mode, that would be written) for each requested format, and V(pdf) when
      O(pdf) printed C(report.pdf).
    - V(stages) for a delivery, burn-in or acceptance run is C(stages.csv), the newest result of each of these stages
      per node from the run and the history.
  returned: success
  type: dict
  sample:
    html: /srv/acceptance/reports/out/20250114T093000Z-acceptance/report.html
    markdown: /srv/acceptance/reports/out/20250114T093000Z-acceptance/report.md
    junit: /srv/acceptance/reports/out/20250114T093000Z-acceptance/junit.xml
    json: /srv/acceptance/reports/out/20250114T093000Z-acceptance/report.json
    pdf: /srv/acceptance/reports/out/20250114T093000Z-acceptance/report.pdf
verdict:
  description: V(accepted) or V(not_accepted), as printed in the report's verdict banner.
  returned: success
  type: str
  sample: not_accepted
verdict_text:
  description: The verdict as the report's banner words it (in English), for example V(ACCEPTED WITH CONDITIONS).
  returned: success
  type: str
  sample: NOT ACCEPTED
verdict_detail:
  description: Why, in one line (the hosts and cluster checks that block acceptance, or the warnings to review).
  returned: success
  type: str
  sample: 1 host fail, 1 host unreachable
summary:
  description: Host and check counts by status, the number of open issues (failed, errored and warning checks,
    and unreachable hosts), the grade (V(pass), V(conditional) or V(fail)) and, when the history holds a previous run
    of the same kind, the counts of new, fixed, persisting and unchecked failures.
  returned: success
  type: dict
  sample:
    hosts: {pass: 61, warn: 1, fail: 1, error: 0, unreachable: 1}
    checks: {pass: 6082, warn: 3, fail: 2, error: 1, skip: 64}
    open_issues: 7
    grade: fail
    changes: {new: 1, fixed: 2, persisting: 1, unchecked: 0}
history:
  description: The history folder, how many runs it holds, where this run was kept (V(null) in check mode) and the
    previous run of the same kind it was compared with (V(null) when none).
  returned: when the run has a history (O(history_dir), or O(history_root) and a readable site key)
  type: dict
  sample:
    dir: /srv/zhisuan/history/hangzhou-idc-hall-2-5d8e2c1a
    runs: 12
    kept: /srv/zhisuan/history/hangzhou-idc-hall-2-5d8e2c1a/20250114T093000Z-inspect.json
    previous: {id: 20250113T093000Z-inspect, kind: inspect, started: "2025-01-13T09:30:00+00:00"}
ansible_stats:
  description:
    - What the task adds to the run's custom stats, as M(ansible.builtin.set_stats) does (not per host, aggregated);
      the files, verdict, grade and open issues in the list C(zhisuan_run_summary_reports), which the
      C(zhisuan.ops.run_summary) callback prints at the end of the run.
  returned: success
  type: dict
stages:
  description: With O(stages), the stage runs folded into the site record (kind, id, start, finish, hosts, partial).
  returned: when O(stages) is given
  type: list
  elements: dict
src:
  description: Absolute path of the results file that was rendered.
  returned: success
  type: str
  sample: /srv/acceptance/reports/out/20250114T093000Z-acceptance/results.json
dest:
  description: Absolute path of the directory the reports were written to.
  returned: success
  type: str
  sample: /srv/acceptance/reports/out/20250114T093000Z-acceptance
"""
