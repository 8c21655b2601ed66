#!/usr/bin/env bash
# Interleaved A/B of two services (docs/performance.md).
#
#   bench/ab.sh REV_A REV_B SCENARIO [ROUNDS] [SECONDS]
#
# A revision is a commit (checked out into a git worktree under bench/data/ab/) or WORK for the
# working tree. Both services run at once, pinned to CPU 0; wrk (CPU 1) alternates between them,
# each side first in every other round, so a burst of someone else's load hits both alike. Prints
# every round, the ratio of medians and the geometric mean of each round's ratio, of requests/s
# and of requests per CPU-second of the server process.
#
# TOGETHER=1 loads both sides at the same time instead (two wrk on CPU 1): the kernel shares CPU 0
# evenly between the two servers, so each side's requests per CPU-second compare their costs under
# exactly the same host conditions: an A/A comparison then agrees far more closely per round than
# alternating rounds do (docs/performance.md). Use it for CPU-bound scenarios.
#
# Each side may differ in more than its build:
#   ENV_A / ENV_B    environment variables for one side (one build with a switch on and off);
#   DATA_A / DATA_B  the dataset, by name (default sqlite-1000000; e.g. sqlite-10000, postgres-1000000):
#                    the same build on two sizes, interleaved, is how 1 M against 10 k users is compared;
#   PORT_A / PORT_B  the two servers' ports (default 18101, 18102): two comparisons on one host need their own;
# Each side works on its own fresh copy of its dataset (bench/dataset.ts, workingCopy), so writes
# neither change the dataset nor reach the other side. Needs the datasets (`npm run bench -- [--users N] [--postgres]` builds them) and both revisions'
# migrations to match the datasets': an older revision refuses a database migrated past it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
A=$1; B=$2; SCENARIO=$3; ROUNDS=${4:-5}; SECONDS_PER_RUN=${5:-5}
DATA_A=${DATA_A:-sqlite-1000000}; DATA_B=${DATA_B:-sqlite-1000000}
mkdir -p bench/data/ab

meta() { # DATASET FIELD
  local file=bench/data/$1.meta.json
  [ -f "$file" ] || { echo "no dataset $1: build it with npm run bench (see the comment at the top)" >&2; exit 1; }
  node -p "require('./$file').$2"
}

. bench/revision.sh # build REV -> its compiled tree
DA=$(build "$A"); if [ "$B" = "$A" ]; then DB=$DA; else DB=$(build "$B"); fi

database_url() { # DATASET SIDE -> a fresh working copy's URL (the dataset itself is never written)
  meta "$1" users >/dev/null
  node --import tsx bench/dataset.ts copy "$1" "$2"
}
URL_A=$(database_url "$DATA_A" ab_a); URL_B=$(database_url "$DATA_B" ab_b)

start() { # DIST PORT EXTRA_ENV DATABASE_URL
  env ${3:-} NODE_ENV=production LOG_LEVEL=warn HOST=127.0.0.1 PORT=$2 DATABASE_URL=$4 \
    RATE_LIMIT_PER_KEY=100000000 RATE_LIMIT_PER_KEY_UNPROVEN=100000000 RATE_LIMIT_PER_ADDRESS=100000000 BACKGROUND_JOBS=0 \
    taskset -c 0 node "$1/src/cli/main.js" serve >/dev/null 2>&1 &
}
PORT_A=${PORT_A:-18101}; PORT_B=${PORT_B:-18102}
# A port already taken would send this comparison's load to someone else's server.
for port in "$PORT_A" "$PORT_B"; do
  if curl -s -o /dev/null "http://127.0.0.1:$port/"; then echo "port $port is in use: set PORT_A / PORT_B" >&2; exit 1; fi
done
start "$DA" "$PORT_A" "${ENV_A:-}" "$URL_A"; PA=$!
start "$DB" "$PORT_B" "${ENV_B:-}" "$URL_B"; PB=$!
trap 'kill $PA $PB 2>/dev/null || true' EXIT
for port in "$PORT_A" "$PORT_B"; do
  for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.2; done
