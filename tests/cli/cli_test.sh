#!/usr/bin/env bash
# cli_test.sh — end-to-end test of supervisectl against a real supervised.
#
#   cli_test.sh SUPERVISED SUPERVISECTL
#
# Design: the script starts its own daemon in a fresh mktemp directory (its
# own socket_dir, so it never meets another supervisor), waits for it with a
# deadline, then drives every subcommand and checks output and exit codes.
# Two configured groups: "test" (2 x /bin/sleep 1000) for status, scale,
# restart, stop and events, and "probe" (1 worker) whose shell runs
# `supervisectl whoami` from inside the worker and leaves the results in the
# temp directory. Groups created with `spawn` cover the rest: "dyn" (start,
# terminate, restart --expect-generation), "crash" (a crash loop with
# max_restarts=2 that fails, then comes back with `reset`), "rdy" (a shell
# worker that reports `ready "up"` and a heartbeat through an exec chain),
# "nrdy" (never ready) and "burst" (250 workers started and stopped while an
# `events` reader is stopped, so that it must report missed events).
# `events` readers run in the background while the script triggers
# restarts until they have printed what they should; a reader of a second,
# detached daemon must exit 111 when that daemon goes away. Every wait is a
# poll with a deadline, never a fixed sleep. The EXIT trap sends SIGTERM to
# the daemon pid and the reader pids this script started (SIGKILL for the
# daemon after 5 s) and to nothing else, then removes the directory. The
# last line is always
#   cli_test: N passed, M failed
# and the exit status is non-zero when M > 0 or the script aborted.
# JSON is checked with Debian's /usr/bin/python3 (its json module only).
# The bash -c snippets below receive their file as "$1" on purpose.
# shellcheck disable=SC2016
set -euo pipefail

