#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   kselftest-src.sh KERNEL
#
# Prints a directory holding the kselftest framework of Debian kernel
# KERNEL's series (stock, stock-6.12, stock-7...: tools/vm/common.sh):
# its tools/testing/selftests, with lib.mk, kselftest.h and the runner,
# and the few files outside it that lib.mk includes. kgo's selftests are
# built and run with the framework of the kernel they test, since lib.mk
# and run_kselftest.sh change between series. The tree's scripts/ come
# too, for its kernel-doc (tools/kdoc.sh).
#
# The files come from Debian's linux-source-SERIES package of the same
# suite as the kernel, fetched with `apt-get download` (never installed)
# and cached by the package's version. 6.1's comes from the tree that
# tools/vm/ksrc.sh already unpacks for the debug kernel.
set -euo pipefail
. "$(dirname "$0")/common.sh"

k=${1:?usage: kselftest-src.sh KERNEL}
kver=$(stock_kver "$k") || exit 1
suite=$(kernel_field "$k" 3) || exit 1
series=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$kver")
pkg=linux-source-$series

if [ "$suite" = host ] && [ -n "$(pkg_version "$pkg")" ]; then
	# The installed one (6.1, which tools/deps.sh installs).
	exec "$KGO_TOP/tools/vm/ksrc.sh"
fi

aroot=
[ "$suite" = host ] || aroot=$("$KGO_TOP/tools/vm/sid-root.sh")
ver=$(apt_at "$aroot" apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
[ -n "$ver" ] || die "no Debian package $pkg in the suite of $k ($kver)"

dir=$KGO_CACHE/kselftest-src/${pkg}_$ver
# The marker names what was unpacked: a tree from before scripts/ came
# along is unpacked again.
marker=.unpacked-scripts
if [ -f "$dir/$marker" ]; then
	echo "$dir"
	exit 0
fi
mkdir -p "$KGO_CACHE/kselftest-src"
exec 9>"$KGO_CACHE/kselftest-src/.$pkg.lock"
flock 9
if [ ! -f "$dir/$marker" ]; then
	[ "$(id -u)" = 0 ] || die "kselftest-src.sh: fetching $pkg needs apt as root"
	note "fetching $pkg $ver for its kselftest framework"
	tmp=$dir.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp/deb"
	apt_download "$aroot" "$tmp/deb" "$pkg=$ver" || die "apt-get download $pkg=$ver failed"
	# Only tools/ (the framework, what its makefiles include, and
	# kernel-doc's library), scripts/ and the uapi headers, out of a
	# source tarball of about 1.5 GB unpacked. tar's '*' matches '/',
	# so */include/uapi/* takes arch/*/include/uapi too.
	dpkg-deb --fsys-tarfile "$tmp"/deb/*.deb |
		tar -xOf - --wildcards "./usr/src/$pkg.tar.*" |
		tar -xJf - -C "$tmp" --strip-components=1 --wildcards \
			'*/tools/*' '*/scripts/*' '*/include/uapi/*' \
			'*/usr/include/*'
	rm -rf "$tmp/deb"
	[ -f "$tmp/tools/testing/selftests/lib.mk" ] || die "$pkg $ver has no tools/testing/selftests/lib.mk"
	touch "$tmp/$marker" "$tmp/.unpacked"	# .unpacked: what older trees look for
	rm -rf "$dir"
	mv "$tmp" "$dir"
fi
echo "$dir"
