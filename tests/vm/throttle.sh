#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# throttle.sh: a script that turns off the kernel's sample throttling
# (counters.sh's unthrottle, stress.sh's storms at 20 kHz) gives it back
# when it exits, whatever its exit.  The scripts that follow in the same
# boot must sample as on any machine: with the throttling left off, an
# emulated guest samples perf's default 4 kHz in full, spends most of its
# time in the interrupt, and what they measure is that guest's overload,
# not the module.  TAP.
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

rate=/proc/sys/kernel/perf_event_max_sample_rate
pct=/proc/sys/kernel/perf_cpu_time_max_percent

tap_plan 4
# a rate below unthrottle's, as the kernel leaves it after lowering it,
# so that giving it back is seen; the boot's own at the end
boot=$(cat $rate)
echo "# at start: max_sample_rate $boot, cpu_time_max_percent $(cat $pct)"
echo 2000 >$rate
r0=$(cat $rate) p0=$(cat $pct)
echo "# before: max_sample_rate $r0, cpu_time_max_percent $p0"
# shellcheck disable=SC2016 # expanded by the sh that runs it
sh -c '. "$1/counters.sh"; unthrottle; cat "$2" "$3" >/tmp/throttle.in; exit 3' \
	sh "$(dirname "$0")" $rate $pct
rc=$?
r1=$(cat $rate) p1=$(cat $pct)
# shellcheck disable=SC2046 # two numbers, into words
set -- $(cat /tmp/throttle.in)
echo "# inside: max_sample_rate $1, cpu_time_max_percent $2"
echo "# after: max_sample_rate $r1, cpu_time_max_percent $p1"
[ "$2" = 0 ] && [ "$1" = 100000 ]
ok $? "unthrottle turned the throttling off inside the script"
[ $rc = 3 ]
ok $? "the script's own exit status is kept (rc=$rc)"
[ "$p1" = "$p0" ]
ok $? "perf_cpu_time_max_percent given back ($p1, was $p0)"
[ "$r1" = "$r0" ]
ok $? "perf_event_max_sample_rate given back ($r1, was $r0)"
echo "$boot" >$rate
tap_done
