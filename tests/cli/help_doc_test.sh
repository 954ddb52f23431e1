#!/usr/bin/env bash
# help_doc_test.sh — supervisectl's --help (printed from its command table)
# and the SYNOPSIS of docs/supervisectl.md name the same commands.
#
#   help_doc_test.sh SUPERVISECTL DOC
#
# Design: the command table in cli/supervisectl.c is the one place a
# command is written; --help is printed from it. This test takes the
# command names from --help (every line of a command section that starts
# with two spaces and a lower-case word) and from the doc's SYNOPSIS block
# (lines `supervisectl NAME ...`), and fails when one list has a name the
# other lacks. Last line: `help_doc_test: N passed, M failed`.
set -euo pipefail
if [[ $# -ne 2 ]]; then
	echo "usage: $0 SUPERVISECTL DOC" >&2
	exit 2
fi
CTL=$1
DOC=$2
pass=0
fail=0

help_names=$("$CTL" --help | awk '/^Options/ { done = 1 } !done && /^  [a-z]/ { print $1 }' | sort -u)
doc_names=$(awk '/^## SYNOPSIS/ { on = 1 } /^## DESCRIPTION/ { on = 0 }
	on && /^supervisectl [a-z]/ { print $2 }' "$DOC" | sort -u)
if [[ $(wc -w <<<"$help_names") -lt 20 ]]; then
	echo "FAIL: only $(wc -w <<<"$help_names") commands in --help" >&2
	fail=$((fail + 1))
fi
for n in $help_names; do
	if grep -qx -- "$n" <<<"$doc_names"; then
		pass=$((pass + 1))
	else
		echo "FAIL: '$n' is in --help but not in the SYNOPSIS of $DOC" >&2
		fail=$((fail + 1))
	fi
done
for n in $doc_names; do
	if ! grep -qx -- "$n" <<<"$help_names"; then
		echo "FAIL: '$n' is in the SYNOPSIS of $DOC but not in --help" >&2
		fail=$((fail + 1))
	fi
done
echo "help_doc_test: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
