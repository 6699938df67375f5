#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# arm64.sh: Debian's arm64 kernels under qemu-system-aarch64 (TCG, -M virt
# -cpu max,pauth-impdef=on, as scripts/vm boots them), and whether any of
# them defers user callchains natively.
#
# A busybox initramfs with tests/vm/native_probe and the recorder,
# cross-built by clang (static), boots bookworm's 6.1 and sid's 7.2
# (scripts/kernels: 6.1-arm64, 7.2-arm64).  The probe samples itself with defer_callchain set, on
# cpu-clock and on cycles (TCG's emulated PMUv3: its overflow interrupt,
# the path x86 TCG has no PMU for), and counts deferred markers, inline
# user frames and CALLCHAIN_DEFERRED records.  The same probe on x86-64's
# native 7.2 (scripts/vm) is the control: there it must see deferral.
# Without the module, 'perf-defer status' must say there is no deferral
# without claiming native support, and 'perf-defer record -g' must fall
# back to fp with its warning and write a file with samples.  The module
# and the test modules cross-build for 6.1-arm64 with W=1 and load there;
# perf_defer.ko defers cycles samples (tests/vm/events.sh, through
# scripts/vm, with bookworm's arm64 perf in the guest to tell the samples
# in the exec apart), and its table walk (.eh_frame) takes chains of code
# built without frame pointers down to main (walk_test).  A guest console
# with an oops, BUG or WARNING fails.  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
PD_PROG=arm64 . "$top/scripts/lib.sh"
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

out=$PD_BUILD/arm64
mkdir -p "$out"
for t in qemu-system-aarch64 clang aarch64-linux-gnu-ld; do
	command -v "$t" >/dev/null || pd_die "$t missing: run scripts/deps packages"
done
cross=$("$top/scripts/deps" cross arm64) || pd_die "no arm64 busybox and sysroot (see above)"
busybox=$cross/busybox

# the probe, the test programs and the recorder, static for arm64
make -s -C "$top" arm64 >&2 || pd_die "cannot cross-build for arm64 (make arm64)"

