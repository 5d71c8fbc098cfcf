# SPDX-License-Identifier: GPL-2.0
#
# Set-up and checks: make deps, the README's two commands (make demo, make
# check), the debug kernels' run (make check-debug), the man page against
# the CLI, checkpatch.

NP_TARGETS += deps check check-debug check-man checkpatch graph-check demo

## deps: install the build and test dependencies (root; apt, fetched kernels, build roots)
deps:
	scripts/deps.sh

# The README's test command: set-up included, so it works on a fresh machine.
# Besides the NUMA guest of each test kernel, a guest with one node on
# CHECK_ONE_NODE's kernels: there every test passes or skips.
CHECK_ONE_NODE ?= 6.12
## check: deps, build for every kernel, then the packages, the unit tests and the selftests in the VM on each test kernel
check: deps
	$(MAKE) --no-print-directory genl-check help-check graph-check
	$(MAKE) --no-print-directory modules-all tools benches check-man engine-check deb
	tools/vm/check --unit $(BUILD)/unit --deb $(DEB_DIR) $(TEST_KERNELS) \
		$(addsuffix /1node,$(CHECK_ONE_NODE))

# Not part of .ci/run (hours on 2 cores): the whole suite, a 600 s soak
# and a 300 s fuzz in each debug kernel's guest; any kernel report fails.
# tools/vm/debug-kernel VER builds each kernel once into
# $(BUILD)/debug-kernel/VER; KVER=debug-VER builds the module against it.
# CHECK_DEBUG_KERNELS picks the debug kernels (Debian linux-source versions).
CHECK_DEBUG_KERNELS ?= 6.1 7.3
CHECK_DEBUG_SOAK ?= 600
CHECK_DEBUG_FUZZ ?= 300
## check-debug: the suite and a 10-minute soak on KASAN/lockdep/DEBUG_VM kernels built from linux-source (CHECK_DEBUG_KERNELS="6.1 7.3")
check-debug: deps
	@set -e; for v in $(CHECK_DEBUG_KERNELS); do \
		tools/vm/debug-kernel $$v; \
		$(MAKE) --no-print-directory modules KVER=debug-$$v; \
	done
	$(MAKE) --no-print-directory tools
	NP_SOAK_SECONDS=$(CHECK_DEBUG_SOAK) NP_FUZZ_SECONDS=$(CHECK_DEBUG_FUZZ) \
		tools/vm/check $(addprefix debug-,$(CHECK_DEBUG_KERNELS))

# numaplace(1) against each command's --help (on the host: --help needs no
# module): every option in both, or make check fails before booting a VM.
## check-man: numaplace(1) against every command's --help
check-man: $(BUILD)/bin/numaplace
	LD_LIBRARY_PATH=$(BUILD)/lib tools/numaplace/check-man.sh \
		$(BUILD)/bin/numaplace Documentation/man/numaplace.1

# The module's files call each other in one direction (no circle), as
# Documentation/design.md draws it.
## graph-check: fail if module/'s files call each other in a circle, or design.md's list of who calls whom is stale
graph-check:
	scripts/module-graph --check Documentation/design.md

# Kernel coding style for the module and the ABI (checkpatch.pl comes from
# linux-source, see scripts/deps.sh). The compat header compares kernel
# versions on purpose.
## checkpatch: kernel coding style of module/, uapi/ and the test modules
checkpatch:
	perl $(BUILD)/checkpatch/checkpatch.pl --no-tree --terse -f \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON \
		$(wildcard module/*.c module/*.h) $(wildcard uapi/linux/*.h) \
		$(wildcard selftests/kmod/*.c)

## demo: deps, build, then boot the NUMA VM on the newest test kernel and show numaplace at work
demo: deps
	$(MAKE) modules-all tools
	tools/vm/run --kernel $(lastword $(TEST_KERNELS)) -- /usr/share/numaplace/demo.sh
