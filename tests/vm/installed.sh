#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# installed.sh ROOT VERSION: the Debian packages as installed in the root
# filesystem ROOT (a bookworm chroot that tests/deb-install.sh filled,
# shared into the guest by scripts/vm --share): chrooted there, with that
# root's own modprobe, perf-defer and perf, 'modprobe perf_defer' loads
# the module DKMS built, and 'perf-defer record -g' records through it
# what perf report then reads (-N: the recordings add nothing to the
# root's build-id cache, which the purge test would count).  TAP.
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$(dirname "$0")/tap.sh"

r=${1:?usage: installed.sh ROOT VERSION} ver=${2:?usage: installed.sh ROOT VERSION}
tap_plan 7
for d in proc sys dev; do
	mount --bind "/$d" "$r/$d" || exit 1
done
in_root() { chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

in_root modprobe perf_defer
ok $? "modprobe perf_defer (the installed root's, its DKMS module)"
out=$(in_root modinfo -n perf_defer)
v=$(cat /sys/module/perf_defer/version 2>/dev/null)
echo "# modinfo -n perf_defer: $out; loaded: version ${v:-none}"
echo "$out" | grep -q '/updates/dkms/perf_defer.ko' && [ "$v" = "$ver" ]
ok $? "the module loaded is the one DKMS installed, version $ver"
# the example udev rule, enabled for the test (and taken out again): what
# udev would do on the device's add event
cp "$r/usr/share/doc/perf-defer-dkms/examples/60-perf-defer.rules" "$r/etc/udev/rules.d/" &&
	in_root udevadm test --action=add /devices/virtual/misc/perf_defer >/tmp/udev.out 2>&1
rm -f "$r/etc/udev/rules.d/60-perf-defer.rules"
grep -E '60-perf-defer.rules|GROUP|MODE' /tmp/udev.out | sed 's/^/# udevadm test: /'
grep -q "60-perf-defer.rules.*GROUP" /tmp/udev.out && grep -q "60-perf-defer.rules.*MODE" /tmp/udev.out
ok $? "the example udev rule, enabled, gives /dev/perf_defer the perf-defer group and mode 0660"
in_root perf-defer status >/tmp/st.out 2>&1
sed 's/^/# /' /tmp/st.out
grep -qx 'path: module' /tmp/st.out
ok $? "the installed perf-defer status says 'path: module'"

in_root perf-defer record -q -g -N -o /tmp/ls.data -- /bin/ls / >/dev/null 2>/tmp/rec.err &&
	in_root perf report -i /tmp/ls.data --stdio >/tmp/rep.out 2>>/tmp/rec.err
rc=$?
sed 's/^/# /' /tmp/rec.err
ok $rc "perf-defer record -g -- /bin/ls, read by the installed perf report"

# shellcheck disable=SC2016 # for the chroot's sh
in_root perf-defer record -q -g -N --stats -o /tmp/loop.data -- \
	/bin/sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done' >/tmp/stats.out 2>&1
rc=$?
sed 's/^/# /' /tmp/stats.out
st=$(sed -n 's/^stitched: //p' /tmp/stats.out)
[ "$rc" = 0 ] && [ "${st:-0}" -gt 0 ]
ok $? "a longer workload: deferred chains stitched into its samples (${st:-0})"
n=$(in_root perf report -i /tmp/loop.data --stdio -F overhead,comm 2>/dev/null | grep -c ' sh *$')
[ "$n" -gt 0 ]
ok $? "perf report reads it: the workload's samples are there"
in_root rmmod perf_defer
tap_done
