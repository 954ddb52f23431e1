#!/bin/sh
# sv-straggler.sh — a worker that leaves a process behind: its child ignores
# SIGTERM, the worker itself does not. Stopping the worker must not leave
# the child running (integration_shutdown).
(trap '' TERM; exec sleep 1000) &
exec sleep 1000
