#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# native.sh: on a kernel with native deferred callchains (>= 6.19), with
# perf 7.3 in the guest: perf-defer record needs no module, and perf's own
# 'record --call-graph fp,defer' makes /tmp/p73.data; tests/readers.sh
# reads them on the host.  TAP.
. "$(dirname "$0")/tap.sh"

tap_plan 5
cd /tmp || exit 1
[ ! -e /sys/module/perf_defer ]
ok $? "no module loaded"
perf-defer record -q --stats -o nat.data -- /tests/wl_calls kernel 1200 >nat.stats 2>nat.err
ok $? "perf-defer record without the module"
sed 's/^/# /' nat.stats nat.err
grep -qx "path: native" nat.stats
ok $? "it took the native path"
perf-defer record -q --keep-deferred -o natk.data -- /tests/wl_calls kernel 1200
ok $? "perf-defer record --keep-deferred without the module"
perf record -q -e cpu-clock -F 4000 --call-graph fp,defer -o p73.data -- /tests/wl_calls kernel 1200 2>p73.err
ok $? "perf 7.3 record --call-graph fp,defer"
sed 's/^/# /' p73.err
gzip -c /proc/kallsyms >/tmp/kallsyms.gz
tap_done
