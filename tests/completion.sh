#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# completion.sh: the bash completion (completion/perf-defer), sourced in a
# bash as bash-completion would, then driven as the shell drives it
# (COMP_WORDS, COMP_CWORD): commands, each command's options as its
# --help lists them, events, modes, files, the workload after --.  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vm/tap.sh
. "$top/tests/vm/tap.sh"

pdf=${PERF_DEFER:-$top/recorder/perf-defer}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
touch "$dir/run1.data" "$dir/run2.data"

# complete WORD...: what completing the last WORD of 'perf-defer WORD...'
# offers, one a line, sorted
complete_words() {
	bash --norc --noprofile -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_perf_defer
		printf "%s\n" "${COMPREPLY[@]}"' _ "$top/completion/perf-defer" "$pdf" "$@" | sort
}

# expect WANT WORD...: the completions of WORD... include every word of WANT
expect() {
	local want=$1 got w miss=

	shift
	got=$(complete_words "$@")
	for w in $want; do
		grep -qxF -- "$w" <<<"$got" || miss="$miss $w"
	done
	[ -z "$miss" ] || echo "# offered: ${got//$'\n'/ }"
	ok "$([ -z "$miss" ]; echo $?)" "perf-defer $* <TAB> offers $want${miss:+ (missing:$miss)}"
}

tap_plan 11
bash --norc --noprofile -c '. "$1"; complete -p perf-defer' _ "$top/completion/perf-defer" |
	grep -q -- '-F _perf_defer perf-defer$'
ok $? "complete -p perf-defer: the function is registered"
expect "record" rec
expect "record perf status stitch dump" ""
expect "--user-unwind" record --us
expect "cycles" record -e cy
expect "fp,defer dwarf,defer" record --call-graph ""
expect "$dir/run1.data $dir/run2.data" stitch -i "$dir/run"
expect "--input --output --stats" stitch --
# every option record's --help lists, none other
want=$("$pdf" record --help | grep -oE '^ {2,}(-[A-Za-z], )?--?[A-Za-z][A-Za-z-]*' | tr -d ' ' | tr ',' '\n' | sort)
got=$(complete_words record -)
[ -n "$want" ] && [ "$want" = "$got" ]
ok $? "perf-defer record -<TAB> offers exactly the options of its --help ($(echo "$want" | wc -l))"
expect "record" perf ""
expect "bash" record -- ba
tap_done
