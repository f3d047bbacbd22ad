#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make style`: the kernel's checkpatch.pl over every C file of the project,
# then the layering of the scheduler core and the size of kmod's files
# (tools/callgraph.py), then the API's kernel-doc (tools/kdoc.sh).
#
# The files fall in four groups, each with its own rules: kernel code
# (--strict, the default for any file not named below), the KUnit tests,
# the uapi header, and userspace. A finding that is no defect where it
# is gets ignored for its group, or for its one file, with the reason
# next to it; anything else is fixed in the code.
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"

"$KGO_TOP/tools/deps.sh"
ksrc=$("$KGO_TOP/tools/vm/ksrc.sh")
cd "$KGO_TOP"
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find kmod include uapi tools selftests -name '*.[ch]')

# Every group: --no-tree, as this is not a kernel tree, so checkpatch
# cannot check the SPDX tag's place nor see which files a patch adds.
common=SPDX_LICENSE_TAG,FILE_PATH_CHANGES

# KUnit tests (kmod/tests/): a test may sleep a few ms where precision
# does not matter (MSLEEP), busy-wait with udelay() to keep a CPU from
# kgo on purpose (USLEEP_RANGE), write volatile stack frames so the
# compiler keeps them for the stack-reuse tests (VOLATILE), and fail
# with one long message that stays greppable (LONG_LINE_STRING).
tests_ignore=MSLEEP,USLEEP_RANGE,VOLATILE,LONG_LINE_STRING

# uapi/: userspace includes it, and userspace has no BIT().
uapi_ignore=BIT_MACRO

# Userspace (selftests, tools, libkgo, bench's programs): kernel style,
# but without --strict, whose checks are for code sent to the kernel
# (its types, BIT(), alignment), and without the kernel's own headers:
# no ARRAY_SIZE (ARRAY_SIZE) nor __printf()/__noreturn
# (PREFER_DEFINED_ATTRIBUTE_MACRO).
user_ignore=ARRAY_SIZE,PREFER_DEFINED_ATTRIBUTE_MACRO

# One file's own exceptions, on top of its group's.
# shellcheck disable=SC2054 # the values are checkpatch's comma lists
declare -A file_ignore=(
	# Exists to compare LINUX_VERSION_CODE with the versions it bridges.
	[kmod/compat.h]=LINUX_VERSION_CODE,CONSTANT_COMPARISON
	# KGO_WAIT_REASONS is an X-macro list expanded into an enum, a table
	# and TRACE_DEFINE_ENUM()s, as include/trace/events/*.h do.
	[kmod/g.h]=COMPLEX_MACRO,MACRO_ARG_REUSE,TRAILING_SEMICOLON
	[kmod/trace.h]=COMPLEX_MACRO,MACRO_ARG_REUSE,TRAILING_SEMICOLON
	# The reused arguments are types, member names and an ioctl number
	# (KGO_IOCTL_OP), member names (kgo_pstat_add()) and the object being
	# defined (DEFINE_KGO_MUTEX(), as DEFINE_MUTEX()): no side effects.
	[kmod/ioctl.c]=MACRO_ARG_REUSE
	[kmod/proc.h]=MACRO_ARG_REUSE
	# The public header is built into other people's modules, against
	# every kernel kgo supports: KGO_NS must be spelled for the kernel at
	# hand, and kmod/compat.h is not theirs to include.
	[include/kgo.h]=MACRO_ARG_REUSE,LINUX_VERSION_CODE,CONSTANT_COMPARISON
	# kgo_cpu_m's export follows its DEFINE_PER_CPU(), which checkpatch
	# does not take for a definition.
	[kmod/m.c]=EXPORT_SYMBOL
	# kgo_floor_below() tests a jiffies stamp for equality (looked at
	# this jiffy or not): no ordering, so no wrap to get wrong.
	[kmod/floor.c]=JIFFIES_COMPARISON
	# kgo_goexit()'s BUG(): a dead G was switched away from for good;
	# if it ever comes back, its stack is freed and there is nothing to
	# return to, so no WARN and recovery is possible.
	[kmod/switch.c]=AVOID_BUG
	# FIXTURE_DATA(echo) *self is the kselftest harness's type, which
	# checkpatch takes for a multiplication; " \n" is strtok_r()'s set of
	# delimiters, not output.
	[selftests/kgo/echo_test.c]=SPACING,QUOTED_WHITESPACE_BEFORE_NEWLINE
	# A forked child's exit status is a positive errno; ENOSYS from
	# socketpair() means a kernel without unix sockets: a skip.
	[selftests/kgo/share_test.c]=USE_NEGATIVE_ERRNO,ENOSYS
	# KGO_FIXTURE() expands to a fixture's struct, setup and teardown at
	# file scope, as the harness's FIXTURE() does: no do-while can hold them.
	[selftests/kgo/kgo_util.h]=MULTISTATEMENT_MACRO_USE_DO_WHILE
	# The mapped ring's indices, shared with the kernel: userspace has no
	# READ_ONCE(), and this test checks the first ABI's raw layout.
	[selftests/kgo/ioctl_abi_test.c]=VOLATILE
	# Mirrors QEMU's plugin ABI, typedefs included.
	[tools/bench/qemu-plugin-abi.h]=NEW_TYPEDEFS
)

for f in "${!file_ignore[@]}"; do
	[ -f "$f" ] || die "style.sh: an exception for $f, which is gone"
done

# Files by their options: "strict|ignore" -> list.
declare -A batch=()
for f in $files; do
	case $f in
	kmod/tests/*)	opts="--strict|$tests_ignore" ;;
	uapi/*)		opts="--strict|$uapi_ignore" ;;
	selftests/*|tools/*|libkgo/*|examples/*|bench/fair/*|bench/uring/*|\
	bench/net/epoll_echo.c|bench/net/netload.c)
			opts="|$user_ignore" ;;
	*)		opts="--strict|" ;;
	esac
	extra=${file_ignore[$f]:-}
	[ -z "$extra" ] || opts="$opts,$extra"
	batch[$opts]="${batch[$opts]:-} $f"
done

rc=0
mapfile -t groups < <(printf '%s\n' "${!batch[@]}" | sort)
for opts in "${groups[@]}"; do
	strict=${opts%%|*}
	ignore=$(echo "$common,${opts#*|}" | sed 's/,,*/,/g; s/,$//')
	# shellcheck disable=SC2086 # a list of paths without spaces
	"$ksrc/scripts/checkpatch.pl" --no-tree $strict --terse --show-types \
		--max-line-length=100 --ignore "$ignore" -f ${batch[$opts]} || rc=$?
done
python3 "$KGO_TOP/tools/callgraph.py" "$KGO_TOP/kmod" || rc=$?
"$KGO_TOP/tools/kdoc.sh" || rc=$?
exit $rc
