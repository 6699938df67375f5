#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# idle.sh: the module costs nothing while no event is attached.  Its two
# kprobes are registered disabled at load (a disabled probe is no ftrace
# callback and no int3: a sample anywhere runs as without the module),
# armed by the first attach and disarmed after the last detach, which
# perf's own recording, run meanwhile, must not notice.  TAP.
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

list=/sys/kernel/debug/kprobes/list
# shellcheck disable=SC2016 # expanded by the sh that runs it
loop='i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done'

# probes: the module's two probes as kprobes/list shows them, one line
# each (at +0x4 where IBT puts an ENDBR before the ftrace site)
probes() {
	grep -E ' perf_callchain(_user)?\+0x[0-9a-f]+ ' "$list" | sed 's/^[0-9a-f]* *//'
}

# disarmed WHEN: both probes listed, both [DISABLED]
disarmed() {
	probes >/tmp/idle.list
	sed "s/^/# $1: /" /tmp/idle.list
	[ "$(grep -c . /tmp/idle.list)" = 2 ] && [ "$(grep -c 'DISABLED' /tmp/idle.list)" = 2 ]
}

# armed WHEN: both probes listed, neither [DISABLED]
armed() {
	probes >/tmp/idle.list
	sed "s/^/# $1: /" /tmp/idle.list
	[ "$(grep -c . /tmp/idle.list)" = 2 ] && ! grep -q 'DISABLED' /tmp/idle.list
}

tap_plan 6
[ -r "$list" ] || { echo "Bail out! no $list (debugfs)"; exit 1; }
tap_insmod "$PERF_DEFER_KO"
cd /tmp || exit 1

disarmed "loaded"
ok $? "loaded and idle: both probes registered, neither armed"

perf record -q -g -o idle.data -- sh -c "$loop" >idle.log 2>&1
rc=$?
disarmed "after perf record -g"
d=$?
[ $d = 0 ] && [ $rc = 0 ] && [ "$(perf script -i idle.data -F ip 2>/dev/null | grep -c .)" -gt 0 ]
ok $? "an unrelated perf record -g (rc=$rc) runs with the probes disarmed, and records"

# a recording through the module arms them for its length
perf-defer record -q -o rec.data -- sh -c "$loop; $loop" >rec.log 2>&1 &
pid=$!
n=0 a=1
while [ $n -lt 100 ] && kill -0 $pid 2>/dev/null; do
	if armed "while perf-defer records" >/tmp/idle.armed; then
		a=0
		break
	fi
	n=$((n + 1))
	sleep 0.1
done
cat /tmp/idle.armed
ok $a "a perf-defer record session arms both probes"
wait $pid
rc=$?
sed 's/^/# /' rec.log
ok $rc "perf-defer record (rc=$rc)"
disarmed "after the session"
ok $? "the last detach disarms both probes"

rmmod perf_defer
ok $? "rmmod"
tap_done
