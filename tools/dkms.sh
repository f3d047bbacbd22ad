#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   dkms.sh install [KVER]   (make dkms [KVER=...])
#   dkms.sh remove           (make dkms-remove)
#   dkms.sh test [KVER...]
#
# install: puts kgo's module sources in /usr/src/kgo-VERSION, registers
# them with DKMS (replacing an earlier registration of that version, so
# that the sources of this checkout are the ones built), then builds and
# installs kgo.ko for KVER (default: the running kernel), into
# /lib/modules/KVER/updates/dkms, and kgo's Module.symvers for KVER into
# /usr/src/kgo-VERSION/KVER/ (dkms.conf's POST_BUILD: beside the
# sources' include/kgo.h, what make install-kit installs). DKMS rebuilds it for kernels installed
# later (AUTOINSTALL). Any compiler, objtool or modpost warning in DKMS's
# make.log fails it.
#
# remove: unregisters kgo from DKMS, which removes every kgo.ko it
# installed, and deletes /usr/src/kgo-VERSION.
#
# test: install for each KVER (default: the 6.1, 6.12 and 7.x kernels of
# tools/vm/common.sh, and 6.12's PREEMPT_RT flavour; 7.x inside the
# Debian unstable root, whose gcc it needs), check that modprobe finds
# the module DKMS installed and that it is signed, then remove. A
# PREEMPT_RT KVER is built and installed like any other (dkms.conf
# excludes no configuration: the test checks that it does not), and
# dkms.conf's minimum version is checked against versions on either
# side of it. Builds only: nothing is
# loaded, the running kernel is not touched. A KVER whose headers are
# not installed builds against its headers unpacked in the cache
# (tools/vm/debian-kernel.sh), through a /lib/modules/KVER/build link
# that the test makes and removes again at the end, with whatever DKMS
# installed beside it. DKMS signs with a
# key made for the test in a temporary directory, not with the
# machine's own key.
#
# Needs root; installs the dkms package if it is missing.
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"

[ "$(id -u)" = 0 ] || die "dkms.sh: DKMS installs into /usr/src and /lib/modules: run as root"
"$KGO_TOP/tools/deps.sh" dkms

name=kgo
# The project's one version; dkms.conf gets it as the sources are copied.
version=$(cat "$KGO_TOP/VERSION")
[ -n "$version" ] || die "dkms.sh: no version in VERSION"
src=/usr/src/$name-$version

# (Not "dkms status | grep -q": with pipefail, grep's early exit would
# make it fail.)
registered() { [ -n "$(dkms status -m "$name" -v "$version" 2>/dev/null)" ]; }

unregister() {
	if registered; then
		dkms remove -m "$name" -v "$version" --all
	fi
	rm -rf "$src"
}

# The sources that DKMS builds: kgo.ko's alone (dkms.conf builds with
# KGO_CORE=1), without build outputs.
copy_sources() {
	rm -rf "$src"
	mkdir -p "$src"
	(cd "$KGO_TOP" && {
		echo Kbuild
		echo VERSION
		echo tools/dkms-kit.sh
		find kmod -maxdepth 1 -type f \( -name '*.[chS]' -o -name Kbuild \)
		find include uapi -type f -name '*.h'
	} | tar -cf - -T -) | tar -xf - -C "$src"
	sed "s/@VERSION@/$version/" "$KGO_TOP/dkms.conf" >"$src/dkms.conf"
}

have_headers() {
	[ -f "/lib/modules/$1/build/Makefile" ] ||
		die "no headers for $1 at /lib/modules/$1/build: apt-get install linux-headers-$1, or name another kernel: make dkms KVER=..."
}

# build_install KVER: DKMS's build and install of kgo for KVER.
build_install() {
	local kver=$1 log
	dkms build -m "$name" -v "$version" -k "$kver"
	log=/var/lib/dkms/$name/$version/$kver/$(uname -m)/log/make.log
	[ -f "$log" ] || die "no DKMS make.log at $log"
	mkdir -p "$KGO_OUT/logs"
	cp "$log" "$KGO_OUT/logs/dkms-$kver.make.log"
	if grep -qi 'warning' "$log"; then
		grep -i 'warning' "$log" >&2
		die "the DKMS build for $kver has warnings (full log: $log)"
	fi
	note "dkms: built for $kver, no warnings (make.log: $KGO_OUT/logs/dkms-$kver.make.log)"
	dkms install -m "$name" -v "$version" -k "$kver"
}

dkms_install() {
	local kver=${1:-$(uname -r)}
	have_headers "$kver"
	unregister
	copy_sources
	dkms add -m "$name" -v "$version"
	build_install "$kver"
	note "dkms: kgo $version installed for $kver: modprobe kgo (on that kernel)"
}

# check_installed KVER: modprobe resolves kgo to DKMS's module for
# KVER, the module is signed, and kgo's Module.symvers is in the kit.
check_installed() {
	local kver=$1 path signer
	path=$(modprobe -S "$kver" -n -v kgo | sed -n 's/^insmod \([^ ]*\).*/\1/p')
	case "$path" in
	/lib/modules/"$kver"/updates/dkms/kgo.ko*) ;;
	*) die "modprobe -S $kver kgo resolves to '${path:-nothing}', not DKMS's module" ;;
	esac
	signer=$(modinfo -F signer "$path")
	[ -n "$signer" ] || die "$path is not signed"
	grep -q '	kgo_go	' "$src/$kver/Module.symvers" ||
		die "dkms test: no kgo Module.symvers for $kver in $src (dkms.conf's POST_BUILD)"
	note "dkms test: $kver: modprobe kgo -> $path (signed by: $signer); kit in $src"
}

