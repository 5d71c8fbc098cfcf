// SPDX-License-Identifier: GPL-2.0
/*
 * The selftests' shared helpers, compiled once (build/testlib/np_test.o)
 * and linked into every test: np_test.h documents each one. Nothing here
 * uses the kselftest harness: it defines its globals in every file that
 * includes it, so only the test files do; a helper that needs a test's
 * _metadata (ASSERT_*, SKIP) stays a macro in np_test.h.
 */
#include <sys/mman.h>

#include "np_test.h"

int np_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

int np_open(void)
{
	int fd = open(NUMAPLACE_DEVICE, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int np_read_nodelist(const char *path, __u64 *mask)
{
	char buf[4096], *p, *end;
	unsigned long lo, hi, n;
	int fd, len, top = 0;

	memset(mask, 0, NUMAPLACE_NODE_WORDS * sizeof(__u64));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = 0;
	for (p = buf; *p && *p != '\n';) {
		lo = strtoul(p, &end, 10);
		if (end == p)
			return -EINVAL;
		hi = lo;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (hi >= NUMAPLACE_MAX_NODES || lo > hi)
			return -ERANGE;
		for (n = lo; n <= hi; n++)
			mask[n / 64] |= 1ULL << (n % 64);
		if ((int)hi + 1 > top)
			top = hi + 1;
		p = *end == ',' ? end + 1 : end;
	}
	return top;
}

int np_get_info(int fd, struct numaplace_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return np_ioctl(fd, NUMAPLACE_IOC_INFO, info);
}

int np_kernel_is_new(void)
{
	int major = 0, minor = 0;
	struct utsname u;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return -1;
	return major > 6 || (major == 6 && minor >= 12);
}

long np_raw_syscall6(long nr, long a1, long a2, long a3,
		     long a4, long a5, long a6)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile ("syscall"
			  : "=a"(ret)
			  : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			    "r"(r8), "r"(r9)
			  : "rcx", "r11", "memory");
	return ret;
#else
	long ret = syscall(nr, a1, a2, a3, a4, a5, a6);

	return ret < 0 ? -errno : ret;
#endif
}

long np_sys_move_pages(int pid, unsigned long n,
		       const __u64 *pages, const int *nodes,
		       int *status, int flags)
{
	return np_raw_syscall6(SYS_move_pages, pid, n, (uintptr_t)pages,
			       (uintptr_t)nodes, (uintptr_t)status, flags);
}

long np_sys_query(int pid, unsigned long n, const __u64 *pages,
		  int *status)
{
	for (unsigned long i = 0; i < n; i++)
		status[i] = NP_SENTINEL;
	return np_sys_move_pages(pid, n, pages, NULL, status, 0);
}

void np_query_init(struct numaplace_query *q, int pid,
		   __u32 flags)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->flags = flags;
	q->pid = pid;
}

int np_query_range(int fd, int pid, __u32 flags, __u64 start,
		   __u64 len, struct numaplace_run *runs,
		   __u32 cap, __s32 *status, __u64 *node_pages,
		   __u32 nr_nodes, struct numaplace_query *q)
{
	np_query_init(q, pid, flags);
	q->start = start;
	q->len = len;
	q->runs_ptr = (uintptr_t)runs;
	q->runs_cap = cap;
	q->status_ptr = (uintptr_t)status;
	q->node_pages_ptr = (uintptr_t)node_pages;
	q->node_pages_len = nr_nodes;
	return np_query(fd, q);
}

int np_query_array(int fd, int pid, __u32 flags,
		   const __u64 *pages, __u64 count,
		   __s32 *status, __u64 *node_pages,
		   __u32 nr_nodes, struct numaplace_query *q)
{
	np_query_init(q, pid, flags | NUMAPLACE_QUERY_PAGES);
	q->pages_ptr = (uintptr_t)pages;
	q->count = count;
	q->status_ptr = (uintptr_t)status;
	q->node_pages_ptr = (uintptr_t)node_pages;
	q->node_pages_len = nr_nodes;
	return np_query(fd, q);
}

int np_write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len = strlen(val), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, val, len);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? ret : ret == len ? 0 : -EIO;
}

int np_read_str(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

long np_read_long(const char *path)
{
	char buf[64];

	return np_read_str(path, buf, sizeof(buf)) ? -1 :
	       strtol(buf, NULL, 0);
}

void np_vmas_free(struct np_vmas *m)
{
	free(m->v);
	m->v = NULL;
	m->nr = 0;
}

int np_vmas_read(int pid, struct np_vmas *m)
{
	char path[64], line[1024], perms[8];
	struct np_vma *v = NULL;
	size_t cap = 0;
	FILE *f;

	m->v = NULL;
	m->nr = 0;
	snprintf(path, sizeof(path), "/proc/%d/smaps", pid ? pid : getpid());
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, ino;
		unsigned long long off;
		unsigned int maj, min;
		int pos = 0;
		char *name;

		if (sscanf(line, "%lx-%lx %7s %llx %x:%x %lu %n", &s, &e,
			   perms, &off, &maj, &min, &ino, &pos) >= 7 && pos) {
			if (m->nr == cap) {
				cap = cap ? 2 * cap : 64;
				v = realloc(m->v, cap * sizeof(*v));
				if (!v) {
					fclose(f);
					np_vmas_free(m);
					return -ENOMEM;
				}
				m->v = v;
			}
			v = &m->v[m->nr++];
			memset(v, 0, sizeof(*v));
			name = line + pos;
			name[strcspn(name, "\n")] = 0;
			/* The gate area is no VMA of the mm (vma_lookup). */
			if (!strcmp(name, "[vsyscall]")) {
				m->nr--;
				v = NULL;
				continue;
			}
			v->start = s;
			v->end = e;
			v->kpage_size = 4096;
			snprintf(v->desc, sizeof(v->desc), "%s %s", perms,
				 *name ? name : "[anon]");
			if (ino == 0 && (!*name || !strcmp(name, "[heap]") ||
					 !strncmp(name, "[stack", 6) ||
					 !strncmp(name, "[anon:", 6)))
				v->flags |= NPV_ANON | NPV_NOFAULT;
			else if (ino)
				v->flags |= NPV_FILE;
			/* /dev/mem's vm_ops have no ->fault (mmap_mem_ops). */
			if (!strcmp(name, "/dev/mem"))
				v->flags |= NPV_NOFAULT;
			if (!strncmp(perms, "---", 3))
				v->flags |= NPV_PROTNONE;
		} else if (v && !strncmp(line, "KernelPageSize:", 15)) {
			v->kpage_size = strtoul(line + 15, NULL, 10) * 1024;
		} else if (v && !strncmp(line, "VmFlags:", 8)) {
			for (char *t = strtok(line + 8, " \n"); t;
			     t = strtok(NULL, " \n")) {
				if (!strcmp(t, "pf"))
					v->flags |= NPV_PFNMAP;
				else if (!strcmp(t, "ht"))
					v->flags |= NPV_HUGETLB;
			}
			if (v->flags & (NPV_PFNMAP | NPV_HUGETLB))
				v->flags &= ~NPV_FILE;
		}
	}
	fclose(f);
	return 0;
}

