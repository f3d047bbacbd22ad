#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: builds kgo for Debian's stock kernel, boots that kernel in
# QEMU, loads the module, runs kgoctl and prints what it showed.
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"

"$KGO_TOP/tools/build-all.sh" stock
rc=0
"$KGO_TOP/tools/vm/run.sh" --kernel stock --job demo --name demo || rc=$?
# The demo's own output, without the protocol lines around it.
sed -e 's/\r$//' -e '/^KGO-/d' "$KGO_OUT/logs/demo.results.log"
exit $rc
