#!/bin/bash
# Prints the path of an extracted linux-source-6.1 tree, extracting it
# into the cache on first use. The tree is only read from (the debug
# kernel builds with O= elsewhere), so one copy serves every user.
set -euo pipefail
. "$(dirname "$0")/common.sh"

ver=$(pkg_version linux-source-6.1)
[ -n "$ver" ] || die "linux-source-6.1 is not installed: run tools/deps.sh"
dir=$KGO_CACHE/linux-source-$ver
mkdir -p "$KGO_CACHE"
exec 9>"$KGO_CACHE/.ksrc.lock"
flock 9
if [ ! -f "$dir/.extracted" ]; then
	note "extracting linux-source-$ver into $dir"
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$dir.tmp" --strip-components=1
	touch "$dir.tmp/.extracted"
	mv "$dir.tmp" "$dir"
fi
echo "$dir"
