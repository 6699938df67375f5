#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# ref.sh module|native: the recordings of the reference comparison
# (tests/reference.sh), the same workloads under either setup, into
# /tmp/ref-NAME.data, and the guest's /proc/kallsyms into /tmp/kallsyms.gz:
#   module  a kernel before 6.19 with our module: perf-defer record
#           --keep-deferred --user-unwind fp, the upstream deferred form
#           walked as native deferral walks (the module's default, the
#           unwind tables, gives more frames wherever frame pointers
#           skip one: frameless code such as the vDSO or libc's string
#           functions; tests/vm/oracle.sh is its reference);
#   native  a kernel with native deferred callchains (>= 6.19), perf 7.3 in
#           the guest: perf record --call-graph fp,defer.
# Both sample cpu-clock at the same frequency.  The workloads (NAME: command):
#   kernel:  wl_calls kernel   samples in kernel entries from two known paths
#   user:    wl_calls user     user-mode samples on the same two paths
#   syscall: wl_syscall        a deep user stack, many samples per entry
# TAP.
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

mode=${1:-}
freq=4000
ms=2000

case $mode in
module|native) ;;
*) echo "Bail out! usage: ref.sh module|native"; exit 2 ;;
esac

tap_plan 4
cd /tmp || exit 1
if [ "$mode" = module ]; then
	insmod "$PERF_DEFER_KO"
	ok $? "the module loads"
else
	[ ! -e /sys/module/perf_defer ]
	ok $? "no module loaded ($(perf --version 2>&1))"
fi

# rec NAME COMMAND...: record COMMAND into /tmp/ref-NAME.data
rec() {
	name=$1
	shift
	if [ "$mode" = module ]; then
		perf-defer record -q --stats --keep-deferred --user-unwind fp -e cpu-clock -F $freq \
			-o "ref-$name.data" -- "$@" >"ref-$name.stats" 2>"ref-$name.err"
		rc=$?
		# and it must be the module that gave the callchains
		grep -qx "path: module" "ref-$name.stats" || rc=1
	else
		perf record -q -e cpu-clock -F $freq --call-graph fp,defer \
			-o "ref-$name.data" -- "$@" >"ref-$name.stats" 2>"ref-$name.err"
		rc=$?
	fi
	sed 's/^/# /' "ref-$name.stats" "ref-$name.err"
	ok $rc "$mode: $name: $*"
}

rec kernel /tests/wl_calls kernel $ms
rec user /tests/wl_calls user $ms
rec syscall /tests/wl_syscall -t $ms
if [ "$mode" = module ] && ! rmmod perf_defer; then
	echo "# rmmod perf_defer failed"
fi
gzip -c /proc/kallsyms >/tmp/kallsyms.gz
tap_done
