# SPDX-License-Identifier: GPL-2.0
#
# numaplace-dkms, numaplace-tools and numaplace-selftests (debian/), built
# with dpkg-buildpackage from a copy of the tree (and of $(KSFT), which the
# selftests build with), into $(BUILD)/deb.

DEB_DIR := $(BUILD)/deb

NP_TARGETS += deb

## deb: the numaplace-dkms, numaplace-tools and numaplace-selftests packages, into build/deb
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/numaplace-$(NP_VERSION)
	tar -c --exclude=./build --exclude=./.git . | tar -x -C $(DEB_DIR)/numaplace-$(NP_VERSION)
	cp -a $(KSFT) $(DEB_DIR)/numaplace-$(NP_VERSION)/debian/ksft
	cd $(DEB_DIR)/numaplace-$(NP_VERSION) && dpkg-buildpackage -us -uc -b
	@ls $(DEB_DIR)/*.deb
