#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The stall benchmark (bench/stall, issue 35) before and after: the module
# OLD (another commit's numaplace.ko, e.g. build/oldkmod/<kernel>/) and the
# current one (the module tools/vm/run loaded), swapped in one boot in
# A B B A order, old new new old; then one table of both: per variant and
# method the best move time and, over both runs of a module, the longest
# stall, the longest in which the thread slept, the worse p99.9 and the
# slow accesses. Arguments after OLD go to bench/stall. OLD "none": the
# current module only (twice). Run by `make bench-stall`.
set -u
OLD=${1:?usage: stall.sh OLD.ko|none [bench/stall options]}
shift
NEW=/usr/lib/numaplace/numaplace.ko
bench=/usr/libexec/numaplace/bench/stall
out=/tmp/stall.out
use() { rmmod numaplace 2>/dev/null; insmod "$1"; }

if [ "$OLD" = none ]; then
	order="$NEW $NEW"
else
	order="$OLD $NEW $NEW $OLD"
fi
rc=0
: > "$out"
for mod in $order; do
	case "$mod" in "$NEW") tag=new ;; *) tag=old ;; esac
	if ! use "$mod"; then
		echo "stall.sh: insmod $mod failed" >&2
		exit 1
	fi
	echo "=== module $tag: $mod, md5 $(md5sum "$mod" | cut -d' ' -f1)" |
		tee -a "$out"
	# Its status through the pipe as a line: busybox sh has no pipefail.
	{ "$bench" "$@" || echo "stall.sh: FAILED: bench/stall $tag"; } 2>&1 |
		tee -a "$out"
done

# The tables of bench/stall: a row is the method (22 columns), then best
# ms, mean ms, longest us, slept us, p99.9 us, > slow, /move, slept,
# accesses, faults, engines. "> slow" and "slept" add up both runs.
awk '
/^=== module / { tag = $3; sub(":", "", tag) }
/^(4k|thp), [0-9]+ MiB/ { v = $1; sub(",", "", v); vs[v] = 1 }
/^method / { in_table = 1; next }
/^$/ { in_table = 0 }
in_table && !/^[ (]/ {
	name = substr($0, 1, 22); sub(/ +$/, "", name)
	n = split(substr($0, 23), f, " ")
	k = v SUBSEP name SUBSEP tag
	if (!(v SUBSEP name in seen)) { seen[v SUBSEP name] = 1; names[v, ++nn[v]] = name }
	if (n < 10 || f[1] !~ /^[0-9.]+$/) { err[k] = substr($0, 23); next }
	runs[k]++
	if (!(k in best) || f[1] + 0 < best[k]) best[k] = f[1] + 0
	if (f[3] + 0 > lng[k]) lng[k] = f[3] + 0
	if (f[4] + 0 > slept[k]) slept[k] = f[4] + 0
	if (f[5] + 0 > p999[k]) p999[k] = f[5] + 0
	slow[k] += f[6]; nslept[k] += f[8]; eng[k] = f[11]
}
END {
	printf "\n=== stall summary (old new new old: best move, worst of both runs)\n"
	for (v in vs) {
		printf "\n%s\n%-22s %-3s %9s %11s %11s %9s %7s %7s %4s  %s\n", v,
		       "method", "mod", "best ms", "longest us", "slept us",
		       "p99.9 us", "> slow", "slept", "runs", "engines"
		for (i = 1; i <= nn[v]; i++) {
			name = names[v, i]
			for (t = 0; t < 2; t++) {
				tag = t ? "new" : "old"
				k = v SUBSEP name SUBSEP tag
				if (k in err) { printf "%-22s %-3s %s\n", name, tag, err[k]; continue }
				if (!runs[k]) continue
				printf "%-22s %-3s %9.1f %11.1f %11.1f %9.1f %7d %7d %4d  %s\n",
				       name, tag, best[k], lng[k], slept[k], p999[k],
				       slow[k], nslept[k], runs[k], eng[k]
			}
		}
	}
}' "$out"
grep -q 'MISMATCH\|stall.sh: FAILED' "$out" && rc=1
exit $rc
