#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A benchmark under two modules in one boot: OLD (another commit's
# numaplace.ko, e.g. build/oldkmod/<kernel>/) and the current one (the
# module tools/vm/run loaded), swapped in A B B A order, old new new old,
# each run's output after a line "=== module old|new: PATH, md5 SUM".
# Exits 1 if a load or a run failed. For a change that must cost the same
# (issue 34: bench/calls before and after the engine table), e.g.:
#
#   tools/vm/run --kernel 6.12 --accel icount \
#	--add build/oldkmod/6.12/numaplace.ko:/root/old.ko \
#	--add tools/bench/ab-module.sh:/root/ab.sh -- \
#	/root/ab.sh /root/old.ko /usr/libexec/numaplace/bench/calls -p 512
set -u
OLD=${1:?usage: ab-module.sh OLD.ko BENCH [options]}
BENCH=${2:?usage: ab-module.sh OLD.ko BENCH [options]}
shift 2
NEW=/usr/lib/numaplace/numaplace.ko
# The parameters tools/vm/run loaded the module with (--modparams).
params=
[ -r /etc/np-module ] && { read -r load; read -r params; } < /etc/np-module
rc=0
for mod in "$OLD" "$NEW" "$NEW" "$OLD"; do
	case "$mod" in "$NEW") tag=new ;; *) tag=old ;; esac
	rmmod numaplace 2>/dev/null
	# shellcheck disable=SC2086 # the parameters are words
	if ! insmod "$mod" $params; then
		echo "ab-module.sh: insmod $mod failed" >&2
		exit 1
	fi
	echo "=== module $tag: $mod, md5 $(md5sum "$mod" | cut -d' ' -f1)"
	"$BENCH" "$@" || { echo "ab-module.sh: FAILED: $BENCH ($tag)"; rc=1; }
done
exit $rc
