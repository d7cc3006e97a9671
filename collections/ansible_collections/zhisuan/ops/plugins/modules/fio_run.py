#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) zhisuan.ops contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

DOCUMENTATION = r"""
---
module: fio_run
short_description: Measure a node's storage with fio and return each job's bandwidth, IOPS and latency percentiles
version_added: 0.1.0
author:
  - zhisuan.ops contributors (@zhisuan-ops)
description:
  - Runs L(fio,https://fio.readthedocs.io/) once with every job of O(jobs), one after another (C(stonewall)), and
    returns per job the bandwidth in MiB/s, the IOPS, the p50/p99/p99.9 latency in microseconds and fio's errors.
    It collects facts only; the C(zhisuan.ops.judge) rules (family C(storage)) decide pass or fail against the site's
    floors.
  - When a job hits an I/O error fio still writes its report (and exits with rc 1); the facts are returned and the
    job's RV(storage.jobs.errors) says what failed. An option fio refuses (a missing directory) fails the task with
    fio's message.
  - The jobs write files in O(directory) (C(<job>.<clone>.<file>)); with O(cleanup) they are deleted afterwards.
extends_documentation_fragment:
  - zhisuan.ops._attributes
  - zhisuan.ops._tool.max_output
attributes:
  check_mode:
    support: none
    details:
      - A benchmark writes test files and loads the storage; in check mode the module does not run and Ansible reports
        it as skipped because the module does not support check mode.
  diff_mode:
    support: N/A
    details:
      - The module does not change the node's configuration.
options:
  jobs:
    description:
      - The fio jobs, run in this order. Each is a dict with C(name) (letters, digits, C(_), C(.), C(-)), C(rw)
        (C(read), C(write), C(randread), C(randwrite), C(rw), C(readwrite), C(randrw), C(trim), C(randtrim),
        C(trimwrite)), C(bs) and optionally C(size) (default C(1G)), C(iodepth) (16), C(numjobs) (1), C(runtime)
        (seconds, 30; jobs are time based), C(ioengine) (C(libaio)), C(direct) (V(true)), C(directory) or
        C(filename) (overriding O(directory); a C(filename) may be a block device, which fio then overwrites), and
        C(options), a dict of further fio options (for example C(rwmixread) V(70)).
      - Default, the acceptance profile - C(seq_read) (C(read), C(1M), depth 16), C(seq_write) (C(write), C(1M), depth
        16), C(rand_read) (C(randread), C(4k), depth 32), C(rand_write) (C(randwrite), C(4k), depth 32), 1 GiB and
        30 s each.
    type: list
    elements: dict
  directory:
    description:
      - Directory on the storage under test where fio lays out its job files (C(--directory)). It must exist.
      - Without it fio writes in its current directory, unless every job names a C(filename).
    type: path
  fio_path:
    description:
      - The C(fio) program, a name looked up in PATH or an absolute path.
      - The storage role passes C(zhisuan_tools.fio) here.
    type: str
    default: fio
  cleanup:
    description:
      - Delete the files fio laid out when the run ends (fio's C(unlink), and any file a killed run left behind).
      - Files named by a job's C(filename) are never deleted.
    type: bool
    default: true
  timeout:
    description:
      - Seconds fio may run in all. On expiry its whole process group is killed and the task fails with
        C(error_kind=timed_out); the storage role records that as a check with status C(error).
      - Defaults to the sum of the jobs' runtimes plus 30 s per job (laying out its file) plus 60 s.
    type: int
notes:
  - Programs run with C(LANG=C) and C(LC_ALL=C), without a shell.
  - On failure the task returns C(error_kind) (C(not_found), C(timed_out), C(failed) or C(unparsable)), C(tool) and
    C(msg); for a program that ran, also C(cmd), C(rc), C(stdout) and C(stderr).
  - C(direct=true) (O_DIRECT) bypasses the page cache; file systems that refuse it (tmpfs) make the job fail with
    fio's C(Invalid argument).
seealso:
  - name: fio documentation
    description: Job options and the JSON output format.
    link: https://fio.readthedocs.io/en/latest/fio_doc.html
"""

EXAMPLES = r"""
- name: Run the acceptance profile's four fio jobs on the parallel file system mount
  zhisuan.ops.fio_run:
    fio_path: "{{ zhisuan_tools.fio | default('fio') }}"
    directory: /mnt/lustre/acceptance/{{ inventory_hostname }}
  register: fio

- name: A short random read/write mix with 4 clones, 60 s
  zhisuan.ops.fio_run:
    directory: /data/fio
    jobs:
      - name: mixed_4k
        rw: randrw
        bs: 4k
        size: 4G
        iodepth: 64
        numjobs: 4
        runtime: 60
        options:
          rwmixread: 70
  register: fio

- name: Show each job's bandwidth
  ansible.builtin.debug:
    msg: "{{ fio.storage.jobs | dict2items | map(attribute='value.bw_mib') | list }}"
"""

RETURN = r"""
storage:
  description: What fio reported, per job.
  returned: success
  type: dict
  contains:
    fio_version:
      description: The version fio printed in its report.
      type: str
      sample: fio-3.33
    directory:
      description: The directory given in O(directory).
      type: str
    cmd:
      description: The command line that ran.
      type: list
      elements: str
    rc:
      description: fio's exit code (1 when a job hit an I/O error).
      type: int
    job_order:
      description: Job names in the order they ran.
      type: list
      elements: str
    jobs:
      description: One entry per job name.
      type: dict
      contains:
        rw:
          description: The job's I/O pattern as fio printed it.
          type: str
          sample: randread
        bs:
          description: Block size as given.
          type: str
          sample: 4k
        iodepth:
          description: Queue depth.
          type: int
        numjobs:
          description: Clones of the job (reported together).
          type: int
        bw_mib:
          description: Bandwidth in MiB/s, all directions together (fio's C(bw) is KiB/s).
          type: float
          sample: 977.2
        iops:
          description: I/O operations per second, all directions together.
          type: float
        lat_us:
          description:
            - C(p50), C(p99), C(p999) latency in microseconds (total latency when fio reported its percentiles, else
              completion latency); for a mixed job the worse of its directions. V(null) when no I/O completed.
          type: dict
        active:
          description: Directions that did I/O (C(read), C(write), C(trim)).
          type: list
          elements: str
        directions:
          description: Per active direction C(bw_mib), C(iops), C(io_bytes), C(total_ios), C(runtime_ms), C(lat_us),
            C(lat_mean_us) and C(lat_source) (the fio section the percentiles came from).
          type: dict
        runtime_ms:
          description: Milliseconds the job ran.
          type: int
        error:
          description: fio's errno for the job, 0 when it ran clean.
          type: int
        errors:
          description: What went wrong, in words (fio's error line for the errno); empty when the job ran clean.
          type: list
          elements: str
          sample: ["fio job error 28 (No space left on device in io_u error)"]
    disk_util:
      description: Per disk fio saw, C(name) and C(util_pct).
      type: list
      elements: dict
    messages:
      description: fio's own messages (error lines on stdout and stderr).
      type: list
      elements: str
"""

from ansible_collections.zhisuan.ops.plugins.module_utils._base import run_module
from ansible_collections.zhisuan.ops.plugins.module_utils._storage.collect import collect_storage


def main():
    argument_spec = dict(
        jobs=dict(type="list", elements="dict"),
        directory=dict(type="path"),
        fio_path=dict(type="str", default="fio"),
        cleanup=dict(type="bool", default=True),
        timeout=dict(type="int"),
    )
    run_module(argument_spec, collect_storage, supports_check_mode=False)


if __name__ == "__main__":
    main()
