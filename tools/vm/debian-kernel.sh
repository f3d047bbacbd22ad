#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   debian-kernel.sh [--root ROOT] KVER
#
# Prints the root of Debian's kernel KVER (say 6.1.0-56-amd64) unpacked
# in the cache, unpacking it on first use: the image, its modules, the
# headers, their common half and the kbuild tools, each fetched with
# `apt-get download` and opened with `dpkg-deb -x`. Nothing is installed:
# the host's /boot, /lib/modules and boot loader stay as they were, so a
# test run never changes which kernel the machine boots.
#
# In the root: boot/vmlinuz-KVER (or usr/lib/modules/KVER/vmlinuz, where
# Debian ships it since 7.x), lib/modules/KVER/kernel/ and
# usr/src/linux-headers-KVER, which external modules build against
# (make -C ... M=...). The root is keyed by KVER and the Debian version
# of its headers package, so a rebuilt package under the same ABI name
# is a new root.
#
# --root ROOT: ask ROOT's apt (tools/vm/sid-root.sh) rather than the
# host's, for a suite the host does not carry. Without it, a kernel the
# host's apt does not know is looked for in that root too.
set -euo pipefail
. "$(dirname "$0")/common.sh"

aroot=
if [ "${1:-}" = --root ]; then
	aroot=$2
	shift 2
fi
kver=${1:?usage: debian-kernel.sh [--root ROOT] KVER}
base=$KGO_CACHE/kernels
mkdir -p "$base"

# A root already unpacked needs no network: the newest for KVER wins.
cached() {
	local d
	for d in $(ls -d "$base/$kver"_* 2>/dev/null | sort -V -r); do
		[ -f "$d/.unpacked" ] && { echo "$d"; return 0; }
	done
	return 1
}
cached && exit 0

exec 9>"$base/.$kver.lock"
flock 9
cached && exit 0

[ "$(id -u)" = 0 ] || die "debian-kernel.sh: fetching $kver needs apt as root"

# apt, here or in the root.
apt() { apt_at "$aroot" "$@"; }
# apt-cache show PKG: its newest version's field FIELD, or nothing.
field() {
	apt apt-cache show --no-all-versions "$1" 2>/dev/null | sed -n "s/^$2: //p" | head -n 1
}
debver=$(field "linux-headers-$kver" Version)
if [ -z "$debver" ]; then
	note "apt does not know linux-headers-$kver: apt-get update"
	apt apt-get update -q >&2 || true
	debver=$(field "linux-headers-$kver" Version)
fi
if [ -z "$debver" ] && [ -z "$aroot" ]; then
	exec "$0" --root "$("$KGO_TOP/tools/vm/sid-root.sh")" "$kver"
fi
[ -n "$debver" ] ||
	die "no Debian package linux-headers-$kver: is $kver a kernel this machine's apt sources carry?"

# The image. From 7.x Debian splits it: linux-image-KVER is an empty
# package over linux-binary-KVER (the vmlinuz) and linux-modules-KVER.
# Before, the image package holds both, signed (6.1) or unsigned only
# (6.12's, which this prefers).
image=()
if [ -n "$(field "linux-binary-$kver" Version)" ]; then
	image=("linux-binary-$kver")
	[ -n "$(field "linux-modules-$kver" Version)" ] && image+=("linux-modules-$kver")
else
	for p in "linux-image-$kver" "linux-image-$kver-unsigned"; do
		[ -n "$(field "$p" Version)" ] && { image=("$p"); break; }
	done
fi
[ ${#image[@]} -gt 0 ] || die "no Debian image package for $kver"
# The headers' own halves (common, kbuild, and from 7.x the base
# files), by the names their Depends gives.
deps=$(field "linux-headers-$kver" Depends | tr ',|' '\n\n' | sed 's/(.*//; s/ //g' |
	grep -E '^linux-(headers-.*-common.*|kbuild-.*|base-.*)$' | sort -u)
pkgs=("${image[@]}" "linux-headers-$kver" $deps)

dir=$base/${kver}_$debver
tmp=$dir.tmp
rm -rf "$tmp" "$dir"
mkdir -p "$tmp/debs"
note "unpacking Debian's $kver ($debver) into $dir: ${pkgs[*]}"
apt_download "$aroot" "$tmp/debs" "${pkgs[@]}" ||
	die "apt-get download ${pkgs[*]}${aroot:+ in $aroot} failed"
for deb in "$tmp"/debs/*.deb; do
	dpkg-deb -x "$deb" "$tmp"
done
ls "$tmp/debs" >"$tmp/.debs"
rm -rf "$tmp/debs"

# Debian's per-flavour headers Makefile names the common half (and from
# 7.x its own output directory) by absolute installed paths; point them
# at the unpacked ones. kbuild's scripts and tools are relative links
# and resolve inside the root.
hdr=$tmp/usr/src/linux-headers-$kver
[ -f "$hdr/Makefile" ] || die "no usr/src/linux-headers-$kver/Makefile in ${pkgs[*]}"
sed -i "s| /usr/src/| $dir/usr/src/|; s|=/usr/src/|=$dir/usr/src/|" "$hdr/Makefile"
[ -f "$tmp/boot/vmlinuz-$kver" ] || [ -f "$tmp/usr/lib/modules/$kver/vmlinuz" ] ||
	die "no vmlinuz for $kver in ${image[*]}"

touch "$tmp/.unpacked"
mv "$tmp" "$dir"
echo "$dir"
