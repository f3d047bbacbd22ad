#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make -C tools/kgoctl check: kgoctl's host-side tests, which need no
# /dev/kgo and no VM: the JSON writer's unit test, help, --version,
# every --json output that needs no module through python3 -m json.tool,
# every option of help's table accepted by its command and listed in
# the man page and the bash completion, the completion itself, and make
# install. TAP on stdout; exits 0 when every test passed.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/../.." && pwd)
kgoctl=$here/kgoctl
man=$here/kgoctl.8
comp=$here/kgoctl.bash-completion
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }
# check DESCRIPTION CMD...: ok if CMD succeeds; its output as diagnostics if not.
check() {
	local what=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then
		ok "$what"
	else
		not_ok "$what"
		sed 's/^/# /' "$tmp/out" | head -20
	fi
}
is_json() { python3 -m json.tool >/dev/null; }

# The JSON writer: its own TAP, then its documents through json.tool.
if "$here/tests/json_test" >"$tmp/unit" 2>&1; then
	ok "json_test: $(grep -c '^ok' "$tmp/unit") escaping and document cases"
else
	not_ok "json_test"
	grep -v '^ok' "$tmp/unit" | sed 's/^/# /'
fi
check "json_test's pretty document is JSON (python3 -m json.tool)" \
	sh -c "'$here/tests/json_test' --print | head -n -1 | python3 -m json.tool"
check "json_test's one-line document is JSON (python3 -m json.tool)" \
	sh -c "'$here/tests/json_test' --print | tail -n 1 | python3 -m json.tool"

