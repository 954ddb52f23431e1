#!/usr/bin/env bash
# long_values_test.sh — the longest values the config allows travel whole
# through every request and event that carries them, and a value past a
# bound is refused with TOO_LARGE, never cut short.
#
#   long_values_test.sh SUPERVISED SUPERVISECTL
#
# Design: one daemon of this test's own (socket_dir in a mktemp directory)
# runs a group whose name is 64 characters (the longest allowed), whose
# purpose is 1,024 bytes, whose argv has 256 entries and whose env has 256
# entries of 4,000 bytes each (about 2 MB, what exec takes), and a pool of
# the longest name with a path template of about 1,000 bytes. Every value is
# then read back, compared byte for byte (Debian's python3, json module):
#   status --json, groups --json     group name and purpose
#   whoami --json, run by a worker   group name and purpose (and the worker
#                                    sees all 256 args and its env entry)
#   events --json                    group name of a restart's events
#   pools --json, lease acquire      pool name; the slot's path, and the file
#   spawn (CreateGroup)              64-byte name and 1,024-byte purpose
#                                    served whole; a 65-byte name, a 1,025-
#                                    byte purpose and a spec over the 64 KiB
#                                    request bound refused (TOO_LARGE or the
#                                    client's own bound), nothing created
# Every wait is a poll with a deadline. The EXIT trap stops the daemon (by
# its pid: SIGTERM, then SIGKILL after 5 s) and the events reader, and
# removes the directory. Last line: `long_values_test: N passed, M failed`.
set -euo pipefail

