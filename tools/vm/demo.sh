#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The README's "run it" demo, inside the NUMA guest (make demo): the
# topology, a workload's placement (per VMA, as runs, and timed against
# move_pages(2)), a migration with its progress bar and speed against
# move_pages(2) in this boot, a placement watch seeing the move, and the
# counters. About a minute under TCG; 80 columns.
set -e
echo "== 1. the guest's NUMA topology =="
for n in /sys/devices/system/node/node*; do
	id=${n##*node}
	mem=$(awk '/MemTotal/ {print $4 " " $5}' "$n/meminfo")
	echo "node $id: cpus $(cat "$n/cpulist"), memory $mem"
done
numaplace --version
echo
echo "== 2. a process: 64 MiB of THP and 64 MiB of 4 KiB pages, spread =="
echo 0 > /proc/sys/kernel/numa_balancing
np-workload 64 > /tmp/workload.pid &
while [ ! -s /tmp/workload.pid ]; do sleep 0.1; done
read -r pid thp small < /tmp/workload.pid
echo "pid $pid, THP buffer at $thp, 4 KiB buffer at $small"
echo
echo "-- numaplace query -p $pid (pages per node, per VMA; the VMAs of 1 MiB+)"
numaplace query -p "$pid" |
	awk '!/^[0-9a-f]+-[0-9a-f]+ / || $3 + $4 + $5 >= 256' | cut -c1-80
echo
echo "-- the first 16 MiB of its 4 KiB buffer, as runs (last 6)"
numaplace query -p "$pid" --runs "$small+0x1000000" | tail -n 6 | cut -c1-80
echo
echo "-- the same question, page by page, against move_pages(2)"
np-demo-compare query "$pid" "$small" 0x4000000
echo
echo "== 3. a placement watch on the 4 KiB buffer, then a migration =="
numaplace watch -p "$pid" "$small+0x4000000" --count 1 > /tmp/watch.out &
wpid=$!
sleep 1
echo "-- numaplace migrate -p $pid --to 1 $small+0x4000000"
numaplace migrate -p "$pid" --to 1 "$small+0x4000000"
wait "$wpid" || true
echo "-- what the watch printed"
cut -c1-80 /tmp/watch.out
echo
echo "-- 64 MiB of 4 KiB pages, node 0 -> 1, measured now in this boot"
np-demo-compare migrate 64 | fold -s -w 80
echo
echo "== 4. numaplace stats =="
numaplace stats | cut -c1-80
kill "$pid"
