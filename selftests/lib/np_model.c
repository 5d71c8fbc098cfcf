// SPDX-License-Identifier: GPL-2.0
/*
 * The model of what move_pages(2) answers for a page, from /proc and
 * sysfs (np_test.h, "The model"): the VMAs from smaps, the entries from
 * pagemap, the frames' flags from kpageflags and their nodes from the
 * memory blocks. Part of the tests' library, like np_test.c.
 */
#include <sys/mman.h>

#include "np_test.h"

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
