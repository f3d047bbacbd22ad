#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel-doc of kgo's API, checked as the kernel checks its own:
# the kernel's scripts/kernel-doc with -Wall (every parameter, member
# and return value described) over the public and uapi headers and the
# module's sources, and every exported function documented in
# include/kgo.h. Any warning fails. make style runs it.
#
# The script is the newest series' (tools/vm/common.sh's stock-7): -Wall
# came with 6.5, and each series' kernel-doc finds a little more.
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"

src=$("$KGO_TOP/tools/vm/kselftest-src.sh" stock-7)
kdoc=$src/scripts/kernel-doc
[ -x "$kdoc" ] || die "kdoc.sh: no scripts/kernel-doc in $src"
cd "$KGO_TOP"

rc=0
out=$("$kdoc" -Wall -none include/kgo.h uapi/linux/kgo.h kmod/*.c kmod/*.h 2>&1) || rc=$?
if [ -n "$out" ]; then
	echo "$out"
	rc=1
fi

# Every export of the public API has its comment where users read it.
for sym in $(sed -n 's/^EXPORT_SYMBOL_NS_GPL(\([a-z0-9_]*\), KGO_NS);$/\1/p' kmod/*.c); do
	grep -q "^ \* $sym() - " include/kgo.h ||
		{ echo "kdoc.sh: $sym is exported but has no kernel-doc in include/kgo.h"; rc=1; }
done
[ "$rc" = 0 ] && echo "kdoc: kernel-doc -Wall clean, every export documented"
exit $rc
