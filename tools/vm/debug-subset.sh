#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tools/vm/debug-subset.sh: a part of the suite for a debug kernel's guest
# when the whole of it does not fit the time (Documentation/testing.md,
# "make check-debug"): the soak, race.c's page-table engine variant,
# migrate_pt and query_race, each program bounded by timeout(1) so that
# the guest always reaches its kernel-log dump (tools/vm/run reads the
# reports there). Exits non-zero on any failure.
#
#   tools/vm/run --kernel debug-7.3 --swap 256 --swap-disk 256 --timeout 2400 \
#       --add tools/vm/debug-subset.sh:/root/debug-subset.sh -- \
#       env NP_SOAK_SECONDS=600 NP_TEST_TIMEOUT_SCALE=5 /root/debug-subset.sh
d=/usr/libexec/numaplace/selftests
# Each program also turns it off for its run (NP_HARNESS_MAIN): NUMA
# balancing's scanner would move pages at random.
echo 0 > /proc/sys/kernel/numa_balancing 2>/dev/null
fail=0
# t SECONDS CMD...: run CMD for at most SECONDS, print its TAP output.
t() {
	lim=$1
	shift
	echo "# selftest: $*"
	s=$(date +%s)
	timeout "$lim" "$@" > /tmp/np-test.out 2>&1
	rc=$?
	cat /tmp/np-test.out
	echo "# took $(($(date +%s) - s)) s, status $rc"
	if [ "$rc" -ne 0 ]; then
		fail=1
		grep -q '^not ok' /tmp/np-test.out ||
			echo "not ok 1 $* # exited with status $rc"
	fi
}
t 960 $d/soak
t 480 env NP_RACE_FLAGS=0x80 $d/race
t 420 $d/migrate_pt
t 480 $d/query_race
exit $fail
