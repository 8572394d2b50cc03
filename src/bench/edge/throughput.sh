#!/usr/bin/env bash
# Beacon throughput from many client addresses with every beacon limit on (the flood ceiling, the rate per client and
# page, the budgets of new ids per client, network and namespace, the network levels of limits.clientsPerNetwork, the
# bot filter) against the same beacons with all of them and the bot filter off (dropBots: false), side by side
# in alternating rounds on one gateway run as the README runs it (@conf/jvm.options, the embedded PostgreSQL):
#   src/bench/edge/throughput.sh JAR [ROUNDS] [SECONDS]
# Each request names a random client of 10.0.0.0/8 in X-Forwarded-For (16,777,216 addresses in 65,536 /24s; the
# gateway trusts 127.0.0.1 as its proxy), so every level keeps records the way a site's visitors make them and nearly
# every beacon is counted in both namespaces. Prints req/s per namespace and round, the ratio limited / unlimited over
# all rounds, and the beacons each namespace dropped (gateway_beacons_dropped_total), which must stay near 0.
set -u
JAR=$1; ROUNDS=${2:-3}; SECONDS_EACH=${3:-10}; PORT=${PORT:-18100}; DBPORT=${DBPORT:-19100}
OUT=${OUT:-target/edge-throughput}; mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
UA="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
cat >"$OUT/gateway.yaml" <<YAML
http: { host: 127.0.0.1, port: $PORT, trustedProxies: ["127.0.0.1"] }
database: { kind: embedded-postgres, dataDir: $OUT/pg, port: $DBPORT, name: counters }
journal: { dir: $OUT/journal }
namespaces:
  limited: { slots: 16, public: true }
  unlimited: { slots: 16, public: true, beacon: { dropBots: false, perClientPerMinute: 0, perPagePerMinute: 0, idsPerClientPerHour: 0, newIdsPerHour: 0 } }
YAML
MALLOC_ARENA_MAX=2 java "@$ROOT/conf/jvm.options" -jar "$JAR" --config "$OUT/gateway.yaml" >"$OUT/gateway.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null' EXIT
for _ in $(seq 1 120); do [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health/ready")" = 200 ] && break; sleep 0.5; done
run() { NS=$1 wrk -t2 -c64 -d"${SECONDS_EACH}s" -s "$HERE/many-clients.lua" -H "User-Agent: $UA" "http://127.0.0.1:$PORT" \
  | awk -v ns="$1" '/Requests\/sec/ {print ns, $2} /Non-2xx/ {print ns, "non-2xx", $5}'; }
run unlimited >/dev/null; run limited >/dev/null  # warm-up, both paths
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round (load $(awk '{print $1}' /proc/loadavg))"; run limited; run unlimited
done | tee "$OUT/throughput.txt"
awk '$1=="limited" && $2+0>0 {l+=$2} $1=="unlimited" && $2+0>0 {u+=$2} END {if (u) printf "limited / unlimited: %.3f\n", l/u}' \
  "$OUT/throughput.txt" | tee -a "$OUT/throughput.txt"
curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^gateway_beacons_dropped_total/ && $2+0>0 {print "dropped", $0}' \
  | tee -a "$OUT/throughput.txt"
