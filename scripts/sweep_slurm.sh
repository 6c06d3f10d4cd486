#!/usr/bin/env bash
# A sweep run as a Slurm job array gives the same directory, byte for byte,
# as `rdmalab sweep --out`: a single-node Slurm on this machine (Debian's
# slurm-wlm and munge, installed when missing; slurmctld and slurmd on
# localhost with a configuration under a temporary directory), one array
# task per run of the plan (`sbatch --array=0-N`, each task `rdmalab run
# --plan --index $SLURM_ARRAY_TASK_ID`), then `rdmalab merge`, all with
# --report, compared with `diff -r`. Needs root (slurmd runs jobs as their
# user and the daemons write under /run). Starts munged (unless one runs),
# slurmctld and slurmd, and stops exactly those at the end; writes only
# under a temporary directory (removed at the end), /etc/munge/munge.key
# when missing and /run/munge. Not run by .ci/run (about 10 s here, most of
# it the daemons starting; docs/scale_out.md):
#
#   scripts/sweep_slurm.sh [RDMALAB_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/rdmalab}")
if [ "$(id -u)" != 0 ]; then
  echo "sweep_slurm: needs root (it starts slurmd and munged)" >&2
  exit 1
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
t_start=$(date +%s.%N)
tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# munge: the key the package made (or a new one), and a daemon.
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  chown munge:munge /etc/munge/munge.key 2>/dev/null || true
  chmod 400 /etc/munge/munge.key
fi
if ! munge -n >/dev/null 2>&1; then
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge/munge.key 2>/dev/null || true
  setpriv --reuid=munge --regid=munge --init-groups munged --foreground 2>"$tmp/munged.log" &
  pids+=($!)
  for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n | unmunge >/dev/null || { echo "sweep_slurm: munged does not answer" >&2; exit 1; }
fi

host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/logs"
conf="$tmp/slurm.conf"
cat > "$conf" <<CONF
ClusterName=rdmalab
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$conf"
slurmctld -D -i -f "$conf" 2>"$tmp/slurmctld.err" &
pids+=($!)
slurmd -D -f "$conf" 2>"$tmp/slurmd.err" &
pids+=($!)
for _ in $(seq 100); do
  sinfo -h -o %T 2>/dev/null | grep -qx idle && break
  sleep 0.2
done
sinfo -h -o %T | grep -qx idle || {
  echo "sweep_slurm: the node did not come up:" >&2
  sinfo >&2 || true
  tail -20 "$tmp/slurmctld.log" "$tmp/slurmd.log" >&2 || true
  exit 1
}
t_up=$(date +%s.%N)

scenario=scenarios/incast_pfc.toml
args=(--seeds 1..2 --vary switch.pfc=true,false --vary traffic.0.bytes=20000,60000)
"$bin" sweep "$scenario" "${args[@]}" --out "$tmp/sweep" --report >/dev/null
"$bin" sweep "$scenario" "${args[@]}" --plan "$tmp/plan.json" >/dev/null
n=$(grep -c '"index":' "$tmp/plan.json")
cat > "$tmp/job.sh" <<JOB
#!/bin/bash
#SBATCH --job-name=rdmalab-sweep
#SBATCH --output=$tmp/logs/%A_%a.out
#SBATCH --cpus-per-task=1
cd "$PWD"
exec "$bin" run --plan "$tmp/plan.json" --index "\$SLURM_ARRAY_TASK_ID" --out "$tmp/slurm" --report
JOB
t_submit=$(date +%s.%N)
job=$(sbatch --parsable --array=0-$((n - 1)) "$tmp/job.sh")
# Polled (sbatch --wait polls an array every few seconds).
while [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; do sleep 0.2; done
if [ "$(ls "$tmp"/slurm/*/summary.json 2>/dev/null | wc -l)" != "$n" ]; then
  echo "sweep_slurm: the array did not finish every run:" >&2
  tail -n 20 "$tmp"/logs/* "$tmp/slurmd.log" >&2 || true
  exit 1
fi
"$bin" merge "$tmp/slurm" --report >/dev/null
t_done=$(date +%s.%N)
if ! diff -r "$tmp/sweep" "$tmp/slurm"; then
  echo "sweep_slurm: FAILED: the Slurm array's directory differs from rdmalab sweep's" >&2
  exit 1
fi
awk -v n="$n" -v a="$t_start" -v b="$t_up" -v c="$t_submit" -v d="$t_done" 'BEGIN {
  printf "sweep_slurm: ok, %d array tasks + merge byte-identical to sweep (daemons up in %.1f s, array and merge %.1f s, %.1f s in all)\n", n, b - a, d - c, d - a }'
