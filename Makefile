# SPDX-License-Identifier: GPL-2.0
#
# numaplace top-level Makefile.
#   make deps            install build/test dependencies (root, apt)
#   make [KVER=...]      build numaplace.ko and the selftests' test modules
#                        for one kernel (ABI name or short name of
#                        tools/vm/kernels.conf: 6.1, 6.12, 7.3, ...)
#   make module          numaplace.ko alone (what DKMS and make install build;
#                        the package's tree has no selftests/)
#   make modules-all     build it for every kernel in tools/vm/kernels.conf
#   make tools           libnumaplace, the numaplace CLI, selftests
#   make check-man       numaplace(1) against every command's --help
#   make check           boot the NUMA VM on every "test" kernel and run the
#                        selftests (after make modules-all)
#   make check-debug     the same on KASAN/lockdep/DEBUG_VM kernels built from
#                        Debian's linux-source-6.1 and -7.3, with a 10-minute
#                        soak (CHECK_DEBUG_KERNELS="6.1 7.3")
#   make genl-gen        regenerate the netlink code from its spec (ynl-gen-c.py)
#   make genl-check      fail if the committed generated netlink code is stale
#   make demo            deps + build + show numaplace at work in the NUMA VM
#   make bench           the benchmarks, in the VM
#   make bench-preload   only the LD_PRELOAD shim on an unmodified program, in the VM
#   make bench-migratepages  numactl's migratepages with and without the shim, in the VM
#   make bench-stall     how long the target stalls during a 64 MiB move, old module and new
#   make install         numaplace.ko into /lib/modules/$(KABI)/updates, depmod, udev rule
#   make install-tools   the CLI, libnumaplace, libnumaplace-preload.so, man pages
#   make install-headers uapi/linux/numaplace{,-genl}.h and numaplace.h into $(PREFIX)/include

CONF    := tools/vm/kernels.conf
KERNELS := $(shell awk '!/^\#/ && NF {print $$1}' $(CONF))
# The kernels that boot and run the suite (role "test"); the others are
# only built.
TEST_KERNELS := $(shell awk '!/^\#/ && NF && $$4 == "test" {print $$1}' $(CONF))
abi_of   = $(shell awk -v k='$(1)' '!/^\#/ && NF && ($$1 == k || $$2 == k) {print $$2}' $(CONF))

BUILD   ?= $(CURDIR)/build
export NP_BUILD := $(BUILD)
KVER    ?= $(firstword $(KERNELS))
# A debug kernel of tools/vm/debug-kernel (make check-debug): KVER=debug-6.1
# or debug-7.3 (debug is debug-6.1), its tree in $(BUILD)/debug-kernel/VER.
DEBUG_VER := $(patsubst debug-%,%,$(filter debug-%,$(if $(filter debug,$(KVER)),debug-6.1,$(KVER))))
DEBUG_DIR := $(BUILD)/debug-kernel/$(DEBUG_VER)
KABI    := $(if $(DEBUG_VER),debug-$(DEBUG_VER),$(or $(call abi_of,$(KVER)),$(KVER)))
# A kernels.conf kernel's headers are where tools/kernel-env says (the
# host's, or unpacked under build/kernels); any other KVER: the host's.
# A kernel of kernels.conf: where tools/kernel-env put or found it. Any
# other (DKMS, a distribution's kernel): its /lib/modules build link.
KDIR    ?= $(if $(DEBUG_VER),$(DEBUG_DIR)/linux-source-$(DEBUG_VER),$(or $(if $(call abi_of,$(KVER)),$(shell NP_BUILD=$(BUILD) tools/kernel-env $(KVER) kdir)),$(if $(wildcard /lib/modules/$(KABI)/build/Makefile),/lib/modules/$(KABI)/build),/usr/src/linux-headers-$(KABI)))
# Headers whose compiler (CONFIG_CC_VERSION_TEXT) the host lacks build in
# the Debian build root that has it (tools/deps.sh makes it): chroot, with
# $(BUILD) bind-mounted at the same path and a /proc (objtool reads its
# stack limit there); both go with the mount namespace. BUILDROOT= forces
# the host.
BUILDROOT ?= $(shell NP_BUILD=$(BUILD) tools/kernel-env --kdir $(KDIR) buildroot 2>/dev/null)
# NP_NO_STATS=y builds the module without its counters (to measure their
# cost), into a directory of its own.
KOBJ     = $(BUILD)/kmod/$(KABI)$(if $(NP_NO_STATS),-nostats)
# Warnings are errors on the kernels we test; DKMS builds for any kernel
# turn that off (dkms.conf: NP_WERROR=).
NP_WERROR ?= y

