#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   build-module.sh NAME KDIR
#
# Builds kgo.ko (and kgo_test.ko where KDIR has KUnit) against KDIR in
# out/build/NAME, a copy of the module sources: objects for two kernels
# cannot share one directory. Any compiler, objtool or modpost warning
# fails the build. A kernel built with a compiler this machine lacks is
# built for in the Debian unstable root (kbuild_run, tools/vm/common.sh).
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"

name=$1 kdir=$2
dst=$KGO_OUT/build/$name
mkdir -p "$dst"
# Only a file whose content changed is copied, and then with the time of
# the copy: an unchanged source does not rebuild its object, and an edit
# made while an earlier build ran is not older than that build's object.
stage=$dst.stage
rm -rf "$stage"
mkdir -p "$stage"
(cd "$KGO_TOP" && { printf 'VERSION\0'; find Kbuild kmod samples include uapi -type f \
	\( -name '*.[chS]' -o -name Kbuild \) -print0; } | tar --null -cf - -T -) |
	tar -xf - -C "$stage"
(cd "$stage" && find . -type f -print0) | while IFS= read -r -d '' f; do
	cmp -s "$stage/$f" "$dst/$f" && continue
	mkdir -p "$(dirname "$dst/$f")"
	cp "$stage/$f" "$dst/$f"
done
rm -rf "$stage"

log=$dst/build.log
if ! kbuild_run "$kdir" make -C "$kdir" M="$dst" modules >"$log" 2>&1; then
	cat "$log" >&2
	die "module build against $kdir failed"
fi
if grep -qi 'warning' "$log"; then
	grep -i 'warning' "$log" >&2
	die "module build against $kdir has warnings (full log: $log)"
fi

# The module author's kit as make install lays it out, in a staging root
# (INSTALL_MOD_PATH=$dst/kit), and samples/hello built against it by its
# own Makefile, as a module author would, out of this tree: a header
# that needs kgo's sources, or a symvers that misses an export, fails
# here. The VM check job loads the result (tools/vm/jobs/check.sh).
kit=$dst/kit
rm -rf "$kit"
make -s -C "$KGO_TOP" install-kit KGO_BUILT="$dst" INSTALL_MOD_PATH="$kit" >/dev/null
rel=$(modinfo -F vermagic "$dst/kmod/kgo.ko" | cut -d' ' -f1)
mkdir -p "$kit/hello"
cp "$KGO_TOP"/samples/hello/{Makefile,Kbuild,kgo_hello.c} "$kit/hello/"
hlog=$kit/hello.log
if ! kbuild_run "$kdir" make -C "$kit/hello" KDIR="$kdir" KVER="$rel" \
	KGO="$kit/usr/src/kgo-$(cat "$KGO_TOP/VERSION")" >"$hlog" 2>&1; then
	cat "$hlog" >&2
	die "samples/hello against the installed kit ($kit) failed"
fi
if grep -qi 'warning' "$hlog"; then
	grep -i 'warning' "$hlog" >&2
	die "samples/hello against the installed kit has warnings (full log: $hlog)"
fi
note "built $name modules: $(cd "$dst" && echo kmod/kgo.ko $(ls kmod/tests/*.ko samples/*/*.ko kit/hello/*.ko 2>/dev/null))"
