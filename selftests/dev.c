// SPDX-License-Identifier: GPL-2.0
/*
 * The device and the ABI conventions every ioctl follows, proven on
 * NUMAPLACE_IOC_INFO: size versioning, flags, reserved fields, unknown
 * ioctls, bad pointers, and INFO's answers against sysfs.
 */
#include <pwd.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "np_test.h"
#include "kselftest_harness.h"

FIXTURE(dev)
{
	int fd;
	struct numaplace_info info;
};

FIXTURE_SETUP(dev)
{
	self->fd = np_open();
	if (self->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(self->fd, 0);
	memset(&self->info, 0, sizeof(self->info));
	self->info.size = sizeof(self->info);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

NP_TEST_F(dev, is_misc_char_device)
{
	struct stat st;

	NP_SKIPPED();

	ASSERT_EQ(0, stat(NUMAPLACE_DEVICE, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(10, major(st.st_rdev)); /* MISC_MAJOR */
	/* Per-call checks, as move_pages(2): the node itself is open. */
	EXPECT_EQ(0666, st.st_mode & 0777);
}

NP_TEST_F(dev, info_answers)
{
	NP_SKIPPED();
	ASSERT_EQ(0, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, &self->info));
	EXPECT_EQ(sizeof(self->info), self->info.size);
	EXPECT_EQ(NUMAPLACE_ABI_VERSION, self->info.abi_version);
	EXPECT_EQ(sysconf(_SC_PAGESIZE), self->info.page_size);
	EXPECT_TRUE(self->info.ioctls & (1ULL << NUMAPLACE_CMD_INFO));
	EXPECT_EQ(0, self->info.ioctls >> NUMAPLACE_CMD_MAX);
	EXPECT_EQ(0, self->info.reserved0);
}

/* INFO's node masks and nr_node_ids against /sys/devices/system/node. */
NP_TEST_F(dev, info_matches_sysfs)
{
	__u64 online[NUMAPLACE_NODE_WORDS], memory[NUMAPLACE_NODE_WORDS];
	__u64 possible[NUMAPLACE_NODE_WORDS];
	int top;

	NP_SKIPPED();

	ASSERT_EQ(0, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, &self->info));
	top = np_read_nodelist("/sys/devices/system/node/possible", possible);
	ASSERT_GT(top, 0);
	EXPECT_EQ(top, self->info.nr_node_ids);
	ASSERT_GT(np_read_nodelist("/sys/devices/system/node/online", online), 0);
	ASSERT_GT(np_read_nodelist("/sys/devices/system/node/has_memory",
				   memory), 0);
	EXPECT_EQ(0, memcmp(online, self->info.node_online, sizeof(online)));
	EXPECT_EQ(0, memcmp(memory, self->info.node_memory, sizeof(memory)));
}

/* A caller that knows only VER0 gets VER0 back and nothing past it. */
NP_TEST_F(dev, info_ver0_size)
{
	char buf[NUMAPLACE_INFO_SIZE_VER0 + 64];
	struct numaplace_info *info = (void *)buf;

	NP_SKIPPED();

	memset(buf, 0xa5, sizeof(buf));
	memset(buf, 0, NUMAPLACE_INFO_SIZE_VER0);
	info->size = NUMAPLACE_INFO_SIZE_VER0;
	ASSERT_EQ(0, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, info));
	EXPECT_EQ(NUMAPLACE_INFO_SIZE_VER0, info->size);
	EXPECT_EQ(NUMAPLACE_ABI_VERSION, info->abi_version);
	for (size_t i = NUMAPLACE_INFO_SIZE_VER0; i < sizeof(buf); i++)
		ASSERT_EQ((char)0xa5, buf[i]);
}

NP_TEST_F(dev, info_short_size_einval)
{
	static const __u32 sizes[] = { 0, 4, 8, 16,
				       NUMAPLACE_INFO_SIZE_VER0 - 8,
				       NUMAPLACE_INFO_SIZE_VER0 - 1 };

	NP_SKIPPED();

	/* EXPECT_*() with TH_LOG() is two statements: loops need braces. */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		self->info.size = sizes[i];
		EXPECT_EQ(-EINVAL,
			  np_ioctl(self->fd, NUMAPLACE_IOC_INFO, &self->info))
			TH_LOG("size %u", sizes[i]);
	}
}

/*
 * Longer than the module knows: fine when the tail is zero, else E2BIG;
 * larger than a page is no newer version of the struct: E2BIG (clone3).
 */
