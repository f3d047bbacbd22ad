#!/bin/bash
# Installs the Debian packages the build, the VMs and the tests need,
# or only the packages named as arguments (tools/dkms.sh: dkms).
# Does nothing (and needs no network) when they are already present.
#
# Tools only: no kernel image and no kernel headers are installed, so the
# host's /boot, /lib/modules and boot menu stay as they were. The VMs'
# Debian kernels are unpacked into the cache (tools/vm/debian-kernel.sh),
# and linux-source-6.1 is a tarball under /usr/src that the debug kernel
# is built from, in the cache.
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"

pkgs=(
	gcc make libc6-dev xz-utils cpio kmod
	bc bison flex libelf-dev libssl-dev dwarves	# kernel and module build
	qemu-system-x86 busybox-static			# the test VMs
	linux-source-6.1				# the debug kernel, kselftest headers
	rsync						# kselftest's install (tools/kselftest.sh)
	python3						# make bench's report
	linux-perf					# make profile
)
[ $# -eq 0 ] || pkgs=("$@")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run as root or: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
