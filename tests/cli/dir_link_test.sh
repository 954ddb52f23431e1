#!/usr/bin/env bash
# dir_link_test.sh — a socket_dir or state_dir that is a symbolic link (even
# to a good directory) is refused at start, with one line that says so; so
# is a socket_dir that others may write to, or that belongs to another uid
# (the second only when run as root, which can hand it to nobody).
#
#   dir_link_test.sh SUPERVISED
#
# Design: two configs, each naming a link to a fresh 0700 directory of
# ours; `supervised -f` must exit 111 (system failure) with exactly one line
# on stderr naming the key, the link and "is a symbolic link", and must not
# have written anything through the link. Each run is bounded by timeout(1);
# nothing sleeps.
set -euo pipefail

[[ $# -eq 1 && -x $1 ]] || {
	echo "usage: $0 SUPERVISED" >&2
	exit 2
}
SUPERVISED=$1
unset SUPERVISE_URL XDG_RUNTIME_DIR
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dir_link_test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
G='groups = ( { name = "w"; argv = ["/bin/sleep", "1000"]; count = 1; purpose = "t"; } );'

# refused NAME KEY LINK CONFIG [WANT] checks one start: WANT (default
# "KEY LINK is a symbolic link") must be in its one line.
refused() {
	local name=$1 key=$2 link=$3 conf=$4 want=${5:-"$2 $3 is a symbolic link"} rc=0
	timeout 10 "$SUPERVISED" -f -c "$conf" >"$tmp/out" 2>"$tmp/err" || rc=$?
	local line
	line=$(head -n 1 "$tmp/err")
	if [[ $rc -ne 111 ]]; then
		echo "FAIL: $name: exit $rc, want 111: $line" >&2
		fail=1
	elif [[ $(awk 'END { print NR }' "$tmp/err") -ne 1 ]]; then
		echo "FAIL: $name: not one line: $(head -c 300 "$tmp/err")" >&2
		fail=1
	elif [[ $line != *"$want"* ]]; then
		echo "FAIL: $name: $line" >&2
		fail=1
	elif [[ -n $(ls -A "$tmp/$name-target") ]]; then
		echo "FAIL: $name: wrote through the link: $(ls -A "$tmp/$name-target")" >&2
		fail=1
	else
		echo "ok: $name: $line"
	fi
}

mkdir -m 0700 "$tmp/sock-target" "$tmp/state-target"
ln -s "$tmp/sock-target" "$tmp/sock"
ln -s "$tmp/state-target" "$tmp/state"
printf 'socket_dir = "%s";\n%s\n' "$tmp/sock" "$G" >"$tmp/a.conf"
printf 'socket_dir = "%s";\nstate_dir = "%s";\n%s\n' "$tmp/run" "$tmp/state" "$G" >"$tmp/b.conf"
refused sock socket_dir "$tmp/sock" "$tmp/a.conf"
refused state state_dir "$tmp/state" "$tmp/b.conf"

mkdir -m 0700 "$tmp/open-target"
chmod 0777 "$tmp/open-target"
printf 'socket_dir = "%s";\n%s\n' "$tmp/open-target" "$G" >"$tmp/c.conf"
refused open socket_dir "$tmp/open-target" "$tmp/c.conf" \
	"socket_dir $tmp/open-target is writable by everyone (mode 0777)"
if [[ $(id -u) -eq 0 ]] && id nobody >/dev/null 2>&1; then
	mkdir -m 0700 "$tmp/theirs-target"
	chown nobody "$tmp/theirs-target"
	printf 'socket_dir = "%s";\n%s\n' "$tmp/theirs-target" "$G" >"$tmp/d.conf"
	refused theirs socket_dir "$tmp/theirs-target" "$tmp/d.conf" \
		"socket_dir $tmp/theirs-target belongs to uid $(id -u nobody)"
else
	echo "skip: theirs: needs root and a user nobody"
fi
exit $fail