const struct np_vma *np_vma_find(const struct np_vmas *m,
				 unsigned long addr)
{
	size_t lo = 0, hi = m->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

bool np_addr_is_pfnmap(unsigned long addr)
{
	const struct np_vma *v;
	struct np_vmas m;
	bool pfnmap;

	if (np_vmas_read(0, &m))
		return false;
	v = np_vma_find(&m, addr);
	pfnmap = v && (v->flags & NPV_PFNMAP);
	np_vmas_free(&m);
	return pfnmap;
}

int np_nodemap_read(struct np_nodemap *nm)
{
	struct dirent *nd, *md;
	DIR *nodes, *dir;
	char path[300];
	long bsz;

	memset(nm, 0, sizeof(*nm));
	if (np_read_str("/sys/devices/system/memory/block_size_bytes", path,
			sizeof(path)))
		return -ENOENT;
	bsz = strtol(path, NULL, 16);
	if (bsz <= 0)
		return -EINVAL;
	nm->block_pages = bsz / sysconf(_SC_PAGESIZE);
	nodes = opendir("/sys/devices/system/node");
	if (!nodes)
		return -errno;
	while ((nd = readdir(nodes))) {
		int node;

		if (sscanf(nd->d_name, "node%d", &node) != 1)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/%s",
			 nd->d_name);
		dir = opendir(path);
		if (!dir)
			continue;
		while ((md = readdir(dir))) {
			unsigned long blk;
			short *n;

			if (sscanf(md->d_name, "memory%lu", &blk) != 1)
				continue;
			if (blk >= nm->nr) {
				n = realloc(nm->node, (blk + 1) * sizeof(*n));
				if (!n)
					continue;
				for (size_t i = nm->nr; i <= blk; i++)
					n[i] = -1;
				nm->node = n;
				nm->nr = blk + 1;
			}
			nm->node[blk] = node;
		}
		closedir(dir);
	}
	closedir(nodes);
	return nm->nr ? 0 : -ENOENT;
}

int np_pfn_node(const struct np_nodemap *nm, unsigned long pfn)
{
	unsigned long blk = pfn / nm->block_pages;

	return pfn && blk < nm->nr ? nm->node[blk] : -1;
}

void np_model_close(struct np_model *m)
{
	np_vmas_free(&m->vmas);
	free(m->map.node);
	m->map.node = NULL;
	if (m->pagemap_fd >= 0)
		close(m->pagemap_fd);
	if (m->kpf_fd >= 0)
		close(m->kpf_fd);
	m->pagemap_fd = m->kpf_fd = -1;
}

int np_model_open(struct np_model *m, int pid)
{
	char path[64];
	int ret;

	memset(m, 0, sizeof(*m));
	m->pagemap_fd = m->kpf_fd = -1;
	m->pid = pid ? pid : getpid();
	m->psz = sysconf(_SC_PAGESIZE);
	m->pmd_size = m->psz * (m->psz / 8);
	ret = np_nodemap_read(&m->map);
	if (!ret)
		ret = np_vmas_read(m->pid, &m->vmas);
	snprintf(path, sizeof(path), "/proc/%d/pagemap", m->pid);
	m->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	m->kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (!ret && (m->pagemap_fd < 0 || m->kpf_fd < 0))
		ret = -errno;
	if (ret)
		np_model_close(m);
	return ret;
}

__u64 np_model_pm(struct np_model *m, unsigned long addr)
{
	__u64 e = 0;

	if (pread(m->pagemap_fd, &e, 8, (addr / m->psz) * 8) != 8)
		return 0;
	return e;
}

__u64 np_model_kpf(struct np_model *m, unsigned long pfn)
{
	__u64 f = 0;

	if (pread(m->kpf_fd, &f, 8, pfn * 8) != 8)
		return 0;
	return f;
}

