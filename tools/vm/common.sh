# shellcheck shell=bash
# Sourced by the tools scripts: where things live, and what they share.
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

# The Debian kernels kgo is tested on, one line each: the name the
# scripts use, the version, and the suite that carries it. 6.1 and 6.12
# are pinned by explicit version: installing another image (a newer 6.1
# ABI, a 6.12) must never change what a run boots or builds against.
# Debian unstable keeps only its current kernel, so a 7.x is resolved
# at run time, "newest:7" being the newest 7.x it offers
# (tools/vm/sid-root.sh; KGO_KVER_7 pins one). None is installed on
# the host: each is unpacked into the cache (tools/vm/debian-kernel.sh).
# The RT flavours serve make matrix alone.
# Adding a series is a line here.
KGO_KVER_61=${KGO_KVER_61:-6.1.0-56-amd64}
KGO_KVER_612=${KGO_KVER_612:-6.12.117+deb12-amd64}
KGO_KERNEL_TABLE="
stock       $KGO_KVER_61                            host
stock-6.12  $KGO_KVER_612                           host
stock-7     ${KGO_KVER_7:-newest:7}                 sid
rt          ${KGO_KVER_61_RT:-6.1.0-56-rt-amd64}       host
rt-6.12     ${KGO_KVER_612_RT:-6.12.117+deb12-rt-amd64} host
rt-7        ${KGO_KVER_7_RT:-newest-rt:7}           sid
"

# The stock kernels by the names the scripts use.
KGO_STOCK_KERNELS="stock stock-6.12 stock-7"
KGO_RT_KERNELS="rt rt-6.12 rt-7"

# kernel_field NAME N: field N (2 version, 3 suite) of NAME's line.
kernel_field() {
	local f
	f=$(awk -v n="$1" -v i="$2" '$1 == n { print $i }' <<<"$KGO_KERNEL_TABLE")
	[ -n "$f" ] || die "no Debian kernel named '$1' (known: $KGO_STOCK_KERNELS $KGO_RT_KERNELS)"
	echo "$f"
}

# stock_kver NAME: the version of Debian kernel NAME (stock or RT),
# resolved where the table says "newest".
stock_kver() {
	local v
	v=$(kernel_field "$1" 2) || exit 1
	case "$v" in
	newest:*) "$KGO_TOP/tools/vm/sid-root.sh" --newest "${v#newest:}" ;;
	newest-rt:*) "$KGO_TOP/tools/vm/sid-root.sh" --newest "${v#newest-rt:}" rt ;;
	*) echo "$v" ;;
	esac
}

# stock_root NAME: where Debian kernel NAME is unpacked in the cache
# (tools/vm/debian-kernel.sh fetches it on first use).
stock_root() {
	local v suite
	v=$(stock_kver "$1") || exit 1
	suite=$(kernel_field "$1" 3) || exit 1
	if [ "$suite" = host ]; then
		"$KGO_TOP/tools/vm/debian-kernel.sh" "$v"
	else
		"$KGO_TOP/tools/vm/debian-kernel.sh" --root "$("$KGO_TOP/tools/vm/sid-root.sh")" "$v"
	fi || die "cannot unpack Debian's kernel $v"
}

# stock_kdir NAME: the headers external modules build against.
stock_kdir() {
	local r
	r=$(stock_root "$1") || exit 1
	echo "$r/usr/src/linux-headers-$(basename "$r" | sed 's/_[^_]*$//')"
}

# stock_image NAME: the kernel image QEMU boots.
stock_image() {
	local r v
	r=$(stock_root "$1") || exit 1
	v=$(basename "$r" | sed 's/_[^_]*$//')
	if [ -f "$r/boot/vmlinuz-$v" ]; then
		echo "$r/boot/vmlinuz-$v"
	else
		echo "$r/usr/lib/modules/$v/vmlinuz"
	fi
}

# apt_at ROOT CMD...: an apt command in ROOT (a Debian root made by
# tools/vm/sid-root.sh), or on this machine where ROOT is empty.
apt_at() {
	local r=$1
	shift
	if [ -n "$r" ]; then
		chroot "$r" "$@"
	else
		"$@"
	fi
}

