// SPDX-License-Identifier: GPL-2.0
/*
 * Device-dax pages inside a RAM zone's span: the query must say -ENOENT,
 * as move_pages(2) does, not the zone's node.
 *
 * tools/vm/run --pmem MB puts a legacy pmem region (memmap=MB!ADDR) in the
 * middle of node 0's memory: node 0's DMA32 zone spans it, it is no System
 * RAM. This test turns it into a devdax device with its struct pages in
 * RAM through sysfs alone, as "ndctl create-namespace -m devdax -M mem
 * -a 4K" does (the namespace off nd_pmem, then the region's dax seed's
 * align, mode, uuid and namespace, then dax_pmem's bind), maps /dev/daxN.M
 * (4 KiB align: PTEs), touches every page and compares what numaplace says
 * of them, in array mode (libnumaplace's numaplace_move_pages(), the
 * syscall's answers) and in range mode (default answers, run by run),
 * with the kernel's move_pages(2). Since 6.17 (no devmap PTE bit) such a
 * page is an ordinary PTE to the walker, and only the pfn -> node lookup
 * can tell it from RAM (module/nodemap.c). Anonymous pages bound to node 0
 * are asked in the same calls: RAM still gets its node.
 *
 * Without a pmem region (no --pmem) the test skips.
 */
#include <dirent.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>

#include "numaplace.h"
#include "np_test.h"
#include "kselftest_harness.h"

#define NP_ND_DEVICES	"/sys/bus/nd/devices"
#define NP_DAX_DEVICES	"/sys/bus/dax/devices"
/* Pages mapped from the device and from anonymous memory. */
#define NP_DAX_PAGES	256
#define NP_ANON_PAGES	16
/* A fixed uuid for the dax device's info block (any non-null one will do). */
#define NP_DAX_UUID	"6e756d61-706c-6163-6564-657664617830"

/* The first region whose dax seed can take a namespace. */
static int np_find_region(char *region, size_t len)
{
	DIR *d = opendir(NP_ND_DEVICES);
	struct dirent *e;
	char path[PATH_MAX], buf[64];
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "region", 6))
			continue;
		snprintf(path, sizeof(path), NP_ND_DEVICES "/%s/dax_seed",
			 e->d_name);
		if (np_read_str(path, buf, sizeof(buf)) || !buf[0])
			continue;
		snprintf(region, len, "%s", e->d_name);
		ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

/* An attribute of an nd device: 0 or -errno, with a log line on failure. */
static int np_nd_write(struct __test_metadata *_metadata, const char *dev,
		       const char *attr, const char *val)
{
	char path[PATH_MAX];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dev, attr);
	ret = np_write_str(path, val);
	if (ret)
		TH_LOG("%s <- %s: %s", path, val, strerror(-ret));
	return ret;
}

/* The first dax device on the system: its name in *dax, or -ENODEV. */
static int np_find_dax(char *dax, size_t len)
{
	DIR *d = opendir(NP_DAX_DEVICES);
	struct dirent *e;
	int ret = -ENODEV;

	while (d && (e = readdir(d))) {
		if (!strncmp(e->d_name, "dax", 3)) {
			snprintf(dax, len, "%s", e->d_name);
			ret = 0;
			break;
		}
	}
	if (d)
		closedir(d);
	return ret;
}

/*
 * The dax device of the region (made here if there is none yet): its name
 * in *dax (e.g. "dax0.0") or a negative errno.
 */
