#!/bin/sh
# sv-pidwrap.sh — runs a command as pid 1 of a private pid namespace (with
# its own /proc) whose pids wrap past pid_max a few dozen processes later:
# the next pid is pid_max - SV_PIDWRAP_AHEAD (default 60), and after
# pid_max the kernel hands out low pids again. Tests use it to check that
# nothing assumes pids grow in spawn order (integration_guard's 100
# workers: the harness once compared the first 64 children in /proc order,
# which a wrap made differ from the first 64 seats).
#
# Usage: sv-pidwrap.sh COMMAND [ARGS...]. The command sees SV_PIDWRAP_NEXT
# (the first pid handed out in the namespace) and SV_PIDWRAP_MAX (pid_max).
# Exit 77 (skipped) when not root or when no such namespace can be made;
# otherwise the command's exit status.
set -eu
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	echo "SKIP: needs root and unshare"
	exit 77
fi
if ! unshare --pid --fork --mount-proc true 2>/dev/null; then
	echo "SKIP: no private pid namespace with its own /proc here"
	exit 77
fi
# shellcheck disable=SC2016 # expanded by the inner shell, in the namespace
exec unshare --pid --fork --mount-proc sh -c '
	max=$(cat /proc/sys/kernel/pid_max)
	next=$((max - ${SV_PIDWRAP_AHEAD:-60}))
	if ! echo $((next - 1)) >/proc/sys/kernel/ns_last_pid; then
		echo "SKIP: /proc/sys/kernel/ns_last_pid is not writable"
		exit 77
	fi
	export SV_PIDWRAP_NEXT=$next SV_PIDWRAP_MAX=$max
	echo "sv-pidwrap: pid_max $max, next pid $next"
	exec "$@"' sh "$@"
