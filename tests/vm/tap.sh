# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
# TAP helpers for the shell tests, sourced (host and guest):
#   tap_plan N; ok STATUS DESCRIPTION ...; skip DESCRIPTION REASON;
#   tap_done; select_named;
#   tap_insmod KO [PARAM=VALUE...] (guest)
tap_n=0
tap_failed=0

tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $tap_n $2"
	else
		echo "not ok $tap_n $2"
		tap_failed=$((tap_failed + 1))
	fi
}

# skip DESCRIPTION REASON: a test not run here, and why
skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n $1 # SKIP $2"
}

tap_done() {
	[ "$tap_failed" = 0 ]
}

# tap_insmod KO [PARAM=VALUE...]: load the module the tests need, or bail
# out of the plan
tap_insmod() {
	insmod "$@" || { echo "Bail out! cannot load $*"; exit 1; }
}

# select_named LIST NAME...: the lines of LIST ("NAME|...") that the NAMEs
# name, in their order; a NAME ending in * names every line it begins
select_named() {
	sel_list=$1
	shift
	for sel_n in "$@"; do
		case $sel_n in
		*\*) echo "$sel_list" | grep "^${sel_n%\*}" ;;
		*) echo "$sel_list" | grep "^$sel_n|" ;;
		esac
	done
}