# --version: the project's version and the uapi's ABI version.
version=$(cat "$top/VERSION")
abi=$(sed -n 's/^#define KGO_ABI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$top/uapi/linux/kgo.h")
got=$("$kgoctl" --version)
if [ "$got" = "kgoctl $version (ABI $abi)" ]; then
	ok "kgoctl --version: $got"
else
	not_ok "kgoctl --version: '$got', not 'kgoctl $version (ABI $abi)'"
fi

# The commands, as help lists them in JSON.
if ! "$kgoctl" help --json >"$tmp/help.json" || ! is_json <"$tmp/help.json"; then
	not_ok "kgoctl help --json is JSON"
	echo "1..$n"
	exit 1
fi
ok "kgoctl help --json is JSON"
commands=$(python3 -c 'import json, sys
for c in json.load(sys.stdin)["commands"]: print(c["name"])' <"$tmp/help.json")
# opts CMD: the options of CMD, "--name" or "--name=ARG" a line.
opts() {
	python3 -c 'import json, sys
for c in json.load(sys.stdin)["commands"]:
    if c["name"] == sys.argv[1]:
        for o in c["options"]: print(o["name"] + ("=" + o["arg"] if o["arg"] else ""))' \
		"$1" <"$tmp/help.json"
}

check "kgoctl help: exit 0, every command listed" sh -c "
	'$kgoctl' help >'$tmp/h' && for c in ${commands//$'\n'/ }; do grep -q \"^  \$c \" '$tmp/h' || exit 1; done"
check "kgoctl with no command: usage on stderr, exit 2" sh -c "
	'$kgoctl' 2>'$tmp/h'; [ \$? = 2 ] && grep -q '^usage:' '$tmp/h'"
check "kgoctl help nosuch: exit 2" sh -c "'$kgoctl' help nosuch 2>/dev/null; [ \$? = 2 ]"

for cmd in $commands; do
	check "kgoctl help $cmd = kgoctl $cmd --help" sh -c "
		'$kgoctl' help $cmd >'$tmp/a' && '$kgoctl' $cmd --help >'$tmp/b' &&
		grep -q '^usage: kgoctl $cmd' '$tmp/a' && cmp -s '$tmp/a' '$tmp/b'"
	check "kgoctl help $cmd --json is JSON" sh -c "'$kgoctl' help $cmd --json | python3 -m json.tool"

	# Every option in help's table is one the command takes: each is
	# given with a stray argument (or, for run, no KIND), so that it
	# ends in a usage error before /dev/kgo is opened; never "unknown
	# option".
	bad=
	for o in $(opts "$cmd"); do
		name=${o%%=*}
		[ "$name" = --help ] && continue
		args=("$name")
		[ "$o" != "$name" ] && args+=(1)
		[ "$cmd" != run ] && args+=(stray1 stray2)
		"$kgoctl" "$cmd" "${args[@]}" >/dev/null 2>"$tmp/err"
		rc=$?
		if [ $rc != 2 ] || grep -q "unknown option" "$tmp/err"; then
			bad="$bad $name(rc=$rc: $(head -1 "$tmp/err"))"
		fi
	done
	if [ -z "$bad" ]; then
		ok "kgoctl $cmd takes each option help lists: $(opts "$cmd" | tr '\n' ' ')"
	else
		not_ok "kgoctl $cmd refuses:$bad"
	fi

	# The man page: a section for the command, and every option in it
	# (help, version: in the synopsis).
	missing=
	section=$(awk -v c="$cmd" '
		/^\.SS / { on = ($2 == c || $2 == "\\-\\-" c) } on' "$man")
	synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$man")
	grep -q "^\.B kgoctl $cmd\$" <<<"$synopsis" || missing="$missing synopsis"
	case $cmd in
	help|version) section=$synopsis ;;
	*) [ -n "$section" ] || missing="$missing section" ;;
	esac
	for o in $(opts "$cmd"); do
		name=${o%%=*}
		[ "$name" = --help ] && continue
		grep -q -- "\\\\-\\\\-${name#--}" <<<"$section" || missing="$missing $name"
	done
	if [ -z "$missing" ]; then
		ok "kgoctl.8 has $cmd and its options"
	else
		not_ok "kgoctl.8 lacks for $cmd:$missing"
	fi

	# The bash completion knows the command and its options.
	missing=
	grep -q "commands=\".*\b$cmd\b" "$comp" || missing=" the command"
	for o in $(opts "$cmd"); do
		grep -q -- "${o%%=*}" "$comp" || missing="$missing ${o%%=*}"
	done
	if [ -z "$missing" ]; then
		ok "the bash completion has $cmd and its options"
	else
		not_ok "the bash completion lacks for $cmd:$missing"
	fi
done

# run's kinds: help's list, the man page and the completion agree.
kinds=$("$kgoctl" help run | sed -n '/^kinds/,/^$/s/^  \([a-z_][a-z_]*\) .*/\1/p')
missing=
for k in $kinds; do
	grep -Eq "^\.BI? \"?$k( |\"|\$)" "$man" || missing="$missing man:$k"
	grep -q "kinds=\".*\b$k\b" "$comp" || missing="$missing completion:$k"
done
if [ -n "$kinds" ] && [ -z "$missing" ]; then
	ok "run's kinds in kgoctl.8 and the completion: ${kinds//$'\n'/ }"
else
	not_ok "run's kinds missing:$missing"
fi

# JSON from every command that needs no module.
for c in "--version --json" "--json version" "version --json" "--json help" "help --json run"; do
	# shellcheck disable=SC2086 # the words are separate arguments
	check "kgoctl $c is JSON" sh -c "'$kgoctl' $c | python3 -m json.tool"
done
# Without /dev/kgo, --json prints nothing on stdout: no half document.
if [ ! -e /dev/kgo ]; then
	for c in info stats run; do
		args=(--json)
		[ $c = run ] && args=(nop --json)
		"$kgoctl" $c "${args[@]}" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q "open /dev/kgo" "$tmp/err"; then
			ok "kgoctl $c --json without /dev/kgo: exit 1, the error on stderr only"
		else
			not_ok "kgoctl $c --json without /dev/kgo: exit $rc"
		fi
	done
fi

# The man page renders without a warning.
check "man -l kgoctl.8: no warnings" sh -c "
	MANWIDTH=80 man --warnings -E UTF-8 -l '$man' 2>'$tmp/w' >/dev/null && [ ! -s '$tmp/w' ] || { cat '$tmp/w'; exit 1; }"

# The completion, run as bash runs it.
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_kgoctl; echo "${COMPREPLY[*]}"' _ "$comp" "$@"
}
for t in "kgoctl |info run stats schedtrace help version --json --version --help" \
	 "kgoctl r|run" "kgoctl --json s|stats schedtrace" "kgoctl run sp|spin spawn" \
	 "kgoctl run --count 5 pi|pingpong pingpong_hog" "kgoctl run nop --c|--count" \
	 "kgoctl help sch|schedtrace" "kgoctl stats --|--json --help"; do
	words=${t%%|*} want=${t#*|}
	# A trailing space: the word being completed is the empty one.
	# shellcheck disable=SC2086 # the words are separate arguments
	if [ "${words: -1}" = " " ]; then
		got=$(complete_words $words "")
	else
		got=$(complete_words $words)
	fi
	if [ "$got" = "$want" ]; then
		ok "completion of '$words': $want"
	else
		not_ok "completion of '$words': '$got', not '$want'"
	fi
done

# make install: where a distribution's layout expects each file.
check "make install DESTDIR=... PREFIX=/usr" sh -c "
	make -s -C '$here' install DESTDIR='$tmp/root' PREFIX=/usr &&
	test -x '$tmp/root/usr/sbin/kgoctl' &&
	test -f '$tmp/root/usr/share/man/man8/kgoctl.8' &&
	test -f '$tmp/root/usr/share/bash-completion/completions/kgoctl' &&
	'$tmp/root/usr/sbin/kgoctl' --version"

echo "1..$n"
exit $((failed != 0))
