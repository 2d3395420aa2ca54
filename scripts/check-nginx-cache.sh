#!/usr/bin/env bash
# Usage: scripts/check-nginx-cache.sh [--quick]
#
# Runs scripts/deploy/nginx.conf for real, on 127.0.0.1 only: nginx on port 4398 in front of the
# server (`npm run serve`) on port 4399 (not 4391: .ci/run's conformance suite uses it), serving a
# fresh build of the content (CONTENT_DIR, default ./content) made in a scratch folder. Then checks
# what the config promises: a second request is a cache HIT; ETag, Cache-Control and CORS pass
# through; no Vary is added; If-None-Match gets a 304; errors are cached too; and (skipped with
# --quick, as it waits 31 s for the copies to expire) a stale copy is served while it is refreshed
# in the background and while the server is down.
# Needs nginx and curl. Stops only what it started. Exits 1 when a check fails, 2 when it cannot run.
set -uo pipefail
cd "$(dirname "$0")/.."

NGINX_PORT=4398
SERVER_PORT=4399
quick=false
[ "${1:-}" = "--quick" ] && quick=true
command -v nginx >/dev/null || { echo "check-nginx-cache: nginx is not installed (apt-get install nginx-light)"; exit 2; }
command -v curl >/dev/null || { echo "check-nginx-cache: curl is not installed"; exit 2; }

for port in $NGINX_PORT $SERVER_PORT; do
  if curl -s -o /dev/null "http://127.0.0.1:$port/"; then echo "check-nginx-cache: port $port on 127.0.0.1 is in use; stop what uses it first"; exit 2; fi
done

# The build stays inside the project, so the server bundle resolves its packages from node_modules.
work="node_modules/.cache/nginx-check"
scratch=$(mktemp -d /tmp/nginx-check.XXXXXX)
chmod 755 "$scratch"
server_pid=""
nginx_pid=""
cleanup() {
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work" "$scratch"
}
trap cleanup EXIT

echo "== build into $work/dist"
rm -rf "$work" && mkdir -p "$work"
DIST_DIR="$work/dist" SITE_URL="http://127.0.0.1:$NGINX_PORT" node_modules/.bin/node scripts/build-site.ts || exit 1
user=$(node_modules/.bin/node -e 'const i=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(i.users.find(u=>u.status==="active").username)' "$work/dist/server/site-index.json")

echo "== server on 127.0.0.1:$SERVER_PORT"
HOST=127.0.0.1 PORT=$SERVER_PORT DIST_DIR="$work/dist" node_modules/.bin/node src/server/main.ts > "$scratch/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 50); do curl -fs -o /dev/null "http://127.0.0.1:$SERVER_PORT/service-api/v1/creators" && break; sleep 0.2; done

echo "== nginx on 127.0.0.1:$NGINX_PORT (scripts/deploy/nginx.conf with the ADJUST lines pointed at $scratch)"
sed -e "s|^pid .*|pid $scratch/nginx.pid;|" \
    -e "s|^error_log .*|error_log $scratch/error.log warn;|" \
    -e "s|access_log /var/log/nginx/profiles.access.log combined;.*|access_log $scratch/access.log combined;|" \
    -e "s|proxy_cache_path /var/cache/nginx/profiles |proxy_cache_path $scratch/cache |" \
    -e "s|server 127.0.0.1:4321;.*|server 127.0.0.1:$SERVER_PORT;|" \
    -e "s|listen 80; .*|listen 127.0.0.1:$NGINX_PORT;|" \
    -e "s|^http {|http {\n    client_body_temp_path $scratch/body; proxy_temp_path $scratch/proxy; fastcgi_temp_path $scratch/fastcgi; uwsgi_temp_path $scratch/uwsgi; scgi_temp_path $scratch/scgi;|" \
    scripts/deploy/nginx.conf > "$scratch/nginx.conf"
