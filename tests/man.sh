#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# man.sh: the man pages (docs/man/*.scd, built by 'make man' with scdoc)
# against the recorder: each page renders without a warning (groff -ww),
# and for perf-defer and each of its commands, every option --help lists
# is in the man page's OPTIONS, and every option there is in --help.  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

pdf=${PERF_DEFER:-$top/recorder/perf-defer}
man=$top/build/man
cmds=(record perf status stitch dump)
pages=("$top"/docs/man/*.scd)
tap_plan $((1 + ${#pages[@]} + 1 + ${#cmds[@]}))

make -s -C "$top" man >/tmp/pd-man.log 2>&1
ok $? "make man"
sed 's/^/# /' /tmp/pd-man.log

for src in "${pages[@]}"; do
	page=$(basename "$src" .scd)
	# -ww: every warning; -z: no output, only the diagnostics
	out=$(groff -man -ww -z -t "$man/$page" 2>&1)
	echo "${out:+# $page: }${out//$'\n'/$'\n'# }" | grep -v '^$'
	[ -s "$man/$page" ] && [ -z "$out" ]
	ok $? "$page renders without a warning"
done

# help_opts CMD...: the options the --help of 'perf-defer CMD' lists, one a line
help_opts() {
	"$pdf" "$@" --help 2>&1 |
		grep -oE '^ {2,}(-[A-Za-z], )?--?[A-Za-z][A-Za-z-]*' | tr -d ' ' | tr ',' '\n' | sort -u
}
# man_opts PAGE: the options of the OPTIONS section of PAGE's source
man_opts() {
	awk '/^# / { in_opts = ($0 == "# OPTIONS"); next } in_opts && /^\*-/' \
		"$top/docs/man/$1.scd" | grep -oE '\*--?[A-Za-z][A-Za-z-]*\*' | tr -d '*' | sort -u
}

# compare WHAT HELP MAN: the two lists equal, or the difference shown
compare() {
	if [ -n "$2" ] && [ "$2" = "$3" ]; then
		ok 0 "$1: the options of --help and of the man page are the same (${2//$'\n'/ })"
	else
		diff <(echo "$2") <(echo "$3") | sed 's/^/# --help | man: /'
		ok 1 "$1: the options of --help and of the man page are the same"
	fi
}

# perf-defer itself: its usage line
top_help=$("$pdf" --help 2>&1 | head -n 1 | grep -oE '\-\-[a-z]+' | sort -u)
top_man=$(man_opts perf-defer.1 | grep -- '^--')
compare perf-defer "$top_help" "$top_man"
for c in "${cmds[@]}"; do
	compare "perf-defer $c" "$(help_opts "$c")" "$(man_opts "perf-defer-$c.1")"
done
tap_done
