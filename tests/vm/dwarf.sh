#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# perf-defer record --call-graph dwarf,defer on a module kernel, read by
# the guest's perf (scripts/vm --perf picks 6.1, 6.12 or 7.3):
#  - on a workload without frame pointers (wl_nofp, wl_calls built with
#    -fomit-frame-pointer), fp,defer chains walked by frame pointers alone
#    (--user-unwind fp; the default order reads the unwind tables) stop
#    at once, while dwarf,defer chains reach main with symbols, the same
#    call paths as perf record --call-graph dwarf;
#  - on the syscall-heavy wl_syscall, bytes per sample against perf's own
#    --call-graph dwarf: the deferred file (one dump per kernel entry)
#    and the stitched one (one dump per sample, as perf);
#  - on wl_zapstack (stack pages not present at the system call), the
#    dumps hold those pages and the chains complete, where perf's in-NMI
#    dump stops at the first missing page;
#  - perf-defer dump shows the USER_DUMP records.  TAP.
#   dwarf.sh [ko]   (default $PERF_DEFER_KO)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source-path=SCRIPTDIR source=perfpaths.sh
. "$(dirname "$0")/perfpaths.sh"

ko=${1:-$PERF_DEFER_KO}
perf_guest 25 "$ko"

# reach FILE LEAF TOP: "n total" of the samples with a user frame in LEAF:
# how many of them have TOP among their user frames too
reach() {
	perf script $NI -i "$1" -F ip,sym 2>/dev/null | awk -v leaf="$2" -v top="$3" '
		function out() { if (l) { total++; if (t) n++ } l = t = 0 }
		/^$/ { out(); next }
		$1 !~ /^ffff/ && $2 == leaf { l = 1 }
		$1 !~ /^ffff/ && $2 == top { t = 1 }
		END { out(); print n + 0, total + 0 }'
}

# samples FILE: the number of PERF_RECORD_SAMPLE in FILE
samples() {
	perf-defer dump -i "$1" 2>/dev/null | grep -c ' PERF_RECORD_SAMPLE'
}

for mode in kernel user; do
	leaf=leaf_$mode
	perf-defer record -q --stats -F 1000 --call-graph fp,defer --user-unwind fp -o fp.$mode \
		-- /tests/wl_nofp $mode 1000 >fp.stats 2>&1
	ok $? "record --call-graph fp,defer --user-unwind fp -- wl_nofp $mode"
	read -r n total <<EOF
$(reach fp.$mode $leaf main)
EOF
	[ "$total" -gt 50 ] && [ "$n" -le $((total / 50)) ]
	ok $? "fp,defer: chains through $leaf stop before main, no frame pointers ($n of $total reach it)"

	perf-defer record -q --stats -F 1000 --call-graph dwarf,defer -o dw.$mode -- /tests/wl_nofp $mode 1000 >dw.stats 2>dw.err
	rc=$?
	sed 's/^/# /' dw.stats dw.err
	[ $rc = 0 ] && grep -qx "path: module" dw.stats
	ok $? "record --call-graph dwarf,defer -- wl_nofp $mode, with the module (rc=$rc)"
	w=$(warnings dw.$mode $NI)
	[ -z "$w" ]
	ok $? "perf report and script read it without a warning ($mode)${w:+: $w}"
	read -r n total <<EOF
$(reach dw.$mode $leaf main)
EOF
	[ "$total" -gt 50 ] && [ "$n" -ge $((total * 95 / 100)) ]
	ok $? "dwarf,defer: chains through $leaf reach main ($n of $total)"

	perf record -q -e cpu-clock -F 1000 --call-graph dwarf -o pd.$mode -- /tests/wl_nofp $mode 1000 2>/dev/null
	paths dw.$mode $NI >dw.paths
	paths pd.$mode $NI >pd.paths
	echo "# dwarf,defer paths:"; sed 's/^/#   /' dw.paths
	echo "# perf --call-graph dwarf paths:"; sed 's/^/#   /' pd.paths
	[ "$(grep -c main dw.paths)" = 2 ] && cmp -s dw.paths pd.paths
	ok $? "the two call paths to main, equal to perf record --call-graph dwarf's ($mode)"
done

# perf record --call-graph dwarf's attr: same registers, same stack size
perf evlist -v -i pd.kernel 2>/dev/null | grep -o 'sample_regs_user: [^,]*\|sample_stack_user: [^,]*\|exclude_callchain_user: [^,]*' >pd.attr
perf evlist -v -i dw.kernel 2>/dev/null | grep -o 'sample_regs_user: [^,]*\|sample_stack_user: [^,]*\|exclude_callchain_user: [^,]*' >dw.attr
sed 's/^/# perf: /' pd.attr
[ -s pd.attr ] && cmp -s pd.attr dw.attr
ok $? "the stitched attr has perf's dwarf registers, stack size and no user callchain"

