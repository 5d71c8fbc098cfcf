# SPDX-License-Identifier: GPL-2.0
#
# numaplace's top Makefile: the settings every part shares, then one
# makefile per concern under mk/. `make help` lists every target, from the
# "## target: what it does" line above each (make check fails when a
# target has none, or one names no target: make help-check).
#
#   mk/kernel.mk    numaplace.ko and the selftests' test modules, for one
#                   kernel (KVER) or every one; make install
#   mk/tools.mk     libnumaplace, the shim, the CLI, the demo's programs,
#                   the selftests and the library's unit tests; their install
#   mk/genl.mk      the generic netlink code, from its YAML spec
#   mk/check.mk     deps, check, check-debug, check-man, checkpatch, demo
#   mk/bench.mk     the benchmarks, in the NUMA VM
#   mk/package.mk   the Debian packages
#
# The first target is the default: make [KVER=...] builds the modules for
# one kernel and the tools.

CONF    := tools/vm/kernels.conf
KERNELS := $(shell awk '!/^\#/ && NF {print $$1}' $(CONF))
# The kernels that boot and run the suite (role "test"); the others are
# only built.
TEST_KERNELS := $(shell awk '!/^\#/ && NF && $$4 == "test" {print $$1}' $(CONF))
abi_of   = $(shell awk -v k='$(1)' '!/^\#/ && NF && ($$1 == k || $$2 == k) {print $$2}' $(CONF))

BUILD   ?= $(CURDIR)/build
export NP_BUILD := $(BUILD)

# The release, once: the CLI's --version, dkms.conf and debian/changelog
# (debian/rules refuses a package whose versions disagree).
NP_VERSION := $(shell cat $(CURDIR)/VERSION)

# Installation (make install, install-tools, install-headers).
DESTDIR ?=
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
UDEVDIR ?= /lib/udev/rules.d
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system

# The kselftest headers, lib.mk and runner (make deps, from linux-source):
# the selftests, the unit tests and the package build with them.
KSFT    := $(BUILD)/ksft

# Every target that names no file: each mk/*.mk adds its own, and each
# has its "## " line (help-check).
NP_TARGETS := all help help-check clean

## all: numaplace.ko and the test modules for KVER, and the tools (the default)
all: modules tools

include mk/kernel.mk mk/tools.mk mk/genl.mk mk/check.mk mk/bench.mk mk/package.mk

.PHONY: $(NP_TARGETS)

# The "## target: text" lines, in the makefiles' order.
NP_MAKEFILES := $(filter-out %.conf,$(MAKEFILE_LIST))
NP_HELP_AWK := 'FNR == 1 { f = FILENAME } \
	/^\#\# [a-z-]+:/ { if (f) print f ":"; f = ""; t = $$2; sub(/:$$/, "", t); \
	$$1 = $$2 = ""; sub(/^ +/, ""); printf "  %-20s %s\n", t, $$0 }'

## help: every target of the makefiles, with what it does
help:
	@echo "make TARGET [KVER=...] [BUILD=...]; the targets, from $(NP_MAKEFILES):"
	@awk $(NP_HELP_AWK) $(NP_MAKEFILES)

# Documented and phony must be the same set.
NP_DOCUMENTED = $(shell sed -n 's/^\#\# \([a-z-]*\):.*/\1/p' $(NP_MAKEFILES))
## help-check: fail if a target has no "## " line in make help, or a line no target
help-check:
	@bad="$(filter-out $(NP_DOCUMENTED),$(NP_TARGETS))"; \
	test -z "$$bad" || { echo "help-check: no '## TARGET:' line for: $$bad" >&2; exit 1; }
	@bad="$(filter-out $(NP_TARGETS),$(NP_DOCUMENTED))"; \
	test -z "$$bad" || { echo "help-check: '## ' lines for no target of NP_TARGETS: $$bad" >&2; exit 1; }
	@echo "help-check: $(words $(NP_TARGETS)) targets, each in make help"

## clean: remove build/ (the fetched kernels and build roots too: make deps again after it)
clean:
	rm -rf $(BUILD)
