#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   build-all.sh debug|kcsan|stock|stock-6.12|rt|rt-6.12...
#
# Installs the tools that are missing, then builds the module for each
# named kernel (a debug kernel itself first, or a Debian kernel unpacked,
# from cache when it can) and the static userspace binaries into out/bin.
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"

"$KGO_TOP/tools/deps.sh"
for k in "$@"; do
	case "$k" in
	stock*|rt*) kdir=$(stock_kdir "$k") ;;
	debug|kcsan) kdir=$("$KGO_TOP/tools/vm/debug-kernel.sh" "$k") ;;
	*) die "build-all.sh: unknown kernel $k" ;;
	esac
	"$KGO_TOP/tools/build-module.sh" "$k" "$kdir"
done

make -s -C "$KGO_TOP/tools/kgoctl"
make -s -C "$KGO_TOP/selftests/kgo" KGO_STATIC=1
mkdir -p "$KGO_OUT/bin/selftests"
cp "$KGO_TOP/tools/kgoctl/kgoctl" "$KGO_OUT/bin/"
rm -f "$KGO_OUT/bin/selftests/"*
for t in $(make -s -C "$KGO_TOP/selftests/kgo" list); do
	cp "$KGO_TOP/selftests/kgo/$t" "$KGO_OUT/bin/selftests/"
done
