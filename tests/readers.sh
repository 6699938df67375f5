#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# readers.sh SERIES: the files perf-defer record makes on a test kernel,
# read on the host by each perf client: perf 6.1 (the host's), perf 6.12 and
# 7.3 (trixie and trixie-backports, in the trixie chroot: scripts/perf).
#
# The guest (keep.sh) records the standard workloads, wl_calls kernel and
# wl_calls user, in both forms: through the module on a module kernel
# (6.1, 6.1-rt, 6.1-cloud, 6.12, 6.16), natively on 7.2.  For each:
#  - the deferred form (--keep-deferred): perf 7.3 merges it into the
#    workload's two call paths, without a warning, and into the same user
#    chain, sample for sample, as our stitch of it gives perf 6.1;
#  - the stitched form: perf 6.1, 6.12 and 7.3 each read the two call paths
#    without a warning, and the same user chain in every sample.
# On 7.2, also perf 7.3's own fp,defer recording (native.sh): our stitch of
# it reads in perf 6.1 and 6.12 as perf 7.3 reads the original.
# The header features (tests/headers.sh): on a module kernel, our files of
# wl_calls kernel in both forms have those of the guest's perf 6.1 record
# --call-graph fp of it, with the same description of the machine (on
# arm64 too, with bookworm's arm64 perf in the guest, scripts/vm --perf
# 6.1: its files are recorded on arm64 and read here on x86-64, perf's
# cross-architecture reading); and each perf reads all of them (and perf
# 6.1's own) with /proc not mounted.  On arm64, also --call-graph
# dwarf,defer of wl_nofp (keep.sh's "dwarf"): each perf unwinds those
# dumps here as the guest's arm64 perf does (or skips, where it says it
# has no unwinder for arm64).
#
# Each result names its cell of the compatibility table in brackets, e.g.
# "[perf-6.12 stitched]"; scripts/check --all builds the table from them.
# TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"
# shellcheck source-path=SCRIPTDIR source=vm/perfpaths.sh
. "$top/tests/vm/perfpaths.sh"
# shellcheck source-path=SCRIPTDIR source=headers.sh
. "$top/tests/headers.sh"

series=${1:-}
case $series in
7.2) mode=native ;;
[0-9]*) mode=module ;;
*) echo "usage: tests/readers.sh SERIES (a kernel of scripts/kernels: 6.1, 6.18, ..., or 7.2)" >&2; exit 2 ;;
esac

# same A B UNMATCHED: the two readings (chains(), by time) give each
# sample the same user chain.  A sample no record matched keeps, in perf 7.3, its cookie as one
# [unknown] user frame; our stitch drops the pair: there must be exactly
# UNMATCHED of those.
same() {
	paste -d '|' "$1" "$2" | awk -F '|' -v um="$3" '
		$1 ~ / 1:$/ && $2 ~ / 0:$/ && $1 == substr($2, 1, length($2) - 2) "1:" { u++; next }
		$1 != $2 { bad++; if (bad <= 3) print "# differs: " $1 " | " $2 }
		END { print "# " NR " samples, " u + 0 " unmatched (stitch: " um "), " bad + 0 " differ"
		      exit bad > 0 || u != um || NR < 100 }'
}

# unmatched ERRFILE: the count perf-defer stitch warned about
unmatched() {
	sed -n 's/.*warning: \([0-9]*\) of .*/\1/p' "$1" | grep . || echo 0
}

# two_paths PERF FILE W: FILE read by PERF has wl_calls's two call paths
# through leaf_W, and perf says no warning
two_paths() {
	local p w

	p=$(PERF=$1 paths "$2" "${sym[@]}")
	w=$(PERF=$1 warnings "$2" "${sym[@]}")
	printf '%s\n' "$p" | sed 's/^/# path: /'
	[ -z "$w" ] || echo "# warnings: $w"
	[ "$p" = "$(printf 'leaf_%s;epsilon;delta;main\nleaf_%s;gamma_;beta;alpha;main' "$3" "$3" | sort)" ] &&
		[ -z "$w" ]
}

