# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
# Reading perf.data files in tests, sourced (guest and host).  $PERF is
# the perf to run (default: perf); extra arguments after FILE go to it.

# kaddr(A), for awk: is the address perf printed a kernel one?  Kernel
# addresses are printed in 16 hex digits from ffff on; a user one is
# shorter, also where it begins with ffff (arm64's vDSO, 0xffff...
# below 2^48; perf 6.1 prints it as an offset, later perfs in full).
PERF_KADDR='function kaddr(a) { return length(a) == 16 && a ~ /^ffff/ }'

# paths FILE: the user call paths through a workload leaf, innermost
# first and up to main, that hold at least 2% of those samples; one per
# line.  Past main, perf's in-NMI walk goes on through whatever the
# libc frame left in rbp (e.g. ";__do_global_dtors_aux;[unknown]") where
# the upstream unwinder's rules (fp >= sp, cfa > sp) stop: both are cut
# at main.  Rare paths (a sample in a function prologue, before its frame
# exists) are noise, the same for both walks.
paths() {
	${PERF:-perf} script -i "$@" -F ip,sym 2>/dev/null | awk "$PERF_KADDR"'
		function out() { if (p ~ /leaf_/) { n[p]++; all++ } p = ""; done = 0 }
		/^$/ { out(); next }
		!kaddr($1) && !done { p = p (p == "" ? "" : ";") $2; if ($2 == "main") done = 1 }
		END { out(); for (k in n) if (n[k] * 50 >= all) print k }' | sort
}

# in_exec FILE: how many samples of FILE perf took inside an execve() (a
# kernel frame named *execve*) with their user frames walked in the
# interrupt: the module leaves those to perf's own walk, since the
# task_work would run after the exec, on a stack the sample never saw
# (one deferred there gets no record, and no user frames)
in_exec() {
	${PERF:-perf} script -i "$@" -F ip,sym 2>/dev/null | awk "$PERF_KADDR"'
		function out() { n += x && u; x = u = 0 }
		/^$/ { out(); next }
		kaddr($1) && $2 ~ /execve/ { x = 1 }
		!kaddr($1) { u = 1 }
		END { out(); print n + 0 }'
}

# warnings FILE: what perf says on stderr while reading FILE, and that it
# died of a signal (perf's own stderr then says nothing)
warnings() {
	{
		for _cmd in "report --stdio" script; do
			# shellcheck disable=SC2086 # the command and its option
			${PERF:-perf} $_cmd -i "$@" >/dev/null
			_rc=$?
			[ $_rc -le 128 ] || echo "perf $_cmd failed: signal $((_rc - 128))" >&2
		done
	} 2>&1 | grep -iE 'warn|error|fail|unknown|unsupported|invalid' || true
}


# chains FILE: every sample's user frames, one sample a line, in time
# order, for comparing two readings of the same samples: the sample's time,
# the number of user frames, then the workload's own functions among them
# (perf versions print user addresses differently and pick different names
# for libc's aliases, e.g. memset_ifunc or memset).  By time, not in the
# order perf prints: perf 7.3 holds a deferred sample back until its
# record comes, and prints one that never gets its record (a task's last
# entry) only at the end.
chains() {
	${PERF:-perf} script -i "$@" -F time,ip,sym --ns 2>/dev/null | awk "$PERF_KADDR"'
		function out() { if (t != "") print t " " n + 0 ":" p; n = 0; p = ""; t = "" }
		/^ *[0-9]+\.[0-9]+: *$/ { out(); t = $1; next }
		/^$/ { next }
		!kaddr($1) { n++; if ($2 ~ /^(leaf_|alpha|beta|gamma_|delta|epsilon|main)/) p = p " " $2 }
		END { out() }' | sort -s -k1,1n
}

# perf_guest N KO: how a guest test that records through perf starts: its
# plan of N tests, /tmp, KO loaded, the perf in use as a comment, and $NI,
# perf's option against looking for inlined frames (the guest has no
# addr2line, and perf 7.3, looking for it, dies of SIGPIPE)
perf_guest() {
	tap_plan "$1"
	cd /tmp || exit 1
	tap_insmod "$2"
	perf version | sed 's/^/# /'
	# shellcheck disable=SC2034 # for the caller
	NI=--no-inline
}

# sigint_task SECS OPT OUT ERR CMD...: 'CMD... OPT PID' (OPT: -p or -t) on a
# running wl_calls (user mode), stdout to OUT, stderr to ERR, ended by
# SIGINT SECS seconds after the module began to defer its samples (the
# command's start can take seconds on a loaded host: up to 30 more are
# waited for; counter() of counters.sh, which the guest test sources);
# returns CMD's exit status
sigint_task() {
	_secs=$1 _opt=$2 _out=$3 _err=$4
	shift 4
	/tests/wl_calls user 60000 &
	_wl=$!
	sleep 0.5
	_r0=$(counter requests) _n=0
	"$@" "$_opt" $_wl >"$_out" 2>"$_err" &
	_cmd=$!
	while [ -n "$_r0" ] && [ "$(counter requests)" = "$_r0" ] && [ $_n -lt 300 ] &&
		kill -0 $_cmd 2>/dev/null; do
		sleep 0.1
		_n=$((_n + 1))
	done
	sleep "$_secs"
	kill -INT $_cmd
	wait $_cmd
	_rc=$?
	kill $_wl 2>/dev/null
	wait $_wl 2>/dev/null
	return $_rc
}
