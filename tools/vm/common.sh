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
# They are unpacked into the cache, never installed on the host
# (tools/vm/debian-kernel.sh).
KGO_KVER_61=${KGO_KVER_61:-6.1.0-56-amd64}
KGO_KVER_612=${KGO_KVER_612:-6.12.117+deb12-amd64}
# Their PREEMPT_RT flavours (make matrix only: kgo refuses to load there).
KGO_KVER_61_RT=${KGO_KVER_61_RT:-6.1.0-56-rt-amd64}
KGO_KVER_612_RT=${KGO_KVER_612_RT:-6.12.117+deb12-rt-amd64}

# The stock kernels by the names the scripts use.
KGO_STOCK_KERNELS="stock stock-6.12"
KGO_RT_KERNELS="rt rt-6.12"

# stock_kver NAME: the version of Debian kernel NAME (stock or RT).
stock_kver() {
	case "$1" in
	stock) echo "$KGO_KVER_61" ;;
	stock-6.12) echo "$KGO_KVER_612" ;;
	rt) echo "$KGO_KVER_61_RT" ;;
	rt-6.12) echo "$KGO_KVER_612_RT" ;;
	*) die "no Debian kernel named '$1' (known: $KGO_STOCK_KERNELS $KGO_RT_KERNELS)" ;;
	esac
}

# stock_root NAME: where Debian kernel NAME is unpacked in the cache
# (tools/vm/debian-kernel.sh fetches it on first use; nothing is
# installed on the host).
stock_root() {
	local v
	v=$(stock_kver "$1") || exit 1
	"$KGO_TOP/tools/vm/debian-kernel.sh" "$v" || die "cannot unpack Debian's kernel $v"
}

# stock_kdir NAME: the headers external modules build against.
stock_kdir() {
	local r
	r=$(stock_root "$1") || exit 1
	echo "$r/usr/src/linux-headers-$(stock_kver "$1")"
}

# stock_image NAME: the kernel image QEMU boots.
stock_image() {
	local r v
	r=$(stock_root "$1") || exit 1
	v=$(stock_kver "$1")
	if [ -f "$r/boot/vmlinuz-$v" ]; then
		echo "$r/boot/vmlinuz-$v"
	else
		echo "$r/usr/lib/modules/$v/vmlinuz"
	fi
}
