# shellcheck shell=bash
# Shared settings and helpers of the testbed scripts (up, down, reset, instance, node2).
# Sourced, not executed.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C

TB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${TESTBED_STATE:-/var/tmp/autorepair-testbed}

NODE1=node1.example.test
NODE2=node2.example.test
CLUSTER=cluster.example.test
NODE1_IP=10.99.0.1
NODE2_IP=10.99.0.2
CLUSTER_IP=10.99.0.100
SAFETY_NET=10.99.0.0/16          # 'unreachable' route: nothing in 10.99/16 can leave the machine
VETH_HOST=gnt-v0
VETH_NS=gnt-v1
RAPI_PORT=5080
RAPI_URL=https://127.0.0.1:$RAPI_PORT
RAPI_USER=autorepair             # write access
RAPI_RO_USER=autorepair-ro       # no access option: GET on everything but the query resource
RAPI_READ_USER=autorepair-read   # Ganeti's `read` option: GET everywhere, queries included
DAEMON_UTIL=/usr/lib/ganeti/daemon-util
GNT_DATA=/var/lib/ganeti
FILE_DIR=/srv/ganeti/file-storage
SHARED_DIR=/srv/ganeti/shared-file-storage
N2ROOT=$STATE/node2              # node2's private /var/lib/ganeti, /run/ganeti, logs, ssh, /srv/ganeti
SHARED_SRC=$STATE/shared-fs      # bind-mounted on both nodes at $SHARED_DIR ('sharedfile' storage)
HOSTS_MARK="# autorepair-testbed"
# Instance names that resolve through /etc/hosts only (never DNS): instN.example.test -> 10.99.1.N
INST_POOL=${TESTBED_INST_POOL:-60}

log() { printf '[testbed %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"

# A zombie counts as dead: this machine's PID 1 reaps orphans only every ~2 s, and
# start-stop-daemon (so daemon-util stop) waits for that, ~2 s per daemon.
pid_alive() {
  local st
  [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null || return 1
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
  [ -n "$st" ] && [ "$st" != Z ]
}

# Pid of the process that holds node2's namespaces, if it is alive and still the one we started.
holder_pid() {
  local p ns
  p=$(cat "$STATE/node2.pid" 2>/dev/null) || return 1
  ns=$(cat "$STATE/node2.netns" 2>/dev/null) || return 1
  pid_alive "$p" || return 1
  [ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" = "$ns" ] || return 1
  echo "$p"
}

# Run a command inside node2 (its net, mount and UTS namespaces).
in_node2() {
  local p
  p=$(holder_pid) || { log "node2 namespace is not running"; return 1; }
  nsenter -t "$p" -n -m -u -- "$@"
}

# Kill one pid politely, then firmly (only if it is still alive).
kill_pid() {
  local p=$1 i
  pid_alive "$p" || return 0
  kill -TERM "$p" 2>/dev/null || return 0
  for i in $(seq 1 50); do pid_alive "$p" || return 0; sleep 0.1; done
  kill -KILL "$p" 2>/dev/null || true
  for i in $(seq 1 20); do pid_alive "$p" || return 0; sleep 0.1; done
}

# Stop all Ganeti daemons of the node we run on, by the pids in their pid files (checked against
# the daemon's name). daemon-util stop-all does the same through start-stop-daemon but takes
# ~2 s per daemon here (see pid_alive); it is run afterwards as a no-op safety net.
stop_ganeti_daemons() {
  local f p n pids=() i
  for f in /run/ganeti/ganeti-*.pid; do
    [ -e "$f" ] || continue
    n=$(basename "$f" .pid); p=$(cat "$f" 2>/dev/null)
    pid_alive "$p" && grep -qa -- "$n" "/proc/$p/cmdline" 2>/dev/null || continue
    kill -TERM "$p" 2>/dev/null && pids+=("$p")
  done
  for i in $(seq 1 100); do
    local left=()
    for p in "${pids[@]}"; do pid_alive "$p" && left+=("$p"); done
    [ ${#left[@]} -eq 0 ] && break
    [ "$i" = 80 ] && kill -KILL "${left[@]}" 2>/dev/null
    sleep 0.1
  done
  /usr/lib/ganeti/daemon-util stop-all >/dev/null 2>&1 || true
  stop_job_processes
}

# Ganeti runs each job in its own process (jqueue/exec.py), a child of luxid that outlives it and
# goes on writing /var/lib/ganeti/queue/job-N until the job ends: after a loaded run, a teardown
# that only stops the daemons finds queue files reappearing behind it. A job process is known by
# the livelock file it holds open for its whole life, /run/ganeti/livelocks/job_*, which only
# this cluster's job processes have. Call it once luxid is down, so no new job starts.
job_process_pids() {
  local d fd
  for d in /proc/[0-9]*; do
    for fd in "$d"/fd/*; do
      case "$(readlink "$fd" 2>/dev/null)" in
        /run/ganeti/livelocks/job_*) echo "${d#/proc/}"; break ;;
      esac
    done
  done
}
stop_job_processes() {
  # Job processes ignore SIGTERM (5 s each through kill_pid): all at once, then SIGKILL. The
  # cluster goes away, so nothing is lost. A job started meanwhile is caught by the next round.
  local p i round pids
  for round in 1 2 3; do
    pids=$(job_process_pids)
    [ -n "$pids" ] || return 0
    for p in $pids; do
      log "stopping Ganeti job process $p: $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-80)"
      kill -TERM "$p" 2>/dev/null || true
    done
    for i in $(seq 1 30); do
      local left=()
      for p in $pids; do pid_alive "$p" && left+=("$p"); done
      [ ${#left[@]} -eq 0 ] && break
      [ "$i" = 10 ] && kill -KILL "${left[@]}" 2>/dev/null
      sleep 0.1
    done
  done
}

rapi_curl() {
  # usage: rapi_curl [curl args...] PATH   (PATH like /2/info). Password is read from a file,
  # passed to curl on stdin as a config line so it never shows up in the process list.
  local path=${*: -1}
  local args=("${@:1:$#-1}")
  printf 'user = "%s:%s"\n' "$RAPI_USER" "$(cat "$STATE/rapi-password")" |
    curl -sS --max-time 20 --cacert "$STATE/rapi.pem" -K - "${args[@]}" "$RAPI_URL$path"
}

# gnt-job wait for every id given; returns non-zero if any did not end in success.
wait_jobs() {
  local id rc=0 st
  for id in "$@"; do
    gnt-job wait "$id" >/dev/null 2>&1 || true
    st=$(gnt-job list --no-headers -o status "$id" 2>/dev/null | tr -d ' ')
    [ "$st" = success ] || { log "job $id ended with status '$st'"; rc=1; }
  done
  return $rc
}
