#!/usr/bin/env bash
# completion_test.sh — drive packaging/bash-completion/supervisectl in bash.
#
# Usage: completion_test.sh SOURCE_DIR SUPERVISED SUPERVISECTL
#
# Sources the completion file, sets COMP_WORDS and COMP_CWORD as bash would,
# calls _supervisectl and checks COMPREPLY:
#   1. commands: "st" gives exactly start, status, stop; "" gives every
#      command of `supervisectl --help` (and help_doc_test ties those to the
#      command table and docs/supervisectl.md)
#   2. options: "--" gives the global options; "restart web --" offers
#      --rolling and --expect-generation, "lease acquire p --" offers
#      --slot; after an option that takes a value ("--count") nothing
#   3. literal sub-commands: "lease " gives acquire, claim, release, renew
#   4. with no supervisor on the URL: nothing, no stderr, within 3 s
#   5. with a supervised started here (--foreground, a temp config; ended by
#      its pid): "status " gives the group names, "restart web " the
#      ordinals 0 1 2, "events web/" gives web/0..web/2, and "-s URL"
#      given on the line (split at ':' by bash) is what is asked
# Prints "completion_test: N passed, M failed".
set -uo pipefail

if [[ $# -ne 3 ]]; then
	echo "usage: $0 SOURCE_DIR SUPERVISED SUPERVISECTL" >&2
	exit 2
fi
SRC=$1
SUPERVISED=$2
CTL=$3
unset SUPERVISE_URL XDG_RUNTIME_DIR
# shellcheck source=tests/cli/lib.sh
source "$SRC/tests/cli/lib.sh"
# shellcheck source=packaging/bash-completion/supervisectl
source "$SRC/packaging/bash-completion/supervisectl"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sv-completion.XXXXXX")
daemon_pid=
# cleanup ends the daemon this test started (by its pid) and removes $tmp.
cleanup() {
	local i
	if [[ -n $daemon_pid ]] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			jobs -rp | grep -qx "$daemon_pid" || break
			sleep 0.05
		done
		jobs -rp | grep -qx "$daemon_pid" && kill -KILL "$daemon_pid"
		wait "$daemon_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# complete_words WORD...: the words of a command line, the last one being
# completed (bash's split: "ipc:///x" arrives as "ipc" ":" "///x"); sets
# COMPREPLY and prints it sorted, one per line, into $tmp/reply.
complete_words() {
	COMP_WORDS=("$CTL" "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_supervisectl 2>"$tmp/stderr"
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort >"$tmp/reply"
}

# expect NAME WANT... : the reply is exactly WANT (any order).
expect() {
	local name=$1 got want
	shift
	got=$(tr '\n' ' ' <"$tmp/reply")
	want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
	if [[ $got == "$want" && ! -s $tmp/stderr ]]; then
		ok "$name: [${got% }]"
	else
		bad "$name: got [${got% }], want [${want% }]$([[ -s $tmp/stderr ]] && echo "; stderr: $(head -c 200 "$tmp/stderr")")"
	fi
}

# has NAME WORD... : the reply contains every WORD.
has() {
	local name=$1 w missing=()
	shift
	for w in "$@"; do
		grep -qxF -- "$w" "$tmp/reply" || missing+=("$w")
	done
	if [[ ${#missing[@]} -eq 0 && ! -s $tmp/stderr ]]; then
		ok "$name"
	else
		bad "$name: missing [${missing[*]}] in [$(tr '\n' ' ' <"$tmp/reply")]"
	fi
}

# ---- 1. commands ------------------------------------------------------------
complete_words st
expect "commands starting with st" start status stop
# Every command the help lists: the lines "  NAME ..." of its sections.
mapfile -t all < <("$CTL" --help | sed -n '/^Options/q; s/^  \([a-z][a-z-]*\).*/\1/p' | sort -u)
complete_words ""
expect "every command of --help (${#all[@]})" "${all[@]}"
complete_words -t 500 sc
expect "command after a global option with a value" scale

# ---- 2. options -------------------------------------------------------------
complete_words --
has "global options" --socket --timeout --json --help --version
complete_words restart web --
has "restart's options" --rolling --expect-generation --max-surge --json
complete_words lease acquire p --
has "lease acquire's options" --slot --wait --session
complete_words events --count ""
expect "nothing after an option that takes a value"

# ---- 3. literal sub-commands ------------------------------------------------
complete_words lease ""
expect "lease's sub-commands" acquire claim release renew
complete_words session ""
expect "session's sub-commands" close open renew

# ---- 4. no supervisor -------------------------------------------------------
mkdir -m 0700 "$tmp/nobody"
start=$SECONDS
complete_words -s ipc : "//$tmp/nobody/control.sock" status ""
expect "no supervisor: no group, no error"
if ((SECONDS - start <= 3)); then
	ok "no supervisor: answered in $((SECONDS - start)) s"
else
	bad "no supervisor: took $((SECONDS - start)) s (more than 3)"
fi

# ---- 5. a running supervisor ------------------------------------------------
cat >"$tmp/test.conf" <<CONF
socket_dir = "$tmp/run";
stop_timeout_ms = 2000;
groups = (
  { name = "web"; argv = [ "/bin/sleep", "1000" ]; count = 3; purpose = "completion test"; },
  { name = "jobs.nightly"; argv = [ "/bin/sleep", "1000" ]; count = 1; purpose = "completion test"; }
);
CONF
"$SUPERVISED" --config "$tmp/test.conf" --foreground >"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
URL="ipc://$tmp/run/control.sock"
if ! wait_for 20 "$CTL" -s "$URL" -t 200 hello >/dev/null 2>&1; then
	bad "supervised did not answer within 20 s: $(tail -n 5 "$tmp/daemon.log")"
	finish completion_test
	exit
fi
# Workers spawned (status lists the ordinals), so the answers are complete.
three() { [[ $("$CTL" -s "$URL" status web --json | grep -o '"pid":[1-9]' | wc -l) -eq 3 ]]; }
wait_for 20 three || bad "web's 3 workers did not start within 20 s"

complete_words -s ipc : "//$tmp/run/control.sock" status ""
expect "status: group names from the supervisor (-s URL split at ':')" jobs.nightly web
complete_words --socket ipc : "//$tmp/run/control.sock" scale j
expect "scale j: the matching group" jobs.nightly
export SUPERVISE_URL=$URL
complete_words restart web ""
expect "restart web: its ordinals (\$SUPERVISE_URL)" 0 1 2
complete_words terminate nosuch ""
expect "terminate of an unknown group: nothing"
complete_words events web/
expect "events web/: GROUP/ORDINAL" web/0 web/1 web/2
complete_words drain w
expect "drain w: group" web
complete_words restart web 1 --expect-generation ""
expect "a value of restart's option: nothing"
unset SUPERVISE_URL

finish completion_test
