# SPDX-License-Identifier: GPL-2.0
#
# Generic netlink from its spec. Documentation/netlink/specs/numaplace.yaml
# is the source of the uapi enums (uapi/linux/numaplace-genl.h) and of the
# module's policy and ops tables (module/genl_gen.{c,h}), written by the
# kernel's ynl-gen-c.py (scripts/deps.sh puts linux-source-6.12's into
# build/ynl). The generated files are committed, as the kernel's are:
# building needs no Python (DKMS), and genl-check, part of make check,
# regenerates them into build/ and fails when they differ. The generator
# reads its JSON schema next to the spec's directory: the spec is copied
# into build/ynl's tree.

YNL       := $(BUILD)/ynl
GENL_SPEC := Documentation/netlink/specs/numaplace.yaml
GENL_OUT  := uapi/linux/numaplace-genl.h module/genl_gen.h module/genl_gen.c
GENL_CHECK := $(BUILD)/genl-check

NP_TARGETS += genl-gen genl-check engine-check

# $(1): the directory the generated files go under.
define np_genl_gen
	@test -f $(YNL)/tools/net/ynl/ynl-gen-c.py || { echo "no ynl-gen-c.py in $(YNL): run 'make deps'" >&2; exit 1; }
	@mkdir -p $(1)/uapi/linux $(1)/module
	cp $(GENL_SPEC) $(YNL)/Documentation/netlink/specs/numaplace.yaml
	cd $(YNL) && python3 tools/net/ynl/ynl-gen-c.py --mode uapi --header \
		--spec Documentation/netlink/specs/numaplace.yaml -o $(1)/uapi/linux/numaplace-genl.h
	cd $(YNL) && python3 tools/net/ynl/ynl-gen-c.py --mode kernel --header \
		--spec Documentation/netlink/specs/numaplace.yaml -o $(1)/module/genl_gen.h
	cd $(YNL) && python3 tools/net/ynl/ynl-gen-c.py --mode kernel --source \
		--spec Documentation/netlink/specs/numaplace.yaml -o $(1)/module/genl_gen.c
endef

## genl-gen: regenerate the netlink code from its spec with ynl-gen-c.py (commit the result)
genl-gen:
	$(call np_genl_gen,$(CURDIR))

## genl-check: fail if the committed generated netlink code is not what its spec generates
genl-check:
	@rm -rf $(GENL_CHECK)
	$(call np_genl_gen,$(GENL_CHECK))
	@for f in $(GENL_OUT); do \
		diff -u $$f $(GENL_CHECK)/$$f || { \
		echo "genl-check: $$f is not what $(GENL_SPEC) generates: run 'make genl-gen' and commit it" >&2; \
		exit 1; }; done
	@echo "genl-check: $(GENL_OUT) match $(GENL_SPEC)"

# The spec's "engine" definition is the one list of the migration engines:
# the uapi's engine bits, flags and features, the CLI's names and
# numaplace(1) must agree with it (tools/numaplace/check-engines.py).
## engine-check: fail if the uapi, the module, the CLI or numaplace(1) names other engines than the spec's list
engine-check: $(BUILD)/bin/numaplace
	LD_LIBRARY_PATH=$(BUILD)/lib tools/numaplace/check-engines.py $(BUILD)/bin/numaplace
