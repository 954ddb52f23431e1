#!/usr/bin/env bash
# install_test.sh — install a built libsupervise into a scratch prefix and use
# it the way another project would.
#
# Usage: tests/install/install_test.sh [BUILD_DIR]     (default: build)
#
# Steps, each a numbered check:
#   1. `cmake --install BUILD_DIR --prefix TMP/prefix`
#   2. the installed files exist: public headers, libsupervise.so.0 (soname
#      checked with readelf), pkgconfig/libsupervise.pc, the CMake package,
#      bin/supervised and bin/supervisectl, lib/systemd/system's units, the
#      bash completion, and the man pages when the build found pandoc
#   3. the library exports only sv_* symbols, exactly those listed in
#      libsupervise/libsupervise.map, which are exactly the SV_API functions
#      of the headers; each header compiles on its own
#   4. tests/install/consumer built with find_package(supervise 0.1) and
#      CMAKE_PREFIX_PATH, then run
#   5. the same main.c built with `pkg-config --cflags --libs libsupervise`,
#      then run; the C example of README.md built the same way
# The consumer calls sv_version(), sv_strerror(SV_ENOTFOUND) and
# sv_client_open() on a URL nobody listens on (must give SV_ECONNECT).
# Prints "install_test: N passed, M failed"; exits 1 when M > 0.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build}
CONSUMER_SRC=$ROOT/tests/install/consumer

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $((pass + fail)) - $*"; }
notok() { fail=$((fail + 1)); echo "FAIL $((pass + fail)) - $*"; }
# check DESCRIPTION CMD...: run CMD, count it as passed when it exits 0.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else notok "$what"; fi
}
finish() {
	echo "install_test: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit $?
}

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
	notok "build directory '$BUILD' is not a configured CMake build"
	finish
fi
BUILD=$(cd "$BUILD" && pwd)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sv-install-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix
LOG=$TMP/log
# A URL in a directory that exists but where nobody listens.
mkdir -p "$TMP/nobody"
DEAD_URL="ipc://$TMP/nobody/control.sock"

# show_log: print the last command's output, indented, after a failure.
show_log() { sed 's/^/    | /' "$LOG" | tail -n 40; }

# ---- 1. install -------------------------------------------------------------
if cmake --install "$BUILD" --prefix "$PREFIX" >"$LOG" 2>&1; then
	ok "cmake --install $BUILD --prefix $PREFIX"
else
	notok "cmake --install $BUILD --prefix $PREFIX"
	show_log
fi

# ---- 2. installed files -----------------------------------------------------
for h in supervise/supervise.h supervise/client.h supervise/drain.h supervise/leases.h supervise/activity.h; do
	check "header include/$h installed" test -f "$PREFIX/include/$h"
done

# The library directory is lib/ or lib/<multiarch>/ depending on how the
# build was configured (GNUInstallDirs); find it through the soname link.
SOLINK=$(find "$PREFIX" -name libsupervise.so.0 2>/dev/null | head -n 1)
if [ -n "$SOLINK" ]; then
	LIBDIR=$(dirname "$SOLINK")
	ok "libsupervise.so.0 installed in ${LIBDIR#"$PREFIX"/}"
else
	LIBDIR=$PREFIX/lib
	notok "libsupervise.so.0 installed (not found under $PREFIX)"
fi
check "libsupervise.so.0 is a symlink (soname link)" test -L "$LIBDIR/libsupervise.so.0"
check "libsupervise.so development link installed" test -e "$LIBDIR/libsupervise.so"

