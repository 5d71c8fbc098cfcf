# SPDX-License-Identifier: GPL-2.0
#
# numaplace.ko and the selftests' test modules, built with kbuild for one
# kernel (KVER) or for every kernel of tools/vm/kernels.conf; make install.
# What the numaplace-dkms package's tree builds with (dkms.conf: make
# module); debian/rules copies the top Makefile and all of mk/ there, as
# the top Makefile includes every mk/*.mk.

KVER    ?= $(firstword $(KERNELS))
# A debug kernel of tools/vm/debug-kernel (make check-debug): KVER=debug-6.1
# or debug-7.3 (debug is debug-6.1), its tree in $(BUILD)/debug-kernel/VER.
DEBUG_VER := $(patsubst debug-%,%,$(filter debug-%,$(if $(filter debug,$(KVER)),debug-6.1,$(KVER))))
DEBUG_DIR := $(BUILD)/debug-kernel/$(DEBUG_VER)
KABI    := $(if $(DEBUG_VER),debug-$(DEBUG_VER),$(or $(call abi_of,$(KVER)),$(KVER)))
# A kernel of kernels.conf: where scripts/kernel-env put or found it (the
# host's headers, or unpacked under build/kernels). Any other (DKMS, a
# distribution's kernel): its /lib/modules build link.
KDIR    ?= $(if $(DEBUG_VER),$(DEBUG_DIR)/linux-source-$(DEBUG_VER),$(or $(if $(call abi_of,$(KVER)),$(shell NP_BUILD=$(BUILD) scripts/kernel-env $(KVER) kdir)),$(if $(wildcard /lib/modules/$(KABI)/build/Makefile),/lib/modules/$(KABI)/build),/usr/src/linux-headers-$(KABI)))
# Headers whose compiler (CONFIG_CC_VERSION_TEXT) the host lacks build in
# the Debian build root that has it (scripts/deps.sh makes it): chroot, with
# $(BUILD) bind-mounted at the same path and a /proc (objtool reads its
# stack limit there); both go with the mount namespace. BUILDROOT= forces
# the host.
BUILDROOT ?= $(shell NP_BUILD=$(BUILD) scripts/kernel-env --kdir $(KDIR) buildroot 2>/dev/null)
# NP_NO_STATS=y builds the module without its counters (to measure their
# cost), NP_COPY_LIMIT=y with the benchmark's copy ceiling (debugfs
# copy_limit, module/copy_limit.c: make bench), each into a directory of
# its own; the production module (DKMS, make install) has neither.
KOBJ     = $(BUILD)/kmod/$(KABI)$(if $(NP_NO_STATS),-nostats)$(if $(NP_COPY_LIMIT),-probe)
# Warnings are errors on the kernels we test; DKMS builds for any kernel
# turn that off (dkms.conf: NP_WERROR=).
NP_WERROR ?= y
INSTALL_MOD_DIR ?= updates
MODDEST  = $(DESTDIR)/lib/modules/$(KABI)/$(INSTALL_MOD_DIR)
MOD_SRC  := Kbuild $(wildcard module/*.c module/*.h uapi/linux/*.h)

NP_TARGETS += module modules modules-all install

# kbuild builds in the source tree; a copy per kernel keeps two kernels'
# objects apart and lets both builds be incremental.
# The selftests' test-only modules (selftests/kmod: the fake DMA channel
# selftests/dma.c loads, the notifier recorder selftests/migrate_gentle.c
# loads; tools/vm/run puts them in the guest) are built next to it, in a
# directory of their own (kbuild builds in one M= tree per module set).
## modules: numaplace.ko and the selftests' test modules for KVER (ABI or short name of tools/vm/kernels.conf: 6.1, 6.12, 7.3, debug-7.3, ...)
modules: module $(if $(NP_NO_STATS)$(NP_COPY_LIMIT),,$(KOBJ)/np_mn_rec.ko)
## module: numaplace.ko alone, for KVER (what DKMS and make install build; the package's tree has no selftests/)
module: $(KOBJ)/numaplace.ko
KBUILD_CMD = $(MAKE) -C $(KDIR) M=$(KBUILD_M) NP_WERROR=$(NP_WERROR) NP_NO_STATS=$(NP_NO_STATS) NP_COPY_LIMIT=$(NP_COPY_LIMIT) modules
# Build in $(KBUILD_M), on the host or in the kernel's build root.
define np_kbuild
	@test -f $(KDIR)/Makefile || { echo "no headers for $(KVER) in $(KDIR): run 'make deps'" >&2; exit 1; }
	@test -z "$(BUILDROOT)" || test -f $(BUILDROOT)/.np-ready || { echo "$(KVER)'s headers need $$(scripts/kernel-env --kdir $(KDIR) gcc), which is in no build root yet ($(BUILDROOT)): run 'make deps'" >&2; exit 1; }
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

## modules-all: make modules for every kernel of tools/vm/kernels.conf (stops at the first that fails)
modules-all:
	@set -e; for k in $(KERNELS); do $(MAKE) --no-print-directory modules KVER=$$k; done

# A debug kernel's tree (tools/vm/debug-kernel VER, make check-debug) is
# rebuilt when tools/vm/debug*.config or the source version changes; the
# module against it then too (the tree's stamp).
ifneq ($(DEBUG_VER),)
$(KOBJ)/numaplace.ko $(KOBJ)/np_mn_rec.ko: $(wildcard $(DEBUG_DIR)/.stamp)
endif

# The module only (tools and headers have their own targets) and its udev
# rule, then depmod. Into a DESTDIR (a package being built) depmod is left
# to the package's installation: its partial modules.dep would replace
# the system's.
## install: numaplace.ko for KVER into /lib/modules/KABI/updates, the udev rule, depmod
install: module
	install -D -m 0644 $(KOBJ)/numaplace.ko $(MODDEST)/numaplace.ko
	install -D -m 0644 packaging/60-numaplace.rules \
		$(DESTDIR)$(UDEVDIR)/60-numaplace.rules
	@if [ -n "$(DESTDIR)" ]; then \
		echo "install: into DESTDIR: run 'depmod -a $(KABI)' where it is installed"; \
	else echo "depmod -a $(KABI)"; depmod -a $(KABI); fi
