#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   build-net.sh DIR
#
# Builds make bench's "net" group for the stock 6.1 kernel and copies it
# to DIR: kthread_echo.ko (bench/net/kthread_echo.c, the kthread-per-
# connection peer) to DIR, and the static userspace binaries (netload,
# epoll_echo, go_echo; bench/net/Makefile) to DIR/bench. The module
# uses no kgo symbol, so it is built against the kernel alone, in a copy
# under out/build/stock/bench/net as kgo_bench.ko is (build-kmod.sh),
# and any compiler, objtool or modpost warning fails the build.
set -euo pipefail
. "$(dirname "$0")/../vm/common.sh"

[ $# = 1 ] || die "usage: build-net.sh DIR"
src=$KGO_TOP/bench/net dst=$KGO_OUT/build/${KGO_BENCH_KERNEL:-stock}/bench/net
kdir=$(stock_kdir "${KGO_BENCH_KERNEL:-stock}")

mkdir -p "$dst" "$1/bench"
cp "$src/kthread_echo.c" "$src/Kbuild" "$dst/"
mkdir -p "$dst/kmod-compat"
cp "$KGO_TOP/kmod/compat.h" "$dst/kmod-compat/"
log=$dst/build.log
if ! kbuild_run "$kdir" make -C "$kdir" M="$dst" modules >"$log" 2>&1; then
	cat "$log" >&2
	die "bench/net: kthread_echo.ko build against $kdir failed"
fi
if grep -E 'warning:|WARNING:' "$log" >&2; then
	die "bench/net: warnings in the build (above)"
fi
cp "$dst/kthread_echo.ko" "$1/"

# In the Debian unstable root, with its Go, as make bench's other peers.
peer_run make -s -C "$src"
cp "$src/netload" "$src/epoll_echo" "$src/go_echo" "$1/bench/"
note "built the net group: kthread_echo.ko, netload, epoll_echo, go_echo"
