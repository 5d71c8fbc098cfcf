#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tools/vm/static-key-stress.sh [SECONDS] [unmitigated|numa_balancing]:
# in the guest,
#   tools/vm/run --kernel 6.12 --no-module --cpus 3 \
#	--add tools/vm/static-key-stress.sh:/root/sks.sh -- /root/sks.sh 400 unmitigated
# (Documentation/testing.md, "Emulator faults"). "unmitigated" removes the
# cpuset cgroup tools/vm/init keeps, so each mkdir/rmdir switches the key.
#
# Toggle the cpusets_enabled static key (text_poke_bp over every
# cpusets_enabled() site, __alloc_pages among them) while every CPU
# allocates pages: does the guest take a stray int3 without numaplace?
# "numa_balancing" toggles kernel.numa_balancing instead (the
# sched_numa_balancing key: migrate_task_rq_fair(), task_tick_fair()...),
# what every test program did when the guests booted with it on.
secs=${1:-300}
mode=${2:-}
mkdir -p /sys/fs/cgroup /mnt/t
mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
[ "$mode" = unmitigated ] && rmdir /sys/fs/cgroup/np-keep-cpusets
echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control || exit 1
mount -t tmpfs -o size=900m none /mnt/t || exit 1
for c in 0 1 2; do
	( while :; do head -c 32m /dev/zero > /mnt/t/f$c; rm -f /mnt/t/f$c; done ) &
done
end=$(( $(date +%s) + secs )); i=0
if [ "$mode" = numa_balancing ]; then
	while [ "$(date +%s)" -lt "$end" ]; do
		echo 1 > /proc/sys/kernel/numa_balancing || exit 1
		echo 0 > /proc/sys/kernel/numa_balancing || exit 1
		i=$((i + 1))
	done
	kill $(jobs -p) 2>/dev/null
	echo "static-key-stress: numa_balancing switched on and off $i times in $secs s"
	exit 0
fi
while [ "$(date +%s)" -lt "$end" ]; do
	mkdir /sys/fs/cgroup/np || exit 1
	rmdir /sys/fs/cgroup/np || exit 1
	i=$((i + 1))
done
kill $(jobs -p) 2>/dev/null
echo "static-key-stress: $i cpuset cgroups made and removed in $secs s"
