# SPDX-License-Identifier: GPL-2.0
#
#   make              build kmod/kgo.ko (and kmod/tests/kgo_test.ko when the
#                     target kernel has CONFIG_KUNIT) against $(KDIR)
#   make demo         boot the stock kernel in QEMU, load kgo, run kgoctl
#   make check        every test: KUnit + selftests on the debug kernel,
#                     selftests on the stock kernel
#   make matrix       what does not fit CI next to make check: the stock
#                     kernels' selftests under preempt=none and
#                     preempt=full, stock 6.1 with 4 vCPUs, the KCSAN debug
#                     kernel, the selftests on the PREEMPT_RT kernels; a
#                     table (tools/matrix.sh)
#   make bench        boot the stock kernel once: kgo against workqueues,
#                     kthreads, Go and io_uring; a table, out/bench/*.json,
#                     *.svg (KGO_BENCH_RUNS=5; KGO_BENCH_SMOKE=1 for tiny;
#                     the same as flags: tools/bench/bench.sh --help)
#   make profile      perf in the stock kernel's VM while kgo_bench.ko runs
#                     one workload (KGO_PROFILE=yield_pingpong): the top
#                     functions, out/profile/NAME.txt; KGO_PROFILE_INSN=1:
#                     exact instructions per operation by function, from
#                     a QEMU plugin (out/profile/NAME.insn.txt); as flags:
#                     tools/bench/profile.sh --help
#   make check-harness  show that make check fails on a failing KUnit case,
#                     a failing selftest, a WARN and a hung guest
#   make tools        libkgo, tools/kgoctl/kgoctl, examples/ and the selftest
#                     binaries
#   make examples     examples/: two small programs that use libkgo
#   make check-tools  the host-side tests of kgoctl, libkgo and the bench
#                     report, which need no VM and no /dev/kgo (make check
#                     runs them first)
#   make install-tools  libkgo (lib, headers, pkg-config, man3) and kgoctl
#                     (sbin, man8, bash completion) into DESTDIR/PREFIX
#   make style        checkpatch.pl over the project's C files, the core's layering
#                     (tools/callgraph.py), the API's kernel-doc -Wall (tools/kdoc.sh)
#   make sparse       sparse (C=2) over the module
#   make install      kgo.ko alone into /lib/modules/<its kernel>/ (extra/
#                     or, from 6.6, updates/), and depmod: modprobe kgo;
#                     and the module author's kit (install-kit)
#   make install-kit  include/kgo.h into /usr/src/kgo-<VERSION>/include/,
#                     kgo's Module.symvers into /usr/src/kgo-<VERSION>/
#                     <its kernel>/ (KGO_BUILT=DIR: of the kgo.ko built
#                     there); what samples/hello/Makefile builds against
#   make dkms         DKMS: add, build and install kgo.ko for $(KVER) (and
#                     for kernels installed later); make dkms-remove

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
TOP := $(CURDIR)
KGO_VERSION := $(shell cat $(TOP)/VERSION)
# Everything install puts outside /lib/modules goes below the same root
# as the module: DESTDIR, else INSTALL_MOD_PATH, else /.
KGO_KIT := $(or $(DESTDIR),$(INSTALL_MOD_PATH))/usr/src/kgo-$(KGO_VERSION)
KGO_BUILT ?= $(TOP)

all: modules

kdir-exists:
	@test -f "$(KDIR)/Makefile" || { \
	  echo "kgo: no kernel build tree at KDIR=$(KDIR)." >&2; \
	  echo "kgo: install the headers of the kernel you run" \
	       "(Debian: apt-get install linux-headers-$(KVER))," >&2; \
	  echo "kgo: or name a built kernel tree: make KDIR=/path/to/linux" >&2; \
	  exit 1; }

modules: kdir-exists
	$(MAKE) -C $(KDIR) M=$(TOP) modules

