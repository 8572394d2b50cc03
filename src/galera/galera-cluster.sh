#!/usr/bin/env bash
# A 3-node MariaDB Galera cluster on loopback, from Debian's galera-4 and the machine's mariadbd: three data
# directories and ports under one directory. For GaleraIT (in every mvn verify) and for trying things out.
#   src/galera/galera-cluster.sh start [DIR]   # default DIR target/galera; prints the SQL ports when ready
#   src/galera/galera-cluster.sh stop  [DIR]
# Every port is derived from GALERA_BASE_PORT (default 3310), below the kernel's ephemeral range where other tests'
# servers and clients take theirs: node i (1..3) serves SQL on BASE+i (3311-3313), group communication on BASE+10+i,
# IST on BASE+20+i, rsync SST on BASE+30+i. The database "counters" and the user counters@127.0.0.1 (no password)
# are created.
set -euo pipefail
ACTION=${1:?start or stop}
DIR=$(realpath -m "${2:-target/galera}")
BASE_PORT=${GALERA_BASE_PORT:-3310}
PROVIDER=${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
INSTALL_DB=$(command -v mariadb-install-db || command -v mysql_install_db)
CLIENT=$(command -v mariadb || command -v mysql)
gcomm_port() { echo $((BASE_PORT + 10 + $1)); }
ADDRESSES="127.0.0.1:$(gcomm_port 1),127.0.0.1:$(gcomm_port 2),127.0.0.1:$(gcomm_port 3)"
# As root, mariadbd runs as mysql: the rsync daemon of a state transfer started by root would drop to nobody
RUN_AS=$( [ "$(id -u)" = 0 ] && echo mysql || id -un )

node_conf() { # $1 = node number
  local i=$1 d="$DIR/node$1"
  cat > "$d.cnf" <<CNF
[mariadbd]
datadir=$d/data
socket=$d/mysqld.sock
pid-file=$d/mysqld.pid
log-error=$d/error.log
port=$((BASE_PORT + i))
bind-address=127.0.0.1
skip-name-resolve
user=$RUN_AS
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
innodb_buffer_pool_size=64M
innodb_log_file_size=48M
performance_schema=OFF
wsrep_on=ON
wsrep_provider=$PROVIDER
wsrep_cluster_name=counter-gateway-galera
wsrep_cluster_address=gcomm://$ADDRESSES
wsrep_node_name=node$i
wsrep_node_address=127.0.0.1:$(gcomm_port "$i")
wsrep_provider_options=gmcast.listen_addr=tcp://127.0.0.1:$(gcomm_port "$i");ist.recv_addr=127.0.0.1:$((BASE_PORT + 20 + i));gcache.size=64M;cert.log_conflicts=YES
# every conflict in error.log with both statements: which local transactions replicated writes abort
wsrep_log_conflicts=ON
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$((BASE_PORT + 30 + i))
CNF
}

wait_ready() { # $1 = node number
  local d="$DIR/node$1"
  for _ in $(seq 1 240); do
    if [ -S "$d/mysqld.sock" ] && [ "$("$CLIENT" -S "$d/mysqld.sock" -uroot -N -e "SHOW STATUS LIKE 'wsrep_ready'" 2>/dev/null | cut -f2)" = "ON" ]; then
      return 0
    fi
    if [ -f "$d/mysqld.pid" ] || pgrep -f "defaults-file=$d.cnf" >/dev/null; then :; else
      echo "node$1 exited; see $d/error.log" >&2; tail -20 "$d/error.log" >&2; return 1
    fi
    sleep 0.5
  done
  echo "node$1 not ready after 120 s; see $d/error.log" >&2
  return 1
}

start() {
  [ -x "$MARIADBD" ] && [ -f "$PROVIDER" ] || { echo "needs mariadbd and galera-4 ($PROVIDER)" >&2; exit 3; }
  mkdir -p "$DIR"
  for i in 1 2 3; do
    mkdir -p "$DIR/node$i"
    node_conf "$i"
  done
  if [ ! -d "$DIR/node1/data/mysql" ]; then
    "$INSTALL_DB" --defaults-file="$DIR/node1.cnf" --auth-root-authentication-method=normal \
      --skip-test-db >"$DIR/node1/install.log" 2>&1
  fi
  # the joiners' data is replaced by the state transfer from node 1: a copy of its fresh directory is all they need
  # to start, and takes no time where a mariadb-install-db takes seconds
  for i in 2 3; do
    [ -d "$DIR/node$i/data/mysql" ] || { rm -rf "$DIR/node$i/data"; cp -a "$DIR/node1/data" "$DIR/node$i/data"; }
  done
  [ "$(id -u)" = 0 ] && chown -R "$RUN_AS" "$DIR"
  # the first node bootstraps a new cluster; the others join it and receive its state
  "$MARIADBD" --defaults-file="$DIR/node1.cnf" --wsrep-new-cluster >>"$DIR/node1/stdout.log" 2>&1 &
  wait_ready 1
  "$CLIENT" -S "$DIR/node1/mysqld.sock" -uroot -e "CREATE DATABASE IF NOT EXISTS counters;
    CREATE USER IF NOT EXISTS 'counters'@'127.0.0.1'; GRANT ALL ON *.* TO 'counters'@'127.0.0.1'"
  for i in 2 3; do
    "$MARIADBD" --defaults-file="$DIR/node$i.cnf" >>"$DIR/node$i/stdout.log" 2>&1 &
    wait_ready "$i"
  done
  echo "galera cluster ready: SQL on 127.0.0.1:$((BASE_PORT + 1)),$((BASE_PORT + 2)),$((BASE_PORT + 3))"
}

node_pids() { # $1 = node number: its pid file, or the mariadbd started with its config (a node stopped while it
  # was still starting or joining may not have written its pid file yet)
  local pidfile="$DIR/node$1/mysqld.pid"
  { [ -f "$pidfile" ] && cat "$pidfile"; pgrep -f -- "--defaults-file=$DIR/node$1.cnf" || true; } | sort -u
}

stop() {
  local pids=()
  for i in 3 2 1; do
    mapfile -t -O "${#pids[@]}" pids < <(node_pids "$i")
  done
  [ "${#pids[@]}" -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 1 60); do
    local alive=()
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
    [ "${#alive[@]}" -gt 0 ] || return 0
    pids=("${alive[@]}")
    sleep 0.5
  done
  kill -9 "${pids[@]}" 2>/dev/null || true
}

case "$ACTION" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop [DIR]" >&2; exit 2 ;;
esac
