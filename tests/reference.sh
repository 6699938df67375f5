#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# reference.sh [SERIES]: the reference comparison, the same workloads
# recorded under both setups,
#  - module: Debian SERIES (6.18 if not said: the last kernel before
#    native deferral) with our module, perf-defer record --keep-deferred
#    --user-unwind fp (native deferral walks frame pointers only; the
#    module's default walk by unwind tables has tests/vm/oracle.sh);
#  - native: Debian sid 7.2, whose kernel has deferred user callchains,
#    perf 7.3 record --call-graph fp,defer;
# cpu-clock at the same frequency (tests/vm/ref.sh), both files read on the
# host by perf 7.3 (scripts/perf).  For each workload the two readings must
# agree, one TAP test each, on
#  1. the set of user call paths;
#  2. the share of samples stitched (deferred user chain merged);
#  3. the number of deferred records per kernel entry;
# and all of them on the sample_type of the files (what every record
# carries, which makes the module's files as large as native's).
# A failing test shows the two sides next to each other.  The figures are
# '# ' comments.  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

out=$top/build/reference
series=${1:-6.18}
ko=$top/build/ko-$series/perf_defer.ko
pdf=$top/recorder/perf-defer
vmt=$top/build/vm-tests
P73=("$top/scripts/perf" 7.3)
workloads=(kernel user syscall)
files=()
for w in "${workloads[@]}"; do
	files+=(--export "/tmp/ref-$w.data")
done
files+=(--export /tmp/kallsyms.gz)

# Tolerances, in the comments of the tests that use them.
sig=2		# a path holding >= sig % of a side's user chains is in its set
floor=0.5	# ... and must hold >= floor % on the other side
share_tol=1	# percentage points between the shares of samples stitched
entry_tol=0.01	# between the deferred records per kernel entry
# the workloads' own functions (tests/vm/wl_calls.c, wl_syscall.c)
own='main|alpha|beta|gamma_|delta|epsilon|leaf_user|leaf_kernel|thread_main|deep|reader'

for f in "$ko" "$pdf" "$vmt/wl_calls" "$vmt/wl_syscall" "$vmt/ref.sh" "$vmt/tap.sh"; do
	if [ ! -e "$f" ]; then
		echo "Bail out! $f missing: run make tests (and scripts/kmake --kos $series for the module)"
		exit 1
	fi
done
if [ "$top/tests/vm/ref.sh" -nt "$vmt/ref.sh" ]; then
	echo "Bail out! $vmt/ref.sh is older than tests/vm/ref.sh: run make tests"
	exit 1
fi

rm -rf "$out"
mkdir -p "$out/symfs/tests"
cp "$vmt/wl_calls" "$vmt/wl_syscall" "$out/symfs/tests/"

# --- reading one side --------------------------------------------------------

# classify COOKIES: perf 7.3 'script -F ip,sym' to one line per sample,
# CLASS TW WHAT:
#   S TW PATH  a user chain: its function names, innermost first, up to
#              main (or thread_main), runs of one function as NAME*N;
#   U TW KEY   the deferred chain left unmatched: perf 7.3 shows the cookie
#              as the one user frame, named '(cookie)' or '[unknown]', whose
#              address is one of the file's cookies (COOKIES, from entries);
#   N TW KEY   no user frame at all;
# TW: 1 if the sample was taken in task_work_run (the deferred unwind on
# the way out runs there), else 0.  KEY: the outermost kernel function
# below the entry code, where the sample was taken ('(user mode)' for
# none).  Past main, the walk goes on through whatever libc's frame left
# in rbp: cut there, on both sides.
classify() {
	awk '
	FILENAME == ARGV[1] { cookie[$1]; next }
	function flush(i, p, last, n) {
		if (!nk && !nu)
			return
		if (nu == 1 && ip1 in cookie) {
			print "U " tw " " (key == "" ? "(user mode)" : key)
		} else if (nu == 0) {
			print "N " tw " " (key == "" ? "(user mode)" : key)
		} else {
			p = last = ""
			for (i = 1; i <= nu; i++) {
				if (us[i] != last) {
					if (last != "")
						p = p (p == "" ? "" : ";") last (n > 1 ? "*" n : "")
					last = us[i]
					n = 0
				}
				n++
				if (us[i] == "main" || us[i] == "thread_main")
					break
			}
			print "S " tw " " p (p == "" ? "" : ";") last (n > 1 ? "*" n : "")
		}
		nk = nu = tw = 0
		key = ""
	}
	/^$/ { flush(); next }
	$1 ~ /^ffff/ {
		nk++
		if ($2 == "task_work_run")
			tw = 1
		if ($2 !~ /^(entry_|do_syscall_|x64_sys_call|asm_|do_int80|ret_from_fork)/)
			key = $2
		next
	}
	{
		us[++nu] = $2
		if (nu == 1)
			ip1 = $1
	}
	END { flush() }' "$1" -
}

