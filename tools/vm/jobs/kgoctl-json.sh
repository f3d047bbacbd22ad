# SPDX-License-Identifier: GPL-2.0
# Sourced by the check job: kgoctl --json against the real /dev/kgo.
#
# Scripts read kgoctl's --json output, so the step checks what a script
# relies on: every document parses as JSON (busybox has neither python3
# nor jq, so json_check is a small parser in awk), carries the keys a
# script reads, and says what the command did (a run's kind, path,
# count and failures). It defines functions only; check.sh calls
# kgoctl_json as one selftest section.

# json_check KEY...: stdin is one JSON document or more (JSON Lines),
# each an object with every KEY at its top level. Prints the number of
# documents; fails, with the reason and the byte, on anything else. A
# parser, not a pattern: busybox has no python3 or jq.
json_check() {
	busybox awk -v want="$*" '
function err(m) {
	if (!bad)
		printf "# not JSON: %s at byte %d\n", m, p >"/dev/stderr"
	bad = 1
	return 0
}
function ch() { return substr(s, p, 1) }
function ws() { while (p <= n && index(" \t\r\n", ch())) p++ }
function str(   c, k) {
	if (ch() != "\"")
		return err("expected a string")
	for (p++; p <= n; p++) {
		c = ch()
		if (c == "\"") {
			p++
			last = k
			return 1
		}
		if (c == "\\") {
			p++
			c = ch()
			if (c == "u") {
				if (substr(s, p + 1, 4) !~ /^[0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F]$/)
					return err("a bad \\u escape")
				p += 4
			} else if (c == "" || !index("\"\\/bfnrt", c)) {
				return err("a bad escape")
			}
		} else if (c < " ") {
			return err("a control character in a string")
		}
		k = k c
	}
	return err("an unterminated string")
}
function members(d, cl,   c) {
	p++
	ws()
	if (ch() == cl) {
		p++
		return 1
	}
	for (;;) {
		ws()
		if (cl == "}") {
			if (!str())
				return 0
			if (d == 1)
				keys[last] = 1
			ws()
			if (ch() != ":")
				return err("expected :")
			p++
		}
		if (!value(d))
			return 0
		ws()
		c = ch()
		if (c == cl) {
			p++
			return 1
		}
		if (c != ",")
			return err("expected , or " cl)
		p++
	}
}
function value(d,   c) {
	ws()
	c = ch()
	if (c == "{")
		return members(d + 1, "}")
	if (c == "[")
		return members(d + 1, "]")
	if (c == "\"")
		return str()
	if (substr(s, p, 4) == "true" || substr(s, p, 4) == "null") {
		p += 4
		return 1
	}
	if (substr(s, p, 5) == "false") {
		p += 5
		return 1
	}
	if (match(substr(s, p), /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/)) {
		p += RLENGTH
		return 1
	}
	return err("expected a value")
}
{ s = s $0 "\n" }
END {
	n = length(s)
	p = 1
	nw = split(want, w, " ")
	for (;;) {
		ws()
		if (p > n)
			break
		if (ch() != "{") {
			err("a document that is not an object")
			break
		}
		for (k in keys)
			delete keys[k]
		if (!value(0))
			break
		docs++
		for (i = 1; i <= nw; i++)
			if (!(w[i] in keys)) {
				printf "# document %d has no \"%s\"\n", docs, w[i] >"/dev/stderr"
				bad = 1
			}
	}
	if (!docs && !bad)
		err("no document")
	print docs + 0
	exit bad
}'
}

# json_has KEY VALUE: /tmp/kgoctl.out has "KEY": VALUE at its top level
# (kgoctl's pretty output: two spaces of indent for the top level).
json_has() {
	grep -qE "^  \"$1\": $2,?\$" /tmp/kgoctl.out ||
		{ echo "# no \"$1\": $2" >&2; return 1; }
}

# kgoctl_case ARGS...: the checks of one command, beyond its exit code.
# Its variables are kc_*: this shell has no locals, and /init's section
# keeps its own (kind, name, rc) in globals.
kgoctl_case() {
	case $1 in
	info)
		json_check abi_version version version_code nr_procs stack_size \
			task_size completion_size mem_budget kgoctl >/dev/null &&
			json_has version "\"$(kgoctl --version | cut -d' ' -f2)\""
		;;
	--json)	# --json stats
		json_check nr_procs nr_procs_idle nr_ms goroutines global_runq \
			own procs latency >/dev/null
		;;
	schedtrace)
		kc_docs=$(json_check ms nr_procs nr_ms goroutines global_runq runq_len) &&
			{ [ "$kc_docs" = "$4" ] ||
			  { echo "# $kc_docs documents, not $4" >&2; false; }; }
		;;
	run)
		kc_kind=$2 kc_path=ring
		kc_count=$* kc_count=${kc_count##*--count } kc_count=${kc_count%% *}
		case " $* " in *" --ioctl "*) kc_path=ioctl ;; esac
		json_check kind args path inline count completed failures \
			failures_shown wall_ns queue_to_start_ns start_to_end_ns \
			>/dev/null &&
			json_has kind "\"$kc_kind\"" && json_has path "\"$kc_path\"" &&
			json_has count "$kc_count" && json_has completed "$kc_count" &&
			json_has failures 0
		;;
	*)
		false
		;;
	esac
}

# kgoctl --json against the real /dev/kgo, every command that reads the
# module: each a TAP case. It must exit 0 and print JSON that parses
# (json_check), with the fields a script reads; a run must have
# completed all its tasks, of its kind, on its path, with no failure,
# and schedtrace print one document a line. The documents follow in an
# output section, each after a "# kgoctl ..." line.
# The last two runs last over a second with stderr on the console, a
# terminal: their progress lines are in the console log, and their
# waits end every 250 ms for it.
kgoctl_json() {
	: >/tmp/kgoctl-json.out
	echo "1..9"
	n=0 rc=0
	for c in "info --json" "--json stats" "run nop --count 200 --json" \
		 "run checksum --count 16 --ioctl --json" \
		 "run spawn 2 3 --count 4 --json" \
		 "run pingpong_hog 2000000 1000 --count 2 --json" \
		 "schedtrace 20 --count 3 --json" \
		 "run sleep 1500000000 --count 2 --json" \
		 "run sleep 1500000000 --count 2 --ioctl --json"; do
		n=$((n + 1))
		echo "# kgoctl $c" >>/tmp/kgoctl-json.out
		err=/tmp/kgoctl.err
		case $c in run\ sleep*) err=/dev/console ;; esac
		: >/tmp/kgoctl.err
		# shellcheck disable=SC2086 # the words are separate arguments
		kgoctl $c >/tmp/kgoctl.out 2>$err
		kc_st=$?
		# shellcheck disable=SC2086 # the words are separate arguments
		if [ $kc_st != 0 ]; then
			echo "not ok $n kgoctl $c: exit $kc_st"
			sed 's/^/# /' /tmp/kgoctl.err
			rc=1
		elif ! kgoctl_case $c </tmp/kgoctl.out 2>/tmp/kgoctl.why; then
			echo "not ok $n kgoctl $c"
			cat /tmp/kgoctl.why
			rc=1
		else
			echo "ok $n kgoctl $c"
		fi
		cat /tmp/kgoctl.out >>/tmp/kgoctl-json.out
	done
	return $rc
}
