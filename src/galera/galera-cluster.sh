#!/usr/bin/env bash
# A 3-node MariaDB Galera cluster on loopback, from Debian's galera-4 and the machine's mariadbd: three data
# directories and ports under one directory. For the opt-in tests (mvn verify -Pgalera) and for trying things out.
#   src/galera/galera-cluster.sh start [DIR]   # default DIR target/galera; prints the SQL ports when ready
#   src/galera/galera-cluster.sh stop  [DIR]
# Node i (1..3) serves SQL on 127.0.0.1:$((BASE_PORT + i)) (BASE_PORT 3310), group communication on 45i7, IST on
# 45i8, rsync SST on 45i9. The database "counters" and the user counters@127.0.0.1 (no password) are created.
set -euo pipefail
ACTION=${1:?start or stop}
DIR=$(realpath -m "${2:-target/galera}")
BASE_PORT=${GALERA_BASE_PORT:-3310}
PROVIDER=${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
INSTALL_DB=$(command -v mariadb-install-db || command -v mysql_install_db)
CLIENT=$(command -v mariadb || command -v mysql)
ADDRESSES="127.0.0.1:4517,127.0.0.1:4527,127.0.0.1:4537"
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
wsrep_node_address=127.0.0.1:45${i}7
wsrep_provider_options=gmcast.listen_addr=tcp://127.0.0.1:45${i}7;ist.recv_addr=127.0.0.1:45${i}8;gcache.size=64M
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:45${i}9
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
    if [ ! -d "$DIR/node$i/data/mysql" ]; then
      "$INSTALL_DB" --defaults-file="$DIR/node$i.cnf" --auth-root-authentication-method=normal \
        --skip-test-db >"$DIR/node$i/install.log" 2>&1
    fi
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

stop() {
  for i in 3 2 1; do
    local pidfile="$DIR/node$i/mysqld.pid"
    if [ -f "$pidfile" ]; then
      local pid; pid=$(cat "$pidfile")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
}

case "$ACTION" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop [DIR]" >&2; exit 2 ;;
esac
