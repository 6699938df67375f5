#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The module's table walk against perf's own DWARF unwinder, kernel entry
# by kernel entry.  The workload shares a CPU with a busy loop, so the
# scheduler preempts it at the end of timer interrupts, anywhere in its
# code.  Two recorders attach to it, each sampling every one of its
# context switches (the sampling interrupt of one event is never the
# other's, but a context switch is both's):
#  - one with --call-graph fp,defer --user-unwind LIST: the module walks
#    the user stack with SFrame / .eh_frame / frame pointers;
#  - one with --call-graph dwarf,defer: the module dumps the user
#    registers and stack, and perf script unwinds them (libdw or
#    libunwind, as the guest's perf was built).
# The module gives every session one cookie per kernel entry, and both
# records of an entry are made in the same task_work, so each dump is of
# exactly the stack that the table walk read.  The two user chains must
# be equal on at least 99% of the entries; each difference is printed
# side by side.  The workloads are built as distributions build theirs
# (-O2 -fomit-frame-pointer, dynamically linked), some with SFrame too
# (-Wa,--gsframe: version 1 from bookworm's binutils, version 2 from
# trixie's), or as the other tests' no-frame-pointer ones.  With --trixie,
# the same programs built by trixie's toolchain (gcc-14, binutils 2.44:
# SFrame version 2), on trixie's glibc, libstdc++ and libgcc_s
# (tests/vm/Makefile: trixie/) instead.  TAP.
#   oracle.sh [--trixie] [ko [NAME...]]   (default $PERF_DEFER_KO; all
#   workloads of the set; a NAME may end in *)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

