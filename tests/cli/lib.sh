# tests/cli/lib.sh — helpers shared by the CLI shell tests; sourced, not run.
#
# Design: a test counts its cases with ok and bad, each of which prints the
# case it names ("ok: ..." on stdout, "FAIL: ..." on stderr), and ends with
# `finish NAME`, which prints `NAME: N passed, M failed` and returns non-zero
# when a case failed (the script's last command, so its exit status).
# wait_for polls a condition with a deadline instead of sleeping blindly;
# cli_args takes the two arguments. The sourcing script keeps its own
# cleanup trap (what it started).

pass=0
fail=0

# cli_args "$@" takes the script's arguments SUPERVISED SUPERVISECTL into
# $SUPERVISED and $CTL (a usage line and exit 2 otherwise) and unsets what
# a supervisor gives its workers, so that the test reaches only the daemon
# it starts.
cli_args() {
	if [[ $# -ne 2 ]]; then
		echo "usage: $0 SUPERVISED SUPERVISECTL" >&2
		exit 2
	fi
	SUPERVISED=$1
	CTL=$2
	unset SUPERVISE_URL SUPERVISE_GROUP SUPERVISE_ORDINAL \
		SUPERVISE_GENERATION SUPERVISE_PURPOSE SUPERVISE_SUPERVISOR_ID \
		XDG_RUNTIME_DIR
}

# ok DESCRIPTION... counts and prints a passed case.
ok() {
	pass=$((pass + 1))
	echo "ok: $*"
}

# bad DESCRIPTION... counts and prints a failed case.
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*" >&2
}

# wait_for SECONDS CMD... polls CMD every 50 ms until it succeeds or the
# deadline passes (status 1).
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < end)) || return 1
		sleep 0.05
	done
}

# finish NAME prints the counts; status 0 only when no case failed.
finish() {
	echo "$1: $pass passed, $fail failed"
	[[ $fail -eq 0 ]]
}