# Installation (make install, install-tools, install-headers).
DESTDIR ?=
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
UDEVDIR ?= /lib/udev/rules.d
INSTALL_MOD_DIR ?= updates
MODDEST  = $(DESTDIR)/lib/modules/$(KABI)/$(INSTALL_MOD_DIR)

CC      ?= gcc
CFLAGS  ?= -O2 -g
CFLAGS  += -Wall -Wextra -Wno-unused-parameter -Werror -std=gnu11 \
	   -I$(CURDIR)/uapi -I$(CURDIR)/tools/lib -D_GNU_SOURCE
KSFT    := $(BUILD)/ksft

# preload.c is its own library (libnumaplace-preload.so), not part of
# libnumaplace: it defines move_pages() and syscall().
PRELOAD_SRC := tools/lib/preload.c
LIB_SRC  := $(filter-out $(PRELOAD_SRC),$(wildcard tools/lib/*.c))
# The generic netlink client (tools/numaplace/nl.c): a static library of
# its own (build/nl/libnp_nl.a) that the CLI and the netlink selftests link.
NL_SRC   := tools/numaplace/nl.c
NL_LIB   := $(BUILD)/nl/libnp_nl.a
MNL_LIBS := $(shell pkg-config --libs libmnl 2>/dev/null)
CLI_SRC  := $(filter-out $(NL_SRC),$(wildcard tools/numaplace/*.c))
# The selftests are a kselftest collection with its own Makefile
# (selftests/Makefile, lib.mk): built into $(BUILD)/selftests after the
# libraries they link, installed with run_kselftest.sh into
# $(BUILD)/ksft-install, the tree tools/vm/run puts in the guest.
KSFT_INSTALL := $(BUILD)/ksft-install
KSFT_MAKE = $(MAKE) --no-print-directory -C selftests NP_BUILD=$(BUILD) \
	OUTPUT=$(BUILD)/selftests

# The library's own unit tests (tools/lib/tests): kselftest-harness
# programs that need no module, linked with libnumaplace.a and run on the
# build host by make check (tools/vm/check --unit), not in the guests.
UNIT_SRC := $(wildcard tools/lib/tests/*.c)
UNITS    := $(patsubst tools/lib/tests/%.c,$(BUILD)/unit/%,$(UNIT_SRC))

# bench.c is the benchmarks' helpers, not a benchmark: compiled once
# (build/benchlib/bench.o, outside build/bench, whose every file
# tools/vm/run puts in the guest as a benchmark) and linked into each.
BENCH_LIB_SRC := tools/bench/bench.c
BENCH_LIB := $(BUILD)/benchlib/bench.o
BENCH_SRC := $(filter-out $(BENCH_LIB_SRC),$(wildcard tools/bench/*.c))
BENCHES  := $(patsubst tools/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
MOD_SRC  := Kbuild $(wildcard module/*.c module/*.h uapi/linux/*.h)

.PHONY: all module modules modules-all tools selftests deps deb check check-man checkpatch genl-gen genl-check demo bench bench-stats bench-profile bench-watch clean \
	bench-preload bench-migratepages bench-stall install install-tools install-headers check-debug
all: modules tools

# kbuild builds in the source tree; a copy per kernel keeps two kernels'
# objects apart and lets both builds be incremental.
# The selftests' test-only modules (selftests/kmod: the fake DMA channel
# selftests/dma.c loads, the notifier recorder selftests/migrate_gentle.c
# loads; tools/vm/run puts them in the guest) are built next to it, in a
# directory of their own (kbuild builds in one M= tree per module set).
modules: module $(if $(NP_NO_STATS),,$(KOBJ)/np_mn_rec.ko)
module: $(KOBJ)/numaplace.ko
KBUILD_CMD = $(MAKE) -C $(KDIR) M=$(KBUILD_M) NP_WERROR=$(NP_WERROR) NP_NO_STATS=$(NP_NO_STATS) modules
# Build in $(KBUILD_M), on the host or in the kernel's build root.
define np_kbuild
	@test -f $(KDIR)/Makefile || { echo "no headers for $(KVER) in $(KDIR): run 'make deps'" >&2; exit 1; }
	@test -z "$(BUILDROOT)" || test -f $(BUILDROOT)/.np-ready || { echo "$(KVER)'s headers need $$(tools/kernel-env --kdir $(KDIR) gcc), which is in no build root yet ($(BUILDROOT)): run 'make deps'" >&2; exit 1; }
	$(if $(BUILDROOT),@mkdir -p $(BUILDROOT)$(BUILD))
	$(if $(BUILDROOT),unshare -m sh -c 'mount --bind $(BUILD) $(BUILDROOT)$(BUILD) && \
		mount -t proc proc $(BUILDROOT)/proc && \
		exec chroot $(BUILDROOT) env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LC_ALL=C.UTF-8 $(KBUILD_CMD)',$(KBUILD_CMD))
endef
$(KOBJ)/numaplace.ko: KBUILD_M = $(KOBJ)
$(KOBJ)/numaplace.ko: $(MOD_SRC)
	@mkdir -p $(KOBJ)
	cp -a Kbuild module uapi $(KOBJ)/
	$(np_kbuild)
# np_fake_dma.ko only where the kernel has a dmaengine (the debug kernels
# have none: selftests/dma.c skips there).
$(KOBJ)/np_mn_rec.ko: KBUILD_M = $(KOBJ)/fake-dma
$(KOBJ)/np_mn_rec.ko: selftests/kmod/Kbuild selftests/kmod/np_fake_dma.c selftests/kmod/np_mn_rec.c
	@mkdir -p $(KOBJ)/fake-dma
	cp -a selftests/kmod/Kbuild selftests/kmod/np_fake_dma.c selftests/kmod/np_mn_rec.c $(KOBJ)/fake-dma/
	$(np_kbuild)
	rm -f $(KOBJ)/np_fake_dma.ko
	test ! -f $(KOBJ)/fake-dma/np_fake_dma.ko || \
		cp $(KOBJ)/fake-dma/np_fake_dma.ko $(KOBJ)/np_fake_dma.ko
	cp $(KOBJ)/fake-dma/np_mn_rec.ko $@

modules-all:
	@set -e; for k in $(KERNELS); do $(MAKE) --no-print-directory modules KVER=$$k; done

tools: $(BUILD)/lib/libnumaplace.so $(BUILD)/lib/libnumaplace.a \
       $(BUILD)/bin/numaplace $(BUILD)/bin/np-workload $(BUILD)/bin/np-demo-compare \
       $(BUILD)/lib/libnumaplace-preload.so selftests $(UNITS)

# The harness headers are written for -Wall (as the kernel's selftests).
$(BUILD)/unit/%: tools/lib/tests/%.c tools/lib/numaplace.h $(wildcard uapi/linux/*.h) \
		$(KSFT)/kselftest_harness.h $(BUILD)/lib/libnumaplace.a
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Werror -std=gnu11 -D_GNU_SOURCE -Iuapi -Itools/lib -I$(KSFT) \
		-o $@ $< $(BUILD)/lib/libnumaplace.a -lpthread

# Always entered: lib.mk knows what is out of date.
selftests: $(BUILD)/lib/libnumaplace.so $(NL_LIB) $(KSFT)/kselftest_harness.h
	$(KSFT_MAKE) all
	rm -rf $(KSFT_INSTALL)
	$(KSFT_MAKE) install INSTALL_PATH=$(KSFT_INSTALL) >/dev/null

$(BUILD)/lib/%.o: tools/lib/%.c $(wildcard tools/lib/*.h) $(wildcard uapi/linux/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(BUILD)/lib/libnumaplace.so: $(patsubst tools/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRC))
	$(CC) -shared -Wl,-soname,libnumaplace.so.1 -o $@ $^
	ln -sf libnumaplace.so $(BUILD)/lib/libnumaplace.so.1

$(BUILD)/lib/libnumaplace.a: $(patsubst tools/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRC))
	$(AR) rcs $@ $^

# The LD_PRELOAD shim: libnumaplace's objects linked in, only move_pages,
# numa_move_pages and syscall exported (tools/lib/preload.map).
$(BUILD)/lib/libnumaplace-preload.so: $(BUILD)/lib/preload.o tools/lib/preload.map \
		$(patsubst tools/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRC))
	$(CC) -shared -Wl,-soname,libnumaplace-preload.so \
		-Wl,--version-script=tools/lib/preload.map -o $@ \
		$(filter %.o,$^)

# The release, once: the CLI's --version, dkms.conf and debian/changelog
# (debian/rules refuses a package whose versions disagree).
NP_VERSION := $(shell cat $(CURDIR)/VERSION)
$(BUILD)/nl/nl.o: $(NL_SRC) tools/numaplace/nl.h $(wildcard uapi/linux/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itools/numaplace -c -o $@ $<

$(NL_LIB): $(BUILD)/nl/nl.o
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/bin/numaplace: $(CLI_SRC) $(wildcard tools/numaplace/*.h) $(wildcard uapi/linux/*.h) $(BUILD)/lib/libnumaplace.so $(NL_LIB) VERSION
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DNP_VERSION='"$(NP_VERSION)"' -Itools/numaplace -o $@ $(CLI_SRC) \
		$(NL_LIB) -L$(BUILD)/lib -lnumaplace $(MNL_LIBS)

# The demo's workload: memory spread over the nodes.
$(BUILD)/bin/np-workload: tools/demo/workload.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $<

# The demo's side-by-side lines: numaplace against the syscall, one boot.
$(BUILD)/bin/np-demo-compare: tools/demo/compare.c tools/lib/numaplace.h $(BUILD)/lib/libnumaplace.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -L$(BUILD)/lib -lnumaplace

$(KSFT)/kselftest_harness.h:
	@echo "kselftest headers missing: run 'make deps'" >&2; exit 1

$(BENCH_LIB): $(BENCH_LIB_SRC) tools/bench/bench.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# The benchmarks run in the guest (tools/vm/run copies $(BUILD)/bench/*).
$(BUILD)/bench/%: tools/bench/%.c $(wildcard tools/bench/*.h) tools/lib/numaplace.h $(wildcard uapi/linux/*.h) $(BENCH_LIB) $(BUILD)/lib/libnumaplace.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(BENCH_LIB) -L$(BUILD)/lib -lnumaplace -lpthread

# kvquery stands for a program that knows nothing of numaplace: libnuma
# only (bench.o calls nothing of libnumaplace).
$(BUILD)/bench/kvquery: tools/bench/kvquery.c tools/bench/bench.h $(BENCH_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(BENCH_LIB) -lnuma

deps:
	tools/deps.sh

# numaplace-dkms, numaplace-tools and numaplace-selftests (debian/), built
# with dpkg-buildpackage from a copy of the tree (and of $(KSFT), which the
# selftests build with), into $(BUILD)/deb.
DEB_DIR := $(BUILD)/deb
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/numaplace-$(NP_VERSION)
	tar -c --exclude=./build --exclude=./.git . | tar -x -C $(DEB_DIR)/numaplace-$(NP_VERSION)
	cp -a $(KSFT) $(DEB_DIR)/numaplace-$(NP_VERSION)/debian/ksft
	cd $(DEB_DIR)/numaplace-$(NP_VERSION) && dpkg-buildpackage -us -uc -b
	@ls $(DEB_DIR)/*.deb

# ---- The debug kernels (make check-debug) --------------------------------
# tools/vm/debug-kernel VER builds each once into $(BUILD)/debug-kernel/VER
# (rebuilt when tools/vm/debug*.config or the source version changes);
# KVER=debug-VER builds the module against that tree, into
# $(BUILD)/kmod/debug-VER, again whenever the tree is rebuilt (its stamp).
ifneq ($(DEBUG_VER),)
$(KOBJ)/numaplace.ko $(KOBJ)/np_mn_rec.ko: $(wildcard $(DEBUG_DIR)/.stamp)
endif
# Not part of .ci/run (hours on 2 cores): the whole suite, a 600 s soak
# and a 300 s fuzz in each debug kernel's guest; any kernel report fails.
# CHECK_DEBUG_KERNELS picks the debug kernels (Debian linux-source versions).
CHECK_DEBUG_KERNELS ?= 6.1 7.3
CHECK_DEBUG_SOAK ?= 600
CHECK_DEBUG_FUZZ ?= 300
check-debug: deps
	@set -e; for v in $(CHECK_DEBUG_KERNELS); do \
		tools/vm/debug-kernel $$v; \
		$(MAKE) --no-print-directory modules KVER=debug-$$v; \
	done
	$(MAKE) --no-print-directory tools
	NP_SOAK_SECONDS=$(CHECK_DEBUG_SOAK) NP_FUZZ_SECONDS=$(CHECK_DEBUG_FUZZ) \
		tools/vm/check $(addprefix debug-,$(CHECK_DEBUG_KERNELS))

# ---- Generic netlink from its spec ----------------------------------------
# Documentation/netlink/specs/numaplace.yaml is the source of the uapi
# enums (uapi/linux/numaplace-genl.h) and of the module's policy and ops
# tables (module/genl-gen.{c,h}), written by the kernel's ynl-gen-c.py
# (tools/deps.sh puts linux-source-6.12's into build/ynl). The generated
# files are committed, as the kernel's are: building needs no Python
# (DKMS), and genl-check, part of make check, regenerates them into
# build/ and fails when they differ. The generator reads its JSON schema
# next to the spec's directory: the spec is copied into build/ynl's tree.
YNL       := $(BUILD)/ynl
GENL_SPEC := Documentation/netlink/specs/numaplace.yaml
GENL_OUT  := uapi/linux/numaplace-genl.h module/genl-gen.h module/genl-gen.c
# $(1): the directory the generated files go under.
define np_genl_gen
	@test -f $(YNL)/tools/net/ynl/ynl-gen-c.py || { echo "no ynl-gen-c.py in $(YNL): run 'make deps'" >&2; exit 1; }
	@mkdir -p $(1)/uapi/linux $(1)/module
	cp $(GENL_SPEC) $(YNL)/Documentation/netlink/specs/numaplace.yaml
	cd $(YNL) && python3 tools/net/ynl/ynl-gen-c.py --mode uapi --header \
		--spec Documentation/netlink/specs/numaplace.yaml -o $(1)/uapi/linux/numaplace-genl.h
	cd $(YNL) && python3 tools/net/ynl/ynl-gen-c.py --mode kernel --header \
		--spec Documentation/netlink/specs/numaplace.yaml -o $(1)/module/genl-gen.h
	cd $(YNL) && python3 tools/net/ynl/ynl-gen-c.py --mode kernel --source \
		--spec Documentation/netlink/specs/numaplace.yaml -o $(1)/module/genl-gen.c
endef
genl-gen:
	$(call np_genl_gen,$(CURDIR))
GENL_CHECK := $(BUILD)/genl-check
genl-check:
	@rm -rf $(GENL_CHECK)
	$(call np_genl_gen,$(GENL_CHECK))
	@for f in $(GENL_OUT); do \
		diff -u $$f $(GENL_CHECK)/$$f || { \
		echo "genl-check: $$f is not what $(GENL_SPEC) generates: run 'make genl-gen' and commit it" >&2; \
		exit 1; }; done
	@echo "genl-check: $(GENL_OUT) match $(GENL_SPEC)"

# Kernel coding style for the module and the ABI (checkpatch.pl comes from
# linux-source, see tools/deps.sh). The compat header compares kernel
# versions on purpose.
checkpatch:
	perl $(BUILD)/checkpatch/checkpatch.pl --no-tree --terse -f \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON \
		$(wildcard module/*.c module/*.h) $(wildcard uapi/linux/*.h) \
		$(wildcard selftests/kmod/*.c)

# The README's test command: set-up included, so it works on a fresh machine.
# Besides the NUMA guest of each test kernel, a guest with one node on
# CHECK_ONE_NODE's kernels: there every test passes or skips.
CHECK_ONE_NODE ?= 6.12
check: deps
	$(MAKE) --no-print-directory genl-check
	$(MAKE) --no-print-directory modules-all tools check-man deb
	tools/vm/check --unit $(BUILD)/unit --deb $(DEB_DIR) $(TEST_KERNELS) \
		$(addsuffix /1node,$(CHECK_ONE_NODE))

# numaplace(1) against each command's --help (on the host: --help needs no
# module): every option in both, or make check fails before booting a VM.
check-man: $(BUILD)/bin/numaplace
	LD_LIBRARY_PATH=$(BUILD)/lib tools/numaplace/check-man.sh \
		$(BUILD)/bin/numaplace Documentation/man/numaplace.1

# Every kernel is benchmarked even when one fails, and in one guest boot
# every benchmark runs even when one fails; the status says if any did.
BENCH_RUN := rc=0; for b in query migrate calls preload; do \
	/usr/libexec/numaplace/bench/$$b || rc=1; done; exit $$rc
# The shim goes where an installed system has it (tools/vm/run now puts it
# there by itself too; kept for an older run script).
PRELOAD_ADD := --add $(BUILD)/lib/libnumaplace-preload.so:/usr/lib/libnumaplace-preload.so
bench: modules-all tools $(BENCHES)
	@rc=0; for k in $(TEST_KERNELS); do \
		echo "=== bench: kernel $$k"; \
		NP_BUILD=$(BUILD) tools/vm/run --kernel $$k --timeout 1800 $(PRELOAD_ADD) -- \
			/bin/sh -c '$(BENCH_RUN)' || rc=1; \
	done; exit $$rc

# The preload benchmark alone: kvquery with and without the shim, A B B A.
bench-preload: modules-all tools $(BUILD)/bench/kvquery $(BUILD)/bench/preload
	@rc=0; for k in $(TEST_KERNELS); do \
		echo "=== bench-preload: kernel $$k"; \
		NP_BUILD=$(BUILD) tools/vm/run --kernel $$k --timeout 1800 $(PRELOAD_ADD) -- \
			/usr/libexec/numaplace/bench/preload || rc=1; \
	done; exit $$rc

# numactl's unmodified migratepages, 256 MiB, with and without the shim.
MIGRATEPAGES ?= /usr/bin/migratepages
bench-migratepages: modules-all tools $(BUILD)/bench/migratepages
	@rc=0; for k in $(TEST_KERNELS); do \
		echo "=== bench-migratepages: kernel $$k"; \
		NP_BUILD=$(BUILD) tools/vm/run --kernel $$k --timeout 1800 $(PRELOAD_ADD) \
			--add $(MIGRATEPAGES):/usr/bin/migratepages -- \
			/usr/libexec/numaplace/bench/migratepages || rc=1; \
	done; exit $$rc

# What the counters cost: the benchmarks with and without them, one boot,
# in deterministic time (--accel icount: a guest nanosecond per guest
# instruction), which resolves differences far below TCG's wall-clock noise.
bench-stats: modules-all tools $(BENCHES)
	@rc=0; for k in $(TEST_KERNELS); do \
		$(MAKE) --no-print-directory modules KVER=$$k NP_NO_STATS=y >/dev/null || exit 1; \
		abi=$$(awk -v k=$$k '$$1 == k {print $$2}' $(CONF)); \
		echo "=== bench-stats: kernel $$k"; \
		tools/vm/run --kernel $$k --timeout 3600 --accel icount \
			--add $(BUILD)/kmod/$$abi-nostats/numaplace.ko:/root/nostats.ko \
			--add tools/bench/stats-cost.sh:/root/stats-cost.sh \
			-- /root/stats-cost.sh /root/nostats.ko || rc=1; \
	done; exit $$rc

# What 100 idle placement watches cost the benchmarks, in deterministic time.
bench-watch: modules-all tools $(BENCHES)
	@rc=0; for k in $(TEST_KERNELS); do \
		echo "=== bench-watch: kernel $$k"; \
		tools/vm/run --kernel $$k --timeout 3600 --accel icount \
			--add tools/bench/watch-cost.sh:/root/watch-cost.sh \
			-- /root/watch-cost.sh || rc=1; \
	done; exit $$rc

# Where migration time goes, per engine and phase (the module's counters
# around one run of each engine alone), in deterministic time.
bench-profile: modules-all tools $(BENCHES)
	@rc=0; for k in $(TEST_KERNELS); do \
		echo "=== bench-profile: kernel $$k"; \
		tools/vm/run --kernel $$k --timeout 3600 --accel icount \
			--add tools/bench/profile.sh:/root/profile.sh \
			-- /root/profile.sh $(ENGINES) || rc=1; \
	done; exit $$rc

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
bench-stall: modules-all tools $(BUILD)/bench/stall
	@rc=0; for k in $(TEST_KERNELS); do for c in $(STALL_CPU_MODELS); do \
		old=$(STALL_OLD_KMOD)/$$k/numaplace.ko; \
		echo "=== bench-stall: kernel $$k, --accel $(STALL_ACCEL), --cpu-model $$c"; \
		if [ -f $$old ]; then add="--add $$old:/root/old.ko"; arg=/root/old.ko; \
		else echo "bench-stall: no $$old: the current module only"; add=; arg=none; fi; \
		tools/vm/run --kernel $$k --timeout 3600 --accel $(STALL_ACCEL) \
			--cpu-model $$c $(STALL_VM_ARGS) $$add \
			--add tools/bench/stall.sh:/root/stall.sh \
			-- /root/stall.sh $$arg $(STALL_ARGS) || rc=1; \
	done; done; exit $$rc

# The module only (tools and headers have their own targets) and its udev
# rule, then depmod. Into a DESTDIR (a package being built) depmod is left
# to the package's installation: its partial modules.dep would replace
# the system's.
install: module
	install -D -m 0644 $(KOBJ)/numaplace.ko $(MODDEST)/numaplace.ko
	install -D -m 0644 packaging/60-numaplace.rules \
		$(DESTDIR)$(UDEVDIR)/60-numaplace.rules
	@if [ -n "$(DESTDIR)" ]; then \
		echo "install: into DESTDIR: run 'depmod -a $(KABI)' where it is installed"; \
	else echo "depmod -a $(KABI)"; depmod -a $(KABI); fi

# The CLI, libnumaplace (.so and .a), the LD_PRELOAD shim, man pages
# (not the selftests: no kselftest headers needed).
install-tools: $(BUILD)/bin/numaplace $(BUILD)/lib/libnumaplace.so \
	       $(BUILD)/lib/libnumaplace.a $(BUILD)/lib/libnumaplace-preload.so
	install -D -m 0755 $(BUILD)/bin/numaplace $(DESTDIR)$(BINDIR)/numaplace
	install -D -m 0755 $(BUILD)/lib/libnumaplace.so \
		$(DESTDIR)$(LIBDIR)/libnumaplace.so.1
	ln -sf libnumaplace.so.1 $(DESTDIR)$(LIBDIR)/libnumaplace.so
	install -D -m 0644 $(BUILD)/lib/libnumaplace.a \
		$(DESTDIR)$(LIBDIR)/libnumaplace.a
	install -D -m 0755 $(BUILD)/lib/libnumaplace-preload.so \
		$(DESTDIR)$(LIBDIR)/libnumaplace-preload.so
	install -D -m 0644 Documentation/man/numaplace.1 \
		$(DESTDIR)$(MANDIR)/man1/numaplace.1
	install -D -m 0644 Documentation/man/numaplace.4 \
		$(DESTDIR)$(MANDIR)/man4/numaplace.4
	$(if $(DESTDIR),,ldconfig)

install-headers:
	install -D -m 0644 uapi/linux/numaplace.h \
		$(DESTDIR)$(INCDIR)/linux/numaplace.h
	install -D -m 0644 uapi/linux/numaplace-genl.h \
		$(DESTDIR)$(INCDIR)/linux/numaplace-genl.h
	install -D -m 0644 tools/lib/numaplace.h \
		$(DESTDIR)$(INCDIR)/numaplace.h

demo: deps
	$(MAKE) modules-all tools
	tools/vm/run --kernel $(lastword $(TEST_KERNELS)) -- /usr/share/numaplace/demo.sh

clean:
	rm -rf $(BUILD)
