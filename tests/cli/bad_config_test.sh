#!/usr/bin/env bash
# bad_config_test.sh — every kind of bad input to both programs is refused
# with one line, the right exit status, and nothing left behind.
#
#   bad_config_test.sh SUPERVISED SUPERVISECTL CONFIG_KEYS_DEF
#
# Design: the cases are data. Most of them come from the daemon's own key
# table (libsupervise/src/config_keys.def, the one place a config key is
# written): for every group key and every pool key a value of the wrong
# type, for every int key with a numeric range a value below it, and for
# every top-level key a value of the wrong type; so a key added to the table is tested here without a new
# line in this file. The rest are written out below: unknown and duplicated
# keys, syntax errors, pools that name what does not exist, bad path
# templates, users that do not exist, options that conflict.
#
# For each bad file the daemon runs twice, as `supervised --check -c FILE`
# and as `supervised -f -c FILE` (a real start), each bounded by `timeout`.
# Both must exit 2 and write exactly one line to stderr (nothing to stdout on
# a start), of the form `supervised: FILE:LINE: KEY...` naming the key the
# case is about. After the start attempt nothing may be left: the socket
# directory named in the file must not exist (no socket, pid file, lock or
# journal) and no process may run whose command line names this test's
# temporary directory. Bad command lines of both programs must exit 100 with
# exactly one line on stderr that names the bad option or command.
#
# The last line is always `bad_config_test: N passed, M failed`; the exit
# status is non-zero when M > 0. Nothing here sleeps: each run is a child
# process waited for, bounded by timeout(1).
set -euo pipefail

