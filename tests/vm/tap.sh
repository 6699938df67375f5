# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
# TAP helpers for the shell tests, sourced (host and guest):
#   tap_plan N; ok STATUS DESCRIPTION ...; tap_done
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

tap_done() {
	[ "$tap_failed" = 0 ]
}