# kgo.ko alone (KGO_CORE=1: not the test modules). Into the directory of
# the kernel it was built for, named by its vermagic: Debian's 6.1
# headers say 6.1.192 in include/config/kernel.release, which is what
# modules_install would otherwise use. And depmod, which modules_install
# skips against a headers package (it has no System.map). A headers
# package has no signing key either: kbuild's signing is skipped where
# KDIR has no certs/signing_key.x509 (README, "Secure Boot").
install: kdir-exists
	$(MAKE) -C $(KDIR) M=$(TOP) KGO_CORE=1 modules
	rel=$$(modinfo -F vermagic kmod/kgo.ko | cut -d' ' -f1) && \
	$(MAKE) -C $(KDIR) M=$(TOP) KERNELRELEASE=$$rel \
	  $(if $(wildcard $(KDIR)/certs/signing_key.x509),,CONFIG_MODULE_SIG_ALL=) modules_install && \
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $$rel
	$(MAKE) install-kit

# What a module that calls kgo builds with, where DKMS's kgo also has it
# (tools/dkms.sh): the header once per version, the symbol versions once
# per kernel, beside each other as ZFS lays out /usr/src/zfs-VERSION.
# Only kgo.ko's lines of Module.symvers: a build with the test modules
# lists theirs too.
install-kit:
	rel=$$(modinfo -F vermagic $(KGO_BUILT)/kmod/kgo.ko | cut -d' ' -f1) && \
	install -D -m 644 $(TOP)/include/kgo.h $(KGO_KIT)/include/kgo.h && \
	mkdir -p $(KGO_KIT)/$$rel && \
	awk -F'\t' '$$3 ~ /(^|\/)kmod\/kgo$$/' $(KGO_BUILT)/Module.symvers >$(KGO_KIT)/$$rel/Module.symvers && \
	test -s $(KGO_KIT)/$$rel/Module.symvers && \
	echo "kgo: module author's kit in $(KGO_KIT) (samples/hello/Makefile)"

dkms:
	@tools/dkms.sh install $(KVER)

dkms-remove:
	@tools/dkms.sh remove

sparse: kdir-exists
	$(MAKE) -C $(KDIR) M=$(TOP) C=2 modules

tools:
	$(MAKE) -C libkgo
	$(MAKE) -C tools/kgoctl
	$(MAKE) -C examples
	$(MAKE) -C selftests/kgo

examples:
	$(MAKE) -C examples

check-tools:
	$(MAKE) -s -C tools/kgoctl check
	$(MAKE) -s -C libkgo check
	python3 tools/bench/report_test.py

install-tools:
	$(MAKE) -C libkgo install
	$(MAKE) -C tools/kgoctl install

style:
	@tools/style.sh

demo:
	@tools/demo.sh

check:
	@tools/check.sh

check-harness:
	@tools/check-harness.sh

matrix:
	@tools/matrix.sh

bench:
	@tools/bench/bench.sh

profile:
	@tools/bench/profile.sh

# Not kbuild's clean: for an external module it deletes every *.mod (and
# *.o, *.s...) below M, and bench/go/go.mod is a tracked file. Kbuild's
# outputs are all in kmod/ and at the top.
clean:
	find kmod \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
	  -o -name '.*.cmd' -o -name '.*.d' -o -name '*.a' -o -name '*.order' \
	  -o -name '*.dwo' \) -type f -delete
	rm -f Module.symvers modules.order .Module.symvers.cmd .modules.order.cmd
	rm -rf out/build out/bin
	$(MAKE) -C libkgo clean
	$(MAKE) -C tools/kgoctl clean
	$(MAKE) -C examples clean
	$(MAKE) -C selftests/kgo clean
	$(MAKE) -C bench/go clean
	$(MAKE) -C bench/uring clean

.PHONY: all kdir-exists modules install install-kit dkms dkms-remove sparse tools examples \
	check-tools install-tools style demo check check-harness matrix bench profile clean
