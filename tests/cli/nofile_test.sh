#!/usr/bin/env bash
# nofile_test.sh — a descriptor limit far below what the config needs
# degrades service with a clear log line; it never crashes the daemon or
# stops supervision.
#
#   nofile_test.sh SUPERVISED SUPERVISECTL
#
# Design: the daemon is started in the foreground under `ulimit -n 40`
# (soft and hard, so it cannot raise it) with one group of 50 workers, which
# needs about 150 descriptors. It must then: log one line at start naming
# the limit and what to raise it to; keep answering on its control socket
# (hello, status) while workers past the limit wait in backoff; run as many
# workers again after the test kills a running one (by the pid the daemon
# reports; the test kills nothing else); get every worker back once descriptors come back
# (the test scales the group down to 5, which frees them, and waits for 5
# running workers); and stop cleanly on SIGTERM with exit status 0. Every
# wait is a poll with a deadline. The EXIT trap sends SIGKILL to the daemon
# pid if it is still there, and removes the temporary directory.
#
# The last line is `nofile_test: N passed, M failed`; the exit status is
# non-zero when M > 0 or the script aborted.
set -euo pipefail

# cli_args, ok, bad, wait_for, finish
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_args "$@"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nofile_test.XXXXXX")
daemon_pid=""
cleanup() {
	if [[ -n $daemon_pid ]] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -KILL "$daemon_pid" 2>/dev/null || true
		wait "$daemon_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
export SUPERVISE_URL="ipc://$tmp/run/control.sock"
ctl() { "$CTL" -t 3000 "$@"; }

# count_state STATE prints how many workers status shows in STATE.
count_state() {
	ctl status 2>/dev/null | awk -v s="$1" 'NR > 1 && $5 == s { n++ } END { print n + 0 }'
}

cat >"$tmp/c.conf" <<EOF
socket_dir = "$tmp/run";
groups = ( { name = "w"; argv = ["/bin/sleep", "1000"]; count = 50;
             purpose = "nofile test"; backoff_max_ms = 200; } );
EOF

(
	ulimit -n 40
	exec "$SUPERVISED" -f -c "$tmp/c.conf"
) >"$tmp/log" 2>&1 &
daemon_pid=$!

if wait_for 10 grep -q "descriptor limit 40 is below" "$tmp/log"; then
	ok "the start is logged with the limit and what it should be"
else
	bad "no descriptor-limit line in the log: $(head -c 600 "$tmp/log")"
fi
if wait_for 10 ctl hello >/dev/null 2>&1; then
	ok "hello answers under the limit"
else
	bad "hello did not answer"
fi
# some_running: at least one worker runs and some wait.
some_running() {
	local r b
	r=$(count_state running)
	b=$(count_state backoff)
	[[ $r -ge 1 && $r -lt 50 && $b -ge 1 ]]
}
if wait_for 10 some_running; then
	ok "degraded: $(count_state running) running, $(count_state backoff) in backoff"
else
	bad "expected some running and some in backoff: $(ctl status 2>&1 | head -5)"
fi
if grep -q "Too many open files" "$tmp/log"; then
	ok "failed spawns say why"
else
	bad "no 'Too many open files' in the log"
fi

# Supervision goes on: when a running worker is killed, the descriptors it
# held are taken again: as many workers run as before. Which one gets them
# is a race between the killed worker's restart and the others' backoff
# retries (all in the same backoff), so the test does not require the
# killed ordinal itself to win it.
victim=$(ctl status 2>/dev/null | awk 'NR > 1 && $5 == "running" && !v { v = $2 " " $4 } END { print v }')
ord=${victim% *}
pid=${victim#* }
before=$(count_state running)
kill -KILL "$pid"
refilled() {
	local st
	st=$(ctl status 2>/dev/null) || return 1
	! awk -v p="$pid" 'NR > 1 && $4 == p { f = 1 } END { exit !f }' <<<"$st" &&
		[[ $(awk 'NR > 1 && $5 == "running" { n++ } END { print n + 0 }' <<<"$st") -ge $before ]]
}
if wait_for 15 refilled; then
	ok "worker $ord (pid $pid) killed; $(count_state running) running again (were $before)"
else
	bad "after the kill of worker $ord (pid $pid): $(count_state running) running, were $before: $(ctl status 2>&1 | head -5)"
fi

# With descriptors back, every remaining worker runs.
ctl scale w 5 >/dev/null
five_running() { [[ $(count_state running) -eq 5 && $(count_state backoff) -eq 0 ]]; }
if wait_for 15 five_running; then
	ok "scaled to 5 within the limit: all 5 running"
else
	bad "after scale 5: $(count_state running) running, $(count_state backoff) backoff"
fi

if kill -0 "$daemon_pid" 2>/dev/null; then
	ok "the daemon is still running"
else
	bad "the daemon died: $(tail -5 "$tmp/log")"
fi
kill -TERM "$daemon_pid"
rc=0
wait "$daemon_pid" || rc=$?
daemon_pid=""
if [[ $rc -eq 0 ]]; then
	ok "SIGTERM: exit 0"
else
	bad "SIGTERM: exit $rc: $(tail -5 "$tmp/log")"
fi

finish nofile_test
