#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Whole call paths through perf on code without frame pointers: what a
# user sees of 'perf-defer record -g' (the module's default unwind order)
# in perf 6.1 (the host's), 6.12 and 7.3 (the trixie chroot's:
# scripts/perf).
#   tests/throughperf.sh SERIES [NAME...]   boot module kernel SERIES (6.12
#       preempt=full) and record there (tests/vm/throughperf.sh NAME...)
#   tests/throughperf.sh --files TAR        read the recordings of another
#       boot (scripts/vm --export /tmp/throughperf.tar)
# For each workload and each perf: of the samples whose innermost user
# frame is in the workload's hot code (at least 50), all but 1% have main,
# or the thread's start routine, among their user frames in 'perf
# script', leaving out as many as the recording has samples that the
# module left to perf's own in-NMI walk (samples - deferred samples of
# --stats: those taken after their kernel entry's unwind, in the
# task_work or on the way out, 0.3-9% under TCG, where the unwind is
# slow, at 4 kHz); 'perf report' of the hot code shows it too; and the
# control, recorded with --user-unwind fp, misses the 99% and perf report
# shows no main there (frame pointers are lost in the first frame without
# one), so that the test can fail.
# Samples of a thread before its first one with a frame of the program's
# own (but _start), and after its last, are left out: the loader at
# start-up, exit handlers, are rightly not under main.  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

usage="usage: tests/throughperf.sh SERIES [NAME...] | --files TAR"
case ${1:-} in
--files) [ $# = 2 ] || { echo "$usage" >&2; exit 2; }; series='' tar=$2 ;;
6.*) series=$1 tar=; shift ;;
*) echo "$usage" >&2; exit 2 ;;
esac

out=$top/build/throughperf/${series:-files}
rm -rf "$out"
mkdir -p "$out"
if [ -n "$series" ]; then
	append=
	[ "$series" != 6.12 ] || append="preempt=full no5lvl"
	"$top/scripts/vm" -k "$series" -o "$out/vm" -t 1800 --append "$append" \
		-m "$top/build/ko-$series/perf_defer.ko" --export /tmp/throughperf.tar -- \
		"throughperf.sh \$PERF_DEFER_KO $*" >"$out/vm.log" 2>&1
	rc=$?
	grep -E '^(not )?ok |^#' "$out/vm.log" | sed 's/^/# guest: /'
	tar=$out/vm/files/throughperf.tar
	[ $rc = 0 ] && [ -f "$tar" ]
	guest=$?
fi
[ -f "$tar" ] || { echo "Bail out! no recordings: $tar"; exit 1; }
if ! tar xf "$tar" -C "$out" || ! mapfile -t list <"$out/tp/list"; then
	echo "Bail out! cannot unpack $tar"
	exit 1
