#!/usr/bin/env bash
# The packages as a partner and an operator get them: packs @idsvc/client and the server,
# installs the client's tarball into an empty project with no network (it has no dependencies),
# type-checks a TypeScript consumer against its .d.ts, and runs a plain `node` script with it against
# a live idsvc started from the server's tarball: push, read, sync, a signed widget URL, webhooks.
# Needs a built checkout (`npm run build`). Usage: scripts/pack-test.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ -f dist/src/cli/main.js ] || { echo "pack-test: run npm run build first" >&2; exit 1; }

work="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

echo "== pack @idsvc/client"
client_tgz="$work/$(cd packages/client && npm pack --silent --pack-destination "$work" | tail -n 1)"
files="$(tar -tzf "$client_tgz")"
for f in package/package.json package/dist/index.js package/dist/index.d.ts package/README.md; do
  grep -qx "$f" <<<"$files" || { echo "pack-test: $f missing from the client tarball" >&2; exit 1; }
done
# Platform APIs only: nothing from Node's standard library, nothing to require.
if tar -xOzf "$client_tgz" package/dist/index.js | grep -nE "^\s*(import|export)\b.*from ['\"]|import\(|require\(|\bBuffer\b|process\."; then
  echo "pack-test: the client imports something beyond the platform" >&2; exit 1
fi

echo "== install it into an empty project (offline)"
mkdir "$work/consumer"
cp scripts/pack-test/consumer.mjs scripts/pack-test/consumer.ts "$work/consumer/"
cat >"$work/consumer/package.json" <<'JSON'
{ "name": "consumer", "private": true, "type": "module" }
JSON
cat >"$work/consumer/tsconfig.json" <<'JSON'
{ "compilerOptions": { "module": "NodeNext", "moduleResolution": "NodeNext", "target": "ES2022", "lib": ["ES2022", "DOM"], "types": [], "strict": true, "noEmit": true }, "files": ["consumer.ts"] }
JSON
(cd "$work/consumer" && npm install --offline --silent "$client_tgz")
installed="$(cd "$work/consumer/node_modules" && find . -name package.json -not -path './.package-lock.json' | sort)"
[ "$installed" = "./@idsvc/client/package.json" ] || { echo "pack-test: installing the client pulled in more: $installed" >&2; exit 1; }
(cd "$work/consumer" && "$root/node_modules/.bin/tsc" -p tsconfig.json)

echo "== pack the server and start it from its tarball"
# The server's dependencies are native and slow to install; the checkout's are the same versions.
server_tgz="$work/$(npm pack --silent --ignore-scripts --pack-destination "$work" | tail -n 1)"
mkdir "$work/server"
tar -xzf "$server_tgz" -C "$work/server"
ln -s "$root/node_modules" "$work/server/package/node_modules"
export DATABASE_URL="sqlite:$work/idsvc.sqlite" FETCH_ALLOW_PRIVATE=1 NODE_ENV=test LOG_LEVEL=warn
idsvc() { (cd "$work" && node "$work/server/package/bin/idsvc.js" "$@"); }
hook_port="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
password="pack test $(node -e "console.log(require('crypto').randomBytes(9).toString('base64url'))")"
printf %s "$password" | idsvc user create --email alice@example.com --user-id alice --opt-in >/dev/null
a_json="$(idsvc partner create --name "Partner A" --json)"
b_json="$(idsvc partner create --name "Partner B" --webhook "http://127.0.0.1:$hook_port/hook" --json)"
field() { node -e "process.stdout.write(String(JSON.parse(process.argv[1])[process.argv[2]]))" "$1" "$2"; }

PORT=0 HOST=127.0.0.1 node "$work/server/package/bin/idsvc.js" serve >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^idsvc listening on \(http[^ ]*\).*/\1/p' "$work/server.out" | head -n 1)"
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "pack-test: the server did not start" >&2; cat "$work/server.err" >&2; exit 1; }
echo "   $url"

echo "== a plain node script uses the package against it"
(cd "$work/consumer" && IDSVC_URL="$url" HOOK_PORT="$hook_port" EMAIL=alice@example.com PASSWORD="$password" \
  KEY_A="$(field "$a_json" api_key)" TOKEN_A="$(field "$a_json" api_token)" \
  KEY_B="$(field "$b_json" api_key)" TOKEN_B="$(field "$b_json" api_token)" SECRET_B="$(field "$b_json" webhook_secret)" \
  node consumer.mjs)
echo "pack-test: ok"