done

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system CPU of a process, in clock ticks
TICK=$(getconf CLK_TCK)
# The requests each side replays (bench/requests.ts), drawn from one seed per round so both sides
# get the same and update_service never repeats a round's writes.
pools() { # SEED
  node --import tsx bench/requests.ts pool "$DATA_A" "$SCENARIO" "$1" bench/data/ab/pool-a.tsv
  node --import tsx bench/requests.ts pool "$DATA_B" "$SCENARIO" "$1" bench/data/ab/pool-b.tsv
}
pools 0
rps() { # PORT PID SECONDS POOL -> "requests/s/requests-per-CPU-second"
  local t0 t1 j
  t0=$(ticks "$2")
  j=$(taskset -c 1 wrk -t1 -c64 -d"$3"s -s bench/load.lua "http://127.0.0.1:$1" -- "$4" | sed -n 's/^WRK_JSON //p')
  t1=$(ticks "$2")
  node -e 'const [j, t0, t1, tick] = process.argv.slice(1); const r = JSON.parse(j).requests;
    console.log(Math.round(r / (JSON.parse(j).duration_us / 1e6)) + "/" + Math.round(r / ((t1 - t0) / tick)))' "$j" "$t0" "$t1" "$TICK"
}
WARMUP=${WARMUP:-3} # seconds of load on each side before the rounds
rps "$PORT_A" $PA "$WARMUP" bench/data/ab/pool-a.tsv >/dev/null; rps "$PORT_B" $PB "$WARMUP" bench/data/ab/pool-b.tsv >/dev/null # warm both up
a=(); b=()
for round in $(seq 1 "$ROUNDS"); do
  pools "$round"
  if [ "${TOGETHER:-0}" = 1 ]; then
    rps "$PORT_A" $PA "$SECONDS_PER_RUN" bench/data/ab/pool-a.tsv >bench/data/ab/round-a & RA=$!
    rps "$PORT_B" $PB "$SECONDS_PER_RUN" bench/data/ab/pool-b.tsv >bench/data/ab/round-b
    wait $RA
    a+=("$(cat bench/data/ab/round-a)"); b+=("$(cat bench/data/ab/round-b)")
    continue
  fi
  # Each side goes first in every other round: the side measured second runs faster in an A/A
  # comparison (the pools just written, the first side's leftover work).
  if (( round % 2 )); then
    a+=("$(rps "$PORT_A" $PA "$SECONDS_PER_RUN" bench/data/ab/pool-a.tsv)")
    b+=("$(rps "$PORT_B" $PB "$SECONDS_PER_RUN" bench/data/ab/pool-b.tsv)")
  else
    b+=("$(rps "$PORT_B" $PB "$SECONDS_PER_RUN" bench/data/ab/pool-b.tsv)")
    a+=("$(rps "$PORT_A" $PA "$SECONDS_PER_RUN" bench/data/ab/pool-a.tsv)")
  fi
done
# Requests per CPU-second of the server is steadier when the host gives time to others (not the
# process's CPU time); when the host itself runs slower, both figures move alike.
node -e '
  const [a, b] = process.argv.slice(1).map((s) => s.split(" ").map((x) => x.split("/").map(Number)));
  const median = (x) => { const s = [...x].sort((p, q) => p - q); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
  for (const [k, label] of [[0, "req/s"], [1, "req/CPU-s"]]) {
    const x = a.map((r) => r[k]), y = b.map((r) => r[k]);
    console.log(label.padEnd(9), "A", x.join(" "), "median", median(x));
    console.log(label.padEnd(9), "B", y.join(" "), "median", median(y));
    const ratios = x.map((v, i) => y[i] / v);
    const geomean = Math.exp(ratios.reduce((s, r) => s + Math.log(r), 0) / ratios.length);
    console.log(label.padEnd(9), "B/A", (median(y) / median(x)).toFixed(3), "geomean of pairs", geomean.toFixed(3), "pairwise", ratios.map((r) => r.toFixed(3)).join(" "));
  }
' "${a[*]}" "${b[*]}"
