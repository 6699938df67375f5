#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# features-host.sh [PERF-VERSION...]: the header features of perf-defer
# record's files on the host (the fp fallback: no module here), against
# perf 6.1's 'perf record --call-graph fp' of the same workload: the same
# features, the same description of the machine; perf-defer stitch keeps
# them; and each perf client reads both files where /proc is not mounted
# (scripts/perf --no-proc), which perf 7.3 did not survive while features
# were missing.  With 7.3 among the versions, also: stitch keeps every
# feature of perf 7.3's own recording, those newer than perf-defer
# included.  The perf versions: 6.1 7.3 by default.  PERF_DEFER (the
# recorder to test, default recorder/perf-defer) shows the test failing
# on an older recorder.  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"
# shellcheck source-path=SCRIPTDIR source=headers.sh
. "$top/tests/headers.sh"

pdf=${PERF_DEFER:-$top/recorder/perf-defer}
P61=perf
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(6.1 7.3)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
# shellcheck disable=SC2016 # for the sh that runs it
loop='i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'

has73=0
for v in "${versions[@]}"; do [ "$v" != 7.3 ] || has73=2; done
tap_plan $((14 + has73 + 3 * ${#versions[@]}))
perf record -q --call-graph fp -o perf.data -- sh -c "$loop" 2>/dev/null
ok $? "perf record --call-graph fp"
"$pdf" record -q -o pd.data -- sh -c "$loop" 2>/dev/null
ok $? "perf-defer record (the fp fallback)"
"$pdf" stitch -q -i pd.data -o st.data
ok $? "perf-defer stitch of it"

same_features perf.data pd.data
ok $? "perf-defer record: the features of perf record, the same machine ($(hdr_missing perf.data | wc -l) missing from perf record's)"
same_features pd.data st.data
ok $? "perf-defer stitch keeps the features of its input"

# HEADER_SAMPLE_TIME: the first and last sample of the file
t=$(perf script -i pd.data -F time 2>/dev/null | tr -d ' :' | sort -n | sed -n '1p;$p' | paste -sd' ')
h=$(perf report -i pd.data --header-only 2>/dev/null |
	sed -n 's/^# time of \(first\|last\) sample : //p' | paste -sd' ')
echo "# samples from $t; header: $h"
[ -n "$t" ] && [ "$t" = "$h" ]
ok $? "the header's first and last sample times are those of the samples"

n=$(perf report -i pd.data --header-only 2>/dev/null | grep -c "^# event : name = cpu-clock")
[ "$n" = 1 ]
ok $? "perf 6.1 lists the event (event desc)"
n=$(perf report -i pd.data --header-only 2>/dev/null | grep -c "^# pmu mappings: .*software = 1")
[ "$n" = 1 ]
ok $? "perf 6.1 lists the PMUs"

# the vDSO's build-id, as perf record lists it: without it, perf looks
# for the vDSO of the process it runs in (/proc/self/maps)
v=$(perf buildid-list -i perf.data 2>/dev/null | grep ' \[vdso\]$')
w=$(perf buildid-list -i pd.data 2>/dev/null | grep ' \[vdso\]$')
echo "# perf record: ${v:-no [vdso]}; perf-defer record: ${w:-no [vdso]}"
[ -n "$v" ] && [ "$v" = "$w" ]
ok $? "the [vdso] build-id, as perf record lists it"

# the build-id cache ($HOME/.debug), as perf record fills it, which perf
# archive packs: each recording with a home of its own
mkdir -p home-perf home-pd
HOME=$dir/home-perf perf record -q --call-graph fp -o cache-perf.data -- sh -c "$loop" 2>/dev/null
HOME=$dir/home-pd "$pdf" record -q -o cache-pd.data -- sh -c "$loop" 2>/dev/null
# perf adds empty probes/ directories (for perf probe) we have no use for
a=$(cd home-perf && find . ! -name probes | sort) b=$(cd home-pd && find . | sort)
echo "# perf record's cache: $(echo "$a" | grep -c /elf) files, ours: $(echo "$b" | grep -c /elf)"
[ -n "$a" ] && [ "$a" = "$b" ]
ok $? "perf-defer record fills the build-id cache as perf record does"
HOME=$dir/home-pd perf archive cache-pd.data >archive.out 2>&1
rc=$?
grep -iE 'cannot|error|warn' archive.out | sed 's/^/#   /'
[ $rc = 0 ] && [ -s cache-pd.data.tar.bz2 ] && ! grep -qiE 'cannot|error|warn' archive.out
ok $? "perf archive packs it (rc=$rc)"

# sample_type as perf record sets it (each field costs 8 bytes in every
# record): the id only where several events are told apart, the CPU only
# per CPU; perf's -a adds a dummy event, and the IDENTIFIER that tells it
# apart, which a single event needs not
stype() {
	perf evlist -v -i "$1" 2>/dev/null | grep -v '^dummy' |
		sed -n 's/^\([a-z-]*\).* sample_type: \([A-Z_|]*\).*/\1 \2/p' |
		sed "${2:+s/|IDENTIFIER//}"
}
for opts in "" "-e cpu-clock -e task-clock" "-a"; do
	# shellcheck disable=SC2086 # the options, into words
	perf record -q --call-graph fp $opts -o st-perf.data -- sh -c "$loop" 2>/dev/null &&
		"$pdf" record -q $opts -o st-pd.data -- sh -c "$loop" 2>/dev/null
	a=$(stype st-perf.data "$(perf evlist -i st-perf.data 2>/dev/null | grep '^dummy')")
	b=$(stype st-pd.data)
	echo "# ${opts:-one event}: perf record: ${a//$'\n'/; }; perf-defer record: ${b//$'\n'/; }"
	[ -n "$a" ] && [ "$a" = "$b" ]
	ok $? "sample_type as perf record's, ${opts:-one event}"
done

if [ $has73 = 2 ]; then
	"$top/scripts/perf" 7.3 record -q --call-graph fp -o p73.data -- sh -c "$loop" >/dev/null 2>&1 &&
		"$pdf" stitch -q -i p73.data -o p73-st.data
	ok $? "perf 7.3 record --call-graph fp, and perf-defer stitch of it"
	P61="$top/scripts/perf 7.3" same_features p73.data p73-st.data
	ok $? "perf-defer stitch keeps every feature of perf 7.3's file (as perf 7.3 shows them)"
fi

for v in "${versions[@]}"; do
	for f in perf.data pd.data st.data; do
		no_proc_reads "$v" "$f"
		ok $? "perf $v reads $f without /proc"
	done
done
tap_done
