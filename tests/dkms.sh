#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# DKMS on the host, as TAP: 'make dkms-install' (dkms add/build/install)
# against the given module kernel's headers, the installed .ko kept in
# build/dkms/ for the VM to load; BUILD_EXCLUSIVE_KERNEL skips the native
# kernel; 'dkms remove' leaves nothing behind.
#   tests/dkms.sh MODULE_KERNEL_RELEASE NATIVE_KERNEL_RELEASE
set -u

rel=${1:?usage: dkms.sh MODULE_RELEASE NATIVE_RELEASE}
native=${2:?usage: dkms.sh MODULE_RELEASE NATIVE_RELEASE}
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
. "$top/tests/vm/tap.sh"

tap_plan 9
dkms remove "perf-defer/$ver" --all >/dev/null 2>&1
make -s -C "$top" dkms-install KERNELRELEASE="$rel" >/tmp/pd-dkms.log 2>&1
ok $? "dkms add/build/install for $rel"
sed 's/^/# /' /tmp/pd-dkms.log

dkms status "perf-defer/$ver" -k "$rel" | tee /tmp/pd-dkms.status | sed 's/^/# /'
grep -q "installed" /tmp/pd-dkms.status
ok $? "dkms status says installed"

ko=$(find "/lib/modules/$rel/updates" -name 'perf_defer.ko*' 2>/dev/null | head -n 1)
[ -n "$ko" ] && modinfo "$ko" | grep -q "^vermagic: *$rel "
ok $? "installed $ko has vermagic $rel"

modinfo -F abi_version "$ko" 2>/dev/null | grep -qx '1\.0'
ok $? "modinfo shows abi_version 1.0"

mkdir -p "$top/build/dkms"
case $ko in
*.xz) xz -dc "$ko" >"$top/build/dkms/perf_defer.ko" ;;
*.zst) zstd -qdc "$ko" >"$top/build/dkms/perf_defer.ko" ;;
*) cp "$ko" "$top/build/dkms/perf_defer.ko" ;;
esac
ok $? "kept the installed module for the VM test"

dkms build "perf-defer/$ver" -k "$native" >/tmp/pd-dkms.native 2>&1
rc=$?
sed 's/^/# /' /tmp/pd-dkms.native
[ "$rc" = 77 ] && grep -q BUILD_EXCLUSIVE /tmp/pd-dkms.native
ok $? "BUILD_EXCLUSIVE_KERNEL skips native kernel $native (exit $rc)"

# The regular expression itself, on releases either side of 6.19.
re=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"/\1/p' "$top/dkms.conf")
bad=
for r in 5.10.0-30-amd64 6.1.0-57-amd64 6.1.0-57-rt-amd64 6.6.63 6.9.1 6.12.48+deb13-amd64 6.16.3+deb13-amd64 6.18.44-fc-v1045; do
	[[ $r =~ $re ]] || bad="$bad $r"
done
for r in 6.19.0 6.19.1-amd64 6.20.0 7.0.0 7.2.1+deb14-amd64 10.1.0; do
	[[ $r =~ $re ]] && bad="$bad !$r"
done
[ -z "$bad" ]
ok $? "BUILD_EXCLUSIVE_KERNEL builds <= 6.18 only${bad:+ (wrong:$bad)}"

make -s -C "$top" dkms-uninstall >/dev/null 2>&1
! dkms status 2>/dev/null | grep -q perf-defer
ok $? "dkms remove unregisters the module"
[ -z "$(find "/lib/modules/$rel/updates" -name 'perf_defer.ko*' 2>/dev/null)" ]
ok $? "dkms remove deletes the installed .ko"
tap_done
