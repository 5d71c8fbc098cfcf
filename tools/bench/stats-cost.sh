#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What numaplace's counters cost (issue: telemetry): the query and the
# migration benchmarks with the module built with counters (the loaded one)
# and without (NOSTATS, a module built with `make NP_NO_STATS=y`), in one
# boot, in A B B A order. Run by `make bench-stats`.
set -e
NOSTATS=${1:?usage: stats-cost.sh NOSTATS.ko}
STATS=/usr/lib/numaplace/numaplace.ko
bench=/usr/libexec/numaplace/bench
use() { rmmod numaplace; insmod "$1"; }
for mod in "$STATS" "$NOSTATS" "$NOSTATS" "$STATS"; do
	use "$mod"
	case "$mod" in "$STATS") tag=stats ;; *) tag=nostats ;; esac
	echo "=== $tag"
	"$bench/query" | grep -E "numaplace runs|numaplace totals|numaplace_move_pages"
	"$bench/migrate" --rounds 1 | grep -E "MIGRATE \(default\)|engine"
done
