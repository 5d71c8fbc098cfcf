// SPDX-License-Identifier: GPL-2.0
/*
 * The client side of the handshake: libnumaplace against modules newer
 * than itself, or lacking a command. The module is the real one; this
 * executable's ioctl() interposes the library's and rewrites INFO's answer
 * to play the other module. A newer module may report another abi_version,
 * feature bits and commands this client does not know: the client must
 * still use what it knows (Documentation/abi.md, "The handshake").
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "numaplace.h"
#include "np_test.h"
#include "kselftest_harness.h"

enum np_sim {
	NP_SIM_REAL,		/* INFO as the module answers it */
	NP_SIM_NEWER,		/* another abi_version, unknown bits set */
	NP_SIM_NO_QUERY,	/* a module without NUMAPLACE_IOC_QUERY */
};

static enum np_sim np_sim;
static unsigned long np_nr_query_calls;

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int fd, unsigned long req, ...);
	struct numaplace_info *info;
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	if (req == NUMAPLACE_IOC_QUERY)
		__atomic_add_fetch(&np_nr_query_calls, 1, __ATOMIC_RELAXED);
	ret = real(fd, req, arg);
	if (ret || req != NUMAPLACE_IOC_INFO)
		return ret;
	info = arg;
	switch (np_sim) {
	case NP_SIM_REAL:
		break;
	case NP_SIM_NEWER:
		info->abi_version = NUMAPLACE_ABI_VERSION + 1;
		info->features |= 1ULL << 63;
		info->ioctls |= 1ULL << 63;
		break;
	case NP_SIM_NO_QUERY:
		info->ioctls &= ~(1ULL << NUMAPLACE_CMD_QUERY);
		break;
	}
	return 0;
}

#define NP_ABI_PAGES 64

FIXTURE(abi_client)
{
	long page;
	char *buf;
	void *pages[NP_ABI_PAGES];
	int want[NP_ABI_PAGES];
	int got[NP_ABI_PAGES];
};

FIXTURE_VARIANT(abi_client)
{
	enum np_sim sim;
	bool uses_device;
};

FIXTURE_VARIANT_ADD(abi_client, real)
{
	.sim = NP_SIM_REAL,
	.uses_device = true,
};

FIXTURE_VARIANT_ADD(abi_client, newer_module)
{
	.sim = NP_SIM_NEWER,
	.uses_device = true,
};

FIXTURE_VARIANT_ADD(abi_client, no_query_command)
{
	.sim = NP_SIM_NO_QUERY,
	.uses_device = false,
};

FIXTURE_SETUP(abi_client)
{
	int fd = np_open();

	if (fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(fd, 0);
	close(fd);
	self->page = sysconf(_SC_PAGESIZE);
	self->buf = mmap(NULL, NP_ABI_PAGES * self->page,
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	/* Touched, untouched and unmapped pages: answers of every sign. */
	for (int i = 0; i < NP_ABI_PAGES; i++) {
		self->pages[i] = self->buf + i * self->page;
		if (i % 3)
			self->buf[i * self->page] = 1;
	}
	ASSERT_EQ(0, munmap(self->buf + 5 * self->page, self->page));
	/* Before the first library call: the library probes INFO once. */
	np_sim = variant->sim;
	np_nr_query_calls = 0;
}

FIXTURE_TEARDOWN(abi_client)
{
	if (self->buf)
		munmap(self->buf, NP_ABI_PAGES * self->page);
}

NP_TEST_F(abi_client, supports_and_available)
{
	struct numaplace_info info;

	NP_SKIPPED();

	ASSERT_EQ(0, numaplace_info(&info));
	EXPECT_EQ(1, numaplace_available());
	EXPECT_EQ(1, numaplace_supports(&info, 1ULL << NUMAPLACE_CMD_INFO, 0));
	EXPECT_EQ(variant->uses_device,
		  numaplace_supports(&info, 1ULL << NUMAPLACE_CMD_QUERY,
				     NUMAPLACE_FEAT_QUERY));
	/* A command or feature this module lacks is refused. */
	info.ioctls &= ~(1ULL << NUMAPLACE_CMD_MIGRATE);
	EXPECT_EQ(0, numaplace_supports(&info, 1ULL << NUMAPLACE_CMD_MIGRATE, 0));
	info.features &= ~NUMAPLACE_FEAT_WATCH;
	EXPECT_EQ(0, numaplace_supports(&info, 0, NUMAPLACE_FEAT_WATCH));
	/* A struct shorter than the first published one: no module wrote it. */
	info.size = NUMAPLACE_INFO_SIZE_VER0 - 8;
	EXPECT_EQ(0, numaplace_supports(&info, 0, 0));
}

/* The drop-in answers as the syscall, through the device when it can. */
NP_TEST_F(abi_client, move_pages_query)
{
	NP_SKIPPED();
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, NP_ABI_PAGES, self->pages,
			     NULL, self->want, 0));
	ASSERT_EQ(0, numaplace_move_pages(0, NP_ABI_PAGES, self->pages, NULL,
					  self->got, 0));
	for (int i = 0; i < NP_ABI_PAGES; i++) {
		EXPECT_EQ(self->want[i], self->got[i]) {
			TH_LOG("page %d", i);
		}
	}
	if (variant->uses_device) {
		EXPECT_LT(0, np_nr_query_calls);
	} else {
		EXPECT_EQ(0, np_nr_query_calls);
	}
}

NP_HARNESS_MAIN
