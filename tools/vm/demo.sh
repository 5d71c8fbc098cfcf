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