soname=$(readelf -d "$LIBDIR/libsupervise.so.0" 2>/dev/null |
	sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
if [ "$soname" = "libsupervise.so.0" ]; then
	ok "readelf -d: SONAME = libsupervise.so.0"
else
	notok "readelf -d: SONAME = libsupervise.so.0 (got '${soname:-none}')"
fi

check "pkgconfig/libsupervise.pc installed" test -f "$LIBDIR/pkgconfig/libsupervise.pc"
check "cmake/supervise/superviseConfig.cmake installed" \
	test -f "$LIBDIR/cmake/supervise/superviseConfig.cmake"
for prog in supervised supervisectl; do
	if [ -x "$PREFIX/bin/$prog" ]; then
		ok "bin/$prog installed and executable"
	else
		notok "bin/$prog installed and executable (missing: is its install() rule in place and was it built?)"
	fi
done

# The systemd units, with ExecStart naming the installed daemon
# (tests/systemd/units_test.sh checks them further).
for u in supervised.service supervised@.service; do
	if grep -q "^ExecStart=$PREFIX/bin/supervised " "$PREFIX/lib/systemd/system/$u" 2>/dev/null; then
		ok "lib/systemd/system/$u installed, ExecStart=$PREFIX/bin/supervised"
	else
		notok "lib/systemd/system/$u installed, ExecStart=$PREFIX/bin/supervised"
	fi
done

# The bash completion of supervisectl, where bash-completion looks for it.
check "share/bash-completion/completions/supervisectl installed" \
	test -s "$PREFIX/share/bash-completion/completions/supervisectl"
# The man pages, when the build found pandoc to make them (cmake/manpages.cmake).
if grep -q '^SV_PANDOC:FILEPATH=/' "$BUILD/CMakeCache.txt"; then
	for page in man8/supervised.8 man1/supervisectl.1 man5/supervised.conf.5 man3/libsupervise.3; do
		check "share/man/$page installed" test -s "$PREFIX/share/man/$page"
	done
else
	echo "skip - man pages: the build found no pandoc, so it made none"
fi

# Installed programs find their shared libraries (libsupervise from the
# prefix, the rest from the system).
for prog in supervised supervisectl; do
	[ -x "$PREFIX/bin/$prog" ] || continue
	if LD_LIBRARY_PATH=$LIBDIR ldd "$PREFIX/bin/$prog" >"$LOG" 2>&1 &&
		! grep -q 'not found' "$LOG"; then
		ok "bin/$prog: every shared library resolves"
	else
		notok "bin/$prog: every shared library resolves"
		show_log
	fi
done
for prog in supervised supervisectl; do
	[ -x "$PREFIX/bin/$prog" ] || continue
	if LD_LIBRARY_PATH=$LIBDIR timeout 10 "$PREFIX/bin/$prog" --version \
		>"$LOG" 2>&1 && [ -s "$LOG" ]; then
		ok "bin/$prog --version: $(head -n 1 "$LOG")"
	else
		notok "bin/$prog --version exits 0 and prints a version"
		show_log
	fi
done

# ---- 3. exported symbols, self-contained headers ----------------------------
if [ -f "$LIBDIR/libsupervise.so.0" ]; then
	extra=$(nm -D --defined-only "$LIBDIR/libsupervise.so.0" |
		awk '$2 ~ /^[TDBRVW]$/ && $3 !~ /^sv_/ { print $3 }')
	if [ -z "$extra" ]; then
		ok "libsupervise exports only sv_* symbols"
	else
		notok "libsupervise exports only sv_* symbols (also: $(tr '\n' ' ' <<<"$extra"))"
	fi
fi
# The exported symbols are exactly the checked-in list (the version script
# libsupervise/libsupervise.map), and that list is exactly the functions the
# installed headers declare with SV_API: a function added to a header but
# not to the list (or the reverse) fails here, and so does a symbol that
# leaks out of the library.
MAP=$ROOT/libsupervise/libsupervise.map
sed -n '/^global:/,/^local:/{s/^[[:space:]]*\(sv_[A-Za-z0-9_]*\);$/\1/p}' "$MAP" |
	sort >"$TMP/sym.map"
sed -n 's/^SV_API[^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' \
	"$PREFIX"/include/supervise/*.h | sort >"$TMP/sym.headers"
if [ -f "$LIBDIR/libsupervise.so.0" ]; then
	nm -D --defined-only "$LIBDIR/libsupervise.so.0" |
		awk '$2 ~ /^[TDBRVW]$/ { sub(/@.*/, "", $3); print $3 }' |
		sort >"$TMP/sym.lib"
	if [ -s "$TMP/sym.map" ] && diff -u "$TMP/sym.map" "$TMP/sym.lib" >"$LOG" 2>&1; then
		ok "exported symbols = libsupervise.map ($(wc -l <"$TMP/sym.map") symbols)"
	else
		notok "exported symbols = libsupervise.map (- listed only, + exported only)"
		show_log
	fi
fi
if [ -s "$TMP/sym.headers" ] && diff -u "$TMP/sym.map" "$TMP/sym.headers" >"$LOG" 2>&1; then
	ok "libsupervise.map lists every SV_API function of the headers and no other"
else
	notok "libsupervise.map lists every SV_API function of the headers (- map only, + headers only)"
	show_log
fi
# Capture first (as for ldd below): with pipefail, grep -q closing the pipe
# at the first match made objdump die of SIGPIPE and fail this at random.
dynsym=$(objdump -T "$LIBDIR/libsupervise.so.0" 2>/dev/null || true)
if grep -q ' SUPERVISE_0 *sv_version$' <<<"$dynsym"; then
	ok "symbols carry the version node SUPERVISE_0"
