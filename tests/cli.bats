#!/usr/bin/env bats
# The command-line manners every tool shares: -h/--help and -V/--version, and
# one list of options told alike by the tool's --help, its man page and its
# bash and zsh completions, each of which the tool accepts.
load helpers
bats_require_minimum_version 1.5.0

TOOLS="pfdump pfrec pfsym pffold pfdiff pfflame pfimport pfscript pfpprof"

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# Options, one a line, as each source offers them ("--long" or "-x").
opts_help_all() {
	# every option named at the start of an option line, long and short
	"$1" --help | grep -E '^ +-' | sed -E 's/^ +//; s/(  |=| [A-Z]).*//' | tr ',' '\n' | tr -d ' ' | grep -E '^-' | sort -u
}
opts_man() {
	# the tag line after each .TP of the OPTIONS section
	awk '/^\.SH/ { s = ($2 == "OPTIONS") } s && prev == ".TP" { print } { prev = $0 }' "$PFTOOLS_SRC/tools/$1.1" |
		sed 's/\\-/-/g' | grep -oE '(^|[ "])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' "' | sort -u
}
opts_bash() {
	# what the completion function offers after a lone "-"
	bash -c "source '$PFTOOLS_SRC/completions/bash/$1'; COMP_WORDS=($1 -); COMP_CWORD=1; _$1 2>/dev/null
		printf '%s\n' \"\${COMPREPLY[@]}\"" | sed 's/=$//' | grep -vx -- '--' | sort -u
}
opts_zsh() {
	# option specs of _arguments: {-x,--long}, '--long[...]', -x+ and --long= forms
	grep -oP "(?<=[{,')*])--?[A-Za-z][A-Za-z0-9-]*(?=[+=]?[},\[])" "$PFTOOLS_SRC/completions/zsh/_$1" | sort -u
}

@test "-h, --help, -V and --version work alike in every tool" {
	for t in $TOOLS; do
		run -0 "$t" -h
		assert_line --index 0 --regexp "^Usage: $t "
		local help=$output
		run -0 "$t" --help
		assert_equal "$output" "$help"
		run -0 "$t" -V
		assert_output "$t (pftools) 0.1.0"
		run -0 "$t" --version
		assert_output "$t (pftools) 0.1.0"
		# a usage error: one line naming the fault, then where help is, exit 2
		run -2 --separate-stderr "$t" --no-such-option
		assert_output ""
		[ "$(wc -l <<<"$stderr")" -eq 2 ] || { echo "$t: $stderr" >&2; false; }
		assert_equal "${stderr##*$'\n'}" "Try '$t --help' for more information."
	done
}

@test "help, version and the tools' text output to a full disk (/dev/full): one line naming <stdout> and ENOSPC, exit 1" {
	build_workload rec_spin spin -O1
	pfrec -q -o r.pf -e cpu-clock -- ./spin 100
	for t in $TOOLS; do
		for o in --help --version; do
			run -1 --separate-stderr bash -c "$t $o >/dev/full"
			assert_equal "$stderr" "$t: <stdout>: No space left on device"
		done
	done
	local cmd
	for cmd in "pfdump r.pf" "pfdump --json r.pf" "pfdump -H r.pf" "pfdump --stats r.pf" "pffold r.pf" \
		"pfscript r.pf" "pfrec --dry-run -e cpu-clock" "pfrec --list"; do
		run -1 --separate-stderr bash -c "$cmd >/dev/full"
		assert_equal "$stderr" "${cmd%% *}: <stdout>: No space left on device"
	done
}

