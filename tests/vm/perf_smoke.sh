#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The guest's perf records cpu-clock samples with fp callchains: the base
# every later recording test stands on.  TAP.
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

tap_plan 2
cd /tmp || exit 1
# shellcheck disable=SC2016 # expanded by the sh that runs it
perf record -q -e cpu-clock -F 1000 -g -o perf.smoke -- \
	sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' >smoke.log 2>&1
rc=$?
sed 's/^/# /' smoke.log
ok $rc "perf record -g (rc=$rc)"
n=$(perf script -i perf.smoke -F ip 2>/dev/null | grep -c .)
[ "$n" -gt 0 ]
ok $? "perf script reads $n samples"
tap_done
