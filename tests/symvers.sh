#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# symvers.sh SERIES...: scripts/symvers.py, which gives the kernels whose
# headers package is gone (6.16) their Module.symvers, read off the image
# alone, must give, for kernels whose headers Debian still ships, exactly
# the vmlinux lines of Debian's own Module.symvers.  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

tap_plan $#
ev="$("$top/scripts/ksrc")/scripts/extract-vmlinux"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in "$@"; do
	k=${PERF_DEFER_CACHE:-/var/cache/perf-defer}/kernels/$s
	rel=$(cat "$k/release")
	ref=/lib/modules/$rel/build/Module.symvers
	sh "$ev" "$k/vmlinuz" >"$tmp/vmlinux" &&
		python3 "$top/scripts/symvers.py" "$tmp/vmlinux" | sort >"$tmp/ours" &&
		grep -P '\tvmlinux\t' "$ref" | sort >"$tmp/ref" &&
		[ -s "$tmp/ref" ] && cmp -s "$tmp/ours" "$tmp/ref"
	rc=$?
	echo "# $rel: $(wc -l <"$tmp/ours") exports read off vmlinuz, $(wc -l <"$tmp/ref") in Debian's Module.symvers"
	[ $rc = 0 ] || diff "$tmp/ref" "$tmp/ours" | head -n 5 | sed 's/^/# /'
	ok $rc "symvers.py on $rel's vmlinuz equals Debian's Module.symvers"
done
tap_done