# bytes per sample on a syscall-heavy workload: one dump per kernel entry
perf-defer record -q --stats --call-graph dwarf,defer --keep-deferred -o sys.keep -- /tests/wl_syscall -t 1500 >sys.stats 2>&1
ok $? "record --call-graph dwarf,defer --keep-deferred -- wl_syscall"
sed 's/^/# /' sys.stats
perf-defer record -q --call-graph dwarf,defer -o sys.dw -- /tests/wl_syscall -t 1500 2>/dev/null
ok $? "record --call-graph dwarf,defer -- wl_syscall (stitched)"
perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o sys.pd -- /tests/wl_syscall -t 1500 2>/dev/null
ok $? "perf record --call-graph dwarf -- wl_syscall"
bk=$(wc -c <sys.keep) bd=$(wc -c <sys.dw) bp=$(wc -c <sys.pd)
sk=$(samples sys.keep) sd=$(samples sys.dw) sp=$(samples sys.pd)
dumps=$(perf-defer dump -i sys.keep 2>/dev/null | grep -c ' PERF_RECORD_USER_DUMP')
awk -v bk="$bk" -v bd="$bd" -v bp="$bp" -v sk="$sk" -v sd="$sd" -v sp="$sp" -v u="$dumps" 'BEGIN {
	printf "# wl_syscall, cpu-clock 4000 Hz, 8 KiB dumps: bytes/sample\n"
	printf "#   perf --call-graph dwarf        %8d samples %10d bytes %7.0f B/sample\n", sp, bp, bp / sp
	printf "#   dwarf,defer --keep-deferred    %8d samples %10d bytes %7.0f B/sample (%d dumps, %.1f samples/dump)\n", sk, bk, bk / sk, u, sk / u
	printf "#   dwarf,defer stitched           %8d samples %10d bytes %7.0f B/sample\n", sd, bd, bd / sd
	printf "# ratio vs perf --call-graph dwarf: deferred %.3f, stitched %.3f\n", (bk / sk) / (bp / sp), (bd / sd) / (bp / sp)
}' | tee ratio.txt
awk -v bk="$bk" -v bp="$bp" -v sk="$sk" -v sp="$sp" 'BEGIN { exit !(sk > 100 && sp > 100 && (bk / sk) * 3 < bp / sp) }'
ok $? "the deferred file takes less than a third of perf's bytes per sample"
perf-defer stitch -q -i sys.keep -o sys.st 2>st.err
rc=$?
sed 's/^/# /' st.err
ok $rc "perf-defer stitch of the deferred dwarf file"
w=$(warnings sys.st $NI)
read -r n total <<EOF
$(reach sys.st reader thread_main)
EOF
[ -z "$w" ] && [ "$total" -gt 100 ] && [ "$n" -ge $((total * 95 / 100)) ]
ok $? "the stitched file reads without warnings, reader unwinds to thread_main ($n of $total)${w:+: $w}"

# stack pages not present at the system call: the dump faults them in.
# The zapped thread sits 10 frames of 4 KiB down its stack.
perf-defer record -q --stats -F 1000 --call-graph dwarf,defer,60000 -o zap.dw -- /tests/wl_zapstack -t 1500 -d 10 >zap.stats 2>&1
ok $? "record --call-graph dwarf,defer,60000 -- wl_zapstack"
perf record -q -e cpu-clock -F 1000 --call-graph dwarf,60000 -o zap.pd -- /tests/wl_zapstack -t 1500 -d 10 2>/dev/null
read -r n total <<EOF
$(reach zap.dw long_read zap_thread)
EOF
read -r pn ptotal <<EOF
$(reach zap.pd long_read zap_thread)
EOF
echo "# long_read samples reaching zap_thread: dwarf,defer $n of $total, perf dwarf $pn of $ptotal"
[ "$total" -gt 20 ] && [ "$n" -ge $((total * 95 / 100)) ]
ok $? "dwarf,defer: chains from long_read through the zapped pages reach zap_thread ($n of $total)"
[ "$ptotal" -gt 20 ] && [ "$pn" -le $((ptotal / 20)) ]
ok $? "perf's in-NMI dwarf dump stops at the zapped pages ($pn of $ptotal)"
# deep FILE: "big n", of the n samples of the zapped thread (tid != pid)
# with a stack dump, big have >= 40000 bytes
deep() {
	perf-defer dump -i "$1" 2>/dev/null | awk '
		/ PERF_RECORD_SAMPLE/ {
			s = 0
			if (match($0, /: [0-9]+\/[0-9]+:/)) {
				split(substr($0, RSTART + 2, RLENGTH - 3), t, "/")
				s = t[1] != t[2]
			}
			next
		}
		s && /ustack: size/ { n++; if ($NF >= 40000) big++; s = 0 }
		END { print big + 0, n + 0 }'
}
read -r big n <<EOF
$(deep zap.dw)
EOF
read -r pbig pn <<EOF
$(deep zap.pd)
EOF
echo "# zapped thread's samples with >= 40000 bytes of stack: dwarf,defer $big of $n, perf dwarf $pbig of $pn"
[ "$n" -gt 20 ] && [ "$big" -ge $((n * 9 / 10)) ] && [ "$pbig" -le $((pn / 20)) ]
ok $? "the deferred dumps hold the zapped pages, perf's in-NMI ones do not ($big of $n; $pbig of $pn)"

# the deferred file as perf-defer dump shows it: one USER_DUMP per entry
perf-defer dump -i sys.keep 2>/dev/null | awk '
	/ PERF_RECORD_USER_DUMP/ { u = 1; next }
	u && /user regs: mask 0xff0fff ABI 64-bit/ { r++ }
	u && /ustack: size 8192 dyn_size [1-9]/ { k++; u = 0 }
	END { print r + 0, k + 0 }' >keep.out
read -r r k <keep.out
[ "$dumps" -gt 10 ] && [ "$r" = "$dumps" ] && [ "$k" = "$dumps" ]
ok $? "perf-defer dump shows each USER_DUMP with perf's registers and an 8 KiB stack ($r, $k of $dumps)"

rmmod perf_defer
ok $? "rmmod after recording"
tap_done
