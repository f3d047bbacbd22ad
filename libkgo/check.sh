#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# make -C libkgo check: libkgo as a user gets it, on the host, without
# kgo loaded.
#
#  1. libkgo.so exports what libkgo.map lists, each at its version, and
#     nothing else;
#  2. make install into a DESTDIR, then examples/ built against that
#     install through pkg-config --cflags --libs, linked to its
#     libkgo.so (not libkgo.a, not this tree's), and run: each does its
#     work where /dev/kgo can be opened, else exits 4 (skip) saying why.
#
# TAP on stdout; exits 0 when every check passed.
set -uo pipefail
cd "$(dirname "$0")" || exit 1
soname=$(sed -n 's/^SONAME := //p' Makefile)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }

echo "1..8"

# 1. The exports, against the version script's list.
want=$(sed -n '/global:/,/local:/{/;/{s/[[:space:]]*\([a-z_]*\);.*/\1@@LIBKGO_2/p}}' libkgo.map | sort)
got=$(nm -D --defined-only "$soname" | awk '$2 == "T" { print $3 }' | sort)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
	ok "$soname exports the $(echo "$want" | wc -l) functions of libkgo.map, at LIBKGO_2"
else
	not_ok "$soname exports differ from libkgo.map"
	diff <(echo "$want") <(echo "$got") | sed 's/^/# /'
fi

# Every function of the API, exported or inline, has its man page, and
# every page renders without a warning. kgo_ring_load_acquire() and
# kgo_ring_store_release() are the header's own barriers, not API.
missing=
for f in $(sed -n '/global:/,/local:/s/^[[:space:]]*\(kgo_[a-z_]*\);.*/\1/p' libkgo.map) \
	 $(sed -n 's/^static inline [a-z ]*[ *]\(kgo_[a-z_]*\)(.*/\1/p' libkgo.h); do
	case $f in kgo_ring_load_acquire|kgo_ring_store_release) continue ;; esac
	[ -f "man/$f.3" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then
	ok "every function in libkgo.map and libkgo.h has its man page"
else
	not_ok "no man page for:$missing"
fi
warn=
for f in man/*.3; do
	# .so pages are links: rendered through the page they name.
	grep -q '^\.so ' "$f" && continue
	w=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$f" 2>&1 >/dev/null)
	[ -z "$w" ] || warn="$warn $f: $w"
done
if [ -z "$warn" ]; then
	ok "man -l of every man/*.3: no warnings"
else
	not_ok "man warnings:$warn"
fi

# 2. make install into a DESTDIR, as a package build does.
if make -s install DESTDIR="$tmp" PREFIX=/usr >"$tmp/install.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=/usr"
else
	not_ok "make install DESTDIR=... PREFIX=/usr"
	sed 's/^/# /' "$tmp/install.log"
fi
rm -f "$tmp/install.log"

# 3. The examples, built as a program outside this tree builds them: the
# DESTDIR's pkgconfig, its paths under the DESTDIR (sysroot).
export PKG_CONFIG_PATH=$tmp/usr/lib/pkgconfig PKG_CONFIG_LIBDIR=$tmp/usr/lib/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$tmp
flags=$(pkg-config --cflags --libs libkgo 2>&1)
: "${CC:=cc}"
built=1
for p in ring_nop batch_stats; do
	# shellcheck disable=SC2046 # pkg-config's words are separate flags
	$CC -Wall -Wextra -Werror $(pkg-config --cflags libkgo) -o "$tmp/$p" \
		../examples/$p.c $(pkg-config --libs libkgo) >>"$tmp/build.log" 2>&1 || built=0
done
if [[ $flags == *"-I$tmp/usr/include"* && $flags == *"-L$tmp/usr/lib"* ]] && [ $built = 1 ]; then
	ok "examples built with pkg-config --cflags --libs libkgo: $flags"
else
	not_ok "examples built with pkg-config --cflags --libs libkgo: $flags"
	sed 's/^/# /' "$tmp/build.log"
fi

# 4. Linked to the shared library, which the loader finds in the DESTDIR.
prog=$tmp/ring_nop
needed=$(readelf -d "$prog" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(libkgo[^]]*\)\].*/\1/p')
resolved=$(LD_LIBRARY_PATH=$tmp/usr/lib ldd "$prog" 2>/dev/null | awk '/libkgo/ { print $3 }')
if [ "$needed" = "$soname" ] && [ "$resolved" = "$tmp/usr/lib/$soname" ]; then
	ok "ring_nop needs $soname, found in the DESTDIR"
else
	not_ok "ring_nop needs '$needed', resolved to '$resolved'"
fi

# 5, 6. Run: 0 with kgo there, 4 (skip, with the reason) without.
for p in ring_nop batch_stats; do
	LD_LIBRARY_PATH=$tmp/usr/lib "$tmp/$p" >"$tmp/$p.out" 2>&1
	rc=$?
	sed 's/^/# /' "$tmp/$p.out"
	if [ $rc = 0 ]; then
		ok "$p ran against /dev/kgo"
	elif [ $rc = 4 ] && grep -q "skip: /dev/kgo" "$tmp/$p.out"; then
		ok "$p: no usable /dev/kgo here, skipped with its reason # SKIP"
	else
		not_ok "$p exited $rc"
	fi
done
exit $((failed != 0))
