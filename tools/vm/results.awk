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

BEGIN { LOGKEEP = 12 }

function end_kunit(   i) {
	if (!totals) {
		tpass = ok; tfail = bad; tskip = skip
	}
	if (tpass + tfail + tskip == 0) {
		fail("kunit " name ": no test cases ran")
		return
	}
	passed += tpass; skipped += tskip
	for (i = 1; i <= nmsg; i++)
		fail("kunit " name ": " msg[i])
	for (i = nmsg; i < tfail; i++)
		fail("kunit " name ": a failure without its case line (see the console log)")
	# The suite failed outside its cases (suite_init or exit).
	if (suite_bad && tfail == 0)
		fail("kunit " name ": suite failed")
}

{ sub(/\r$/, "") }

/^KGO-BEGIN / {
	kind = $2; name = $3; cases = 0; bad = 0; insec = 1; nlog = 0
	ok = 0; skip = 0; nmsg = 0; totals = 0; suite_bad = 0
	next
}
/^KGO-END / {
	rc = $4; sub(/^rc=/, "", rc)
	# A section's end names its start: anything else means that the
	# job's shell lost track of it (busybox sh has no locals, and a
	# function that sets "kind" or "name" clobbers /init's).
	if (!insec || $2 != kind || $3 != name)
		fail("section " (insec ? kind " " name : "(none)") " ended as " $2 " " $3)
	if (kind == "selftest") {
		# A selftest that died before printing results is one failure;
		# one that skipped as a whole (exit 4) one skip.
		if (cases == 0 && rc == 4)
			skipped++
		else if (rc != 0 && bad == 0)
			fail("selftest " name " exited " rc)
	}
	if (kind == "kunit")
		end_kunit()
	insec = 0; next
}
/^KGO-FAIL / { sub(/^KGO-FAIL /, ""); fail($0); next }
/^KGO-DONE/ { done = 1; next }

# KUnit: the suite's "# Totals:" line is the count (it counts each
# parameter of a parameterised case). The case lines, indented one level,
# name the failures and are the count where Totals is missing. They can
# be missing themselves: a case's log is a fixed buffer that a chatty
# case overflows.
insec && kind == "kunit" {
	if ($0 ~ /^    (not )?ok [0-9]+ /) {
		cases++
		if ($0 ~ /# SKIP/) skip++
		else if ($0 ~ /^    not ok/) { bad++; msg[++nmsg] = substr($0, 5) }
		else ok++
	} else if ($0 ~ /^# Totals: pass:[0-9]+ fail:[0-9]+ skip:[0-9]+/) {
		totals = 1
		split($0, f, /[: ]+/)	# "#" "Totals" "pass" N "fail" N "skip" N
		tpass = f[4]; tfail = f[6]; tskip = f[8]
	} else if ($0 ~ /^not ok [0-9]+ /) {
		suite_bad = 1
	}
	next
}
# A failing selftest case also shows what it logged (its last "#" lines),
# so that a CI summary says why without the console log.
insec && kind == "selftest" {
	if ($0 ~ /^(not )?ok [0-9]+ /) {
		cases++
		if ($0 ~ /# SKIP/) skipped++
		else if ($0 ~ /^not ok/) {
			bad++; fail("selftest " name ": " $0)
			for (i = (nlog > LOGKEEP ? nlog - LOGKEEP + 1 : 1); i <= nlog; i++)
				print "    " logl[i % LOGKEEP]
		} else passed++
		nlog = 0
	} else if ($0 ~ /^#/) {
		logl[++nlog % LOGKEEP] = $0
	}
	next
}

END {
	if (!done)
		fail("the run did not finish (crash, panic or timeout: see the console log)")
	printf "%d %d %d\n", passed, failed, skipped
}