@test "every tool's options: the same list in --help, the man page and both completions" {
	local bad=0
	for t in $TOOLS; do
		local help man bash zsh
		help=$(opts_help_all "$t")
		man=$(opts_man "$t")
		bash=$(opts_bash "$t")
		zsh=$(opts_zsh "$t")
		[ -n "$help" ] && [ -n "$man" ] && [ -n "$bash" ] && [ -n "$zsh" ]
		# the man page and zsh name every option of --help, long and short
		for src in man zsh; do
			local d
			d=$(diff <(echo "$help") <(echo "${!src}")) || { echo "$t: --help vs $src:"$'\n'"$d" >&2; bad=1; }
		done
		# bash offers every long option (short ones may be left out), nothing else
		local extra missing
		extra=$(comm -13 <(echo "$help") <(echo "$bash"))
		missing=$(comm -23 <(echo "$help" | grep -- '^--') <(echo "$bash"))
		[ -z "$extra$missing" ] || { echo "$t: bash offers [$extra] unknown, lacks [$missing]" >&2; bad=1; }
		grep -qx -- -h <<<"$help" && grep -qx -- -V <<<"$help" && grep -qx -- --help <<<"$help" &&
			grep -qx -- --version <<<"$help" || { echo "$t: --help lacks -h/-V" >&2; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "every option offered anywhere is accepted by the tool" {
	local bad=0
	for t in $TOOLS; do
		local o
		for o in $( (opts_help_all "$t"; opts_man "$t"; opts_bash "$t"; opts_zsh "$t") | sort -u); do
			# an option that takes a value takes '--version' as it; any
			# complaint is then about the value, never the option
			run timeout 20 "$t" "$o" --version </dev/null
			if [[ "$output" == *"invalid option"* || "$output" == *"unrecognized option"* ||
				"$output" == *"unknown option"* || "$output" == *"not recognized"* ]]; then
				echo "$t rejects $o: $output" >&2
				bad=1
			fi
		done
	done
	[ "$bad" -eq 0 ]
}

# pfrec_complete WORD...: what pfrec's bash completion offers for the words
# given as bash splits them (':' breaks words), the last one being completed,
# on the fake sysfs (Intel-like) and tracefs trees.
pfrec_complete() {
	local fx="$PFTOOLS_SRC/tests/fixtures" words
	printf -v words '%q ' "$@"
	PFREC_SYSFS_ROOT="$fx/sysfs/intel" PFREC_TRACEFS_ROOT="$fx/tracefs" bash -c "
		source '$PFTOOLS_SRC/completions/bash/pfrec'
		COMP_WORDS=(pfrec $words); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); _pfrec
		printf '%s\n' \"\${COMPREPLY[@]}\"" | sort
}

@test "pfrec's -e completion: generic names, PMU and event names from sysfs, tracepoints from tracefs" {
	# the fake trees: PMUs cpu, msr, ... with events; tracefs events/sched/{sched_switch,
	# sched_wakeup}/id, events/irq/irq_handler_entry/id, and files (enable,
	# header_page) that are not tracepoints
	run pfrec_complete -e sch
	assert_output $'sched:sched_switch\nsched:sched_wakeup'
	run pfrec_complete -e i
	assert_output $'iTLB-load-misses\niTLB-loads\ninstructions\nirq:irq_handler_entry'
	# the hardware cache events perf users type
	run pfrec_complete -e L1-dcache-l
	assert_output $'L1-dcache-load-misses\nL1-dcache-loads'
	run pfrec_complete -e cpu/branch-m
	assert_output 'cpu/branch-misses/'
	run pfrec_complete -e ms
	assert_output $'msr/\nmsr/aperf/\nmsr/mperf/\nmsr/tsc/'
	# after the ':' bash asks for the rest of the word only
	run pfrec_complete -e sched : sched_w
	assert_output 'sched_wakeup'
	run pfrec_complete -e sched :
	assert_output $':sched_switch\n:sched_wakeup'
	run pfrec_complete -e nosuch : x
	assert_output ''
	# a tracefs root without events/: no tracepoints, PMUs still there
	PFREC_TRACEFS_ROOT=$BATS_TEST_TMPDIR run bash -c "source '$PFTOOLS_SRC/completions/bash/pfrec'; COMP_WORDS=(pfrec -e s); COMP_CWORD=2; _pfrec; printf '%s\n' \"\${COMPREPLY[@]}\""
	refute_output --partial 'sched:'
	assert_line 'stalled-cycles-frontend'
	if command -v zsh >/dev/null; then
		zsh -n "$PFTOOLS_SRC/completions/zsh/_pfrec"
	fi
	grep -q 'PFREC_TRACEFS_ROOT' "$PFTOOLS_SRC/completions/zsh/_pfrec"
}