NP_TEST_F(dev, info_long_size)
{
	size_t len = sizeof(struct numaplace_info) + 1024;
	char *buf = calloc(1, len);
	struct numaplace_info *info = (void *)buf;

	NP_SKIPPED();

	ASSERT_NE(NULL, buf);
	info->size = len;
	ASSERT_EQ(0, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, info));
	/* Only what the module knows is written back, and said so. */
	EXPECT_EQ(sizeof(struct numaplace_info), info->size);
	EXPECT_EQ(NUMAPLACE_ABI_VERSION, info->abi_version);

	memset(buf, 0, len);
	info->size = len;
	buf[len - 1] = 1;
	EXPECT_EQ(-E2BIG, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, info));
	buf[len - 1] = 0;
	buf[sizeof(struct numaplace_info)] = 1;
	EXPECT_EQ(-E2BIG, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, info));
	free(buf);

	buf = calloc(1, 2 * sysconf(_SC_PAGESIZE));
	ASSERT_NE(NULL, buf);
	info = (void *)buf;
	info->size = sysconf(_SC_PAGESIZE) + 8;
	EXPECT_EQ(-E2BIG, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, info));
	info->size = sysconf(_SC_PAGESIZE);
	EXPECT_EQ(0, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, info));
	free(buf);
}

NP_TEST_F(dev, info_unknown_flags_einval)
{
	NP_SKIPPED();
	for (int bit = 0; bit < 32; bit++) {
		self->info.flags = 1U << bit;
		EXPECT_EQ(-EINVAL,
			  np_ioctl(self->fd, NUMAPLACE_IOC_INFO, &self->info))
			TH_LOG("flag bit %d", bit);
	}
}

NP_TEST_F(dev, info_reserved_nonzero_einval)
{
	NP_SKIPPED();
	self->info.reserved0 = 1;
	EXPECT_EQ(-EINVAL, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, &self->info));
	self->info.reserved0 = 0;
	for (size_t i = 0; i < sizeof(self->info.reserved) / 8; i++) {
		self->info.reserved[i] = 1ULL << 63;
		EXPECT_EQ(-EINVAL,
			  np_ioctl(self->fd, NUMAPLACE_IOC_INFO, &self->info))
			TH_LOG("reserved[%zu]", i);
		self->info.reserved[i] = 0;
	}
	EXPECT_EQ(0, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, &self->info));
}

NP_TEST_F(dev, unknown_ioctl_enotty)
{
	const unsigned long cmds[] = {
		_IO(NUMAPLACE_TYPE, NUMAPLACE_CMD_MAX),
		_IO(NUMAPLACE_TYPE, 63),
		_IO(NUMAPLACE_TYPE, 255),
		_IO(NUMAPLACE_TYPE + 1, NUMAPLACE_CMD_INFO),
		/* INFO's number with a size/direction encoded is not INFO. */
		_IOWR(NUMAPLACE_TYPE, NUMAPLACE_CMD_INFO, struct numaplace_info),
		0,
	};

	NP_SKIPPED();

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(-ENOTTY, np_ioctl(self->fd, cmds[i], &self->info))
			TH_LOG("cmd %#lx", cmds[i]);
	}
}

NP_TEST_F(dev, bad_pointers_efault)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *map;
	struct numaplace_info *tail;

	NP_SKIPPED();

	EXPECT_EQ(-EFAULT, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, NULL));
	EXPECT_EQ(-EFAULT, np_ioctl(self->fd, NUMAPLACE_IOC_INFO,
				    (void *)-4096L)); /* kernel address */

	/* A struct that runs into a PROT_NONE page. */
	map = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + psz, psz, PROT_NONE));
	tail = (void *)(map + psz - 16);
	tail->size = sizeof(*tail);
	tail->flags = 0;
	EXPECT_EQ(-EFAULT, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, tail));

	/* Read-only: the answer cannot be written back. */
	memset(map, 0, psz);
	((struct numaplace_info *)map)->size = sizeof(struct numaplace_info);
	ASSERT_EQ(0, mprotect(map, psz, PROT_READ));
	EXPECT_EQ(-EFAULT, np_ioctl(self->fd, NUMAPLACE_IOC_INFO, map));
	munmap(map, 2 * psz);
}

/* The handshake is open to an unprivileged user, like move_pages(2). */
NP_TEST_F(dev, info_unprivileged)
{
	pid_t pid;
	int status;

	NP_SKIPPED();
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		int fd = np_open();
		struct numaplace_info info = { .size = sizeof(info) };

		_exit(fd >= 0 && !np_ioctl(fd, NUMAPLACE_IOC_INFO, &info) &&
		      info.abi_version == NUMAPLACE_ABI_VERSION ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

NP_HARNESS_MAIN
