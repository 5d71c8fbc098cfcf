/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: generic netlink. The policy and ops tables and the handlers'
 * prototypes (numaplace_nl_*) are generated from the spec into
 * genl_gen.h; the handlers and the family are in genl.c.
 */
#ifndef _NUMAPLACE_GENL_H
#define _NUMAPLACE_GENL_H

#include <net/genetlink.h>

#include "genl_gen.h"

#endif /* _NUMAPLACE_GENL_H */