fi
if [ ${#list[@]} = 0 ]; then
	tap_plan 1
	ok 0 "# SKIP no workload was recorded (the guest says why)"
	exit 0
fi
gzip -d "$out"/tp/*.gz || { echo "Bail out! cannot unpack $tar"; exit 1; }
tap_plan $((${#list[@]} * 3 * 3 + ${series:+1}))
[ -z "$series" ] || ok "$guest" "[guest] $series: every workload recorded"

# The guest's files where perf looks for them: its /tests, and the
# libraries of the host (the guest's, but for a boot with --perf 6.12 or
# 7.3, whose recordings are of trixie/ alone: their libraries are there)
sym=$out/symfs
mkdir -p "$sym"
cp -a "$top/build/vm-tests" "$sym/tests"
for l in /lib/x86_64-linux-gnu/{libc.so.6,libm.so.6,libstdc++.so.6,libgcc_s.so.1} /lib64/ld-linux-x86-64.so.2; do
	install -D -m 0644 "$(readlink -f "$l")" "$sym$l"
done

# reach PERF FILE HOT ROOT PROGRAM: "reached total" of FILE as PERF script
# prints it: the samples whose innermost user frame is in HOT (a symbol,
# or @DSO), and how many of those have ROOT among their user frames,
# within each thread's first and last sample with a frame in PROGRAM
# other than _start; the first few that do not are printed as comments
reach() {
	$1 script -i "$2" --symfs "$sym" --no-inline -F tid,time,ip,sym,dso 2>/dev/null |
		awk -v hot="$3" -v root="$4" -v prog="($5)" '
		function out() {
			if (n) {
				ns++; stid[ns] = tid; st[ns] = t; shit[ns] = hit; sfound[ns] = found; schain[ns] = chain
				if (in_prog) { if (!(tid in lo)) lo[tid] = t; hi[tid] = t }
			}
			n = hit = found = in_prog = 0; chain = ""
		}
		/^[ \t]*$/ { out(); next }
		/:[ \t]*$/ { out(); tid = $1; t = $2; sub(/:$/, "", t); t += 0; next }
		$1 ~ /^ffff/ { next }
		{
			# ip, the symbol (C++ names have blanks), (dso)
			dso = $NF; s = $0
			sub(/^[ \t]*[0-9a-f]+ /, "", s); sub(/ \([^()]*\)$/, "", s)
			n++
			if (n <= 10) chain = chain " " s " " dso
			if (n == 1)
				hit = substr(hot, 1, 1) == "@" ? index(dso, substr(hot, 2) ")") > 0 : s == hot
			if (s == root) found = 1
			if (dso == prog && s != "_start") in_prog = 1
		}
		END {
			out()
			for (i = 1; i <= ns; i++) {
				if (!shit[i] || !(stid[i] in lo) || st[i] < lo[stid[i]] || st[i] > hi[stid[i]])
					continue
				total++
				if (sfound[i]) reached++
				else if (++shown <= 3) printf "# not reaching %s:%s\n", root, schain[i]
			}
			print reached + 0, total + 0
		}'
}

P61=perf
P612="$top/scripts/perf 6.12"
P73="$top/scripts/perf 7.3"
for v in 6.1 6.12 7.3; do
	case $v in
	6.1) p=$P61 ;;
	6.12) p=$P612 ;;
	7.3) p=$P73 ;;
	esac
	for l in "${list[@]}"; do
		IFS='|' read -r name hot root prog <<<"$l"
		f=$out/tp/$name.data
		reach "$p" "$f" "$hot" "$root" "$prog" >"$out/reach"
		grep '^#' "$out/reach"
		read -r got total < <(grep -v '^#' "$out/reach")
		# samples that the module left to perf's own walk
		kept=$(awk '$1 == "samples:" { s = $2 } $1 == "deferred" && $2 == "samples:" { d = $3 } END { print s - d }' \
			"$out/tp/$name.stats")
		[ "$total" -ge 50 ] && [ $(((total - got) * 100)) -le $((total + kept * 100)) ]
		ok $? "[perf-$v] $name: $got of $total samples in $hot reach $root in perf script (all but 1% and the $kept samples of the recording that kept perf's own walk; >= 50)"

		# perf report: the call graph of the hot code's entries (each
		# branch of 5% of its parent's samples or more), main or the
		# thread's start routine in it
		case $hot in
		@*) sel=(--dsos "${hot#@}") ;;
		*) sel=(--symbols "$hot") ;;
		esac
		report() {
			$p report -i "$1" --symfs "$sym" --no-inline --stdio --no-children -g fractal,5,callee \
				"${sel[@]}" 2>/dev/null | grep -cE "[- ]$root\$"
		}
		n=$(report "$f")
		[ "$n" -gt 0 ]
		ok $? "[perf-$v] $name: perf report shows $root among the callers of $hot ($n times)"

		read -r fgot ftotal < <(reach "$p" "$out/tp/$name-fp.data" "$hot" "$root" "$prog" | grep -v '^#')
		n=$(report "$out/tp/$name-fp.data")
		[ "$ftotal" -ge 50 ] && [ $((fgot * 100)) -lt $((ftotal * 99)) ] && [ "$n" = 0 ]
		ok $? "[perf-$v] $name: with --user-unwind fp, $fgot of $ftotal do, perf report shows $root $n times (the control misses the mark)"
	done
done
tap_done
