#!/bin/sh
# `npm test`: every test file on one database (TEST_DB, SQLite by default). Files run side by side,
# TEST_CONCURRENCY at a time (default 3: much of a file's time is spent waiting on a spawned command,
# a database's fsync or a socket), each in its own process with its own temporary directories,
# PostgreSQL schema, Redis database and ports; the longest known files start first, so that none of
# them is left running alone at the end. The browser files come after, one at a time: each drives a
# Chromium of its own, and several at once would starve them of the CPU their waits assume.
# Arguments, when given, are the files to run instead of all of them.
#
# The tests that start the real `idsvc` start the compiled dist/ (TEST_BUILT=1, test/helpers/
# idsvc-command.ts): tsx would compile the command again at each of those starts. Unless TEST_BUILT
# is given, dist/ is built first when it is missing or a source is newer than the last build made
# here; TEST_BUILT=1 says the caller has just built it (.ci/run), TEST_BUILT=0 runs the command
# through tsx (dist/ is then built only if the client package the tests import is missing; the
# compiled tests import @idsvc/client as built, where tsx would read its source).
set -u
cd "$(dirname "$0")/.."
jobs="${TEST_CONCURRENCY:-3}"
case "$jobs" in '' | *[!0-9]* | 0) echo "TEST_CONCURRENCY must be a whole number from 1 up, got \"$jobs\"" >&2; exit 2 ;; esac

stamp=dist/.test-build
stale() {
  [ ! -f "$stamp" ] || [ -n "$(find src packages/client/src widget scripts/build-widget.ts package.json tsconfig.json tsconfig.build.json packages/client/tsconfig.json -newer "$stamp" -print -quit)" ]
}
build() {
  # The stamp is taken before the build: a source saved during it is newer, and is built next time.
  mkdir -p dist && : >"$stamp.next" && npm run --silent build && mv "$stamp.next" "$stamp"
}
case "${TEST_BUILT:-}" in
  1) ;;
  0) [ -f packages/client/dist/index.js ] || build || exit 1 ;;
  *)
    if stale; then build || exit 1; fi
    export TEST_BUILT=1
    ;;
esac

if [ "$#" -gt 0 ]; then
  files=$(printf '%s\n' "$@")
else
  files=$(find test -name '*.test.ts' | sort)
  # The longest files (measured; docs/testing.md) first, in that order; the rest as found.
  first='test/http/fuzz.test.ts
test/faults/database-outage.test.ts
test/cli/startup-errors.test.ts
test/ops/shutdown.test.ts
test/cli/spawned.test.ts
test/http/abuse.test.ts
test/cli/demo-partner.test.ts
test/http/connections.test.ts
test/cli/backup.test.ts
test/webhooks/secrets-cli.test.ts
test/http/contract.test.ts
test/faults/kill-9.test.ts
test/widget/widget.browser.test.ts'
  listed=$(printf '%s\n' "$first" | while read -r f; do printf '%s\n' "$files" | grep -Fx "$f" || true; done)
  files=$(printf '%s\n%s\n' "$listed" "$(printf '%s\n' "$files" | grep -Fvx "$listed")")
fi
others=$(printf '%s\n' "$files" | grep -v '\.browser\.test\.ts$' | grep . || true)
browser=$(printf '%s\n' "$files" | grep '\.browser\.test\.ts$' || true)

# Each test's database is a copy of one migrated once for the whole run (test/helpers/template-db.ts).
IDSVC_TEST_TEMPLATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/idsvc-template-XXXXXXXX")
export IDSVC_TEST_TEMPLATE_DIR
# The test files and what they import, compiled once for this run (scripts/build-tests.ts): each
# file's process then loads plain JavaScript instead of compiling through tsx. A directory of this
# run's own: two suites may run at once from one checkout (a developer's two terminals).
mkdir -p dist
compiled=$(mktemp -d dist/test-run-XXXXXXXX)
cleanup() {
  rm -rf "$IDSVC_TEST_TEMPLATE_DIR" "$compiled"
  if [ "${TEST_DB:-}" = postgres ]; then
    node --import tsx scripts/drop-test-template.ts || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

node --import tsx scripts/build-tests.ts "$compiled" || exit 1
js() { printf '%s\n' "$1" | grep . | sed "s|^$PWD/||; s|^\./||; s|\.ts\$|.js|; s|^|$compiled/|"; }
others=$(js "$others")
browser=$(js "$browser")

# TEST_TIMES=1: each file's time on stderr after each group, longest first (scripts/test-file-times.ts).
times=''
if [ "${TEST_TIMES:-0}" = 1 ]; then
  times="--test-reporter=tap --test-reporter-destination=stdout --test-reporter=$PWD/$compiled/scripts/test-file-times.js --test-reporter-destination=stderr"
fi

rc=0
# TEST_BROWSER_ALONGSIDE=1: the browser files run from the start, one at a time, beside the others
# (their output printed after them) instead of after them. .ci/run asks it of both suites: the
# browser files would otherwise run last and alone on a half-idle machine.
browser_pid=''
if [ "${TEST_BROWSER_ALONGSIDE:-0}" = 1 ] && [ -n "$browser" ]; then
  browser_log="$compiled/browser.log"
  # shellcheck disable=SC2086 # one file name per word: test file names hold no spaces
  node --enable-source-maps --test --test-concurrency=1 --test-timeout=300000 $times $browser >"$browser_log" 2>&1 &
  browser_pid=$!
fi
# Source maps: a failure's stack names the TypeScript lines.
# shellcheck disable=SC2086
if [ -n "$others" ]; then node --enable-source-maps --test --test-concurrency="$jobs" --test-timeout=300000 $times $others || rc=1; fi
if [ -n "$browser_pid" ]; then
  wait "$browser_pid" || rc=1
  cat "$browser_log"
# shellcheck disable=SC2086
elif [ -n "$browser" ]; then node --enable-source-maps --test --test-concurrency=1 --test-timeout=300000 $times $browser || rc=1; fi
exit "$rc"