if [[ $# -ne 3 ]]; then
	echo "usage: $0 SUPERVISED SUPERVISECTL CONFIG_KEYS_DEF" >&2
	exit 2
fi
SUPERVISED=$1
CTL=$2
KEYS_DEF=$3
for f in "$SUPERVISED" "$CTL"; do
	[[ -x $f ]] || {
		echo "bad_config_test: $f is not executable" >&2
		exit 2
	}
done
[[ -r $KEYS_DEF ]] || {
	echo "bad_config_test: cannot read $KEYS_DEF" >&2
	exit 2
}

unset SUPERVISE_URL SUPERVISE_GROUP SUPERVISE_ORDINAL SUPERVISE_GENERATION \
	SUPERVISE_PURPOSE SUPERVISE_SUPERVISOR_ID XDG_RUNTIME_DIR

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bad_config_test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
n=0

# ok / bad record one result.
ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*" >&2
}

# line_count FILE prints how many lines FILE has (a last line without a
# newline counts).
line_count() {
	awk 'END { print NR }' "$1"
}

# leftovers DIR prints what a refused start left: DIR itself, and any
# process whose command line names this test's directory.
leftovers() {
	local dir=$1
	[[ -e $dir ]] && echo "left $dir: $(ls -A "$dir" 2>/dev/null | tr '\n' ' ')"
	pgrep -a -f -- "$tmp/" || true
}

# check_config NAME KEY TEXT [noline] writes TEXT (with @RUN@ replaced by a
# fresh socket directory) to a file and checks both runs of the daemon on it.
# KEY must follow the line number, and be followed by ':', ' ', '.' or '['
# (a key's own part: groups[0].sockets[0].path names groups[0].sockets).
# With "noline" the error is about something absent from the file, which
# has no line: `supervised: FILE: KEY...`.
check_config() {
	local name=$1 key=$2 text=$3 noline=${4:-}
	n=$((n + 1))
	local file="$tmp/c$n.conf" run="$tmp/run$n" mode rc out err line want
	printf '%s\n' "${text//@RUN@/$run}" >"$file"
	for mode in --check --foreground; do
		out="$tmp/out" err="$tmp/err"
		rc=0
		timeout 10 "$SUPERVISED" "$mode" -c "$file" >"$out" 2>"$err" || rc=$?
		want="supervised: $file:"
		line=$(head -n 1 "$err")
		if [[ $rc -ne 2 ]]; then
			bad "$name ($mode): exit $rc, want 2: $(head -c 300 "$err")"
		elif [[ $(line_count "$err") -ne 1 ]]; then
			bad "$name ($mode): $(line_count "$err") lines on stderr, want 1:" \
				"$(head -c 400 "$err")"
		elif [[ $mode == --foreground && -s $out ]]; then
			bad "$name ($mode): wrote to stdout: $(head -c 200 "$out")"
		elif [[ $line != "$want"* ]]; then
			bad "$name ($mode): line does not name the file: $line"
		elif [[ -z $noline ]] && ! [[ ${line#"$want"} =~ ^[0-9]+:\ (.*)$ ]]; then
			bad "$name ($mode): no line number: $line"
		elif [[ -n $noline ]] && ! [[ ${line#"$want"} =~ ^\ (.*)$ ]]; then
			bad "$name ($mode): not FILE: KEY: $line"
		elif [[ ${BASH_REMATCH[1]} != "$key"[:\ .[]* ]]; then
			bad "$name ($mode): does not name key '$key': $line"
		else
			ok
		fi
	done
	local left
	left=$(leftovers "$run")
	if [[ -n $left ]]; then
		bad "$name: a refused start left: $left"
		rm -rf "$run"
	else
		ok
	fi
}

# ---- cases from the key table ------------------------------------------------

# A valid group without KEY, for a case to add KEY's bad value to.
group_without() {
	local skip=$1 s=""
	[[ $skip == name ]] || s+='name = "w"; '
	[[ $skip == argv ]] || s+='argv = ["/bin/sleep", "1000"]; '
	[[ $skip == count ]] || s+='count = 1; '
	[[ $skip == purpose ]] || s+='purpose = "t"; '
	printf '%s' "$s"
}

# A valid pool entry without KEY, likewise.
pool_without() {
	local skip=$1 s=""
	[[ $skip == name ]] || s+='name = "p"; '
	[[ $skip == slots ]] || s+='slots = 2; '
	printf '%s' "$s"
}

# wrong_value TYPE prints a libconfig value that is not of TYPE.
wrong_value() {
	case $1 in
	int | number) echo '"many"' ;;
	bool) echo '"yes"' ;;
	"string or int") echo 'true' ;;
	list | "list of groups" | "list of pools") echo '7' ;;
	*) echo '7' ;; # strings and arrays of strings
	esac
}

# The rows of the key table, one per line: KIND NAME TYPE LO (macro calls
# may span lines; join them first).
rows=$(tr '\n' ' ' <"$KEYS_DEF" | grep -oE 'SV_(GROUP|TOP|POOL)_KEY\([a-z_]+, "[^"]*"(, [A-Za-z0-9_]+)?' |
	sed -E 's/^SV_(GROUP|TOP|POOL)_KEY\(([a-z_]+), "([^"]*)"(, ([A-Za-z0-9_]+))?$/\1|\2|\3|\5/')
[[ $(wc -l <<<"$rows") -ge 30 ]] || {
	echo "bad_config_test: read only $(wc -l <<<"$rows") rows from $KEYS_DEF" >&2
	exit 1
}
table_cases=0
while IFS='|' read -r kind key type lo; do
	v=$(wrong_value "$type")
	if [[ $kind == GROUP ]]; then
		check_config "group key $key: wrong type" "groups[0].$key" \
			"socket_dir = \"@RUN@\";
groups = ( { $(group_without "$key") $key = $v; } );"
		table_cases=$((table_cases + 1))
		if [[ $type == int && $lo =~ ^[0-9]+$ ]]; then
			check_config "group key $key: below its range" "groups[0].$key" \
				"socket_dir = \"@RUN@\";
groups = ( { $(group_without "$key") $key = $((lo - 1)); } );"
			table_cases=$((table_cases + 1))
		fi
	elif [[ $kind == POOL ]]; then
		check_config "pool key $key: wrong type" "pools[0].$key" \
			"socket_dir = \"@RUN@\";
groups = ( { $(group_without none) } );
pools = ( { $(pool_without "$key") $key = $v; } );"
		table_cases=$((table_cases + 1))
		if [[ $type == int && $lo =~ ^[0-9]+$ ]]; then
			check_config "pool key $key: below its range" "pools[0].$key" \
				"socket_dir = \"@RUN@\";
groups = ( { $(group_without none) } );
pools = ( { $(pool_without "$key") $key = $((lo - 1)); } );"
			table_cases=$((table_cases + 1))
		fi
	elif [[ $key == socket_dir ]]; then
		check_config "top key $key: wrong type" "$key" \
			"socket_dir = $v;
state_dir = \"@RUN@\";
groups = ( { $(group_without none) } );"
		table_cases=$((table_cases + 1))
	elif [[ $key != groups ]]; then
		check_config "top key $key: wrong type" "$key" \
			"socket_dir = \"@RUN@\";
$key = $v;
groups = ( { $(group_without none) } );"
		table_cases=$((table_cases + 1))
	fi
done <<<"$rows"

# ---- cases written out -------------------------------------------------------

G='name = "w"; argv = ["/bin/sleep", "1000"]; count = 1; purpose = "t";'
H='socket_dir = "@RUN@";'

# check_group NAME KEY BODY checks a config of the one group { BODY }.
check_group() {
	check_config "$1" "$2" "$H
groups = ( { $3 } );"
}

# check_pool NAME KEY POOLS checks a config of the group { $G } and the
# pool list ( POOLS ).
check_pool() {
	check_config "$1" "$2" "$H
groups = ( { $G } );
pools = ( $3 );"
}

check_config "unknown top-level key" "colour" "$H
colour = \"red\";
groups = ( { $G } );"
check_group "unknown group key" "groups[0].colour" "$G colour = \"red\";"
check_group "misspelt group key" "groups[0].max_restart" "$G max_restart = 3;"
check_group "duplicated group key" "syntax error" "$G count = 2;"
check_config "duplicated top-level key" "syntax error" "$H
stop_timeout_ms = 10;
stop_timeout_ms = 20;
groups = ( { $G } );"
check_group "value missing" "syntax error" "name = \"w\"; argv = [\"/bin/true\"]; count = ; purpose = \"t\";"
check_group "unterminated string" "syntax error" "name = \"w;"
check_config "no groups" "groups" "$H" noline
check_config "empty group list" "groups" "$H
groups = ( );"
check_group "group without argv" "groups[0].argv" "name = \"w\"; count = 1; purpose = \"t\";"
check_group "group without purpose" "groups[0].purpose" "name = \"w\"; argv = [\"/bin/true\"]; count = 1;"
check_group "empty purpose" "groups[0].purpose" "name = \"w\"; argv = [\"/bin/true\"]; count = 1; purpose = \"\";"
check_group "empty argv" "groups[0].argv" "name = \"w\"; argv = [ ]; count = 1; purpose = \"t\";"
check_group "argv of numbers" "groups[0].argv" "name = \"w\"; argv = [ 1, 2 ]; count = 1; purpose = \"t\";"
check_group "program that does not exist" "groups[0].argv" "name = \"w\"; argv = [\"/nonexistent/prog\"]; count = 1; purpose = \"t\";"
printf 'not a program\n' >"$tmp/notexec"
chmod 0644 "$tmp/notexec"
check_group "program not executable" "groups[0].argv" "name = \"w\"; argv = [\"$tmp/notexec\"]; count = 1; purpose = \"t\";"
check_group "program not in PATH" "groups[0].argv" "name = \"w\"; argv = [\"no-such-program-anywhere\"]; count = 1; purpose = \"t\";"
check_group "group name with a slash" "groups[0].name" "name = \"a/b\"; argv = [\"/bin/true\"]; count = 1; purpose = \"t\";"
check_group "group name too long" "groups[0].name" "name = \"$(printf 'n%.0s' $(seq 65))\"; argv = [\"/bin/true\"]; count = 1; purpose = \"t\";"
check_config "two groups with one name" "groups[1].name" "$H
groups = ( { $G }, { $G } );"
check_group "count above max_count" "groups[0].count" "name = \"w\"; argv = [\"/bin/true\"]; count = 5; max_count = 2; purpose = \"t\";"
check_group "count far above the limit" "groups[0].count" "name = \"w\"; argv = [\"/bin/true\"]; count = 1000000; purpose = \"t\";"
check_group "env entry without =" "groups[0].env" "$G env = [\"NOEQUALS\"];"
check_group "env sets a reserved name" "groups[0].env" "$G env = [\"SUPERVISE_ORDINAL=7\"];"
check_group "cwd that does not exist" "groups[0].cwd" "$G cwd = \"/nonexistent/dir\";"
check_group "cwd relative" "groups[0].cwd" "$G cwd = \"relative/dir\";"
check_group "unknown restart type" "groups[0].restart" "$G restart = \"sometimes\";"
check_group "unknown stop signal" "groups[0].stop_signal" "$G stop_signal = \"SIGBOGUS\";"
check_group "unknown drain signal" "groups[0].drain_signal" "$G drain_signal = \"BOGUS\";"
check_group "backoff factor below 1" "groups[0].backoff_factor" "$G backoff_factor = 0.5;"
check_group "backoff factor above 16" "groups[0].backoff_factor" "$G backoff_factor = 17.0;"
check_group "max_seconds above a day" "groups[0].max_seconds" "$G max_seconds = 86401;"
check_group "unknown notify_access" "groups[0].notify_access" "$G notify_access = \"some\";"
check_group "unknown on_start_timeout" "groups[0].on_start_timeout" "$G on_start_timeout = \"retry\";"
check_group "unknown on_unresponsive" "groups[0].on_unresponsive" "$G on_unresponsive = \"ignore\";"
check_group "user that does not exist" "groups[0].user" "$G user = \"no-such-user-here\";"
check_group "group that does not exist" "groups[0].group" "$G user = \"root\"; group = \"no-such-group-here\";"
check_group "group without user" "groups[0].group" "$G group = \"root\";"
check_group "socket without a path" "groups[0].sockets" "$G sockets = ( { name = \"jobs\"; } );"
check_group "socket with a relative path" "groups[0].sockets" "$G sockets = ( { name = \"jobs\"; path = \"jobs.sock\"; } );"
check_group "socket of an unknown type" "groups[0].sockets" "$G sockets = ( { name = \"jobs\"; path = \"$tmp/j.sock\"; type = \"raw\"; } );"
check_group "socket with a bad mode" "groups[0].sockets" "$G sockets = ( { name = \"jobs\"; path = \"$tmp/j.sock\"; mode = \"0999\"; } );"
check_config "unknown strategy" "strategy" "$H
strategy = \"all_for_none\";
groups = ( { $G } );"
check_config "relative socket_dir" "socket_dir" "socket_dir = \"relative/run\";
groups = ( { $G } );"
check_config "relative state_dir" "state_dir" "$H
state_dir = \"relative/state\";
groups = ( { $G } );"
check_config "negative stop timeout" "stop_timeout_ms" "$H
stop_timeout_ms = -5;
groups = ( { $G } );"
check_pool "pool without slots" "pools[0].slots" "{ name = \"p\"; }"
check_pool "pool with zero slots" "pools[0].slots" "{ name = \"p\"; slots = 0; }"
check_pool "pool with an unknown key" "pools[0].size" "{ name = \"p\"; slots = 2; size = 4; }"
check_pool "two pools with one name" "pools[1].name" "{ name = \"p\"; slots = 1; }, { name = \"p\"; slots = 1; }"
check_pool "pool path without {slot}" "pools[0].path" "{ name = \"p\"; slots = 2; path = \"$tmp/slots/file.db\"; }"
check_pool "pool path relative" "pools[0].path" "{ name = \"p\"; slots = 2; path = \"slots/{slot}.db\"; }"
check_pool "pool path with .." "pools[0].path" "{ name = \"p\"; slots = 2; path = \"$tmp/a/../{slot}.db\"; }"
check_pool "pool path {slot} not in the last component" "pools[0].path" "{ name = \"p\"; slots = 2; path = \"$tmp/{slot}/x.db\"; }"
# A pool under a directory a symbolic link or another user could redirect.
mkdir "$tmp/plink-target" "$tmp/popen"
ln -s "$tmp/plink-target" "$tmp/plink"
chmod 0777 "$tmp/popen"
check_pool "pool path under a symbolic link" "pools[0].path" "{ name = \"p\"; slots = 2; path = \"$tmp/plink/{slot}.db\"; }"
check_pool "pool path under a world-writable directory" "pools[1].path" "{ name = \"q\"; slots = 1; },
          { name = \"p\"; slots = 2; path = \"$tmp/popen/x/{slot}.db\"; }"
check_pool "pool on_release unknown" "pools[0].on_release" "{ name = \"p\"; slots = 2; on_release = \"shred\"; }"
check_pool "pool kind unknown" "pools[0].kind" "{ name = \"p\"; slots = 2; kind = \"fifo\"; }"
check_pool "pool ttl above a day" "pools[0].ttl_ms" "{ name = \"p\"; slots = 2; ttl_ms = 86400001; }"
check_pool "pool entry not a group" "pools[0]" "5"

# ---- bad command lines -------------------------------------------------------

# check_usage NAME WORD PROGRAM ARGS... runs PROGRAM with ARGS: exit 100 and
# exactly one line on stderr that contains WORD.
check_usage() {
	local name=$1 word=$2 rc=0
	shift 2
	timeout 10 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	if [[ $rc -ne 100 ]]; then
		bad "$name: exit $rc, want 100: $(head -c 300 "$tmp/err")"
	elif [[ $(line_count "$tmp/err") -ne 1 ]]; then
		bad "$name: $(line_count "$tmp/err") lines on stderr, want 1: $(head -c 300 "$tmp/err")"
	elif ! grep -qF -- "$word" "$tmp/err"; then
		bad "$name: does not name '$word': $(cat "$tmp/err")"
	else
		ok
	fi
}

check_usage "supervised unknown option" "--bogus" "$SUPERVISED" --bogus
check_usage "supervised without --config" "--config" "$SUPERVISED"
check_usage "supervised --config without a file" "--config" "$SUPERVISED" --config
check_usage "supervised stray argument" "stray" "$SUPERVISED" -c /dev/null stray
check_usage "supervised --check and --foreground" "--check" \
	"$SUPERVISED" --check --foreground -c /dev/null
check_usage "supervisectl unknown option" "--bogus" "$CTL" --bogus
check_usage "supervisectl unknown command" "nosuchcmd" "$CTL" nosuchcmd
check_usage "supervisectl scale without arguments" "scale" "$CTL" scale
check_usage "supervisectl scale with a bad count" "scale" "$CTL" scale w minus
check_usage "supervisectl -t not a number" "-t" "$CTL" -t soon hello
check_usage "supervisectl -t negative" "-t" "$CTL" -t -5 hello

echo "bad_config_test: $table_cases cases from $KEYS_DEF, $n config files in all"
echo "bad_config_test: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
