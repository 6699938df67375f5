#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# subcmds.sh DIR VERSION...: every perf subcommand a user runs on a
# recording, run by each perf VERSION (6.1, 6.12, 7.3: scripts/perf) on our
# files and on perf's own, once with /proc mounted and once without
# (scripts/perf --no-proc: a plain chroot, a minimal container).
#
# DIR is what tests/readers.sh left of a module kernel (build/readers/SERIES):
# what its guest recorded of 'wl_calls kernel' (tests/vm/keep.sh) and the
# guest's kallsyms in DIR/vm/files, the workload in DIR/symfs:
#   perf-kernel.data     perf's own: the guest perf 6.1's record --call-graph fp
#   st-kernel.data       perf-defer record, stitched
#   pp-kernel.data       perf-defer perf record -g (perf 6.1 in the guest)
#   keep-kernel.data     perf-defer record --keep-deferred: the deferred form,
#                        for perf >= 6.19 only (older perfs cannot script it)
# and in DIR itself keep-st-kernel.data, perf-defer stitch of the last.
#
# The subcommands (SUBCMDS below): report (--stdio; --sort dso,sym and
# socket,core,time; -g caller and callee; --time; --header-only), script
# (default fields, -F time,period,ip,sym,dso, --ns; not cpu, which perf
# record leaves out of a task's samples), annotate --stdio,
# diff against perf's own file, buildid-list, inject --build-ids, evlist
# -v, and data convert --to-json.  Not archive: it packs the build-id
# cache of the machine that recorded (tests/features-host.sh tests it
# there).  On each of our files, one TAP
# result per perf, /proc setting and subcommand:
#  - it exits 0, as on perf's own file (where perf's own file fails too,
#    the result is a skip that says so; so too where annotate dies of a
#    signal and, annotating one of the workload's functions alone, dies
#    on perf's own file as on ours);
#  - it prints no warning that perf's own file does not also cause (the
#    lines of stderr, numbers and file names left out);
#  - it gives the same workload symbols as on perf's own file (report
#    with call chains, script), and, for script and report -n, every
#    sample of the file (perf-defer dump --stats counts them).
# With 6.1 among the versions, also hotspot's perfparser, an independent
# reader (Debian's hotspot package), on each of our stitched files: it
# complains of nothing it does not also complain of on perf's own file,
# finds no time-order violation, and counts every sample of the file.  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

if [ $# -lt 2 ] || [ ! -d "$1/vm/files" ]; then
	echo "usage: tests/subcmds.sh DIR VERSION... (DIR: build/readers/SERIES of tests/readers.sh)" >&2
	exit 2
fi
top_dir=$(cd "$1" && pwd)
dir=$top_dir/vm/files symfs=$top_dir/symfs
shift
versions=("$@")
pdf=$top/recorder/perf-defer
own=perf-kernel.data
ours=(st-kernel.data keep-st-kernel.data pp-kernel.data keep-kernel.data)
# the workload's own functions, as perf names them
wlsyms='leaf_kernel|epsilon|delta|gamma_|beta|alpha|main'

# src FILE: where FILE is (our stitch of the deferred form is readers.sh's
# own, the rest came from its guest)
src() {
	case $1 in
	keep-st-kernel.data) echo "$top_dir/$1" ;;
	*) echo "$dir/$1" ;;
	esac
}

for f in "$own" "${ours[@]}" kallsyms; do
	if [ ! -s "$(src "$f")" ]; then
		echo "Bail out! $(src "$f") missing (tests/readers.sh records it)"
		exit 1
	fi
done

# NAME|COMMAND|ARGS|CHECK: perf COMMAND ARGS, FILE standing for the input
# and OWN for perf's own file; CHECK: syms (the workload's symbols as on
# perf's own file: each of them is in the samples' call chains), count
# (every sample of the file), or none.  report -n without children and
# annotate show only the functions samples were taken in: which of the
# workload's own get any is chance (wl_calls kernel spends ~99% of its
# time in the kernel), so they are held to their exit and warnings.
SUBCMDS='report|report|--stdio -i FILE|syms
report-dso-sym|report|--stdio --sort dso,sym -i FILE|syms
report-socket-core-time|report|--stdio --sort socket,core,time -i FILE|none
report-caller|report|--stdio -g caller -i FILE|syms
report-callee|report|--stdio -g callee -i FILE|syms
report-n|report|--stdio --no-children -n -g none --sort sym -i FILE|count
report-time|report|--stdio --time 50%/1 -i FILE|none
report-header-only|report|--header-only -i FILE|none
script|script|-i FILE|count
script-fields|script|-F time,period,ip,sym,dso -i FILE|syms
script-ns|script|--ns -i FILE|syms
annotate|annotate|--stdio -i FILE|none
diff|diff|OWN FILE|none
buildid-list|buildid-list|-i FILE|none
inject|inject|--build-ids -i FILE -o FILE.injected|none
evlist|evlist|-v -i FILE|none
data-convert-json|data|convert --to-json FILE.json -i FILE|none'

