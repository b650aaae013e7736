#!/usr/bin/env bash
# The proof that the suite does not flake: the whole suite RUNS times in a row with
# CI=true, as `make test` runs it (pytest -n auto), in one of three modes:
#
#   --mode busy            (default) every 4th run while a process spins on CPU 1
#   --mode background      each run started from a background job with SIGINT ignored,
#                          as nohup, cron and some CI runners start it:
#                          (trap '' INT; nohup pytest … &)
#   --mode oversubscribed  each run while six processes spin (4x oversubscribed on 2
#                          CPUs), with REFEREE_TEST_TIME_FACTOR=4 (tests/procs.py)
#
# It does not stop at a failure: each run's log is kept in runs/soak/MODE-N.log and
# one line per run goes to runs/soak/MODE-summary.txt (exit status, mode, seconds,
# load, pytest's last line).  Exits 1 if any run failed.  Give it a machine that does
# nothing else (busy: about 3 minutes a run on a quiet 2-CPU machine; oversubscribed:
# several times that).
#
#   make soak                                  # 20 runs, busy
#   make soak RUNS=5 MODE=background
#   tests/soak.sh --mode oversubscribed 5
#   tests/soak.sh 20 tests/players/test_process.py    # one file (pytest's arguments)
set -uo pipefail
cd "$(dirname "$0")/.."
mode=busy
if [ "${1:-}" = "--mode" ]; then mode=$2; shift 2; fi
case "$mode" in busy|background|oversubscribed) ;;
  *) echo "soak.sh: --mode is busy, background or oversubscribed, not '$mode'" >&2; exit 2;;
esac
runs=${1:-20}
shift || true
jobs=${SOAK_JOBS:-auto}
out=runs/soak
mkdir -p "$out"
summary=$out/$mode-summary.txt
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(date -u +%FT%TZ)" \
     "mode=$mode pytest -n $jobs" > "$summary"
spinners=()
spin() {  # spin [CPU]: one process spinning (on CPU, when taskset can pin it)
  if [ -n "${1:-}" ] && command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 1 ]; then
    taskset -c "$1" python3 -c "while True: pass" &
  else
    python3 -c "while True: pass" &
  fi
  spinners+=($!)
}
unspin() {
  for p in "${spinners[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  spinners=()
}
trap unspin EXIT
failed=0
for i in $(seq 1 "$runs"); do
  log=$out/$mode-$i.log
  factor=${REFEREE_TEST_TIME_FACTOR:-1}
  case "$mode" in
    busy) [ $((i % 4)) -eq 0 ] && spin 1 ;;
    oversubscribed) for _ in 1 2 3 4 5 6; do spin; done; factor=${REFEREE_TEST_TIME_FACTOR:-4} ;;
  esac
  start=$(date +%s)
  cmd=(env CI=true REFEREE_TEST_TIME_FACTOR="$factor"
       .venv/bin/python -m pytest -q -p no:cacheprovider -n "$jobs" "$@")
  if [ "$mode" = background ]; then
    # A background job of a shell without job control, SIGINT ignored explicitly.
    (trap '' INT; exec nohup "${cmd[@]}" > "$log" 2>&1 < /dev/null) &
    wait $!
  else
    "${cmd[@]}" > "$log" 2>&1
  fi
  rc=$?
  note="mode=$mode"
  [ "${#spinners[@]}" -gt 0 ] && note="$note spinners=${#spinners[@]}"
  unspin
  [ "$rc" -ne 0 ] && failed=$((failed + 1))
  line="run $i rc=$rc $note factor=$factor $(( $(date +%s) - start ))s"
  line="$line load=$(cut -d' ' -f1-3 /proc/loadavg) $(tail -1 "$log")"
  echo "$line" | tee -a "$summary"
done
echo "$((runs - failed)) of $runs runs passed" | tee -a "$summary"
[ "$failed" -eq 0 ]
