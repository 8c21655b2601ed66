#!/usr/bin/env bash
# Instructions per request of a build, counted by valgrind (docs/performance.md, "Against the build
# before the house was put in order").
#
#   bench/instructions.sh REV SCENARIO [PROCESSES] [WARM] [REQUESTS]
#
# Time per request moves by up to 25 % between fresh processes on a shared host; the instructions a
# request executes do not depend on what else the host runs. Each of PROCESSES (default 3) fresh
# servers of REV (a commit, or WORK, built as bench/ab.sh builds it) runs under callgrind with
# counting off, answers WARM requests (default 12000) of SCENARIO's pool (bench/requests.ts, seed 0)
# so that V8 has compiled its hot paths, then counts the next REQUESTS (default 3000): every thread
# (the event loop, V8's collector and compiler, libuv's pool). Prints one line per process; a build
# whose processes disagree has more than one steady state, and each shows.
#
# REV `floor-http` or `floor-fastify` counts bench/http-floor.mjs instead: one kept answer by Node's
# own http or a bare Fastify route, the least any server on this runtime does per request.
#
# POOL: a pool file of its own instead of SCENARIO's (e.g. the same 200 public reads over and over: hits).
# SERVER_ENV: more environment for the server (e.g. ANSWER_CACHE_MB=0: misses only); DATA: the dataset
# (default sqlite-10000; bench/ab-dataset.sh builds an older revision's). Work driven by the clock
# (checkpoints, the change feed's readings) runs more often per request under valgrind than at full
# speed: compare builds counted this way with each other, not with timed figures. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
[ "$#" -ge 2 ] || { echo "usage: bench/instructions.sh REV SCENARIO [PROCESSES] [WARM] [REQUESTS]" >&2; exit 2; }
REV=$1; SCENARIO=$2; PROCESSES=${3:-3}; WARM=${4:-12000}; REQUESTS=${5:-3000}
DATA=${DATA:-sqlite-10000}; PORT=${PORT:-18171}
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install -y valgrind)" >&2; exit 1; }
[ -f "bench/data/$DATA.meta.json" ] || { echo "no dataset $DATA: build it with npm run bench (or bench/ab-dataset.sh)" >&2; exit 1; }
if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then echo "port $PORT is in use: set PORT" >&2; exit 1; fi
mkdir -p bench/data/ab
OUT=bench/data/ab/instructions-$REV; mkdir -p "$OUT"

. bench/revision.sh
case "$REV" in
  floor-http | floor-fastify) SERVE=(bench/http-floor.mjs "${REV#floor-}") ;;
  *) DIST=$(build "$REV"); SERVE=("$DIST/src/cli/main.js" serve) ;;
esac

if [ -n "${POOL:-}" ]; then cp "$POOL" "$OUT/pool.tsv"; else node --import tsx bench/requests.ts pool "$DATA" "$SCENARIO" 0 "$OUT/pool.tsv"; fi
# vgdb names its pipes after the user and the host: both ends must agree (HOST is also the server's setting).
export USER=${USER:-root} LOGNAME=${LOGNAME:-root}
for run in $(seq 1 "$PROCESSES"); do
  URL=$(node --import tsx bench/dataset.ts copy "$DATA" instructions)
  rm -f "$OUT/callgrind.$run".*
  # SERVER_ENV last, so that it may also change the settings set here (words split on spaces).
  env NODE_ENV=production LOG_LEVEL=warn HOST=127.0.0.1 PORT=$PORT DATABASE_URL=$URL \
    RATE_LIMIT_PER_KEY=100000000 RATE_LIMIT_PER_KEY_UNPROVEN=100000000 RATE_LIMIT_PER_ADDRESS=100000000 BACKGROUND_JOBS=0 ${SERVER_ENV:-} \
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT/callgrind.$run.%p" node "${SERVE[@]}" >/dev/null 2>"$OUT/valgrind.$run.log" &
  PID=$!
  trap 'kill $PID 2>/dev/null || true' EXIT
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.5; done
  curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null || { echo "the server did not start: $OUT/valgrind.$run.log" >&2; exit 1; }
  node --import tsx bench/send.ts "$PORT" "$OUT/pool.tsv" 0 "$WARM"
  HOST=127.0.0.1 callgrind_control -i on "$PID" >/dev/null 2>&1 || { echo "callgrind_control could not reach the server" >&2; exit 1; }
  node --import tsx bench/send.ts "$PORT" "$OUT/pool.tsv" "$WARM" "$REQUESTS"
  HOST=127.0.0.1 callgrind_control -d "$PID" >/dev/null 2>&1 || { echo "callgrind_control could not reach the server" >&2; exit 1; }
  kill "$PID"; wait "$PID" 2>/dev/null || true
  # The dump's own `summary:` line: the instructions counted while counting was on.
  TOTAL=$(awk '/^summary:/ { print $2 }' "$OUT/callgrind.$run.$PID.1" 2>/dev/null || true)
  [ -n "$TOTAL" ] || { echo "no count in $OUT/callgrind.$run.$PID.1 (see $OUT/valgrind.$run.log)" >&2; exit 1; }
  echo "$REV $SCENARIO process $run: $((TOTAL / REQUESTS)) instructions per request ($TOTAL over $REQUESTS, after $WARM)${SERVER_ENV:+ with $SERVER_ENV}"
done
