#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# perf-defer perf record on a module kernel: the guest's perf records with
# its own options, libperf-defer-preload.so attaches its events, and the
# file perf wrote comes out stitched:
#  - perf's header stays perf's (its cmdline), every perf reads the file
#    without a warning, and the user call paths equal those of perf's own
#    in-NMI fp walk on the same workload;
#  - nearly every sample was deferred and stitched;
#  - several -e events with modifiers, -a, a tracepoint (also into small
#    rings of the module's, nothing lost), perf >= 6.19's
#    fp,defer, and -p or -t of a running task ended by SIGINT to
#    perf-defer (nothing lost);
#  - --keep-deferred: the records merged into perf's file, which stitch
#    turns into the same call paths, and perf >= 6.19 reads itself;
#  - the workload inherits neither LD_PRELOAD nor the session;
#  - --switch-output: each file perf writes stitched;
#  - what it cannot do is refused with a reason: -z, --switch-output with
#    --keep-deferred, a pipe, a perf command other than record, no module.  TAP.
#   perf_record.sh [ko]   (default $PERF_DEFER_KO)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source-path=SCRIPTDIR source=perfpaths.sh
. "$(dirname "$0")/perfpaths.sh"
# shellcheck source-path=SCRIPTDIR source=counters.sh
. "$(dirname "$0")/counters.sh"

ko=${1:-$PERF_DEFER_KO}
perf_guest 30 "$ko"

# stat FILE NAME: the counter NAME of perf-defer perf --stats output FILE
stat() {
	sed -n "s/^$2: //p" "$1"
}

# deferred_share D S A E: were D of S samples deferred, but those that
# came after their kernel entry's unwind (A, the module's after-unwind
# counter over the recording) and those inside the workload's execve()
# (E, in_exec)?  Both keep perf's own walk by design (one request per
# entry, as upstream; no record of a stack the exec replaces): about 1%
# of a recording on x86-64 under TCG, up to 11% of wl_calls kernel's on
# arm64, whose do_notify_resume() runs the task_work with interrupts on,
# and whose exec under TCG is slow.  At least 95% of the rest.
deferred_share() {
	_rest=$((${2:-0} - ${3:-0} - ${4:-0}))
	[ "${2:-0}" -gt 100 ] && [ $((${1:-0} * 100)) -ge $((_rest * 95)) ]
}

# excused A0 FILE: sets a, the samples after their entry's unwind since
# the after-unwind counter read A0, and e, those in FILE's execve()
excused() {
	a=$(($(counter after-unwind) - $1))
	e=$(in_exec "$2" $NI)
}

for mode in kernel user; do
	a0=$(counter after-unwind)
	perf-defer perf --stats record -q -g -o pd.$mode -- /tests/wl_calls $mode 1500 \
		>stats.$mode 2>rec.err
	rc=$?
	excused "$a0" pd.$mode
	sed 's/^/# /' stats.$mode rec.err
	ok $rc "perf-defer perf record -g -- wl_calls $mode (rc=$rc)"
	d=$(stat stats.$mode deferred) s=$(stat stats.$mode samples) t=$(stat stats.$mode stitched)
	deferred_share "$d" "$s" "$a" "$e" && [ $((t * 100)) -ge $((d * 98)) ]
	ok $? "$d of $s samples deferred ($a after their entry's unwind, $e in its execve), $t of them stitched ($mode)"
	w=$(warnings pd.$mode $NI)
	[ -z "$w" ]
	ok $? "perf report and script read it without a warning ($mode)${w:+: $w}"
	perf record -q -e cpu-clock -F 4000 --call-graph fp -o fp.$mode -- /tests/wl_calls $mode 1500 2>/dev/null
	paths pd.$mode $NI >pd.paths
	paths fp.$mode $NI >fp.paths
	cp fp.paths fp.$mode
	echo "# paths:"; sed 's/^/#   /' pd.paths
	[ "$(grep -c . pd.paths)" -ge 2 ] && cmp -s pd.paths fp.paths
	ok $? "user call paths equal perf's in-NMI fp walk ($mode)"
done
# perf's own header: the version of the perf that recorded, its command line
version=$(perf version | awk '{ print $3 }')
perf report --header-only -i pd.user 2>/dev/null | grep -E '^# (perf version|cmdline)' | sed 's/^/# /'
perf report --header-only -i pd.user 2>/dev/null | grep -qx "# perf version : $version" &&
	perf report --header-only -i pd.user 2>/dev/null | grep -q '^# cmdline : .*/perf '
