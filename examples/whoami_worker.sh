#!/bin/sh
# whoami_worker.sh — a libsupervise worker in plain shell.
#
# Identity is readable with zero round trips from the environment that
# supervised injects, and with one round trip over the control socket through
# `supervisectl whoami` (which the supervisor answers for the calling process
# as the kernel identifies it: here, a child of this worker).
echo "[sh] env says ${SUPERVISE_GROUP}[${SUPERVISE_ORDINAL}] generation ${SUPERVISE_GENERATION}: ${SUPERVISE_PURPOSE}"
echo "[sh] supervisectl whoami says: $(supervisectl whoami --json 2>&1)"
trap 'echo "[sh] ${SUPERVISE_GROUP}[${SUPERVISE_ORDINAL}] got SIGTERM: exiting 0"; exit 0' TERM INT
while :; do
	sleep 3600 &
	wait $! 2>/dev/null # the sleep dies with us: no "Terminated" notice
done
