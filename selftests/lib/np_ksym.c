// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's text as the module's ksyms.c sees it, read independently:
 * an internal's address from /proc/kallsyms, its first four bytes from
 * /proc/kcore (an ELF core: each PT_LOAD segment maps kernel addresses to
 * file offsets). On a kernel built with IBT an internal is safe to call
 * indirectly only if it starts with an ENDBR64; objtool seals the ENDBR of
 * a function whose address is never taken, and which ones those are is a
 * property of the build, not of the version (target.c simulate_ibt).
 * Root only (kallsyms shows zeros otherwise, kcore needs CAP_SYS_RAWIO).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "np_test.h"

#define NP_ENDBR64 0xfa1e0ff3U	/* f3 0f 1e fa, as ksyms.c checks it */

/*
 * Taken as a function pointer by the kernel itself (migrate_pages()'s
 * new_folio_t in mm/mempolicy.c): never sealed, so its ENDBR64 tells a
 * build with IBT from one without.
 */
#define NP_KSYM_ADDRESS_TAKEN "alloc_migration_target"

/*
 * A function's address from /proc/kallsyms, as kallsyms_lookup_name()
 * finds it: the first line of that name (the lowest address), text or
 * weak. 0, or -ENOENT, -EACCES (kptr_restrict shows zeros), -EIO.
 */
static int np_ksym_addr(const char *name, unsigned long *addr)
{
	size_t len = 0, want = strlen(name);
	char *line = NULL, *sym;
	unsigned long a;
	int ret = -ENOENT;
	char type;
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	/* "ADDR TYPE NAME[\t[MODULE]]\n"; a name may be KSYM_NAME_LEN long */
	while (getline(&line, &len, f) > 0) {
		int off = 0;

		if (sscanf(line, "%lx %c %n", &a, &type, &off) != 2 || !off ||
		    !strchr("tTwW", type))
			continue;
		sym = line + off;
		if (strncmp(sym, name, want) || !strchr("\t\n", sym[want]))
			continue;	/* "\t\n" has a NUL too: the last line */
		ret = a ? 0 : -EACCES;
		*addr = a;
		break;
	}
	if (ret == -ENOENT && ferror(f))
		ret = -EIO;
	free(line);
	fclose(f);
	return ret;
}

/* Four bytes of kernel memory at @addr through /proc/kcore. */
static int np_kcore_word(unsigned long addr, uint32_t *word)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, ret = -ERANGE;	/* no segment holds it */

	fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph)) {
		ret = -EIO;
		goto out_close;
	}
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph),
			  eh.e_phoff + (off_t)i * sizeof(ph)) != sizeof(ph)) {
			ret = -EIO;
			break;
		}
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr ||
		    addr - ph.p_vaddr + sizeof(*word) > ph.p_filesz)
			continue;
		ret = pread(fd, word, sizeof(*word),
			    ph.p_offset + (addr - ph.p_vaddr)) == sizeof(*word) ?
		      0 : -EIO;
		break;
	}
out_close:
	close(fd);
	return ret;
}

/* The first four bytes of text symbol @name: 0, or -ENOENT, -errno. */
static int np_ksym_word(const char *name, uint32_t *word)
{
	unsigned long addr;
	int ret = np_ksym_addr(name, &addr);

	return ret ? ret : np_kcore_word(addr, word);
}

int np_ksym_endbr(const char *name)
{
	uint32_t word;
	int ret = np_ksym_word(name, &word);

	if (ret == -ENOENT)
		return 0;	/* not there: ksyms.c resolves nothing either */
	return ret ? ret : word == NP_ENDBR64;
}

int np_kernel_ibt(void)
{
	uint32_t word;
	int ret = np_ksym_word(NP_KSYM_ADDRESS_TAKEN, &word);

	return ret ? ret : word == NP_ENDBR64;
}
