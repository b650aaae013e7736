#!/usr/bin/env bash
# The proof that the suite does not flake: the whole suite RUNS times in a row
# (default 20) with CI=true, as `make test` runs it, every 4th run while a process
# spins on CPU 1 (the "other CPU busy" case).  It does not stop at a failure: each
# run's log is kept in runs/soak/run-N.log and one line per run goes to
# runs/soak/summary.txt (exit status, spinner, seconds, load, pytest's last line).
# Exits 1 if any run failed.  About 6 minutes a run on a quiet 2-CPU machine:
# give it a machine that does nothing else.
#
#   make soak                 # 20 runs
#   make soak RUNS=5
#   tests/soak.sh 20 tests/players/test_process.py    # one file (pytest's arguments)
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
shift || true
out=runs/soak
mkdir -p "$out"
summary=$out/summary.txt
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(date -u +%FT%TZ)" > "$summary"
failed=0
for i in $(seq 1 "$runs"); do
  spin=""
  if [ $((i % 4)) -eq 0 ]; then
    if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 1 ]; then
      taskset -c 1 python3 -c "while True: pass" & spin=$!
    else
      python3 -c "while True: pass" & spin=$!
    fi
  fi
  start=$(date +%s)
  CI=true .venv/bin/python -m pytest -q -p no:cacheprovider "$@" > "$out/run-$i.log" 2>&1
  rc=$?
  if [ -n "$spin" ]; then kill "$spin"; wait "$spin" 2>/dev/null; fi
  [ "$rc" -ne 0 ] && failed=$((failed + 1))
  busy=no; [ -n "$spin" ] && busy=yes
  line="run $i rc=$rc spinner=$busy $(( $(date +%s) - start ))s"
  line="$line load=$(cut -d' ' -f1-3 /proc/loadavg) $(tail -1 "$out/run-$i.log")"
  echo "$line" | tee -a "$summary"
done
echo "$((runs - failed)) of $runs runs passed" | tee -a "$summary"
[ "$failed" -eq 0 ]
