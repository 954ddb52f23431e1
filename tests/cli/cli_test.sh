#!/usr/bin/env bash
# cli_test.sh — end-to-end test of supervisectl against a real supervised.
#
#   cli_test.sh SUPERVISED SUPERVISECTL
#
# Design: the script starts its own daemon in a fresh mktemp directory (its
# own socket_dir, so it never meets another supervisor), waits for it with a
# deadline, then drives every subcommand and checks output and exit codes.
# Two groups: "test" (2 x /bin/sleep 1000) for status/scale/restart/stop,
# and "probe" (1 worker) whose shell runs `supervisectl whoami` from inside
# the worker and leaves the results in the temp directory. Every wait is a
# poll with a deadline, never a fixed sleep. The EXIT trap sends SIGTERM to
# the daemon pid this script started (SIGKILL after 5 s) and to nothing
# else, then removes the directory. The last line is always
#   cli_test: N passed, M failed
# and the exit status is non-zero when M > 0 or the script aborted.
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
daemon_pid=""
pass=0
fail=0
finished=0

# ---- bookkeeping -------------------------------------------------------------

# daemon_alive: our daemon is still a running job of this shell. Asking the
# job table, not kill -0, means a pid reused after the daemon was reaped is
# never mistaken for it (and never signalled).
daemon_alive() {
	[[ -n $daemon_pid ]] && jobs -rp | grep -qx "$daemon_pid"
}

# cleanup stops the daemon we started (only that pid) and removes $tmp.
cleanup() {
	local rc=$? i
	if [[ $finished -eq 0 ]]; then
		echo "cli_test: aborted (exit $rc) before the end"
		fail=$((fail + 1))
		summary
		[[ $rc -ne 0 ]] || rc=1
	fi
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
one_error_line() {
	[[ $(wc -l <"$tmp/err") -eq 1 ]] && grep -q '^supervisectl: ' "$tmp/err" &&
		[[ ! -s $tmp/out ]]
}
stderr_has() { grep -qF -- "$1" "$tmp/err"; }
stdout_has() { grep -qE -- "$1" "$tmp/out"; }
json_ok() { python3 -c 'import json,sys; json.load(sys.stdin)' <"$tmp/out"; }

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

if ! command -v python3 >/dev/null; then
	echo "cli_test: python3 is required to validate JSON" >&2
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
sup_id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["supervisor_id"])' <"$tmp/out")

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
	bash -c 'head -n 1 "$1" | grep -qE "^GROUP +ORDINAL +GENERATION +PID +STATE +UPTIME +PURPOSE$"' _ "$tmp/out"
check "status test has exactly ordinals 0 1" ordinals_are test "0 1"
check "pid of test/0 is a live /bin/sleep" is_sleep "$(pid_of test 0)"
check "pid of test/1 is a live /bin/sleep" is_sleep "$(pid_of test 1)"
check "rows end with the purpose" \
	bash -c 'awk "NR > 1 && \$NF != \"test\" { bad = 1 } END { exit bad }" "$1"' _ "$tmp/out"
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
check "status --json has the documented keys and rows" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
keys = {"group", "ordinal", "generation", "pid", "state", "uptime_ms",
        "purpose", "restarts", "last_exit_code", "last_signal"}
assert isinstance(rows, list) and len(rows) == 2, rows
for r in rows:
    assert set(r) == keys, sorted(r)
    assert r["group"] == "test" and r["purpose"] == "test", r
    assert r["state"] == "running" and r["pid"] > 0, r
assert [r["ordinal"] for r in rows] == [0, 1], rows
' "$tmp/out"

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
check "whoami --json matches status and hello" python3 -c '
import json, sys
w = json.load(open(sys.argv[1]))
assert w["group"] == "probe" and w["ordinal"] == 0, w
assert w["kind"] == "process" and w["purpose"] == "whoami probe", w
assert str(w["pid"]) == sys.argv[2], (w["pid"], sys.argv[2])
assert w["supervisor_id"] == sys.argv[3], w
assert w["generation"] >= 0 and w["parent"] is None, w
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
# A second daemon on the same socket is refused (exit 111), ours unharmed.
# (nng probes the busy socket by connecting and hanging up at once, which
# trips nng bug #1518 in our daemon: the accept guard must repair it.)
daemon_rc 111 "second daemon on a busy socket" --config "$tmp/test.conf" --foreground
check "second daemon: the error says the socket is in use" stderr_has "in use"

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
if [[ $bg_pid -gt 1 ]]; then
	kill -TERM "$bg_pid"
	check "background daemon exits on SIGTERM and removes its pid file" \
		wait_for 10 bash -c '[[ ! -e $2 ]] && { [[ ! -e /proc/$1 ]] || [[ $(awk "{print \$3}" /proc/$1/stat 2>/dev/null) == Z ]]; }' _ "$bg_pid" "$tmp/bg/supervised.pid"
fi
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
