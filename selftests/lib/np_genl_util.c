// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the module-lifetime and netlink tests (load, genl*, watch*)
 * that speak no netlink (np_test.h, the np_genl_util.c block): loading
 * and unloading the module, capabilities, memory bound to a node, and
 * leak batches read from unreclaimable slab.
 */
#include <dirent.h>
#include <linux/capability.h>
#include <linux/mempolicy.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "np_test.h"

int np_module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/numaplace", &st) == 0;
}

int np_module_load_fd(int modfd)
{
	return syscall(SYS_finit_module, modfd, "", 0) ? -errno : 0;
}

int np_module_load(void)
{
	int fd = open(NP_MODULE_PATH, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = np_module_load_fd(fd);
	close(fd);
	return ret;
}

int np_module_unload(void)
{
	return syscall(SYS_delete_module, "numaplace", O_NONBLOCK) ? -errno : 0;
}

int np_drop_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[cap / 32].effective &= ~(1U << (cap % 32));
	d[cap / 32].permitted &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

int np_touch_on(char *p, size_t first, size_t n, int node)
{
	long psz = sysconf(_SC_PAGESIZE);
	int ret = np_mempolicy(MPOL_BIND, node);

	if (ret)
		return ret;
	for (size_t i = first; i < first + n; i++)
		memset(p + i * psz, 1 + (int)(i % 251), psz);
	return np_mempolicy(MPOL_DEFAULT, -1);
}

static void np_drop_caches(void)
{
	if (np_write_str("/proc/sys/vm/drop_caches", "3"))
		perror("drop_caches");
}

/*
 * Shrink every slab cache: on a KASAN kernel freed objects wait in the
 * quarantine (up to 1/32 of memory) and still count as slab until their
 * cache is shrunk (kasan_cache_shrink()), which would read as a leak.
 */
static void np_shrink_slabs(void)
{
	struct dirent *d;
	char path[300];
	DIR *dir = opendir("/sys/kernel/slab");

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 d->d_name);
		/* An error is no matter: the reading says what is left. */
		np_write_str(path, "1");
	}
	closedir(dir);
}

/* RCU-deferred frees: a grace period or two. */
#define NP_SLAB_SETTLE_US	(200 * 1000)

long np_slab_settled_kb(void)
{
	usleep(NP_SLAB_SETTLE_US);
	np_drop_caches();
	np_shrink_slabs();
	return np_meminfo_kb("SUnreclaim");
}

int np_slab_batch_end(int batch, long before, long *grew, long slack_kb)
{
	long after = np_slab_settled_kb();

	*grew = after - before;
	fprintf(stderr, "# batch %d: SUnreclaim %ld kB -> %ld kB\n", batch,
		before, after);
	return *grew < slack_kb;
}