if [[ $# -ne 2 ]]; then
	echo "usage: $0 SUPERVISED SUPERVISECTL" >&2
	exit 2
fi
abspath() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }
SUPERVISED=$(abspath "$1")
CTL=$(abspath "$2")

# A test run from inside a supervised worker must not talk to that worker's
# supervisor by accident.
unset SUPERVISE_URL SUPERVISE_GROUP SUPERVISE_ORDINAL SUPERVISE_GENERATION \
	SUPERVISE_PURPOSE SUPERVISE_SUPERVISOR_ID

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cli_test.XXXXXX")
URL="ipc://$tmp/run/control.sock"
T=3000 # -t for every call against the live daemon
# Debian's python3 (project rule); only its json module is used.
PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3
daemon_pid=""
pass=0
fail=0
finished=0
readers=() # pids of the background `events` readers

# ---- bookkeeping -------------------------------------------------------------

# daemon_alive: our daemon is still a running job of this shell. Asking the
# job table, not kill -0, means a pid reused after the daemon was reaped is
# never mistaken for it (and never signalled).
daemon_alive() {
	[[ -n $daemon_pid ]] && jobs -rp | grep -qx "$daemon_pid"
}

# reader_alive PID: a background `events` reader of this shell still runs
# (asked of the job table, like daemon_alive).
reader_alive() { jobs -rp | grep -qx "$1"; }

# cleanup stops the daemon and the readers we started (only those pids)
# and removes $tmp.
cleanup() {
	local rc=$? i p
	if [[ $finished -eq 0 ]]; then
		echo "cli_test: aborted (exit $rc) before the end"
		fail=$((fail + 1))
		summary
		[[ $rc -ne 0 ]] || rc=1
	fi
	for p in "${readers[@]}"; do
		if reader_alive "$p"; then
			kill -CONT "$p" 2>/dev/null || true
			kill -TERM "$p" 2>/dev/null || true
		fi
	done
	if daemon_alive; then
		kill -TERM "$daemon_pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			daemon_alive || break
			sleep 0.1
		done
		if daemon_alive; then
			echo "cli_test: daemon $daemon_pid ignored SIGTERM for 5 s; SIGKILL"
			kill -KILL "$daemon_pid" 2>/dev/null || true
		fi
		wait "$daemon_pid" 2>/dev/null || true
	fi
	# The detached daemon of the background-mode checks, if a failure
	# left it running: only while its pid file still names it.
	if [[ ${bg_pid:-0} -gt 1 && -e $tmp/bg/supervised.pid &&
		$(cat "$tmp/bg/supervised.pid") == "$bg_pid" ]]; then
		kill -TERM "$bg_pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			[[ -e $tmp/bg/supervised.pid ]] || break
			sleep 0.1
		done
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT

# summary prints the daemon log on failure, then the final line.
summary() {
	if [[ $fail -ne 0 && -s $tmp/daemon.log ]]; then
		echo "---- daemon log (last 30 lines) ----"
		tail -n 30 "$tmp/daemon.log"
		echo "---- end of daemon log ----"
	fi
	echo "cli_test: $pass passed, $fail failed"
}

ok() {
	pass=$((pass + 1))
	echo "ok   - $*"
}
nok() {
	fail=$((fail + 1))
	echo "FAIL - $*"
}
# check DESC CMD... passes when CMD succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else nok "$desc"; fi
}

now_ms() { date +%s%3N; }

# wait_for SECONDS CMD... polls CMD every 50 ms until it succeeds or the
# deadline passes; returns CMD's last status.
wait_for() {
	local deadline=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		if (($(now_ms) >= deadline)); then return 1; fi
		sleep 0.05
	done
}

# run ARGS... runs supervisectl against our daemon: stdout in $tmp/out,
# stderr in $tmp/err, exit status in $rc.
run() {
	rc=0
	"$CTL" -s "$URL" -t "$T" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}
# runraw ARGS... is run without the default -s and -t.
runraw() {
	rc=0
	"$CTL" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}
# expect_rc WANT DESC checks the $rc of the last run.
expect_rc() {
	if [[ $rc -eq $1 ]]; then
		ok "$2 (exit $rc)"
	else
		nok "$2: exit $rc, want $1; stderr: $(head -c 300 "$tmp/err")"
	fi
}
# one_error_line checks that the last run wrote exactly one line, starting
# "supervisectl: ", to stderr and nothing to stdout.
# (Builtins only: it runs for every usage case.)
one_error_line() {
	local lines
	mapfile -t lines <"$tmp/err"
	[[ ${#lines[@]} -eq 1 && ${lines[0]} == "supervisectl: "* && ! -s $tmp/out ]]
}
stderr_has() { grep -qF -- "$1" "$tmp/err"; }
stdout_has() { grep -qE -- "$1" "$tmp/out"; }
json_ok() { "$PY" -c 'import json,sys; json.load(sys.stdin)' <"$tmp/out"; }

# rows GROUP prints "ordinal generation pid state" for each row of the
# status table of GROUP (empty when the call fails).
rows() {
	"$CTL" -s "$URL" -t "$T" status "$1" 2>/dev/null |
		awk 'NR > 1 { print $2, $3, $4, $5 }' || true
}
ordinals() { rows "$1" | awk '{ print $1 }' | tr '\n' ' ' | sed 's/ $//'; }
field() { rows "$1" | awk -v o="$2" -v f="$3" '$1 == o { print $f }'; }
pid_of() { field "$1" "$2" 3; }
gen_of() { field "$1" "$2" 2; }

# is_sleep PID: PID is alive and runs /bin/sleep 1000.
is_sleep() {
	[[ $1 =~ ^[0-9]+$ ]] && kill -0 "$1" 2>/dev/null &&
		[[ $(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) =~ sleep\ 1000\ $ ]]
}
# running GROUP ORD: the slot is running with a live /bin/sleep.
running() {
	[[ $(field "$1" "$2" 4) == running ]] && is_sleep "$(pid_of "$1" "$2")"
}
ordinals_are() { [[ $(ordinals "$1") == "$2" ]]; }
gen_above() {
	local g
	g=$(gen_of "$1" "$2")
	[[ -n $g && $g -gt $3 ]] && running "$1" "$2"
}

# ---- setup -------------------------------------------------------------------

if ! command -v "$PY" >/dev/null; then
	echo "cli_test: $PY is required to validate JSON" >&2
	exit 1
fi

cat >"$tmp/probe.sh" <<EOF
# Runs as worker probe/0: supervisectl from inside a worker.
"$CTL" -t $T whoami >"$tmp/who.txt" 2>"$tmp/who.err"
echo \$? >"$tmp/who.rc.part"
"$CTL" -t $T whoami --json >"$tmp/who.json" 2>>"$tmp/who.err"
echo \$? >>"$tmp/who.rc.part"
mv "$tmp/who.rc.part" "$tmp/who.rc"
exec /bin/sleep 1000
EOF

cat >"$tmp/test.conf" <<EOF
socket_dir = "$tmp/run";
stop_timeout_ms = 2000;
groups = (
  {
    name = "test";
    argv = [ "/bin/sleep", "1000" ];
    count = 2;
    max_count = 8;
    purpose = "test";
    min_uptime_ms = 0;
  },
  {
    name = "probe";
    argv = [ "/bin/sh", "$tmp/probe.sh" ];
    count = 1;
    purpose = "whoami probe";
    min_uptime_ms = 0;
  }
);
EOF

"$SUPERVISED" --config "$tmp/test.conf" --foreground >"$tmp/daemon.log" 2>&1 &
daemon_pid=$!

# ready: hello succeeds; gives up early if the daemon died.
ready() {
	daemon_alive || return 2
	"$CTL" -s "$URL" -t 200 hello >/dev/null 2>&1
}
deadline=$(($(now_ms) + 10000))
until ready; do
	if ! daemon_alive; then
		nok "daemon exited during startup"
		finished=1
		summary
		exit 1
	fi
	if (($(now_ms) >= deadline)); then
		nok "daemon not answering hello within 10 s"
		finished=1
		summary
		exit 1
	fi
	sleep 0.05
done
ok "daemon ready (pid $daemon_pid)"

# ---- hello, help, version ----------------------------------------------------

run hello
expect_rc 0 "hello"
check "hello prints protocol 1.x" stdout_has '^protocol: +1\.[0-9]+$'
check "hello prints a supervisor id" stdout_has '^supervisor id: +[^ ]+'
check "hello prints server and features" \
	bash -c 'grep -q "^server: " "$1" && grep -q "^features:" "$1"' _ "$tmp/out"
run hello --json
expect_rc 0 "hello --json"
check "hello --json parses" json_ok
sup_id=$("$PY" -c 'import json,sys; print(json.load(sys.stdin)["supervisor_id"])' <"$tmp/out")

rc=0
SUPERVISE_URL=$URL "$CTL" -t "$T" hello >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_rc 0 "hello via \$SUPERVISE_URL"

runraw --help
expect_rc 0 "--help"
check "--help documents the exit codes" \
	bash -c 'grep -q "^  100 " "$1" && grep -q "^  111 " "$1"' _ "$tmp/out"
runraw help
expect_rc 0 "help"
runraw -V
expect_rc 0 "--version"
check "--version names the program" stdout_has '^supervisectl [0-9]'

# ---- status --------------------------------------------------------------------

both_running() { running test 0 && running test 1; }
check "ordinals 0 and 1 of test are running" wait_for 10 both_running
run status test
expect_rc 0 "status test"
check "status header" \
	bash -c 'head -n 1 "$1" | grep -qE "^GROUP +ORDINAL +GENERATION +PID +STATE +READY +UPTIME +PURPOSE +ACTIVITY +STATUS$"' _ "$tmp/out"
check "status test has exactly ordinals 0 1" ordinals_are test "0 1"
check "pid of test/0 is a live /bin/sleep" is_sleep "$(pid_of test 0)"
check "pid of test/1 is a live /bin/sleep" is_sleep "$(pid_of test 1)"
check "rows: ready yes, then the purpose, then no status (-)" \
	bash -c 'awk "NR > 1 && (\$6 != \"yes\" || \$(NF-1) != \"test\" || \$NF != \"-\") { bad = 1 } END { exit bad }" "$1"' _ "$tmp/out"
run status
expect_rc 0 "status (every group)"
check "status lists both groups" \
	bash -c 'grep -q "^test " "$1" && grep -q "^probe " "$1"' _ "$tmp/out"

run status --json
expect_rc 0 "status --json"
check "status --json parses" json_ok
run --json status test
expect_rc 0 "--json before the command"
check "status test --json parses" json_ok
check "status --json has the documented keys and rows" "$PY" -c '
import json, sys
rows = json.load(open(sys.argv[1]))
keys = {"group", "ordinal", "generation", "pid", "state", "uptime_ms",
        "purpose", "restarts", "last_exit_code", "last_signal", "ready",
        "fast_failures", "restart_in_ms", "status_text", "activities",
        "activity", "activity_age_ms"}
assert isinstance(rows, list) and len(rows) == 2, rows
for r in rows:
    assert set(r) == keys, sorted(r)
    assert r["group"] == "test" and r["purpose"] == "test", r
    assert r["state"] == "running" and r["pid"] > 0, r
    assert r["ready"] is True and r["status_text"] == "", r
    assert r["fast_failures"] == 0 and r["restart_in_ms"] == 0, r
    assert (r["activities"], r["activity"]) == (0, ""), r
assert [r["ordinal"] for r in rows] == [0, 1], rows
' "$tmp/out"
# top: a live status; not a tty here, so one block per refresh
run top test --count 2
expect_rc 0 "top test --count 2"
check "top printed 2 blocks, each a header line and the table" \
	bash -c '[ "$(grep -cE "^[0-9T:.-]+Z +2 workers, 0 busy$" "$1")" = 2 ] && [ "$(grep -cE "^GROUP .* ACTIVITY +STATUS$" "$1")" = 2 ]' _ "$tmp/out"
run top test --for 0
expect_rc 0 "top test --for 0 (one refresh)"
run top test --count 0
expect_rc 100 "top --count 0 is a usage error"

# ---- whoami ------------------------------------------------------------------

run whoami
expect_rc 1 "whoami outside a worker"
check "whoami says not a supervised worker" stderr_has "not a supervised worker"
check "whoami error is one line" one_error_line

check "probe worker ran whoami" wait_for 10 test -s "$tmp/who.rc"
check "whoami inside a worker exits 0 (text and --json)" \
	bash -c '[[ $(tr "\n" " " <"$1") == "0 0 " ]]' _ "$tmp/who.rc"
[[ ! -s $tmp/who.err ]] || echo "     (worker stderr: $(head -c 300 "$tmp/who.err"))"
check "whoami text: group, context, parent" bash -c '
	grep -qE "^group: +probe$" "$1" && grep -qE "^ordinal: +0$" "$1" &&
	grep -qE "^kind: +process$" "$1" && grep -qE "^purpose: +whoami probe$" "$1" &&
	grep -qE "^context: +process:probe/0$" "$1" && grep -qE "^parent: +none$" "$1"' \
	_ "$tmp/who.txt"
probe_pid=$(pid_of probe 0)
check "whoami --json matches status and hello" "$PY" -c '
import json, sys
w = json.load(open(sys.argv[1]))
assert w["group"] == "probe" and w["ordinal"] == 0, w
assert w["kind"] == "process" and w["purpose"] == "whoami probe", w
assert str(w["pid"]) == sys.argv[2], (w["pid"], sys.argv[2])
assert w["supervisor_id"] == sys.argv[3], w
assert w["generation"] == 0 and w["parent"] is None, w  # first start
assert w["context"] == [{"kind": "process", "name": "probe", "ordinal": 0}], w
' "$tmp/who.json" "$probe_pid" "$sup_id"

# ---- scale, restart, stop ------------------------------------------------------

run scale test 3
expect_rc 0 "scale test 3"
check "scale prints previous and new count" stdout_has '^test: 2 -> 3$'
check "scale to 3 adds a running ordinal 2" wait_for 10 running test 2
check "status test has ordinals 0 1 2" ordinals_are test "0 1 2"

gen0=$(gen_of test 0)
pid0=$(pid_of test 0)
run restart test 0
expect_rc 0 "restart test 0"
check "restart bumps the generation of test/0 (was $gen0)" \
	wait_for 10 gen_above test 0 "$gen0"
check "restarted test/0 has a new pid" test "$(pid_of test 0)" != "$pid0"

run scale test 1
expect_rc 0 "scale test 1"
check "scale prints 3 -> 1" stdout_has '^test: 3 -> 1$'
check "scale to 1 leaves only ordinal 0" wait_for 10 ordinals_are test 0

run scale test 9
expect_rc 1 "scale above max_count"
check "scale above max_count is one error line" one_error_line

run stop test
expect_rc 0 "stop test"
check "stop prints 1 -> 0" stdout_has '^test: 1 -> 0$'
check "stop leaves no worker in test" wait_for 10 ordinals_are test ""
run status test --json
expect_rc 0 "status of a stopped group"
check "stopped group is an empty JSON array" bash -c '[[ $(cat "$1") == "[]" ]]' _ "$tmp/out"
run scale test 2 --json
expect_rc 0 "scale a stopped group back up"
check "scale --json parses" json_ok
check "stopped group starts again" wait_for 10 ordinals_are test "0 1"

# ---- groups ----------------------------------------------------------------------

# wkey GROUP ORD KEY prints KEY (as JSON) of the status --json row of
# GROUP/ORD; gkey GROUP KEY prints KEY of the groups --json entry of GROUP.
wkey() {
	"$CTL" -s "$URL" -t "$T" status "$1" --json 2>/dev/null |
		"$PY" -c 'import json, sys
for r in json.load(sys.stdin):
    if r["ordinal"] == int(sys.argv[1]):
        print(json.dumps(r[sys.argv[2]]))' "$2" "$3" 2>/dev/null || true
}
gkey() {
	"$CTL" -s "$URL" -t "$T" groups "$1" --json 2>/dev/null |
		"$PY" -c 'import json, sys; print(json.dumps(json.load(sys.stdin)[0][sys.argv[1]]))' \
			"$2" 2>/dev/null || true
}
# group_gone GROUP: groups GROUP is refused with "not found" (exit 1).
group_gone() {
	local r=0
	"$CTL" -s "$URL" -t "$T" groups "$1" >/dev/null 2>&1 || r=$?
	[[ $r -eq 1 ]]
}

run groups
expect_rc 0 "groups"
check "groups header" \
	bash -c 'head -n 1 "$1" | grep -qE "^GROUP +COUNT +RUNNING +READY +STARTING +STOPPING +BACKOFF +RESTART +STRATEGY +FAILED$"' _ "$tmp/out"
check "groups row of test: 2/8, 2 running and ready, permanent, one_for_one, not failed" \
	stdout_has '^test +2/8 +2 +2 +0 +0 +0 +permanent +one_for_one +no$'
check "groups lists probe too" stdout_has '^probe +1/'
run groups test --json
expect_rc 0 "groups test --json"
check "groups --json has the documented keys and values" "$PY" -c '
import json, sys
gs = json.load(open(sys.argv[1]))
keys = {"group", "count", "max_count", "running", "ready", "starting",
        "stopping", "backoff", "restart", "strategy", "failed",
        "failure_reason", "purpose"}
assert isinstance(gs, list) and len(gs) == 1, gs
g = gs[0]
assert set(g) == keys, sorted(g)
assert (g["group"], g["count"], g["max_count"]) == ("test", 2, 8), g
assert (g["running"], g["ready"], g["starting"]) == (2, 2, 0), g
assert (g["restart"], g["strategy"]) == ("permanent", "one_for_one"), g
assert g["failed"] is False and g["failure_reason"] == "", g
assert g["purpose"] == "test", g
' "$tmp/out"
run groups nosuch
expect_rc 1 "groups of an unknown group"

# ---- spawn, start, terminate, restart --expect-generation ---------------------------

run spawn bad --count 1 --purpose p --set restart=sometimes -- /bin/sleep 1000
expect_rc 1 "spawn with a spec that breaks a config rule"
check "spec error: one line carrying the config rule's message" \
	bash -c 'grep -qF "groups[0].restart: must be one of" "$1" && [[ $(wc -l <"$1") -eq 1 ]] && [[ ! -s $2 ]]' \
	_ "$tmp/err" "$tmp/out"
check "the refused group does not exist" group_gone bad

run spawn dyn --count 2 --max-count 3 --purpose "runtime group" --cwd "$tmp" \
	--env DYN_VAR=hello -- /bin/sh -c \
	'echo "$DYN_VAR $(pwd)" >"$1.$SUPERVISE_ORDINAL"; exec /bin/sleep 1000' sh "$tmp/dyn.env"
expect_rc 0 "spawn dyn (count 2, max 3, --cwd, --env)"
check "spawn prints NAME: created (count N)" stdout_has '^dyn: created \(count 2\)$'
dyn_both() { running dyn 0 && running dyn 1; }
check "spawned group runs ordinals 0 and 1" wait_for 10 dyn_both
check "spawned workers got --env and --cwd" \
	wait_for 10 bash -c '[[ $(cat "$1" 2>/dev/null) == "hello $2" ]]' _ "$tmp/dyn.env.0" "$tmp"
run spawn dyn --count 1 --purpose p -- /bin/sleep 1000
expect_rc 1 "spawn of a name that is taken"
check "taken name: one error line saying it exists" \
	bash -c 'grep -q "exists" "$1" && [[ $(wc -l <"$1") -eq 1 ]]' _ "$tmp/err"
run groups dyn
check "groups dyn: 2 of max 3" stdout_has '^dyn +2/3 +2 +'

run start dyn
expect_rc 0 "start dyn"
check "start prints the new ordinal alone (2)" bash -c '[[ $(cat "$1") == 2 ]]' _ "$tmp/out"
check "ordinal 2 of dyn runs" wait_for 10 running dyn 2
run start dyn
expect_rc 1 "start beyond max_count"
check "start beyond max_count: resource exhausted" stderr_has "resource exhausted"
run terminate dyn 1 --json
expect_rc 0 "terminate dyn 1"
check "terminate --json" "$PY" -c '
import json, sys
assert json.load(open(sys.argv[1])) == {"group": "dyn", "ordinal": 1}' "$tmp/out"
check "terminate releases ordinal 1 and leaves a hole" wait_for 10 ordinals_are dyn "0 2"
run start dyn --json
expect_rc 0 "start dyn --json"
check "start takes the lowest free ordinal (1)" "$PY" -c '
import json, sys
assert json.load(open(sys.argv[1])) == {"group": "dyn", "ordinal": 1}' "$tmp/out"
check "ordinal 1 of dyn runs again" wait_for 10 running dyn 1
run terminate dyn 7
expect_rc 1 "terminate of an ordinal not held"
run terminate dyn 2
expect_rc 0 "terminate dyn 2"
check "terminate prints GROUP/ORDINAL: terminating" stdout_has '^dyn/2: terminating$'

g=$(gen_of dyn 0)
run restart dyn 0 --expect-generation $((g + 5))
expect_rc 1 "restart with a wrong --expect-generation"
check "wrong generation: one line, the supervisor's conflict" \
	bash -c 'grep -qF "expected generation differs" "$1" && [[ $(wc -l <"$1") -eq 1 ]]' _ "$tmp/err"
check "wrong generation: dyn/0 was not restarted" test "$(gen_of dyn 0)" = "$g"
run restart dyn 0 --expect-generation="$g" --json
expect_rc 0 "restart with the right --expect-generation"
check "restart --json echoes expected_generation" "$PY" -c '
import json, sys
assert json.load(open(sys.argv[1])) == {"group": "dyn", "ordinal": 0,
                                      "expected_generation": int(sys.argv[2])}' \
	"$tmp/out" "$g"
check "right generation: dyn/0 restarted" wait_for 10 gen_above dyn 0 "$g"

# ---- failed group, reset, delete --------------------------------------------------

# Exits 3 at once until $tmp/crash.ok exists, then sleeps.
run spawn crash --count 1 --purpose "crash loop" --set max_restarts=2 \
	--set min_uptime_ms=0 -- /bin/sh -c 'test -e "$1" && exec /bin/sleep 1000; exit 3' \
	sh "$tmp/crash.ok"
expect_rc 0 "spawn a crash-looping group with --set max_restarts=2"
crash_failed() { [[ $(gkey crash failed) == true ]]; }
check "the crash-looping group becomes failed" wait_for 15 crash_failed
run status crash
expect_rc 0 "status of a failed group"
check "status: failed worker, no pid, READY -" \
	bash -c 'awk "NR == 2 { ok = \$5 == \"failed\" && \$4 == \"-\" && \$6 == \"-\" } END { exit !ok }" "$1"' _ "$tmp/out"
check "status: the failed line gives the reason and the reset command" \
	stdout_has '^group crash failed: .*restarts.* \(supervisectl reset crash\)$'
run groups crash
check "groups: FAILED is yes with the reason" stdout_has '^crash +.* yes: .*restarts'
run status
check "status of every group has exactly one failed line" \
	bash -c '[[ $(grep -c "^group .* failed: " "$1") -eq 1 ]]' _ "$tmp/out"
: >"$tmp/crash.ok"
run reset crash
expect_rc 0 "reset crash"
check "reset prints GROUP: reset" stdout_has '^crash: reset$'
check "reset brings the worker back" wait_for 10 running crash 0
crash_ok() { [[ $(gkey crash failed) == false ]]; }
check "the group is failed no more" crash_ok
run status crash
check "status: no failed line after reset" bash -c '! grep -q " failed: " "$1"' _ "$tmp/out"

run delete crash
expect_rc 0 "delete crash"
check "delete prints GROUP: deleting" stdout_has '^crash: deleting$'
check "the deleted group disappears" wait_for 10 group_gone crash
run delete crash
expect_rc 1 "delete of an unknown group"

# ---- ready and heartbeat from a worker ------------------------------------------

# A plain child of the worker may not report for it; exec keeps the pid.
cat >"$tmp/rdy.sh" <<EOF
# Runs as worker rdy/0.
"$CTL" -t $T ready child >"$tmp/rdy.child.err" 2>&1
echo \$? >"$tmp/rdy.child.rc"
exec "$CTL" -t $T ready "up" -- "$CTL" -t $T heartbeat -- /bin/sleep 1000
EOF
run spawn rdy --count 1 --purpose "ready probe" --set ready=true -- /bin/sh "$tmp/rdy.sh"
expect_rc 0 "spawn rdy (--set ready=true)"
rdy_up() {
	[[ $(wkey rdy 0 ready) == true && $(wkey rdy 0 status_text) == '"up"' ]] &&
		running rdy 0
}
check "rdy/0 reported ready with the status text \"up\"" wait_for 10 rdy_up
run status rdy
check "status shows READY yes and STATUS up" \
	bash -c 'awk "NR == 2 { ok = \$6 == \"yes\" && \$NF == \"up\" } END { exit !ok }" "$1"' _ "$tmp/out"
check "ready and heartbeat succeeded (the chain reached sleep in generation 0)" \
	test "$(gen_of rdy 0)" = 0
check "a child of the worker may not report (exit 1, permission denied)" \
	bash -c '[[ $(cat "$1") == 1 ]] && grep -q "permission denied" "$2"' \
	_ "$tmp/rdy.child.rc" "$tmp/rdy.child.err"
run spawn nrdy --count 1 --purpose "never ready" --set ready=true -- /bin/sleep 1000
expect_rc 0 "spawn nrdy (ready=true, never reports)"
nrdy_starting() { [[ $(field nrdy 0 4) == starting ]] && is_sleep "$(pid_of nrdy 0)"; }
check "a worker that never reports stays starting" wait_for 10 nrdy_starting
run status nrdy
check "status shows READY no while starting" \
	bash -c 'awk "NR == 2 { ok = \$6 == \"no\" } END { exit !ok }" "$1"' _ "$tmp/out"
run delete nrdy
expect_rc 0 "delete nrdy"
run ready "x"
expect_rc 1 "ready outside a worker"
check "ready outside a worker: not a supervised worker" stderr_has "not a supervised worker"
check "ready error is one line" one_error_line
run heartbeat
expect_rc 1 "heartbeat outside a worker"
check "heartbeat outside a worker: not a supervised worker" stderr_has "not a supervised worker"

# ---- events ----------------------------------------------------------------------

# start_reader OUT ARGS...: supervisectl events ARGS in the background,
# stdout in OUT, stderr in OUT.err; its pid in $reader.
start_reader() {
	local out=$1
	shift
	"$CTL" -s "$URL" -t "$T" events "$@" >"$out" 2>"$out.err" &
	reader=$!
	readers+=("$reader")
}
# finish_reader PID: waits for the reader to end by itself (deadline
# 10 s, then SIGKILL); its exit status in $rc.
finish_reader() {
	rc=0
	if ! wait_for 10 reader_done "$1"; then
		kill -KILL "$1" 2>/dev/null || true
	fi
	wait "$1" || rc=$?
}
# poke_until GROUP ORD CMD...: restart GROUP/ORD, wait for its new
# generation, and again, until CMD succeeds (deadline 20 s).
poke_until() {
	local group=$1 ord=$2 deadline g
	shift 2
	deadline=$(($(now_ms) + 20000))
	until "$@"; do
		(($(now_ms) < deadline)) || return 1
		g=$(gen_of "$group" "$ord")
		"$CTL" -s "$URL" -t "$T" restart "$group" "$ord" >/dev/null 2>&1 || true
		wait_for 5 gen_above "$group" "$ord" "${g:-0}" || true
	done
}
lines_at_least() { [[ -f $1 && $(wc -l <"$1") -ge $2 ]]; }
reader_done() { ! reader_alive "$1"; }

start_reader "$tmp/ev1" test --count 3
check "events test --count 3 ends while test/1 restarts" poke_until test 1 reader_done "$reader"
finish_reader "$reader"
expect_rc 0 "events --count 3"
check "events --count 3 printed exactly 3 lines" bash -c '[[ $(wc -l <"$1") -eq 3 ]]' _ "$tmp/ev1"
check "event lines: TIME SEQ test[ORD] gen G pid P KIND [DETAILS]" bash -c '
	grep -vqE "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z [0-9]+ test(\[[0-9]+\] gen [0-9]+ pid ([0-9]+|-))? [a-z_]+( .+)?$" "$1" && exit 1
	awk "{ if (NR > 1 && \$2 <= last) bad = 1; last = \$2 } END { exit bad }" "$1"' _ "$tmp/ev1"
check "every line is a stopping, exited or started event of test[1]" \
	bash -c 'awk "\$3 != \"test[1]\" || (\$8 != \"stopping\" && \$8 != \"exited\" && \$8 != \"started\") { bad = 1 } END { exit bad }" "$1"' _ "$tmp/ev1"

start_reader "$tmp/ev2" test/0 --count 2 --json
check "events test/0 --count 2 --json ends while test/0 restarts" poke_until test 0 reader_done "$reader"
finish_reader "$reader"
expect_rc 0 "events test/0 --json"
check "events --json: one object per line with the documented keys" "$PY" -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, lines
keys = {"seq", "time_unix_ms", "kind", "group", "ordinal", "generation",
        "pid", "details", "supervisor_id"}
for l in lines:
    e = json.loads(l)
    assert set(e) == keys, sorted(e)
    assert e["group"] == "test" and e["ordinal"] == 0, e
    assert e["supervisor_id"] == sys.argv[2] and e["seq"] > 0, e
    assert e["kind"] in ("stopping", "exited", "started", "stopped"), e
' "$tmp/ev2" "$sup_id"

t0=$(now_ms)
run events nosuch --for 300
t1=$(now_ms)
expect_rc 0 "events --for 300"
check "events --for 300 lasted at least 300 ms and printed nothing" \
	bash -c '(($1 - $2 >= 300)) && [[ ! -s $3 ]]' _ "$t1" "$t0" "$tmp/out"

start_reader "$tmp/ev3" dyn
check "a reader of dyn sees a restart" poke_until dyn 0 lines_at_least "$tmp/ev3" 1
kill -TERM "$reader" 2>/dev/null || true
finish_reader "$reader"
expect_rc 0 "events ends with exit 0 on SIGTERM"

# Lost events: a stopped reader misses a burst of ~1,000 events (250
# workers started, then stopped; a reader's socket buffers hold ~300)
# and reports the gap once it runs again.
run spawn burst --count 0 --max-count 250 --purpose "event burst" -- /bin/sleep 1000
expect_rc 0 "spawn burst (count 0)"
start_reader "$tmp/ev4"
scale_burst_until_seen() {
	"$CTL" -s "$URL" -t "$T" scale burst 0 >/dev/null 2>&1 || true
	lines_at_least "$tmp/ev4" 1
}
check "an unfiltered reader is connected" wait_for 10 scale_burst_until_seen
kill -STOP "$reader"
run scale burst 250
expect_rc 0 "scale burst 250 while the reader is stopped"
burst_is() { [[ $(gkey burst running) == "$1" && $(gkey burst count) == "$2" ]]; }
check "250 burst workers run" wait_for 30 burst_is 250 250
run scale burst 0
check "the burst workers are gone" wait_for 30 burst_is 0 0
kill -CONT "$reader"
check "the reader reports missed events on stderr" \
	wait_for 10 grep -qE "^supervisectl: events: missed [0-9]+ events \(seq [0-9]+\.\.[0-9]+\)$" "$tmp/ev4.err"
kill -INT "$reader" 2>/dev/null || true
finish_reader "$reader"
expect_rc 0 "events ends with exit 0 on SIGINT"
check "stdout of the reader has only event lines" bash -c '! grep -q missed "$1"' _ "$tmp/ev4"
run delete burst
expect_rc 0 "delete burst"

# ---- the supervisor says no: exit 1 ----------------------------------------------

run status nosuch
expect_rc 1 "status of an unknown group"
check "unknown group: one line naming 'not found'" \
	bash -c 'grep -q "^supervisectl: status nosuch: not found" "$1" && [[ $(wc -l <"$1") -eq 1 ]]' _ "$tmp/err"
run scale nosuch 1
expect_rc 1 "scale of an unknown group"
run stop nosuch
expect_rc 1 "stop of an unknown group"
run restart nosuch 0
expect_rc 1 "restart in an unknown group"
run restart test 7
expect_rc 1 "restart of an ordinal with no worker"
run reset nosuch
expect_rc 1 "reset of an unknown group"
run start nosuch
expect_rc 1 "start in an unknown group"
run terminate nosuch 0
expect_rc 1 "terminate in an unknown group"

# ---- usage errors: exit 100 ------------------------------------------------------

long=$(printf 'g%.0s' {1..65})
usage_case() {
	local desc=$1
	shift
	run "$@"
	expect_rc 100 "usage: $desc"
	check "usage: $desc is one error line" one_error_line
}
usage_case "no command"
usage_case "unknown command" frobnicate
usage_case "unknown global option" --bogus status
usage_case "unknown command option" status --bogus
usage_case "scale without count" scale test
usage_case "scale count junk" scale test 3x
usage_case "scale count negative" scale test -1
usage_case "scale count with sign" scale test +1
usage_case "scale count overflow" scale test 4294967296
usage_case "restart ordinal junk" restart test one
usage_case "group name of 65 characters" status "$long"
usage_case "group name with a space" status "a b"
usage_case "too many arguments" status test extra
usage_case "whoami with an argument" whoami test
usage_case "restart --expect-generation junk" restart test 0 --expect-generation x
usage_case "restart --expect-generation negative" restart test 0 --expect-generation=-1
usage_case "restart --expect-generation without a value" restart test 0 --expect-generation
usage_case "an option of another command" restart test 0 --count 3
usage_case "terminate ordinal junk" terminate test x
usage_case "start without a group" start
usage_case "reset with two groups" reset a b
usage_case "delete without a group" delete
usage_case "groups with a bad name" groups "a b"
usage_case "spawn without --" spawn g --count 1 --purpose p /bin/true
usage_case "spawn without a program" spawn g --count 1 --purpose p --
usage_case "spawn without --count" spawn g --purpose p -- /bin/true
usage_case "spawn without --purpose" spawn g --count 1 -- /bin/true
usage_case "spawn count junk" spawn g --count x --purpose p -- /bin/true
usage_case "spawn --env without =" spawn g --count 1 --purpose p --env FOO -- /bin/true
usage_case "spawn --set without =" spawn g --count 1 --purpose p --set restart -- /bin/true
usage_case "spawn --set of an unknown key" spawn g --count 1 --purpose p --set colour=red -- /bin/true
usage_case "spawn --set of a key with its own option" spawn g --count 1 --purpose p --set count=3 -- /bin/true
usage_case "spawn bad name" spawn "a b" --count 1 --purpose p -- /bin/true
usage_case "events --count 0" events --count 0
usage_case "events --for junk" events --for 1s
usage_case "events ordinal junk" events test/x
usage_case "events bad group" events "a b/1"
usage_case "ready with two words" ready a b
usage_case "ready -- without a program" ready up --
usage_case "heartbeat with an argument" heartbeat x
runraw -t 12ms hello
expect_rc 100 "usage: timeout junk"
runraw -t 0 hello
expect_rc 100 "usage: timeout 0"
runraw -t
expect_rc 100 "usage: timeout without value"
runraw -s "" hello
expect_rc 100 "usage: empty socket URL"

# ---- nobody listening: exit 111 ----------------------------------------------------

runraw -s "ipc://$tmp/nobody.sock" -t 200 hello
expect_rc 111 "no daemon listening (hello)"
check "no daemon: one error line naming the URL" \
	bash -c 'grep -qF "cannot connect to supervisor" "$1" && [[ $(wc -l <"$1") -eq 1 ]]' _ "$tmp/err"
runraw -s "ipc://$tmp/nobody.sock" -t 200 status
expect_rc 111 "no daemon listening (status)"
runraw -s "ipc://$tmp/nobody.sock" -t 200 events
expect_rc 111 "no daemon listening (events)"

# ---- supervised's own command line and config errors ------------------------------

# daemon_rc WANT DESC ARGS...: run supervised ARGS in the foreground (it
# must exit by itself: every case here is refused before it serves).
daemon_rc() {
	local want=$1 desc=$2
	shift 2
	rc=0
	timeout 10 "$SUPERVISED" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	expect_rc "$want" "supervised: $desc"
}
printf 'groups = ( { name = "a"; argv = ["/bin/true"]; count = 1;\n  purpose = "p"; colour = 3; } );\n' >"$tmp/bad.conf"
daemon_rc 2 "unknown key in the config" --config "$tmp/bad.conf" --foreground
check "supervised: one error line naming file, line and key" \
	bash -c 'grep -qF "$2:2: groups[0].colour: unknown key" "$1" && [[ $(wc -l <"$1") -eq 1 ]]' _ "$tmp/err" "$tmp/bad.conf"
printf 'groups = ( { name = "a"; argv = ["/bin/true"]; count = -1; purpose = "p"; } );\n' >"$tmp/bad2.conf"
daemon_rc 2 "count out of range" --config "$tmp/bad2.conf" --foreground
check "supervised: range error names the key" \
	bash -c 'grep -qF "groups[0].count: must be an integer in 0..4096 (got -1)" "$1"' _ "$tmp/err"
daemon_rc 2 "missing config file" --config "$tmp/no-such.conf" --foreground
daemon_rc 100 "no --config" --foreground
daemon_rc 100 "unknown option" --bogus
daemon_rc 0 "--help" --help
check "supervised --help mentions --config" stdout_has "--config FILE"
daemon_rc 0 "--version" --version
check "supervised --version names the protocol" stdout_has "supervise\.v1"
# A second daemon on the same state directory is refused (exit 111), ours
# unharmed: the state directory's lock is held by the first.
daemon_rc 111 "second daemon on a busy state directory" --config "$tmp/test.conf" --foreground
check "second daemon: the error names the other supervised" stderr_has "another supervised holds"

# ---- background mode ----------------------------------------------------------------

# Without --foreground, supervised returns 0 only once it serves, and names
# itself in SOCKET_DIR/supervised.pid until it exits. (Once detached it is
# not our child: after it exits, it is gone or a zombie of whoever adopted
# it.)
sed "s|^socket_dir.*|socket_dir = \"$tmp/bg\";|" "$tmp/test.conf" >"$tmp/bg.conf"
daemon_rc 0 "detaches once serving" --config "$tmp/bg.conf"
bg_pid=$(cat "$tmp/bg/supervised.pid" 2>/dev/null || echo 0)
runraw -s "ipc://$tmp/bg/control.sock" -t "$T" hello
expect_rc 0 "background daemon answers at once"
check "background daemon's pid file names a live supervised" \
	bash -c '[[ $(tr "\0" " " </proc/$1/cmdline) == *supervised*bg.conf* ]]' _ "$bg_pid"
# A reader of the background daemon's events: connected once it has seen
# a scale, it must say so and exit 111 when that daemon goes away.
BGURL="ipc://$tmp/bg/control.sock"
"$CTL" -s "$BGURL" -t "$T" events >"$tmp/bgev" 2>"$tmp/bgev.err" &
reader=$!
readers+=("$reader")
bg_scale_seen() {
	"$CTL" -s "$BGURL" -t "$T" scale test 2 >/dev/null 2>&1 || true
	lines_at_least "$tmp/bgev" 1
}
check "a reader of the background daemon sees its events" wait_for 10 bg_scale_seen
if [[ $bg_pid -gt 1 ]]; then
	kill -TERM "$bg_pid"
	check "background daemon exits on SIGTERM and removes its pid file" \
		wait_for 10 bash -c '[[ ! -e $2 ]] && { [[ ! -e /proc/$1 ]] || [[ $(awk "{print \$3}" /proc/$1/stat 2>/dev/null) == Z ]]; }' _ "$bg_pid" "$tmp/bg/supervised.pid"
fi
finish_reader "$reader"
expect_rc 111 "events exits 111 when the supervisor goes away"
check "events says the supervisor went away, in one line" \
	bash -c 'grep -q "^supervisectl: events: the supervisor went away" "$1" && [[ $(wc -l <"$1") -eq 1 ]]' _ "$tmp/bgev.err"
check "background daemon logged to SOCKET_DIR/supervised.log" \
	bash -c 'grep -q "serving ipc://" "$1"' _ "$tmp/bg/supervised.log"

# ---- done --------------------------------------------------------------------------

# The daemon must still be the one we started, and still serving.
check "daemon still running" daemon_alive
run hello
expect_rc 0 "hello after the second daemon was refused"

finished=1
summary
[[ $fail -eq 0 ]]
