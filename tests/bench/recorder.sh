#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/bench/recorder.sh [N...]: the recorder's own figures, on the host,
# no VM (issue 6, "Recorder figures").
#
# For each N (default 1M 2M 5M 10M records), REPS times each (default 3):
#  - write: gen_stream writes a synthetic deferred-form perf.data of N
#    records through the recorder's writer (the writer alone is timed, its
#    fsync included) and its peak RSS is taken;
#  - stitch to a file: 'perf-defer stitch -i IN -o OUT', wall time and peak
#    RSS (getrusage of the child: ru_maxrss, file pages it maps included);
#    the writer fsyncs OUT: this includes the kernel's cost of writing it;
#  - stitch to /dev/null: the same without the disk: the recorder's cost;
#  - dd of as many bytes as the output, with fsync: the disk's own rate.
# Every run starts after a sync, with no OUT left from the previous one.
# Then the output is checked: stitch --stats of the input (every sample
# stitched, none unmatched) and of the output (every sample there, none
# deferred, no CALLCHAIN_DEFERRED); on the smallest N also perf-defer dump
# counts, and the host's 'perf report --stdio --no-children' exits 0 with
# nothing on stderr (--children would take minutes on a million samples).
#
# The table goes to build/bench/recorder.md and to stdout.  Figures are
# medians with min-max; the machine is shared (VM runs of other jobs), so
# they are noisy.  Work files go to $PD_BENCH_DIR (default build/bench/tmp)
# and are removed at the end unless KEEP=1.  PERF_DEFER=BIN stitches with
# another build (e.g. an older commit's) for a before/after comparison.
set -eu -o pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out_dir=$top/build/bench
work=${PD_BENCH_DIR:-$out_dir/tmp}
reps=${REPS:-3}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 2000000 5000000 10000000)
goal_rate=2000000
goal_rss_mib=64

gen=$out_dir/gen_stream
pd=${PERF_DEFER:-$top/recorder/perf-defer}
md=$out_dir/recorder.md

die() { echo "recorder.sh: $*" >&2; exit 1; }

mkdir -p "$out_dir" "$work"
make -s -C "$top" recorder >/dev/null || die "cannot build the recorder"
${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Werror \
	-I"$top/tests/host" -I"$top/recorder" -I"$top/include/uapi" \
	-o "$gen" "$top/tests/bench/gen_stream.c" "$top/recorder/librecorder.a" \
	-lelf || die "cannot build gen_stream"

in=$work/in.data
res=$work/out.data
log=$work/log
trap '[ "${KEEP:-0}" = 1 ] || rm -f "$in" "$res" "$log" "$log.out" "$work/dd.out"' EXIT

# field NAME LINE: the value of NAME=... in LINE
field() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; }

# stats V...: "median min max" (numeric)
stats() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		print m, v[1], v[NR] }'
}

# fmt_rate "median min max" records/s -> "2.31 M/s (2.10–2.40)"
fmt_rate() { awk '{ printf "%.2f M/s (%.2f–%.2f)", $1 / 1e6, $2 / 1e6, $3 / 1e6 }' <<<"$1"; }
fmt_mib() { awk '{ printf "%.1f (%.1f–%.1f)", $1 / 1024, $2 / 1024, $3 / 1024 }' <<<"$1"; }

# timed CMD...: run CMD under gen_stream --run, after a sync; sets wall, rss
timed() {
	sync
	if ! "$gen" --run "$@" >"$log.out" 2>"$log"; then
		cat "$log" >&2
		die "failed: $*"
	fi
	local l
	l=$(grep '^wall_s=' "$log" | tail -1)
	wall=$(field wall_s "$l")
	cpu=$(field cpu_s "$l")
	rss=$(field maxrss_kib "$l")
	if grep -v '^wall_s=' "$log" | grep -q .; then
		cat "$log" >&2
		die "unexpected output on stderr: $*"
	fi
}

start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A row med_z med_zw med_zc med_f max_rss
first=${sizes[0]}
fail=0

