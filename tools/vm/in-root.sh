#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   in-root.sh ROOT CMD...
#
# Runs CMD inside ROOT (a Debian root, tools/vm/sid-root.sh), in the
# directory it was called from, with this checkout, its out/ and the
# cache at the same paths as outside, so that paths in commands and in
# the unpacked kernels' Makefiles mean the same on both sides. The
# mounts live in a mount namespace of this command's own and end with
# it: nothing is left mounted on the host.
set -euo pipefail
. "$(dirname "$0")/common.sh"

root=${1:?usage: in-root.sh ROOT CMD...}
shift
[ -f "$root/.made" ] || die "in-root.sh: $root is not a root made by sid-root.sh"
if [ -z "${KGO_IN_ROOT_NS:-}" ]; then
	exec env KGO_IN_ROOT_NS=1 unshare --mount --propagation private "$0" "$root" "$@"
fi
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
for d in "$KGO_TOP" "$KGO_OUT" "$KGO_CACHE" "${TMPDIR:-/tmp}"; do
	mkdir -p "$d" "$root$d"
	mount --bind "$d" "$root$d"
done
exec chroot "$root" /bin/sh -c 'cd "$1" && shift && exec "$@"' in-root "$PWD" "$@"
