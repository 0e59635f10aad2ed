#!/usr/bin/env bash
# A Slurm prolog that checks the node before a job starts on it, and drains it on an error.
#
#   slurm.conf:  Prolog=/etc/slurm/envcheck-prolog.sh      (runs as root on every node of a job)
#
# 1. `envcheck healthcheck` (NVML only, bounded): the GPUs the job was given are visible and
#    healthy (--gpus from SLURM_JOB_GPUS).
# 2. `envcheck check --no-deep --format json`: the driver, the GPUs and the torch build judged
#    together; the report is kept in $ENVCHECK_REPORTS/<node>.json for `envcheck compare`.
# An error in either drains the node with the reason (`scontrol update ... state=drain`) and
# exits 1, so that Slurm requeues the job elsewhere. envcheck failing to run at all (exit 2 or
# 3: a bad option, an internal error) is logged and lets the job start: a broken checker must
# not drain a cluster.
#
# Settings (environment): ENVCHECK (the command, default `envcheck`; it may hold words, e.g.
# "/opt/envcheck/bin/python -m envcheck"), ENVCHECK_REPORTS (default /var/log/envcheck),
# ENVCHECK_PROLOG_TIMEOUT (seconds for each step, default 60), ENVCHECK_PYTHON (the python
# envcheck runs under, for reading its report; default python3).
set -u

envcheck=${ENVCHECK:-envcheck}
reports=${ENVCHECK_REPORTS:-/var/log/envcheck}
limit=${ENVCHECK_PROLOG_TIMEOUT:-60}
python=${ENVCHECK_PYTHON:-python3}
node=${SLURMD_NODENAME:-$(hostname -s)}

log() { logger -t envcheck-prolog -- "$*" 2>/dev/null || echo "envcheck-prolog: $*" >&2; }

drain() {
  # scontrol's reason is one line; keep it short
  local reason
  reason=$(printf '%s' "envcheck: $1" | tr '\n' ' ' | cut -c1-200)
  log "draining $node: $reason"
  scontrol update nodename="$node" state=drain reason="$reason"
  exit 1
}

mkdir -p "$reports" || { log "cannot create $reports"; exit 0; }

gpus=()
if [ -n "${SLURM_JOB_GPUS:-}" ]; then
  count=$(printf '%s' "$SLURM_JOB_GPUS" | tr ',' '\n' | grep -c .)
  gpus=(--gpus "$count")
fi

# shellcheck disable=SC2086  # ENVCHECK may be several words
health=$(timeout "$limit" $envcheck healthcheck "${gpus[@]}" --timeout 10 2>&1)
status=$?
case $status in
  0) ;;
  1) drain "healthcheck: $health" ;;
  124) drain "healthcheck timed out after ${limit}s (NVML hangs?)" ;;
  *) log "healthcheck could not run (exit $status): $health" ;;
esac

report="$reports/$node.json"
# new files only (mktemp), renamed over the report: never written through a link
tmp=$(mktemp "$reports/.$node.XXXXXX") && err=$(mktemp "$reports/.$node.err.XXXXXX") \
  || { log "cannot write in $reports"; exit 0; }
# shellcheck disable=SC2086
timeout "$limit" $envcheck check --no-deep --format json >"$tmp" 2>"$err"
status=$?
chmod 644 "$tmp"  # facts only, secrets already redacted: readable by `envcheck compare`
mv -f "$tmp" "$report"
details=$(head -c 300 "$err")
rm -f "$err"
case $status in
  0) ;;
  1)
    errors=$("$python" -c '
import json, sys
report = json.load(open(sys.argv[1]))
errors = [f["code"] + " " + f["title"] for f in report["findings"] if f["severity"] == "error"]
print("; ".join(errors))
' "$report" 2>/dev/null) || errors="see $report"
    drain "check: ${errors:-see $report}"
    ;;
  124) drain "check timed out after ${limit}s" ;;
  *) log "check could not run (exit $status): $details" ;;
esac
exit 0
