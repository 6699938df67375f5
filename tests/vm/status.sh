#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# 'perf-defer status' in the guest, as TAP.
#   status.sh none     no native support, module not loaded (6.1, 6.12)
#   status.sh module   the module loaded from $PERF_DEFER_KO
#   status.sh native   kernel >= 6.19, no module
mode=${1:?usage: status.sh none|module|native}
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

has() {
	grep -qx "$1" /tmp/status.out
	ok $? "status shows '$1'"
}

case $mode in
module) tap_plan 10 ;;
native) tap_plan 7 ;;
*) tap_plan 6 ;;
esac
[ "$mode" = module ] && insmod "$PERF_DEFER_KO"
perf-defer status >/tmp/status.out 2>&1
rc=$?
sed 's/^/# /' /tmp/status.out
has "kernel: $(uname -r)"
case $mode in
none)
	has "native: no"
	has "module: not loaded"
	has "path: none"
	has "signatures: not required"
	[ "$rc" = 1 ] && grep -q "modprobe perf_defer" /tmp/status.out
	ok $? "exit 1 with a hint how to load the module (rc=$rc)"
	;;
module)
	has "native: no"
	# the ABI of the recorder built with it
	has "module: loaded, ABI $(perf-defer --version | sed -n 's/.*(ABI \(.*\))$/\1/p')"
	has "path: module"
	has "hooks: kprobes (the module's hooks parameter)"
	has "user-unwind: sframe,eh_frame,fp (the module's user_unwind parameter)"
	# every kernel the tests run is one status calls tested (arm64's
	# list apart)
	arch=''
	[ "$(uname -m)" != aarch64 ] || arch='arm64 '
	grep -Eqx "tested: yes \(the tests run the module on ${arch}[0-9. ]+\)" /tmp/status.out
	ok $? "status says the tests run the module on this kernel"
	grep -Eq "^counters: requests [0-9]+ dedup [0-9]+ unwinds [0-9]+ records [0-9]+ drops [0-9]+ pool-empty [0-9]+ exit-pending [0-9]+ pending 0 after-unwind [0-9]+ in-exec [0-9]+$" /tmp/status.out
	ok $? "status shows the module's counters"
	grep -Eq "^unwind: frames-fp [0-9]+ frames-sframe [0-9]+ frames-eh-frame [0-9]+ table-objects [0-9]+ table-stopped [0-9]+ table-cache-hits [0-9]+ table-rows [0-9]+ table-row-hits [0-9]+ walk-ns [0-9]+$" /tmp/status.out
	ok $? "status shows the unwind methods' counters"
	[ "$rc" = 0 ]
	ok $? "exit 0 (rc=$rc)"
	rmmod perf_defer
	;;
native)
	has "native: yes"
	has "module: not loaded"
	has "path: native"
	has "user-unwind: fp (the kernel's deferred walk uses frame pointers only)"
	grep -Eqx "tested: yes \(the tests run native deferral on [0-9. ]+\)" /tmp/status.out
	ok $? "status says the tests run native deferral on this kernel"
	[ "$rc" = 0 ]
	ok $? "exit 0 (rc=$rc)"
	;;
esac
tap_done
