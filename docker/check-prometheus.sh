#!/usr/bin/env bash
# CI check: a real Prometheus scrapes a real radixserve and sees its series.
#  1. installs Debian's prometheus package if missing (service start suppressed),
#  2. `promtool check config docker/prometheus.yml`,
#  3. starts server/target/radixserve.jar on a free loopback port (embedded model),
#  4. starts the prometheus binary on a free loopback port, scraping it every 1 s,
#  5. waits (<= 60 s) until the target is up, sends a few completions,
#  6. asserts radixserve_* series have samples through Prometheus's HTTP API, that every metric
#     the Grafana dashboard names is in /metrics and every one of its queries returns series
#     (the server runs with a host and a disk cache tier, so the tier panels' metrics exist),
#     and that the alerting rules (docker/alerts.yml, unit-tested by promtool first) are loaded,
#  7. stops both. Exit 0 on success, non-zero with a message otherwise.
# Needs: the jar built (./mvnw -B -ntp -DskipTests package), JDK 25; root and apt-get when
# prometheus, curl or python3 is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/java-home.sh

JAR=server/target/radixserve.jar
WORK=$(mktemp -d)
SERVER_PID=""
PROM_PID=""
cleanup() {
  [ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null || true
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "check-prometheus: FAIL: $*" >&2; for f in "$WORK"/*.log; do echo "--- $f" >&2; tail -40 "$f" >&2; done; exit 1; }

missing=()
command -v prometheus >/dev/null && command -v promtool >/dev/null || missing+=(prometheus)
command -v curl >/dev/null || missing+=(curl ca-certificates)
command -v python3 >/dev/null || missing+=(python3-minimal)
if [ ${#missing[@]} -gt 0 ]; then
  echo "check-prometheus: installing ${missing[*]} (Debian packages)"
  bash .ci/apt-install.sh "${missing[@]}"
fi
[ -f "$JAR" ] || fail "$JAR missing: run ./mvnw -B -ntp -DskipTests package first"

promtool check config docker/prometheus.yml || fail "promtool rejects docker/prometheus.yml"
promtool test rules docker/alerts-test.yml || fail "docker/alerts.yml fails its unit tests"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
SERVER_PORT=$(free_port)
PROM_PORT=$(free_port)

java --add-modules jdk.incubator.vector -jar "$JAR" serve --host 127.0.0.1 --port "$SERVER_PORT" --shutdown-timeout 5s \
  --kv-offload-memory 64m --kv-offload-dir "$WORK/kv-tier" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!

# The test configuration is docker/prometheus.yml with the loopback target and a 1 s interval.
sed -e "s/radixserve:8000/127.0.0.1:$SERVER_PORT/" \
    -e "s/scrape_interval: .*/scrape_interval: 1s/" docker/prometheus.yml > "$WORK/prometheus.yml"
grep -q "127.0.0.1:$SERVER_PORT" "$WORK/prometheus.yml" || fail "could not retarget docker/prometheus.yml"
cp docker/alerts.yml "$WORK/alerts.yml" # rule_files are relative to the configuration
promtool check config "$WORK/prometheus.yml" >/dev/null || fail "derived configuration invalid"
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" > "$WORK/prometheus.log" 2>&1 &
PROM_PID=$!

API="http://127.0.0.1:$PROM_PORT/api/v1"
deadline=$((SECONDS + 60))
until curl -fsS "http://127.0.0.1:$SERVER_PORT/health" >/dev/null 2>&1; do
  kill -0 "$SERVER_PID" 2>/dev/null || fail "server exited"
  [ $SECONDS -lt $deadline ] || fail "server not healthy within 60 s"
  sleep 1
done
until curl -fsS "$API/targets" 2>/dev/null | grep -q '"health":"up"'; do
  kill -0 "$PROM_PID" 2>/dev/null || fail "prometheus exited"
  [ $SECONDS -lt $deadline ] || fail "target not up within 60 s: $(curl -sS "$API/targets")"
  sleep 1
done
echo "check-prometheus: target 127.0.0.1:$SERVER_PORT is up"

MODEL=$(curl -fsS "http://127.0.0.1:$SERVER_PORT/v1/models" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
for i in 1 2 3; do
  curl -fsS "http://127.0.0.1:$SERVER_PORT/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"model\":\"$MODEL\",\"prompt\":\"The radix tree shares every prefix $i\",\"max_tokens\":8}" \
    > /dev/null || fail "completion $i failed"
done

# Each series must have a sample with a value that proves the requests were seen.
query() {  # prints the value of the first sample of the instant query $1, or nothing
  curl -fsS -G "$API/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'
}
check() {  # $1 query, $2 python condition on v
  local v=""
  until [ -n "$v" ] && python3 -c "import sys; v=float(sys.argv[1]); sys.exit(0 if ($2) else 1)" "$v"; do
    [ $SECONDS -lt $((deadline + 30)) ] || fail "$1 = '${v}' does not satisfy $2"
    sleep 1
    v=$(query "$1")
  done
  echo "check-prometheus: $1 = $v"
}
check 'up{job="radixserve"}' 'v == 1'
check 'sum(radixserve_requests_finished_total)' 'v >= 3'
check 'radixserve_generation_tokens_total' 'v >= 3'
check 'radixserve_time_to_first_token_seconds_count' 'v >= 3'
check 'sum(radixserve_time_to_first_token_seconds_bucket)' 'v >= 3'
check 'radixserve_kv_cache_blocks_total' 'v > 0'
check 'radixserve_requests_running' 'v >= 0'
check 'radixserve_prefix_cache_queried_tokens_total' 'v > 0'
check 'sum(radixserve_http_responses_total)' 'v >= 4'
check 'count(radixserve_kv_tier_entries)' 'v == 2'
# vLLM's names for gateways (docs/gateway-compat.md): colons and labels as Prometheus stores them
check 'vllm:prefix_cache_queries_total' 'v > 0'
check 'vllm:kv_cache_usage_perc' '0 <= v <= 1'
check 'vllm:cache_config_info{block_size!="",num_gpu_blocks!=""}' 'v == 1'

# The Grafana dashboard: every metric it names is in /metrics, every query returns series.
curl -fsS "http://127.0.0.1:$SERVER_PORT/metrics" > "$WORK/metrics.txt"
python3 docker/dashboard-metrics.py docker/grafana/dashboards/radixserve.json "$WORK/metrics.txt" \
  > "$WORK/queries.txt" \
  || fail "dashboard names metrics the server does not export: $(cat "$WORK/queries.txt")"
while IFS= read -r q; do
  until [ -n "$(query "$q")" ]; do
    [ $SECONDS -lt $((deadline + 30)) ] || fail "dashboard query without series: $q"
    sleep 1
  done
done < "$WORK/queries.txt"
echo "check-prometheus: the dashboard's $(wc -l < "$WORK/queries.txt") queries name exported metrics and return series"
# The alerting rules are loaded (none fires: nothing is corrupt).
# kept first (`curl | grep -q` fails under pipefail when grep exits early), and said on failure
rules=$(curl -sS "$API/rules" 2>&1) || true
grep -q '"name":"RadixserveKvTierCorruptBlocks"' <<<"$rules" \
  || fail "alert RadixserveKvTierCorruptBlocks not loaded: $rules"
echo "check-prometheus: alert rule RadixserveKvTierCorruptBlocks loaded"

# Graceful stop: SIGTERM runs the shutdown hook (drain) and the JVM exits 143 (128 + SIGTERM).
kill -TERM "$SERVER_PID"
status=0; wait "$SERVER_PID" || status=$?
SERVER_PID=""
[ "$status" -eq 0 ] || [ "$status" -eq 143 ] || fail "server exited with $status after SIGTERM"
echo "check-prometheus: OK"