int np_model_pmd(struct np_model *m, const struct np_vma *v,
		 unsigned long addr)
{
	unsigned long blk = addr & ~(m->pmd_size - 1);
	unsigned long n = m->pmd_size / m->psz, pfn0;
	__u64 *e;
	int mapped = 0;

	if (m->pmd_blk_valid && m->pmd_blk == blk)
		return m->pmd_blk_mapped;
	e = malloc(n * 8);
	if (e && blk >= v->start && blk + m->pmd_size <= v->end &&
	    pread(m->pagemap_fd, e, n * 8, (blk / m->psz) * 8) ==
	    (ssize_t)(n * 8)) {
		pfn0 = e[0] & NP_PM_PFN_MASK;
		mapped = pfn0 && !(pfn0 % n) &&
			 (np_model_kpf(m, pfn0) & (1ULL << KPF_THP));
		for (unsigned long i = 0; mapped && i < n; i++)
			mapped = (e[i] & NP_PM_PRESENT) &&
				 (e[i] & NP_PM_PFN_MASK) == pfn0 + i;
	}
	free(e);
	m->pmd_blk = blk;
	m->pmd_blk_valid = 1;
	m->pmd_blk_mapped = mapped;
	return mapped;
}

void np_model_page(struct np_model *m, unsigned long addr,
		   struct np_page *pg)
{
	const struct np_vma *v = np_vma_find(&m->vmas, addr);
	int nofault, protnone, zero;
	__u64 pm, kpf;

	memset(pg, 0, sizeof(*pg));
	pg->node = -1;
	if (v)
		snprintf(pg->vma, sizeof(pg->vma), "%s", v->desc);
	if (!v) {
		pg->what = NPW_NOVMA;
		pg->st_old = pg->st_new = -EFAULT;
		return;
	}
	if (v->flags & NPV_ANON)
		pg->what |= NPW_ANON;
	if (v->flags & NPV_FILE)
		pg->what |= NPW_FILE;
	if (v->flags & NPV_HUGETLB)
		pg->what |= NPW_HUGETLB;
	nofault = (v->flags & NPV_NOFAULT) && !(v->flags & NPV_HUGETLB);
	protnone = !!(v->flags & NPV_PROTNONE);
	if (v->flags & NPV_PFNMAP) {
		/*
		 * The page walk behind pagemap skips VM_PFNMAP VMAs, so
		 * whether a special PTE is there is not known here. 6.12:
		 * -ENOENT either way. 6.1: a special PTE is -EFAULT (its
		 * FOLL_DUMP test), or -ENOENT when protnone; a hole is
		 * -EFAULT only without ->fault.
		 */
		pg->what |= NPW_PFNMAP;
		pg->st_new = -ENOENT;
		pg->st_old = nofault && !protnone ? -EFAULT : NP_ANY;
		return;
	}
	pm = np_model_pm(m, addr);
	if (!(pm & NP_PM_PRESENT)) {
		if (pm & NP_PM_SWAP) {
			pg->what |= NPW_SWAP;
			pg->st_old = pg->st_new = -ENOENT;
			return;
		}
		/* 6.1: no_page_table() with FOLL_DUMP. */
		pg->what |= NPW_HOLE;
		pg->st_new = -ENOENT;
		pg->st_old = nofault ? -EFAULT : -ENOENT;
		return;
	}
	pg->what |= NPW_PRESENT;
	pg->pfn = pm & NP_PM_PFN_MASK;
	if (v->flags & NPV_HUGETLB) {
		pg->node = np_pfn_node(&m->map, pg->pfn);
		pg->st_old = pg->st_new = pg->node;
		if (v->kpage_size == m->pmd_size)
			pg->what |= NPW_PMD;
		return;
	}
	if (protnone)
		pg->what |= NPW_PROTNONE;
	kpf = np_model_kpf(m, pg->pfn);
	zero = !!(kpf & (1ULL << KPF_ZERO_PAGE));
	if (zero)
		pg->what |= NPW_ZERO;
	if (kpf & (1ULL << KPF_KSM))
		pg->what |= NPW_KSM;
	if (kpf & (1ULL << KPF_THP)) {
		pg->what |= NPW_THP;
		if (np_model_pmd(m, v, addr))
			pg->what |= NPW_PMD;
	}
	if (!zero)
		pg->node = np_pfn_node(&m->map, pg->pfn);
	pg->st_new = zero ? -EFAULT : pg->node;
	if (pg->what & NPW_PMD)
		/* 6.1 follow_pmd_mask(): a protnone PMD is no_page_table(). */
		pg->st_old = protnone ? (nofault ? -EFAULT : -ENOENT) :
			     zero ? -EFAULT : pg->node;
	else
		/* 6.1 follow_page_pte(): protnone first, then special. */
		pg->st_old = protnone ? -ENOENT : zero ? -EFAULT : pg->node;
}

const char *np_page_str(const struct np_page *pg, char *buf,
			size_t size)
{
	static const char *const names[] = {
		"novma", "hole", "swap", "present", "zero", "pmd", "protnone",
		"special", "hugetlb", "anon", "file", "ksm", "thp", "pfnmap",
	};
	size_t len;

	len = snprintf(buf, size, "[%s] pfn %#lx node %d:",
		       pg->vma[0] ? pg->vma : "no vma", pg->pfn, pg->node);
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (pg->what & (1U << i) && len < size)
			len += snprintf(buf + len, size - len, " %s", names[i]);
	return buf;
}

int np_all_bytes(const void *p, size_t len, unsigned char b)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		if (c[i] != b)
			return 0;
	return 1;
}

void np_log_start(struct np_ctx *c)
{
	c->logged = 0;
}

int np_log_end(struct np_ctx *c, const char *what, int bad)
{
	if (c->logged > NP_LOG_MAX)
		fprintf(stderr, "# %s: %d mismatches in all\n", what, bad);
	c->logged = 0;
	return bad;
}

