#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The packages of 'make deb', installed as a user installs them, as TAP:
# in a copy of a clean bookworm chroot ('scripts/deps bare'),
#  1. apt installs perf-defer and perf-defer-dkms with 6.1's headers
#     present: DKMS builds and installs the module for 6.1;
#  2. installing 6.12's headers (bookworm-backports) builds it for 6.12
#     too (DKMS's kernel-header hook);
#  3. 6.1 boots with the chroot shared into the guest (scripts/vm
#     --share), and chrooted there, with the installed packages only:
#     modprobe perf_defer, perf-defer record -g -- /bin/ls, perf report
#     (linux-perf installed in the chroot; tests/vm/installed.sh);
#  4. an upgrade to a newer version of both packages (built here from a
#     copy of the tree with the version raised) rebuilds the module, which
#     the guest of 3 then loads and records with, and leaves nothing of
#     the old version;
#  5. purging both packages leaves no file of theirs: the chroot's file
#     list equals the one taken before the first install (apt's and
#     dpkg's own bookkeeping aside, and with what the packages depend on or recommend
#     installed before it was taken).
# Needs build/deb from 'make deb'; builds the newer version itself.
#   tests/deb-install.sh
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
PD_PROG=deb_install
# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
. "$top/scripts/lib.sh"
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

[ "$(id -u)" = 0 ] || pd_die "must run as root (chroot)"
ver=$(make -s -C "$top" version)
deb=$top/build/deb
[ -f "$deb/perf-defer_${ver}_amd64.deb" ] || pd_die "no packages of $ver in $deb: run make deb"
base=$("$top/scripts/deps" bare) || pd_die "no bookworm chroot (scripts/deps bare failed)"
r61=$(cat "$(pd_kernel_dir 6.1)/release") r612=$(cat "$(pd_kernel_dir 6.12)/release")
out=$PD_BUILD/deb-install
w=$out/root log=$out/log
rm -rf --one-file-system "$out"
mkdir -p "$out"
trap 'rm -rf --one-file-system "$w"' EXIT

tap_plan 10
in_w() { pd_in_root "$w" -- "$@" >>"$log" 2>&1; }
shown() { tail -n "${1:-15}" "$log" | sed 's/^/# /'; }
# files: every file of the chroot but the package system's bookkeeping,
# runtime state (run/: a tmpfs on a booted system; udevadm test writes
# its database there),
# depmod's indexes (lib/modules/*/modules.*: no package owns them, and
# any depmod, DKMS's at install and at removal, writes them again) and
# DKMS's own signing key (var/lib/dkms/mok.*: made at its first build,
# kept on purpose, the one the firmware trusts once enrolled)
files() {
	(cd "$w" && find . -xdev \( -path ./var/lib/dpkg -o -path ./var/lib/apt -o \
		-path ./var/cache -o -path ./var/log -o -path ./tmp -o -path ./proc -o \
		-path ./sys -o -path ./dev -o -path ./run -o -path ./debs -o -path ./etc/ld.so.cache \) \
		-prune -o -print |
		grep -Ev '^\./(usr/)?lib/modules/[^/]+/modules\.[a-z.]+$|^\./var/lib/dkms/mok\.(key|pub)$' |
		sort)
}
# built REL VER: dkms status says perf-defer VER is installed for REL
built() {
	pd_in_root "$w" -- dkms status "perf-defer/$2" -k "$1" 2>&1 | tee -a "$log" | grep -q installed
}

cp -a "$base" "$w"
# the backports suite, from the same mirror, for 6.12's headers
bpo=$(awk '$3 == "bookworm" { print $1, $2, "bookworm-backports", $4; exit }' \
	"$w/etc/apt/sources.list")
echo "$bpo" >>"$w/etc/apt/sources.list"
in_w apt-get -q update
# What the packages depend on, and 6.12's headers with theirs (removed
# again at once), is there before the file list is taken: apt leaves a
# package's dependencies behind when it is purged
in_w apt-get -q install -y --no-install-recommends "linux-headers-$r61" "linux-headers-$r612" \
	dkms libelf1 linux-perf kmod openssl udev &&
	in_w apt-get -q purge -y "linux-headers-$r612"
ok $? "linux-headers-$r61 and what the packages depend on or recommend installed in a clean bookworm"
files >"$out/files.before"

mkdir -p "$w/debs"
cp "$deb/perf-defer_${ver}_amd64.deb" "$deb/perf-defer-dkms_${ver}_all.deb" "$w/debs/"
in_w apt-get -q install -y --no-install-recommends "/debs/perf-defer_${ver}_amd64.deb" \
	"/debs/perf-defer-dkms_${ver}_all.deb"
