#!/bin/bash
# Builds the debug kernel (KASAN, lockdep, kmemleak, KUnit, full
# preemption) from Debian's linux-source-6.1 and prints its build
# directory, which is also what external modules build against.
#
# The build is cached under $KGO_CACHE, keyed by the source package
# version, the compiler, the config fragment and this script; a second
# call with the same inputs returns at once.
set -euo pipefail
. "$(dirname "$0")/common.sh"

frag=$KGO_TOP/tools/vm/debug.config
src=$("$KGO_TOP/tools/vm/ksrc.sh")
key=$( { pkg_version linux-source-6.1; gcc --version | head -1;
	 cat "$frag" "$0"; } | sha256sum | cut -c1-16)
out=$KGO_CACHE/debug-kernel-$key

exec 8>"$KGO_CACHE/.debug-kernel.lock"
flock 8
if [ -f "$out/.built" ]; then
	echo "$out"
	exit 0
fi

rm -rf "$out"
mkdir -p "$out"
log=$out/build.log
note "building the debug kernel in $out (about 9 minutes on 2 cores; log: $log)"
start=$SECONDS
{
	make -C "$src" O="$out" tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag"
	make -C "$src" O="$out" olddefconfig
} >"$log" 2>&1 || die "configuring the debug kernel failed; see $log"

# A fragment line that did not survive olddefconfig (a missing
# dependency) would silently weaken every test run: refuse it.
lost=0
while read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qx "$line" "$out/.config" || { note "not in .config: $line"; lost=1; } ;;
	"# CONFIG_"*" is not set")
		grep -qx "$line" "$out/.config" || { note "not unset in .config: $line"; lost=1; } ;;
	esac
done <"$frag"
[ $lost = 0 ] || die "the debug kernel config lost options of $frag"

make -C "$src" O="$out" -j"$(($(nproc) + 1))" bzImage modules >>"$log" 2>&1 ||
	die "building the debug kernel failed; see $log"
touch "$out/.built"
note "debug kernel built in $((SECONDS - start)) s"
echo "$out"