int np_cmp_status(struct np_ctx *c, const char *what,
		  const __u64 *addrs, const int *exp,
		  const __s32 *got, size_t n,
		  const struct np_page *pg)
{
	char buf[200];
	int bad = 0;

	np_log_start(c);
	for (size_t i = 0; i < n; i++) {
		if (exp[i] == got[i] ||
		    (exp[i] == NP_ANY && (got[i] == -EFAULT ||
					  got[i] == -ENOENT)))
			continue;
		bad++;
		np_log(c, "%s: [%zu] %#llx: expected %d, got %d %s", what, i,
		       (unsigned long long)addrs[i], exp[i], got[i],
		       pg ? np_page_str(&pg[i], buf, sizeof(buf)) : "");
	}
	return np_log_end(c, what, bad);
}

int np_check_totals(struct np_ctx *c, const char *what,
		    const struct numaplace_query *q,
		    const __s32 *status, size_t n,
		    const __u64 *node_pages)
{
	__u64 unplaced = 0, *cnt = calloc(c->nr_nodes + 1, sizeof(*cnt));
	int bad = 0;

	if (!cnt)
		return 1;
	np_log_start(c);
	for (size_t i = 0; i < n; i++) {
		if (status[i] < 0)
			unplaced++;
		else if ((__u32)status[i] < c->nr_nodes)
			cnt[status[i]]++;
		else
			cnt[c->nr_nodes]++;
	}
	if (cnt[c->nr_nodes]) {
		bad++;
		np_log(c, "%s: %llu statuses name a node >= nr_node_ids %u",
		       what, (unsigned long long)cnt[c->nr_nodes], c->nr_nodes);
	}
	if (q->nr_unplaced != unplaced) {
		bad++;
		np_log(c, "%s: nr_unplaced %llu, status says %llu", what,
		       (unsigned long long)q->nr_unplaced,
		       (unsigned long long)unplaced);
	}
	for (__u32 nd = 0; node_pages && nd < c->nr_nodes; nd++) {
		if (node_pages[nd] == cnt[nd])
			continue;
		bad++;
		np_log(c, "%s: node_pages[%u] %#llx, status says %llu", what,
		       nd, (unsigned long long)node_pages[nd],
		       (unsigned long long)cnt[nd]);
	}
	free(cnt);
	return np_log_end(c, what, bad);
}

int np_check_runs(struct np_ctx *c, const char *what,
		  const struct numaplace_query *q,
		  const struct numaplace_run *runs, __u64 start,
		  const __s32 *status, __u32 *kinds)
{
	__u64 at = start & ~(__u64)(c->psz - 1), page = 0;
	int bad = 0;

	np_log_start(c);
	if (q->nr_runs > q->runs_cap) {
		np_log(c, "%s: nr_runs %u > runs_cap %u", what, q->nr_runs,
		       q->runs_cap);
		return 1;
	}
	for (__u32 r = 0; r < q->nr_runs; r++) {
		const struct numaplace_run *x = &runs[r];

		if (x->start != at || !x->nr_pages ||
		    x->nr_pages > q->done - page) {
			np_log(c, "%s: run %u {%#llx, %llu pages} after %llu of %llu pages at %#llx",
			       what, r, (unsigned long long)x->start,
			       (unsigned long long)x->nr_pages,
			       (unsigned long long)page,
			       (unsigned long long)q->done,
			       (unsigned long long)at);
			return np_log_end(c, what, bad + 1);
		}
		if (r && x->node == x[-1].node && x->kind == x[-1].kind) {
			bad++;
			np_log(c, "%s: runs %u and %u both node %d kind %#x",
			       what, r - 1, r, x->node, x->kind);
		}
		for (__u64 i = 0; i < x->nr_pages; i++, page++) {
			if (kinds)
				kinds[page] = x->kind;
			if (status && status[page] != x->node) {
				bad++;
				np_log(c, "%s: page %llu: run %u node %d, status %d",
				       what, (unsigned long long)page, r,
				       x->node, status[page]);
			}
		}
		at += x->nr_pages * c->psz;
	}
	if (page != q->done) {
		bad++;
		np_log(c, "%s: runs cover %llu pages, done %llu", what,
		       (unsigned long long)page, (unsigned long long)q->done);
	}
	return np_log_end(c, what, bad);
}

int np_check_kinds(struct np_ctx *c, const char *what,
		   const __u64 *addrs, const struct np_page *pg,
		   const __u32 *kinds, const __s32 *status,
		   size_t n)
{
	static const struct { __u32 w, k; } need[] = {
		{ NPW_NOVMA, NUMAPLACE_KIND_NOVMA },
		{ NPW_HOLE, NUMAPLACE_KIND_NONE },
		{ NPW_SWAP, NUMAPLACE_KIND_SWAP },
		{ NPW_ZERO, NUMAPLACE_KIND_ZERO },
		{ NPW_PMD, NUMAPLACE_KIND_PMD },
		{ NPW_PROTNONE, NUMAPLACE_KIND_PROTNONE },
		{ NPW_SPECIAL, NUMAPLACE_KIND_SPECIAL },
		{ NPW_HUGETLB, NUMAPLACE_KIND_HUGETLB },
		{ NPW_ANON, NUMAPLACE_KIND_ANON },
		{ NPW_FILE, NUMAPLACE_KIND_FILE },
	};
	char buf[200];
	int bad = 0;

	np_log_start(c);
	for (size_t i = 0; i < n; i++) {
		__u32 w = pg[i].what, k = kinds[i], miss = 0, extra = 0;

		for (size_t j = 0; j < sizeof(need) / sizeof(need[0]); j++)
			if ((w & need[j].w) && !(k & need[j].k))
				miss |= need[j].k;
		/* A PFN map: a special entry or none, the model can't see. */
		if ((w & NPW_PFNMAP) &&
		    !(k & (NUMAPLACE_KIND_SPECIAL | NUMAPLACE_KIND_NONE)))
			miss |= NUMAPLACE_KIND_SPECIAL;
		/* Kinds that would claim what is not there. */
		if (!(w & NPW_NOVMA))
			extra |= k & NUMAPLACE_KIND_NOVMA;
		if (!(w & (NPW_HOLE | NPW_PFNMAP)))
			extra |= k & NUMAPLACE_KIND_NONE;
		if (!(w & NPW_PMD))
			extra |= k & NUMAPLACE_KIND_PMD;
		if (w & (NPW_HOLE | NPW_NOVMA | NPW_SWAP))
			extra |= k & (NUMAPLACE_KIND_PRESENT |
				      NUMAPLACE_KIND_ZERO |
				      NUMAPLACE_KIND_PMD);
		if (status[i] >= 0 && !(k & NUMAPLACE_KIND_PRESENT))
			miss |= NUMAPLACE_KIND_PRESENT;
		if (!miss && !extra)
			continue;
		bad++;
		np_log(c, "%s: [%zu] %#llx: kind %#x lacks %#x, has wrong %#x %s",
		       what, i, (unsigned long long)addrs[i], k, miss, extra,
		       np_page_str(&pg[i], buf, sizeof(buf)));
	}
	snprintf(buf, sizeof(buf), "%s kinds", what);
	return np_log_end(c, buf, bad);
}

