#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# sig_enforce.sh: on a kernel booted with module.sig_enforce=1 (as one
# under UEFI Secure Boot behaves), the unsigned module is refused, and
# 'perf-defer status' says why and what to do.  TAP.
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

tap_plan 5
v=$(cat /sys/module/module/parameters/sig_enforce 2>/dev/null)
[ "$v" = Y ]
ok $? "the kernel enforces module signatures (sig_enforce=${v:-none})"
out=$(insmod "$PERF_DEFER_KO" 2>&1)
rc=$?
echo "# insmod: $out"
[ "$rc" != 0 ] && [ ! -d /sys/module/perf_defer ] && echo "$out" | grep -q 'Key was rejected'
ok $? "the unsigned module is refused: Key was rejected by service (rc=$rc)"
perf-defer status >/tmp/status.out 2>&1
rc=$?
sed 's/^/# /' /tmp/status.out
grep -qx 'signatures: required (module.sig_enforce=1)' /tmp/status.out
ok $? "status shows 'signatures: required (module.sig_enforce=1)'"
grep -q "only signed modules.*mokutil --import /var/lib/dkms/mok.pub" /tmp/status.out
ok $? "status says why, and how to enroll DKMS's key"
[ "$rc" = 1 ] && grep -qx 'path: none' /tmp/status.out
ok $? "status exits 1 with no path (rc=$rc)"
tap_done
