#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tools/numaplace/compare-cli.sh: in the guest, run an old numaplace
# binary (/usr/bin/numaplace-old) and the new one side by side on the same
# workload and compare their output (text, JSON, Prometheus; timestamps,
# durations and rates masked) and exit codes, command by command: a
# refactor of the CLI must not change what scripts read. From the host:
#
#   cp build/bin/numaplace /tmp/numaplace-old      # before the change
#   tools/vm/run --kernel 7.3 --add /tmp/numaplace-old:/usr/bin/numaplace-old \
#       --add tools/numaplace/compare-cli.sh:/usr/bin/np-compare -- np-compare
#
# Each pair runs from the same state (the workload's pages back on node
# 0 first). A whole-process migration (migrate-all-json) may differ by a
# few pages: the two binaries share different library pages with the
# workload (EACCES without --move-all). Ends with the module unloaded and
# loaded again (the commands without it: exit 3). Exits 1 on a difference.
O=/usr/bin/numaplace-old
N=/usr/bin/numaplace
fail=0
pass=0
echo 0 > /proc/sys/kernel/numa_balancing
# JSON is compared as data: canon puts each JSON value of a file on a line,
# without white space outside strings and with every object's members
# sorted, so that a layout or member order of its own is no difference.
# Text lines pass through as they are.
CANON='
# Each JSON value of the input on a line of its own, with no white space
# outside strings and the members of every object sorted by key: two outputs
# that differ only in layout or member order come out the same. Text that
# is not JSON passes through a line at a time.
function skip() {
	while (pos <= n && index(" \t\n\r", substr(buf, pos, 1)))
		pos++
}
function jstr(	s, c) {
	s = "\""
	pos++
	while (pos <= n) {
		c = substr(buf, pos, 1)
		if (c == "\\") {
			s = s c substr(buf, pos + 1, 1)
			pos += 2
			continue
		}
		s = s c
		pos++
		if (c == "\"")
			break
	}
	return s
}
function jval(	c, s, m, i, j, t, mem) {
	skip()
	c = substr(buf, pos, 1)
	if (c == "\"")
		return jstr()
	if (c == "{" || c == "[") {
		pos++
		m = 0
		while (1) {
			skip()
			if (substr(buf, pos, 1) == (c == "{" ? "}" : "]")) {
				pos++
				break
			}
			if (c == "{") {
				s = jstr()
				skip()
				pos++	# the colon
				s = s ":" jval()
			} else {
				s = jval()
			}
			mem[++m] = s
			skip()
			if (substr(buf, pos, 1) == ",")
				pos++
		}
		if (c == "{")	# insertion sort by key
			for (i = 2; i <= m; i++)
				for (j = i; j > 1 && mem[j - 1] > mem[j]; j--) {
					t = mem[j]; mem[j] = mem[j - 1]; mem[j - 1] = t
				}
		s = ""
		for (i = 1; i <= m; i++)
			s = s (i > 1 ? "," : "") mem[i]
		return c s (c == "{" ? "}" : "]")
	}
	s = ""
	while (pos <= n && !index(" \t\n\r,}]", substr(buf, pos, 1))) {
		s = s substr(buf, pos, 1)
		pos++
	}
	return s
}
{ buf = buf $0 "\n" }
END {
	n = length(buf)
	pos = 1
	while (1) {
		skip()
		if (pos > n)
			break
		if (substr(buf, pos, 1) != "{") {	# a line of text
			i = index(substr(buf, pos), "\n")
			print substr(buf, pos, i - 1)
			pos += i
			continue
		}
		print jval()
	}
}

'
canon() { awk "$CANON" "$1"; }
norm() {
	canon "$1" | sed -E -e 's/"time":[0-9.]+/"time":T/g' -e 's/"interval":[0-9.]+/"interval":I/g' \
	    -e 's/"elapsed_s":[0-9.]+/"elapsed_s":E/' -e 's/"gb_per_s":[0-9.]+/"gb_per_s":G/' \
	    -e 's/[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{3})?/HH:MM:SS/g' \
	    -e 's/^(elapsed +)[0-9.]+ s +[0-9.]+ GB\/s/\1E/' \
	    -e 's/^(HH:MM:SS +[0-9]+ +[0-9]+ +[0-9.]+) +[0-9.]+ +[0-9.-]+/\1 MS GBPS/' \
	    -e 's/"duration_ns":[0-9]+/"duration_ns":D/' -e 's/"gbps":[0-9.]+/"gbps":G/'
}
check() {	# NAME: compare /tmp/o.* with /tmp/n.*
	norm /tmp/o.out > /tmp/o.norm; norm /tmp/n.out > /tmp/n.norm
	if [ "$orc" = "$nrc" ] && cmp -s /tmp/o.norm /tmp/n.norm; then
		pass=$((pass + 1)); echo "ok $1 (rc $nrc)"
	else
		fail=$((fail + 1)); echo "DIFF $1: rc old $orc new $nrc"
		diff /tmp/o.norm /tmp/n.norm | head -20
		echo "-- stderr old: $(head -2 /tmp/o.err)"; echo "-- stderr new: $(head -2 /tmp/n.err)"
	fi
}
both() {	# NAME ARGS...
	name=$1; shift
	$O "$@" > /tmp/o.out 2>/tmp/o.err; orc=$?
	$N "$@" > /tmp/n.out 2>/tmp/n.err; nrc=$?
	check "$name"
}
np-workload 32 > /tmp/workload.pid &
while [ ! -s /tmp/workload.pid ]; do sleep 0.1; done
read -r pid thp small < /tmp/workload.pid
R="$small+0x1000000"