keys=
created=()
test_cleanup() {
	unregister
	rm -rf "$keys"
	local d
	for d in "${created[@]}"; do
		rm -rf "$d"
	done
	[ -d /lib/modules ] && rmdir --ignore-fail-on-non-empty /lib/modules
}

# test_exclusive: BUILD_EXCLUSIVE_KERNEL takes the supported series and
# no other, matched as DKMS matches it (bash's =~ on the version).
test_exclusive() {
	local re v
	re=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$KGO_TOP/dkms.conf")
	[ -n "$re" ] || die "dkms test: no BUILD_EXCLUSIVE_KERNEL in dkms.conf"
	for v in 6.1.0-56-amd64 6.12.117+deb12-amd64 6.19.1 7.2.13+deb14-amd64 10.0.1; do
		[[ $v =~ $re ]] || die "dkms test: dkms.conf would skip supported kernel $v"
	done
	for v in 4.19.0-27-amd64 5.10.0-30-amd64 5.15.0-1 6.0.12-amd64; do
		[[ ! $v =~ $re ]] || die "dkms test: dkms.conf would build for unsupported kernel $v"
	done
	note "dkms test: BUILD_EXCLUSIVE_KERNEL takes 6.1 and later, and nothing before"
}

# test_config: dkms.conf skips no kernel configuration: PREEMPT_RT
# kernels are supported, and DKMS must build for them (it exits 77,
# "skipped", for a kernel a BUILD_EXCLUSIVE_CONFIG line excludes).
test_config() {
	! grep -q '^BUILD_EXCLUSIVE_CONFIG=' "$KGO_TOP/dkms.conf" ||
		die "dkms test: dkms.conf excludes a kernel configuration: $(grep '^BUILD_EXCLUSIVE_CONFIG=' "$KGO_TOP/dkms.conf")"
}

test_kernels() {
	local kvers=("$@") kver hdr kroot
	[ ${#kvers[@]} -gt 0 ] ||
		kvers=("$KGO_KVER_61" "$KGO_KVER_612" "$(stock_kver stock-7)" "$(stock_kver rt-6.12)")
	test_exclusive
	test_config
	# Kernels built with a compiler this machine lacks (7.x): the whole
	# test again inside the Debian unstable root, with its own DKMS,
	# /usr/src and /lib/modules.
	local here=() inroot=()
	for kver in "${kvers[@]}"; do
		hdr=/lib/modules/$kver/build
		[ -f "$hdr/Makefile" ] ||
			hdr=$("$KGO_TOP/tools/vm/debian-kernel.sh" "$kver")/usr/src/linux-headers-$kver
		if kbuild_needs_root "$hdr"; then
			inroot+=("$kver")
		else
			here+=("$kver")
		fi
	done
	for kver in "${inroot[@]}"; do
		note "dkms test: $kver in the Debian unstable root"
		"$KGO_TOP/tools/vm/in-root.sh" "$("$KGO_TOP/tools/vm/sid-root.sh")" \
			"$KGO_TOP/tools/dkms.sh" test "$kver" || die "dkms test: $kver failed"
	done
	[ ${#here[@]} -gt 0 ] || return 0
	kvers=("${here[@]}")
	for kver in "${kvers[@]}"; do
		[ -f "/lib/modules/$kver/build/Makefile" ] && continue
		[ ! -e "/lib/modules/$kver" ] ||
			die "dkms test: /lib/modules/$kver exists without headers: install linux-headers-$kver, or move it away"
		kroot=$("$KGO_TOP/tools/vm/debian-kernel.sh" "$kver")
		created+=("/lib/modules/$kver")
		mkdir -p "/lib/modules/$kver"
		ln -s "$kroot/usr/src/linux-headers-$kver" "/lib/modules/$kver/build"
		# What an installed kernel has beside its modules, and the
		# modules.dep that depmod makes of it: DKMS from 3.2 runs
		# depmod only for a kernel that has one.
		for f in modules.order modules.builtin modules.builtin.modinfo; do
			for d in "$kroot/lib/modules/$kver" "$kroot/usr/lib/modules/$kver"; do
				[ -f "$d/$f" ] && cp "$d/$f" "/lib/modules/$kver/" && break
			done
		done
		depmod -a "$kver"
	done
	keys=$(mktemp -d)
	trap test_cleanup EXIT
	export mok_signing_key=$keys/mok.key mok_certificate=$keys/mok.der
	unregister
	copy_sources
	dkms add -m "$name" -v "$version"
	mkdir -p "$KGO_OUT/logs"
	local built=()
	for kver in "${kvers[@]}"; do
		build_install "$kver"
		check_installed "$kver"
		built+=("$kver")
	done
	dkms status -m "$name" -v "$version"
	unregister
	for kver in "${built[@]}"; do
		if modprobe -S "$kver" -n kgo 2>/dev/null; then
			die "dkms test: kgo is still installed for $kver after dkms remove"
		fi
	done
	note "dkms test: built, installed and removed kgo $version for ${built[*]:-no kernel}"
}

case "${1:-}" in
install) dkms_install "${2:-}" ;;
remove) unregister ;;
test) shift; test_kernels "$@" ;;
*) die "usage: dkms.sh install [KVER] | remove | test [KVER...]" ;;
esac
