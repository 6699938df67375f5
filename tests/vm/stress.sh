#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# stress.sh [SECS [CYCLES]]: the module under abuse, with perf-defer record
# at 20 kHz (default SECS 60, CYCLES 100; 'make stress' runs these, the
# default check a short mode).  The VM harness fails the run on any oops,
# WARN, lockdep splat or hung task.  TAP.
#  1. storms: for SECS seconds, a fork/exec/exit loop and a thread storm
#     (wl_syscall -n 16, ended by kill -9 and by _exit from a helper
#     thread in turn), all recorded;
#  2. CYCLES times: load, record a workload, unload, while another
#     workload keeps the CPUs busy;
#  3. the recorder under a memory cgroup limit (16 MiB);
#  4. kill -9 of the recorder in the middle of a recording: the module
#     stays loaded and healthy, nothing stays pending, a new session works.
# After each part nothing may be left pending, and the module must unload.
set -u
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source-path=SCRIPTDIR source=counters.sh
. "$(dirname "$0")/counters.sh"

secs=${1:-60}
cycles=${2:-100}
ko=${PERF_DEFER_KO:-/lib/perf-defer/perf_defer.ko}
rate=20000
unthrottle

# settled: no request pending within 5 s (each waits for its task's return)
settled() {
	n=0
	while [ "$(counter pending)" != 0 ] && [ $n -lt 50 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	[ "$(counter pending)" = 0 ]
}

tap_plan 11
[ -d /sys/module/perf_defer ] && rmmod perf_defer

# 1. storms
insmod "$ko"
ok $? "insmod"
cat >/tmp/forkstorm <<EOF
#!/bin/sh
end=\$((\$(date +%s) + $secs))
while [ \$(date +%s) -lt \$end ]; do
	/bin/true; sh -c ':' & wait
done
EOF
chmod +x /tmp/forkstorm
cat >/tmp/threadstorm <<EOF
#!/bin/sh
end=\$((\$(date +%s) + $secs))
i=0
while [ \$(date +%s) -lt \$end ]; do
	if [ \$((i % 2)) = 0 ]; then how=kill; else how=exit; fi
	/tests/wl_syscall -t 0 -n 16 -c 256 -d 16 -x \$how -a 300 >/dev/null 2>&1
	i=\$((i + 1))
done
echo "# thread storm: \$i processes of 16 threads"
EOF
chmod +x /tmp/threadstorm
perf-defer record -q --stats -F $rate -o /tmp/storm.data -- sh -c '/tmp/forkstorm & /tmp/threadstorm; wait' \
	>/tmp/storm.stats 2>&1
rc=$?
sed 's/^/# /' /tmp/storm.stats
ok $rc "fork/exec/exit and thread storms for ${secs}s, recorded at $rate Hz"
settled
ok $? "nothing left pending after the storms ($(perf-defer status | grep counters))"
rmmod perf_defer
ok $? "rmmod after the storms"

# 2. load, record, unload, under load
/tests/wl_syscall -t 0 -c 4096 -d 8 -n 2 &
busy=$!
fail=0
i=0
while [ $i -lt "$cycles" ]; do
	i=$((i + 1))
	if ! insmod "$ko" ||
	   ! perf-defer record -q -F $rate -o /tmp/cycle.data -- /tests/wl_calls kernel 60 ||
	   ! settled || ! rmmod perf_defer; then
		fail=$((fail + 1))
		echo "# cycle $i failed"
		[ -d /sys/module/perf_defer ] && { settled; rmmod perf_defer; }
	fi
done
kill "$busy"
wait "$busy" 2>/dev/null
[ $fail = 0 ]
ok $? "$cycles load, record, unload cycles under load ($fail failed)"

# 3. the recorder in a 16 MiB memory cgroup
insmod "$ko"
ok $? "insmod"
mkdir -p /sys/fs/cgroup
mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
if [ -f /sys/fs/cgroup/cgroup.controllers ] &&
   echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null &&
   mkdir -p /sys/fs/cgroup/pd && echo $((16 << 20)) >/sys/fs/cgroup/pd/memory.max; then
	sh -c 'echo $$ >/sys/fs/cgroup/pd/cgroup.procs &&
		exec perf-defer record -q --stats -F 10000 -o /tmp/cg.data -- /tests/wl_calls kernel 3000' \
		>/tmp/cg.stats 2>&1
	rc=$?
	sed 's/^/# /' /tmp/cg.stats
	peak=$(cat /sys/fs/cgroup/pd/memory.peak 2>/dev/null || echo "n/a")
	oom=$(sed -n 's/^oom_kill //p' /sys/fs/cgroup/pd/memory.events)
	[ $rc = 0 ] && [ "$oom" = 0 ]
	ok $? "perf-defer record within memory.max = 16 MiB (exit $rc, peak $peak, oom kills $oom)"
else
	ok 0 "# SKIP no cgroup2 memory controller in this kernel"
fi

# 4. kill -9 of the recorder mid-run
perf-defer record -q -F $rate -o /tmp/killed.data -- /tests/wl_syscall -t 0 -c 8192 -d 12 -n 2 &
rec=$!
sleep 2
kill -9 $rec
wait $rec 2>/dev/null
# shellcheck disable=SC2046 # one word per pid
kill -9 $(pidof wl_syscall) 2>/dev/null
sleep 0.2
[ -d /sys/module/perf_defer ]
ok $? "the module is still loaded after kill -9 of the recorder"
settled
ok $? "nothing left pending"
perf-defer record -q --stats -F 4000 -o /tmp/after.data -- /tests/wl_calls kernel 500 >/tmp/after.stats 2>&1
rc=$?
sed 's/^/# /' /tmp/after.stats
[ $rc = 0 ] && [ "$(sed -n 's/^deferred records: //p' /tmp/after.stats)" -gt 0 ]
ok $? "a new session works and gets records"
rmmod perf_defer
ok $? "rmmod"
rm -f /tmp/*.data
tap_done
