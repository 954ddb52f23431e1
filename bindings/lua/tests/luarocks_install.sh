#!/bin/sh
# luarocks_install.sh — install the Lua binding the LuaRocks way, against a
# built libsupervise, into a scratch tree, and use it from there.
#
# Usage: bindings/lua/tests/luarocks_install.sh BUILD_DIR [LIB_DIR]
#   BUILD_DIR  a configured CMake build (for the record in messages)
#   LIB_DIR    the directory holding libsupervise.so (default BUILD_DIR)
#
# Steps, each a numbered check:
#   1. `luarocks --lua-version=5.4 make --deps-mode=none --tree TMP/tree`
#      of supervise-scm-1.rockspec in a copy of bindings/lua (luarocks builds
#      in the current directory; the source tree is left alone), with
#      SUPERVISE_INCDIR/SUPERVISE_LIBDIR naming the headers and the build.
#      Proxies point at a closed local port, so any attempt to reach a rocks
#      server fails the step.
#   2. luarocks lists supervise scm-1 in the tree; the module is there and
#      records the library directory as its run path; its Lua parts are in
#      share/lua/5.4/supervise/
#   3. a smoke check with LUA_CPATH and LUA_PATH pointing only into the tree
#      (what `luarocks path` gives): the module and its Lua parts load from
#      there, it reports the linked library's version, names error codes,
#      gives ENOTWORKER outside a worker and ECONNECT where nobody listens
#   4. with the tree's Lua parts off LUA_PATH, require fails and names the
#      missing part (a module without its Lua part is never half-loaded)
# Prints "luarocks_install: N passed, M failed"; exits 1 when M > 0.
set -u

HERE=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${1:?usage: luarocks_install.sh BUILD_DIR [LIB_DIR]}
LIBDIR=${2:-$BUILD}
LUA=${SV_LUA:-lua5.4}

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $((pass + fail)) - $*"; }
notok() { fail=$((fail + 1)); echo "FAIL $((pass + fail)) - $*"; }
finish() {
	echo "luarocks_install: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit $?
}

if [ ! -e "$LIBDIR/libsupervise.so" ]; then
	notok "no libsupervise.so in '$LIBDIR' (build '$BUILD' first)"
	finish
fi
LIBDIR=$(cd "$LIBDIR" && pwd)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sv-lua-rocks.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
LOG=$TMP/log
show_log() { sed 's/^/    | /' "$LOG" | tail -n 40; }

# ---- 1. luarocks make ---------------------------------------------------------
mkdir -p "$TMP/src" "$TMP/home"
cp -R "$HERE/src" "$HERE/lua" "$HERE/supervise-scm-1.rockspec" "$TMP/src/"
if (cd "$TMP/src" &&
	HOME=$TMP/home http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 \
		luarocks --lua-version=5.4 make --deps-mode=none --tree "$TMP/tree" \
		supervise-scm-1.rockspec \
		SUPERVISE_INCDIR="$ROOT/libsupervise/include" \
		SUPERVISE_LIBDIR="$LIBDIR") >"$LOG" 2>&1; then
	ok "luarocks make --deps-mode=none into a scratch tree"
else
	notok "luarocks make failed"
	show_log
	finish
fi

# ---- 2. what was installed ----------------------------------------------------
MOD=$TMP/tree/lib/lua/5.4/supervise.so
if HOME=$TMP/home luarocks --lua-version=5.4 --tree "$TMP/tree" list --porcelain \
	>"$LOG" 2>&1 && grep -q "^supervise	scm-1	installed" "$LOG"; then
	ok "luarocks lists supervise scm-1 as installed"
else
	notok "supervise scm-1 not listed in the tree"
	show_log
fi
if [ -f "$MOD" ] && readelf -d "$MOD" 2>/dev/null | grep -q "R.*PATH.*$LIBDIR"; then
	ok "module at lib/lua/5.4/supervise.so with run path $LIBDIR"
else
	notok "module missing or without a run path to $LIBDIR"
fi
if [ -f "$TMP/tree/share/lua/5.4/supervise/leases.lua" ] &&
	[ -f "$TMP/tree/share/lua/5.4/supervise/drain.lua" ] &&
	[ -f "$TMP/tree/share/lua/5.4/supervise/enums.lua" ]; then
	ok "Lua parts at share/lua/5.4/supervise/{leases,drain,enums}.lua"
else
	notok "Lua parts missing from share/lua/5.4/supervise/"
	find "$TMP/tree" -name '*.lua' | sed 's/^/    | /'
fi

# ---- 3. smoke check from the tree -----------------------------------------------
mkdir -p "$TMP/nobody"
if env -u SUPERVISE_URL TREE="$TMP/tree" DEAD="$TMP/nobody" \
	WANT_VERSION="$(sed -n 's/^#define SV_VERSION_STRING *"\(.*\)"/\1/p' \
		"$ROOT/libsupervise/include/supervise/supervise.h")" \
	LUA_CPATH="$TMP/tree/lib/lua/5.4/?.so" \
	LUA_PATH="$TMP/tree/share/lua/5.4/?.lua" \
	"$LUA" -e '
local sv = require "supervise"
local where = package.searchpath("supervise", package.cpath)
assert(where:find(os.getenv("TREE"), 1, true) == 1, "loaded from " .. tostring(where))
for _, f in ipairs { sv.with_lease, sv.drain_watch } do
  local src = debug.getinfo(f, "S").source
  assert(src:find("@" .. os.getenv("TREE") .. "/share/lua/5.4/supervise/", 1, true) == 1,
    "Lua part loaded from " .. src)
end
assert(sv.version() == os.getenv("WANT_VERSION"), "version " .. sv.version())
assert(sv.err_name(4) == "ENOTFOUND" and sv.ENOTFOUND == 4)
local id, err = sv.whoami(0)
assert(id == nil and err.name == "ENOTWORKER", tostring(err))
local c, cerr = sv.open("ipc://" .. os.getenv("DEAD") .. "/control.sock", 0)
assert(c == nil and cerr.code == sv.ECONNECT, tostring(cerr))
print("smoke: " .. sv._VERSION .. " on libsupervise " .. sv.version() .. " from " .. where)
' >"$LOG" 2>&1 </dev/null; then
	ok "smoke check with LUA_CPATH and LUA_PATH into the tree: $(tail -n 1 "$LOG")"
else
	notok "smoke check failed"
	show_log
fi

# ---- 4. a missing Lua part fails the require ------------------------------------
if env LUA_CPATH="$TMP/tree/lib/lua/5.4/?.so" LUA_PATH="$TMP/nobody/?.lua" \
	"$LUA" -e 'require "supervise"' >"$LOG" 2>&1 </dev/null; then
	notok "require succeeded without the Lua parts on LUA_PATH"
elif grep -q "cannot find its Lua part supervise.leases" "$LOG"; then
	ok "without its Lua parts, require fails naming supervise.leases"
else
	notok "require failed, but not naming the missing Lua part"
	show_log
fi
finish
