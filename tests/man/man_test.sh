#!/usr/bin/env bash
# man_test.sh — the man pages built from docs/man render cleanly and list
# what the programs and the docs list.
#
# Usage: man_test.sh SOURCE_DIR BUILD_DIR SUPERVISED SUPERVISECTL
#
# Checks:
#   1. each page of build/man (supervised.8, supervisectl.1,
#      supervised.conf.5, libsupervise.3) exists, and `man --warnings=w -l`
#      (MANWIDTH=80) and `groff -man -Tutf8 -ww -z` render it with no
#      warning at all, each with its NAME section
#   2. every option `supervised --help` prints is in supervised.8, and so is
#      every exit status of its help
#   3. every option and every command `supervisectl --help` prints, and
#      every --option of a command's synopsis there, is in supervisectl.1
#   4. every key of docs/config.md's key tables is in supervised.conf.5
#   5. every public header (libsupervise/include/supervise) is named in
#      libsupervise.3
# Skipped (exit 77, with the reason) when the build found no pandoc, or
# when man or groff is missing.
set -uo pipefail

if [[ $# -ne 4 ]]; then
	echo "usage: $0 SOURCE_DIR BUILD_DIR SUPERVISED SUPERVISECTL" >&2
	exit 2
fi
SRC=$1
BUILD=$2
SUPERVISED=$3
CTL=$4
# shellcheck source=tests/cli/lib.sh
source "$SRC/tests/cli/lib.sh"

if ! grep -q '^SV_PANDOC:FILEPATH=/' "$BUILD/CMakeCache.txt"; then
	echo "man_test: skipped: the build found no pandoc, so it made no man pages (scripts/install-deps.sh installs it)"
	exit 77
fi
for tool in man groff; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "man_test: skipped: $tool not found (Debian packages man-db, groff-base)"
		exit 77
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sv-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
PAGES=(supervised.8 supervisectl.1 supervised.conf.5 libsupervise.3)

# ---- 1. rendering -----------------------------------------------------------
for p in "${PAGES[@]}"; do
	f=$BUILD/man/$p
	if [[ ! -s $f ]]; then
		bad "$p: built ($f missing or empty)"
		continue
	fi
	MANWIDTH=80 man --warnings=w -E UTF-8 -l "$f" >"$tmp/$p.txt" 2>"$tmp/$p.err"
	rc=$?
	if [[ $rc -eq 0 && ! -s $tmp/$p.err ]]; then
		ok "$p: man --warnings=w -l renders it without a warning ($(wc -l <"$tmp/$p.txt") lines)"
	else
		bad "$p: man --warnings=w -l (exit $rc): $(head -n 5 "$tmp/$p.err")"
	fi
	if groff -man -Tutf8 -ww -z "$f" 2>"$tmp/$p.groff" && [[ ! -s $tmp/$p.groff ]]; then
		ok "$p: groff -man -ww -z: no warning"
	else
		bad "$p: groff -man -ww -z: $(head -n 5 "$tmp/$p.groff")"
	fi
	if grep -q '^NAME$' "$tmp/$p.txt"; then
		ok "$p: has a NAME section"
	else
		bad "$p: has a NAME section"
	fi
done

# in_page PAGE WHAT WORD...: every WORD appears in the rendered PAGE (as a
# word: not followed or preceded by another name character).
in_page() {
	local page=$1 what=$2 w missing=()
	shift 2
	for w in "$@"; do
		# A whole word ("-" is part of one here); the words checked are
		# of [A-Za-z0-9_./-], so "." is the only character to escape.
		grep -qE -- "(^|[^A-Za-z0-9_-])${w//./\\.}([^A-Za-z0-9_-]|$)" \
			"$tmp/$page.txt" || missing+=("$w")
	done
	if [[ $# -eq 0 ]]; then
		bad "$page: $what: the list to check is empty"
	elif [[ ${#missing[@]} -eq 0 ]]; then
		ok "$page: $what ($#) all there"
	else
		bad "$page: $what missing: ${missing[*]}"
	fi
}

# ---- 2. supervised(8) -------------------------------------------------------
mapfile -t opts < <("$SUPERVISED" --help | grep -oE '^  +-[A-Za-z](, --[a-z-]+)?' | grep -oE -- '-[-A-Za-z]+' | sort -u)
in_page supervised.8 "options of supervised --help" "${opts[@]}"
mapfile -t codes < <("$SUPERVISED" --help | sed -n '/^Exit status/,$p' | grep -oE '[0-9]+' | sort -u)
in_page supervised.8 "exit statuses of supervised --help" "${codes[@]}"

# ---- 3. supervisectl(1) -----------------------------------------------------
help=$("$CTL" --help)
mapfile -t opts < <(sed -n '/^Options/,/^$/p' <<<"$help" | grep -oE -- '(^|[ ,])-(-[a-z-]+|[A-Za-z])' | grep -oE -- '-[-A-Za-z]+' | sort -u)
in_page supervisectl.1 "global options of supervisectl --help" "${opts[@]}"
mapfile -t cmds < <(sed -n '/^Options/q; s/^  \([a-z][a-z-]*\).*/\1/p' <<<"$help" | sort -u)
in_page supervisectl.1 "commands of supervisectl --help" "${cmds[@]}"
# The synopses: command lines and their continuations, without the
# description column.
mapfile -t copts < <(sed -n '/^Options/q; /^  [a-z]/p; /^        [^ ]/p' <<<"$help" |
	sed -E 's/^ +//; s/  +.*//' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
in_page supervisectl.1 "command options of supervisectl --help" "${copts[@]}"
mapfile -t codes < <(sed -n '/^Exit status/,$p' <<<"$help" | grep -oE '^  [0-9]+' | tr -d ' ')
in_page supervisectl.1 "exit statuses of supervisectl --help" "${codes[@]}"

# ---- 4. supervised.conf(5) --------------------------------------------------
# The first cell of each row of docs/config.md's key tables ("| `key` |").
# shellcheck disable=SC2016  # the backquotes are literal
mapfile -t keys < <(sed -nE 's/^\| `([a-z_]+)` \|.*/\1/p' "$SRC/docs/config.md" | sort -u)
in_page supervised.conf.5 "keys of docs/config.md's tables" "${keys[@]}"

# ---- 5. libsupervise(3) -----------------------------------------------------
mapfile -t hdrs < <(cd "$SRC/libsupervise/include" && ls supervise/*.h)
in_page libsupervise.3 "public headers" "${hdrs[@]}"

finish man_test
