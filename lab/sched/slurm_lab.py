"""The lab's scheduler: a real Slurm (slurmctld + one slurmd per lab node, munge auth) on loopback.

API (labctl calls it for a scenario with ``scheduler: slurm``; the tests call it directly):

* ``start(lab_dir, nodes, gpus_per_node=8, timeout=30.0, accounting=False) -> info`` writes ``<lab_dir>/slurm/``
  (slurm.conf, gres.conf, a munge key, logs, the ``scontrol``/``sinfo``/``srun``/``sbatch``/``scancel``/``squeue``/
  ``sacct``/``sacctmgr`` wrappers in ``bin/``), starts ``munged`` on its own socket, ``slurmctld -c -i`` and one
  ``slurmd -N <node>`` per node, waits for ``scontrol ping`` to say UP and every node to be idle, and returns
  ``{conf, env, tools, nodes, pids, started_s}`` (``started_s``: seconds from the first daemon to all nodes idle).
* ``accounting=True`` adds Slurm's accounting store before slurmctld starts: a private MariaDB (Debian's
  ``mariadb-server``: ``mariadb-install-db`` into ``<lab_dir>/slurm/db``, ``mariadbd`` on a free loopback port, a
  ``slurm`` database user with a random password) and ``slurmdbd`` (``accounting_storage/mysql``) on another free
  port, the cluster added with ``sacctmgr``, and slurm.conf's ``AccountingStorageType=accounting_storage/slurmdbd``:
  ``sacct`` is then the real program on the lab's real jobs (``info["accounting"]``).
* ``stop(lab_dir)`` cancels the lab's jobs, then ends every process that carries the lab's marker variable
  (the daemons it started and what they started: slurmstepd, job steps), and removes the runtime dir. It
  deletes nothing else under ``lab_dir``.
* ``scontrol_env(lab_dir)`` is the environment the Slurm clients need (``SLURM_CONF``, the munge socket).
* ``job_script(lab_dir, name, lines, interval, exit_code, hang_s)``, ``submit(lab_dir, script, name, nodes)`` and
  ``wait_job(lab_dir, job, states)`` run real batch jobs that print given log lines (real ones, from
  tests/fixtures/joblog), then hang or exit with a code (issue 15: the job family).
* ``requeue(lab_dir, job)``: the operator's ``scontrol requeue`` of a running job, started again at once.
* Every job's end is written to ``<lab_dir>/slurm/log/jobcomp.txt`` (``JobCompType=jobcomp/filetxt``), with or
  without slurmdbd: without it (``accounting=False``) ``sacct`` answers only its real "accounting storage is
  disabled" error and the completion log is what the quality indicators read (``info["jobcomp"]``).

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
import secrets
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
CLIENTS = ("scontrol", "sinfo", "squeue", "srun", "sbatch", "scancel", "sacct", "sacctmgr")
DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd",
           "slurmdbd": "/usr/sbin/slurmdbd", "mariadbd": "/usr/sbin/mariadbd"}
# the accounting store's programs (accounting=True): Debian's slurmdbd and mariadb-server
DB_PROGRAMS = ("slurmdbd", "mariadbd", "mariadb-install-db", "mariadb")
DB_NAME = "slurm_acct_db"
DB_USER = "slurm"
# a small InnoDB (the defaults write ~100 MB of redo log per lab); slurmdbd logs that these are below its advice
DB_OPTIONS = ("--innodb-log-file-size=8M", "--innodb-buffer-pool-size=32M",
              "--innodb-data-file-path=ibdata1:12M:autoextend", "--skip-name-resolve")
# mariadb-install-db writes the system tables (seconds; more on a loaded machine)
DB_INSTALL_TIMEOUT = 180
NODE_CPUS = 4
NODE_MEMORY_MB = 2048


class SlurmLabError(Exception):
    pass


def _program(name):
    path = shutil.which(name) or DAEMONS.get(name)
    if not path or not os.path.exists(path):
        raise SlurmLabError(f"slurm lab: {name} not found (apt install slurm-wlm munge"
                            f"{' slurmdbd mariadb-server' if name in DB_PROGRAMS else ''})")
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
        "db": os.path.join(base, "db"),
    }


def slurm_conf(paths, run_dir, nodes, ctld_port, node_ports, gpus_per_node, dbd_port=None):
    """The text of slurm.conf (the LAB-NOTES essentials; one NodeName line per node, each with its own Port=);
    with ``dbd_port`` the job records go to the lab's slurmdbd on that port."""
    user = getpass.getuser()
    if dbd_port:
        storage = ["AccountingStorageType=accounting_storage/slurmdbd", "AccountingStorageHost=localhost",
                   f"AccountingStoragePort={dbd_port}",
                   # the munge socket of the connections to slurmdbd (AuthInfo is not read for those)
                   f"AccountingStoragePass={run_dir}/munge.sock"]
    else:
        storage = ["AccountingStorageType=accounting_storage/none"]
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
    ] + storage + [
        "JobAcctGatherType=jobacct_gather/none",
        # job completion records: one line per job end, read for the quality indicators (effective training time,
        # recovery time) where there is no slurmdbd
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


def _port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def slurmdbd_conf(paths, run_dir, dbd_port, db_port, password):
    """The text of slurmdbd.conf: slurmdbd on ``dbd_port``, its MariaDB on ``db_port`` (loopback)."""
    return "\n".join([
        "# zhisuan lab slurmdbd.conf -- written by lab/sched/slurm_lab.py (mode 0600: it holds the database password)",
        "AuthType=auth/munge",
        f"AuthInfo=socket={run_dir}/munge.sock",
        "DbdHost=localhost",
        "DbdAddr=127.0.0.1",
        f"DbdPort={dbd_port}",
        f"SlurmUser={getpass.getuser()}",
        f"LogFile={paths['log']}/slurmdbd.log",
        f"PidFile={run_dir}/slurmdbd.pid",
        "StorageType=accounting_storage/mysql",
        "StorageHost=127.0.0.1",
        f"StoragePort={db_port}",
        f"StorageUser={DB_USER}",
        f"StoragePass={password}",
        f"StorageLoc={DB_NAME}",
        "DebugLevel=info",
    ]) + "\n"


def _sql(programs, run_dir, statement, timeout):
    return subprocess.run([programs["mariadb"], "--no-defaults", "-uroot", "--socket", run_dir + "/mysql.sock",
                           "-e", statement], capture_output=True, text=True, timeout=timeout, check=False)


def _start_accounting(paths, run_dir, env, programs, info, timeout):
    """MariaDB and slurmdbd for the lab (before slurmctld, which registers with slurmdbd at its start)."""
    db_port, dbd_port = _free_ports(2)
    info["accounting"] = {"db_port": db_port, "dbd_port": dbd_port, "database": DB_NAME,
                          "slurmdbd_conf": os.path.join(paths["etc"], "slurmdbd.conf"),
                          "log": os.path.join(paths["log"], "slurmdbd.log")}
    db_log = os.path.join(paths["log"], "mariadb.log")
    user = ["--user=root"] if os.geteuid() == 0 else []  # mariadbd refuses root unless told
    install_timeout = max(DB_INSTALL_TIMEOUT, timeout)
    try:
        res = subprocess.run([programs["mariadb-install-db"], "--no-defaults", "--datadir=" + paths["db"],
                              "--auth-root-authentication-method=normal", "--skip-test-db"] + user + list(DB_OPTIONS),
                             capture_output=True, text=True, timeout=install_timeout, check=False)
    except subprocess.TimeoutExpired:
        raise SlurmLabError(f"slurm lab: mariadb-install-db did not end in {install_timeout} s") from None
    if res.returncode != 0:
        raise SlurmLabError(f"slurm lab: mariadb-install-db failed (rc {res.returncode}): {res.stderr.strip()[-600:]}")
    info["pids"]["mariadbd"] = _spawn(
        [programs["mariadbd"], "--no-defaults", "--datadir=" + paths["db"], "--socket=" + run_dir + "/mysql.sock",
         "--port=%d" % db_port, "--bind-address=127.0.0.1", "--pid-file=" + run_dir + "/mariadbd.pid",
         "--log-error=" + db_log] + user + list(DB_OPTIONS), db_log + ".out", env)
    _wait("mariadbd", lambda: _sql(programs, run_dir, "SELECT 1", 5).returncode == 0, timeout, db_log)
    password = secrets.token_hex(16)
    res = _sql(programs, run_dir, f"CREATE USER '{DB_USER}'@'127.0.0.1' IDENTIFIED BY '{password}'; "
                                  f"GRANT ALL ON {DB_NAME}.* TO '{DB_USER}'@'127.0.0.1';", timeout)
    if res.returncode != 0:
        raise SlurmLabError(f"slurm lab: the slurm database user could not be made: {res.stderr.strip()}")
    _write(info["accounting"]["slurmdbd_conf"], slurmdbd_conf(paths, run_dir, dbd_port, db_port, password), mode=0o600)
    info["pids"]["slurmdbd"] = _spawn([programs["slurmdbd"], "-D"], info["accounting"]["log"] + ".out", env)
    _wait("slurmdbd", lambda: _port_open(dbd_port), timeout, info["accounting"]["log"])
    return dbd_port


def start(lab_dir, nodes, gpus_per_node=8, timeout=30.0, accounting=False):
    """Start munged, slurmctld and one slurmd per node (and with ``accounting`` MariaDB and slurmdbd first); return
    the info dict (see the module doc)."""
    nodes = list(nodes)
    if not nodes:
        raise SlurmLabError("slurm lab: no nodes")
    needed = ("munged", "slurmctld", "slurmd") + CLIENTS + (DB_PROGRAMS if accounting else ())
    programs = dict((name, _program(name)) for name in needed)
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
    # slurm.conf is written again with the slurmdbd port once the accounting store runs (slurmdbd reads its
    # slurmdbd.conf from slurm.conf's folder)
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
        if accounting:
            dbd_port = _start_accounting(paths, run_dir, env, programs, info, timeout)
            _write(paths["conf"], slurm_conf(paths, run_dir, nodes, ports[0], ports[1:], gpus_per_node, dbd_port))
            _write(paths["json"], json.dumps(info, indent=2) + "\n")
            res = _client(env, programs["sacctmgr"], "-i", "add", "cluster", CLUSTER, timeout=timeout)
            if res.returncode != 0 and "already exists" not in res.stdout + res.stderr:
                raise SlurmLabError(f"slurm lab: sacctmgr add cluster failed: {(res.stderr or res.stdout).strip()}")
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


def submit(lab_dir, script, name, nodes=None, output=None, requeue=False, timeout=10.0, extra=None):
    """``sbatch`` the script on ``nodes`` (a list; default any node); returns the job id (str). Its output goes to
    ``output`` (default ``<lab>/slurm/jobs/<name>-%j.out``); ``extra``: more sbatch options (``--time=1``)."""
    paths = _paths(lab_dir)
    info = _read_info(paths)
    if info is None:
        raise SlurmLabError(f"no slurm lab at {paths['base']}")
    argv = [info["tools"]["sbatch"], "--parsable", "-J", name, "-o", output or os.path.join(paths["jobs"], name + "-%j.out")]
    if nodes:
        argv += ["-N", str(len(nodes)), "-w", ",".join(nodes)]
    if requeue:
        argv.append("--requeue")
    argv += list(extra or [])
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


def requeue(lab_dir, job, timeout=10.0):
    """The operator's ``scontrol requeue <job>`` of a running batch job (its attempt ends REQUEUED in the accounting),
    and the job let start again at once: Slurm holds a requeued batch job for the credential lifetime
    (``cred_expire``, 120 s by default) unless its ``StartTime`` is set. Returns the state it left PENDING for."""
    info = _read_info(_paths(lab_dir))
    if info is None:
        raise SlurmLabError(f"no slurm lab at {_paths(lab_dir)['base']}")
    deadline = time.monotonic() + timeout

    def scontrol(*argv):
        return subprocess.run([info["tools"]["scontrol"]] + list(argv), capture_output=True, text=True,
                              timeout=timeout, check=False)
    res = scontrol("requeue", job)
    if res.returncode != 0:
        raise SlurmLabError(f"slurm lab: scontrol requeue {job} failed: {res.stderr.strip()}")
    # the hold is set when the requeued batch step has ended (the job COMPLETING until then): StartTime=now is set
    # once the job is PENDING, and again while it still waits for its begin time
    pending = False
    while time.monotonic() < deadline:
        state = (subprocess.run([info["tools"]["squeue"], "-h", "-j", job, "-o", "%T"], capture_output=True,
                                text=True, timeout=timeout, check=False).stdout.split() or ["ENDED"])[0]
        if state == "PENDING":
            pending = True
            scontrol("update", f"JobId={job}", "StartTime=now")
        elif pending and state != "COMPLETING":
            return state
        time.sleep(0.5)
    raise SlurmLabError(f"slurm lab: requeued job {job} did not start again in {timeout} s")


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