for n in "${sizes[@]}"; do
	w_rate=() w_rss=() f_rate=() f_rss=() f_mbs=() z_rate=() z_rss=() z_wall=() z_cpu=()
	for ((i = 0; i < reps; i++)); do
		rm -f "$in"
		timed "$gen" -n "$n" -o "$in"
		g=$(cat "$log.out")
		w_rate+=("$(field write_rate "$g")")
		w_rss+=("$rss")
	done
	in_bytes=$(stat -c %s "$in")
	samples=$(field samples "$g")
	for ((i = 0; i < reps; i++)); do
		rm -f "$res"
		timed "$pd" stitch -i "$in" -o "$res"
		f_rate+=("$(awk -v n="$n" -v t="$wall" 'BEGIN { print n / t }')")
		f_rss+=("$rss")
		f_mbs+=("$(awk -v b="$(stat -c %s "$res")" -v t="$wall" 'BEGIN { print b / t / 1048576 }')")
		timed "$pd" stitch -i "$in" -o /dev/null
		z_rate+=("$(awk -v n="$n" -v t="$wall" 'BEGIN { print n / t }')")
		z_rss+=("$rss")
		z_wall+=("$wall")
		z_cpu+=("$(awk -v n="$n" -v t="$cpu" 'BEGIN { print n / t }')")
	done
	out_bytes=$(stat -c %s "$res")
	# the disk's own rate for as many bytes, for comparison
	d_mbs=()
	for ((i = 0; i < reps; i++)); do
		rm -f "$work/dd.out"
		timed dd if=/dev/zero of="$work/dd.out" bs=256k count=$(((out_bytes >> 18) + 1)) \
			conv=fsync status=none
		d_mbs+=("$(awk -v b="$out_bytes" -v t="$wall" 'BEGIN { print b / t / 1048576 }')")
	done
	rm -f "$work/dd.out"

	# the output: every sample stitched, none unmatched, no deferred record
	# left (stitch --stats of the output itself counts what it holds)
	st=$("$pd" stitch -q --stats -i "$in" -o /dev/null | tr '\n' ' ')
	st_out=$("$pd" stitch -q --stats -i "$res" -o /dev/null | tr '\n' ' ')
	check="ok"
	if ! grep -q "stitched: $samples unmatched: 0 " <<<"$st" ||
	   ! grep -q "^samples: $samples deferred: 0 .*deferred-records: 0 " <<<"$st_out"; then
		check="FAILED (stitch --stats: $st; of the output: $st_out)"
		fail=1
	fi
	if [ "$n" = "$first" ]; then
		# dump prints every record: slow, so only here
		dump=$("$pd" dump -i "$res" | sed -n '/^Aggregated stats:/,$p')
		got=$(awk '$1 == "SAMPLE" { print $3; exit }' <<<"$dump")
		if [ "$got" = "$samples" ] && ! grep -q CALLCHAIN_DEFERRED <<<"$dump"; then
			check="$check; dump: ok"
		else
			check="$check; dump: FAILED ($got samples of $samples)"
			fail=1
		fi
		if ! command -v perf >/dev/null; then
			check="$check; perf report: not run (no perf)"
		elif (cd "$work" && perf report --stdio --no-children -i "$res" >"$log.out" 2>"$log") &&
		     ! [ -s "$log" ] && grep -q "^# Samples: .* of event 'cpu-clock'" "$log.out"; then
			check="$check; perf $(perf --version | awk '{ print $3 }') report: ok"
		else
			check="$check; perf report: FAILED ($(head -c 300 "$log" | tr '\n' ' '))"
			fail=1
		fi
	fi

	s_w=$(stats "${w_rate[@]}") s_wr=$(stats "${w_rss[@]}")
	s_f=$(stats "${f_rate[@]}") s_fr=$(stats "${f_rss[@]}") s_fm=$(stats "${f_mbs[@]}")
	s_dm=$(stats "${d_mbs[@]}")
	s_z=$(stats "${z_rate[@]}") s_zr=$(stats "${z_rss[@]}") s_zw=$(stats "${z_wall[@]}")
	s_zc=$(stats "${z_cpu[@]}")
	row[$n]="| $(awk -v n="$n" 'BEGIN { printf "%gM", n / 1e6 }') | $((in_bytes >> 20)) / $((out_bytes >> 20)) | $(fmt_rate "$s_w") | $(fmt_mib "$s_wr") | $(fmt_rate "$s_f") | $(awk '{ printf "%.0f", $1 }' <<<"$s_fm") / $(awk '{ printf "%.0f (%.0f–%.0f)", $1, $2, $3 }' <<<"$s_dm") | $(fmt_mib "$s_fr") | $(fmt_rate "$s_z") | $(fmt_rate "$s_zc") | $(fmt_mib "$s_zr") | $check |"
	med_z[$n]=$(cut -d' ' -f1 <<<"$s_z")
	med_zw[$n]=$(cut -d' ' -f1 <<<"$s_zw")
	med_f[$n]=$(cut -d' ' -f1 <<<"$s_f")
	med_zc[$n]=$(cut -d' ' -f1 <<<"$s_zc")
	max_rss[$n]=$(printf '%s\n' "${f_rss[@]}" "${z_rss[@]}" | sort -n | tail -1)
	echo "recorder.sh: $n records done ($(($(date +%s) - start)) s)" >&2
