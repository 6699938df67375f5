#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# DKMS, as TAP: 'make dkms-install' (dkms add/build/install) against each
# module kernel's headers, the installed .ko kept in build/dkms/RELEASE/
# for the VM to load; BUILD_EXCLUSIVE_KERNEL skips the native kernel; a
# kernel without headers gets a clear message; 'dkms remove' leaves
# nothing behind.
#   tests/dkms.sh NATIVE_KERNEL_RELEASE MODULE_KERNEL_RELEASE...
# On the host, whose headers those are.  With --series, the install and
# the removal for test kernels of scripts/kernels; for those whose headers
# live in a chroot ("source", "chroot", "cross"), with the dkms of that
# chroot's Debian release; an arm64 kernel's ("cross") as a cross build:
# DKMS for arch aarch64, the headers' .kernelvariables given Debian's
# cross-build variables (ARCH arm64, CROSS_COMPILE aarch64-linux-gnu-):
#   tests/dkms.sh --series SERIES...
set -u

usage="usage: dkms.sh NATIVE_RELEASE MODULE_RELEASE... | dkms.sh --series SERIES..."
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
# MODULE_INFO(abi_version): PERF_DEFER_ABI_MAJOR.PERF_DEFER_ABI_MINOR
abi=$(awk '$1 == "#define" && $2 == "PERF_DEFER_ABI_MAJOR" { M = $3 }
	$1 == "#define" && $2 == "PERF_DEFER_ABI_MINOR" { m = $3 }
	END { print M "." m }' "$top/include/uapi/linux/perf_defer.h")
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

# The chroot DKMS runs in ("" for the host), the bind mounts it needs, and
# where the tree is seen from there
root='' binds=() src=$top
# what 'make dkms-install' runs under, and is given, for a cross build
make_env=() make_args=()
# in_root CMD...: CMD on the host, or in $root
in_root() {
	if [ -n "$root" ]; then pd_in_root "$root" "${binds[@]}" -- "$@"; else "$@"; fi
}

# install_one REL: 'make dkms-install' for REL, and the installed module
# checked and kept (five results)
install_one() {
	local rel=$1 ko

	in_root "${make_env[@]}" make -s -C "$src" dkms-install KERNELRELEASE="$rel" \
		"${make_args[@]}" >/tmp/pd-dkms.log 2>&1
	ok $? "dkms add/build/install for $rel${root:+ in ${root##*/}}"
	sed 's/^/# /' /tmp/pd-dkms.log

	in_root dkms status "perf-defer/$ver" -k "$rel" | tee /tmp/pd-dkms.status | sed 's/^/# /'
	grep -q "installed" /tmp/pd-dkms.status
	ok $? "dkms status says installed for $rel"

	ko=$(find "$root/lib/modules/$rel/updates" -name 'perf_defer.ko*' 2>/dev/null | head -n 1)
	[ -n "$ko" ] && modinfo "$ko" | grep -q "^vermagic: *$rel "
	ok $? "installed ${ko#"$root"} has vermagic $rel"

	[ "$(modinfo -F abi_version "$ko" 2>/dev/null)" = "$abi" ] &&
		[ "$(modinfo -F version "$ko" 2>/dev/null)" = "$ver" ]
	ok $? "modinfo shows abi_version $abi and version $ver"

	mkdir -p "$top/build/dkms/$rel"
	case $ko in
	*.xz) xz -dc "$ko" >"$top/build/dkms/$rel/perf_defer.ko" ;;
	*.zst) zstd -qdc "$ko" >"$top/build/dkms/$rel/perf_defer.ko" ;;
	*) cp "$ko" "$top/build/dkms/$rel/perf_defer.ko" ;;
	esac
	ok $? "kept the installed module of $rel for the VM test"
}

# removed REL...: 'dkms remove' unregisters the module and deletes the
# installed files (two results)
removed() {
	local left

	! in_root dkms status 2>/dev/null | grep -q perf-defer
	ok $? "dkms remove unregisters the module${root:+ in ${root##*/}} ($*)"
	left=$(for rel in "$@"; do find "$root/lib/modules/$rel/updates" -name 'perf_defer.ko*'; done 2>/dev/null)
	[ -z "$left" ]
	ok $? "dkms remove deletes the installed .ko files of $*${left:+: $left}"
}