both info info
both info-json info --json
both stats stats
both stats-json stats --json
both stats-prom stats --prometheus
both query query -p "$pid"
both query-json query -p "$pid" --json
both query-runs query -p "$pid" --runs "$R"
both query-json-runs query -p "$pid" --json --runs "$R"
both query-nopid query -p 999999
both query-badrange query -p "$pid" 10-5
both config config
both config-reject config copy_workers=99
both config-set config copy_workers=0
# migrate: each pair from the same state (every page back on node 0)
reset() { $N migrate -p "$pid" --to 0 > /dev/null 2>&1; }
pair() {	# NAME ARGS...
	name=$1; shift
	reset; $O "$@" > /tmp/o.out 2>/tmp/o.err; orc=$?
	reset; $N "$@" > /tmp/n.out 2>/tmp/n.err; nrc=$?
	check "$name"
}
pair migrate-to1 migrate -p "$pid" --to 1 "$R"
pair migrate-to1-json migrate -p "$pid" --to 1 "$R" --json
both migrate-inplace migrate -p "$pid" --to 1 "$R"
both migrate-inplace-json migrate -p "$pid" --to 1 --json "$R"
pair migrate-all-json migrate -p "$pid" --to 1 --json
pair migrate-interleave migrate -p "$pid" --interleave 0,1 "$R"
pair migrate-cpu migrate -p "$pid" --cpu 1 "$R"
pair migrate-engine migrate -p "$pid" --to 1 --engine kernel "$R"
pair migrate-engine-vma migrate -p "$pid" --to 1 --engine vma "$thp+0x400000"
both migrate-nonode migrate -p "$pid" --to 2 "$R"
both migrate-absent migrate -p "$pid" --to 9 "$R"
both migrate-interleave-bad migrate -p "$pid" --interleave 0,2 "$R"
both migrate-cpu migrate -p "$pid" --cpu 0 "$R"
both migrate-nopid migrate -p 999999 --to 0
both stats-after stats
both stats-json-after stats --json
both stats-prom-after stats --prometheus
# --watch while idle: the rates are 0
for f in "" "--json"; do
	$O stats --watch 0.3 $f > /tmp/o.out 2>/tmp/o.err & op=$!
	$N stats --watch 0.3 $f > /tmp/n.out 2>/tmp/n.err & np=$!
	sleep 1.5; kill -INT $op $np; wait $op; orc=$?; wait $np; nrc=$?
	# The same number of samples is not guaranteed: the first two.
	for x in o n; do
		awk 'BEGIN { s = 0 } /^numaplace stats, every/ || /^\{/ { s++ } s <= 2' \
			/tmp/$x.out > /tmp/$x.2
		mv /tmp/$x.2 /tmp/$x.out
	done
	check "stats-watch$f"
done
# monitor and watch: both at once see the same events
for f in "" "--json"; do
	$O monitor $f > /tmp/mo.out 2>/dev/null & op=$!
	$N monitor $f > /tmp/mn.out 2>/dev/null & np=$!
	$O watch -p "$pid" "$R" $f > /tmp/wo.out 2>/dev/null & wo=$!
	$N watch -p "$pid" "$R" $f > /tmp/wn.out 2>/dev/null & wn=$!
	sleep 1
	$N migrate -p "$pid" --to 1 "$R" > /dev/null
	$N migrate -p "$pid" --to 0 "$R" > /dev/null
	sleep 1
	kill -INT $op $np $wo $wn; wait $op; orc=$?; wait $np; nrc=$?
	# Two watches' records may interleave differently: as sets.
	norm /tmp/mo.out | sed -E 's/ w[0-9]+#/ w#/; s/,?"watch":[0-9]+//' | sort > /tmp/o.out
	norm /tmp/mn.out | sed -E 's/ w[0-9]+#/ w#/; s/,?"watch":[0-9]+//' | sort > /tmp/n.out
	check "monitor$f"
	wait $wo; orc=$?; wait $wn; nrc=$?
	# How a move is cut into records is timing: the start line.
	head -n 2 /tmp/wo.out | grep -v '^TIME\|"seq":[1-9]' > /tmp/o.out
	head -n 2 /tmp/wn.out | grep -v '^TIME\|"seq":[1-9]' > /tmp/n.out
	check "watch$f"
done
both config-engine config engine=kernel
both config-batch0 config batch_pages=0
both config-auto config engine=auto
kill "$pid"
# without the module: 3 everywhere
rmmod numaplace
both info-nomod info
both stats-nomod stats
both stats-json-nomod stats --json
both config-nomod config
both monitor-nomod monitor
both query-nomod query
both migrate-nomod migrate -p 1 --to 0
insmod /usr/lib/numaplace/numaplace.ko
echo "compare: $pass same, $fail different"
[ "$fail" = 0 ]