# boot SERIES [NAME KO...]: boot an arm64 kernel on the initramfs; its
# console in $out/NAME.txt (NAME: SERIES if not given), the probe's and
# the recorder's lines included.  With KOs, the guest loads them instead
# (see the modules' boot below).
boot() {
	local kdir root name=${2:-$1}

	kdir=$(pd_kernel_dir "$1") || return 1
	root=$(mktemp -d "$out/root.XXXXXX")
	mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/tmp" "$root/kmod"
	[ $# -lt 3 ] || cp "${@:3}" "$root/kmod/"
	install -m 0755 "$busybox" "$root/bin/busybox"
	install -m 0755 "$out/vm-tests/native_probe" "$root/bin/native_probe"
	install -m 0755 "$out/recorder/perf-defer" "$root/bin/perf-defer"
	cat >"$root/init" <<-'EOT'
		#!/bin/busybox sh
		/bin/busybox --install -s /bin
		export PATH=/bin
		mount -t proc proc /proc
		mount -t sysfs sysfs /sys
		mount -t tmpfs tmpfs /tmp
		echo "PDVM-BOOTED $(uname -r)"
		if [ -f /kmod/pd_test_warn.ko ]; then
			insmod /kmod/pd_test_preempt.ko
			echo "KMOD-INSMOD $?"
			rmmod pd_test_preempt
			echo "KMOD-RMMOD $?"
			echo PDVM-MARK
			insmod /kmod/pd_test_warn.ko
			echo "KMOD-WARN $?"
			echo PDVM-DONE
			poweroff -f
		fi
		for e in cpu-clock cycles; do
			echo "PROBE $(native_probe $e)"
			echo "PROBE-NODEFER $(native_probe $e --no-defer)"
		done
		perf-defer status >/tmp/status 2>&1
		echo "STATUS-EXIT $?"
		sed 's/^/STATUS /' /tmp/status
		cd /tmp
		perf-defer record -g -o /tmp/r.data -- \
			sh -c 'i=0; while [ $i -lt 30000 ]; do i=$((i + 1)); done' >/tmp/record 2>&1
		echo "RECORD-EXIT $?"
		sed 's/^/RECORD /' /tmp/record
		perf-defer dump -i /tmp/r.data --stats 2>&1 | sed 's/^/DUMP /'
		echo PDVM-DONE
		poweroff -f
	EOT
	chmod 0755 "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$out/$name.cpio"
	rm -rf "$root"
	timeout --foreground -k 5 600 qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 1024 \
		-nodefaults -display none -no-reboot -serial "file:$out/$name.log" \
		-kernel "$kdir/vmlinuz" -initrd "$out/$name.cpio" \
		-append "console=ttyAMA0 panic=-1 rdinit=/init" </dev/null >"$out/$name.qemu" 2>&1
	tr -d '\r' <"$out/$name.log" >"$out/$name.txt"
}

# field FILE TAG EVENT NAME: NAME's value on FILE's "TAG EVENT ..." line
field() {
	sed -n "s/^$2 $3 .*\\b$4=\\([^ ]*\\).*/\\1/p" "$1" | head -n 1
}

# clean FILE: no oops, BUG or WARNING on the console
clean() { ! grep -Eq "$PD_SPLAT" "$1"; }

# recorder_checks SERIES FILE NATIVE TESTED: the recorder without a module,
# on SERIES: status says NATIVE, no path and why, exits 1, and says TESTED;
# record -g falls back to fp with its warning and writes samples, none
# deferred
recorder_checks() {
	local s n d

	grep -qxF "STATUS $3" "$2" && grep -qx 'STATUS path: none' "$2" &&
		grep -qx 'STATUS-EXIT 1' "$2"
	ok $? "$1: perf-defer status says '$3', path none, exit 1"
	grep -qxF "STATUS tested: $4" "$2"
	ok $? "$1: perf-defer status says 'tested: $4'"
	grep -q "^RECORD perf-defer: record: warning: no deferred callchains here (the kernel does not defer them and module perf_defer is not loaded" "$2" &&
		grep -qx 'RECORD-EXIT 0' "$2"
	ok $? "$1: perf-defer record -g falls back to fp with its warning, exit 0"
	s=$(sed -n 's/^DUMP *SAMPLE events: *\([0-9]*\).*/\1/p' "$2" | head -n 1)
	d=$(sed -n 's/^DUMP *CALLCHAIN_DEFERRED events: *\([0-9]*\).*/\1/p' "$2" | head -n 1)
	n=$(sed -n 's/^RECORD .*(\([0-9]*\) samples).*/\1/p' "$2")
	[ "${s:-0}" -gt 0 ] && [ "${s:-0}" = "${n:-x}" ] && [ -z "$d" ]
	ok $? "$1: its file has the ${n:-?} samples record counted, none deferred (${s:-0}, ${d:-0})"
}

tap_plan 35
echo "# bookworm's 6.1 (arm64): no defer_callchain at all"
boot 6.1-arm64
f=$out/6.1-arm64.txt
grep -q '^PDVM-DONE' "$f" && clean "$f"
ok $? "6.1-arm64 boots to init and powers off, no oops or warning ($(sed -n 's/^PDVM-BOOTED //p' "$f"))"
grep -q 'enabled with armv8_pmuv3 PMU driver' "$f"
ok $? "6.1-arm64 has TCG's PMUv3 (cycles samples by its overflow interrupt)"
for e in cpu-clock cycles; do
	[ "$(field "$f" PROBE "$e" open)" = EINVAL ]
	ok $? "6.1-arm64 $e: defer_callchain refused with EINVAL ($(field "$f" PROBE "$e" open))"
	s=$(field "$f" PROBE-NODEFER "$e" samples) u=$(field "$f" PROBE-NODEFER "$e" inline_user)
	[ "${s:-0}" -gt 0 ] && [ "${u:-0}" -gt 0 ]
	ok $? "6.1-arm64 $e without the bit: samples with inline user frames ($u of $s)"
done

recorder_checks 6.1-arm64 "$f" 'native: no' 'yes (the tests run the module on arm64 6.1 6.12)'

echo "# sid's 7.2 (arm64): the bit is accepted, but nothing is deferred"
boot 7.2-arm64
f=$out/7.2-arm64.txt
grep -q '^PDVM-DONE' "$f" && clean "$f"
ok $? "7.2-arm64 boots to init and powers off, no oops or warning ($(sed -n 's/^PDVM-BOOTED //p' "$f"))"
for e in cpu-clock cycles; do
	s=$(field "$f" PROBE "$e" samples) u=$(field "$f" PROBE "$e" inline_user)
	[ "$(field "$f" PROBE "$e" open)" = ok ] && [ "${s:-0}" -gt 0 ]
	ok $? "7.2-arm64 $e: defer_callchain accepted, ${s:-0} samples"
	m=$(field "$f" PROBE "$e" deferred_marks) r=$(field "$f" PROBE "$e" deferred_records)
	[ "${m:-1}" = 0 ] && [ "${r:-1}" = 0 ] && [ "${u:-0}" -gt 0 ]
	ok $? "7.2-arm64 $e: no deferred marker or record, user frames inline ($m, $r, $u of $s)"
done
cfg=$PD_CACHE/kernels/7.2-arm64/config
! grep -q '^CONFIG_UNWIND_USER=y' "$cfg" && ! grep -q '^CONFIG_HAVE_UNWIND_USER' "$cfg"
ok $? "7.2-arm64 is built without CONFIG_UNWIND_USER: the arch has no user unwinder to defer to"

recorder_checks 7.2-arm64 "$f" 'native: no (the kernel takes defer_callchain but walks the user stack in the interrupt: built without CONFIG_UNWIND_USER)' \
	'no (the tests run the module on arm64 6.1 6.12, not 7.2)'

echo "# modules cross-built for 6.1-arm64 (W=1) load there; a WARN fails the run"
ko=$PD_BUILD/ko-6.1-arm64
"$top/scripts/kmake" --kos 6.1-arm64 >"$out/kmod.log" 2>&1
rc=$?
[ "$rc" = 0 ] && file "$ko/perf_defer.ko" "$ko/pd_test_warn.ko" | grep -c 'ARM aarch64' | grep -qx 2
ok $? "perf_defer.ko and the test modules cross-build for 6.1-arm64, W=1 without a warning (exit $rc)"
boot 6.1-arm64 6.1-arm64-kmod "$ko/pd_test_preempt.ko" "$ko/pd_test_warn.ko"
f=$out/6.1-arm64-kmod.txt
grep -qx 'KMOD-INSMOD 0' "$f" && grep -qx 'KMOD-RMMOD 0' "$f"
ok $? "6.1-arm64 loads and unloads the cross-built pd_test_preempt.ko (vermagic, symbol versions)"
sed '/^PDVM-MARK/q' "$f" >"$f.before"
clean "$f.before"
ok $? "6.1-arm64: no oops or warning up to pd_test_warn.ko"
grep -qx 'KMOD-WARN 0' "$f" && sed -n '/^PDVM-MARK/,$p' "$f" | grep -E "$PD_SPLAT" | grep -q 'pd_test_warn'
ok $? "6.1-arm64: pd_test_warn.ko's WARNING is on the console, where the rule that fails a run finds it"

echo "# perf_defer.ko on 6.1-arm64: cycles samples, by the PMU's overflow interrupt, deferred;"
echo "# the .eh_frame walk without frame pointers"
"$top/scripts/vm" -k 6.1-arm64 --perf 6.1 -o "$out/vm-events" -t 900 -m "$ko/perf_defer.ko" -- 'events.sh cycles' \
	'walk_test -t eh_frame_walk_without_frame_pointers' >"$out/events.txt" 2>&1
rc=$?
grep '^# ' "$out/events.txt"
while read -r word rest; do
	if [ "$word" = ok ]; then ok 0 "6.1-arm64 guest: ${rest#* }"; else ok 1 "6.1-arm64 guest: ${rest#ok * }"; fi
done < <(grep -E '^(not )?ok [0-9]' "$out/events.txt")
ok $rc "6.1-arm64: the guest ran events.sh and walk_test to their end, no oops or warning (scripts/vm exit $rc)"

echo "# the control: the same probe on x86-64's native 7.2 sees deferral"
"$top/scripts/vm" -k 7.2 -o "$PD_BUILD/vm/arm64-control" -t 600 -- 'native_probe' \
	>"$out/x86-7.2.txt" 2>&1
rc=$?
f=$out/x86-7.2.txt
sed 's/^/PROBE /' "$f" >"$f.p"
s=$(field "$f.p" PROBE cpu-clock samples) m=$(field "$f.p" PROBE cpu-clock deferred_marks)
r=$(field "$f.p" PROBE cpu-clock deferred_records)
[ "$rc" = 0 ] && [ "${s:-0}" -gt 0 ]
ok $? "x86-64 7.2 cpu-clock: defer_callchain accepted, ${s:-0} samples (scripts/vm exit $rc)"
[ "${m:-0}" -gt 0 ] && [ "${r:-0}" -gt 0 ]
ok $? "x86-64 7.2 cpu-clock: deferred markers and CALLCHAIN_DEFERRED records (${m:-0}, ${r:-0})"
[ "${m:-0}" = "${s:-1}" ]
ok $? "x86-64 7.2 cpu-clock: every sample deferred (${m:-0} of ${s:-0})"
tap_done
