#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make style`: the kernel's checkpatch.pl over every C file of the project,
# then the layering of the scheduler core and the size of kmod's files
# (tools/callgraph.py).
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"

"$KGO_TOP/tools/deps.sh"
ksrc=$("$KGO_TOP/tools/vm/ksrc.sh")
cd "$KGO_TOP"
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find kmod include uapi tools selftests -name '*.[ch]')
# --no-tree: this is not a kernel tree. Kernel code rules apply to
# userspace tools too, except where userspace has its own idiom.
rc=0
"$ksrc/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
	--max-line-length=100 --ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES -f $files || rc=$?
python3 "$KGO_TOP/tools/callgraph.py" "$KGO_TOP/kmod" || rc=$?
exit $rc
