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

# The kernels kgo is tested on, each by its explicit Debian version:
# installing another image (a newer 6.1 ABI, a 6.12) must never change
# what a run boots or builds against. Override these to try another.
# Debian package names: linux-image-VER (6.1, signed) or
# linux-image-VER-unsigned (6.12), and linux-headers-VER.
KGO_KVER_61=${KGO_KVER_61:-6.1.0-56-amd64}
KGO_KVER_612=${KGO_KVER_612:-6.12.117+deb12-amd64}
# Their PREEMPT_RT flavours (make matrix only: kgo refuses to load there).
KGO_KVER_61_RT=${KGO_KVER_61_RT:-6.1.0-56-rt-amd64}
KGO_KVER_612_RT=${KGO_KVER_612_RT:-6.12.117+deb12-rt-amd64}

# The stock kernels by the names the scripts use.
KGO_STOCK_KERNELS="stock stock-6.12"
KGO_RT_KERNELS="rt rt-6.12"

# The Debian packages of the RT kernels, which tools/deps.sh installs
# only when named (make check does not need them).
kgo_rt_packages() {
	echo "linux-image-$KGO_KVER_61_RT-unsigned linux-headers-$KGO_KVER_61_RT" \
	     "linux-image-$KGO_KVER_612_RT-unsigned linux-headers-$KGO_KVER_612_RT"
}

# stock_kver NAME: the version of Debian kernel NAME (stock or RT),
# checked installed.
stock_kver() {
	local v
	case "$1" in
	stock) v=$KGO_KVER_61 ;;
	stock-6.12) v=$KGO_KVER_612 ;;
	rt) v=$KGO_KVER_61_RT ;;
	rt-6.12) v=$KGO_KVER_612_RT ;;
	*) die "no Debian kernel named '$1' (known: $KGO_STOCK_KERNELS $KGO_RT_KERNELS)" ;;
	esac
	[ -f "/boot/vmlinuz-$v" ] || die "no /boot/vmlinuz-$v: run tools/deps.sh"
	[ -f "/lib/modules/$v/build/Makefile" ] ||
		die "no headers for $v: run tools/deps.sh"
	echo "$v"
}