static int np_devdax_make(struct __test_metadata *_metadata, char *dax,
			  size_t len)
{
	char region[NAME_MAX + 1], path[PATH_MAX], seed[NAME_MAX + 1];
	char ns[NAME_MAX + 1], dev[PATH_MAX];
	int ret;

	/* An earlier run made one: use it. */
	if (!np_find_dax(dax, len))
		return 0;
	ret = np_find_region(region, sizeof(region));
	if (ret)
		return ret;
	snprintf(path, sizeof(path), NP_ND_DEVICES "/%s/dax_seed", region);
	if (np_read_str(path, seed, sizeof(seed)))
		return -ENOENT;
	/* A legacy (e820) region has one io namespace, its namespace seed. */
	snprintf(path, sizeof(path), NP_ND_DEVICES "/%s/namespace_seed", region);
	if (np_read_str(path, ns, sizeof(ns)) || !ns[0])
		return -ENOENT;
	TH_LOG("%s: %s -> %s", region, ns, seed);
	snprintf(path, sizeof(path), NP_ND_DEVICES "/%s/driver", ns);
	if (!access(path, F_OK)) {
		/* A claimed namespace cannot be attached (-EBUSY). */
		snprintf(dev, sizeof(dev), NP_ND_DEVICES "/%s/driver", ns);
		ret = np_nd_write(_metadata, dev, "unbind", ns);
		if (ret)
			return ret;
	}
	snprintf(dev, sizeof(dev), NP_ND_DEVICES "/%s", seed);
	/* 4 KiB: the device faults PTEs; "ram": struct pages in RAM. */
	ret = np_nd_write(_metadata, dev, "align", "4096") ?:
	      np_nd_write(_metadata, dev, "mode", "ram") ?:
	      np_nd_write(_metadata, dev, "uuid", NP_DAX_UUID) ?:
	      np_nd_write(_metadata, dev, "namespace", ns) ?:
	      np_nd_write(_metadata, "/sys/bus/nd/drivers/dax_pmem", "bind",
			  seed);
	if (ret)
		return ret;
	/* dax_pmem's probe registers the dax device; device_dax binds it. */
	return np_find_dax(dax, len);
}

/* The pfn behind @addr (root reads them from pagemap), or 0. */
static unsigned long np_pfn_of(const void *addr, long psz)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	__u64 e = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (uintptr_t)addr / psz * sizeof(e)) !=
	    sizeof(e))
		e = 0;
	close(fd);
	return (e >> 63) ? e & ((1ULL << 55) - 1) : 0;
}

FIXTURE(devdax) {
	int fd;		/* /dev/numaplace */
	int dax;	/* /dev/daxN.M */
	long psz;
	char *map;	/* NP_DAX_PAGES of the device */
	char *anon;	/* NP_ANON_PAGES on node 0 */
};

FIXTURE_SETUP(devdax)
{
	struct numaplace_info info;
	char name[NAME_MAX + 1], path[PATH_MAX];
	long size;
	int ret;

	self->dax = -1;
	self->map = self->anon = MAP_FAILED;
	self->psz = sysconf(_SC_PAGESIZE);
	self->fd = np_open();
	if (self->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, np_get_info(self->fd, &info));
	if (!(info.features & NUMAPLACE_FEAT_QUERY))
		SKIP(return, "module has no NUMAPLACE_FEAT_QUERY");
	if (access(NP_ND_DEVICES, F_OK))
		SKIP(return, "no nvdimm bus (tools/vm/run --pmem gives one)");
	ret = np_devdax_make(_metadata, name, sizeof(name));
	if (ret == -ENOENT)
		SKIP(return, "no pmem region with a dax seed");
	ASSERT_EQ(0, ret);
	snprintf(path, sizeof(path), NP_DAX_DEVICES "/%s/size", name);
	size = np_read_long(path);
	TH_LOG("%s: %ld bytes", name, size);
	ASSERT_GE(size, NP_DAX_PAGES * self->psz);
	snprintf(path, sizeof(path), "/dev/%s", name);
	self->dax = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dax) TH_LOG("%s: %s", path, strerror(errno));
	self->map = mmap(NULL, NP_DAX_PAGES * self->psz, PROT_READ | PROT_WRITE,
			 MAP_SHARED, self->dax, 0);
	ASSERT_NE(MAP_FAILED, self->map) TH_LOG("mmap: %s", strerror(errno));
	for (long i = 0; i < NP_DAX_PAGES; i++)
		self->map[i * self->psz] = 1;
	ASSERT_EQ(0, np_mempolicy(MPOL_BIND, 0));
	self->anon = mmap(NULL, NP_ANON_PAGES * self->psz,
			  PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	ASSERT_NE(MAP_FAILED, self->anon);
	for (long i = 0; i < NP_ANON_PAGES; i++)
		self->anon[i * self->psz] = 1;
	ASSERT_EQ(0, np_mempolicy(MPOL_DEFAULT, -1));
}