int np_expect(const struct np_ctx *c, const struct np_page *pg,
	      const int *sys, __u32 flags)
{
	if (flags & NUMAPLACE_QUERY_AS_SYSCALL)
		return *sys;
	return pg->st_new;
}

int np_check_array_modes(struct np_ctx *c, const char *label,
			 const __u64 *addrs, size_t n,
			 const struct np_page *pg,
			 const int *sys)
{
	static const __u32 modes[] = { 0, NUMAPLACE_QUERY_AS_SYSCALL };
	__u64 *np = malloc((c->nr_nodes + 1) * sizeof(*np));
	__s32 *st = malloc((n + 1) * sizeof(*st));
	int *exp = malloc((n + 1) * sizeof(*exp));
	struct numaplace_query q;
	char what[96];
	int bad = 0, ret;

	if (!np || !st || !exp) {
		free(np);
		free(st);
		free(exp);
		return 1;
	}
	for (size_t m = 0; m < 2; m++) {
		snprintf(what, sizeof(what), "%s array%s", label,
			 modes[m] ? " as_syscall" : "");
		for (size_t i = 0; i <= n; i++)
			st[i] = NP_SENTINEL;
		for (__u32 i = 0; i <= c->nr_nodes; i++)
			np[i] = NP_NODE_FILL;
		ret = np_query_array(c->fd, c->pid, modes[m], addrs, n, st, np,
				     c->nr_nodes, &q);
		if (ret) {
			np_log(c, "%s: ioctl %d (%s)", what, ret, strerror(-ret));
			bad++;
			continue;
		}
		if (q.done != n || st[n] != NP_SENTINEL ||
		    np[c->nr_nodes] != NP_NODE_FILL) {
			np_log(c, "%s: done %llu of %zu, or a write past a buffer",
			       what, (unsigned long long)q.done, n);
			bad++;
		}
		for (size_t i = 0; i < n; i++)
			exp[i] = np_expect(c, &pg[i], &sys[i], modes[m]);
		bad += np_cmp_status(c, what, addrs, exp, st, n, pg);
		bad += np_check_totals(c, what, &q, st, n, np);
	}
	free(np);
	free(st);
	free(exp);
	return bad;
}

int np_oracles(struct np_ctx *c, const __u64 *addrs, size_t n,
	       struct np_page *pg, int *sys)
{
	struct np_model m;
	long ret;

	ret = np_model_open(&m, c->pid);
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++)
		np_model_page(&m, addrs[i], &pg[i]);
	np_model_close(&m);
	ret = np_sys_query(c->pid, n, addrs, sys);
	return ret > 0 ? -EIO : ret;
}

int np_check_model(struct np_ctx *c, const char *label,
		   const __u64 *addrs, size_t n,
		   const struct np_page *pg, const int *sys)
{
	int *exp = malloc(n * sizeof(*exp) + 1), bad;
	char what[96];

	if (!exp)
		return 1;
	for (size_t i = 0; i < n; i++)
		exp[i] = c->new_kernel ? pg[i].st_new : pg[i].st_old;
	snprintf(what, sizeof(what), "%s: syscall vs model (a test bug)",
		 label);
	bad = np_cmp_status(c, what, addrs, exp, sys, n, pg);
	free(exp);
	return bad;
}

int np_check_addrs(struct np_ctx *c, const char *label,
		   const __u64 *addrs, size_t n)
{
	struct np_page *pg = calloc(n + 1, sizeof(*pg));
	int *sys = calloc(n + 1, sizeof(*sys)), bad, ret;

	if (!pg || !sys) {
		free(pg);
		free(sys);
		return 1;
	}
	ret = np_oracles(c, addrs, n, pg, sys);
	if (ret) {
		np_log(c, "%s: oracle failed: %d (%s)", label, ret,
		       strerror(-ret));
		free(pg);
		free(sys);
		return 1;
	}
	bad = np_check_model(c, label, addrs, n, pg, sys);
	bad += np_check_array_modes(c, label, addrs, n, pg, sys);
	free(pg);
	free(sys);
	return bad;
}