done

last=${sizes[${#sizes[@]} - 1]}
{
	echo "## Recorder: writing and stitching a synthetic deferred-form stream"
	echo
	echo "Host, no VM: $(nproc) CPUs, $(uname -r), commit $(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet -- recorder tests/bench || echo '+changes'), $(date -u +%F)."
	[ -z "${PERF_DEFER:-}" ] || echo "Stitched by $PERF_DEFER."
	echo "$reps runs each: median (min–max).  The stream: $(field samples "$g") samples and"
	echo "$(field entries "$g") CALLCHAIN_DEFERRED records per $(field records "$g") records (8 threads, 2 CPUs,"
	echo "5–12 kernel frames, 20–30 user frames, FINISHED_ROUND every 10000 records)."
	echo "**Noisy**: the CPUs and the disk are shared with other jobs (VM runs);"
	echo "load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end."
	echo
	echo "| records | MiB in / out | write rate | write RSS MiB | stitch → file | out MiB/s / dd MiB/s | stitch → file RSS MiB | stitch → /dev/null | per CPU second | → /dev/null RSS MiB | output check |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	for n in "${sizes[@]}"; do echo "${row[$n]}"; done
	echo
	echo "- write: gen_stream -n N -o FILE: the recorder's writer alone (records built"
	echo "  beforehand), its fsync included; RSS is gen_stream's."
	echo "- stitch → file: perf-defer stitch -i IN -o OUT, wall time, fsync of OUT"
	echo "  included.  out MiB/s: the output's size / that time; dd MiB/s: dd of"
	echo "  as many bytes with conv=fsync, what the machine's write path gave then."
	echo "- stitch → /dev/null: the same, no disk: what the recorder itself costs;"
	echo "  per CPU second: records / (user + system time), less hit by the other jobs."
	echo "- RSS: peak (getrusage ru_maxrss of the child)."
	echo
	echo "Growth from $(awk -v n="$first" 'BEGIN { printf "%gM", n / 1e6 }') to $(awk -v n="$last" 'BEGIN { printf "%gM", n / 1e6 }') records (stitch → /dev/null, medians):"
	awk -v a="${med_zw[$first]}" -v b="${med_zw[$last]}" -v na="$first" -v nb="$last" \
		-v ca="${med_zc[$first]}" -v cb="${med_zc[$last]}" \
		-v ra="${max_rss[$first]}" -v rb="${max_rss[$last]}" 'BEGIN {
		printf "wall time per record × %.2f (%.0f ns → %.0f ns), CPU time per record × %.2f (%.0f ns → %.0f ns);\n",
			(b / nb) / (a / na), a / na * 1e9, b / nb * 1e9, ca / cb, 1e9 / ca, 1e9 / cb
		printf "peak RSS (of all stitch runs) %.1f → %.1f MiB.\n", ra / 1024, rb / 1024 }'
	echo
	rate=${med_z[$last]}
	echo "Goal (stitch ≥ $((goal_rate / 1000000))M records/s, peak RSS ≤ $goal_rss_mib MiB, flat in length):"
	awk -v r="$rate" -v rc="${med_zc[$last]}" -v g="$goal_rate" -v rss="${max_rss[$last]}" -v rss0="${max_rss[$first]}" \
		-v gr="$goal_rss_mib" -v n="$last" 'BEGIN {
		printf "rate at %gM (→ /dev/null): %.2f M/s wall, %s; %.2f M/s per CPU second, %s; ",
			n / 1e6, r / 1e6, (r >= g ? "met" : "MISSED"), rc / 1e6, (rc >= g ? "met" : "MISSED")
		printf "RSS %.1f MiB: %s; ", rss / 1024, (rss <= gr * 1024 ? "met" : "MISSED")
		printf "flat: %s.\n", (rss <= rss0 * 1.1 + 1024 ? "yes" : "NO") }'
	awk -v r="${med_f[$last]}" -v g="$goal_rate" -v n="$last" 'BEGIN {
		printf "To a file, at %gM: %.2f M/s, %s: that adds the kernel'"'"'s cost of writing\n", n / 1e6, r / 1e6,
			(r >= g ? "met" : "MISSED") }'
	echo "the output (write() into the page cache, writeback, fsync), which on this"
	echo "machine varies several-fold from run to run: see dd's column."
	echo
	echo "Made by \`tests/bench/recorder.sh ${sizes[*]}\` (REPS=$reps) in $(($(date +%s) - start)) s."
} >"$md"
cat "$md"
exit $fail
