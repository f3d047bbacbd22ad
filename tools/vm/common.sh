# Sourced by the tools/vm scripts: where things live.
#
# Expensive builds (the kernel source tree, the debug kernel) are cached
# outside the repository so that later runs and CI on the same machine
# reuse them. KGO_CACHE overrides the place.

KGO_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KGO_CACHE=${KGO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kgo}
KGO_OUT=${KGO_OUT:-$KGO_TOP/out}

die() { echo "kgo: $*" >&2; exit 1; }
note() { echo "kgo: $*" >&2; }

# The Debian version of an installed package, e.g. 6.1.192-2.
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null; }

# The stock kernel: the newest installed Debian amd64 image with headers.
stock_kver() {
	local v
	v=$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V | tail -1)
	[ -n "$v" ] || die "no Debian kernel in /boot: run tools/deps.sh"
	[ -d "/lib/modules/$v/build" ] || die "no headers for $v: apt-get install linux-headers-$v"
	echo "$v"
}