# entries COOKIES LO HI: 'perf-defer dump' of a file (ours or perf 7.3's:
# it counts the records exactly) to one line:
#   SAMPLES DEFERRED ENTRIES RECORDS EXITS ORPHANS HISTOGRAM TW DEFTW
# DEFERRED: samples whose callchain holds PERF_CONTEXT_USER_DEFERRED and a
# cookie; ENTRIES: the distinct (tid, cookie) pairs they refer to, one per
# kernel entry; RECORDS: PERF_RECORD_CALLCHAIN_DEFERRED; EXITS: entries
# with no record that are their thread's last (it exited without going
# back to user space, where the deferred chain is taken); ORPHANS: records
# no sample refers to; HISTOGRAM: records:entries pairs, comma separated;
# TW, DEFTW: the samples, and the deferred ones, with a kernel address in
# [LO, HI) (task_work_run's, 16 hex digits) in their callchain.  The
# cookies, in hexadecimal as perf prints addresses, go to COOKIES.
entries() {
	awk -v cookies="$1" -v lo="$2" -v hi="$3" '
	function endsample() {
		if (insample && intw) {
			ntw++
			if (def)
				ndtw++
		}
		insample = intw = def = 0
	}
	/PERF_RECORD_/ { endsample() }
	/PERF_RECORD_SAMPLE/ {
		ns++
		insample = 1
		prev = ""
		t = ($3 ~ /^\[/) ? $1 : $2
		match($0, /: [0-9]+\/[0-9]+:/)
		tid = substr($0, RSTART + 2, RLENGTH - 3)
		sub(/.*\//, "", tid)
		next
	}
	/PERF_RECORD_CALLCHAIN_DEFERRED/ {
		match($0, /: [0-9]+\/[0-9]+:/)
		r = substr($0, RSTART + 2, RLENGTH - 3)
		sub(/.*\//, "", r)
		c = $NF
		sub(/^0x/, "", c)
		rec[r "/" c]++
		nr++
		next
	}
	insample && /^\.\.\.\.\. / {
		if (lo != "" && $3 >= lo && $3 < hi)
			intw = 1
		if (prev == "fffffffffffffd80") {
			c = $3
			sub(/^0+/, "", c)
			if (c == "")
				c = "0"
			k = tid "/" c
			cookie[c]
			def = 1
			nd++
			ent[k] = 1
			if (!(tid in lt) || t + 0 >= lt[tid] + 0) {
				lt[tid] = t
				last[tid] = k
			}
		}
		prev = $3
	}
	END {
		endsample()
		for (k in ent) {
			ne++
			h[(k in rec) ? rec[k] : 0]++
		}
		for (i in last)
			if (!(last[i] in rec))
				nx++
		for (k in rec)
			if (!(k in ent))
				no += rec[k]
		printf "" >cookies
		for (c in cookie)
			print c >cookies
		hist = ""
		for (i in h)
			hist = hist (hist == "" ? "" : ",") i ":" h[i]
		print ns + 0, nd + 0, ne + 0, nr + 0, nx + 0, no + 0, (hist == "" ? "-" : hist),
			ntw + 0, ndtw + 0
	}'
}

# reading SIDE NAME: read SIDE's recording of workload NAME with perf 7.3
# and 'perf-defer dump'; leaves in $out/SIDE/NAME.*:
#   .script  perf 7.3's stitched reading, .cls  classify's lines,
#   .paths   'COUNT PATH' of the user chains through the workload's own
#            functions, .others  those of the other chains,
#   .entries, .cookies  what entries says
reading() {
	local d=$out/$1/files b=$out/$1/$2

	[ -s "$d/ref-$2.data" ] || return 1
	[ -s "$d/kallsyms" ] || gzip -dc "$d/kallsyms.gz" >"$d/kallsyms" || return 1
	"${P73[@]}" script -i "$d/ref-$2.data" --symfs "$out/symfs" --kallsyms "$d/kallsyms" \
		-F ip,sym >"$b.script" 2>"$b.err" || return 1
	# task_work_run: from its address to the next symbol's
	read -r lo hi < <(awk '$3 == "task_work_run" && lo == "" { lo = $1 } { a[NR] = $1 }
		END { for (i in a) if (lo != "" && a[i] > lo && (hi == "" || a[i] < hi)) hi = a[i]
		      print lo, hi }' "$d/kallsyms")
	"$pdf" dump -i "$d/ref-$2.data" | entries "$b.cookies" "$lo" "$hi" >"$b.entries"
	[ "${PIPESTATUS[0]}" = 0 ] || return 1
	classify "$b.cookies" <"$b.script" >"$b.cls"
	sed -n 's/^S [01] //p' "$b.cls" | awk -v own="^($own)\$" '{
		ours = 0
		n = split($0, fr, ";")
		for (i = 1; i <= n; i++) {
			sub(/\*[0-9]+$/, "", fr[i])
			if (fr[i] ~ own)
				ours = 1
		}
		print (ours ? "W " : "O ") $0
	}' | sort | uniq -c | sort -k1,1nr -k3 >"$b.all"
	sed -n 's/^\( *[0-9]*\) W /\1 /p' "$b.all" >"$b.paths"
	sed -n 's/^\( *[0-9]*\) O /\1 /p' "$b.all" >"$b.others"
	[ -s "$b.cls" ] && [ -s "$b.entries" ]
}

# --- the three comparisons ---------------------------------------------------

# verdict RC WHAT FN A B MESSAGE: the TAP line of a comparison; when it
# failed (RC != 0), first WHAT: FN A and FN B next to each other
verdict() {
	local rc=$1 what=$2 fn=$3 a=$4 b=$5

	if [ "$rc" != 0 ]; then
		echo "# $what, module | native:"
		diff -y -t -W 120 <("$fn" "$a") <("$fn" "$b") | sed 's/^/#   /'
	fi
	ok "$rc" "$6"
}

# same_paths NAME A B: A and B (file prefixes, module then native) have the
# same set of user call paths.
#
# The paths compared are those through the workload's own functions
# ($own): the chains of startup (exec, the static libc's init), exit and
# libc code without a frame of its own (memset: the walk starts in its
# caller's caller) are left out, and only counted.  How long those take
# depends on the kernel and on the emulation, not on who unwinds the user
# stack: under TCG on a loaded host, an exec's TLB shootdown has spun for
# 15% of a run on one side and 0.6% on the other.
#
# The workloads spend their time on a few known paths (wl_calls: its two
# leaves, each about half; wl_syscall: the reader 20 frames down), and a
# little on paths that are noise: a caller between two calls, a function's
# prologue, where the frame-pointer walk skips the caller, each well under
# 1%, and clock_gettime (a system call under TCG: about 2%).  So a path
# counts when it holds at least $sig % of a side's chains, and then must
# hold at least $floor % on the other side: a path near $sig % on both is
# not a difference, one the other side lacks or all but lacks is.  A
# chain cut short (or walked too far) makes a path of its own.
same_paths() {
	local a=$2 b=$3

	awk 'FILENAME == ARGV[1] { n1 += $1; next } { n2 += $1 }
		END { printf "# %d and %d samples with a user chain outside the workload functions " \
			"(module, native), not compared\n", n1, n2 }' "$a.others" "$b.others"
	awk -v sig="$sig" -v floor="$floor" -v sort='sort -k1,1nr | cut -d" " -f2-' '
		FNR == 1 { f++ }
		{ n = $1; $1 = ""; p = substr($0, 2); c[f, p] = n; tot[f] += n; all[p] = 1 }
		END {
			printf "# %d and %d samples on workload paths (module, native); " \
				"paths >= %s%% on either side:\n", tot[1], tot[2], floor
			printf "#   %7s %7s  %s\n", "module", "native", "user call path, innermost first"
			fflush()
			for (p in all) {
				s1 = tot[1] ? 100 * c[1, p] / tot[1] : 0
				s2 = tot[2] ? 100 * c[2, p] / tot[2] : 0
				if (s1 >= floor || s2 >= floor)
					printf "%.4f #   %6.2f%% %6.2f%%  %s\n", s1 + s2, s1, s2, p | sort
				if ((s1 >= sig && s2 < floor) || (s2 >= sig && s1 < floor))
					bad++
				if (s1 >= sig) n1++
				if (s2 >= sig) n2++
			}
			close(sort)
			exit bad > 0 || !n1 || !n2 || tot[1] < 100 || tot[2] < 100
		}' "$a.paths" "$b.paths"
	verdict $? "the paths >= $sig %" sig_paths "$a.paths" "$b.paths" \
		"$1: the same user call paths (>= $sig % on one side, >= $floor % on the other)"
}

# sig_paths FILE.paths: the paths that hold >= $sig % of the samples
sig_paths() {
	awk -v sig="$sig" '{ n[NR] = $1; t += $1; $1 = ""; p[NR] = substr($0, 2) }
		END { for (i = 1; i <= NR; i++) if (100 * n[i] >= sig * t) print p[i] }' "$1" | sort
}

# same_share NAME A B: the same share of samples stitched.
#
# A sample is stitched when its deferred user chain was merged: deferred
# (the file holds its cookie: 'perf-defer dump') and not left unmatched in
# perf 7.3's reading.  The share is of the samples not taken in
# task_work_run: those are samples of the deferred unwind itself, on the
# way out; how many there are depends on how long each kernel's unwinder
# runs under the emulation (3% of one run natively, 0.7% with the module),
# and the two treat them differently: natively, one taken after the
# entry's record was written keeps the entry's cookie and is left
# unmatched; the module gives it a new cookie and a record of its own.
# They are counted apart and printed.
#
# Left unmatched among the others are the samples of a kernel entry that
# never goes back to user space (exit), and those perf 7.3 meets just
# before a record of the previous entry that carries the same time (the
# emulated clock repeats values), a few per run, how many depends on
# timing.  A real difference, a kind of entry or of sample that one side
# leaves without its user chain, costs whole percents (wl_calls user:
# every sample is an interrupt entry; a wl_syscall entry holds about ten
# samples), so shares within $share_tol percentage point are the same.
same_share() {
	local a=$2 b=$3

	awk -v tol="$share_tol" '
		FNR == 1 { f++; i = int((f + 1) / 2) }
		FILENAME ~ /entries$/ { all[i] = $1 - $8; def[i] = $2 - $9; tw[i] = $8; next }
		$1 == "U" { u[i, $2]++ }
		END {
			for (i = 1; i <= 2; i++) {
				st = def[i] - u[i, 0]
				s[i] = all[i] ? 100 * st / all[i] : 0
				printf "# %s: %d of %d samples stitched (%.2f%%), %d left unmatched, " \
					"%d not deferred; and %d in task_work_run, %d of them unmatched\n",
					i == 1 ? "module" : "native", st, all[i], s[i], u[i, 0], all[i] - def[i],
					tw[i], u[i, 1]
			}
			diff = s[1] - s[2]
			exit (diff > tol || -diff > tol) || !s[1] || !s[2]
		}' "$a.entries" "$a.cls" "$b.entries" "$b.cls"
	verdict $? "the samples not stitched, by where in the kernel they were taken" \
		not_stitched "$a" "$b" \
		"$1: the same share of samples stitched outside task_work_run (within $share_tol point)"
}

# not_stitched PREFIX: the number of samples not deferred, then 'COUNT
# CLASS KEY' of the unmatched (U) samples and those without a user frame
# (N), outside task_work_run
not_stitched() {
	awk '{ print $1 - $8 - $2 + $9 " not deferred" }' "$1.entries"
	sed -n 's/^\([UN]\) 0 /\1 /p' "$1.cls" | sort | uniq -c | sort -k1,1nr -k2 | sed 's/^ *//'
}

# same_per_entry NAME A B: the same number of deferred records per kernel
# entry, RECORDS / (ENTRIES - EXITS) (see entries()): an entry that never
# goes back to user space has no record on either side by design.  Both
# should be exactly 1.  Records lost to a full ring buffer on a loaded
# emulated machine may take a few tenths of a percent off one side; a
# real difference (a record per sample, none for an entry of several
# samples, one per event twice) moves it by far more than $entry_tol.
same_per_entry() {
	local a=$2 b=$3

	awk -v tol="$entry_tol" '
		{
			f++
			e[f] = $3 - $5
			r[f] = e[f] > 0 ? $4 / e[f] : 0
			printf "# %s: %d records, %d kernel entries (%d more at exit), %d orphan records: " \
				"%.4f records per entry; %.1f samples per entry\n", f == 1 ? "module" : "native",
				$4, e[f], $5, $6, r[f], $3 ? $2 / $3 : 0
		}
		END {
			diff = r[1] - r[2]
			exit (diff > tol || -diff > tol) || !e[1] || !e[2]
		}' "$a.entries" "$b.entries"
	verdict $? "kernel entries by their number of records (RECORDS:ENTRIES)" \
		histogram "$a.entries" "$b.entries" \
		"$1: the same number of deferred records per kernel entry (within $entry_tol)"
}

# histogram FILE.entries: its histogram, one RECORDS:ENTRIES a line
histogram() {
	awk '{ print $7 }' "$1" | tr ',' '\n' | sort -n
}

# compare NAME A B: the three tests for workload NAME
compare() {
	same_paths "$@"
	same_share "$@"
	same_per_entry "$@"
}

# --- run -------------------------------------------------------------------------

# stype FILE: the events' sample_type as perf 7.3 lists them
stype() {
	"${P73[@]}" evlist -v -i "$1" 2>/dev/null | sed -n 's/.* sample_type: \([A-Z_|]*\).*/\1/p'
}

# data_bytes FILE: the size of the data section (the header's data.size)
data_bytes() { od -An -t u8 -j 48 -N 8 "$1" | tr -d ' '; }

# same_layout: the same sample_type in both files of each workload (its
# fields, 8 bytes each, are in every sample and every record's
# sample_id); the bytes per sample as figures
same_layout() {
	local w a b bad=0 n

	for w in "${workloads[@]}"; do
		a=$out/module/files/ref-$w.data b=$out/native/files/ref-$w.data
		for f in "$a" "$b"; do
			n=$("${P73[@]}" report --stats -i "$f" 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
			echo "# $w, ${f#"$out"/}: sample_type $(stype "$f"), $(data_bytes "$f") bytes of data," \
				"$n samples: $(awk -v b="$(data_bytes "$f")" -v n="$n" 'BEGIN { if (n) printf "%.1f", b / n }') bytes per sample"
		done
		[ -n "$(stype "$a")" ] && [ "$(stype "$a")" = "$(stype "$b")" ] || bad=1
	done
	ok $bad "the same sample_type as native in every workload's files"
}

tap_plan $((3 + 3 * ${#workloads[@]}))

# guest SIDE SERIES WHAT VM-ARGS...: boot the recordings of one side, one
# TAP test; its guest's TAP lines, and on failure what scripts/vm said
# (timeout, splat, a file that did not come back), as comments
guest() {
	local side=$1 series=$2 what=$3 rc

	shift 3
	"$top/scripts/vm" -k "$series" -o "$out/$side" "$@" "${files[@]}" -- "ref.sh $side" \
		>"$out/$side.log" 2>&1
	rc=$?
	sed -n "s/^\\(not \\)\\{0,1\\}ok /# $side guest: &/p" "$out/$side.log"
	[ $rc = 0 ] || grep -Ev '^(not )?ok |^#|^TAP version|^1\.\.' "$out/$side.log" |
		tail -n 30 | sed 's/^/# /'
	ok $rc "$side guest ($series): $what of ${workloads[*]}"
}

guest module "$series" "perf-defer record --keep-deferred" -m "$ko"
guest native 7.2 "perf 7.3 record --call-graph fp,defer" --perf 7.3

for w in "${workloads[@]}"; do
	echo "# == $w"
	if reading module "$w" && reading native "$w"; then
		compare "$w" "$out/module/$w" "$out/native/$w"
	else
		echo "# no recording of $w on one side, or perf 7.3 or perf-defer dump could not" \
			"read it (see $out)"
		for t in "the same user call paths" "the same share of samples stitched" \
			"the same number of deferred records per kernel entry"; do
			ok 1 "$w: $t"
		done
	fi
done
same_layout
tap_done
