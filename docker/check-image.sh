#!/usr/bin/env bash
# CI check: the images are built and run for real.
#  1. installs docker.io, debootstrap, docker-compose, curl, python3 when missing (Debian packages),
#  2. starts a private Docker daemon (own socket, data root, exec root; no bridge, no iptables)
#     and always stops it again, by its PID, unmounting what it leaves,
#  3. makes sure the base images exist: a real pull where a registry answers, else a stand-in
#     built here and labelled dev.radixserve.stand-in (debian:bookworm-slim from debootstrap,
#     eclipse-temurin:25-jdk = that + this machine's JDK 25, prom/prometheus = that + Debian's
#     prometheus package); they stay in the data root for the next run,
#  4. checks that Dockerfile.cuda builds from the same jre/build stages as docker/Dockerfile,
#  5. builds docker/Dockerfile as it is and reports the image's size and layers,
#  6. runs the image on a free loopback port and checks /health, /v1/models, a completion,
#     a streamed chat, cached_tokens of a repeated prompt, /metrics, the non-root process, the
#     HEALTHCHECK on that (not the default) port, and that docker stop drains a running stream
#     and exits 0,
#  7. brings up docker/compose.yaml (server + Prometheus; Grafana has no image here) and asserts
#     through Prometheus that the target is up, prefix-cache hits were scraped, and that every
#     query of the Grafana dashboard names exported metrics and returns series,
#  8. rehearses the GPU run (docker/check-gpu-payload.sh): the payload's pieces unpacked, one
#     after the other, in a container with python3 only, where `run` stops at the driver check,
#     laid out as the device tool lays out a call (the test fixtures come with the working tree),
#  9. with RADIXSERVE_CHECK_CUDA_IMAGE=1 only (it downloads ~3 GB): builds docker/Dockerfile.cuda
#     on the same base and checks that `serve --device cuda` in it refuses cleanly without a GPU.
# Exit 0 on success, non-zero with a message otherwise. Needs root.
# Environment: RADIXSERVE_DOCKER_STATE (default /var/lib/radixserve-ci): the daemon's data root
# and cache; removing it starts from nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/java-home.sh

STATE=${RADIXSERVE_DOCKER_STATE:-/var/lib/radixserve-ci}
RUN_DIR=/run/radixserve-ci
export DOCKER_HOST="unix://$RUN_DIR/docker.sock"
IMAGE=radixserve
CONTAINER=radixserve-check
PROJECT=radixserve-check
START=$SECONDS
WORK=$(mktemp -d)
DOCKERD_PID=""
COMPOSE=()
MODELS_CREATED=""

say() { echo "check-image: [$((SECONDS - START))s] $*"; }
# The docker commands docs/docker.md shows are printed as they run.
exec 3>&2
show() { echo "+ $*" >&3; "$@"; }
fail() {
  echo "check-image: FAIL: $*" >&2
  for f in "$WORK"/*.log; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -n "$([ "${f##*/}" = dockerd.log ] && echo 8 || echo 40)" "$f" >&2; }
  done
  exit 1
}

