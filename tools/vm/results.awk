# SPDX-License-Identifier: GPL-2.0
#
# Counts a test VM's result port (see init.sh): every KUnit case and
# every selftest case is one test. Prints "passed failed skipped" on the
# last line; failures are listed before it, one per line, "FAIL ...".
#
# KUnit's debugfs results hold the suite as KTAP: case lines are indented
# one level (4 spaces) under the suite; parameterised cases carry their
# own sub-results one level deeper, which are summed up by the case line.

function fail(what) { failed++; print "FAIL " what }

{ sub(/\r$/, "") }

/^KGO-BEGIN / {
	kind = $2; name = $3; cases = 0; bad = 0; insec = 1; next
}
/^KGO-END / {
	rc = $4; sub(/^rc=/, "", rc)
	if (kind == "selftest") {
		# A selftest that died before printing results is one failure;
		# one that skipped as a whole (exit 4) one skip.
		if (cases == 0 && rc == 4)
			skipped++
		else if (rc != 0 && bad == 0)
			fail("selftest " name " exited " rc)
	}
	if (kind == "kunit" && cases == 0)
		fail("kunit " name ": no test cases ran")
	insec = 0; next
}
/^KGO-FAIL / { sub(/^KGO-FAIL /, ""); fail($0); next }
/^KGO-DONE/ { done = 1; next }

insec && kind == "kunit" {
	if ($0 ~ /^    (not )?ok [0-9]+ /) {
		cases++
		if ($0 ~ /# SKIP/) skipped++
		else if ($0 ~ /^    not ok/) { bad++; fail("kunit " name ": " substr($0, 5)) }
		else passed++
	} else if ($0 ~ /^not ok [0-9]+ / && bad == 0 && cases > 0) {
		# The suite failed outside its cases (suite_init or exit).
		fail("kunit " name ": suite failed")
	}
	next
}
insec && kind == "selftest" {
	if ($0 ~ /^(not )?ok [0-9]+ /) {
		cases++
		if ($0 ~ /# SKIP/) skipped++
		else if ($0 ~ /^not ok/) { bad++; fail("selftest " name ": " $0) }
		else passed++
	}
	next
}

END {
	if (!done)
		fail("the run did not finish (crash, panic or timeout: see the console log)")
	printf "%d %d %d\n", passed, failed, skipped
}
