#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Files made in guests, read on the host by perf 6.1 (the host's), and
# perf 6.12 and 7.3 (trixie and trixie-backports, in the trixie chroot:
# scripts/perf); the stitched files by all three:
#  - module kernel (6.1): --keep-deferred is merged by perf 7.3 into the
#    same stacks, sample for sample, as our stitch gives perf 6.1, and
#    perf 7.3 --no-merge-callchains shows the DEFERRED CALLCHAIN entries;
#  - native kernel (sid 7.x) with perf 7.3: perf-defer record works with no
#    module; perf-defer stitch turns perf 7.3's own fp,defer recording into
#    a file perf 6.1 reads with the same stacks.
# TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/vm/tap.sh"
. "$top/tests/vm/perfpaths.sh"

# same A B UNMATCHED: the two readings give each sample the same user
# chain.  A sample no record matched keeps, in perf 7.3, its cookie as one
# [unknown] user frame; our stitch drops the pair: there must be exactly
# UNMATCHED of those.
same() {
	paste -d '|' "$1" "$2" | awk -F '|' -v um="$3" '
		$1 == "1:" && $2 == "0:" { u++; next }
		$1 != $2 { bad++; if (bad <= 3) print "# differs: " $1 " | " $2 }
		END { print "# " NR " samples, " u + 0 " unmatched (stitch: " um "), " bad + 0 " differ"
		      exit bad > 0 || u != um || NR < 100 }'
}

# unmatched ERRFILE: the count perf-defer stitch warned about
unmatched() {
	sed -n 's/.*warning: \([0-9]*\) of .*/\1/p' "$1" | grep . || echo 0
}

out=$top/build/readers
rm -rf "$out"
mkdir -p "$out/symfs/tests"
cp "$top/build/vm-tests/wl_calls" "$out/symfs/tests/"
P61=perf
P612="$top/scripts/perf 6.12"
P73="$top/scripts/perf 7.3"
pdf="$top/recorder/perf-defer"

tap_plan 14
"$top/scripts/vm" -k 6.1 -o "$out/keep" -m "$top/build/ko-6.1/perf_defer.ko" \
	--export /tmp/keep.data --export /tmp/stitched.data --export /tmp/kallsyms.gz -- \
	keep.sh >"$out/keep.log" 2>&1
ok $? "6.1 guest: --keep-deferred and stitched recordings"
"$top/scripts/vm" -k 7.2 --perf 7.3 -o "$out/native" \
	--export /tmp/nat.data --export /tmp/natk.data --export /tmp/p73.data \
	--export /tmp/kallsyms.gz -- native.sh >"$out/native.log" 2>&1
rc=$?
sed -n 's/^\(not \)\{0,1\}ok /# guest: &/p' "$out/native.log"
ok $rc "native guest: perf-defer record without the module, perf 7.3 fp,defer"

# guest_syms DIR: perf options for a guest's files: its binaries, its kernel
guest_syms() {
	gzip -dc "$1/kallsyms.gz" >"$1/kallsyms" 2>/dev/null
	sym=(--symfs "$out/symfs" --kallsyms "$1/kallsyms")
}

k=$out/keep/files
guest_syms "$k"
n=$(PERF=$P73 paths "$k/keep.data" "${sym[@]}" | grep -c .)
[ "$n" = 2 ]
ok $? "perf 7.3 merges our deferred form into the workload's two call paths ($n)"
w=$(PERF=$P73 warnings "$k/keep.data" "${sym[@]}")
[ -z "$w" ]
ok $? "perf 7.3 reads it without a warning${w:+: $w}"
d=$($P73 script -i "$k/keep.data" "${sym[@]}" --no-merge-callchains 2>/dev/null | grep -c "DEFERRED CALLCHAIN")
[ "$d" -gt 0 ]
ok $? "perf 7.3 --no-merge-callchains shows the DEFERRED CALLCHAIN entries ($d)"
"$pdf" stitch -i "$k/keep.data" -o "$out/keep-st.data" 2>"$out/keep-st.err"
ok $? "perf-defer stitch of our deferred form"
PERF=$P73 chains "$k/keep.data" "${sym[@]}" >"$out/keep.73"
PERF=$P61 chains "$out/keep-st.data" "${sym[@]}" >"$out/keep.61"
same "$out/keep.73" "$out/keep.61" "$(unmatched "$out/keep-st.err")"
ok $? "perf 7.3 merged and perf 6.1 stitched: the same user chain in every sample"
n=$(PERF=$P61 paths "$k/stitched.data" "${sym[@]}" | grep -c .)
[ "$n" = 2 ] && [ -z "$(PERF=$P61 warnings "$k/stitched.data" "${sym[@]}")" ]
ok $? "perf 6.1 reads the stitched recording ($n paths)"
n=$(PERF=$P612 paths "$k/stitched.data" "${sym[@]}" | grep -c .)
[ "$n" = 2 ] && [ -z "$(PERF=$P612 warnings "$k/stitched.data" "${sym[@]}")" ]
ok $? "perf 6.12 reads the stitched recording ($n paths)"

v=$out/native/files
guest_syms "$v"
n=$(PERF=$P73 paths "$v/natk.data" "${sym[@]}" | grep -c .)
[ "$n" = 2 ]
ok $? "perf 7.3 merges perf-defer's native --keep-deferred recording ($n paths)"
"$pdf" stitch -i "$v/p73.data" -o "$out/p73-st.data" 2>"$out/stitch.err"
rc=$?
sed 's/^/# /' "$out/stitch.err"
ok $rc "perf-defer stitch of perf 7.3's own fp,defer recording"
PERF=$P73 chains "$v/p73.data" "${sym[@]}" >"$out/p73.73"
PERF=$P61 chains "$out/p73-st.data" "${sym[@]}" >"$out/p73.61"
same "$out/p73.73" "$out/p73.61" "$(unmatched "$out/stitch.err")"
ok $? "perf 6.1 on the stitched file: the same user chain in every sample as perf 7.3"
w=$(PERF=$P61 warnings "$out/p73-st.data" "${sym[@]}")
n=$(PERF=$P61 paths "$out/p73-st.data" "${sym[@]}" | grep -c .)
[ -z "$w" ] && [ "$n" = 2 ]
ok $? "perf 6.1 reads it without a warning, with both call paths ($n)${w:+: $w}"
PERF=$P612 chains "$out/p73-st.data" "${sym[@]}" >"$out/p73.612"
cmp -s "$out/p73.61" "$out/p73.612"
ok $? "perf 6.12 reads the same user chain in every sample as perf 6.1"
tap_done
