#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
#   dkms-kit.sh build KITDIR KVER    (dkms.conf's POST_BUILD, in the build tree)
#   dkms-kit.sh remove KITDIR KVER   (its POST_REMOVE)
#
# DKMS's half of make install-kit: KITDIR is the sources' directory,
# /usr/src/kgo-VERSION, whose include/kgo.h is the header; kgo's
# Module.symvers for KVER goes to KITDIR/KVER/, kgo.ko's lines alone, and
# goes again when DKMS removes kgo for KVER.
set -eu
kit=$2 kver=$3
case "$1" in
build)
	mkdir -p "$kit/$kver"
	awk -F'\t' '$3 ~ /(^|\/)kmod\/kgo$/' Module.symvers >"$kit/$kver/Module.symvers"
	test -s "$kit/$kver/Module.symvers"
	;;
remove)
	rm -f "$kit/$kver/Module.symvers"
	rmdir "$kit/$kver" 2>/dev/null || :
	;;
*)
	echo "usage: dkms-kit.sh build|remove KITDIR KVER" >&2
	exit 2
	;;
esac