out=$top/build/readers/$series
rm -rf "$out"
mkdir -p "$out/symfs/tests"
# an arm64 guest's programs are the cross-built ones
vmt=$top/build/vm-tests
case $series in *-arm64) vmt=$top/build/arm64/vm-tests ;; esac
cp "$vmt/wl_calls" "$out/symfs/tests/"
P61=perf
P612="$top/scripts/perf 6.12"
P73="$top/scripts/perf 7.3"
pdf="$top/recorder/perf-defer"
exports=()
for w in kernel user; do
	exports+=(--export "/tmp/keep-$w.data" --export "/tmp/st-$w.data")
done
exports+=(--export /tmp/kallsyms.gz)
# perf's own, and perf-defer perf record's, for the features and for
# tests/subcmds.sh; an arm64 guest gets bookworm's arm64 perf to record
# them (an x86-64 module guest has the initramfs's perf 6.1)
exports+=(--export /tmp/perf-kernel.data)
[ $mode = native ] || exports+=(--export /tmp/pp-kernel.data)
vmperf=()
keep='keep.sh module'
dwarf=0
case $series in
*-arm64)
	# and dwarf,defer dumps, which only a perf with an arm64 DWARF
	# unwinder unwinds here
	vmperf=(--perf 6.1) keep='keep.sh module dwarf' dwarf=1
	cp "$vmt/wl_nofp" "$out/symfs/tests/"
	for w in kernel user; do
		exports+=(--export "/tmp/dw-$w.data" --export "/tmp/dw-$w.chains")
	done
	;;
esac

if [ $mode = module ]; then
	tap_plan $((36 + dwarf * 6))
	"$top/scripts/vm" -k "$series" "${vmperf[@]}" -o "$out/vm" \
		-m "$top/build/ko-$series/perf_defer.ko" "${exports[@]}" -- "$keep" \
		>"$out/vm.log" 2>&1
else
	tap_plan 35
	"$top/scripts/vm" -k "$series" --perf 7.3 -o "$out/vm" "${exports[@]}" \
		--export /tmp/p73.data -- 'keep.sh native' native.sh >"$out/vm.log" 2>&1
fi
rc=$?
sed -n 's/^\(not \)\{0,1\}ok /# guest: &/p' "$out/vm.log"
ok $rc "[guest] $series: records in both forms ($mode)"

f=$out/vm/files
gzip -dc "$f/kallsyms.gz" >"$f/kallsyms" 2>/dev/null
sym=(--symfs "$out/symfs" --kallsyms "$f/kallsyms")

for w in kernel user; do
	k=$f/keep-$w.data s=$f/st-$w.data
	two_paths "$P73" "$k" "$w"
	ok $? "[perf-7.3 deferred] wl_calls $w: perf 7.3 merges the deferred form into the two call paths, no warning"
	d=$($P73 script -i "$k" "${sym[@]}" --no-merge-callchains 2>/dev/null | grep -c "DEFERRED CALLCHAIN")
	[ "$d" -gt 0 ]
	ok $? "[perf-7.3 deferred] wl_calls $w: --no-merge-callchains shows the DEFERRED CALLCHAIN entries ($d)"
	"$pdf" stitch -i "$k" -o "$out/keep-st-$w.data" 2>"$out/keep-st-$w.err"
	ok $? "[perf-6.1 stitched] wl_calls $w: perf-defer stitch of the deferred form"
	PERF=$P73 chains "$k" "${sym[@]}" >"$out/keep-$w.73"
	PERF=$P61 chains "$out/keep-st-$w.data" "${sym[@]}" >"$out/keep-st-$w.61"
	same "$out/keep-$w.73" "$out/keep-st-$w.61" "$(unmatched "$out/keep-st-$w.err")"
	ok $? "[perf-7.3 deferred] wl_calls $w: perf 7.3 merged and perf 6.1 on our stitch, the same user chain in every sample"
	two_paths "$P61" "$s" "$w"
	ok $? "[perf-6.1 stitched] wl_calls $w: perf 6.1 reads the two call paths, no warning"
	two_paths "$P612" "$s" "$w"
	ok $? "[perf-6.12 stitched] wl_calls $w: perf 6.12 reads the two call paths, no warning"
	two_paths "$P73" "$s" "$w"
	ok $? "[perf-7.3 stitched] wl_calls $w: perf 7.3 reads the two call paths, no warning"
	PERF=$P61 chains "$s" "${sym[@]}" >"$out/st-$w.61"
	PERF=$P612 chains "$s" "${sym[@]}" >"$out/st-$w.612"
	PERF=$P73 chains "$s" "${sym[@]}" >"$out/st-$w.73"
	[ -s "$out/st-$w.61" ] && cmp -s "$out/st-$w.61" "$out/st-$w.612"
	ok $? "[perf-6.12 stitched] wl_calls $w: the same user chain in every sample as perf 6.1"
	[ -s "$out/st-$w.61" ] && cmp -s "$out/st-$w.61" "$out/st-$w.73"
	ok $? "[perf-7.3 stitched] wl_calls $w: the same user chain in every sample as perf 6.1"
