#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   sid-root.sh              prints the path of the Debian unstable root
#   sid-root.sh --newest N [rt]
#                            prints the newest N.x kernel (ABI name, say
#                            7.2.13+deb14-amd64), or its RT flavour, that
#                            the suite offers
#   sid-root.sh --update     refreshes the root's package lists
#   sid-root.sh --peers      prints the root's path, having installed in
#                            it the toolchains of make bench's peers
#
# The kernels people run in 2026 are built with a newer compiler and
# libc than Debian 12's: their headers' kbuild tools need the suite's
# libc, and their modules the suite's gcc. This root, made with
# debootstrap from the mirror the host's apt already uses, holds that
# toolchain, so that kgo builds for them without changing the host. It
# is made once and cached, keyed by the package list and the recipe's
# version below (bump it when make_root changes); tools/vm/in-root.sh
# runs a command inside.
#
# make bench compares kgo with Go's scheduler and with io_uring as people
# have them now, not as Debian 12 froze them (Go 1.19, liburing 2.3): the
# peers are built in this root, with its Go and liburing (--peers). They
# are installed on first use rather than made part of the root, so that
# make check's root is the same with or without a bench run.
#
# The unstable suite's Release file outlives its Valid-Until by these
# machines' clocks, so the root's apt does not check it.
set -euo pipefail
. "$(dirname "$0")/common.sh"

pkgs=gcc,make,libc6-dev,libelf-dev,bc,bison,flex,libssl-dev,dwarves,kmod,xz-utils,cpio,dkms,openssl
recipe=1

key=$(echo "sid $recipe $pkgs" | sha256sum | cut -c1-16)
root=$KGO_CACHE/sid-root-$key
mkdir -p "$KGO_CACHE"

# The Debian archive the host's apt uses (its bookworm main).
mirror() {
	apt-cache policy | sed -n \
		's|^ *[0-9]* \(https\{0,1\}://[^ ]*\) bookworm/main amd64 Packages$|\1|p' | head -n 1
}

make_root() {
	local m tmp=$root.tmp
	[ "$(id -u)" = 0 ] || die "sid-root.sh: debootstrap needs root"
	"$KGO_TOP/tools/deps.sh" debootstrap
	m=$(mirror)
	[ -n "$m" ] || die "sid-root.sh: found no Debian mirror in the host's apt sources"
	rm -rf "$tmp"
	note "making a Debian unstable root in $root (about 5 minutes)"
	debootstrap --variant=minbase --include="$pkgs" sid "$tmp" "$m" \
		>"$KGO_CACHE/sid-root.log" 2>&1 ||
		die "debootstrap sid failed: $KGO_CACHE/sid-root.log"
	echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99kgo"
	chroot "$tmp" apt-get update -q >>"$KGO_CACHE/sid-root.log" 2>&1 ||
		die "apt-get update in the unstable root failed: $KGO_CACHE/sid-root.log"
	chroot "$tmp" dpkg-query -W >"$tmp/.packages"
	touch "$tmp/.made"
	mv "$tmp" "$root"
}

exec 9>"$KGO_CACHE/.sid-root.lock"
flock 9
[ -f "$root/.made" ] || make_root

# Lists older than a day are refreshed before a question about versions:
# the suite drops a kernel within weeks of its successor.
update() {
	chroot "$root" apt-get update -q >&2 ||
		die "apt-get update in the unstable root failed"
	touch "$root/.updated"
}

# The peers' toolchains, once per list: golang-go for gobench and
# go_echo (static, no cgo), liburing-dev for nop_uring (liburing.a).
peer_pkgs="golang-go liburing-dev"
peers() {
	local stamp
	stamp=$root/.peers-$(echo "$peer_pkgs" | sha256sum | cut -c1-16)
	[ -f "$stamp" ] && return
	note "installing $peer_pkgs in $root"
	update 2>>"$KGO_CACHE/sid-root.log"
	# shellcheck disable=SC2086 # a list of package names
	chroot "$root" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends $peer_pkgs \
		>>"$KGO_CACHE/sid-root.log" 2>&1 ||
		die "installing $peer_pkgs in the unstable root failed: $KGO_CACHE/sid-root.log"
	touch "$stamp"
}

case "${1:-}" in
"") echo "$root" ;;
--update) update ;;
--peers)
	peers
	echo "$root"
	;;
--newest)
	n=${2:?usage: sid-root.sh --newest SERIES [rt]}
	flavour=amd64
	[ "${3:-}" = rt ] && flavour=rt-amd64
	if [ -z "$(find "$root/.updated" -mmin -1440 2>/dev/null)" ]; then
		update
	fi
	v=$(chroot "$root" apt-cache search --names-only "^linux-headers-$n\\.[0-9.]*[+]deb[0-9]*-$flavour\$" |
		sed 's/^linux-headers-\([^ ]*\) .*/\1/' | sort -V | tail -n 1)
	[ -n "$v" ] || die "Debian unstable offers no $n.x kernel (linux-headers-$n.*-$flavour)"
	echo "$v"
	;;
*) die "usage: sid-root.sh [--newest SERIES [rt] | --update | --peers]" ;;
esac
