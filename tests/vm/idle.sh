#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# idle.sh: the module costs nothing while no event is attached.  Its hooks
# are disarmed at load: two kprobes registered disabled (no ftrace
# callback and no int3: a sample anywhere runs as without the module).
# The first attach arms them, the last detach disarms them, and perf's own
# recording, run meanwhile, must not notice.  Then the same with
# hooks=ftrace (x86-64, 5.16+), whose ftrace_ops leaves the two functions
# out of its filter while disarmed (the kprobes stay registered, and
# disabled), or, elsewhere, the module's refusal of it; and a hooks=
# value the module must refuse.  TAP.
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

list=/sys/kernel/debug/kprobes/list
t=/sys/kernel/tracing
[ -f "$t/enabled_functions" ] || t=/sys/kernel/debug/tracing
funcs=$t/enabled_functions
param=/sys/module/perf_defer/parameters/hooks
# shellcheck disable=SC2016 # expanded by the sh that runs it
loop='i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done'

# probes: the module's two probes as kprobes/list shows them, one line
# each (at +0x4 where IBT puts an ENDBR before the ftrace site)
probes() {
	grep -E ' perf_callchain(_user)?\+0x[0-9a-f]+ ' "$list" | sed 's/^[0-9a-f]* *//'
}

# traced: the two functions as enabled_functions shows them, if ftrace
# calls anything there
traced() {
	grep -E '^perf_callchain(_user)? ' "$funcs"
}

# state WHEN: prints "disarmed" (both probes registered and disabled,
# ftrace calls nothing at either function), "kprobes" or "ftrace" for
# what is armed, "mixed" for anything else; their lines, and
# enabled_functions', to /tmp/idle.seen as TAP comments
state() {
	probes >/tmp/idle.list
	traced >/tmp/idle.funcs
	{
		sed "s/^/# $1: kprobe /" /tmp/idle.list
		sed "s/^/# $1: ftrace /" /tmp/idle.funcs
	} >/tmp/idle.seen
	p=$(grep -c . /tmp/idle.list) d=$(grep -c DISABLED /tmp/idle.list)
	f=$(grep -c . /tmp/idle.funcs) h=$(grep -c 'pd_ftrace_hook.*\[perf_defer\]' /tmp/idle.funcs)
	if [ "$p" = 2 ] && [ "$d" = 2 ] && [ "$f" = 0 ]; then
		echo disarmed
	elif [ "$p" = 2 ] && [ "$d" = 0 ] && [ "$h" = 0 ]; then
		# on ftrace, kprobes' own ops (not ours) calls them; arm64's
		# BRK probes and 5.10's int3 on perf_callchain are no ftrace
		echo kprobes
	elif [ "$p" = 2 ] && [ "$d" = 2 ] && [ "$f" = 2 ] && [ "$h" = 2 ]; then
		echo ftrace
	else
		echo mixed
	fi
}

# round WAY: load the module (with hooks=WAY unless "default"), check that
# an unrelated recording leaves the hooks disarmed and that a perf-defer
# session arms the ones the module says it uses, then unload; 6 results
round() {
	if [ "$1" = default ]; then
		tap_insmod "$PERF_DEFER_KO"
	else
		tap_insmod "$PERF_DEFER_KO" hooks="$1"
	fi
	way=$(cat "$param")
	s=$(state "loaded ($1, uses $way)")
	cat /tmp/idle.seen
	[ "$s" = disarmed ]
	ok $? "hooks=$1, loaded and idle: both probes registered, nothing armed ($s)"

	perf record -q -g -o idle.data -- sh -c "$loop" >idle.log 2>&1
	rc=$?
	s=$(state "after perf record -g")
	cat /tmp/idle.seen
	[ "$s" = disarmed ] && [ $rc = 0 ] &&
		[ "$(perf script -i idle.data -F ip 2>/dev/null | grep -c .)" -gt 0 ]
	ok $? "hooks=$1: an unrelated perf record -g (rc=$rc) runs with nothing armed ($s), and records"

	# a recording through the module arms them for its length
	perf-defer record -q -o rec.data -- sh -c "$loop; $loop" >rec.log 2>&1 &
	pid=$!
	n=0 s=none
	while [ $n -lt 100 ] && kill -0 $pid 2>/dev/null; do
		s=$(state "while perf-defer records")
		[ "$s" = disarmed ] || break
		n=$((n + 1))
		sleep 0.1
	done
	cat /tmp/idle.seen
	[ "$s" = "$way" ]
	ok $? "hooks=$1: a perf-defer record session arms the $way hooks ($s)"
	wait $pid
	rc=$?
	sed 's/^/# /' rec.log
	ok $rc "hooks=$1: perf-defer record (rc=$rc)"
	s=$(state "after the session")
	cat /tmp/idle.seen
	[ "$s" = disarmed ]
	ok $? "hooks=$1: the last detach disarms the hooks ($s)"

	rmmod perf_defer
	ok $? "hooks=$1: rmmod"
}

tap_plan 15
[ -r "$list" ] || { echo "Bail out! no $list (debugfs)"; exit 1; }
[ -r "$funcs" ] || { echo "Bail out! no enabled_functions (tracefs)"; exit 1; }
cd /tmp || exit 1

round default
[ "$way" = kprobes ]
ok $? "by default the module uses kprobes ($way)"

# hooks=ftrace where both functions have an ftrace site
ftrace=no
if [ "$(uname -m)" = x86_64 ]; then
	v=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
	# shellcheck disable=SC2086 # two numbers
	set -- $v
	if [ "$1" -gt 5 ] || { [ "$1" = 5 ] && [ "$2" -ge 16 ]; }; then
		ftrace=yes
	fi
fi
if [ "$ftrace" = yes ]; then
	round ftrace
	[ "$way" = ftrace ]
	ok $? "hooks=ftrace uses them ($way)"
else
	insmod "$PERF_DEFER_KO" hooks=ftrace 2>/tmp/idle.err
	rc=$?
	sed 's/^/# /' /tmp/idle.err
	dmesg | grep 'perf_defer: hooks=ftrace' | tail -1 | sed 's/^/# /'
	[ $rc != 0 ] && [ ! -d /sys/module/perf_defer ]
	ok $? "hooks=ftrace is refused on $(uname -m) $(uname -r) (insmod rc=$rc)"
	for i in 1 2 3 4 5 6; do
		skip "hooks=ftrace round, result $i" "no ftrace hooks on $(uname -m) $(uname -r)"
	done
fi

insmod "$PERF_DEFER_KO" hooks=bogus 2>/tmp/idle.err
rc=$?
sed 's/^/# /' /tmp/idle.err
[ $rc != 0 ] && [ ! -d /sys/module/perf_defer ]
ok $? "hooks=bogus is refused (insmod rc=$rc)"
tap_done