ok $? "the header is perf's own: perf $version's, with its command line"

# two events, one with a modifier, both attached.  Their timers expire
# apart: task-clock's can fire in the kernel after the entry's unwind that
# the other's sample asked for, which a loaded host makes likely (up to a
# sixth of the samples in one CI run); deferred_share leaves those out.
a0=$(counter after-unwind)
perf-defer perf --stats record -q -e cpu-clock:u -e task-clock -c 1000000 -g -o ev.data \
	-- /tests/wl_calls user 1000 >stats.ev 2>rec.err
ok $? "perf-defer perf record -e cpu-clock:u -e task-clock -g"
excused "$a0" ev.data
d=$(stat stats.ev deferred) s=$(stat stats.ev samples)
ev=$(perf script -i ev.data -F event 2>/dev/null | sort | uniq -c | sed 's/^ */#   /')
echo "$ev"
[ "$(echo "$ev" | grep -c clock)" = 2 ] && deferred_share "$d" "$s" "$a" "$e"
ok $? "both events sampled, $d of $s samples deferred ($a after their entry's unwind, $e in its execve)"

# system-wide (-a: an event per CPU) while a command runs, and a
# tracepoint: each sample of the workload deferred and stitched
perf-defer perf --stats record -q -a -g -o all.data -- /tests/wl_calls user 1000 \
	>stats.all 2>rec.err
rc=$?
sed 's/^/# /' rec.err
d=$(stat stats.all deferred) t=$(stat stats.all stitched)
paths all.data $NI >all.paths
[ $rc = 0 ] && [ "${d:-0}" -gt 100 ] && [ $((t * 100)) -ge $((d * 98)) ] && cmp -s all.paths fp.user
r=$?
[ $r = 0 ] || { echo "# paths:"; sed 's/^/#   /' all.paths; echo "# perf's:"; sed 's/^/#   /' fp.user; }
ok $r "-a -- cmd: $t of $d deferred samples stitched, perf's fp paths (rc=$rc)"
perf-defer perf --stats record -q -e syscalls:sys_enter_read -g -o tp.data \
	-- /tests/wl_calls kernel 1000 >stats.tp 2>rec.err
rc=$?
sed 's/^/# /' stats.tp rec.err
d=$(stat stats.tp deferred) s=$(stat stats.tp samples) t=$(stat stats.tp stitched)
l=$(stat stats.tp lost-records)
paths tp.data $NI >tp.paths
echo "# paths:"; sed 's/^/#   /' tp.paths
# a sample per read(), a record per read(): a recorder that falls behind
# on a loaded host loses records, which it reports; all others stitched
[ $rc = 0 ] && [ "${s:-0}" -gt 100 ] && [ $((d * 100)) -ge $((s * 95)) ] &&
	[ $(((t + ${l:-0}) * 100)) -ge $((d * 98)) ] && [ "$(grep -c . tp.paths)" -ge 2 ]
ok $? "-e syscalls:sys_enter_read -g: $d of $s samples deferred, $t stitched, ${l:-0} records reported lost, the workload's paths (rc=$rc)"

# The module's rings fill at the sampling rate whatever perf does.  A ring
# that holds 50 to 100 ms of the records above (read() rate, which differs
# fivefold between this suite's kernels under TCG) overflows when it is read
# only every 100 ms; read when the module says it is a quarter full, it
# loses nothing.
b=$(stat stats.tp deferred-bytes)
pages=1
while [ $((pages * 2 * 4096 * 10)) -le "${b:-0}" ] && [ $pages -lt 128 ]; do
	pages=$((pages * 2))
done
if [ "${b:-0}" -lt $((4096 * 10)) ]; then
	ok 0 "# SKIP ${b:-no} bytes of records a second fill no ring in 100 ms"
else
	perf-defer perf --stats --mmap-pages $pages record -q -e syscalls:sys_enter_read -g \
		-o small.data -- /tests/wl_calls kernel 1000 >stats.small 2>rec.err
	rc=$?
	sed 's/^/# /' stats.small rec.err
	d=$(stat stats.small deferred) l=$(stat stats.small lost-records)
	[ $rc = 0 ] && [ "${d:-0}" -gt 100 ] && [ "${l:-x}" = 0 ]
	ok $? "--mmap-pages $pages ($b bytes of records a second): $d samples deferred, ${l:-no count of} records lost (rc=$rc)"
