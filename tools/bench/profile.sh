#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Where a migration's time goes: for each engine and buffer variant, a
# fresh module (counters at zero), one bench/migrate run of that engine
# alone, then the module's per-phase times (`numaplace stats`). Run by
# `make bench-profile` (deterministic time: --accel icount, one vCPU).
#   profile.sh [ENGINE...]   (default: kernel vma batch)
bench=/usr/libexec/numaplace/bench
ko=/usr/lib/numaplace/numaplace.ko
engines=${*:-kernel vma batch pt}
for v in 4k thp mthp 4k-ilv; do
	for e in $engines; do
		rmmod numaplace && insmod "$ko" ${NP_MODPARAMS:-} || exit 1
		[ -n "${NP_CONFIG:-}" ] && numaplace config $NP_CONFIG >/dev/null
		echo "=== variant $v, engine $e"
		"$bench/migrate" --rounds 1 --method "engine $e" --variant "$v" |
			grep -E "^numaplace engine|MISMATCH|error" | grep -v "/ move_pages"
		numaplace stats | sed -n '/^migration time/,/^$/p'
	done
done
