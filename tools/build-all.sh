#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   build-all.sh [--bench DIR [--net]] KERNEL...
#   build-all.sh --help
#
# KERNEL: debug, kcsan, stock, stock-6.12, stock-7, rt, rt-6.12, rt-7.
# Installs the tools that are missing, then builds kgo for each named
# kernel (a debug kernel itself first, or a Debian kernel unpacked, from
# cache when it can) in out/build/KERNEL, and the static userspace
# binaries into out/bin: kgoctl, and the selftests with
# out/bin/selftests.list, selftests/kgo/Makefile's list of them in the
# order the VMs run them (tools/vm/jobs/check.sh).
#
# --bench DIR: also make bench's and make profile's kgo_bench.ko
# (bench/kmod), into DIR; one kernel, a stock one. --net: also make
# bench's net group: kthread_echo.ko into DIR, netload, epoll_echo and
# go_echo into DIR/bench.
#
# Any compiler, objtool or modpost warning fails a build. A kernel built
# with a compiler this machine lacks is built for in the Debian unstable
# root (kbuild_run, tools/vm/common.sh).
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"

# kgo_modules NAME KDIR: kgo.ko (and kgo_test.ko where KDIR has KUnit),
# the misuse modules and the samples, against KDIR in out/build/NAME, a
# copy of the module sources: objects for two kernels cannot share one
# directory.
kgo_modules() {
	local name=$1 kdir=$2 dst stage kit rel built f
	dst=$KGO_OUT/build/$name
	mkdir -p "$dst"
	# Only a file whose content changed is copied, and then with the
	# time of the copy: an unchanged source does not rebuild its object,
	# and an edit made while an earlier build ran is not older than that
	# build's object.
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
	logged_build "module build against $kdir" "$dst/build.log" \
		kbuild_run "$kdir" make -C "$kdir" M="$dst" modules

	# The module author's kit as make install lays it out, in a staging
	# root (INSTALL_MOD_PATH=$dst/kit), and samples/hello built against
	# it by its own Makefile, as a module author would, out of this
	# tree: a header that needs kgo's sources, or a symvers that misses
	# an export, fails here. The VM check job loads the result
	# (tools/vm/jobs/check.sh).
	kit=$dst/kit
	rm -rf "$kit"
	make -s -C "$KGO_TOP" install-kit KGO_BUILT="$dst" INSTALL_MOD_PATH="$kit" >/dev/null
	rel=$(modinfo -F vermagic "$dst/kmod/kgo.ko" | cut -d' ' -f1)
	mkdir -p "$kit/hello"
	cp "$KGO_TOP"/samples/hello/{Makefile,Kbuild,kgo_hello.c} "$kit/hello/"
	logged_build "samples/hello against the installed kit ($kit)" "$kit/hello.log" \
		kbuild_run "$kdir" make -C "$kit/hello" KDIR="$kdir" KVER="$rel" \
		KGO="$kit/usr/src/kgo-$(cat "$KGO_TOP/VERSION")"
	built=()
	for f in "$dst"/kmod/kgo.ko "$dst"/kmod/tests/*.ko "$dst"/samples/*/*.ko "$dst"/kit/hello/*.ko; do
		if [ -f "$f" ]; then built+=("${f#"$dst"/}"); fi
	done
	note "built $name modules: ${built[*]}"
}

# bench_kmod KERNEL KDIR DIR: kgo_bench.ko into DIR, built like kgo.ko
# in a copy beside kgo's build in out/build/KERNEL, so that the same
# relative include paths work, against kgo's exported symbols. Without
# bench/kmod it says so and copies nothing.
bench_kmod() {
	local mods=$KGO_OUT/build/$1 kdir=$2 src=$KGO_TOP/bench/kmod dst
	dst=$mods/bench/kmod
	if [ ! -d "$src" ]; then
		note "no bench/kmod: kgo's side of spawn, the ping-pongs and the trees is missing"
		return 0
	fi
	# Its imports' versions come from kgo's Module.symvers, which kbuild
	# does not track: after a change to kgo's structs alone it kept the
	# old kgo_bench.ko, which the new kgo.ko refused ("disagrees about
	# version of symbol"). So build it afresh each time.
	rm -rf "$dst"
	mkdir -p "$dst"
	(cd "$src" && find . -type f \( -name '*.[chS]' -o -name Kbuild -o -name Makefile \) \
		-print0 | tar --null -cf - -T -) | tar -xf - -C "$dst"
	logged_build "bench/kmod build against $kdir" "$dst/build.log" \
		kbuild_run "$kdir" make -C "$kdir" M="$dst" \
		KBUILD_EXTRA_SYMBOLS="$mods/Module.symvers" modules
	cp "$dst/kgo_bench.ko" "$3/"
	note "built kgo_bench.ko"
}

# bench_net KERNEL KDIR DIR: make bench's net group. kthread_echo.ko
# (bench/net/kthread_echo.c, the kthread-per-connection peer) uses no
# kgo symbol, so it is built against the kernel alone, in a copy under
# out/build/KERNEL/bench/net; the static userspace binaries from
# bench/net/Makefile go to DIR/bench.
bench_net() {
	local src=$KGO_TOP/bench/net dst=$KGO_OUT/build/$1/bench/net kdir=$2
	mkdir -p "$dst/kmod-compat" "$3/bench"
	cp "$src/kthread_echo.c" "$src/Kbuild" "$dst/"
	cp "$KGO_TOP/kmod/compat.h" "$dst/kmod-compat/"
	logged_build "bench/net: kthread_echo.ko build against $kdir" "$dst/build.log" \
		kbuild_run "$kdir" make -C "$kdir" M="$dst" modules
	cp "$dst/kthread_echo.ko" "$3/"
	# In the Debian unstable root, with its Go, as make bench's other peers.
	peer_run make -s -C "$src"
	cp "$src/netload" "$src/epoll_echo" "$src/go_echo" "$3/bench/"
	note "built the net group: kthread_echo.ko, netload, epoll_echo, go_echo"
}

bench='' net=''
flags_parse "usage: build-all.sh [--bench DIR [--net]] KERNEL...

Builds kgo for each KERNEL into out/build/KERNEL, and kgoctl and the
selftests into out/bin. KERNEL: debug, kcsan, ${KGO_STOCK_KERNELS// /, },
${KGO_RT_KERNELS// /, }." "
--bench  bench  DIR  also kgo_bench.ko (bench/kmod) into DIR: make bench's, make profile's
--net    net    -    with --bench, also the net group: kthread_echo.ko into DIR, its programs into DIR/bench
" "$@"
kernels=("${KGO_ARGS[@]}")
[ ${#kernels[@]} -gt 0 ] || die "build-all.sh: no kernel named (build-all.sh --help)"
for k in "${kernels[@]}"; do
	case "$k" in
	stock*|rt*|debug|kcsan) ;;
	*) die "build-all.sh: unknown kernel $k (build-all.sh --help)" ;;
	esac
done
if [ -n "$bench" ]; then
	if [ ${#kernels[@]} != 1 ] || [[ "${kernels[0]}" != stock* ]]; then
		die "build-all.sh: --bench builds for one stock kernel, not '${kernels[*]}'"
	fi
	[ -d "$bench" ] || die "build-all.sh: --bench $bench: no such directory"
elif [ -n "$net" ]; then
	die "build-all.sh: --net goes with --bench"
fi

"$KGO_TOP/tools/deps.sh"
for k in "${kernels[@]}"; do
	case "$k" in
	stock*|rt*) kdir=$(stock_kdir "$k") ;;
	*) kdir=$("$KGO_TOP/tools/vm/debug-kernel.sh" "$k") ;;
	esac
	kgo_modules "$k" "$kdir"
	if [ -n "$bench" ]; then
		bench_kmod "$k" "$kdir" "$bench"
		[ -z "$net" ] || bench_net "$k" "$kdir" "$bench"
	fi
done

make -s -C "$KGO_TOP/tools/kgoctl"
make -s -C "$KGO_TOP/selftests/kgo" KGO_STATIC=1
mkdir -p "$KGO_OUT/bin/selftests"
cp "$KGO_TOP/tools/kgoctl/kgoctl" "$KGO_OUT/bin/"
rm -f "$KGO_OUT/bin/selftests/"* "$KGO_OUT/bin/selftests.list"
tests=$(make -s -C "$KGO_TOP/selftests/kgo" list)
for t in $tests; do
	cp "$KGO_TOP/selftests/kgo/$t" "$KGO_OUT/bin/selftests/"
done
# Written last: a list means that every test in it was copied.
tr ' ' '\n' <<<"$tests" >"$KGO_OUT/bin/selftests.list"
