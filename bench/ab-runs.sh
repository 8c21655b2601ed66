#!/usr/bin/env bash
# bench/ab.sh over fresh processes (docs/performance.md, "Comparing two builds").
#
#   bench/ab-runs.sh RUNS REV_A REV_B SCENARIO [ROUNDS] [SECONDS]
#
# The rounds of one ab.sh run agree closely, but two runs of the same code can differ by up to
# 10 %: each run starts its two servers once, and each process settles on its own compiled code.
# This runs ab.sh RUNS times, each with new processes, A as the first side in odd runs and as the
# second in even ones (ENV_A/ENV_B and DATA_A/DATA_B follow their side), and prints each run's
# B-against-A ratio of requests per CPU-second (the geometric mean of its rounds), then their median
# and range. A difference is shown when the range of the runs leaves it out.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=$1; A=$2; B=$3; SCENARIO=$4; ROUNDS=${5:-3}; SECONDS_PER_RUN=${6:-5}
ratios=()
for run in $(seq 1 "$RUNS"); do
  if (( run % 2 )); then
    out=$(bench/ab.sh "$A" "$B" "$SCENARIO" "$ROUNDS" "$SECONDS_PER_RUN")
  else
    out=$(ENV_A=${ENV_B:-} ENV_B=${ENV_A:-} DATA_A=${DATA_B:-sqlite-1000000} DATA_B=${DATA_A:-sqlite-1000000} \
      bench/ab.sh "$B" "$A" "$SCENARIO" "$ROUNDS" "$SECONDS_PER_RUN")
  fi
  r=$(printf '%s\n' "$out" | sed -n 's/^req\/CPU-s B\/A [0-9.]* geomean of pairs \([0-9.]*\).*/\1/p')
  [ -n "$r" ] || { printf '%s\n' "$out" >&2; echo "run $run printed no ratio" >&2; exit 1; }
  (( run % 2 )) || r=$(node -p "(1 / $r).toFixed(3)")
  echo "run $run: B/A $r"
  ratios+=("$r")
done
node -e '
  const r = process.argv.slice(1).map(Number).sort((p, q) => p - q);
  const median = r.length % 2 ? r[(r.length - 1) / 2] : (r[r.length / 2 - 1] + r[r.length / 2]) / 2;
  console.log("req/CPU-s B/A over", r.length, "runs: median", median.toFixed(3), "range", r[0].toFixed(3), "–", r[r.length - 1].toFixed(3));
' "${ratios[@]}"
