# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
# Sourced by the guest scripts that read the module's counters or sample
# at high rates.

# counter NAME: the module's cumulative counter NAME (perf-defer status)
counter() {
	perf-defer status 2>/dev/null | sed -n "s/^counters:.* $1 \([0-9]*\).*/\1/p"
}

# unthrottle: samples as fast as asked.  The rate limit first: with the
# throttling off, the kernel refuses to change it.
unthrottle() {
	sysctl -qw kernel.perf_event_max_sample_rate=100000
	sysctl -qw kernel.perf_cpu_time_max_percent=0
}