done

# dw_same GUEST HOST W: the two readings of a dwarf,defer file (chains())
# give each sample through leaf_W the same user chain; there are more
# than 100 of them, and the guest's reach main.  Those outside the
# workload are shown, not held: a first frame in the vDSO, which the
# host has no copy of, or in a PLT stub, where libdw's unwinder (perf
# 7.3) stops and libunwind's (the guest's perf 6.1) goes on.
dw_same() {
	local a b

	a=$(grep "leaf_$3" "$1") b=$(grep "leaf_$3" "$2")
	echo "# samples in leaf_$3: $(grep -c . <<<"$a") in the guest's reading," \
		"$(grep -c . <<<"$b") in this one, $(grep -c ' main$' <<<"$b") of them reaching main"
	paste -d '|' "$1" "$2" | awk -F '|' -v leaf="leaf_$3" '
		$1 !~ leaf { n++; d += $1 != $2 }
		END { print "# outside the workload: " d + 0 " of " n + 0 " read differently" }'
	[ "$(grep -c ' main$' <<<"$a")" -gt 100 ] && [ "$a" = "$b" ]
}

# arm64's dumps unwound on x86-64: each perf, sample for sample as the
# guest's arm64 perf 6.1 unwound them; a perf that says it has no unwinder
# for arm64 (one built with libunwind for x86-64 alone) skips, naming it
for w in kernel user; do
	[ $dwarf = 1 ] || break
	d=$f/dw-$w.data
	for v in 6.1 6.12 7.3; do
		"$top/scripts/perf" "$v" script -i "$d" "${sym[@]}" --no-inline >/dev/null 2>"$out/dw-$w.err.$v"
		why=$(grep -m1 -i 'not supported\|no unwind' "$out/dw-$w.err.$v")
		if [ -n "$why" ]; then
			skip "[perf-$v dwarf] wl_nofp $w: perf $v unwinds arm64's dumps as arm64's perf does" \
				"perf $v says: $why"
			continue
		fi
		PERF="$top/scripts/perf $v" chains "$d" "${sym[@]}" --no-inline >"$out/dw-$w.$v"
		warn=$(PERF="$top/scripts/perf $v" warnings "$d" "${sym[@]}" --no-inline)
		[ -z "$warn" ] || echo "# warnings: $warn"
		dw_same "$f/dw-$w.chains" "$out/dw-$w.$v" "$w" && [ -z "$warn" ]
		ok $? "[perf-$v dwarf] wl_nofp $w: perf $v unwinds arm64's dumps as arm64's perf does, sample for sample, no warning"
	done
done

