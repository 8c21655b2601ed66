#!/usr/bin/env bash
# Interleaved A/B of two builds of the service on the 1 M-user SQLite dataset (docs/performance.md).
#
#   bench/ab.sh REV_A REV_B SCENARIO [ROUNDS] [SECONDS]
#
# A revision is a commit (checked out into a git worktree under bench/data/ab/) or WORK for the
# working tree. Both services run at once, pinned to CPU 0; wrk (CPU 1) alternates between them,
# so a burst of someone else's load hits both alike. Prints every round and the ratio of medians.
# ENV_A / ENV_B add environment variables to one side (to compare one build with a switch on and
# off). Needs the dataset (`npm run bench` builds it) and both revisions' migrations to match the
# dataset's: an older revision refuses a database migrated past it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
A=$1; B=$2; SCENARIO=$3; ROUNDS=${4:-5}; SECONDS_PER_RUN=${5:-5}
META=bench/data/sqlite-1000000.meta.json
[ -f "$META" ] || { echo "no 1 M-user dataset: run npm run bench first" >&2; exit 1; }
mkdir -p bench/data/ab

build() { # REV -> the compiled tree (inside the repository, so node_modules resolves)
  local rev=$1 out=bench/data/ab/dist-$1 src
  if [ "$rev" = WORK ]; then src=$ROOT; rm -rf "$out"
  else
    src=$ROOT/bench/data/ab/wt-$rev
    [ -d "$src" ] || git worktree add -f "$src" "$rev" >/dev/null 2>&1
  fi
  if [ ! -f "$out/src/cli/main.js" ]; then
    (cd "$src" && "$ROOT/node_modules/.bin/tsc" -p tsconfig.build.json --outDir "$ROOT/$out" --sourceMap false >/dev/null) || true
  fi
  echo "$out"
}
DA=$(build "$A"); DB=$(build "$B")
KEY=$(node -p "require('./$META').apiKey"); TOKEN=$(node -p "require('./$META').apiToken")

start() { # DIST PORT EXTRA_ENV
  env ${3:-} NODE_ENV=production LOG_LEVEL=warn HOST=127.0.0.1 PORT=$2 DATABASE_URL=sqlite:bench/data/sqlite-1000000.sqlite \
    RATE_LIMIT_PER_KEY=100000000 RATE_LIMIT_PER_ADDRESS=100000000 BACKGROUND_JOBS=0 \
    taskset -c 0 node "$1/src/cli/main.js" serve >/dev/null 2>&1 &
}
start "$DA" 18101 "${ENV_A:-}"; PA=$!
start "$DB" 18102 "${ENV_B:-}"; PB=$!
trap 'kill $PA $PB 2>/dev/null || true' EXIT
for port in 18101 18102; do
  for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.2; done
done

rps() { # PORT SECONDS
  taskset -c 1 wrk -t1 -c64 -d"$2"s -s bench/load.lua "http://127.0.0.1:$1" -- "$SCENARIO" "$KEY" "$TOKEN" \
    bench/data/ids-1000000.txt bench/data/services-sqlite-1000000.txt |
    sed -n 's/^WRK_JSON //p' | node -e "const j=JSON.parse(require('fs').readFileSync(0,'utf8'));console.log(Math.round(j.requests/(j.duration_us/1e6)))"
}
rps 18101 3 >/dev/null; rps 18102 3 >/dev/null # warm both up
a=(); b=()
for _ in $(seq 1 "$ROUNDS"); do a+=("$(rps 18101 "$SECONDS_PER_RUN")"); b+=("$(rps 18102 "$SECONDS_PER_RUN")"); done
node -e '
  const [a, b] = process.argv.slice(1).map((s) => s.split(" ").map(Number));
  const median = (x) => { const s = [...x].sort((p, q) => p - q); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
  console.log("A", a.join(" "), "median", median(a));
  console.log("B", b.join(" "), "median", median(b));
  console.log("B/A", (median(b) / median(a)).toFixed(3), "pairwise", a.map((x, i) => (b[i] / x).toFixed(3)).join(" "));
' "${a[*]}" "${b[*]}"
