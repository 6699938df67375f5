#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# perf-defer record on the host, which has neither native deferred
# callchains nor the module (it cannot load modules): the fp fallback with
# one clear warning (dwarf too), the options and their error messages, FINISHED_ROUND
# and build-ids in the file, -t and -C.  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

pdf=$top/recorder/perf-defer
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
# shellcheck disable=SC2016 # for the sh that runs it
loop='i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'

tap_plan 30
avail=0
"$pdf" status >/dev/null 2>&1 && avail=1

"$pdf" record -o fb.data -- sh -c "$loop" >fb.out 2>fb.err
rc=$?
sed 's/^/# /' fb.err
ok $rc "record with neither native support nor the module (rc=$rc)"
n=$(grep -c "warning:" fb.err)
if [ $avail = 1 ]; then
	ok 0 "# SKIP this host offers deferred callchains: no fallback to see"
else
	[ "$n" = 1 ] && grep -q "recording with --call-graph fp" fb.err
	ok $? "one clear warning about the fp fallback ($n)"
fi
grep -q "Captured and wrote" fb.err
ok $? "progress lines in perf's manner"
perf report -i fb.data --stdio >rep.out 2>rep.err && ! grep -qiE 'warn|error' rep.err &&
	grep -q "Samples:" rep.out
ok $? "perf 6.1 reads the fallback file without a warning"
n=$("$pdf" dump -i fb.data | grep -c "PERF_RECORD_FINISHED_ROUND$")
[ "$n" -gt 0 ]
ok $? "the file has FINISHED_ROUND records ($n)"
perf buildid-list -i fb.data 2>/dev/null | grep -q "$(readlink -f /bin/sh | xargs basename)"
ok $? "build-ids of the DSOs that ran are in the file"
perf report -i fb.data --header-only 2>/dev/null | grep -q "^# cmdline : .* record -o fb.data"
ok $? "perf report --header-only shows our cmdline"

"$pdf" record -q --call-graph fp -o fp.data -- sh -c "$loop" 2>fp.err
ok $? "--call-graph fp"
[ ! -s fp.err ]
ok $? "no warning with --call-graph fp"

# dwarf,defer without the module: perf's own in-NMI dumps, one warning
"$pdf" record -q -F 1000 --call-graph dwarf,defer -o dw.data -- sh -c "$loop" 2>dw.err
rc=$?
sed 's/^/# /' dw.err
ok $rc "--call-graph dwarf,defer (rc=$rc)"
if [ $avail = 1 ]; then
	ok 0 "# SKIP this host has the module: no dwarf fallback to see"
else
	[ "$(grep -c "warning:" dw.err)" = 1 ] && grep -q "recording with --call-graph dwarf" dw.err
	ok $? "one clear warning about the dwarf fallback"
fi
perf evlist -v -i dw.data 2>/dev/null | grep -q "REGS_USER|STACK_USER.*sample_regs_user: 0xff0fff, sample_stack_user: 8192" &&
	perf report -i dw.data --stdio >rep.out 2>rep.err && ! grep -qiE 'warn|error' rep.err
rc=$?
sed 's/^/# /' rep.err
ok $rc "the file has perf's dwarf attr, and perf reads it without a warning"

sh -c "$loop; $loop; $loop" &
bg=$!
"$pdf" record -q -t $bg -o t.data -- sleep 0.3 2>/dev/null
ok $? "-t TID with a command that bounds the recording"
n=$(perf script -i t.data -F tid 2>/dev/null | sort -u | tr -d ' ')
[ "$n" = "$bg" ]
ok $? "-t samples only that thread ($n)"
"$pdf" record -q -C 0 -o c.data -- sleep 0.2 2>/dev/null
ok $? "-C 0 (system-wide on one CPU)"
n=$(perf script -i c.data -F cpu 2>/dev/null | sort -u | tr -d ' []')
[ -z "$n" ] || [ "$n" = 000 ] || [ "$n" = 0 ]
ok $? "-C 0 samples only CPU 0 (${n:-none})"
kill $bg 2>/dev/null
wait $bg 2>/dev/null

"$pdf" record -q -e task-clock -e page-faults -o ev.data -- sh -c "$loop" 2>/dev/null
n=$(perf report -i ev.data --stdio 2>/dev/null | grep -cE "of event '(task-clock|page-faults)'")
[ "$n" = 2 ]
ok $? "two events, -e task-clock -e page-faults, both in the report ($n)"
"$pdf" record -q -e cycles -o cy.data -- sh -c "$loop" 2>cy.err
rc=$?
sed 's/^/# /' cy.err
[ $rc = 0 ] || { [ $rc = 1 ] && grep -q "no hardware PMU here: use -e cpu-clock" cy.err; }
ok $? "-e cycles records where a PMU exists, else says there is none (rc=$rc)"

"$pdf" record -v -m 16 -o v.data -- sh -c "$loop" >/dev/null 2>v.err
rc=$?
[ $rc = 0 ] && grep -q "^opened cpu-clock" v.err && perf report -i v.data --stdio >/dev/null 2>&1
ok $? "-v says what it opens; --mmap-pages 16 records a valid file (rc=$rc)"

# usage errors: exit 2 and a message naming the problem
usage() {
	local want=$1 out

	shift
	out=$("$pdf" record "$@" 2>&1 >/dev/null)
	rc=$?
	[ $rc = 2 ] && grep -q -- "$want" <<<"$out"
	ok $? "record $* -> exit 2, '$want' (rc=$rc)"
}
usage "is not a positive number" -F 0 -- true
usage "unknown event 'bogus'" -e bogus -- true
usage "is not supported" --call-graph lbr -- true
usage "is not a number in 1..65248" --call-graph dwarf,defer,70000 -- true
usage "is not a number in 1..65248" --call-graph dwarf,defer,8k -- true
usage "cannot be combined" -p 1 -a
usage "nothing to record" -q
usage "needs --call-graph fp,defer" --keep-deferred --call-graph fp -- true
usage "not a power of two" -m 3 -- true
usage "cannot be used together" -F 100 -c 1000 -- true
"$pdf" record -q -o /nonexistent/x.data -- true 2>err
rc=$?
[ $rc = 1 ] && grep -q "cannot create /nonexistent/x.data" err
ok $? "an output that cannot be created: exit 1 with a message (rc=$rc)"
tap_done
