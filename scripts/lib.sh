# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034 # its variables are for the scripts that source it
# Shared helpers for scripts/*; sourced, never run.

PD_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PD_CACHE=${PERF_DEFER_CACHE:-/var/cache/perf-defer}
PD_BUILD=${PERF_DEFER_BUILD:-$PD_TOP/build}
PD_PROG=${PD_PROG:-$(basename "$0")}
# What fails a guest's console (an extended regex): an oops, BUG, WARNING,
# call trace, KASAN/UBSAN/debug-objects report, a module's kmemleak leak,
# lockdep splat, hung task or panic
PD_SPLAT='Oops|BUG:|WARNING:|Call Trace|KASAN|UBSAN|ODEBUG|suspected leak in perf_defer|kmemleak: [0-9]+ new suspected|possible circular locking|possible recursive locking|inconsistent lock state|blocked for more than|Kernel panic|general protection fault|kernel BUG at'

pd_die() {
	echo "$PD_PROG: $*" >&2
	exit 1
}

pd_log() {
	echo "[ $PD_PROG: $* ]" >&2
}

# pd_kernel SERIES: "SUITE FLAVOUR HEADERS RUNS" of a test kernel of
# scripts/kernels, or nothing (status 1) when it has no line there
pd_kernel() {
	awk -v s="$1" '$1 == s { print $2, $3, $4, $5; f = 1 } END { exit !f }' \
		<(grep -v '^#' "$PD_TOP/scripts/kernels")
}

# pd_kernels [all|default|extra|manual] [module|native]: the series of
# scripts/kernels that run by default, with --extra, or only when asked
# for (all: default and extra, as when not said), that take the module
# (HEADERS not native) or run natively
pd_kernels() {
	local runs='' kind=''

	while [ $# -gt 0 ]; do
		case $1 in
		default|extra|manual) runs=$1 ;;
		all) ;;
		module|native) kind=$1 ;;
		esac
		shift
	done
	grep -v '^#' "$PD_TOP/scripts/kernels" | awk -v r="$runs" -v k="$kind" '
		NF == 5 && (r == "" ? $5 != "manual" : $5 == r) &&
		(k == "" || (k == "native") == ($4 == "native")) { print $1 }'
}

# pd_kernel_dir SERIES: the cache directory of a fetched test kernel, or
# of a debug kernel built here (6.1-debug, 6.1-kcsan: scripts/debug-kernel)
pd_kernel_dir() {
	local d="$PD_CACHE/kernels/$1"

	if [ "$1" = 6.1-debug ]; then
		"$PD_TOP/scripts/debug-kernel" >/dev/null || pd_die "cannot build the debug kernel (see above)"
	elif [ "$1" = 6.1-kcsan ]; then
		"$PD_TOP/scripts/debug-kernel" kcsan >/dev/null ||
			pd_die "cannot build the KCSAN kernel (see above)"
	elif [ ! -f "$d/stamp" ]; then
		"$PD_TOP/scripts/deps" kernel "$1" >&2 || pd_die "cannot fetch kernel $1 (see above)"
	fi
	echo "$d"
}

# pd_in_root ROOT [HOSTDIR:PATH]... -- CMD...: run CMD chrooted in ROOT with
# /proc, /sys, /dev and each HOSTDIR bind-mounted at PATH under ROOT (which
# must exist there), in a private mount namespace: no mount outlives CMD.
pd_in_root() {
	local r=$1 binds=()

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		binds+=("$1")
		shift
	done
	shift
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --propagation private -- /bin/sh -c '
		r=$1 n=$2; shift 2
		mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" &&
			mount --rbind /dev "$r/dev" || exit 125
		while [ "$n" -gt 0 ]; do
			mount --bind "${1%%:*}" "$r${1#*:}" || exit 125
			n=$((n - 1)); shift
		done
		exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"' \
		pd_in_root "$r" ${#binds[@]} "${binds[@]}" "$@"
}
