#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What placement watches cost (issue: placement watch): the query and the
# migration benchmarks without watches and with 100 idle watches on other
# memory of the same process, in one boot, in A B B A order. Run by
# `make bench-watch` in deterministic time (--accel icount).
b=/usr/libexec/numaplace/bench
for w in 0 100 100 0; do
	echo "=== watches $w"
	"$b/query" --watches "$w" | grep -E "numaplace runs|numaplace totals|numaplace_move_pages"
	"$b/migrate" --rounds 1 --watches "$w" | grep -E "round 1"
done
