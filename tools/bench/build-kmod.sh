#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   build-kmod.sh DIR
#
# Builds kgo_bench.ko (bench/kmod) for the stock 6.1 kernel and copies
# it to DIR: make bench and make profile both load it. It is built like
# kgo.ko (see build-module.sh), in a copy beside kgo's build in
# out/build/stock so that the same relative include paths work, against
# kgo's exported symbols: tools/build-all.sh stock must have run.
# Without bench/kmod it says so and copies nothing (exit 0).
set -euo pipefail
. "$(dirname "$0")/../vm/common.sh"

[ $# = 1 ] || die "usage: build-kmod.sh DIR"
mods=$KGO_OUT/build/${KGO_BENCH_KERNEL:-stock}
src=$KGO_TOP/bench/kmod dst=$mods/bench/kmod
kdir=$(stock_kdir "${KGO_BENCH_KERNEL:-stock}")

if [ ! -d "$src" ]; then
	note "no bench/kmod: kgo's side of spawn, the ping-pongs and the trees is missing"
	exit 0
fi
[ -f "$mods/Module.symvers" ] || die "no $mods/Module.symvers: tools/build-all.sh stock"
# Its imports' versions come from kgo's Module.symvers, which kbuild does
# not track: after a change to kgo's structs alone it kept the old
# kgo_bench.ko, which the new kgo.ko refused ("disagrees about version
# of symbol"). So build it afresh each time.
rm -rf "$dst"
mkdir -p "$dst"
(cd "$src" && find . -type f \( -name '*.[chS]' -o -name Kbuild -o -name Makefile \) \
	-print0 | tar --null -cf - -T -) | tar -xf - -C "$dst"
log=$dst/build.log
if ! kbuild_run "$kdir" make -C "$kdir" M="$dst" KBUILD_EXTRA_SYMBOLS="$mods/Module.symvers" \
	modules >"$log" 2>&1; then
	cat "$log" >&2
	die "bench/kmod build against $kdir failed"
fi
[ -f "$dst/kgo_bench.ko" ] || die "bench/kmod built no kgo_bench.ko"
# Same rule as kgo.ko: no compiler, objtool or modpost warning.
if grep -E 'warning:|WARNING:' "$log" >&2; then
	die "bench/kmod: warnings in the build (above)"
fi
cp "$dst/kgo_bench.ko" "$1/"
note "built kgo_bench.ko"