rc=$?
[ $rc = 0 ] || shown 30
ok $rc "apt install ./perf-defer_${ver}_amd64.deb ./perf-defer-dkms_${ver}_all.deb"
built "$r61" "$ver" &&
	ko=$(find "$w/lib/modules/$r61/updates" -name 'perf_defer.ko*' | head -n 1) &&
	s=$(modinfo -F signer "$ko") && [ -n "$s" ] && [ -s "$w/var/lib/dkms/mok.pub" ]
ok $? "dkms status: perf-defer $ver installed for $r61, signed with DKMS's key (${s:-unsigned})"

in_w apt-get -q install -y --no-install-recommends "linux-headers-$r612"
rc=$?
[ $rc = 0 ] || shown 30
built "$r612" "$ver"
ok $? "installing linux-headers-$r612 builds the module for it too (rc=$rc)"

# the installed root itself, booted: 6.1 with the chroot as /share
# booted VER: the guest of step 3, on the installed root, the packages at VER
booted() {
	local rc

	"$top/scripts/vm" -k 6.1 -o "$out/vm-$1" --share "$w" -- "installed.sh /share $1" \
		>"$out/vm-$1.log" 2>&1
	rc=$?
	grep -E '^(not )?ok ' "$out/vm-$1.log" | sed 's/^/# guest: /'
	[ $rc = 0 ] || tail -n 20 "$out/vm-$1.log" | sed 's/^/# /'
	return $rc
}
booted "$ver"
ok $? "booted on $r61: modprobe perf_defer ($ver), perf-defer record -g -- /bin/ls, perf report"

[ -f "$w/usr/share/man/man1/perf-defer-record.1.gz" ] &&
	[ -f "$w/usr/share/man/man4/perf_defer.4.gz" ] &&
	[ -f "$w/usr/share/bash-completion/completions/perf-defer" ] &&
	[ -f "$w/usr/share/doc/perf-defer/README.md.gz" ] &&
	[ -f "$w/usr/share/doc/perf-defer/security.md.gz" ] &&
	[ -f "$w/usr/share/doc/perf-defer-dkms/examples/60-perf-defer.rules" ] &&
	[ ! -e "$w/etc/udev/rules.d/60-perf-defer.rules" ] &&
	pd_in_root "$w" -- getent group perf-defer >/dev/null
ok $? "man pages, bash completion, docs, the perf-defer group and the udev rule as an example (off)"

# a newer version of both packages, built from a copy of the tree
new=${ver%.*}.$((${ver##*.} + 1))
t=$out/tree
mkdir -p "$t"
(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$t")
sed -i "s/^PACKAGE_VERSION=\"$ver\"/PACKAGE_VERSION=\"$new\"/" "$t/dkms.conf"
{
	printf 'perf-defer (%s) unstable; urgency=medium\n\n  * Test upgrade.\n\n' "$new"
	printf ' -- perf-defer developers <perf-defer@example.org>  %s\n\n' "$(date -R)"
	cat "$t/debian/changelog"
} >"$t/debian/changelog.new" && mv "$t/debian/changelog.new" "$t/debian/changelog"
(cd "$t" && git init -q && git add -A) && PERF_DEFER_BUILD=$out/newbuild "$t/scripts/deb" >>"$log" 2>&1
rc=$?
[ $rc = 0 ] || shown 30
cp "$out/newbuild/deb/perf-defer_${new}_amd64.deb" "$out/newbuild/deb/perf-defer-dkms_${new}_all.deb" \
	"$w/debs/" 2>/dev/null
in_w apt-get -q install -y --no-install-recommends "/debs/perf-defer_${new}_amd64.deb" \
	"/debs/perf-defer-dkms_${new}_all.deb"
rc2=$?
[ $rc2 = 0 ] || shown 30
built "$r61" "$new" && built "$r612" "$new" && ! pd_in_root "$w" -- dkms status 2>&1 | grep -q "/$ver\|, $ver,"
ok $? "upgrade to $new: rebuilt for both kernels, $ver gone from dkms (build $rc, install $rc2)"
pd_in_root "$w" -- perf-defer --version 2>&1 | grep -q "version $new " && booted "$new"
ok $? "after the upgrade: perf-defer --version says $new, and $new loads and records (guest)"

in_w apt-get -q purge -y perf-defer perf-defer-dkms
ok $? "apt purge perf-defer perf-defer-dkms"
# 6.12's headers, installed after the file list was taken
in_w apt-get -q purge -y "linux-headers-$r612"
files >"$out/files.after"
diff "$out/files.before" "$out/files.after" | sed 's/^/# left or removed: /' | head -n 20
cmp -s "$out/files.before" "$out/files.after"
ok $? "after the purge no file of the packages is left (file lists equal)"
tap_done
