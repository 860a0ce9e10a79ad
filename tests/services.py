"""Debian's own daemons on localhost, for the tests that try the cluster path and the data path
against the real thing: a one-node SLURM cluster (``munged``, ``slurmctld``, ``slurmd``) and an
SSH server (``sshd``).

Every daemon runs in the foreground as a child of the test, so it is stopped by its own pid
and nothing else is; its configuration, state, spool, keys and logs live in a temporary
folder, and it listens on a free localhost port. No system-wide service is started, stopped
or reconfigured. Debian's packages are installed with apt-get when missing (saying so, as the
browser check does); a machine that cannot (not root, no apt-get) skips with one line, since
the daemons and the jobs they run need root there.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SBIN = "/usr/sbin:/usr/bin:/sbin:/bin"
SLURM_PACKAGES = {"slurm-wlm": "slurmctld", "munge": "munged"}  # package: a program it brings
SSH_PACKAGES = {"openssh-server": "sshd"}
PARTITION = "cpu"
NODE = "localhost"
NODE_CPUS = 2


def program(name: str) -> str | None:
    """The path of ``name`` on the usual PATH or in the sbin folders (daemons live there)."""
    return shutil.which(name, path=f"{os.environ.get('PATH', '')}:{SBIN}")


def ensure_packages(purpose: str, packages: dict[str, str]) -> None:
    """Install the Debian ``packages`` (name: a program it brings) whose program is missing,
    saying so; skip the test in one line where this machine cannot run the daemons."""
    if os.geteuid() != 0:
        pytest.skip(f"{purpose} starts Debian's daemons and runs jobs as root; not root here")
    missing = [pkg for pkg, prog in packages.items() if program(prog) is None]
    if not missing:
        return
    apt = shutil.which("apt-get")
    if apt is None:
        pytest.skip(f"{purpose} needs Debian's {', '.join(missing)}; no apt-get to install them")
    print(f"{purpose}: installing Debian's {' and '.join(missing)} (apt-get)")
    env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": SBIN}
    subprocess.run([apt, "update", "-qq"], check=True, env=env, capture_output=True)
    subprocess.run(
        [apt, "install", "-y", "-qq", "--no-install-recommends", *missing],
        check=True,
        env=env,
        capture_output=True,
    )


def free_port() -> int:
    """A localhost TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(
    what: str,
    ready: Callable[[], object],
    timeout_s: float = 30.0,
    procs: Sequence[subprocess.Popen] = (),
) -> None:
    """Poll ``ready()`` until it is true; fail naming ``what`` after ``timeout_s`` or as soon
    as one of ``procs`` (the daemons just started) has exited."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        dead = [p for p in procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            why = f"{dead[0].args[0]} exited" if dead else f"not within {timeout_s:.0f} s"
            raise RuntimeError(f"{what}: {why}")
        time.sleep(0.2)


@dataclass
class Daemons:
    """The processes a rig started, each logging to ``<logs>/<name>.out``; :meth:`stop` ends
    them by pid, last started first (SIGTERM, SIGKILL after ``grace_s``)."""

    logs: Path
    procs: list[subprocess.Popen] = field(default_factory=list)

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
        with open(self.logs / f"{name}.out", "wb") as out:  # the daemon holds its own copy
            proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        self.procs.append(proc)
        return proc

    def stop(self, grace_s: float = 15.0) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(grace_s)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs.clear()


@dataclass
class Slurm:
    """A running one-node cluster: its ``slurm.conf`` and the environment its commands need
    (``SLURM_CONF``)."""

    conf: Path
    env: dict[str, str]

    def run(self, *args: str) -> str:
        """Run a SLURM command against this cluster; its stdout."""
        res = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=60)
        if res.returncode:
            raise RuntimeError(f"{' '.join(args)}: {res.stderr.strip()}")
        return res.stdout

    def queue(self) -> list[str]:
        """The ids of the jobs in the queue (pending, running, completing)."""
        return self.run("squeue", "--noheader", "--format=%i").split()

    def jobs(self) -> list[dict[str, str]]:
        """Every job the controller knows, running or ended (``MinJobAge`` keeps ended ones for
        the whole test), as ``scontrol show job`` gives its fields."""
        text = self.run("scontrol", "show", "job", "--oneliner")
        if "No jobs in the system" in text:
            return []
        return [dict(re.findall(r"(\w[\w:/]*)=(\S*)", line)) for line in text.splitlines()]

    def job(self, job_id: str) -> dict[str, str]:
        return next(j for j in self.jobs() if j["JobId"] == str(job_id))


def slurm_conf(root: Path, ctld_port: int, node_port: int, munge_socket: Path) -> str:
    """The cluster's configuration: one node of :data:`NODE_CPUS` CPUs in one partition,
    ``select/cons_tres``, no accounting daemon. A requeued job may start again after 6 s
    (``cred_expire``, 121 s by default) and the scheduler looks every second, so a preempted
    job resumes within seconds; ended jobs stay listed for an hour (``MinJobAge``)."""
    kib = next(
        int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal:")
    )
    return f"""\
