# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The header features of perf.data files as a perf shows them (sourced by
# tests/features-host.sh and tests/readers.sh).  $top must be set (the
# tree) and $P61: the perf whose 'report --header-only' is read (perf 6.1
# lists the features it finds missing, up to PMU_CAPS).
: "${top:?}"

# Features perf record may write where we do not, or the other way round,
# "NAME reason" a line; hdr_missing leaves them out of both sides.  Empty:
# on the same machine, for the same recording, the sets are the same.
feat_allowed=(
)

# hdr_missing FILE: the features missing from FILE, one a line
hdr_missing() {
	local a

	$P61 report -i "$1" --header-only 2>/dev/null |
		sed -n 's/^# missing features: //p' | tr ' ' '\n' | grep . | sort |
		while read -r a; do
			printf '%s\n' "${feat_allowed[@]}" | grep -q "^$a " || echo "$a"
		done
}

# hdr_machine FILE: the lines of 'report --header-only -I' that describe
# the machine: all but the file's layout, perf's version and command line,
# the events and sample times; a node's free memory is left out (it changes
# from one recording to the next).
hdr_machine() {
	$P61 report -i "$1" --header-only -I 2>/dev/null |
		grep -vE '^# (captured on|header version|data offset|data size|feat offset|perf version|cmdline|event|time of|sample duration|=+$)|^#$' |
		sed 's/free = [0-9]* kB/free = N kB/'
}

# same_features A B: A and B miss the same features and describe the same
# machine; prints what differs
same_features() {
	local rc=0 tmp_diff

	if [ -z "$(hdr_machine "$1")" ] || [ -z "$(hdr_machine "$2")" ]; then
		echo "# no header to compare in $1 or $2"
		return 1
	fi
	tmp_diff=$(mktemp)

	if ! diff <(hdr_missing "$1") <(hdr_missing "$2") >"$tmp_diff"; then
		echo "# missing features differ ($(basename "$1") <, $(basename "$2") >):"
		sed 's/^/#   /' "$tmp_diff"
		rc=1
	fi
	if ! diff <(hdr_machine "$1") <(hdr_machine "$2") >"$tmp_diff"; then
		echo "# the machine's description differs ($(basename "$1") <, $(basename "$2") >):"
		sed 's/^/#   /' "$tmp_diff" | head -n 20
		rc=1
	fi
	rm -f "$tmp_diff"
	return $rc
}

# no_proc_reads PERF-VERSION FILE [ARGS...]: report --header-only, script
# and report --stdio of FILE by that perf with /proc not mounted
# (scripts/perf --no-proc) all exit 0; prints each exit code.  With
# script_as_proc=1, script need only exit as it does with /proc mounted:
# perf < 6.19 cannot script the deferred form (CALLCHAIN_DEFERRED records)
# however it runs.
no_proc_reads() {
	local v=$1 f=$2 rc=0 r1 r2 r3 want=0 err

	shift 2
	err=$(mktemp)
	"$top/scripts/perf" --no-proc "$v" report -i "$f" --header-only >/dev/null 2>"$err"
	r1=$?
	"$top/scripts/perf" --no-proc "$v" script -i "$f" "$@" >/dev/null 2>>"$err"
	r2=$?
	"$top/scripts/perf" --no-proc "$v" report -i "$f" --stdio "$@" >/dev/null 2>>"$err"
	r3=$?
	if [ "${script_as_proc:-0}" = 1 ]; then
		"$top/scripts/perf" "$v" script -i "$f" "$@" >/dev/null 2>&1
		want=$?
	fi
	echo "# perf $v without /proc, $(basename "$f"): header-only $r1, script $r2 (wanted $want), report $r3"
	[ $r1 = 0 ] && [ $r2 = $want ] && [ $r3 = 0 ] || rc=1
	grep -i "segmentation" "$err" | sed 's/^/#   /'
	rm -f "$err"
	return $rc
}
