#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run every numaplace selftest in the guest and print their TAP output.
# A test program that exits non-zero without reporting a failed test (a
# crash, a missing library) is reported as "not ok" here, so nothing is
# lost between the harness and the final count. Exits non-zero on any
# failure.
dir=/usr/libexec/numaplace/selftests
# Placement comparisons need NUMA balancing off: its scanner marks pages
# PROT_NONE at random moments.
echo 0 > /proc/sys/kernel/numa_balancing 2>/dev/null

# The module load test runs first: it unloads and reloads the module.
order="load $(ls "$dir" | grep -v '^load$')"
fail=0
for t in $order; do
	[ -x "$dir/$t" ] || continue
	echo "# selftest: $t"
	"$dir/$t" > /tmp/np-test.out 2>&1
	rc=$?
	cat /tmp/np-test.out
	if [ "$rc" -ne 0 ]; then
		fail=1
		grep -q '^not ok' /tmp/np-test.out ||
			echo "not ok 1 $t # exited with status $rc"
	fi
	# A load test that failed half-way (a timeout on a slow guest) leaves
	# the module out: put it back, or every later test would only skip.
	if [ "$t" = load ] && [ ! -d /sys/module/numaplace ] &&
	   [ -f /usr/lib/numaplace/numaplace.ko ]; then
		params=$(sed -n 2p /etc/np-module 2>/dev/null)
		# shellcheck disable=SC2086
		insmod /usr/lib/numaplace/numaplace.ko $params ||
			{ fail=1; echo "not ok 1 load # could not load the module again"; }
	fi
done
exit $fail