ClusterName=jepatest
SlurmctldHost={NODE}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={node_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket},cred_expire=5
SlurmUser=root
SlurmdUser=root
StateSaveLocation={root / "state"}
SlurmdSpoolDir={root / "spool"}
SlurmctldPidFile={root / "slurmctld.pid"}
SlurmdPidFile={root / "slurmd.pid"}
SlurmctldLogFile={root / "log" / "slurmctld.log"}
SlurmdLogFile={root / "log" / "slurmd.log"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_interval=1
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=3600
MailProg=/bin/true
NodeName={NODE} NodeAddr=127.0.0.1 CPUs={NODE_CPUS} RealMemory={int(kib / 1024 * 0.9)} State=UNKNOWN
PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
"""


def secret_file(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file only its owner may read (a key)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


@contextmanager
def slurm_cluster(root: Path) -> Iterator[Slurm]:
    """A one-node SLURM cluster on localhost, everything under ``root``: ``munged`` with its
    own key and socket, ``slurmctld`` and ``slurmd``. On the way out every job still queued is
    cancelled and waited for, then the three daemons are stopped."""
    ensure_packages("the SLURM tests", SLURM_PACKAGES)
    for sub in ("state", "spool", "log", "munge"):
        (root / sub).mkdir(parents=True)
    munge_socket = root / "munge" / "munge.socket"
    secret_file(root / "munge" / "munge.key", os.urandom(1024))
    conf = root / "slurm.conf"
    conf.write_text(slurm_conf(root, free_port(), free_port(), munge_socket))
    env = {**os.environ, "SLURM_CONF": str(conf), "PATH": f"{os.environ['PATH']}:{SBIN}"}
    daemons = Daemons(root / "log")
    cluster = Slurm(conf, env)
    try:
        munged = daemons.start(
            "munged",
            [
                program("munged"),
                "--foreground",
                "--force",  # the test's folders are not world-searchable
                f"--key-file={root / 'munge' / 'munge.key'}",
                f"--socket={munge_socket}",
                f"--pid-file={root / 'munge' / 'munged.pid'}",
                f"--log-file={root / 'log' / 'munged.log'}",
                f"--seed-file={root / 'munge' / 'munged.seed'}",
            ],
            env,
        )
        wait_for("munged", munge_socket.exists, procs=[munged])
        ctld = daemons.start("slurmctld", [program("slurmctld"), "-D", "-f", str(conf)], env)
        node = daemons.start("slurmd", [program("slurmd"), "-D", "-N", NODE, "-f", str(conf)], env)

        def idle() -> bool:
            res = subprocess.run(
                ["sinfo", "--noheader", "--format=%T", f"--nodes={NODE}"],
                env=env,
                capture_output=True,
                text=True,
            )
            return res.stdout.strip() == "idle"

        wait_for("the SLURM node", idle, procs=[munged, ctld, node])
        yield cluster
    finally:
        if len(daemons.procs) == 3 and all(p.poll() is None for p in daemons.procs):
            subprocess.run(["scancel", f"--partition={PARTITION}"], env=env)
            try:
                wait_for("the cancelled jobs", lambda: not cluster.queue(), timeout_s=60)
            except RuntimeError:
                pass  # the daemons go anyway; a job step left behind ends with its node
        daemons.stop()


@dataclass
class SshServer:
    """A running ``sshd``: its port, the user it lets in and the private key that does."""

    port: int
    user: str
    key: Path


@contextmanager
def ssh_server(root: Path) -> Iterator[SshServer]:
    """Debian's ``sshd`` on a free localhost port, with a host key and a throw-away client key
    made for it under ``root``: only that key logs in (as the current user), no password."""
    ensure_packages("the SSH test", SSH_PACKAGES)
    keygen = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"
    root.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "client_key"):
        subprocess.run(
            [keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(root / name)],
            check=True,
            capture_output=True,
        )
    (root / "authorized_keys").write_bytes((root / "client_key.pub").read_bytes())
    port = free_port()
    (root / "sshd_config").write_text(
        f"""\
ListenAddress 127.0.0.1
Port {port}
HostKey {root / "host_key"}
PidFile {root / "sshd.pid"}
AuthorizedKeysFile {root / "authorized_keys"}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
"""
    )
    # sshd's privilege-separation folder is compiled in; Debian's package makes it at boot
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    daemons = Daemons(root)
    try:
        sshd = daemons.start(
            "sshd",
            [program("sshd"), "-D", "-e", "-f", str(root / "sshd_config")],
            {"PATH": SBIN},
        )

        def listening() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        wait_for("sshd", listening, procs=[sshd])
        yield SshServer(port, pwd.getpwuid(os.geteuid()).pw_name, root / "client_key")
    finally:
        daemons.stop()