# samples FILE: its PERF_RECORD_SAMPLEs
samples() {
	"$pdf" dump --stats -i "$1" | awk '/SAMPLE events:/ { print $3; exit }'
}

# run V PROC NAME FILE [ARG]: run subcommand NAME on FILE (a copy in a
# fresh directory: inject and data convert write next to it) by perf V,
# /proc mounted or not (PROC: proc or noproc), ARG last on its command
# line; out, err and rc into $work/V.PROC.NAME.FILE[.ARG].{out,err,rc}
run() {
	local v=$1 proc=$2 name=$3 f=$4 x=${5:-} args w d b=$work/$1.$2.$3.$4${5:+.$5} np=()

	w=$(echo "$SUBCMDS" | awk -F '|' -v n="$name" '$1 == n { print $2 }')
	args=$(echo "$SUBCMDS" | awk -F '|' -v n="$name" '$1 == n { print $3 }')
	d=$(mktemp -d "$work/run.XXXXXX")
	cp "$(src "$f")" "$d/$f"
	[ "$f" = "$own" ] || cp "$dir/$own" "$d/$own"
	[ "$proc" = proc ] || np=(--no-proc)
	args=${args//OWN/$d/$own}
	args=${args//FILE/$d/$f}
	# the symbols come from the symfs and the guest's kallsyms (annotate
	# takes no kallsyms: it annotates the workload); diff, buildid-list,
	# inject and evlist take neither
	local sym=()
	case $w in
	report|script) sym=(--symfs "$symfs" --kallsyms "$dir/kallsyms") ;;
	annotate) sym=(--symfs "$symfs") ;;
	esac
	# shellcheck disable=SC2086 # the subcommand's words
	(cd "$d" && "$top/scripts/perf" "${np[@]}" "$v" $w $args "${sym[@]}" ${x:+"$x"}) \
		>"$b.out" 2>"$b.err" </dev/null
	echo $? >"$b.rc"
	# stderr, numbers, paths and sizes left out, the lines perf says
	# every time (progress) too
	sed -e "s|$d/||g" -e "s|$f|FILE|g" -e 's/[0-9][0-9.,]*/N/g' -e 's/  */ /g' "$b.err" |
		grep -iE 'warn|error|fail|unknown|unsupported|invalid|cannot|can.t|not found|missing|segmentation|bad|corrupt' |
		sort -u >"$b.warn"
	rm -rf "$d"
}

# dies_on_own V PROC FILE: perf V's annotate died on FILE; the first of
# the workload's functions that, annotated alone, kills it on perf's own
# file as on FILE (a crash of perf's, whatever file it reads), or nothing
dies_on_own() {
	local v=$1 proc=$2 f=$3 s

	for s in ${wlsyms//|/ }; do
		run "$v" "$proc" annotate "$own" "$s"
		[ "$(cat "$work/$v.$proc.annotate.$own.$s.rc")" -gt 128 ] || continue
		run "$v" "$proc" annotate "$f" "$s"
		[ "$(cat "$work/$v.$proc.annotate.$f.$s.rc")" -gt 128 ] || continue
		echo "$s"
		return
	done
}

# syms OUT: the workload's symbols in an output, one per line
syms() {
	grep -oE "\\b($wlsyms)\\b" "$1" | sort -u
}

# count NAME OUT: the samples an output shows: script's blocks (a
# sample's line and its chain, then an empty line), report -n's column
count() {
	case $1 in
	script) awk 'BEGIN { RS = "" } NF { n++ } END { print n + 0 }' "$2" ;;
	report-n) awk '!/^#/ && NF >= 3 && $2 ~ /^[0-9]+$/ { n += $2 } END { print n + 0 }' "$2" ;;
	esac
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
for v in "${versions[@]}"; do
	for f in "${ours[@]}"; do
		[ "$f" != keep-kernel.data ] || [ "$v" = 7.3 ] || continue
		n=$((n + 2 * $(echo "$SUBCMDS" | wc -l)))
	done
done
perfparser=/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser
stitched=(st-kernel.data keep-st-kernel.data pp-kernel.data)
pp=0
for v in "${versions[@]}"; do
	[ "$v" != 6.1 ] || pp=1
