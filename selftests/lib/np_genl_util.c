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
#include <limits.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "np_test.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

int np_module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/numaplace", &st) == 0;
}

/* NP_KO_WHERE's directories after $NP_KO_DIR and the test's own. */
static const char *const np_ko_dirs[] = {
	"/usr/lib/numaplace",
	"/lib/modules/%s/updates/dkms",
	"/lib/modules/%s/updates",
	"/lib/modules/%s/extra",
};

static const char *const np_ko_suffixes[] = { ".ko", ".ko.xz", ".ko.zst" };

/* Open @dir/@name with each suffix: an fd or -1. */
static int np_ko_open_in(const char *dir, const char *name)
{
	char path[PATH_MAX + 64];
	size_t i;
	int fd, len;

	for (i = 0; i < ARRAY_SIZE(np_ko_suffixes); i++) {
		len = snprintf(path, sizeof(path), "%s/%s%s", dir, name,
			       np_ko_suffixes[i]);
		if (len < 0 || (size_t)len >= sizeof(path))
			return -1;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

int np_ko_open(const char *name)
{
	char dir[PATH_MAX], *slash;
	const char *env = getenv("NP_KO_DIR");
	struct utsname u;
	ssize_t len;
	size_t i;
	int fd;

	if (env && *env && (fd = np_ko_open_in(env, name)) >= 0)
		return fd;
	len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (len > 0) {
		dir[len] = '\0';
		slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			fd = np_ko_open_in(dir, name);
			if (fd >= 0)
				return fd;
		}
	}
	if (uname(&u))
		return -ENOENT;
	for (i = 0; i < ARRAY_SIZE(np_ko_dirs); i++) {
		/* Each format names the release once, or not at all. */
		snprintf(dir, sizeof(dir), np_ko_dirs[i], u.release);
		fd = np_ko_open_in(dir, name);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

int np_ko_found(const char *name)
{
	int fd = np_ko_open(name);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

#ifndef MODULE_INIT_COMPRESSED_FILE
#define MODULE_INIT_COMPRESSED_FILE	4	/* 5.17: linux/module.h */
#endif

int np_ko_load(int modfd, const char *params)
{
	char link[64], path[PATH_MAX];
	unsigned int flags = 0;
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", modfd);
	len = readlink(link, path, sizeof(path) - 1);
	if (len > 3) {
		path[len] = '\0';
		if (strstr(path, ".ko.xz") || strstr(path, ".ko.zst"))
			flags = MODULE_INIT_COMPRESSED_FILE;
	}
	return syscall(SYS_finit_module, modfd, params, flags) ? -errno : 0;
}

int np_mr_load(void)
{
	int fd = np_ko_open("np_mn_rec"), ret;

	if (fd < 0)
		return -ENOENT;
	ret = np_ko_load(fd, "");
	close(fd);
	if (ret == -EEXIST)
		ret = 0;
	return ret;
}

int np_mr_unload(void)
{
	return syscall(SYS_delete_module, "np_mn_rec", O_NONBLOCK);
}

int np_module_load_fd(int modfd)
{
	return np_ko_load(modfd, "");
}

int np_module_load(void)
{
	int fd = np_ko_open("numaplace"), ret;

	if (fd < 0)
		return fd;
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
