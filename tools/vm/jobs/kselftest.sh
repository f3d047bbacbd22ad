# SPDX-License-Identifier: GPL-2.0
# Sourced by /init: kgo's selftests through the kernel's own runner,
# run_kselftest.sh, as tools/kselftest.sh --kernel K installs it in
# out/kselftest/K/kselftest (KGO_VM_EXTRA=out/kselftest/K: /kgo/kselftest).
# The runner's TAP is a selftest section, so each program is one case
# (its own cases are the runner's "# " lines); then its summary.

ksft=/kgo/kselftest

# The runner appends each program's output to /dev/stdout, which
# devtmpfs does not make (it would write a file of that name). Opened
# for appending, it is the runner's own output file again, so the file
# is opened for appending too: one offset, nothing overwritten.
kselftest() {
	[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
	: >/tmp/kselftest.tap
	"$ksft/run_kselftest.sh" >>/tmp/kselftest.tap 2>&1
	rc=$?
	cat /tmp/kselftest.tap
	return $rc
}

# The runner's totals, by program as kselftest counts them, then by
# case: the sum of the harness's "# Totals:" lines of the programs. Then
# the programs that failed or skipped.
kselftest_summary() {
	t=/tmp/kselftest.tap
	plan=$(grep -m 1 '^1\.\.' $t)
	pass=$(grep '^ok ' $t | grep -vc '# SKIP')
	skip=$(grep -c '^ok .*# SKIP' $t)
	fail=$(grep -c '^not ok ' $t)
	echo "# kselftest kgo: $plan programs: pass:$pass fail:$fail skip:$skip"
	grep '^# # Totals: ' $t | awk '
		{ for (i = 4; i <= NF; i++) {
			split($i, kv, ":")
			if (!(kv[1] in n)) order[++k] = kv[1]
			n[kv[1]] += kv[2]
		} }
		END { s = "# kselftest kgo: cases:"
		      for (i = 1; i <= k; i++) s = s " " order[i] ":" n[order[i]]
		      print s }'
	grep '^not ok \|^ok .*# SKIP' $t
	return 0
}

if [ ! -x "$ksft/run_kselftest.sh" ]; then
	report "KGO-FAIL no $ksft/run_kselftest.sh: tools/kselftest.sh, then run.sh with KGO_VM_EXTRA=out/kselftest/KERNEL"
	return
fi
if ! insmod /kgo/kgo.ko; then
	report "KGO-FAIL insmod kgo.ko"
	return
fi
section selftest kselftest-kgo kselftest
section output kselftest-summary kselftest_summary
# unload_test ends with kgo loaded again.
rmmod kgo || report "KGO-FAIL rmmod kgo"