trixie=0
[ "${1:-}" = --trixie ] && trixie=1 && shift
ko=${1:-$PERF_DEFER_KO}
[ $# -gt 0 ] && shift
# name|--user-unwind|command
WORKLOADS='dyn-qsort|eh_frame,fp|wl_dyn main 4000
dyn-thread|eh_frame,fp|wl_dyn thread 4000
dyn-bsearch|eh_frame,fp|wl_dyn bsearch 4000
dyn-stdio|eh_frame,fp|wl_dyn stdio 4000
cxx-throw|eh_frame,fp|wl_cxx 4000
dyn-sframe|sframe,eh_frame,fp|wl_dyn_sframe main 4000
cxx-sframe|sframe,eh_frame,fp|wl_cxx_sframe 4000
static-nofp|eh_frame,fp|wl_nofp user 4000
static-sframe|sframe,eh_frame,fp|wl_nofp_sframe user 4000
static-sframe2|sframe,eh_frame,fp|wl_nofp_sframe2 user 4000
vdso|eh_frame,fp|wl_calls vdso 4000'
if [ $trixie = 1 ]; then
	WORKLOADS=$(for s in '' _sframe; do
		u=eh_frame,fp
		[ -n "$s" ] && u=sframe,$u
		for m in main thread bsearch stdio vdso; do
			echo "trixie-dyn${s:+-sframe}-$m|$u|/tests/trixie/wl_dyn$s $m 4000"
		done
		echo "trixie-cxx${s:+-sframe}-throw|$u|/tests/trixie/wl_cxx$s 4000"
	done)
fi
if [ $# -gt 0 ]; then
	WORKLOADS=$(select_named "$WORKLOADS" "$@")
fi
tap_plan $(($(echo "$WORKLOADS" | wc -l) * 2))
cd /tmp || exit 1
tap_insmod "$ko"
perf version | sed 's/^/# /'

# The awk functions below: hex words without 0x or leading zeros, and
# their values (busybox awk has no strtonum, but takes "0x..." strings
# as numbers, exactly up to 2^53).
AWKLIB='
function norm(h) { h = tolower(h); sub(/^0x/, "", h); sub(/^0+/, "", h); return h == "" ? "0" : h }
function val(h) { return ("0x" norm(h)) + 0 }'

# cookies FILE: "cookie ip ip ..." for each deferred chain of the
# deferred-form FILE, user frames only
cookies() {
	perf-defer dump -i "$1" | awk "$AWKLIB"'
		function out() { if (c != "") print c, ips; c = ""; ips = "" }
		/PERF_RECORD_/ { out() }
		/PERF_RECORD_CALLCHAIN_DEFERRED/ { c = norm($NF); ips = ""; next }
		c != "" && /^\.\.\.\.\. / && $3 !~ /^ffffffff/ { ips = ips " " norm($3) }
		END { out() }'
}

# sample_cookies FILE: "tid time cookie" for each sample of the deferred-
# form FILE: the word after PERF_CONTEXT_USER_DEFERRED in its chain
sample_cookies() {
	perf-defer dump -i "$1" | awk "$AWKLIB"'
		/PERF_RECORD_SAMPLE/ {
			want = 0; tid = ""; t = ""
			for (i = 2; i <= NF; i++) {
				if (t == "" && $i ~ /^0x/) t = $(i - 1)
				if ($i ~ /^[0-9]+\/[0-9]+:$/) { split($i, pt, "/"); tid = pt[2] + 0 }
			}
			next
		}
		/^\.\.\.\.\. / && want { print tid, t, norm($3); want = 0; next }
		/^\.\.\.\.\. / && $3 == "fffffffffffffd80" { want = 1 }'
}

# dwarf_chains FILE: "tid time ip ip ..." for each sample of the stitched
# FILE, as perf unwinds its dump (user frames only)
dwarf_chains() {
	# --no-inline: the guest has no addr2line
	perf script --no-inline --ns -i "$1" -F tid,time,ip 2>/dev/null | awk "$AWKLIB"'
		function out() { if (h != "") print h ips; h = ""; ips = "" }
		/^[ \t]*$/ { out(); next }
		/:[ \t]*$/ { out(); t = $2; sub(/:$/, "", t); split(t, st, "."); h = ($1 + 0) " " st[1] st[2]; next }
		$1 !~ /^ffff/ { ips = ips " " norm($1) }
		END { out() }'
}

# sframe_frames: the module's count of caller frames found from SFrame
sframe_frames() {
	perf-defer status | awk '$1 == "unwind:" { for (i = 2; i < NF; i++) if ($i == "frames-sframe") print $(i + 1) }'
}

run() {
	name=$1 unwind=$2
	shift 2
	rm -f fp.data dw.data dw.st
	sf0=$(sframe_frames)
	taskset -c 1 sh -c 'while :; do :; done' &
	hog=$!
	taskset -c 1 "$@" >/dev/null 2>&1 &
	wl=$!
	sleep 0.3
	cat /proc/$wl/maps >maps.txt
	perf-defer record -q -p $wl -e context-switches -c 1 --call-graph fp,defer \
		--user-unwind "$unwind" --keep-deferred -o fp.data >fp.log 2>&1 &
	r1=$!
	perf-defer record -q -p $wl -e context-switches -c 1 --call-graph dwarf,defer,32768 \
		--keep-deferred -o dw.data >dw.log 2>&1 &
	r2=$!
	wait $wl
	kill $hog
	kill -INT $r1 $r2
	wait $r1
	rc1=$?
	wait $r2
	rc2=$?
	sed 's/^/# fp: /' fp.log
	sed 's/^/# dwarf: /' dw.log
	[ $rc1 = 0 ] && [ $rc2 = 0 ] && perf-defer stitch -i dw.data -o dw.st >/dev/null 2>&1
	ok $? "$name: both recorders ran on the same task ($*)"

	cookies fp.data >walk.txt
	sample_cookies dw.data >scookie.txt
	dwarf_chains dw.st >dwarf.txt
	# walk.txt: cookie ips; scookie.txt: tid time cookie; dwarf.txt: tid time ips
	# perf script 6.1 prints an address of a mapped file as its offset in
	# the file (for [vdso], in the vDSO): the walk's, through the maps,
	# too; perf 7.3 prints the address itself.  Either is agreement.
	# Both unwinders may end in a word that is no return address: equal
	# words are agreement all the same.
	awk -v name="$name" "$AWKLIB"'
		FILENAME == ARGV[1] {
			split($1, r, "-"); nm++; lo[nm] = val(r[1]); hi[nm] = val(r[2]); pg[nm] = val($3)
			next
		}
		FILENAME == ARGV[2] { c = $1; $1 = ""; walk[c] = $0; next }
		FILENAME == ARGV[3] { ck[$1 " " $2] = $3; next }
		{
			k = $1 " " $2; if (!(k in ck)) next
			c = ck[k]; if (!(c in walk) || (c in seen)) next
			seen[c] = 1; $1 = $2 = ""
			n = split(walk[c], w, " "); m = split($0, p, " ")
			same = n == m
			for (i = 1; i <= n; i++) {
				# not in a mapping (a return address gone wrong): as is
				a = val(w[i]); wo[i] = a
				for (j = 1; j <= nm; j++)
					if (a >= lo[j] && a < hi[j]) { wo[i] = a - lo[j] + pg[j]; break }
				# perf gives a return address minus 1, the walk the address
				d = val(p[i])
				if (same && wo[i] != d && a != d && (i == 1 || (wo[i] != d + 1 && a != d + 1)))
					same = 0
			}
			total++
			if (same) { eq++; next }
			if (++shown > 5) next
			printf "# %s: entry %s differs: table walk (%d: address, file offset) | perf dwarf (%d)\n", name, c, n, m
			for (i = 1; i <= n || i <= m; i++)
				printf "#   %-16s %-10s | %s\n", i <= n ? w[i] : "", i <= n ? sprintf("%.0f", wo[i]) : "", i <= m ? sprintf("%.0f", val(p[i])) : ""
		}
		END { printf "%d %d\n", eq, total }' maps.txt walk.txt scookie.txt dwarf.txt >cmp.txt
	grep '^#' cmp.txt
	read -r eq total <<EOF
$(grep -v '^#' cmp.txt)
EOF
	good=0
	if ! [ "$total" -ge 50 ] || ! [ $((eq * 100)) -ge $((total * 99)) ]; then
		for f in maps.txt walk.txt scookie.txt dwarf.txt; do
			echo "# $f: $(wc -l <$f) lines"
			head -3 $f | cut -c1-150 | sed 's/^/#   /'
		done
		good=1
	fi
	# where SFrame is asked for first, it must have given frames
	sf=$(($(sframe_frames) - sf0))
	echo "# $name: $sf caller frames from SFrame"
	case $unwind in
	sframe*) [ "$sf" -gt 0 ] || good=1 ;;
	esac
	ok $good "$name ($unwind): the table walk equals perf's DWARF unwind on $eq of $total entries (>= 99%, >= 50 entries)"
}

while IFS='|' read -r name unwind cmd; do
	# built only where the trixie chroot has a gcc (SFrame version 2)
	if ! command -v "${cmd%% *}" >/dev/null; then
		ok 0 "# SKIP $name: ${cmd%% *} not built (tests/vm/Makefile says why)"
		ok 0 "# SKIP $name: ${cmd%% *} not built"
		continue
	fi
	# shellcheck disable=SC2086 # the command's words
	run "$name" "$unwind" $cmd </dev/null
done <<EOF
$WORKLOADS
EOF
rmmod perf_defer
tap_done
