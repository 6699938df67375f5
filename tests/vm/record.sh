#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# perf-defer record on a module kernel, read by the guest's perf (Debian's
# 6.1): the file opens without a warning, samples carry kernel and user
# frames with symbols, and the user call paths equal those of
# 'perf record --call-graph fp' on the same workload.  TAP.
#   record.sh [ko]   (default $PERF_DEFER_KO)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source-path=SCRIPTDIR source=perfpaths.sh
. "$(dirname "$0")/perfpaths.sh"
# shellcheck source-path=SCRIPTDIR source=counters.sh
. "$(dirname "$0")/counters.sh"

ko=${1:-$PERF_DEFER_KO}
tap_plan 30
cd /tmp || exit 1
tap_insmod "$ko"

for mode in kernel user; do
	perf-defer record -q --stats -g -o def.$mode -- /tests/wl_calls $mode 1500 >stats.$mode 2>rec.err
	rc=$?
	sed 's/^/# /' stats.$mode rec.err
	ok $rc "record -g -- wl_calls $mode (rc=$rc)"
	grep -qx "path: module" stats.$mode
	ok $? "the module path was used ($mode)"
	w=$(warnings def.$mode)
	[ -z "$w" ]
	ok $? "perf 6.1 report and script read it without a warning ($mode)${w:+: $w}"

	perf record -q -e cpu-clock -F 4000 --call-graph fp -o fp.$mode -- /tests/wl_calls $mode 1500 2>/dev/null
	paths def.$mode >def.paths
	# perf's arm64 tool adds the leaf's caller from the LR it samples
	# with fp chains ("inject missing frames"), which repeats that caller
	# when the leaf has stored its frame record: compare without repeats
	if [ "$(uname -m)" = aarch64 ]; then
		paths fp.$mode | awk -F';' '{ p = $1; for (i = 2; i <= NF; i++) if ($i != $(i - 1)) p = p ";" $i; print p }' |
			sort -u >fp.paths
	else
		paths fp.$mode >fp.paths
	fi
	echo "# deferred paths:"; sed 's/^/#   /' def.paths
	echo "# fp paths:"; sed 's/^/#   /' fp.paths
	[ "$(grep -c . def.paths)" -ge 2 ] && cmp -s def.paths fp.paths
	ok $? "user call paths equal perf's in-NMI fp walk, frame for frame ($mode)"

	# samples with kernel frames and symbolized user frames; those taken
	# in execve, before the new image is mapped, have no user symbol yet,
	# nor, on 5.10, those taken in do_exit() after exit_mm()
	perf script -i def.$mode -F ip,sym 2>/dev/null | awk "$PERF_KADDR"'
		function out() { if (k) { total++; if (u) both++; else if (x) ex++ } k = u = x = 0 }
		/^$/ { out(); next }
		kaddr($1) { k++; if ($2 ~ /exec|^do_exit$/) x = 1 }
		!kaddr($1) && $2 != "[unknown]" { u++ }
		END { out(); print both + 0, ex + 0, total + 0 }' >frames
	read -r both ex total <frames
	um=$(sed -n 's/^unmatched: //p' stats.$mode)
	echo "# $both of $total kernel-mode samples show user frames too; $ex in execve or exit; unmatched $um"
	if [ $mode = kernel ]; then
		# all but those of execve and of the exit (no return to user)
		[ "$total" -gt 100 ] && [ $((both + ex + um)) -ge "$total" ]
		ok $? "every stitched kernel-mode sample has kernel and user frames ($both + $ex + $um of $total)"
	else
		n=$(grep -c . def.paths)
		[ "$n" = 2 ]
		ok $? "user-mode samples: both paths, nothing else above 2% ($n)"
	fi
done

# -p of a running process, ended by SIGINT: the file is valid
sigint_task 2 -p /dev/null pid.err perf-defer record -q -o pid.data
rc=$?
ok $rc "record -p PID stops cleanly on SIGINT (rc=$rc)"
n=$(paths pid.data | grep -c .)
w=$(warnings pid.data)
[ "$n" -ge 2 ] && [ -z "$w" ]
ok $? "the -p file is valid and has the workload's call paths ($n)${w:+: $w}"

