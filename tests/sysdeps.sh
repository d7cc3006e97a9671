#!/usr/bin/env bash
# System programs the tests and the lab use, installed from Debian's apt when missing (root only).
#   program:package  -- the program that must be on PATH (or in /usr/sbin) and the package that provides it
# Services these packages ship (sshd, lldpd, munged, slurmctld, slurmdbd, mariadb, prometheus) are NOT started by
# apt: the lab and the tests start their own, each with its own configuration, in namespaces or on loopback.
set -euo pipefail
NEEDS=(
  ssh:openssh-client sshd:openssh-server          # SSH lab nodes; the unreachable node is a refused ssh
  ipmitool:ipmitool ipmi_sim:openipmi sdrcomp:openipmi   # lab IPMI BMCs
  openssl:openssl                                  # the lab Redfish BMCs' TLS CA
  ip:iproute2 ethtool:ethtool lldpd:lldpd lldpcli:lldpd  # network lab: namespaces, veth, LLDP
  ibstat:infiniband-diags ibv_devinfo:ibverbs-utils ib_write_bw:perftest  # real "no RDMA device" outputs
  fio:fio                                          # storage family
  slurmctld:slurm-wlm slurmd:slurm-wlm scontrol:slurm-wlm munged:munge  # scheduler (drain/resume)
  slurmdbd:slurmdbd mariadbd:mariadb-server mariadb-install-db:mariadb-server  # the lab's Slurm accounting (sacct)
  promtool:prometheus                              # alert rules of the monitoring role
  prometheus:prometheus prometheus-node-exporter:prometheus-node-exporter   # verdicts as metrics (docs/metrics.md)
  prometheus-pushgateway:prometheus-pushgateway prometheus-alertmanager:prometheus-alertmanager  # push, silences
  chromium:chromium                                # the HTML report checked in a headless browser, the signed PDF
  pdfinfo:poppler-utils pdftotext:poppler-utils    # the signed PDF read back page by page (tests/unit/test_report_pdf.py)
  kubectl:kubernetes-client                        # the Kubernetes path, against the test stand-in
  /usr/bin/time:time                               # bench: the CPU of each node-side module run (GNU time)
)
missing=()
for need in "${NEEDS[@]}"; do
  program=${need%%:*}; package=${need#*:}
  if [ "${program#/}" != "$program" ]; then
    [ -x "$program" ] || missing+=("$package")   # a path (time is also a shell keyword)
  elif ! command -v "$program" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$program" ]; then
    missing+=("$package")
  fi
done
# fonts for the browser screenshots (no program to look for): Latin, and CJK for the zh_CN report
for font in fonts-dejavu-core fonts-wqy-microhei; do
  dpkg -s "$font" >/dev/null 2>&1 || missing+=("$font")
done
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
  echo "make: please install these Debian packages (apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "sysdeps: installing ${missing[*]}"
created_policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && created_policy=1
fi
trap '[ -n "$created_policy" ] && rm -f /usr/sbin/policy-rc.d' EXIT
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
