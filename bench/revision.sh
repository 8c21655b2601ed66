# Sourced by bench/ab.sh, bench/ab-dataset.sh and bench/instructions.sh (run from the repository's
# root, ROOT set to it): a revision's worktree and its compiled tree, made the same way for all.

worktree() { # REV -> its worktree under bench/data/ab/, added the first time
  local wt=bench/data/ab/wt-$1
  [ -d "$wt" ] || git worktree add -f "$wt" "$1" >/dev/null 2>&1
  echo "$wt"
}

build() { # REV (a commit, or WORK for the working tree) -> the compiled tree (inside the repository, so node_modules resolves)
  local rev=$1 out=bench/data/ab/dist-$1 src
  if [ "$rev" = WORK ]; then src=$ROOT; rm -rf "$out"
  else src=$ROOT/$(worktree "$rev")
  fi
  if [ ! -f "$out/src/cli/main.js" ]; then
    # Not incremental: dist/'s build-info file would tell tsc that everything is emitted already.
    # tsc's type errors do not stop it writing JavaScript (an older revision may not type-check against today's node_modules).
    (cd "$src" && "$ROOT/node_modules/.bin/tsc" -p tsconfig.build.json --outDir "$ROOT/$out" --incremental false --sourceMap false >/dev/null) || true
  fi
  [ -f "$out/src/cli/main.js" ] || { echo "could not build $rev into $out" >&2; return 1; }
  echo "$out"
}
