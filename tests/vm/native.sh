#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# native.sh: on a kernel with native deferred callchains (>= 6.19), with
# perf 7.3 in the guest: no module is loaded, and perf's own
# 'record --call-graph fp,defer' makes /tmp/p73.data, which tests/readers.sh
# stitches and reads on the host.  (keep.sh native records with perf-defer.)
# TAP.
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

tap_plan 2
cd /tmp || exit 1
[ ! -e /sys/module/perf_defer ]
ok $? "no module loaded"
perf record -q -e cpu-clock -F 4000 --call-graph fp,defer -o p73.data -- /tests/wl_calls kernel 1200 2>p73.err
ok $? "perf 7.3 record --call-graph fp,defer"
sed 's/^/# /' p73.err
[ -f /tmp/kallsyms.gz ] || gzip -c /proc/kallsyms >/tmp/kallsyms.gz
tap_done