fi

# perf >= 6.19's fp,defer: opened without the defer bits, deferred by the module
v=$(perf version | sed -n 's/^perf version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
# shellcheck disable=SC2086 # major and minor, into words
set -- $v
if [ "${1:-0}" -gt 6 ] || { [ "${1:-0}" = 6 ] && [ "${2:-0}" -ge 19 ]; }; then
	a0=$(counter after-unwind)
	perf-defer perf --stats record -q --call-graph fp,defer -o defer.data \
		-- /tests/wl_calls user 1000 >stats.defer 2>rec.err
	rc=$?
	excused "$a0" defer.data
	sed 's/^/# /' stats.defer rec.err
	d=$(stat stats.defer deferred) s=$(stat stats.defer samples) t=$(stat stats.defer stitched)
	[ $rc = 0 ] && deferred_share "$d" "$s" "$a" "$e" &&
		[ $((t * 100)) -ge $((d * 98)) ] && [ -z "$(warnings defer.data $NI)" ]
	ok $? "--call-graph fp,defer on this kernel: $d of $s samples deferred ($a after their entry's unwind, $e in its execve), $t stitched (rc=$rc)"
else
	ok 0 "# SKIP perf $1.$2 has no --call-graph fp,defer"
fi

# --keep-deferred: perf's file with the records merged in, which stitch
# turns into the stitched form, and perf >= 6.19 reads as it is
perf-defer perf --keep-deferred record -q -g -o keep.data -- /tests/wl_calls user 1500 \
	>/dev/null 2>rec.err
rc=$?
sed 's/^/# /' rec.err
n=$(perf-defer dump --stats -i keep.data 2>/dev/null | sed -n 's/^ *CALLCHAIN_DEFERRED events: *\([0-9]*\).*/\1/p')
perf-defer stitch -q -i keep.data -o keep.stitched
paths keep.stitched $NI >keep.paths
[ $rc = 0 ] && [ "${n:-0}" -gt 100 ] && [ "$(grep -c . keep.paths)" -ge 2 ] && cmp -s keep.paths fp.paths
ok $? "--keep-deferred: ${n:-no} CALLCHAIN_DEFERRED records; stitched, perf's fp paths (rc=$rc)"
if [ "${1:-0}" -gt 6 ] || { [ "${1:-0}" = 6 ] && [ "${2:-0}" -ge 19 ]; }; then
	paths keep.data $NI >native.paths
	w=$(warnings keep.data $NI)
	[ -z "$w" ] && cmp -s native.paths fp.paths
	ok $? "perf $1.$2 reads the deferred form itself: perf's fp paths${w:+; $w}"
else
	ok 0 "# SKIP perf $1.$2 does not read the deferred form"
fi

# -p of a running task, stopped by SIGINT to perf-defer: the file is whole
sigint_task 4 -p stats.int rec.err perf-defer perf --stats record -q -g -o int.data
rc=$?
sed 's/^/# /' stats.int rec.err
ok $rc "SIGINT: perf-defer waits for perf and merges (rc=$rc)"
d=$(stat stats.int deferred) t=$(stat stats.int stitched)
[ "${d:-0}" -gt 100 ] && [ $((t * 100)) -ge $((d * 98)) ] && [ -z "$(warnings int.data $NI)" ]
ok $? "-p, then SIGINT: $t of $d deferred samples stitched, the file reads cleanly"
# the same with -t: one thread's events
sigint_task 3 -t stats.tid rec.err perf-defer perf --stats record -q -g -o tid.data
rc=$?
sed 's/^/# /' rec.err
ok $rc "-t TID, then SIGINT (rc=$rc)"
d=$(stat stats.tid deferred) t=$(stat stats.tid stitched)
paths tid.data $NI >tid.paths
[ "${d:-0}" -gt 100 ] && [ $((t * 100)) -ge $((d * 98)) ] && cmp -s tid.paths fp.user
ok $? "-t: $t of $d deferred samples stitched, perf's fp paths"

# the workload's environment and fds are its own
# shellcheck disable=SC2016 # expanded by the workload's shell
perf-defer perf record -q -g -o env.data -- /bin/sh -c \
	'echo "LD_PRELOAD=${LD_PRELOAD-} SESSION=${PERF_DEFER_SESSION_FD-}"; ls -l /proc/self/fd' \
	>env.out 2>rec.err
ok $? "record of sh"
sed 's/^/# /' env.out
grep -qx 'LD_PRELOAD= SESSION=' env.out && ! grep -q perf_defer env.out
ok $? "the workload inherits neither LD_PRELOAD nor the session"

# --switch-output: each file perf writes stitched on its own.  By size, not
# by time: perf arms its alarm when it parses its options and drops a hit
# that comes before it is ready, so where its start takes longer than the
# period (a loaded TCG host) it never switches.
rm -f sw.data.*
perf-defer perf --stats record -q -g --switch-output=100K -o sw.data -- /tests/wl_calls user 3500 \
	>stats.sw 2>rec.err
rc=$?
sed 's/^/# /' stats.sw rec.err
ok $rc "--switch-output=100K (rc=$rc)"
n=0 bad='' gone=0 last=''
: >sw.all
for f in sw.data.[0-9]*; do last=$f; done
for f in sw.data.[0-9]*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	w=$(warnings "$f" $NI)
	paths "$f" $NI >sw.paths
	perf-defer dump -i "$f" 2>/dev/null >sw.dump
	ns=$(awk '/SAMPLE events:/ { print $3; exit }' sw.dump)
	# perf synthesizes the workload's maps into each new file from
	# /proc/PID/maps.  It reads its rings at half their size, so it can
	# still be writing samples after the workload exited: a file it
	# switches to then has no map of the workload (a zombie's maps are
	# empty), and no reader can name those samples' user frames, the same
	# with perf's own walk.  Only the files after the workload's end may
	# be so.
	grep -q 'PERF_RECORD_MMAP2 .* /tests/wl_calls$' sw.dump && m=yes || m=no
	echo "# $f: ${ns:-0} samples; map of the workload: $m; paths: $(tr '\n' ' ' <sw.paths)"
	cat sw.paths >>sw.all
	# the last may be empty, when perf switched just before the end (perf
	# report then says "no samples", as on such a file of its own)
	[ "$f" != "$last" ] || [ "${ns:-0}" -gt 0 ] || continue
	# each file reads cleanly; its paths (those of >= 2% of its samples:
	# in a short file a rare path can reach that) include perf's where it
	# has the map, but in the last, which may hold only the workload's
	# exit; no file without the map comes before one with it
	if [ -n "$w" ] || { [ "$m" = yes ] && [ $gone = 1 ]; } ||
		{ [ "$m" = yes ] && [ "$f" != "$last" ] && ! grep -qxF -f fp.user sw.paths; }; then
		bad="$bad $f${w:+ ($w)}"
		[ -z "$w" ] || perf report --stdio -i "$f" 2>&1 >/dev/null | grep . | sed "s|^|# $f: |"
	fi
	[ "$m" = yes ] || gone=1
done
d=$(stat stats.sw deferred) t=$(stat stats.sw stitched)
# and perf's fp paths are all there
[ "$n" -ge 2 ] && [ "$n" = "$(stat stats.sw files)" ] && [ -z "$bad" ] && [ ! -e sw.data ] &&
	! grep -qvxF -f sw.all fp.user &&
	[ "${d:-0}" -gt 100 ] && [ $((t * 100)) -ge $((d * 98)) ]
ok $? "--switch-output: $n files, each read cleanly with perf's fp paths among its own; $t of $d deferred samples stitched${bad:+; not:$bad}"

# refusals: exit 2 and the reason
for args in "-z -g" "--keep-deferred record --switch-output -g" "-g -o -" ; do
	case $args in --keep-deferred*) ;; *) args="record $args" ;; esac
	# shellcheck disable=SC2086 # the options, into words
	perf-defer perf $args -- true >out 2>err
	rc=$?
	[ $rc = 2 ] && grep -q 'perf-defer: perf: ' err
	ok $? "perf $args refused (rc=$rc: $(head -n 1 err))"
done
perf-defer perf stat -- true >out 2>err
rc=$?
[ $rc = 2 ] && grep -q 'only perf record' err
ok $? "perf stat refused (rc=$rc: $(head -n 1 err))"

rmmod perf_defer
perf-defer perf record -g -o none.data -- true >out 2>err
rc=$?
[ $rc = 1 ] && grep -q 'modprobe perf_defer' err
ok $? "no module: said, exit 1 (rc=$rc: $(head -n 1 err))"
[ ! -e none.data ]
ok $? "no module: perf was not run"
tap_done
