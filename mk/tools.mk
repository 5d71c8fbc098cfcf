# SPDX-License-Identifier: GPL-2.0
#
# User space: libnumaplace (.so, .a), the LD_PRELOAD shim, the netlink
# client, the numaplace CLI, the demo's programs, the kselftest collection
# (selftests/Makefile) and the library's unit tests; make install-tools and
# install-headers.

CC      ?= gcc
CFLAGS  ?= -O2 -g
CFLAGS  += -Wall -Wextra -Wno-unused-parameter -Werror -std=gnu11 \
	   -I$(CURDIR)/uapi -I$(CURDIR)/tools/lib -D_GNU_SOURCE

# preload.c is its own library (libnumaplace-preload.so), not part of
# libnumaplace: it defines move_pages() and syscall().
PRELOAD_SRC := tools/lib/preload.c
LIB_SRC  := $(filter-out $(PRELOAD_SRC),$(wildcard tools/lib/*.c))
LIB_OBJ  := $(patsubst tools/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRC))
# The generic netlink client (tools/lib/nl: on libmnl, which libnumaplace
# does not link): a static library of its own (build/nl/libnp_nl.a) that
# the CLI and the netlink selftests link.
NL_SRC   := tools/lib/nl/nl.c
NL_LIB   := $(BUILD)/nl/libnp_nl.a
MNL_LIBS := $(shell pkg-config --libs libmnl 2>/dev/null)
CLI_SRC  := $(wildcard tools/numaplace/*.c)
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

NP_TARGETS += tools selftests install-tools install-headers

## tools: libnumaplace, the shim, the numaplace CLI, the demo's programs, the selftests and the unit tests
tools: $(BUILD)/lib/libnumaplace.so $(BUILD)/lib/libnumaplace.a \
       $(BUILD)/bin/numaplace $(BUILD)/bin/np-workload $(BUILD)/bin/np-demo-compare \
       $(BUILD)/lib/libnumaplace-preload.so selftests $(UNITS)

comma := ,
# tier_scan stands in for the kernel: the library's calls of the module
# and of sysfs go to the test's __wrap_ functions.
UNIT_WRAP_tier_scan := numaplace_info numaplace_supports numaplace_move_pages \
	np_tier_read_cpu_nodes \
	numaplace_access_runs np_tier_read_node_masks np_tier_read_node_mem \
	np_tier_read_task_nodes

# The harness headers are written for -Wall (as the kernel's selftests).
$(BUILD)/unit/%: tools/lib/tests/%.c tools/lib/numaplace.h $(wildcard uapi/linux/*.h) \
		$(wildcard tools/lib/*.h) $(KSFT)/kselftest_harness.h $(BUILD)/lib/libnumaplace.a
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Werror -std=gnu11 -D_GNU_SOURCE -Iuapi -Itools/lib -I$(KSFT) \
		-o $@ $< $(BUILD)/lib/libnumaplace.a -lpthread \
		$(addprefix -Wl$(comma)--wrap=,$(UNIT_WRAP_$*))

# Always entered: lib.mk knows what is out of date.
## selftests: the kselftest collection (selftests/Makefile), installed into build/ksft-install
selftests: $(BUILD)/lib/libnumaplace.so $(NL_LIB) $(KSFT)/kselftest_harness.h
	$(KSFT_MAKE) all
	rm -rf $(KSFT_INSTALL)
	$(KSFT_MAKE) install INSTALL_PATH=$(KSFT_INSTALL) >/dev/null

$(BUILD)/lib/%.o: tools/lib/%.c $(wildcard tools/lib/*.h) $(wildcard uapi/linux/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(BUILD)/lib/libnumaplace.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libnumaplace.so.1 -o $@ $^
	ln -sf libnumaplace.so $(BUILD)/lib/libnumaplace.so.1

$(BUILD)/lib/libnumaplace.a: $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

# The LD_PRELOAD shim: libnumaplace's objects linked in, only move_pages,
# numa_move_pages and syscall exported (tools/lib/preload.map).
$(BUILD)/lib/libnumaplace-preload.so: $(BUILD)/lib/preload.o tools/lib/preload.map $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libnumaplace-preload.so \
		-Wl,--version-script=tools/lib/preload.map -o $@ \
		$(filter %.o,$^)

$(BUILD)/nl/nl.o: $(NL_SRC) tools/lib/nl/nl.h $(wildcard uapi/linux/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itools/lib/nl -c -o $@ $<

$(NL_LIB): $(BUILD)/nl/nl.o
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/bin/numaplace: $(CLI_SRC) $(wildcard tools/numaplace/*.h) tools/lib/nl/nl.h $(wildcard uapi/linux/*.h) $(BUILD)/lib/libnumaplace.so $(NL_LIB) VERSION
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DNP_VERSION='"$(NP_VERSION)"' -Itools/numaplace -Itools/lib/nl -o $@ $(CLI_SRC) \
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

# The CLI, libnumaplace (.so and .a), the LD_PRELOAD shim, man pages,
# the tiering daemon's systemd unit with BINDIR's numaplace in it (not the
# selftests: no kselftest headers needed).
## install-tools: the CLI, libnumaplace, libnumaplace-preload.so, the man pages and numaplace-tier@.service into PREFIX (/usr/local)
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
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/bin/numaplace|$(BINDIR)/numaplace|' \
		packaging/numaplace-tier@.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/numaplace-tier@.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/numaplace-tier@.service
	$(if $(DESTDIR),,ldconfig)

## install-headers: uapi/linux/numaplace{,-genl}.h and numaplace.h into PREFIX/include
install-headers:
	install -D -m 0644 uapi/linux/numaplace.h \
		$(DESTDIR)$(INCDIR)/linux/numaplace.h
	install -D -m 0644 uapi/linux/numaplace-genl.h \
		$(DESTDIR)$(INCDIR)/linux/numaplace-genl.h
	install -D -m 0644 tools/lib/numaplace.h \
		$(DESTDIR)$(INCDIR)/numaplace.h
