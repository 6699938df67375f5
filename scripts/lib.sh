# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034
# Shared helpers for scripts/*; sourced, never run.  (Variables are for
# the scripts that source it.)

PD_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PD_CACHE=${PERF_DEFER_CACHE:-/var/cache/perf-defer}
PD_BUILD=${PERF_DEFER_BUILD:-$PD_TOP/build}
PD_PROG=${PD_PROG:-$(basename "$0")}

pd_die() {
	echo "$PD_PROG: $*" >&2
	exit 1
}

pd_log() {
	echo "[ $PD_PROG: $* ]" >&2
}

# pd_kernel_dir SERIES: the cache directory of a fetched test kernel
pd_kernel_dir() {
	local d="$PD_CACHE/kernels/$1"

	[ -f "$d/stamp" ] || "$PD_TOP/scripts/deps" kernel "$1" >&2 ||
		pd_die "cannot fetch kernel $1 (see above)"
	echo "$d"
}
