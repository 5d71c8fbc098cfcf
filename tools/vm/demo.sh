#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The README's "run it" demo, inside the NUMA guest (make demo).
set -e
echo "== the guest's NUMA topology =="
for n in /sys/devices/system/node/node*; do
	id=${n##*node}
	mem=$(awk '/MemTotal/ {print $4 " " $5}' "$n/meminfo")
	echo "node $id: cpus $(cat "$n/cpulist"), memory $mem"
done
echo
echo "== numaplace info =="
numaplace info
echo
echo "== a process with 64 MiB of THP and 64 MiB of 4 KiB pages, spread over the nodes =="
echo 0 > /proc/sys/kernel/numa_balancing
np-workload 64 > /tmp/workload.pid &
while [ ! -s /tmp/workload.pid ]; do sleep 0.1; done
read -r pid thp small < /tmp/workload.pid
echo "pid $pid, THP buffer at $thp, 4 KiB buffer at $small"
echo
echo "== numaplace query -p $pid (every VMA, pages per node) =="
numaplace query -p "$pid"
echo
echo "== the first 16 MiB of its 4 KiB buffer, as runs (last 12) =="
numaplace query -p "$pid" --runs "$small+0x1000000" | tail -n 12
kill "$pid"
