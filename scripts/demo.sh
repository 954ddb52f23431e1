#!/usr/bin/env bash
# demo.sh — build libsupervise and watch supervised give workers durable,
# bounded identities.
#
# It installs the Debian packages it needs (scripts/install-deps.sh), builds
# into build/, then runs supervised in the foreground with six groups:
#   web    3 C workers      (examples/whoami_worker.c, libsupervise client)
#   shell  1 shell worker   (examples/whoami_worker.sh, env + supervisectl)
#   py     2 Python workers (bindings/python, ctypes over libsupervise)
#   pythreads 1 Python worker with 2 threads, each a sub-worker printing
#          its context [process p, thread t] (docs/subworkers.md)
#   rb     2 Ruby workers   (bindings/ruby, ruby-ffi over libsupervise)
#   lua    1 Lua worker     (bindings/lua, a C module for Lua 5.4)
# Every worker prints who it is. The demo then kills web[1] with SIGKILL and
# shows its replacement come back as ordinal 1, generation 1; scales web to 4;
# and stops the daemon with SIGTERM (every worker exits 0, nothing is left).
# DEMO_KEEP=1 leaves the daemon running until you press Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 >/dev/null

BIN=$ROOT/build
CTL=$BIN/cli/supervisectl
TMP=$(mktemp -d /tmp/supervise-demo.XXXXXX)
DPID=
cleanup() {
	if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
		kill -TERM "$DPID" 2>/dev/null || true
		wait "$DPID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

cat >"$TMP/demo.conf" <<CONF
# A libconfig file: see docs/config.md.
socket_dir = "$TMP/run";
stop_timeout_ms = 3000;
groups = (
  {
    name = "web";
    argv = [ "$BIN/examples/whoami-worker" ];
    count = 3;
    max_count = 8;
    purpose = "serve HTTP requests";
  },
  {
    name = "shell";
    argv = [ "$ROOT/examples/whoami_worker.sh" ];
    count = 1;
    purpose = "show identity from a shell script";
    env = [ "PATH=$BIN/cli:/usr/local/bin:/usr/bin:/bin" ];
  },
  {
    name = "py";
    argv = [ "/usr/bin/python3", "$ROOT/bindings/python/examples/whoami_worker.py" ];
    count = 2;
    purpose = "show identity from Python";
    env = [ "PYTHONPATH=$ROOT/bindings/python" ];
  },
  {
    name = "pythreads";
    argv = [ "/usr/bin/python3", "$ROOT/bindings/python/examples/threads_worker.py" ];
    count = 1;
    purpose = "show thread sub-workers from Python";
    env = [ "PYTHONPATH=$ROOT/bindings/python" ];
  },
  {
    name = "rb";
    argv = [ "ruby", "-I", "$ROOT/bindings/ruby/lib", "$ROOT/bindings/ruby/examples/whoami_worker.rb" ];
    count = 2;
    purpose = "show identity from Ruby";
  },
  {
    name = "lua";
    argv = [ "lua5.4", "$ROOT/bindings/lua/examples/whoami_worker.lua" ];
    count = 1;
    purpose = "show identity from Lua";
    env = [ "LUA_CPATH=$BIN/bindings/lua/?.so;;" ];
  }
);
CONF
export SUPERVISE_URL="ipc://$TMP/run/control.sock"
# The bindings find the library of this build (not installed) through this
# variable, which the daemon passes on to its workers.
export SUPERVISE_LIBRARY="$BIN/libsupervise.so.0"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# wait_for CMD...: retry CMD until it succeeds, for at most 30 s (a cold
# machine starts interpreters slowly).
wait_for() {
	local end=$((SECONDS + 30))
	until "$@" >/dev/null 2>&1; do
		if [ $SECONDS -ge $end ]; then
			echo "demo: timed out waiting for: $*" >&2
			exit 1
		fi
		sleep 0.05
	done
}

# running N: true when N workers are in state running.
running() { [ "$("$CTL" status --json | grep -o '"state": *"running"' | wc -l)" -eq "$1" ]; }
# generation_of GROUP ORD: the generation the supervisor reports.
generation_is() { "$CTL" status --json | python3 -c "import json,sys; w=[x for x in json.load(sys.stdin) if x['group']=='$1' and x['ordinal']==$2 and x['state']=='running']; sys.exit(0 if w and w[0]['generation']==$3 else 1)"; }
pid_of() { "$CTL" status --json | python3 -c "import json,sys; print([x['pid'] for x in json.load(sys.stdin) if x['group']=='$1' and x['ordinal']==$2][0])"; }

# printed N PATTERN: true when the workers' output so far (a copy of the
# daemon's standard output, which they share) has N lines matching PATTERN.
printed() { [ "$(grep -c -- "$2" "$TMP/out")" -ge "$1" ]; }

step "starting supervised --config $TMP/demo.conf --foreground"
: >"$TMP/out"
# Standard output goes to the terminal and to $TMP/out (tee), so the demo
# can wait for each worker's own line instead of guessing how long a cold
# interpreter takes to start.
"$BIN/daemon/supervised" --config "$TMP/demo.conf" --foreground \
	> >(tee -a "$TMP/out") &
DPID=$!
wait_for "$CTL" hello
wait_for running 10
wait_for printed 3 '^\[c\] I am web'
wait_for printed 1 '^\[sh\] supervisectl whoami says'
wait_for printed 2 '^\[py\] I am'
wait_for printed 2 '^\[py-threads\] thread'
wait_for printed 2 '^\[rb\] I am'
wait_for printed 1 '^\[lua\] I am'
step "supervisectl status"
"$CTL" status

step "kill -9 web[1] (pid $(pid_of web 1)): the replacement keeps ordinal 1, generation becomes 1"
kill -KILL "$(pid_of web 1)"
wait_for generation_is web 1 1
wait_for printed 1 '^\[c\] I am web\[1\] generation 1'
"$CTL" status web

step "supervisectl scale web 4: ordinal 3 appears"
"$CTL" scale web 4
wait_for running 11
wait_for printed 1 '^\[c\] I am web\[3\]'
"$CTL" status web

if [ "${DEMO_KEEP:-0}" = 1 ]; then
	step "daemon left running (SUPERVISE_URL=$SUPERVISE_URL); Ctrl-C to stop"
	wait "$DPID" || true
	DPID=
	exit 0
fi
step "SIGTERM to supervised: every worker is stopped and reaped"
kill -TERM "$DPID"
rc=0
wait "$DPID" || rc=$?
DPID=
echo "supervised exited with status $rc"
exit "$rc"
