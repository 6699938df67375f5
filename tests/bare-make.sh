#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A user's plain 'make' on a bare Debian 12, as TAP: a copy of a
# debootstrap minbase bookworm ('scripts/deps bare') gets only what the
# README says a user needs (build-essential, libelf-dev and the headers of
# its kernel, linux-headers-amd64: 6.1), the tree's files as git knows
# them (no build products), and an unprivileged user who runs 'make'.  It
# must build perf_defer.ko for 6.1 and the recorder, and no test program.
# Slow (packages are downloaded into the copy): scripts/check --extra.
#   tests/bare-make.sh
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
PD_PROG=bare-make.sh
# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
. "$top/scripts/lib.sh"
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

[ "$(id -u)" = 0 ] || pd_die "must run as root (debootstrap, chroot)"
base=$("$top/scripts/deps" bare) || pd_die "no bare bookworm (scripts/deps bare failed)"
mkdir -p "$PD_BUILD"
w=$(mktemp -d "$PD_BUILD/bare.XXXXXX") || exit 1
trap 'rm -rf --one-file-system "$w"' EXIT
r=$w/root log=$w/log

tap_plan 8

# in ROOT: run CMD as root, or as the user with "user" first
in_bare() {
	if [ "$1" = user ]; then
		pd_in_root "$r" -- runuser -u user -- env HOME=/home/user "${@:2}"
	else
		pd_in_root "$r" -- "$@"
	fi
}
# shown: the last lines of the log, as TAP comments
shown() { tail -n "${1:-15}" "$log" | sed 's/^/# /'; }

cp -a "$base" "$r"
! in_bare sh -c 'command -v cc || command -v gcc || command -v make' >"$log" 2>&1
ok $? "the copy of bare bookworm has no compiler and no make"
shown 3

in_bare sh -c 'apt-get -q update && apt-get -q install -y build-essential libelf-dev \
	linux-headers-amd64 && useradd -m user' >"$log" 2>&1
ok $? "apt-get install build-essential libelf-dev linux-headers-amd64"
shown 3

mkdir -p "$r/home/user/perf-defer"
git -C "$top" ls-files -z --cached --others --exclude-standard |
	(cd "$top" && xargs -0 cp --parents -t "$r/home/user/perf-defer" 2>/dev/null)
in_bare chown -R user: /home/user/perf-defer
ok $? "the tree's sources copied, without build products"
t=$r/home/user/perf-defer
find "$t/tests" | sort >"$w/tests.before"

in_bare user sh -c 'cd /home/user/perf-defer && make' >"$log" 2>&1
ok $? "make, as a user"
shown 15

rel=$(basename "$(dirname "$(echo "$r"/lib/modules/6.1.*-amd64/build)")")
ko=$t/module/perf_defer.ko
[ -f "$ko" ] && modinfo -F vermagic "$ko" | tee "$log" | grep -q "^$rel "
ok $? "module/perf_defer.ko built for $rel"
shown 1

in_bare user /home/user/perf-defer/recorder/perf-defer --version >"$log" 2>&1
ok $? "recorder/perf-defer built and runs"
shown 1

# nothing of the tests: kselftest headers, test programs, test modules
[ ! -e "$t/build" ]
ok $? "no build/ (kselftest headers, VM test programs)"
find "$t/tests" | sort | comm -13 "$w/tests.before" - >"$log"
[ ! -s "$log" ]
ok $? "nothing new under tests/"
shown 5

tap_done
