# SPDX-License-Identifier: GPL-2.0
#
# The benchmarks (tools/bench): programs that run in the NUMA VM on every
# test kernel and print tables, ours against the running kernel's
# syscalls in the same boot. Not timed tests: none is part of make check.

# bench.c and bench_np.c are the benchmarks' helpers, not benchmarks:
# compiled once (into build/benchlib, outside build/bench, whose every
# file tools/vm/run puts in the guest as a benchmark) and linked into
# each; bench_np.c's call libnumaplace, which kvquery does not link.
BENCH_LIB_SRC := tools/bench/bench.c tools/bench/bench_np.c
BENCH_LIB := $(BUILD)/benchlib/bench.o
BENCH_NP_LIB := $(BUILD)/benchlib/bench_np.o
BENCH_SRC := $(filter-out $(BENCH_LIB_SRC),$(wildcard tools/bench/*.c))
BENCHES  := $(patsubst tools/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

NP_TARGETS += benches bench bench-preload bench-migratepages bench-stats \
	      bench-watch bench-profile bench-stall bench-tier

# $(call np_each_test_kernel,NAME,COMMAND): COMMAND in a shell once for
# each test kernel, $$k naming it, after a "=== NAME: kernel K" line;
# every kernel is run even when one fails, and the recipe fails if any did.
np_each_test_kernel = @rc=0; for k in $(TEST_KERNELS); do \
	echo "=== $(1): kernel $$k"; $(2) || rc=1; done; exit $$rc

$(BENCH_LIB) $(BENCH_NP_LIB): $(BUILD)/benchlib/%.o: tools/bench/%.c tools/bench/bench.h tools/lib/numaplace.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# The benchmarks run in the guest (tools/vm/run copies $(BUILD)/bench/*).
$(BUILD)/bench/%: tools/bench/%.c $(wildcard tools/bench/*.h) tools/lib/numaplace.h $(wildcard uapi/linux/*.h) $(BENCH_LIB) $(BENCH_NP_LIB) $(BUILD)/lib/libnumaplace.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(BENCH_LIB) $(BENCH_NP_LIB) -L$(BUILD)/lib -lnumaplace -lpthread

# kvquery stands for a program that knows nothing of numaplace: libnuma
# only (bench.o calls nothing of libnumaplace).
$(BUILD)/bench/kvquery: tools/bench/kvquery.c tools/bench/bench.h $(BENCH_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(BENCH_LIB) -lnuma

## benches: build the benchmarks, run nothing (make check builds them: a link error fails it)
benches: $(BENCHES)

# In one guest boot every benchmark runs even when one fails; the status
# says if any did. The module is the one with the copy ceiling that
# bench/migrate prints (NP_COPY_LIMIT=y: no production module has it).
BENCH_RUN := { read -r load; read -r params; } < /etc/np-module; \
	rmmod numaplace && insmod /root/probe.ko $$params || exit 1; \
	rc=0; for b in query migrate calls preload; do \
	/usr/libexec/numaplace/bench/$$b || rc=1; done; exit $$rc
# The shim goes where an installed system has it (tools/vm/run now puts it
# there by itself too; kept for an older run script).
PRELOAD_ADD := --add $(BUILD)/lib/libnumaplace-preload.so:/usr/lib/libnumaplace-preload.so

## bench: query, migrate, calls and preload against the syscalls, in the VM on each test kernel
bench: modules-all tools $(BENCHES)
	$(call np_each_test_kernel,bench,( \
		$(MAKE) --no-print-directory modules KVER=$$k NP_COPY_LIMIT=y >/dev/null || exit 1; \
		abi=$$(awk -v k=$$k '$$1 == k {print $$2}' $(CONF)); \
		NP_BUILD=$(BUILD) tools/vm/run --kernel $$k --timeout 1800 $(PRELOAD_ADD) \
		--add $(BUILD)/kmod/$$abi-probe/numaplace.ko:/root/probe.ko \
		-- /bin/sh -c '$(BENCH_RUN)' ))

## bench-preload: the LD_PRELOAD shim alone, kvquery with and without it (A B B A)
bench-preload: modules-all tools $(BUILD)/bench/kvquery $(BUILD)/bench/preload
	$(call np_each_test_kernel,bench-preload,NP_BUILD=$(BUILD) tools/vm/run \
		--kernel $$k --timeout 1800 $(PRELOAD_ADD) -- \
		/usr/libexec/numaplace/bench/preload)

# numactl's unmodified migratepages, 256 MiB, with and without the shim.
MIGRATEPAGES ?= /usr/bin/migratepages
## bench-migratepages: numactl's migratepages (MIGRATEPAGES) with and without the shim, 256 MiB
bench-migratepages: modules-all tools $(BUILD)/bench/migratepages
	$(call np_each_test_kernel,bench-migratepages,NP_BUILD=$(BUILD) tools/vm/run \
		--kernel $$k --timeout 1800 $(PRELOAD_ADD) \
		--add $(MIGRATEPAGES):/usr/bin/migratepages -- \
		/usr/libexec/numaplace/bench/migratepages)

# What the counters cost: the benchmarks with and without them, one boot,
# in deterministic time (--accel icount: a guest nanosecond per guest
# instruction), which resolves differences far below TCG's wall-clock noise.
## bench-stats: what the module's counters cost (a module without them, same boot, icount)
bench-stats: modules-all tools $(BENCHES)
	$(call np_each_test_kernel,bench-stats,{ \
		$(MAKE) --no-print-directory modules KVER=$$k NP_NO_STATS=y >/dev/null || exit 1; \
		abi=$$(awk -v k=$$k '$$1 == k {print $$2}' $(CONF)); \
		tools/vm/run --kernel $$k --timeout 3600 --accel icount \
			--add $(BUILD)/kmod/$$abi-nostats/numaplace.ko:/root/nostats.ko \
			--add tools/bench/stats-cost.sh:/root/stats-cost.sh \
			-- /root/stats-cost.sh /root/nostats.ko; })

## bench-watch: what 100 idle placement watches cost the benchmarks (icount)
bench-watch: modules-all tools $(BENCHES)
	$(call np_each_test_kernel,bench-watch,tools/vm/run --kernel $$k \
		--timeout 3600 --accel icount \
		--add tools/bench/watch-cost.sh:/root/watch-cost.sh -- /root/watch-cost.sh)

# Where migration time goes, per engine and phase (the module's counters
# around one run of each engine alone), in deterministic time.
## bench-profile: where migration time goes, per engine (ENGINES) and phase (icount)
bench-profile: modules-all tools $(BENCHES)
	$(call np_each_test_kernel,bench-profile,tools/vm/run --kernel $$k \
		--timeout 3600 --accel icount \
		--add tools/bench/profile.sh:/root/profile.sh -- /root/profile.sh $(ENGINES))

# Issue 35: how long the target's threads stall while 64 MiB of theirs
# move (tools/bench/stall.c), before and after: the module of
# STALL_OLD_KMOD/<kernel>/numaplace.ko (an older commit's, e.g. c2b9b93's
# in build/oldkmod) and the current one, swapped in one boot, old new new
# old (tools/bench/stall.sh), in deterministic time (one vCPU) on each
# guest CPU model of STALL_CPU_MODELS. STALL_ACCEL=tcg STALL_VM_ARGS=
# "--cpus 4" runs it in wall clock with a vCPU per thread; STALL_ARGS go
# to bench/stall (e.g. "-r 3 -v 4k").
STALL_OLD_KMOD ?= $(BUILD)/oldkmod
STALL_CPU_MODELS ?= max,-erms,-fsrm max
STALL_ACCEL ?= icount
STALL_VM_ARGS ?=
STALL_ARGS ?=
# One kernel, every CPU model, each even when one fails.
STALL_RUN = rc=0; for c in $(STALL_CPU_MODELS); do \
	old=$(STALL_OLD_KMOD)/$$k/numaplace.ko; \
	echo "=== bench-stall: kernel $$k, --accel $(STALL_ACCEL), --cpu-model $$c"; \
	if [ -f $$old ]; then add="--add $$old:/root/old.ko"; arg=/root/old.ko; \
	else echo "bench-stall: no $$old: the current module only"; add=; arg=none; fi; \
	tools/vm/run --kernel $$k --timeout 3600 --accel $(STALL_ACCEL) \
		--cpu-model $$c $(STALL_VM_ARGS) $$add \
		--add tools/bench/stall.sh:/root/stall.sh \
		-- /root/stall.sh $$arg $(STALL_ARGS) || rc=1; \
	done; exit $$rc
## bench-stall: how long the target's threads stall during a 64 MiB move, an older module (STALL_OLD_KMOD) and this one
bench-stall: modules-all tools $(BUILD)/bench/stall
	$(call np_each_test_kernel,bench-stall,( $(STALL_RUN) ))

# Issue 32: how well libnumaplace's tiering keeps a workload's hot pages
# on the top tier (tools/bench/tier.c), against an oracle and no policy,
# in a guest with a memory-only slow node (--slow-nodes 1). Placement
# counts do not depend on the emulator's speed: TIER_ACCEL=tcg-single (a
# vCPU per node, so case 1 has a thread on each fast node, all run by one
# host thread) is the default: the balancing method switches NUMA
# balancing on and off, a live patch of the scheduler's static key that
# multi-threaded TCG now and then runs stale (testing.md, "Emulator
# faults"); TIER_ACCEL=icount (one vCPU) for the scan's cost. TIER_ARGS go
# to bench/tier (e.g. "-P 10 -v 4k").
TIER_ACCEL ?= tcg-single
TIER_ARGS ?=
## bench-tier: tiering against an oracle, a slow memory-only node, both cases, 4 KiB and THP (TIER_ACCEL, TIER_ARGS)
bench-tier: modules-all tools $(BUILD)/bench/tier
	$(call np_each_test_kernel,bench-tier,tools/vm/run --kernel $$k \
		--slow-nodes 1 --timeout 3600 --accel $(TIER_ACCEL) -- \
		/usr/libexec/numaplace/bench/tier $(TIER_ARGS))