int np_check_range(struct np_ctx *c, const char *label,
		   unsigned long base, size_t npages,
		   __s32 *dflt)
{
	static const __u32 modes[] = { 0, NUMAPLACE_QUERY_AS_SYSCALL };
	size_t n = npages;
	__u64 *addrs = calloc(n + 1, sizeof(*addrs));
	__u64 *np = malloc((c->nr_nodes + 1) * sizeof(*np));
	struct numaplace_run *runs = calloc(n + 2, sizeof(*runs));
	struct np_page *pg = calloc(n + 1, sizeof(*pg));
	__s32 *st = malloc((n + 1) * sizeof(*st));
	__u32 *kinds = calloc(n + 1, sizeof(*kinds));
	int *sys = calloc(n + 1, sizeof(*sys));
	int *exp = calloc(n + 1, sizeof(*exp));
	struct numaplace_query q;
	int bad = 0, ret;
	char what[96];

	if (!addrs || !np || !runs || !pg || !st || !kinds || !sys || !exp) {
		bad = 1;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		addrs[i] = base + i * c->psz;
	ret = np_oracles(c, addrs, n, pg, sys);
	if (ret) {
		np_log(c, "%s: oracle failed: %d (%s)", label, ret,
		       strerror(-ret));
		bad = 1;
		goto out;
	}
	bad += np_check_model(c, label, addrs, n, pg, sys);

	for (size_t m = 0; m < 2; m++) {
		snprintf(what, sizeof(what), "%s range%s", label,
			 modes[m] ? " as_syscall" : "");
		for (size_t i = 0; i <= n; i++)
			st[i] = NP_SENTINEL;
		for (__u32 i = 0; i <= c->nr_nodes; i++)
			np[i] = NP_NODE_FILL;
		memset(runs, 0xa5, (n + 2) * sizeof(*runs));
		ret = np_query_range(c->fd, c->pid, modes[m], base,
				     n * c->psz, runs, n + 1, st, np,
				     c->nr_nodes, &q);
		if (ret) {
			np_log(c, "%s: ioctl %d (%s)", what, ret, strerror(-ret));
			bad++;
			continue;
		}
		if (q.done != n || st[n] != NP_SENTINEL ||
		    np[c->nr_nodes] != NP_NODE_FILL) {
			np_log(c, "%s: done %llu of %zu, or a write past a buffer",
			       what, (unsigned long long)q.done, n);
			bad++;
			continue;
		}
		for (size_t i = 0; i < n; i++)
			exp[i] = np_expect(c, &pg[i], &sys[i], modes[m]);
		bad += np_cmp_status(c, what, addrs, exp, st, n, pg);
		bad += np_check_runs(c, what, &q, runs, base, st, kinds);
		bad += np_check_totals(c, what, &q, st, n, np);
		if (q.nr_runs <= n + 1 &&
		    !np_all_bytes(&runs[q.nr_runs], sizeof(*runs), 0xa5)) {
			np_log(c, "%s: a run written past nr_runs %u", what,
			       q.nr_runs);
			bad++;
		}
		bad += np_check_kinds(c, what, addrs, pg, kinds, st, n);
		if (!modes[m] && dflt)
			memcpy(dflt, st, n * sizeof(*st));
	}

	/* Array mode on the same pages, each address inside its page. */
	for (size_t i = 0; i < n; i++)
		addrs[i] += (i * 2654435761UL) % c->psz;
	bad += np_check_array_modes(c, label, addrs, n, pg, sys);
out:
	free(addrs);
	free(np);
	free(runs);
	free(pg);
	free(st);
	free(kinds);
	free(sys);
	free(exp);
	return bad;
}

int np_check_resume(struct np_ctx *c, const char *label,
		    unsigned long base, size_t npages,
		    __u32 cap, __u32 flags, const __s32 *exp)
{
	struct numaplace_run *runs = calloc(cap + 1, sizeof(*runs));
	__u64 *np = malloc((c->nr_nodes + 1) * sizeof(*np));
	__s32 *st = malloc((npages + 1) * sizeof(*st));
	__u64 *addrs = malloc((npages + 1) * sizeof(*addrs));
	size_t done = 0, calls = 0;
	struct numaplace_query q;
	int bad = 0, ret;
	char what[96];

	if (!runs || !np || !st || !addrs) {
		bad = 1;
		goto out;
	}
	for (size_t i = 0; i <= npages; i++) {
		st[i] = NP_SENTINEL;
		addrs[i] = base + i * c->psz;
	}
	while (done < npages) {
		unsigned long at = base + done * c->psz;

		snprintf(what, sizeof(what), "%s resume cap %u%s call %zu",
			 label, cap,
			 flags & NUMAPLACE_QUERY_AS_SYSCALL ? " as_syscall" :
			 "", calls);
		if (++calls > npages + 1) {
			np_log(c, "%s: no end after %zu calls", what, calls);
			bad++;
			break;
		}
		for (__u32 i = 0; i <= c->nr_nodes; i++)
			np[i] = NP_NODE_FILL;
		memset(runs, 0xa5, (cap + 1) * sizeof(*runs));
		ret = np_query_range(c->fd, c->pid, flags, at,
				     (npages - done) * c->psz, runs, cap,
				     st + done, np, c->nr_nodes, &q);
		if (ret) {
			np_log(c, "%s: ioctl %d (%s)", what, ret,
			       strerror(-ret));
			bad++;
			break;
		}
		if (!q.done || q.done > npages - done ||
		    (q.done < npages - done && q.nr_runs != cap)) {
			np_log(c, "%s: done %llu of %zu with %u of %u runs",
			       what, (unsigned long long)q.done,
			       npages - done, q.nr_runs, cap);
			bad++;
			break;
		}
		bad += np_check_runs(c, what, &q, runs, at, st + done, NULL);
		bad += np_check_totals(c, what, &q, st + done, q.done, np);
		if (!np_all_bytes(&runs[cap], sizeof(*runs), 0xa5)) {
			np_log(c, "%s: wrote past runs_cap", what);
			bad++;
		}
		done += q.done;
	}
	if (done == npages) {
		snprintf(what, sizeof(what), "%s resume cap %u%s", label, cap,
			 flags & NUMAPLACE_QUERY_AS_SYSCALL ? " as_syscall" :
			 "");
		bad += np_cmp_status(c, what, addrs, exp, st, npages, NULL);
	}
out:
	free(runs);
	free(np);
	free(st);
	free(addrs);
	return bad;
}

int np_ctx_init(struct np_ctx *c, int fd, int pid)
{
	struct numaplace_info info;
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->pid = pid;
	c->psz = sysconf(_SC_PAGESIZE);
	c->new_kernel = np_kernel_is_new();
	ret = np_get_info(fd, &info);
	if (ret)
		return ret;
	c->nr_nodes = info.nr_node_ids;
	return c->new_kernel < 0 ? -EINVAL : 0;
}

void np_migrate_init(struct numaplace_migrate *m, int pid,
		     __u32 flags, __u32 policy)
{
	memset(m, 0, sizeof(*m));
	m->size = sizeof(*m);
	m->flags = flags;
	m->pid = pid;
	m->policy = policy;
}

int np_migrate(int fd, struct numaplace_migrate *m)
{
	return np_ioctl(fd, NUMAPLACE_IOC_MIGRATE, m);
}

int np_migrate_node(int fd, int pid, __u32 flags, __u64 start,
		    __u64 len, int node, __s32 *status,
		    struct numaplace_migrate *m)
{
	np_migrate_init(m, pid, flags, NUMAPLACE_POLICY_NODE);
	m->start = start;
	m->len = len;
	m->node = node;
	m->status_ptr = (uintptr_t)status;
	return np_migrate(fd, m);
}

__u32 np_engines_available(const struct numaplace_info *info)
{
	__u32 e = 0;

	if (info->features & NUMAPLACE_FEAT_MIGRATE_KERNEL)
		e |= NUMAPLACE_ENGINE_KERNEL;
	if (info->features & NUMAPLACE_FEAT_MIGRATE_VMA)
		e |= NUMAPLACE_ENGINE_VMA;
	if (info->features & NUMAPLACE_FEAT_MIGRATE_BATCH)
		e |= NUMAPLACE_ENGINE_BATCH;
	return e;
}

__u32 np_vma_engine(__u32 flags, __u32 avail)
{
	if (flags & NUMAPLACE_MIGRATE_ENGINE_VMA)
		return NUMAPLACE_ENGINE_VMA;
	if (flags & NUMAPLACE_MIGRATE_ENGINE_BATCH)
		return NUMAPLACE_ENGINE_BATCH;
	if (flags & NUMAPLACE_MIGRATE_ENGINE_KERNEL)
		return 0;
	if (avail & NUMAPLACE_ENGINE_BATCH)
		return NUMAPLACE_ENGINE_BATCH;
	return avail & NUMAPLACE_ENGINE_VMA;
}

__u32 np_engines_allowed(const struct numaplace_info *info,
			 __u32 flags)
{
	__u32 e = 0;

	if (!(flags & NP_MIG_ENGINE_FLAGS))
		return np_engines_available(info);
	if (flags & NUMAPLACE_MIGRATE_ENGINE_KERNEL)
		e |= NUMAPLACE_ENGINE_KERNEL;
	if (flags & NUMAPLACE_MIGRATE_ENGINE_VMA)
		e |= NUMAPLACE_ENGINE_VMA;
	/* The batched engine hands what it does not move to the kernel's. */
	if (flags & NUMAPLACE_MIGRATE_ENGINE_BATCH)
		e |= NUMAPLACE_ENGINE_BATCH | NUMAPLACE_ENGINE_KERNEL;
	return e & np_engines_available(info);
}

__u64 np_stamp_word(size_t i, __u64 g, size_t k)
{
	__u64 x = (i + 1) * 0x9e3779b97f4a7c15ULL ^ g * 0xc2b2ae3d27d4eb4fULL;

	return x ^ (k * 0x165667b19e3779f9ULL) ^ (x >> 29);
}

long np_pages_not_on(int pid, const char *buf, size_t n,
		     int node, long *first, int *where)
{
	const size_t psz = sysconf(_SC_PAGESIZE);
	__u64 *a = calloc(n, sizeof(*a));
	int *st = calloc(n, sizeof(*st));
	long bad = 0;

	if (!a || !st) {
		free(a);
		free(st);
		return n;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (uintptr_t)buf + i * psz;
	if (np_sys_query(pid, n, a, st)) {
		bad = n;
	} else {
		for (size_t i = 0; i < n; i++) {
			if (st[i] == node)
				continue;
			if (!bad) {
				*first = i;
				*where = st[i];
			}
			bad++;
		}
	}
	free(a);
	free(st);
	return bad;
}

int np_fail_slot(int status)
{
	switch (status) {
	case -ENOMEM:
		return NUMAPLACE_FAIL_ENOMEM;
	case -EBUSY:
		return NUMAPLACE_FAIL_EBUSY;
	case -EACCES:
		return NUMAPLACE_FAIL_EACCES;
	case -EFAULT:
		return NUMAPLACE_FAIL_EFAULT;
	case -ENOENT:
		return NUMAPLACE_FAIL_ENOENT;
	default:
		return NUMAPLACE_FAIL_OTHER;
	}
}

int np_check_mig_counters(struct np_ctx *c, const char *what,
			  const struct numaplace_migrate *m,
			  const __s32 *status, size_t n,
			  int range, __u32 allowed)
{
	__u64 fail[NUMAPLACE_FAIL_MAX] = { 0 }, nfail = 0, sum = 0;
	int bad = 0;

	np_log_start(c);
	for (size_t i = 0; status && i < n; i++) {
		if (status[i] >= 0)
			continue;
		nfail++;
		fail[np_fail_slot(status[i])]++;
	}
	for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++) {
		sum += m->nr_failed[r];
		if (status && m->nr_failed[r] != fail[r]) {
			bad++;
			np_log(c, "%s: nr_failed[%d] %llu, status says %llu",
			       what, r, (unsigned long long)m->nr_failed[r],
			       (unsigned long long)fail[r]);
		}
	}
	if (sum != m->nr_failed_pages) {
		bad++;
		np_log(c, "%s: nr_failed[] add up to %llu, nr_failed_pages %llu",
		       what, (unsigned long long)sum,
		       (unsigned long long)m->nr_failed_pages);
	}
	if (status && m->nr_failed_pages != nfail) {
		bad++;
		np_log(c, "%s: nr_failed_pages %llu, status says %llu", what,
		       (unsigned long long)m->nr_failed_pages,
		       (unsigned long long)nfail);
	}
	if (range && m->nr_moved_pages + m->nr_in_place_pages +
		     m->nr_failed_pages != m->done) {
		bad++;
		np_log(c, "%s: moved %llu + in place %llu + failed %llu != done %llu",
		       what, (unsigned long long)m->nr_moved_pages,
		       (unsigned long long)m->nr_in_place_pages,
		       (unsigned long long)m->nr_failed_pages,
		       (unsigned long long)m->done);
	}
	if (m->nr_moved_folios > m->nr_moved_pages ||
	    !m->nr_moved_folios != !m->nr_moved_pages) {
		bad++;
		np_log(c, "%s: %llu folios moved for %llu pages", what,
		       (unsigned long long)m->nr_moved_folios,
		       (unsigned long long)m->nr_moved_pages);
	}
	if (!m->engines != !m->nr_moved_pages || (m->engines & ~allowed)) {
		bad++;
		np_log(c, "%s: engines %#x (may be %#x) with %llu pages moved",
		       what, m->engines, allowed,
		       (unsigned long long)m->nr_moved_pages);
	}
	return np_log_end(c, what, bad);
}

long np_mempolicy(int mode, int node)
{
	unsigned long mask[NUMAPLACE_NODE_WORDS] = { 0 };
	long ret;

	if (node >= 0)
		mask[node / 64] = 1UL << (node % 64);
	ret = syscall(SYS_set_mempolicy, mode, node >= 0 ? mask : NULL,
		      node >= 0 ? NUMAPLACE_MAX_NODES + 1 : 0);
	return ret < 0 ? -errno : 0;
}

long np_mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int np_isolated(long *anon, long *file)
{
	char line[128];
	FILE *f;

	np_write_str("/proc/sys/vm/stat_refresh", "1");
	f = fopen("/proc/vmstat", "re");
	if (!f)
		return -errno;
	*anon = *file = -1;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "nr_isolated_anon %ld", anon);
		sscanf(line, "nr_isolated_file %ld", file);
	}
	fclose(f);
	return *anon < 0 || *file < 0 ? -ENOENT : 0;
}