# -a system-wide while a command runs
perf-defer record -q -a -o all.data -- /tests/wl_calls kernel 1000 2>all.err
ok $? "record -a -- cmd"
n=$(paths all.data | grep -c .)
w=$(warnings all.data)
[ "$n" -ge 2 ] && [ -z "$w" ]
ok $? "the -a file is valid and has the workload's call paths ($n)${w:+: $w}"

# kernel threads are never deferred: the idle task's samples keep no cookie
perf-defer record -q --keep-deferred -a -o allk.data -- /tests/wl_calls kernel 600 2>/dev/null
perf-defer dump -i allk.data 2>/dev/null | awk '
	/PERF_RECORD_SAMPLE/ { idle = ($0 ~ /: 0\/0: /); if (idle) n++; next }
	/^0x/ { idle = 0 }
	idle && / fffffffffffffd80$/ { bad++ }
	END { print n + 0, bad + 0 }' >idle.out
read -r n bad <idle.out
[ "$n" -gt 0 ] && [ "$bad" = 0 ]
ok $? "the idle task's samples (a kernel thread) are never deferred ($bad of $n)"

# fork and exec: a shell that runs two workloads
perf-defer record -q -o fork.data -- sh -c '/tests/wl_calls kernel 800 & /tests/wl_calls user 800; wait' 2>fork.err
ok $? "record -- sh -c 'a & b' (fork and exec)"
n=$(perf script -i fork.data -F pid 2>/dev/null | sort -u | grep -c .)
p=$(paths fork.data | grep -c .)
[ "$n" -ge 3 ] && [ "$p" -ge 4 ]
ok $? "samples of the shell and both children ($n pids), paths of both modes ($p)"

# a multi-threaded workload
perf-defer record -q --stats -o thr.data -- /tests/wl_syscall -t 800 -n 3 >thr.stats 2>thr.err
ok $? "record a multi-threaded workload"
t=$(perf script -i thr.data -F pid,tid 2>/dev/null | awk '$1 != $2' | grep -c .)
[ "$t" -gt 0 ]
ok $? "samples of a second thread ($t)"

# a disk that is full: an error, never a short file
mkdir -p /mnt/small && mount -t tmpfs -o size=64k tmpfs /mnt/small
perf-defer record -q -o /mnt/small/x.data -- /tests/wl_calls kernel 600 2>full.err
rc=$?
sed 's/^/# /' full.err
[ $rc = 1 ] && grep -q "cannot write" full.err && [ ! -e /mnt/small/x.data ]
ok $? "a full disk is reported with exit 1 and leaves no short file (rc=$rc)"
umount /mnt/small

# a plain perf record -g at the same time keeps its in-NMI user chains
perf-defer record -q -o both1.data -- /tests/wl_calls kernel 1500 2>/dev/null &
rec=$!
perf record -q -e cpu-clock -g -o both2.data -- /tests/wl_calls kernel 1500 2>/dev/null
wait $rec
a=$(paths both1.data | grep -c .)
b=$(paths both2.data | grep -c .)
[ "$a" -ge 2 ] && [ "$b" -ge 2 ] && [ -z "$(warnings both2.data)" ]
ok $? "a concurrent plain perf record -g keeps full user chains ($a, $b paths)"

# code without frame pointers (wl_nofp): --user-unwind eh_frame,fp gives
# perf the whole paths, down to main, that --call-graph fp cannot (the
# samples that keep perf's in-NMI walk, after their entry's unwind, many
# on a slow debug kernel, keep the broken chains of frame pointers)
perf-defer record -q --user-unwind eh_frame,fp -o nofp.data -- /tests/wl_nofp user 1500 2>nofp.err
rc=$?
sed 's/^/# /' nofp.err
ok $rc "record --user-unwind eh_frame,fp -- wl_nofp (rc=$rc)"
paths nofp.data >nofp.paths
echo "# paths:"; sed 's/^/#   /' nofp.paths
grep -qx 'leaf_user;gamma_;beta;alpha;main' nofp.paths &&
	grep -qx 'leaf_user;epsilon;delta;main' nofp.paths && [ -z "$(warnings nofp.data)" ]