# apt_download ROOT DIR PKG...: `apt-get download` PKGs into DIR, with
# ROOT's apt (or this machine's). Nothing is installed. As root, apt
# hands downloads to its sandbox user, which cannot write into a
# root-owned temporary directory: download as root.
apt_download() {
	local r=$1 dir=$2 dl
	shift 2
	if [ -n "$r" ]; then
		dl=$r/tmp/kgo-debs-$$
		rm -rf "$dl"
		mkdir -p "$dl"
		chroot "$r" sh -c 'cd "$1" && shift && exec apt-get download -q -o APT::Sandbox::User=root "$@"' \
			download "${dl#"$r"}" "$@" >&2 || { rm -rf "$dl"; return 1; }
		mv "$dl"/*.deb "$dir/"
		rm -rf "$dl"
	else
		(cd "$dir" && apt-get download -q -o APT::Sandbox::User=root "$@" >&2)
	fi
}

# kbuild_run KDIR CMD...: runs CMD (a kbuild make against KDIR) where
# KDIR's kernel can be built for. A Debian kernel's headers name the
# compiler it was built with (.kernelvariables); where this machine has
# no such compiler (7.x's gcc-16 on Debian 12), CMD runs in the Debian
# unstable root instead (tools/vm/sid-root.sh, tools/vm/in-root.sh).
# A kernel built here, or headers of the running system, build here.
kbuild_run() {
	local kdir=$1
	shift
	if kbuild_needs_root "$kdir"; then
		"$KGO_TOP/tools/vm/in-root.sh" "$("$KGO_TOP/tools/vm/sid-root.sh")" "$@"
	else
		"$@"
	fi
}

# peer_run CMD...: runs CMD (a build of one of make bench's peers) in
# the Debian unstable root, with its Go and liburing (sid-root.sh
# --peers). Go's build cache is the root's own /root/.cache, and Go
# uses the root's toolchain, never one it would download.
peer_run() {
	"$KGO_TOP/tools/vm/in-root.sh" "$("$KGO_TOP/tools/vm/sid-root.sh" --peers)" \
		env HOME=/root GOTOOLCHAIN=local GOTELEMETRY=off "$@"
}

# peer_versions: "GO LIBURING", the versions peer_run builds with.
peer_versions() {
	# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
	echo "$(peer_run go env GOVERSION)" \
		"$(peer_run dpkg-query -W -f '${Version}' liburing-dev)"
}

# kbuild_needs_root KDIR: whether KDIR's compiler is missing here.
kbuild_needs_root() {
	local cc
	cc=$(sed -n 's/^CC = .*[) ]\(gcc-[0-9][0-9]*\)$/\1/p' "$1/.kernelvariables" 2>/dev/null)
	[ -n "$cc" ] && ! command -v "$cc" >/dev/null
}

# Command-line flags, parsed one way for every script that takes them
# (tools/vm/run.sh, tools/bench/bench.sh and profile.sh, build-all.sh).
#
# flags_parse USAGE SPEC ARG...: SPEC has a line per flag,
#   --flag  VAR  VALUE  help    VAR=the value (--flag VALUE or --flag=VALUE)
#   --flag  VAR  -      help    a switch: VAR=1
# A flag sets VAR over what VAR held before, which is how a script's
# environment variables stay its defaults. Most VARs are those
# variables themselves, so that a flag and its variable cannot disagree.
# --help (-h) prints USAGE and the flags and exits 0, before the script
# has built or booted anything; an unknown flag, or one without its
# value, ends the script. The words that are not flags, and all after
# "--", are left in the array KGO_ARGS. (A VAR must not be one of the
# function's own locals: usage spec arg opt val var meta.)
flags_parse() {
	local usage=$1 spec=$2 arg opt val var meta
	shift 2
	KGO_ARGS=()
	while [ $# -gt 0 ]; do
		arg=$1
		shift
		case $arg in
		-h|--help) flags_usage "$usage" "$spec"; exit 0 ;;
		--) KGO_ARGS+=("$@"); return 0 ;;
		--*=*) opt=${arg%%=*} val=${arg#*=} ;;
		-*) opt=$arg val= ;;
		*) KGO_ARGS+=("$arg"); continue ;;
		esac
		read -r var meta < <(awk -v f="$opt" '$1 == f { print $2, $3; exit }' <<<"$spec") || true
		[ -n "${var:-}" ] || die "${0##*/}: unknown option $opt (${0##*/} --help lists them)"
		if [ "$meta" = - ]; then
			[ "$arg" = "$opt" ] || die "${0##*/}: $opt takes no value"
			val=1
		elif [ "$arg" = "$opt" ]; then
			[ $# -gt 0 ] || die "${0##*/}: $opt needs a value ($meta)"
			val=$1
			shift
		fi
		printf -v "$var" %s "$val"
		var=
	done
}

# flags_usage USAGE SPEC: USAGE, then a line a flag.
flags_usage() {
	printf '%s\n\nOptions:\n' "$1"
	awk '$1 ~ /^--/ {
		f = $1 ($3 == "-" ? "" : " " $3)
		$1 = $2 = $3 = ""
		sub(/^ */, "")
		printf "  %-18s %s\n", f, $0
	}' <<<"$2"
	printf '  %-18s %s\n' "-h, --help" "this text"
}

# guest_word FLAG VALUE: VALUE goes on the guest's kernel command line
# as one VAR=VALUE word, which a space would split and a quote mangle.
guest_word() {
	[[ "$2" =~ ^[^[:space:]\"]+$ ]] || die "${0##*/}: $1 takes one word without spaces or quotes, not '$2'"
}

# logged_build WHAT LOG CMD...: runs CMD (a build) with its output in
# LOG. A failure shows the log and ends the script, and so does any
# compiler, objtool or modpost warning: kgo's builds have none.
logged_build() {
	local what=$1 log=$2
	shift 2
	if ! "$@" >"$log" 2>&1; then
		cat "$log" >&2
		die "$what failed"
	fi
	if grep -qi 'warning' "$log"; then
		grep -i 'warning' "$log" >&2
		die "$what has warnings (full log: $log)"
	fi
}
