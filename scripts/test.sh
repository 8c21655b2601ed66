#!/bin/sh
# `npm test`: every test file on one database (TEST_DB, SQLite by default). Files run side by side,
# TEST_CONCURRENCY at a time (default 3: much of a file's time is spent waiting on a spawned command,
# a database's fsync or a socket), each in its own process with its own temporary directories,
# PostgreSQL schema, Redis database and ports. The browser files come after, one at a time: each
# drives a Chromium of its own, and several at once would starve them of the CPU their waits assume.
# Arguments, when given, are the files to run instead of all of them.
set -u
cd "$(dirname "$0")/.."
jobs="${TEST_CONCURRENCY:-3}"
case "$jobs" in '' | *[!0-9]* | 0) echo "TEST_CONCURRENCY must be a whole number from 1 up, got \"$jobs\"" >&2; exit 2 ;; esac

if [ "$#" -gt 0 ]; then
  files=$(printf '%s\n' "$@")
else
  files=$(find test -name '*.test.ts' | sort)
fi
others=$(printf '%s\n' "$files" | grep -v '\.browser\.test\.ts$' || true)
browser=$(printf '%s\n' "$files" | grep '\.browser\.test\.ts$' || true)

rc=0
# shellcheck disable=SC2086 # one file name per word: test file names hold no spaces
if [ -n "$others" ]; then node --import tsx --test --test-concurrency="$jobs" --test-timeout=300000 $others || rc=1; fi
# shellcheck disable=SC2086
if [ -n "$browser" ]; then node --import tsx --test --test-concurrency=1 --test-timeout=300000 $browser || rc=1; fi
exit "$rc"