ok $? "perf reads both of wl_calls' paths down to main"
perf-defer record -q --user-unwind fp -o nofp-fp.data -- /tests/wl_nofp user 800 2>/dev/null
[ "$(paths nofp-fp.data | grep -c ';main$')" = 0 ]
ok $? "with --user-unwind fp none reaches main"

rmmod perf_defer
ok $? "rmmod after recording"

# The module's rings count as locked memory, as perf's do: with no
# per-user share (mlock_kb=0) they are charged to RLIMIT_MEMLOCK, and a
# user past it is told what to change
insmod "$ko" dev_mode=0666 mlock_kb=0 || { echo "Bail out! cannot load $ko"; exit 1; }
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
# 1: a user may sample the kernel in their own tasks, as record does
echo 1 >/proc/sys/kernel/perf_event_paranoid
as_nobody() { su -s /bin/sh nobody -c "$*"; }
# shellcheck disable=SC3045 # the guest's shell is busybox sh, which has ulimit -l
(ulimit -l 0 && as_nobody perf-defer record -q -o /tmp/nobody0.data -- /tests/wl_calls user 300) >nobody0.out 2>&1
rc=$?
sed 's/^/# /' nobody0.out
[ $rc != 0 ] && grep -q "ulimit -l" nobody0.out
ok $? "past RLIMIT_MEMLOCK a user's recording fails, saying why (rc=$rc)"
# shellcheck disable=SC3045 # as above
(ulimit -l unlimited && as_nobody perf-defer record -q --stats -o /tmp/nobody1.data -- /tests/wl_calls user 300) >nobody1.out 2>&1
rc=$?
sed 's/^/# /' nobody1.out
[ $rc = 0 ] && grep -qx "path: module" nobody1.out
ok $? "with the limit raised the same user records through the module (rc=$rc)"
echo "$paranoid" >/proc/sys/kernel/perf_event_paranoid
rmmod perf_defer
ok $? "rmmod after recording as a user"

# The kernel lowers kernel.perf_event_max_sample_rate when its sampling
# interrupts take too long (under TCG, sometimes below 4000), and then
# refuses a higher sample_freq: as perf record, the default is lowered to
# the limit with a warning, and a -F above it is refused before anything
# is opened
rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
# the kernel takes a rate only while it may throttle (a test before may
# have set perf_cpu_time_max_percent to 0, tests/vm/counters.sh)
pct=$(cat /proc/sys/kernel/perf_cpu_time_max_percent)
echo 25 >/proc/sys/kernel/perf_cpu_time_max_percent
echo 2000 >/proc/sys/kernel/perf_event_max_sample_rate
perf-defer record -q -g -o lim.data -- /tests/wl_calls user 300 2>lim.err
rc=$?
sed 's/^/# /' lim.err
[ $rc = 0 ] && grep -q "lowering the default frequency from 4000 to 2000 Hz" lim.err
ok $? "the default 4000 Hz above a limit of 2000: lowered to it, with a warning (rc=$rc)"
perf-defer record -q -F 3000 -g -o lim3000.data -- /tests/wl_calls user 300 2>lim.err
rc=$?
sed 's/^/# /' lim.err
[ $rc = 2 ] && grep -q "above the kernel's limit of 2000 Hz" lim.err && [ ! -e lim3000.data ]
ok $? "-F 3000 above it: refused with exit 2, no file (rc=$rc)"
echo "$rate" >/proc/sys/kernel/perf_event_max_sample_rate
echo "$pct" >/proc/sys/kernel/perf_cpu_time_max_percent
tap_done
