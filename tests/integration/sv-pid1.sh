#!/bin/sh
# sv-pid1.sh — runs $SV_PID1_EXEC (supervised) with the arguments given as
# pid 1 of a private pid namespace with its own /proc, as a container
# runtime starts its entry point (integration_pid1 puts it where the
# harness expects the daemon). unshare --fork waits for it and exits with
# its status (or dies of the signal that ended it); it forwards no signal,
# so the test signals the daemon itself, from outside, as a runtime does.
set -eu
exec unshare --pid --fork --mount-proc "$SV_PID1_EXEC" "$@"
