#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Static guard for kernels with indirect branch tracking (IBT), which TCG
# does not emulate: perf_defer.ko must not call through an address it
# looked up itself.  On CONFIG_X86_KERNEL_IBT kernels a kprobe's address
# lies past the function's ENDBR, and a function whose address the kernel
# never takes may have its ENDBR sealed at boot: an indirect call to
# either raises a control-protection fault (#CP) on Tiger Lake and later.
#
#	tests/ibt.sh MODULE.ko...
#
# For each module (TAP):
#  - it neither imports nor names kallsyms_lookup_name;
#  - its only indirect calls or jumps are in the functions listed below,
#    which call pointers the kernel hands them (poll_wait()'s qproc);
#  - built for an IBT kernel (objtool's .ibt_endbr_seal is there), the
#    hooks' callbacks, which ftrace and kprobes call through a pointer
#    (ftrace's list function whenever another ftrace_ops shares a site),
#    begin with an ENDBR that objtool does not seal.
set -eu -o pipefail

# functions allowed an indirect call, and why
allowed_fns='pd_poll'	# poll_wait(): the poll_table's _qproc, set by the kernel
# functions the kernel calls indirectly (those the module has)
callbacks='pd_ftrace_hook pd_pre_perf_callchain pd_pre_perf_callchain_user pd_post_nop'

n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); fail=1; echo "not ok $n - $*"; }

[ $# -gt 0 ] || { echo "usage: tests/ibt.sh MODULE.ko..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"
echo "1..$((3 * $#))"
for ko in "$@"; do
	name=${ko#"${PERF_DEFER_BUILD:-}"}
	# (grep without -q: an early exit would fail the pipe under pipefail);
	# the name as a word, outside the debug info, whose types of 6.18
	# hold BPF_FUNC_kallsyms_lookup_name (enum bpf_func_id)
	objcopy --strip-debug -R .BTF "$ko" "$tmp/nodebug.ko"
	if nm -u "$ko" | grep -w kallsyms_lookup_name >/dev/null ||
		strings -a "$tmp/nodebug.ko" | grep -w kallsyms_lookup_name >/dev/null; then
		notok "$name: imports or names kallsyms_lookup_name"
	else
		ok "$name: no kallsyms_lookup_name"
	fi
	# indirect call/jmp sites: 'call *%reg' or a retpoline thunk
	# (__x86_indirect_thunk_*, __x86_indirect_call_thunk_*); the return
	# thunk is not one
	bad=$(objdump -dr --no-show-raw-insn "$ko" | awk -v allowed=" $allowed_fns " '
		/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); next }
		/(call|jmp)q? +\*/ || /__x86_indirect_(call_)?thunk/ {
			if (index(allowed, " " fn " ") == 0) print fn ": " $0
		}')
	if [ -n "$bad" ]; then
		notok "$name: indirect calls outside the allowed functions"
		while IFS= read -r line; do echo "#   $line"; done <<<"$bad"
	else
		ok "$name: indirect calls only in: $allowed_fns"
	fi
	if ! objdump -h "$ko" | grep '[.]ibt_endbr_seal' >/dev/null; then
		ok "$name: callbacks' ENDBR # SKIP not built for an IBT kernel (no .ibt_endbr_seal)"
		continue
	fi
	# sealed: the ENDBRs objtool lists, as .text offsets
	objdump -r -j .ibt_endbr_seal "$ko" |
		awk '$3 ~ /^[.]text[+]0x/ { sub(/^[.]text[+]0x0*/, "", $3); print $3 }' >"$tmp/sealed"
	bad="" seen=""
	for fn in $callbacks; do
		# VALUE FLAGS SECTION SIZE NAME
		sym=$(objdump -t "$ko" | awk -v f="$fn" '$NF == f && $(NF - 2) ~ /^[.]/ { print $1, $(NF - 2) }')
		[ -n "$sym" ] || continue
		seen="$seen $fn"
		off=${sym% *} sec=${sym#* }
		insn=$(objdump -d --no-show-raw-insn --disassemble="$fn" "$ko" |
			awk '/^ +[0-9a-f]+:/ && !n++ { print $2 }')
		if [ "$insn" != endbr64 ]; then
			bad="$bad $fn(begins with ${insn:-nothing})"
		elif [ "$sec" = .text ] && grep -qx "${off#"${off%%[!0]*}"}" "$tmp/sealed"; then
			bad="$bad $fn(sealed)"
		fi
	done
	if [ -z "$seen" ]; then
		notok "$name: none of the callbacks found: $callbacks"
	elif [ -n "$bad" ]; then
		notok "$name: callbacks without a kept ENDBR:$bad"
	else
		ok "$name: callbacks begin with an ENDBR, unsealed:$seen"
	fi
done
exit $fail