# cli_args, ok, bad, wait_for, finish
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_args "$@"
PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/long_values_test.XXXXXX")
daemon_pid=""
reader_pid=""
cleanup() {
	if [[ -n $reader_pid ]]; then
		kill -TERM "$reader_pid" 2>/dev/null || true
		wait "$reader_pid" 2>/dev/null || true
	fi
	if [[ -n $daemon_pid ]] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid" 2>/dev/null || true
		local end=$((SECONDS + 5))
		while kill -0 "$daemon_pid" 2>/dev/null && ((SECONDS < end)); do
			sleep 0.05
		done
		kill -KILL "$daemon_pid" 2>/dev/null || true
		wait "$daemon_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
export SUPERVISE_URL="ipc://$tmp/run/control.sock"
ctl() { "$CTL" -t 5000 "$@"; }

# The values, made once and kept in files for python to compare with.
NAME=$(printf 'G%.0s' $(seq 31))-$(printf 'g%.0s' $(seq 32)) # 64 bytes
POOL=$(printf 'P%.0s' $(seq 64))
$PY - "$tmp" <<'EOF'
import sys
tmp = sys.argv[1]
# Printable ASCII with the characters a careless encoder gets wrong.
unit = 'purpose "quoted" \\back/slash\t{braces} '
p = (unit * 40)[:1024]
open(tmp + '/purpose', 'w').write(p)
# A path template of about 1,000 bytes: directories of 200 characters.
parts = [tmp, 'pool'] + ['d%d' % i + 'x' * 196 for i in range(4)]
open(tmp + '/template', 'w').write('/'.join(parts) + '/slot-{slot}.db')
EOF
PURPOSE=$(cat "$tmp/purpose")
TEMPLATE=$(cat "$tmp/template")
[[ ${#NAME} -eq 64 && ${#PURPOSE} -eq 1024 ]] || {
	echo "long_values_test: bad test values" >&2
	exit 1
}

# The worker: writes its whoami and how many args it got, then sleeps.
cat >"$tmp/worker.sh" <<EOF
#!/bin/sh
"$CTL" -t 5000 whoami --json >"$tmp/who.\$SUPERVISE_ORDINAL.tmp" &&
	mv "$tmp/who.\$SUPERVISE_ORDINAL.tmp" "$tmp/who.\$SUPERVISE_ORDINAL"
echo "\$# \${#E255}" >"$tmp/args.\$SUPERVISE_ORDINAL"
exec sleep 1000
EOF
chmod 0755 "$tmp/worker.sh"

$PY - "$tmp" "$NAME" "$POOL" <<'EOF'
import sys
tmp, name, pool = sys.argv[1:4]
def q(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"').replace('\t', '\\t') + '"'
purpose = open(tmp + '/purpose').read()
template = open(tmp + '/template').read()
argv = [tmp + '/worker.sh'] + ['a%03d' % i + 'A' * 3996 for i in range(255)]
env = ['E%03d=' % i + 'v' * 3995 for i in range(256)]
conf = 'socket_dir = %s;\n' % q(tmp + '/run')
conf += 'groups = ( { name = %s; count = 2; purpose = %s;\n' % (q(name), q(purpose))
conf += '  argv = [ %s ];\n' % ', '.join(q(a) for a in argv)
conf += '  env = [ %s ]; } );\n' % ', '.join(q(e) for e in env)
conf += 'pools = ( { name = %s; slots = 2; path = %s; } );\n' % (q(pool), q(template))
open(tmp + '/c.conf', 'w').write(conf)
EOF

"$SUPERVISED" -f -c "$tmp/c.conf" >"$tmp/log" 2>&1 &
daemon_pid=$!
if wait_for 20 ctl hello >/dev/null 2>&1; then
	ok "the daemon serves a config of the longest values"
else
	bad "the daemon did not come up: $(head -c 600 "$tmp/log")"
	echo "long_values_test: $pass passed, $fail failed"
	exit 1
fi

# check_json WHAT FILE PYTHON-EXPR: EXPR (over `d`, the parsed file, and
# name, purpose, pool, template) must be true.
check_json() {
	local what=$1 file=$2 expr=$3
	if $PY - "$file" "$NAME" "$tmp" "$POOL" "$expr" <<'EOF'; then
import json, sys
f, name, tmp, pool, expr = sys.argv[1:6]
purpose = open(tmp + '/purpose').read()
template = open(tmp + '/template').read()
d = json.load(open(f))
sys.exit(0 if eval(expr) else 1)
EOF
		ok "$what"
	else
		bad "$what: $(head -c 300 "$file")"
	fi
}

workers_up() { [[ -s $tmp/who.0 && -s $tmp/who.1 ]]; }
if wait_for 20 workers_up; then
	ok "both workers ran whoami"
else
	bad "workers did not report: $(tail -c 600 "$tmp/log")"
fi
check_json "whoami: group and purpose whole" "$tmp/who.0" \
	'd["group"] == name and d["purpose"] == purpose'
read -r nargs e255 <"$tmp/args.0"
if [[ $nargs -eq 255 && $e255 -eq 3995 ]]; then
	ok "the worker got 255 arguments and its 256th env entry whole"
else
	bad "the worker got $nargs arguments, E255 of $e255 bytes"
fi
ctl status --json >"$tmp/status.json"
check_json "status --json: group and purpose whole" "$tmp/status.json" \
	'len(d) == 2 and all(w["group"] == name and w["purpose"] == purpose for w in d)'
ctl groups --json >"$tmp/groups.json"
check_json "groups --json: group name whole" "$tmp/groups.json" \
	'[g["group"] for g in d] == [name]'

# Events of a restart carry the whole name.
ctl events "$NAME" --count 2 --for 20000 --json >"$tmp/events.json" 2>"$tmp/events.err" &
reader_pid=$!
# The reader may subscribe after the first restart: restart until it has
# printed (bounded), as a poll.
reader_done() { ! kill -0 "$reader_pid" 2>/dev/null; }
for _ in 1 2 3 4 5 6 7 8 9 10; do
	ctl restart "$NAME" 0 >/dev/null
	if wait_for 2 reader_done; then
		break
	fi
done
rc=0
wait "$reader_pid" || rc=$?
reader_pid=""
if [[ $rc -eq 0 ]]; then
	# One JSON object per line.
	$PY -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
json.dump(rows, open(sys.argv[1] + ".all", "w"))' "$tmp/events.json"
	check_json "events --json: group name whole" "$tmp/events.json.all" \
		'len(d) == 2 and all(e["group"] == name for e in d)'
else
	bad "events reader exited $rc: $(head -c 300 "$tmp/events.err")"
fi

# The pool: its name, and the slot's path with {slot} put in.
ctl pools --json >"$tmp/pools.json"
check_json "pools --json: pool name and path template whole" "$tmp/pools.json" \
	'[p["name"] for p in d] == [pool] and d[0]["path"] == template'
sid=$(ctl session open 60000 | awk '{ print $NF }')
ctl lease acquire "$POOL" --session "$sid" --json >"$tmp/lease.json"
check_json "lease acquire: pool name and resource path whole" "$tmp/lease.json" \
	'd["pool"] == pool and d["resource"] == template.replace("{slot}", str(d["slot"]))'
res=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["resource"])' "$tmp/lease.json")
if [[ -f $res ]]; then
	ok "the slot's file exists at the whole path"
else
	bad "no file at $res"
fi

# CreateGroup: the longest values served whole, one byte more refused.
ctl spawn "${NAME:0:63}x" --count 1 --purpose "$PURPOSE" -- /bin/sleep 1000 >/dev/null
ctl status "${NAME:0:63}x" --json >"$tmp/spawned.json"
check_json "spawn: 64-byte name and 1,024-byte purpose served whole" "$tmp/spawned.json" \
	'len(d) == 1 and d[0]["group"] == name[:63] + "x" and d[0]["purpose"] == purpose'
# refused WHAT WORD CMD...: exit 1 or 100 with WORD in the message, and no
# group of that name afterwards.
refused() {
	local what=$1 word=$2 rc=0
	shift 2
	"$@" >"$tmp/r.out" 2>"$tmp/r.err" || rc=$?
	if [[ $rc -ne 1 && $rc -ne 100 ]]; then
		bad "$what: exit $rc: $(head -c 300 "$tmp/r.err")"
	elif ! grep -qi -- "$word" "$tmp/r.err"; then
		bad "$what: no '$word' in: $(head -c 300 "$tmp/r.err")"
	else
		ok "$what: $(head -c 160 "$tmp/r.err")"
	fi
}
refused "spawn: 1,025-byte purpose" "too large\|1024\|1 024" \
	ctl spawn lv-a --count 1 --purpose "${PURPOSE}x" -- /bin/sleep 1000
refused "spawn: 65-byte name" "64" \
	ctl spawn "${NAME}x" --count 1 --purpose p -- /bin/sleep 1000
big=()
for i in $(seq 20); do big+=("$(printf 'B%.0s' $(seq 4000))"); done
refused "spawn: a spec over the request bound" "too large" \
	ctl spawn lv-b --count 1 --purpose p -- /bin/sleep 1000 "${big[@]}"
ctl groups --json >"$tmp/groups2.json"
check_json "refused spawns created nothing" "$tmp/groups2.json" \
	'sorted(g["group"] for g in d) == sorted([name, name[:63] + "x"])'

if kill -0 "$daemon_pid" 2>/dev/null; then
	ok "the daemon is still running"
else
	bad "the daemon died: $(tail -c 600 "$tmp/log")"
fi
finish long_values_test
