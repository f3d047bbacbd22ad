#!/bin/bash
#   debug-kernel.sh [debug|kcsan]
#
# Builds a debug kernel from Debian's linux-source-6.1 and prints its
# build directory, which is also what external modules build against.
#   debug: KASAN, lockdep, kmemleak, KUnit, full preemption
#          (tools/vm/debug.config);
#   kcsan: the same with KCSAN in place of KASAN, which it excludes
#          (tools/vm/debug.config, then tools/vm/kcsan.config over it).
#
# The build is cached under $KGO_CACHE, keyed by the source package
# version, the compiler, the config fragments and this script; a second
# call with the same inputs returns at once.
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:-debug}
frags=("$KGO_TOP/tools/vm/debug.config")
case "$flavour" in
debug) ;;
kcsan) frags+=("$KGO_TOP/tools/vm/kcsan.config") ;;
*) die "debug-kernel.sh: no flavour '$flavour' (debug or kcsan)" ;;
esac
src=$("$KGO_TOP/tools/vm/ksrc.sh")
key=$( { pkg_version linux-source-6.1; gcc --version | head -1;
	 cat "${frags[@]}" "$0"; } | sha256sum | cut -c1-16)
out=$KGO_CACHE/$flavour-kernel-$key

exec 8>"$KGO_CACHE/.$flavour-kernel.lock"
flock 8
if [ -f "$out/.built" ]; then
	echo "$out"
	exit 0
fi

rm -rf "$out"
mkdir -p "$out"
log=$out/build.log
note "building the $flavour kernel in $out (10 to 20 minutes on 2 cores; log: $log)"
start=$SECONDS
{
	make -C "$src" O="$out" tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}"
	make -C "$src" O="$out" olddefconfig
} >"$log" 2>&1 || die "configuring the $flavour kernel failed; see $log"

# A fragment line that did not survive olddefconfig (a missing
# dependency) would silently weaken every test run: refuse it. A later
# fragment's line for a symbol replaces an earlier one's.
want=$(cat "${frags[@]}" | sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1 &/p' \
	-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1 &/p' |
	awk '{ sym = $1; sub(/^[^ ]* /, ""); last[sym] = $0 }
	     END { for (s in last) print last[s] }')
lost=0
while read -r line; do
	case "$line" in
	CONFIG_*)
		grep -qx "$line" "$out/.config" || { note "not in .config: $line"; lost=1; } ;;
	*)	# unset, or absent because what it depends on is unset
		sym=${line#\# }; sym=${sym%% *}
		! grep -q "^$sym=" "$out/.config" || { note "not unset in .config: $line"; lost=1; } ;;
	esac
done <<<"$want"
[ $lost = 0 ] || die "the $flavour kernel config lost options of ${frags[*]}"

make -C "$src" O="$out" -j"$(($(nproc) + 1))" bzImage modules >>"$log" 2>&1 ||
	die "building the $flavour kernel failed; see $log"
touch "$out/.built"
note "$flavour kernel built in $((SECONDS - start)) s"
echo "$out"