done
[ $pp = 0 ] || n=$((n + ${#stitched[@]}))
tap_plan $n
for f in "$own" "${ours[@]}"; do
	echo "# $f: $(samples "$(src "$f")") samples"
done

for v in "${versions[@]}"; do
	for proc in proc noproc; do
		tag=''
		[ $proc = proc ] || tag=' no-proc'
		while IFS='|' read -r name _ _ check; do
			run "$v" $proc "$name" "$own"
			ob=$work/$v.$proc.$name.$own
			orc=$(cat "$ob.rc")
			for f in "${ours[@]}"; do
				[ "$f" != keep-kernel.data ] || [ "$v" = 7.3 ] || continue
				run "$v" $proc "$name" "$f"
				b=$work/$v.$proc.$name.$f
				what="[subcmd perf-$v$tag] $name on $f"
				rc=$(cat "$b.rc")
				if [ "$orc" != 0 ]; then
					ok 0 "# SKIP $what: perf $v fails on its own file too (exit $orc)"
					sed 's/^/#   /' "$ob.err" | head -n 3
					continue
				fi
				# perf 6.12's annotate dies on the workload's
				# epsilon and gamma_ in its own file as in ours
				# (the same crash site), when a sample falls there
				if [ "$name" = annotate ] && [ "$rc" -gt 128 ]; then
					s=$(dies_on_own "$v" $proc "$f")
					if [ -n "$s" ]; then
						ok 0 "# SKIP $what: perf $v's annotate dies of signal $((rc - 128)) on $s in perf's own file too"
						continue
					fi
				fi
				why=()
				[ "$rc" = 0 ] || why+=("exit $rc")
				extra=$(comm -23 "$b.warn" "$ob.warn")
				[ -z "$extra" ] || why+=("warnings perf's own file does not cause")
				if [ "$check" = syms ]; then
					ms=$(syms "$ob.out" | comm -23 - <(syms "$b.out") | tr '\n' ' ')
					[ -z "$ms" ] || why+=("no $ms")
				fi
				if [ "$check" = count ]; then
					c=$(count "$name" "$b.out") want=$(samples "$(src "$f")")
					[ "$c" = "$want" ] || why+=("$c samples of $want")
				fi
				if [ ${#why[@]} -gt 0 ]; then
					echo "# $what: ${why[*]}"
					printf '%s\n' "$extra" | grep . | head -n 5 | sed 's/^/#   /'
					grep -i segmentation "$b.err" | head -n 2 | sed 's/^/#   /'
				fi
				[ ${#why[@]} = 0 ]
				ok $? "$what"
			done
		done <<<"$SUBCMDS"
	done
done

# perfparser FILE: its --print-stats into $work/pp.FILE.{out,rc}, and the
# lines of complaint, numbers left out, into $work/pp.FILE.warn
perfparser() {
	local b=$work/pp.$1

	"$perfparser" --input "$(src "$1")" --print-stats --kallsyms "$dir/kallsyms" >"$b.out" 2>&1 </dev/null
	echo $? >"$b.rc"
	sed -e 's/[0-9][0-9]*/N/g' "$b.out" |
		grep -iE 'not properly|unhandled|unknown|uknown|error|warn|fail|invalid|cannot|corrupt' |
		sort -u >"$b.warn"
}

if [ $pp = 1 ]; then
	if [ ! -x "$perfparser" ]; then
		for f in "${stitched[@]}"; do
			ok 0 "# SKIP [perfparser] $f: no $perfparser (scripts/deps packages installs hotspot)"
		done
		tap_done
		exit
	fi
	perfparser "$own"
	sed 's/^/# perfparser on perf'"'"'s own file: /' "$work/pp.$own.warn"
	for f in "${stitched[@]}"; do
		perfparser "$f"
		b=$work/pp.$f why=()
		[ "$(cat "$b.rc")" = 0 ] || why+=("exit $(cat "$b.rc")")
		extra=$(comm -23 "$b.warn" "$work/pp.$own.warn")
		[ -z "$extra" ] || why+=("complaints perf's own file does not cause")
		c=$(sed -n 's/^samples: //p' "$b.out") want=$(samples "$(src "$f")")
		[ "$c" = "$want" ] || why+=("${c:-no} samples of $want")
		v=$(sed -n 's/^samples time violations: //p' "$b.out")
		[ "$v" = 0 ] || why+=("${v:-unknown} time violations")
		if [ ${#why[@]} -gt 0 ]; then
			echo "# [perfparser] $f: ${why[*]}"
			printf '%s\n' "$extra" | grep . | head -n 5 | sed 's/^/#   /'
		fi
		[ ${#why[@]} = 0 ]
		ok $? "[perfparser] $f: no complaint beyond perf's own file's, every sample ($c), in time order"
	done
fi
tap_done