# As root, nginx's workers need a user that exists here.
run_as=""
[ "$(id -u)" = 0 ] && run_as="user nobody $(id -gn nobody 2>/dev/null || echo nogroup);"
nginx -t -q -c "$scratch/nginx.conf" -e "$scratch/error.log" -g "$run_as" || { cat "$scratch/error.log"; exit 1; }
nginx -c "$scratch/nginx.conf" -e "$scratch/error.log" -g "daemon off; $run_as" &
nginx_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/" && break; sleep 0.2; done

passed=0
failed=0
check() { # check <description> <expected> <actual>
  if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok   $1: $3"
  else failed=$((failed + 1)); echo "FAIL $1: expected '$2', got '$3'"; fi
}
# header <name> <curl args...>: one response header's value (last response), without CR.
header() { local name=$1; shift; curl -s -o /dev/null -D - "$@" | tr -d '\r' | grep -i "^$name:" | tail -1 | cut -d' ' -f2-; }
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
# probe <curl args...>: "<status> <X-Cache-Status>" of one request (each request can change the cache).
probe() { local code; code=$(curl -s -o /dev/null -D "$scratch/headers" -w '%{http_code}' "$@"); echo "$code $(tr -d '\r' < "$scratch/headers" | grep -i '^x-cache-status:' | cut -d' ' -f2)"; }
via_nginx="http://127.0.0.1:$NGINX_PORT"
direct="http://127.0.0.1:$SERVER_PORT"
user_path="/api/v1/users/$user"
query_path="/api/v1/users?username=$(echo "$user" | tr a-z A-Z)"

echo "== checks (user \`$user\`)"
check "first request of $user_path" "200 MISS" "$(probe "$via_nginx$user_path")"
check "second request of $user_path" "200 HIT" "$(probe "$via_nginx$user_path")"
check "ETag passes through unchanged" "$(header ETag "$direct$user_path")" "$(header ETag "$via_nginx$user_path")"
check "Cache-Control passes through unchanged" "$(header Cache-Control "$direct$user_path")" "$(header Cache-Control "$via_nginx$user_path")"
check "CORS passes through" '*' "$(header Access-Control-Allow-Origin "$via_nginx$user_path")"
check "no Vary is added" "" "$(header Vary "$via_nginx$user_path")"
etag=$(header ETag "$via_nginx$user_path")
check "If-None-Match is answered from the copy" "304 HIT" "$(probe -H "If-None-Match: $etag" "$via_nginx$user_path")"
check "HEAD is served from the same copy" "200 HIT" "$(probe -I "$via_nginx$user_path")"
check "on-demand answer ($query_path), first" "200 MISS" "$(probe "$via_nginx$query_path")"
check "on-demand answer, second" "200 HIT" "$(probe "$via_nginx$query_path")"
weak=$(header ETag "$via_nginx$query_path")
check "its weak ETag ($weak) gets a 304" "304 HIT" "$(probe -H "If-None-Match: $weak" "$via_nginx$query_path")"
check "a 404, first" "404 MISS" "$(probe "$via_nginx/api/v1/users/nobody-here")"
check "a 404 is cached too (the server's Cache-Control)" "404 HIT" "$(probe "$via_nginx/api/v1/users/nobody-here")"
check "a page, first" "200 MISS" "$(probe "$via_nginx/p/$user")"
check "a page, second" "200 HIT" "$(probe "$via_nginx/p/$user")"
check "POST is not cached and still refused" "405 " "$(probe -X POST "$via_nginx$user_path")"

if ! $quick; then
  echo "== waiting 31 s for the copies to expire (max-age=30)"
  sleep 31
  check "expired: the stale copy is served while one request refreshes it" "200 STALE" "$(probe "$via_nginx$user_path")"
  sleep 1
  check "after the background refresh" "200 HIT" "$(probe "$via_nginx$user_path")"
  kill "$server_pid" && wait "$server_pid" 2>/dev/null
  server_pid=""
  check "server down: the expired copy of a page is served" "200 STALE" "$(probe "$via_nginx/p/$user")"
  check "server down: an address never cached is a 502" "502 MISS" "$(probe "$via_nginx/api/v1/users/$user-x")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