# the header features, and every perf without /proc; perf's own file is
# perf 6.1's on a module kernel (7.3's on 7.2, which perf 6.1 need not read)
pk=$f/perf-kernel.data
files=("$f/keep-kernel.data" "$f/st-kernel.data" "$out/keep-st-kernel.data")
if [ $mode = module ] && [ ! -f "$pk" ] && grep -q ' # SKIP no perf in this guest' "$out/vm.log"; then
	for w in "stitched" "deferred" "by perf-defer perf record -g"; do
		skip "[features] wl_calls kernel $w: the features of perf's record --call-graph fp" \
			"the guest has no perf to record with"
	done
	for v in 6.1 6.12 7.3; do
		skip "[no-proc perf-$v] perf $v reads perf-kernel.data without /proc" \
			"the guest has no perf to record it with"
	done
elif [ $mode = module ]; then
	files=("$pk" "${files[@]}")
	same_features "$pk" "$f/st-kernel.data"
	ok $? "[features] wl_calls kernel stitched: the features of perf 6.1's record --call-graph fp, the same machine"
	same_features "$pk" "$f/keep-kernel.data"
	ok $? "[features] wl_calls kernel deferred: the features of perf 6.1's record --call-graph fp, the same machine"
	same_features "$pk" "$f/pp-kernel.data"
	ok $? "[features] wl_calls kernel by perf-defer perf record -g: the features of perf 6.1's record --call-graph fp, the same machine"
fi
# the deferred form's event list: perf 6.1 lists it, without the two bits it
# does not know (whose presence would make it refuse the list); perf 7.3
# takes them from the attrs section
k=$f/keep-kernel.data
$P61 report -i "$k" --header-only >"$out/keep-header.61" 2>&1
sed -n 's/^# event : \(name = [^,]*\).*/# perf 6.1: \1/p; /[Rr]eserved/s/^/# perf 6.1: /p' "$out/keep-header.61"
grep -q '^# event : name = cpu-clock' "$out/keep-header.61" && ! grep -qi 'reserved bits' "$out/keep-header.61"
ok $? "[features] perf 6.1 lists the events of the deferred form, with no warning"
$P73 evlist -v -i "$k" 2>/dev/null | grep -oE 'defer_[a-z]+: 1' | sed 's/^/# perf 7.3 evlist -v: /' >"$out/keep-evlist.73"
cat "$out/keep-evlist.73"
[ "$(wc -l <"$out/keep-evlist.73")" = 2 ]
ok $? "[features] perf 7.3 evlist -v shows defer_callchain and defer_output"
for v in 6.1 6.12 7.3; do
	for d in "${files[@]}"; do
		script_as_proc=0
		[ "$v" = 7.3 ] || [ "$d" != "$f/keep-kernel.data" ] || script_as_proc=1
		script_as_proc=$script_as_proc no_proc_reads "$v" "$d" "${sym[@]}"
		ok $? "[no-proc perf-$v] perf $v reads $(basename "$d") without /proc"
	done
done
[ $mode = native ] || { tap_done; exit; }

# perf 7.3's own native recording, stitched by us for the older perfs
"$pdf" stitch -i "$f/p73.data" -o "$out/p73-st.data" 2>"$out/stitch.err"
rc=$?
sed 's/^/# /' "$out/stitch.err"
ok $rc "[perf-6.1 stitched] perf-defer stitch of perf 7.3's own fp,defer recording"
PERF=$P73 chains "$f/p73.data" "${sym[@]}" >"$out/p73.73"
PERF=$P61 chains "$out/p73-st.data" "${sym[@]}" >"$out/p73.61"
same "$out/p73.73" "$out/p73.61" "$(unmatched "$out/stitch.err")"
ok $? "[perf-6.1 stitched] perf 6.1 on it: the same user chain in every sample as perf 7.3 on the original"
two_paths "$P61" "$out/p73-st.data" kernel
ok $? "[perf-6.1 stitched] perf 6.1 reads it without a warning, with both call paths"
PERF=$P612 chains "$out/p73-st.data" "${sym[@]}" >"$out/p73.612"
cmp -s "$out/p73.61" "$out/p73.612"
ok $? "[perf-6.12 stitched] perf 6.12 reads the same user chain in every sample as perf 6.1"
two_paths "$P73" "$f/p73.data" kernel
ok $? "[perf-7.3 deferred] perf 7.3 reads its own recording: both call paths, no warning"
tap_done