long np_meminfo_kb(const char *key)
{
	char line[256];
	long val = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			val = strtol(line + strlen(key) + 1, NULL, 10);
	fclose(f);
	return val;
}

const char *np_cg_file(char *buf, size_t len, const char *cg,
		       const char *file)
{
	snprintf(buf, len, "%s/%s", cg, file);
	return buf;
}

int np_memcg_make(const char *name, char *cg, size_t len)
{
	char f[256];

	if (access(NP_CG_ROOT "/cgroup.controllers", R_OK))
		return -ENOENT;
	np_write_str(NP_CG_ROOT "/cgroup.subtree_control", "+memory");
	snprintf(cg, len, NP_CG_ROOT "/%s", name);
	if (mkdir(cg, 0755) && errno != EEXIST)
		return -errno;
	return access(np_cg_file(f, sizeof(f), cg, "memory.max"), W_OK) ?
	       -ENOENT : 0;
}

int np_memcg_set(const char *cg, const char *file,
		 const char *val)
{
	char f[256];

	return np_write_str(np_cg_file(f, sizeof(f), cg, file), val);
}

long np_memcg_long(const char *cg, const char *file)
{
	char f[256];

	return np_read_long(np_cg_file(f, sizeof(f), cg, file));
}

long np_memcg_key(const char *cg, const char *file,
		  const char *key)
{
	char f[256], k[64];
	long v, ret = -ENOENT;
	FILE *fp = fopen(np_cg_file(f, sizeof(f), cg, file), "re");

	if (!fp)
		return -errno;
	while (fscanf(fp, "%63s %ld", k, &v) == 2)
		if (!strcmp(k, key)) {
			ret = v;
			break;
		}
	fclose(fp);
	return ret;
}

int np_memcg_enter(const char *cg)
{
	return np_memcg_set(cg, "cgroup.procs", "0");
}

int np_memcg_fork(const char *name, char *cg, size_t len,
		  int (*fn)(const char *cg, void *arg), void *arg)
{
	int ret = np_memcg_make(name, cg, len), status;
	pid_t pid;

	if (ret)
		return ret;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		_exit(fn(cg, arg));
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return status;
}

int np_memcg_remove(const char *cg)
{
	for (int i = 0; i < 50; i++) {
		if (!rmdir(cg) || errno == ENOENT)
			return 0;
		usleep(20000);
	}
	return -errno;
}

unsigned int np_time_scale(void)
{
	const char *v = getenv("NP_TEST_TIMEOUT_SCALE");
	long k = v ? strtol(v, NULL, 10) : 1;

	return k < 1 || k > NP_TIMEOUT_SCALE_MAX ? 1 : k;
}
