/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * numaplace: see and change the NUMA placement of a process's pages.
 *
 * The ioctl ABI of /dev/numaplace. Conventions for every command struct
 * (after clone3/openat2 and iommufd):
 *  - it starts with "__u32 size; __u32 flags;": size is sizeof() of the
 *    struct as the caller knows it, flags must hold only known bits;
 *  - all fields are fixed width, user pointers are __u64;
 *  - reserved fields must be zero;
 *  - a caller's struct shorter than the first published version is
 *    -EINVAL; a longer one is accepted when every byte the module does not
 *    know is zero, else -E2BIG; the module writes back at most the size the
 *    caller gave;
 *  - an unknown ioctl is -ENOTTY.
 * Ask NUMAPLACE_IOC_INFO first: it says which ioctls and features this
 * module on this kernel supports.
 */
#ifndef _UAPI_LINUX_NUMAPLACE_H
#define _UAPI_LINUX_NUMAPLACE_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define NUMAPLACE_DEVICE	"/dev/numaplace"
#define NUMAPLACE_ABI_VERSION	1

/* The node masks below are fixed-size: the largest MAX_NUMNODES of any
 * kernel config (CONFIG_NODES_SHIFT <= 10).
 */
#define NUMAPLACE_MAX_NODES	1024
#define NUMAPLACE_NODE_WORDS	(NUMAPLACE_MAX_NODES / 64)

/* Feature bits of numaplace_info.features: set only when the feature
 * works on the running kernel.
 */
#define NUMAPLACE_FEAT_QUERY		(1ULL << 0) /* NUMAPLACE_IOC_QUERY */
#define NUMAPLACE_FEAT_MIGRATE_KERNEL	(1ULL << 1) /* kernel migrate_pages engine */
#define NUMAPLACE_FEAT_MIGRATE_VMA	(1ULL << 2) /* migrate_vma_* engine */
#define NUMAPLACE_FEAT_MIGRATE_BATCH	(1ULL << 3) /* batched engine */
#define NUMAPLACE_FEAT_PTRACE_EXACT	(1ULL << 4) /* exact ptrace check */

enum numaplace_cmd {
	NUMAPLACE_CMD_INFO = 0,
	NUMAPLACE_CMD_MAX,
};

#define NUMAPLACE_TYPE		0xB7

/**
 * struct numaplace_info - NUMAPLACE_IOC_INFO: the handshake
 * @size: in, sizeof(struct numaplace_info) as the caller knows it
 * @flags: in, must be 0
 * @abi_version: out, NUMAPLACE_ABI_VERSION of the module
 * @nr_node_ids: out, the kernel's nr_node_ids (highest possible node + 1)
 * @features: out, NUMAPLACE_FEAT_* that work on this kernel
 * @ioctls: out, bit (1 << NUMAPLACE_CMD_x) for each supported ioctl
 * @page_size: out, the kernel's PAGE_SIZE in bytes
 * @reserved0: must be 0
 * @node_online: out, bitmap of online nodes (bit n of word n / 64)
 * @node_memory: out, bitmap of nodes with memory (N_MEMORY)
 * @reserved: must be 0
 */
struct numaplace_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 nr_node_ids;
	__u64 features;
	__u64 ioctls;
	__u32 page_size;
	__u32 reserved0;
	__u64 node_online[NUMAPLACE_NODE_WORDS];
	__u64 node_memory[NUMAPLACE_NODE_WORDS];
	__u64 reserved[4];
};
#define NUMAPLACE_INFO_SIZE_VER0	328

#define NUMAPLACE_IOC_INFO	_IO(NUMAPLACE_TYPE, NUMAPLACE_CMD_INFO)

#endif /* _UAPI_LINUX_NUMAPLACE_H */
