#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# version.sh: one version everywhere.  dkms.conf's PACKAGE_VERSION is the
# one place it is written; make, the recorder (--version), the module
# (modinfo version) and the Debian package (debian/changelog, whose
# newest entry a release adds) must say the same, and the ABI the recorder speaks
# must be the module's (modinfo abi_version) and the uapi header's.  Run
# after 'make' (module/perf_defer.ko, recorder/perf-defer).  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

ko=$top/module/perf_defer.ko
pdf=$top/recorder/perf-defer
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
abi=$(awk '$1 == "#define" && $2 == "PERF_DEFER_ABI_MAJOR" { M = $3 }
	$1 == "#define" && $2 == "PERF_DEFER_ABI_MINOR" { m = $3 }
	END { print M "." m }' "$top/include/uapi/linux/perf_defer.h")
echo "# dkms.conf: $ver; include/uapi/linux/perf_defer.h: ABI $abi"

tap_plan 6
[[ $ver =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
ok $? "dkms.conf's PACKAGE_VERSION is a version ($ver)"
m=$(make -s -C "$top" version)
[ "$m" = "$ver" ]
ok $? "make version says $ver ($m)"
r=$("$pdf" --version)
[ "$r" = "perf-defer version $ver (ABI $abi)" ]
ok $? "perf-defer --version says $ver and ABI $abi ($r)"
v=$(modinfo -F version "$ko" 2>/dev/null)
[ "$v" = "$ver" ]
ok $? "modinfo version of the module is $ver (${v:-none})"
d=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version 2>/dev/null)
[ "$d" = "$ver" ]
ok $? "debian/changelog's newest version is $ver (${d:-none}; a native package)"
a=$(modinfo -F abi_version "$ko" 2>/dev/null)
[ "$a" = "$abi" ]
ok $? "modinfo abi_version of the module is $abi (${a:-none})"
tap_done
