#!/usr/bin/env bash
# lint.sh — the project's static checks: clang-format (--check), cppcheck and
# clang-tidy over the library, daemon, CLI and examples; any finding of any
# of the three fails it. Needs a configured build/ (for
# compile_commands.json and the generated protobuf headers).
#   bash scripts/lint.sh          check, exit 1 on findings
#   bash scripts/lint.sh --fix    reformat in place first
set -uo pipefail
cd "$(dirname "$0")/.."
[ -f build/compile_commands.json ] ||
	cmake -S . -B build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build build --target sv_proto >/dev/null

mapfile -t SRC < <(git ls-files 'libsupervise/*.[ch]' 'daemon/*.[ch]' \
	'cli/*.[ch]' 'examples/*.c' 'bench/*.[ch]' 'tests/*.c' 'tests/cli/*.c')
rc=0
if [ "${1:-}" = --fix ]; then
	clang-format -i "${SRC[@]}"
fi
echo "== clang-format"
clang-format --dry-run --Werror "${SRC[@]}" 2>&1 | grep -m 20 -E 'warning|error' || true
clang-format --dry-run --Werror "${SRC[@]}" >/dev/null 2>&1 || rc=1

echo "== cppcheck"
cppcheck --enable=warning,performance,portability --quiet --error-exitcode=1 \
	--inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE \
	-DPROTOBUF_C_VERSION_NUMBER=1004001 \
	-DPROTOBUF_C_MIN_COMPILER_VERSION=1000000 -D__GNUC__ \
	-I libsupervise/include -I libsupervise/src -I build/gen \
	libsupervise/src daemon cli examples || rc=1

echo "== clang-tidy"
CHECKS='-*,bugprone-*,clang-analyzer-*,-bugprone-easily-swappable-parameters'
CHECKS+=',-bugprone-reserved-identifier,-bugprone-narrowing-conversions'
CHECKS+=',-bugprone-assignment-in-if-condition,-bugprone-implicit-widening-of-multiplication-result'
CHECKS+=',-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling'
CHECKS+=',-clang-analyzer-valist.Uninitialized'
mapfile -t TIDY < <(git ls-files 'libsupervise/src/*.c' 'daemon/*.c' 'cli/*.c')
tidy=$(clang-tidy -p build --quiet -checks="$CHECKS" "${TIDY[@]}" 2>/dev/null |
	grep -E "warning:|error:")
if [ -n "$tidy" ]; then
	printf '%s\n' "$tidy"
	rc=1
fi
echo "lint.sh: $([ $rc -eq 0 ] && echo clean || echo findings)"
exit $rc