cleanup() {
  set +e
  if [ -n "$DOCKERD_PID" ]; then
    [ ${#COMPOSE[@]} -gt 0 ] && "${COMPOSE[@]}" -p "$PROJECT" -f docker/compose.yaml down -v -t 5 >/dev/null 2>&1
    docker rm -f "$CONTAINER" >/dev/null 2>&1
    # Superseded build layers go after a day; younger ones are the next run's cache.
    docker image prune -f --filter until=24h >/dev/null 2>&1
    stop_daemon "$DOCKERD_PID"
  fi
  [ -n "$MODELS_CREATED" ] && rmdir models 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM  # so that cleanup runs on these too

unmount_leftovers() {  # overlay, netns and shm mounts under the data and exec roots, deepest first
  { grep -E " ($STATE|$RUN_DIR)/" /proc/mounts || true; } | awk '{print $2}' | sort -r | xargs -r -n1 umount -l
}
stop_daemon() {  # $1: dockerd's PID. TERM, up to 20 s, then KILL; then unmount its leftovers.
  kill -TERM "$1" 2>/dev/null
  for _ in $(seq 40); do kill -0 "$1" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  unmount_leftovers
  rm -f "$RUN_DIR/dockerd.pid"
}

# --- 1. packages ---------------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v curl >/dev/null || missing+=(curl ca-certificates)
command -v python3 >/dev/null || missing+=(python3-minimal)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} (Debian packages)"
  bash .ci/apt-install.sh "${missing[@]}"
fi
if docker compose version >/dev/null 2>&1; then COMPOSE=(docker compose); else COMPOSE=(docker-compose); fi

# --- 2. the private daemon -----------------------------------------------------------------
mkdir -p "$STATE" "$RUN_DIR"
exec 9>"$STATE/lock"
flock -w 900 9 || fail "another check-image.sh holds $STATE/lock"
# A daemon left by a run that was killed (its pidfile names a live dockerd) is stopped first.
if [ -f "$RUN_DIR/dockerd.pid" ]; then
  old=$(cat "$RUN_DIR/dockerd.pid")
  if [ "$(cat "/proc/$old/comm" 2>/dev/null)" = dockerd ]; then say "stopping stale dockerd $old"; stop_daemon "$old"; fi
fi
unmount_leftovers
dockerd --host "$DOCKER_HOST" --data-root "$STATE/docker" --exec-root "$RUN_DIR/exec" \
  --pidfile "$RUN_DIR/dockerd.pid" --iptables=false --ip6tables=false --bridge=none \
  > "$WORK/dockerd.log" 2>&1 9>&- &  # 9>&-: the lock is not the daemon's to hold
DOCKERD_PID=$!
deadline=$((SECONDS + 60))
until docker version >/dev/null 2>&1; do
  kill -0 "$DOCKERD_PID" 2>/dev/null || fail "dockerd exited"
  [ $SECONDS -lt $deadline ] || fail "dockerd not answering within 60 s"
  sleep 0.5
done
say "dockerd $DOCKERD_PID up ($(docker version -f '{{.Server.Version}}'), data root $STATE/docker)"

# --- 3. base images ------------------------------------------------------------------------
STAND_IN_LABEL=dev.radixserve.stand-in
# $1 image, $2 what a stand-in would be made of now; $3 function making it. An image that exists
# is kept unless it is a stand-in made from something else.
ensure_image() {
  local have
  if have=$(docker image inspect -f "{{index .Config.Labels \"$STAND_IN_LABEL\"}}" "$1" 2>/dev/null); then
    [ "$have" = "<no value>" ] && have=""
    if [ -z "$have" ] || [ "$have" = "$2" ]; then say "base image $1: ${have:-as pulled}"; return; fi
  elif timeout 120 docker pull -q "$1" >/dev/null 2>&1; then
    say "base image $1: pulled"; return
  fi
  say "base image $1: no registry; making a stand-in ($2)"
  "$3" "$1" "$2"
}

make_debian() {  # debootstrap from the apt mirror this machine uses; trimmed like the -slim image
  local mirror root="$WORK/rootfs"
  mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Identifier: Packages' 2>/dev/null \
    | grep -m1 -E '/debian/?$' || echo http://deb.debian.org/debian)
  debootstrap --variant=minbase bookworm "$root" "$mirror" > "$WORK/debootstrap.log" 2>&1 \
    || fail "debootstrap from $mirror"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/* "$root"/usr/share/info/*
  printf 'path-exclude /usr/share/doc/*\npath-exclude /usr/share/man/*\npath-exclude /usr/share/locale/*\npath-exclude /usr/share/info/*\n' \
    > "$root/etc/dpkg/dpkg.cfg.d/docker-slim"
  tar -C "$root" -c . | docker import -c 'CMD ["bash"]' -c "LABEL $STAND_IN_LABEL=\"$2\"" - "$1" >/dev/null
  rm -rf "$root"
}

make_temurin_jdk() {  # the image's layout: the JDK in /opt/java/openjdk, on the PATH
  mkdir -p "$WORK/jdk-image"
  cat > "$WORK/jdk-image/Dockerfile" <<EOF
FROM debian:bookworm-slim
COPY jdk /opt/java/openjdk
ENV JAVA_HOME=/opt/java/openjdk LANG=C.UTF-8 \\
    PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
LABEL $STAND_IN_LABEL="$2"
EOF
  # -h: the JDK's cacerts is a link into /etc/ssl on Debian.
  tar -c -h -f - -C "$WORK/jdk-image" Dockerfile -C "$(dirname "$JAVA_HOME")" \
      --transform "s,^$(basename "$JAVA_HOME"),jdk," "$(basename "$JAVA_HOME")" \
    | docker build -q -t "$1" - > "$WORK/jdk-image.log" 2>&1 || fail "building the $1 stand-in"
}

make_prometheus() {  # the official image's layout: /bin/prometheus as nobody in /prometheus
  mkdir -p "$WORK/prometheus-image"
  cat > "$WORK/prometheus-image/Dockerfile" <<EOF
FROM debian:bookworm-slim
RUN printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d \\
 && apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus \\
 && rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d \\
 && mkdir -p /prometheus && chown nobody:nogroup /prometheus
USER nobody
WORKDIR /prometheus
EXPOSE 9090
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
LABEL $STAND_IN_LABEL="$2"
EOF
  docker build -q --network host -t "$1" "$WORK/prometheus-image" > "$WORK/prometheus-image.log" 2>&1 \
    || fail "building the $1 stand-in"
}

ensure_image debian:bookworm-slim "debootstrap --variant=minbase bookworm" make_debian
ensure_image eclipse-temurin:25-jdk "debian:bookworm-slim + $(java -version 2>&1 | sed -n 2p)" make_temurin_jdk
PROM_IMAGE=$(sed -n 's/^ *image: *\(prom\/prometheus:.*\)$/\1/p' docker/compose.yaml)
[ -n "$PROM_IMAGE" ] || fail "no prom/prometheus image in docker/compose.yaml"
ensure_image "$PROM_IMAGE" "debian:bookworm-slim + Debian's prometheus package" make_prometheus

# --- 4. Dockerfile.cuda shares the stages it cannot build here ------------------------------
# Each file from its first FROM up to the runtime marker, without the MAVEN_PROFILES default.
shared_stages() { sed -n '/^ARG JRE_MODULES=/,/^# --- runtime/p' "$1" | grep -Ev '^(ARG MAVEN_PROFILES=|# --- runtime)'; }
diff <(shared_stages docker/Dockerfile) <(shared_stages docker/Dockerfile.cuda) > "$WORK/stages.diff" \
  || fail "docker/Dockerfile.cuda's jre/build stages differ from docker/Dockerfile's: $(cat "$WORK/stages.diff")"
grep -q '^ARG MAVEN_PROFILES="cuda"' docker/Dockerfile.cuda || fail "Dockerfile.cuda does not build -Pcuda"
[ "$(shared_stages docker/Dockerfile | grep -c '^FROM ')" -eq 2 ] || fail "shared stages not found"

# --- 5. the CPU image ----------------------------------------------------------------------
say "building $IMAGE"
build_start=$SECONDS
# --network host: this daemon has no bridge for RUN steps to reach Maven Central through.
show docker build --network host -f docker/Dockerfile -t "$IMAGE" . > "$WORK/build.log" 2>&1 \
  || fail "docker build"
deps_layer=$(awk '/^Step .*DskipTests package +&& rm/ {getline; print ($0 ~ /Using cache/ ? "cached" : "rebuilt")}' "$WORK/build.log")
size=$(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1 / 1e6}')
say "built in $((SECONDS - build_start)) s ($(grep -c 'Using cache' "$WORK/build.log") steps from cache, Maven dependency layer $deps_layer); $IMAGE is $size, layers:"
docker history --format '{{.Size}}\t{{.CreatedBy}}' "$IMAGE" | grep -v '^0B' | cut -c1-110 | sed 's/^/    /'

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
# $1 base URL; waits <= 90 s for /health.
await_health() {
  local deadline=$((SECONDS + 90))
  until curl -fsS "$1/health" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "$1/health not 200 within 90 s"
    sleep 1
  done
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
post() { curl -fsS "$1" -H 'Content-Type: application/json' -d "$2"; }

# --- 6. one container ----------------------------------------------------------------------
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
# Host network (no bridge here) on a loopback port that is not 8000: the HEALTHCHECK must follow it.
show docker run -d --name "$CONTAINER" --network host \
  -e RADIXSERVE_HOST=127.0.0.1 -e RADIXSERVE_PORT="$PORT" --health-interval 2s "$IMAGE" >/dev/null
await_health "$URL"
say "container answers on $URL"
MODEL=$(curl -fsS "$URL/v1/models" | json 'd["data"][0]["id"]')
[ "$MODEL" = radixserve-embedded-gpt2 ] || fail "/v1/models lists '$MODEL'"
text=$(post "$URL/v1/completions" "{\"model\":\"$MODEL\",\"prompt\":\"Hello\",\"max_tokens\":5}" \
  | json 'd["choices"][0]["finish_reason"] + " " + str(d["usage"]["completion_tokens"])')
[ "$text" = "length 5" ] || fail "completion: $text"
stream=$(curl -fsS -N "$URL/v1/chat/completions" -H 'Content-Type: application/json' \
  -d "{\"model\":\"$MODEL\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":6,\"stream\":true}")
[ "$(grep -c '"delta":{"content"' <<< "$stream")" -ge 5 ] && [ "$(tail -n 1 <<< "$stream" | tr -d '\r')" = "data: [DONE]" ] \
  || fail "streamed chat: $stream"
PROMPT="A radix tree keeps every prompt it has served, block by block, so the next request that starts the same way computes only what is new."
for i in 1 2; do
  cached=$(post "$URL/v1/completions" "{\"model\":\"$MODEL\",\"prompt\":\"$PROMPT\",\"max_tokens\":2}" \
    | json 'd["usage"]["prompt_tokens_details"]["cached_tokens"]')
done
[ "$cached" -ge 16 ] || fail "repeated prompt reports cached_tokens=$cached"
metrics=$(curl -fsS "$URL/metrics")
grep -Eq '^radixserve_prefix_cache_hit_tokens_total(\{[^}]*\})? [1-9]' <<< "$metrics" \
  || fail "/metrics lacks prefix-cache hits: $(grep prefix_cache <<< "$metrics")"
uid=$(docker exec "$CONTAINER" awk '/^Uid:/ {print $2}' /proc/1/status)
[ "$uid" != 0 ] && [ "$(docker exec "$CONTAINER" id -un)" = radixserve ] || fail "server runs as uid $uid"
deadline=$((SECONDS + 30))
until [ "$(docker inspect -f '{{.State.Health.Status}}' "$CONTAINER")" = healthy ]; do
  [ $SECONDS -lt $deadline ] || fail "HEALTHCHECK: $(docker inspect -f '{{json .State.Health}}' "$CONTAINER")"
  sleep 1
done
# ... and it is a real probe: on a port nothing listens on it fails.
if docker exec -e RADIXSERVE_PORT="$(free_port)" "$CONTAINER" /opt/radixserve/bin/healthcheck 2>/dev/null; then
  fail "the healthcheck passes on a port nothing listens on"
fi
say "completion, streamed chat, cached_tokens=$cached, /metrics, uid $uid, healthy on port $PORT"

# docker stop while a long stream runs: the stream completes, then the process exits 0.
curl -fsS -N "$URL/v1/completions" -H 'Content-Type: application/json' \
  -d "{\"model\":\"$MODEL\",\"prompt\":\"Once\",\"max_tokens\":300,\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}" \
  > "$WORK/drain.out" &
CURL_PID=$!
until grep -q '^data: {' "$WORK/drain.out"; do kill -0 "$CURL_PID" 2>/dev/null || fail "drain stream did not start"; sleep 0.05; done
grep -q '^data: \[DONE\]' "$WORK/drain.out" && fail "the stream ended before docker stop was sent"
show docker stop -t 40 "$CONTAINER" >/dev/null
wait "$CURL_PID" || fail "drained stream failed"
docker logs "$CONTAINER" > "$WORK/container.log" 2>&1
grep -q '"finish_reason":"length"' "$WORK/drain.out" && grep -q '"completion_tokens":300,' "$WORK/drain.out" \
  && grep -q '^data: \[DONE\]' <<<"$(tail -n 2 "$WORK/drain.out")" \
  || fail "the stream was cut by docker stop: $(tail -c 300 "$WORK/drain.out")"
code=$(docker inspect -f '{{.State.ExitCode}}' "$CONTAINER")
[ "$code" = 0 ] || fail "exit status $code after docker stop"
docker rm "$CONTAINER" >/dev/null
say "docker stop drained a running stream (300 tokens) and the server exited 0"

# --- 7. compose: server + Prometheus ---------------------------------------------------------
[ -e models ] || MODELS_CREATED=1  # compose mounts ../models; Docker creates it when absent
API_PORT=$(free_port)
PROM_PORT=$(free_port)
export RADIXSERVE_PUBLISH="127.0.0.1:$API_PORT" PROMETHEUS_PUBLISH="127.0.0.1:$PROM_PORT"
show "${COMPOSE[@]}" -p "$PROJECT" -f docker/compose.yaml up -d radixserve prometheus > "$WORK/compose.log" 2>&1 \
  || fail "compose up"
URL="http://127.0.0.1:$API_PORT"
PROM="http://127.0.0.1:$PROM_PORT/api/v1"
await_health "$URL"
query() { curl -fsS -G "$PROM/query" --data-urlencode "query=$1" 2>/dev/null | json 'len(d["data"]["result"])' 2>/dev/null || echo 0; }
value() { curl -fsS -G "$PROM/query" --data-urlencode "query=$1" 2>/dev/null \
  | json 'd["data"]["result"][0]["value"][1] if d["data"]["result"] else ""' 2>/dev/null || true; }
deadline=$((SECONDS + 60))
until [ "$(value 'up{job="radixserve"}')" = 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "Prometheus: up{job=\"radixserve\"} is not 1: $(curl -sS "$PROM/targets")"
  sleep 1
done
say "Prometheus scrapes radixserve:8000 (up == 1)"
for i in 1 2 3; do
  post "$URL/v1/completions" "{\"model\":\"$MODEL\",\"prompt\":\"$PROMPT\",\"max_tokens\":4}" > /dev/null \
    || fail "completion $i through compose"
done
deadline=$((SECONDS + 60))
until python3 -c 'import sys; sys.exit(0 if float(sys.argv[1] or 0) > 0 else 1)' \
    "$(value 'radixserve_prefix_cache_hit_tokens_total')"; do
  [ $SECONDS -lt $deadline ] || fail "no prefix-cache hits in Prometheus"
  sleep 1
done
say "prefix-cache hits in Prometheus: $(value 'radixserve_prefix_cache_hit_tokens_total') tokens, hit rate $(value 'radixserve_prefix_cache_hit_rate')"

# The Grafana dashboard: every metric it names is exported, and every query returns series.
curl -fsS "$URL/metrics" > "$WORK/metrics.txt"
python3 docker/dashboard-metrics.py docker/grafana/dashboards/radixserve.json "$WORK/metrics.txt" \
  > "$WORK/queries.txt" \
  || fail "dashboard names metrics the server does not export: $(cat "$WORK/queries.txt")"
deadline=$((SECONDS + 60))
while :; do
  empty=()
  while IFS= read -r q; do [ "$(query "$q")" -gt 0 ] || empty+=("$q"); done < "$WORK/queries.txt"
  [ ${#empty[@]} -eq 0 ] && break
  [ $SECONDS -lt $deadline ] || fail "dashboard queries without series: ${empty[*]}"
  sleep 2
done
say "the dashboard's $(wc -l < "$WORK/queries.txt") queries name exported metrics and return series"
show "${COMPOSE[@]}" -p "$PROJECT" -f docker/compose.yaml down -v -t 40 > "$WORK/compose-down.log" 2>&1 \
  || fail "compose down"

# --- 8. the GPU payload, rehearsed without a GPU ---------------------------------------------
t0=$SECONDS
bash docker/check-gpu-payload.sh || fail "GPU payload rehearsal"
say "GPU payload rehearsal: $((SECONDS - t0)) s"

# --- 9. the CUDA image (opt-in) --------------------------------------------------------------
if [ "${RADIXSERVE_CHECK_CUDA_IMAGE:-}" = 1 ]; then
  t0=$SECONDS
  show docker build --network host -f docker/Dockerfile.cuda -t "$IMAGE:cuda" . > "$WORK/build-cuda.log" 2>&1 \
    || fail "docker build -f docker/Dockerfile.cuda"
  size=$(docker image inspect -f '{{.Size}}' "$IMAGE:cuda" | awk '{printf "%.0f MB", $1 / 1e6}')
  say "built $IMAGE:cuda in $((SECONDS - t0)) s; it is $size, layers:"
  docker history --format '{{.Size}}\t{{.CreatedBy}}' "$IMAGE:cuda" | grep -v '^0B' | cut -c1-110 | sed 's/^/    /'
  # no --gpus and no driver here: the server must stop at once, naming the driver and nothing
  # before it (the CUDA build, its provider and the CUDA 12 libraries were all found)
  rc=0
  timeout 120 docker run --rm --network none "$IMAGE:cuda" > "$WORK/cuda-run.log" 2>&1 || rc=$?
  [ $rc != 0 ] && [ $rc != 124 ] || fail "radixserve:cuda without a GPU: exit $rc"
  grep -q 'NVIDIA driver library libcuda.so.1 is not found' "$WORK/cuda-run.log" \
    || fail "radixserve:cuda without a GPU did not stop at the driver: $(grep -v '^\s*at ' "$WORK/cuda-run.log" | tail -5)"
  say "$IMAGE:cuda without a GPU: exit $rc, $(grep -o 'the NVIDIA driver library libcuda.so.1 is not found' "$WORK/cuda-run.log" | head -1)"
fi
say "OK in $((SECONDS - START)) s"
