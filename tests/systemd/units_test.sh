#!/usr/bin/env bash
# units_test.sh — the systemd units of packaging/systemd, as installed.
#
# Usage: tests/systemd/units_test.sh SOURCE_DIR BUILD_DIR
#
# 1. `cmake --install BUILD_DIR --prefix TMP` puts supervised.service and
#    supervised@.service in TMP/lib/systemd/system, ExecStart naming
#    TMP/bin/supervised;
# 2. the choices docs/production.md explains are there (Type=notify,
#    KillMode=mixed, Delegate=yes, RuntimeDirectory=, StateDirectory=,
#    WatchdogSec=, no ExecReload= while the daemon cannot reload);
# 3. each sample configuration agrees with its unit (socket_dir is
#    /run/RuntimeDirectory, state_dir /var/lib/StateDirectory, with %i =
#    example for the template), its longest stop timeout plus 2 x 5 s fits
#    in TimeoutStopSec=, and `supervised --check` accepts it;
# 4. `systemd-analyze verify` accepts both units (the template as
#    supervised@example.service), with not one warning about them.
# Exit 77 (skipped, with the reason) when systemd-analyze is not installed
# (Debian package systemd; scripts/install-deps.sh installs it): then
# nothing was checked, since 1 to 3 are cheap to run but 4 is the point.
set -uo pipefail

SRC=${1:?usage: units_test.sh SOURCE_DIR BUILD_DIR}
BUILD=${2:?usage: units_test.sh SOURCE_DIR BUILD_DIR}
if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: systemd-analyze is not installed (Debian package systemd)"
	exit 77
fi

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $((pass + fail)) - $*"; }
notok() { fail=$((fail + 1)); echo "FAIL $((pass + fail)) - $*"; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sv-units-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix
UNITS=$PREFIX/lib/systemd/system

# key FILE KEY: the value of the last KEY= line of a unit file.
key() { sed -n "s/^$2=//p" "$1" | tail -n 1; }
# conf FILE KEY: a string value of a libconfig file ("..." removed).
conf() { sed -n "s/^[[:space:]]*$2[[:space:]]*=[[:space:]]*\"\\(.*\\)\";.*/\\1/p" "$1"; }
# seconds VALUE: a systemd time span of the forms used here, in seconds.
seconds() {
	case $1 in
	*min) echo $((${1%min} * 60)) ;;
	*s) echo "${1%s}" ;;
	*) echo "$1" ;;
	esac
}

# ---- 1. installed -----------------------------------------------------------
if cmake --install "$BUILD" --prefix "$PREFIX" >"$TMP/log" 2>&1; then
	ok "cmake --install $BUILD --prefix $PREFIX"
else
	notok "cmake --install"
	tail -n 20 "$TMP/log"
fi
for u in supervised.service supervised@.service; do
	if [ -f "$UNITS/$u" ]; then ok "$u installed in lib/systemd/system"; else notok "$u installed in lib/systemd/system"; fi
	exe=$(key "$UNITS/$u" ExecStart)
	case $exe in
	"$PREFIX/bin/supervised "*"--foreground") ok "$u: ExecStart=$exe" ;;
	*) notok "$u: ExecStart names the installed supervised with --foreground (got '$exe')" ;;
	esac
done

# ---- 2. the choices -------------------------------------------------------------
for u in supervised.service supervised@.service; do
	f=$UNITS/$u
	for want in Type=notify KillMode=mixed Delegate=yes; do
		if grep -qx "$want" "$f"; then ok "$u: $want"; else notok "$u: $want"; fi
	done
	for k in RuntimeDirectory StateDirectory WatchdogSec TimeoutStopSec; do
		if [ -n "$(key "$f" "$k")" ]; then ok "$u: $k=$(key "$f" "$k")"; else notok "$u: $k= set"; fi
	done
	if grep -q '^ExecReload=' "$f"; then notok "$u: no ExecReload= (the daemon cannot reload yet)"; else ok "$u: no ExecReload= (the daemon cannot reload yet)"; fi
done

# ---- 3. sample configurations agree ---------------------------------------------
# check_sample UNIT INSTANCE CONF
check_sample() {
	local f=$UNITS/$1 inst=$2 cf=$3 rd sd st stop
	rd=$(key "$f" RuntimeDirectory)
	sd=$(key "$f" StateDirectory)
	rd=${rd//%i/$inst}
	sd=${sd//%i/$inst}
	if [ "$(conf "$cf" socket_dir)" = "/run/$rd" ]; then
		ok "$(basename "$cf"): socket_dir = /run/$rd (RuntimeDirectory= of $1)"
	else
		notok "$(basename "$cf"): socket_dir '$(conf "$cf" socket_dir)' is /run/$rd (RuntimeDirectory= of $1)"
	fi
	if [ "$(conf "$cf" state_dir)" = "/var/lib/$sd" ]; then
		ok "$(basename "$cf"): state_dir = /var/lib/$sd (StateDirectory= of $1)"
	else
		notok "$(basename "$cf"): state_dir '$(conf "$cf" state_dir)' is /var/lib/$sd (StateDirectory= of $1)"
	fi
	st=$(sed -n 's/^[[:space:]]*stop_timeout_ms[[:space:]]*=[[:space:]]*\([0-9]*\);.*/\1/p' "$cf" | sort -n | tail -n 1)
	stop=$(seconds "$(key "$f" TimeoutStopSec)")
	if [ -n "$st" ] && [ $((st + 10000)) -le $((stop * 1000)) ]; then
		ok "$(basename "$cf"): stop_timeout_ms $st + 2 x 5 s fits TimeoutStopSec=${stop}s"
	else
		notok "$(basename "$cf"): stop_timeout_ms '${st}' + 2 x 5 s fits TimeoutStopSec=${stop}s"
	fi
	if "$PREFIX/bin/supervised" --check --config "$cf" >"$TMP/log" 2>&1; then
		ok "supervised --check --config $(basename "$cf")"
	else
		notok "supervised --check --config $(basename "$cf")"
		cat "$TMP/log"
	fi
}
check_sample supervised.service "" "$SRC/packaging/systemd/supervise.conf"
check_sample supervised@.service example "$SRC/packaging/systemd/example.conf"

# ---- 4. systemd-analyze verify ----------------------------------------------------
for u in supervised.service supervised@example.service; do
	if systemd-analyze verify "$UNITS/$u" >"$TMP/log" 2>&1 &&
		! grep -q 'supervised' "$TMP/log"; then
		ok "systemd-analyze verify $u"
	else
		notok "systemd-analyze verify $u"
		sed 's/^/    | /' "$TMP/log"
	fi
done

echo "units_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