FIXTURE_TEARDOWN(devdax)
{
	if (self->anon != MAP_FAILED)
		munmap(self->anon, NP_ANON_PAGES * self->psz);
	if (self->map != MAP_FAILED)
		munmap(self->map, NP_DAX_PAGES * self->psz);
	if (self->dax >= 0)
		close(self->dax);
	if (self->fd >= 0)
		close(self->fd);
}

/* Array mode: numaplace_move_pages(NULL nodes) answers what the kernel does. */
NP_TEST_F(devdax, array_mode)
{
	enum { N = NP_DAX_PAGES + NP_ANON_PAGES };
	int sys[N], np[N], bad = 0;
	__u64 pages[N];
	void *ptrs[N];
	long i;

	NP_SKIPPED();
	for (i = 0; i < N; i++) {
		pages[i] = (uintptr_t)(i < NP_DAX_PAGES ?
			   self->map + i * self->psz :
			   self->anon + (i - NP_DAX_PAGES) * self->psz);
		ptrs[i] = (void *)(uintptr_t)pages[i];
		np[i] = NP_SENTINEL;
	}
	TH_LOG("first device page: pfn %#lx",
	       np_pfn_of(self->map, self->psz));
	ASSERT_EQ(0, np_sys_query(0, N, pages, sys));
	ASSERT_EQ(0, numaplace_move_pages(0, N, ptrs, NULL, np, 0));
	for (i = 0; i < N; i++) {
		if (np[i] == sys[i])
			continue;
		if (bad++ < 8)
			TH_LOG("page %ld (%s): numaplace %d, move_pages %d", i,
			       i < NP_DAX_PAGES ? "devdax" : "anon", np[i],
			       sys[i]);
	}
	EXPECT_EQ(0, bad) TH_LOG("%d pages answered differently", bad);
	/* The kernel's own answers: no node for device pages, 0 for RAM. */
	EXPECT_EQ(-ENOENT, sys[0]);
	EXPECT_EQ(-ENOENT, sys[NP_DAX_PAGES - 1]);
	EXPECT_EQ(0, sys[NP_DAX_PAGES]);
	EXPECT_EQ(0, sys[N - 1]);
}

/*
 * Range mode, default answers (6.12's) and this kernel's syscall's: every
 * page's status is the kernel's, every run of the device says -ENOENT.
 */
NP_TEST_F(devdax, range_mode)
{
	static const __u32 flags[] = { 0, NUMAPLACE_QUERY_AS_SYSCALL };
	struct numaplace_run runs[NP_DAX_PAGES];
	__s32 status[NP_DAX_PAGES];
	struct numaplace_query q;
	__u64 pages[NP_DAX_PAGES];
	int sys[NP_DAX_PAGES], bad = 0;
	long i;

	NP_SKIPPED();
	for (i = 0; i < NP_DAX_PAGES; i++)
		pages[i] = (uintptr_t)(self->map + i * self->psz);
	ASSERT_EQ(0, np_sys_query(0, NP_DAX_PAGES, pages, sys));
	for (size_t f = 0; f < ARRAY_SIZE(flags); f++) {
		__u64 covered = 0;

		for (i = 0; i < NP_DAX_PAGES; i++)
			status[i] = NP_SENTINEL;
		ASSERT_EQ(0, np_query_range(self->fd, 0, flags[f], pages[0],
					    NP_DAX_PAGES * self->psz, runs,
					    NP_DAX_PAGES, status, NULL, 0,
					    &q));
		for (i = 0; i < NP_DAX_PAGES; i++) {
			if (status[i] != sys[i] && bad++ < 8)
				TH_LOG("flags %#x page %ld: status %d, move_pages %d",
				       flags[f], i, status[i], sys[i]);
		}
		for (i = 0; i < (long)q.nr_runs; i++) {
			covered += runs[i].nr_pages;
			if (runs[i].node != -ENOENT && bad++ < 8)
				TH_LOG("flags %#x run %ld (%llu pages at %#llx): node %d kind %#x",
				       flags[f], i,
				       (unsigned long long)runs[i].nr_pages,
				       (unsigned long long)runs[i].start,
				       runs[i].node, runs[i].kind);
		}
		EXPECT_EQ(NP_DAX_PAGES, covered);
	}
	EXPECT_EQ(0, bad);
}

NP_HARNESS_MAIN
