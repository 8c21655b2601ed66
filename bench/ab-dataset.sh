#!/usr/bin/env bash
# A dataset built by an older revision's own benchmark code, for bench/ab.sh (docs/performance.md).
#
#   bench/ab-dataset.sh REV BACKEND USERS      e.g. bench/ab-dataset.sh 38b786e sqlite 10000
#
# An older revision refuses a database migrated past it, so comparing it with today's build needs a
# dataset at its own migrations: this builds one with REV's bench/dataset.ts in its worktree (the
# one ab.sh uses; its modules resolve from this checkout's node_modules) and registers it here as
# BACKEND-USERS-SHORTREV (the 7-character hash). Both sides of ab.sh then work on copies of it
# (DATA_A=DATA_B=that name); the newer build migrates its copy as it starts.
# On PostgreSQL (needs psql) the database REV builds takes this size's usual name, so a dataset of
# that size already here is moved aside meanwhile and put back, also when the build fails; REV's is
# renamed idsvc_bench_USERS_SHORTREV.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$#" -eq 3 ] || { echo "usage: bench/ab-dataset.sh REV sqlite|postgres USERS" >&2; exit 2; }
REV=$1; BACKEND=$2; USERS=$3
case "$BACKEND" in sqlite | postgres) ;; *) echo "BACKEND is sqlite or postgres, got $BACKEND" >&2; exit 2 ;; esac
[[ "$USERS" =~ ^[0-9]+$ ]] || { echo "USERS must be a number, got $USERS" >&2; exit 2; }
SHORT=$(git rev-parse --short=7 "$REV")
NAME=$BACKEND-$USERS-$SHORT
mkdir -p bench/data/ab
. bench/revision.sh
WT=$(worktree "$REV")
ADMIN=${BENCH_PG_ADMIN_URL:-postgres://root@127.0.0.1:5432/test}
DB=idsvc_bench_$USERS
sql() { PGOPTIONS=--client-min-messages=warning psql "$ADMIN" -qtAc "$1"; }
exists() { [ "$(sql "SELECT count(*) FROM pg_database WHERE datname = '$1'")" = 1 ]; }
aside=''
put_back() { # REV's half-built database, if any, goes; the one set aside takes its name again
  sql "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
  sql "ALTER DATABASE ${DB}_aside RENAME TO $DB"
}
if [ "$BACKEND" = postgres ] && exists "$DB"; then
  if exists "${DB}_aside"; then echo "${DB}_aside exists (an earlier run's?): rename it back to $DB or drop it first" >&2; exit 1; fi
  sql "ALTER DATABASE $DB RENAME TO ${DB}_aside"; aside=1
  trap put_back EXIT
fi
# REV's own code builds it, in REV's checkout: its migrations, its layout of the rows. A PostgreSQL
# dataset REV built before has been renamed since: its record there would name a database that is gone.
[ "$BACKEND" = postgres ] && rm -f "$WT/bench/data/$BACKEND-$USERS.meta.json"
(cd "$WT" && node --import tsx --input-type=module -e "
  const { ensureDataset } = await import('./bench/dataset.ts');
  await ensureDataset('$BACKEND', $USERS);
  process.exit(0);
")
url=$(node -p "require('./$WT/bench/data/$BACKEND-$USERS.meta.json').databaseUrl")
if [ "$BACKEND" = postgres ]; then
  sql "DROP DATABASE IF EXISTS ${DB}_$SHORT WITH (FORCE)"
  sql "ALTER DATABASE $DB RENAME TO ${DB}_$SHORT"
  url=${url%/*}/${DB}_$SHORT
fi
if [ -n "$aside" ]; then trap - EXIT; sql "ALTER DATABASE ${DB}_aside RENAME TO $DB"; fi
node -e '
  const fs = require("fs"), path = require("path");
  const [wt, backend, users, name, url] = process.argv.slice(1);
  const meta = JSON.parse(fs.readFileSync(`${wt}/bench/data/${backend}-${users}.meta.json`, "utf8"));
  const abs = (f) => path.resolve(wt, f);
  fs.writeFileSync(`bench/data/${name}.meta.json`, JSON.stringify({ ...meta, databaseUrl: url, idsFile: abs(meta.idsFile), servicesFile: abs(meta.servicesFile) }, null, 1));
' "$WT" "$BACKEND" "$USERS" "$NAME" "$url"
echo "$NAME"
