"""The lab's scheduler: a real Slurm (slurmctld + one slurmd per lab node, munge auth) on loopback.

API (labctl calls it for a scenario with ``scheduler: slurm``; the tests call it directly):

* ``start(lab_dir, nodes, gpus_per_node=8, timeout=30.0) -> info`` writes ``<lab_dir>/slurm/`` (slurm.conf,
  gres.conf, a munge key, logs, the ``scontrol``/``sinfo``/``srun``/``sbatch``/``scancel``/``squeue`` wrappers in
  ``bin/``), starts ``munged`` on its own socket, ``slurmctld -c -i`` and one ``slurmd -N <node>`` per node, waits
  for ``scontrol ping`` to say UP and every node to be idle, and returns ``{conf, env, tools, nodes, pids,
  started_s}`` (``started_s``: seconds from the first daemon to all nodes idle).
* ``stop(lab_dir)`` cancels the lab's jobs, then ends every process that carries the lab's marker variable
  (the daemons it started and what they started: slurmstepd, job steps), and removes the runtime dir. It
  deletes nothing else under ``lab_dir``.
* ``scontrol_env(lab_dir)`` is the environment the Slurm clients need (``SLURM_CONF``, the munge socket).
* ``job_script(lab_dir, name, lines, interval, exit_code, hang_s)``, ``submit(lab_dir, script, name, nodes)`` and
  ``wait_job(lab_dir, job, states)`` run real batch jobs that print given log lines (real ones, from
  tests/fixtures/joblog), then hang or exit with a code (issue 15: the job family).
* Every job's end is written to ``<lab_dir>/slurm/log/jobcomp.txt`` (``JobCompType=jobcomp/filetxt``; there is no
  slurmdbd, so no ``sacct``): the accounting the quality indicators read (``info["jobcomp"]``).

Everything is real: slurm-wlm's daemons and clients, munge authentication; only the GPUs are eight symlinks
to /dev/null per node (gres counts need device files) and the nodes are all this machine (``NodeAddr=127.0.0.1``,
``SlurmdParameters=config_overrides``). The munge socket, the pid files and the slurmd spool dirs live in a short
directory under the system's temp dir (unix socket paths are limited to 107 bytes), recorded in ``slurm/lab.json``.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

_SIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sim")
if _SIM_DIR not in sys.path:
    sys.path.insert(0, _SIM_DIR)
from _common import process_running  # noqa: E402  (lab/sim: the lab's shared helpers)

SUBDIR = "slurm"
CLUSTER = "zhisuan-lab"
PARTITION = "gpu"
MARKER_ENV = "ZHISUAN_SLURM_LAB"
CLIENTS = ("scontrol", "sinfo", "squeue", "srun", "sbatch", "scancel")
DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd"}
NODE_CPUS = 4
NODE_MEMORY_MB = 2048


class SlurmLabError(Exception):
    pass


def _program(name):
    path = shutil.which(name) or DAEMONS.get(name)
    if not path or not os.path.exists(path):
        raise SlurmLabError(f"slurm lab: {name} not found (apt install slurm-wlm munge)")
    return path


def _free_ports(count):
    socks, ports = [], []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
            ports.append(sock.getsockname()[1])
    finally:
        for sock in socks:
            sock.close()
    return ports


def _paths(lab_dir):
    base = os.path.join(os.path.abspath(str(lab_dir)), SUBDIR)
    return {
        "base": base,
        "etc": os.path.join(base, "etc"),
        "conf": os.path.join(base, "etc", "slurm.conf"),
        "log": os.path.join(base, "log"),
        "state": os.path.join(base, "state"),
        "bin": os.path.join(base, "bin"),
        "gpu": os.path.join(base, "gpu"),
        "json": os.path.join(base, "lab.json"),
        "jobs": os.path.join(base, "jobs"),
    }


def slurm_conf(paths, run_dir, nodes, ctld_port, node_ports, gpus_per_node):
    """The text of slurm.conf (the LAB-NOTES essentials; one NodeName line per node, each with its own Port=)."""
    user = getpass.getuser()
    lines = [
        "# zhisuan lab slurm.conf -- written by lab/sched/slurm_lab.py; a new one at every start",
        f"ClusterName={CLUSTER}",
        "SlurmctldHost=localhost",
        f"SlurmctldPort={ctld_port}",
        f"SlurmUser={user}",
        f"SlurmdUser={user}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={run_dir}/munge.sock",
        "CommunicationParameters=NoInAddrAny,NoCtldInAddrAny",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        # job completion records (no slurmdbd here, so no sacct): one line per job end, read for the quality
        # indicators (effective training time, recovery time)
        "JobCompType=jobcomp/filetxt",
        f"JobCompLoc={paths['log']}/jobcomp.txt",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "SlurmdParameters=config_overrides",
        "ReturnToService=2",
        "GresTypes=gpu",
        f"PlugStackConfig={paths['etc']}/plugstack.conf",
        f"StateSaveLocation={paths['state']}",
        f"SlurmctldPidFile={run_dir}/slurmctld.pid",
        f"SlurmctldLogFile={paths['log']}/slurmctld.log",
        f"SlurmdSpoolDir={run_dir}/spool/%n",
        f"SlurmdPidFile={run_dir}/slurmd-%n.pid",
        f"SlurmdLogFile={paths['log']}/slurmd-%n.log",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        "SlurmdTimeout=300",
        "SlurmctldTimeout=120",
        "InactiveLimit=0",
        "MinJobAge=30",
        "KillWait=2",
        "Waittime=0",
    ]
    for name, port in zip(nodes, node_ports):
        lines.append(f"NodeName={name} NodeAddr=127.0.0.1 Port={port} CPUs={NODE_CPUS} RealMemory={NODE_MEMORY_MB} "
                     f"Gres=gpu:{gpus_per_node} State=UNKNOWN")
    lines.append(f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def _write(path, text, mode=0o644):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, mode)


def _wrapper(program, conf, run_dir, base):
    return ("#!/bin/sh\n"
            "# zhisuan lab: the real %s, pointed at the lab's slurm.conf (generated by lab/sched/slurm_lab.py)\n"
            "SLURM_CONF=%s; export SLURM_CONF\n"
            "MUNGE_SOCKET=%s/munge.sock; export MUNGE_SOCKET\n"
            "%s=%s; export %s\n"
            'exec %s "$@"\n') % (os.path.basename(program), conf, run_dir, MARKER_ENV, base, MARKER_ENV, program)


def scontrol_env(lab_dir):
    """Environment for the Slurm clients of the lab at ``lab_dir`` (raises SlurmLabError when none runs)."""
    paths = _paths(lab_dir)
    info = _read_info(paths)
    if info is None:
        raise SlurmLabError(f"no slurm lab at {paths['base']}")
    return dict(info["env"])


def _read_info(paths):
    try:
        with open(paths["json"], encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def _spawn(argv, log, env):
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,  # pylint: disable=consider-using-with
                                env=env, start_new_session=True, close_fds=True)
    return proc.pid


def _client(env, *argv, timeout=10):
    return subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _log_tail(path, lines=15):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError:
        return "(no log)"


def _wait(what, test, timeout, log):
    deadline = time.monotonic() + timeout
    while True:
        if test():
            return
        if time.monotonic() > deadline:
            raise SlurmLabError(f"slurm lab: {what} not ready after {timeout} s; last lines of {log}:\n{_log_tail(log)}")
        time.sleep(0.1)


def start(lab_dir, nodes, gpus_per_node=8, timeout=30.0):
    """Start munged, slurmctld and one slurmd per node; return the info dict (see the module doc)."""
    nodes = list(nodes)
    if not nodes:
        raise SlurmLabError("slurm lab: no nodes")
    programs = dict((name, _program(name)) for name in ("munged", "slurmctld", "slurmd") + CLIENTS)
    paths = _paths(lab_dir)
    if _read_info(paths) is not None:
        stop(lab_dir)
    if os.path.isdir(paths["base"]):
        shutil.rmtree(paths["base"])
    for key in ("etc", "log", "state", "bin", "gpu", "jobs"):
        os.makedirs(paths[key], mode=0o755, exist_ok=True)
    run_dir = tempfile.mkdtemp(prefix="zslurm-")
    os.chmod(run_dir, 0o755)
    env = dict(os.environ, SLURM_CONF=paths["conf"], MUNGE_SOCKET=run_dir + "/munge.sock")
    env[MARKER_ENV] = paths["base"]
    env.pop("SLURM_JOB_ID", None)
    ports = _free_ports(1 + len(nodes))
    info = {"schema": 1, "dir": paths["base"], "run_dir": run_dir, "conf": paths["conf"], "nodes": nodes,
            "ctld_port": ports[0], "node_ports": dict(zip(nodes, ports[1:])), "pids": {},
            "env": {"SLURM_CONF": paths["conf"], "MUNGE_SOCKET": run_dir + "/munge.sock"},
            "jobcomp": os.path.join(paths["log"], "jobcomp.txt"), "jobs_dir": paths["jobs"],
            "tools": dict((name, os.path.join(paths["bin"], name)) for name in CLIENTS)}
    _write(paths["json"], json.dumps(info, indent=2) + "\n")

    for i in range(gpus_per_node):
        os.symlink("/dev/null", os.path.join(paths["gpu"], f"nvidia{i}"))
    _write(paths["conf"], slurm_conf(paths, run_dir, nodes, ports[0], ports[1:], gpus_per_node))
    _write(os.path.join(paths["etc"], "gres.conf"),
           f"# zhisuan lab: {gpus_per_node} GPUs per node, each a symlink to /dev/null\n"
           f"Name=gpu File={paths['gpu']}/nvidia[0-{gpus_per_node - 1}]\n")
    _write(os.path.join(paths["etc"], "plugstack.conf"), "")
    _write(os.path.join(run_dir, "munge.key"), "", mode=0o600)
    with open(os.path.join(run_dir, "munge.key"), "wb") as handle:
        handle.write(os.urandom(1024))
    for name in CLIENTS:
        _write(info["tools"][name], _wrapper(programs[name], paths["conf"], run_dir, paths["base"]), mode=0o755)
    for name in nodes:
        os.makedirs(os.path.join(run_dir, "spool", name), exist_ok=True)

    began = time.monotonic()
    try:
        munge_log = os.path.join(paths["log"], "munged.log")
        info["pids"]["munged"] = _spawn(
            [programs["munged"], "-F", "--force", "--socket", run_dir + "/munge.sock", "--key-file", run_dir + "/munge.key",
             "--pid-file", run_dir + "/munged.pid", "--seed-file", run_dir + "/munged.seed", "--log-file", munge_log],
            munge_log, env)
        _wait("munged", lambda: os.path.exists(run_dir + "/munge.sock"), timeout, munge_log)
        ctld_log = os.path.join(paths["log"], "slurmctld.log")
        info["pids"]["slurmctld"] = _spawn([programs["slurmctld"], "-D", "-c", "-i"], ctld_log + ".out", env)
        _wait("slurmctld", lambda: "is UP" in _client(env, programs["scontrol"], "ping").stdout, timeout, ctld_log)
        for name in nodes:
            info["pids"]["slurmd " + name] = _spawn([programs["slurmd"], "-D", "-N", name],
                                                    os.path.join(paths["log"], f"slurmd-{name}.out"), env)
        _write(paths["json"], json.dumps(info, indent=2) + "\n")

        def all_idle():
            out = _client(env, programs["sinfo"], "-h", "-N", "-o", "%N %t").stdout.split()
            states = dict(zip(out[0::2], out[1::2]))
            return all(states.get(name) == "idle" for name in nodes)
        _wait("all nodes idle", all_idle, timeout, ctld_log)
    except (SlurmLabError, OSError, subprocess.SubprocessError):
        stop(lab_dir)
        raise
    info["started_s"] = round(time.monotonic() - began, 2)
    _write(paths["json"], json.dumps(info, indent=2) + "\n")
    return info


def job_script(lab_dir, name, lines, interval=0.05, exit_code=0, hang_s=0):
    """Write a batch script that replays ``lines`` (real log lines, from tests/fixtures/joblog) to its output, one
    every ``interval`` seconds, then sleeps ``hang_s`` seconds writing nothing (a hung job) and exits ``exit_code``.
    The job is a real Slurm job; only its log lines are a replay. Returns the script's path."""
    paths = _paths(lab_dir)
    os.makedirs(paths["jobs"], exist_ok=True)
    data = os.path.join(paths["jobs"], name + ".lines")
    with open(data, "w", encoding="utf-8") as handle:
        handle.write("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    script = os.path.join(paths["jobs"], name + ".sh")
    _write(script, "#!/bin/sh\n"
                   "# zhisuan lab: replays real log lines (lab/sched/slurm_lab.py job_script)\n"
                   f"while IFS= read -r line; do printf '%s\\n' \"$line\"; sleep {interval}; done < {data}\n"
                   f"sleep {int(hang_s)}\n"
                   f"exit {int(exit_code)}\n", mode=0o755)
    return script


def submit(lab_dir, script, name, nodes=None, output=None, requeue=False, timeout=10.0):
    """``sbatch`` the script on ``nodes`` (a list; default any node); returns the job id (str). Its output goes to
    ``output`` (default ``<lab>/slurm/jobs/<name>-%j.out``)."""
    paths = _paths(lab_dir)
    info = _read_info(paths)
    if info is None:
        raise SlurmLabError(f"no slurm lab at {paths['base']}")
    argv = [info["tools"]["sbatch"], "--parsable", "-J", name, "-o", output or os.path.join(paths["jobs"], name + "-%j.out")]
    if nodes:
        argv += ["-N", str(len(nodes)), "-w", ",".join(nodes)]
    if requeue:
        argv.append("--requeue")
    res = subprocess.run(argv + [script], capture_output=True, text=True, timeout=timeout, check=False)
    if res.returncode != 0:
        raise SlurmLabError(f"slurm lab: sbatch failed: {res.stderr.strip()}")
    return res.stdout.strip().split(";")[0]


def wait_job(lab_dir, job, states=("RUNNING",), timeout=20.0):
    """Poll ``squeue`` (then the job completion log) until the job is in one of ``states``; returns the state."""
    paths = _paths(lab_dir)
    info = _read_info(paths)
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        out = subprocess.run([info["tools"]["squeue"], "-h", "-j", job, "-o", "%T"], capture_output=True, text=True,
                             timeout=10, check=False).stdout.strip()
        state = out or _jobcomp_state(info.get("jobcomp"), job)
        if state in states:
            return state
        time.sleep(0.1)
    raise SlurmLabError(f"slurm lab: job {job} is {state}, not {'/'.join(states)}, after {timeout} s")


def _jobcomp_state(path, job):
    try:
        with open(path, encoding="utf-8") as handle:
            lines = [line for line in handle if line.startswith(f"JobId={job} ")]
    except (OSError, TypeError):
        return None
    if not lines:
        return None
    return lines[-1].split(" JobState=")[1].split()[0] if " JobState=" in lines[-1] else None


def _marked_pids(base):
    """Processes whose environment carries this lab's marker (our daemons, their slurmstepd and job steps)."""
    want = f"{MARKER_ENV}={base}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if want in handle.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _alive(pid):
    """True while ``pid`` runs (a zombie -- exited, not yet reaped by its parent -- does not)."""
    return process_running(pid)


def stop(lab_dir, timeout=10.0):
    """Cancel the lab's jobs, end its processes (marker variable), remove the runtime dir. Safe to call twice."""
    paths = _paths(lab_dir)
    info = _read_info(paths)
    if info is None:
        return
    env = dict(os.environ, **info["env"])
    scancel = shutil.which("scancel")
    if scancel and info["pids"].get("slurmctld") and _alive(info["pids"]["slurmctld"]):
        try:
            _client(env, scancel, "--full", "--partition", PARTITION, timeout=5)
        except subprocess.SubprocessError:
            pass
    # the daemons carry the marker (start() sets it), and so does everything they start
    pids = set(_marked_pids(paths["base"]))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + (timeout if sig == signal.SIGTERM else 5)
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            for pid in pids:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except OSError:
                    pass
            time.sleep(0.05)
        pids = set(pid for pid in pids if _alive(pid)) | set(_marked_pids(paths["base"]))
        if not pids:
            break
    shutil.rmtree(info.get("run_dir") or "/nonexistent", ignore_errors=True)
    try:
        os.unlink(paths["json"])
    except OSError:
        pass