else
	notok "symbols carry the version node SUPERVISE_0"
fi
for h in supervise/supervise.h supervise/client.h supervise/drain.h supervise/leases.h supervise/activity.h; do
	if printf '#include <%s>\n' "$h" |
		gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only \
			-I"$PREFIX/include" -x c - >"$LOG" 2>&1; then
		ok "$h compiles on its own (-std=c11 -Wpedantic -Werror)"
	else
		notok "$h compiles on its own (-std=c11 -Wpedantic -Werror)"
		show_log
	fi
done

# run_consumer NAME BINARY: run a consumer build against the prefix.
run_consumer() {
	local name=$1 bin=$2
	local deps
	# Capture first: with pipefail, grep -q closing the pipe early would
	# make ldd die of SIGPIPE and fail the check at random.
	deps=$(LD_LIBRARY_PATH=$LIBDIR ldd "$bin" 2>/dev/null || true)
	if grep -q "libsupervise.so.0 => $LIBDIR/" <<<"$deps"; then
		ok "$name: libsupervise.so.0 resolves to the installed copy"
	else
		notok "$name: libsupervise.so.0 resolves to the installed copy"
		LD_LIBRARY_PATH=$LIBDIR ldd "$bin" 2>&1 | sed 's/^/    | /'
	fi
	if LD_LIBRARY_PATH=$LIBDIR timeout 30 "$bin" "$DEAD_URL" >"$LOG" 2>&1; then
		ok "$name: runs and passes its checks"
		sed 's/^/    /' "$LOG"
	else
		notok "$name: runs and passes its checks (exit $?)"
		show_log
	fi
}

# ---- 4. CMake consumer: find_package(supervise 0.1 CONFIG REQUIRED) --------
CB=$TMP/consumer-cmake
if cmake -S "$CONSUMER_SRC" -B "$CB" -DCMAKE_PREFIX_PATH="$PREFIX" \
	-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$LOG" 2>&1 &&
	cmake --build "$CB" >>"$LOG" 2>&1; then
	ok "CMake consumer configures and builds (find_package(supervise 0.1))"
	found=$(sed -n 's/^supervise_DIR:PATH=//p' "$CB/CMakeCache.txt")
	case "$found" in
	"$PREFIX"/*) ok "find_package used the installed package ($found)" ;;
	*) notok "find_package used the installed package (used '$found')" ;;
	esac
	run_consumer "CMake consumer" "$CB/app"
else
	notok "CMake consumer configures and builds (find_package(supervise 0.1))"
	show_log
fi

# ---- 5. pkg-config consumer --------------------------------------------------
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
if flags=$(pkg-config --cflags --libs libsupervise 2>"$LOG"); then
	ok "pkg-config --cflags --libs libsupervise: $flags"
	case " $flags " in
	*" -I$PREFIX/include "*) ok "pkg-config include dir is inside the prefix" ;;
	*) notok "pkg-config include dir is inside the prefix (the .pc names another prefix: $(grep '^prefix=' "$PKG_CONFIG_PATH/libsupervise.pc"))" ;;
	esac
	# shellcheck disable=SC2086  # word splitting of the flags is intended
	if gcc "$CONSUMER_SRC/main.c" -o "$TMP/app-pc" $flags >"$LOG" 2>&1; then
		ok "gcc main.c \$(pkg-config --cflags --libs libsupervise) builds"
		run_consumer "pkg-config consumer" "$TMP/app-pc"
	else
		notok "gcc main.c \$(pkg-config --cflags --libs libsupervise) builds"
		show_log
	fi
	# The C client example of README.md compiles against the install.
	# shellcheck disable=SC2016  # the backquotes are literal
	sed -n '/^```c$/,/^```$/p' "$ROOT/README.md" | sed '1d;$d' >"$TMP/readme.c"
	# shellcheck disable=SC2086
	if [ -s "$TMP/readme.c" ] &&
		gcc -std=c11 -Wall -Wextra -Wpedantic -Werror "$TMP/readme.c" \
			-o "$TMP/readme" $flags >"$LOG" 2>&1; then
		ok "README.md's C example builds with pkg-config (-Wall -Wextra -Werror)"
	else
		notok "README.md's C example builds with pkg-config (-Wall -Wextra -Werror)"
		show_log
	fi
else
	notok "pkg-config --cflags --libs libsupervise"
	show_log
fi
unset PKG_CONFIG_PATH

finish