if [ "${1:-}" = --series ]; then
	shift
	[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
	PD_PROG=dkms
	# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
	. "$top/scripts/lib.sh"
	tap_plan $((7 * $#))
	for series in "$@"; do
		kdir=$(pd_kernel_dir "$series") rel=$(cat "$kdir/release")
		root='' src=$top binds=() make_env=() make_args=()
		read -r _ _ headers _ < <(pd_kernel "$series")
		if [ "$headers" != host ]; then
			root=$("$top/scripts/deps" dkms "$series") src=/mnt/src binds=("$top:/mnt/src")
		fi
		if [ "$headers" = source ]; then
			# headers built from the source: where DKMS looks for them
			binds+=("$kdir/kbuild:/mnt/kbuild")
			mkdir -p "$root/lib/modules/$rel"
			ln -sfn /mnt/kbuild "$root/lib/modules/$rel/build"
		elif [ "$headers" = cross ]; then
			mkdir -p "$root/lib/modules/$rel"
			ln -sfn "/usr/src/linux-headers-$rel" "$root/lib/modules/$rel/build"
			make_env=(env DEB_BUILD_ARCH=amd64 DEB_HOST_ARCH=arm64
				DEB_HOST_GNU_TYPE=aarch64-linux-gnu)
			make_args=(DKMS_ARCH=aarch64)
		fi
		in_root dkms remove "perf-defer/$ver" --all >/dev/null 2>&1
		install_one "$rel"
		in_root make -s -C "$src" dkms-uninstall >/dev/null 2>&1
		removed "$rel"
	done
	tap_done
	exit
fi
native=${1:?$usage}
shift
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }

tap_plan $((5 * $# + 6))
dkms remove "perf-defer/$ver" --all >/dev/null 2>&1
for rel in "$@"; do
	install_one "$rel"
done

# a kernel that DKMS would build for, without headers: a clear message
dkms build "perf-defer/$ver" -k 6.5.0-noheaders >/tmp/pd-dkms.nohdr 2>&1
rc=$?
sed 's/^/# /' /tmp/pd-dkms.nohdr
[ "$rc" != 0 ] && grep -qi "headers.*cannot be found" /tmp/pd-dkms.nohdr
ok $? "no headers: dkms build fails with a clear message (exit $rc)"
make -s -C "$top/module" KDIR=/lib/modules/6.5.0-noheaders/build >/tmp/pd-mk.nohdr 2>&1
rc=$?
sed 's/^/# /' /tmp/pd-mk.nohdr
[ "$rc" != 0 ] && grep -q "no kernel headers at" /tmp/pd-mk.nohdr
ok $? "no headers: make -C module says so (exit $rc)"

dkms build "perf-defer/$ver" -k "$native" >/tmp/pd-dkms.native 2>&1
rc=$?
sed 's/^/# /' /tmp/pd-dkms.native
[ "$rc" = 77 ] && grep -q BUILD_EXCLUSIVE /tmp/pd-dkms.native
ok $? "BUILD_EXCLUSIVE_KERNEL skips native kernel $native (exit $rc)"

# The regular expression itself: it admits the range the tests run the
# module on, which include/perf_defer_tested.h lists as scripts/kernels has
# it, and nothing either side of it.
re=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"/\1/p' "$top/dkms.conf")
tested=$(sed -n 's/^#define PERF_DEFER_TESTED_MODULE[[:space:]][^"]*"\(.*\)"/\1/p' \
	"$top/include/perf_defer_tested.h")
kernels=$(grep -v '^#' "$top/scripts/kernels" | awk '$4 != "native" && $5 != "manual" {
	sub(/-.*/, "", $1); if (!seen[$1]++) print $1 }' | sort -V | paste -sd' ')
echo "# tested with the module: $tested; scripts/kernels: $kernels"
bad=
for s in $tested; do
	for r in "$s.0-amd64" "$s.99+deb13-rt-amd64" "$s.7"; do
		[[ $r =~ $re ]] || bad="$bad $r"
	done
done
lo=${tested%% *} hi=${tested##* }
# nothing either side: the series before the lowest (or the last of the
# major before), after the highest, and the next majors
below=${lo%%.*}.$((${lo#*.} - 1))
[ "${lo#*.}" != 0 ] || below=$((${lo%%.*} - 1)).20
for r in "$below.0" "$below.3-amd64" "${hi%%.*}.$((${hi#*.} + 1)).0" \
	"${hi%%.*}.$((${hi#*.} + 1)).1-amd64" 7.0.0 7.2.1+deb14-amd64 10.1.0 16.1.0; do
	[[ $r =~ $re ]] && bad="$bad !$r"
done
# the range is whole: every series between the ends is admitted (a major
# before the highest's ran up to .19 at most: 4.20 was 4.x's last, 5.19
# 5.x's)
for m in $(seq "${lo%%.*}" "${hi%%.*}"); do
	first=0 last=19
	[ "$m" != "${lo%%.*}" ] || first=${lo#*.}
	[ "$m" != "${hi%%.*}" ] || last=${hi#*.}
	for r in $(seq "$first" "$last"); do
		[[ $m.$r.0 =~ $re ]] || bad="$bad $m.$r.0"
	done
done
[ -n "$tested" ] && [ "$tested" = "$kernels" ] && [ -z "$bad" ]
ok $? "BUILD_EXCLUSIVE_KERNEL admits $lo to $hi, the range the tests run${bad:+ (wrong:$bad)}"

make -s -C "$top" dkms-uninstall >/dev/null 2>&1
removed "$@"
tap_done
