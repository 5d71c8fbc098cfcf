// SPDX-License-Identifier: GPL-2.0
/*
 * The rules every ioctl struct of the ABI keeps (np_test.h, "An ioctl
 * struct's sizes and reserved fields"): each size case in turn in one
 * buffer, and what the answer to it may be; each reserved field set
 * alone, refused. Part of the tests' library, like np_test.c.
 */
#include "np_test.h"

/* Bytes past a struct answered at VER0 that must stay as they were. */
#define NP_SIZE_PAD	64
/* The longer struct: this much longer than the module's. */
#define NP_SIZE_LONGER	1024
/* What fills the bytes nobody may write. */
#define NP_SIZE_FILL	0xa5

int np_size_start(struct np_size *z, size_t known, size_t ver0,
		  size_t stride)
{
	const __u32 shorts[NP_SIZE_SHORTS] = {
		0, 4, 8, 16, 64, ver0 - 8, ver0 - 1,
	};

	memset(z, 0, sizeof(*z));
	memcpy(z->shorts, shorts, sizeof(shorts));
	z->known = known;
	z->ver0 = ver0;
	z->psz = sysconf(_SC_PAGESIZE);
	z->len = known + NP_SIZE_LONGER;
	z->stride = stride;
	z->nr_tail = (NP_SIZE_LONGER + stride - 1) / stride;
	/* A page and more: the largest case is a page of zeroes. */
	z->cap = 2 * z->psz;
	/* The shorts must be short, a byte set in the tail in the tail. */
	if (ver0 <= 64 || ver0 > known || !stride || z->len > z->cap)
		return -EINVAL;
	z->buf = calloc(1, z->cap);
	return z->buf ? 0 : -ENOMEM;
}

/* Set up case @i of the sequence in @z: false past the last. */
static bool np_size_case(struct np_size *z, size_t i)
{
	memset(z->buf, 0, z->cap);
	if (i < NP_SIZE_SHORTS) {
		z->kind = NP_SIZE_SHORT;
		z->name = "short";
		z->size = z->shorts[i];
		z->want = -EINVAL;
		return true;
	}
	i -= NP_SIZE_SHORTS;
	if (i == 0) {
		z->kind = NP_SIZE_VER0;
		z->name = "VER0";
		memset(z->buf + z->ver0, NP_SIZE_FILL, NP_SIZE_PAD);
		z->size = z->ver0;
		z->want = 0;
	} else if (i == 1) {
		z->kind = NP_SIZE_LONG;
		z->name = "longer, zero tail";
		z->size = z->len;
		z->want = 0;
	} else if (i - 2 < z->nr_tail) {
		z->kind = NP_SIZE_TAIL;
		z->name = "longer, a tail byte set";
		z->at = z->known + (i - 2) * z->stride;
		z->buf[z->at] = 1;
		z->size = z->len;
		z->want = -E2BIG;
	} else if (i - 2 - z->nr_tail == 0) {
		z->kind = NP_SIZE_OVER_PAGE;
		z->name = "over a page";
		z->size = z->psz + 8;
		z->want = -E2BIG;
	} else if (i - 2 - z->nr_tail == 1) {
		z->kind = NP_SIZE_PAGE;
		z->name = "a page, zero tail";
		z->size = z->psz;
		z->want = 0;
	} else {
		return false;
	}
	return true;
}

bool np_size_next(struct np_size *z)
{
	if (!np_size_case(z, z->i++))
		return false;
	memcpy(z->buf, &z->size, sizeof(z->size));
	if (z->kind == NP_SIZE_TAIL)
		snprintf(z->what, sizeof(z->what), "size %u (%s: %zu)",
			 z->size, z->name, z->at);
	else
		snprintf(z->what, sizeof(z->what), "size %u (%s)", z->size,
			 z->name);
	return true;
}

int np_size_check(const struct np_size *z, int ret)
{
	__u32 size;
	int bad = 0;

	if (ret != z->want) {
		fprintf(stderr, "# %s: answered %d, not %d\n", z->what, ret,
			z->want);
		return 1;
	}
	if (ret)
		return 0;
	memcpy(&size, z->buf, sizeof(size));
	if (z->kind == NP_SIZE_VER0) {
		/* The caller's size stays; nothing past it is written. */
		if (size != z->ver0) {
			fprintf(stderr, "# %s: size %u back\n", z->what, size);
			bad++;
		}
		if (!np_all_bytes(z->buf + z->ver0, NP_SIZE_PAD,
				  NP_SIZE_FILL)) {
			fprintf(stderr, "# %s: written past it\n", z->what);
			bad++;
		}
		return bad;
	}
	/* Longer: the module's own size back, and the tail left zero. */
	if (size != z->known) {
		fprintf(stderr, "# %s: size %u back, not %zu\n", z->what, size,
			z->known);
		bad++;
	}
	if (!np_all_bytes(z->buf + z->known, z->size - z->known, 0)) {
		fprintf(stderr, "# %s: its tail written\n", z->what);
		bad++;
	}
	return bad;
}

void np_size_end(struct np_size *z)
{
	free(z->buf);
	z->buf = NULL;
}

int np_fields_refused(int fd, unsigned long cmd, const void *ok, size_t len,
		      const struct np_field *f, size_t nr)
{
	char *buf = malloc(len);
	int bad = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		int ret;

		memcpy(buf, ok, len);
		if (f[i].size == sizeof(__u32))
			*(__u32 *)(buf + f[i].off) = f[i].val;
		else
			*(__u64 *)(buf + f[i].off) = f[i].val;
		ret = np_ioctl(fd, cmd, buf);
		if (ret != -EINVAL) {
			fprintf(stderr,
				"# %s %#llx: answered %d, not -EINVAL\n",
				f[i].name, (unsigned long long)f[i].val, ret);
			bad++;
		}
	}
	free(buf);
	return bad;
}
