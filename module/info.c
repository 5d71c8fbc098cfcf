// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the features INFO reports, each probed on this kernel.
 */
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/stddef.h>

#include "numaplace.h"
#include "access.h"

/* Each feature bit is set only when that feature works on this kernel. */
u64 np_features(void)
{
	u64 features = NUMAPLACE_FEAT_QUERY; /* inline accessors and exports only */

	if (np_target_exact())
		features |= NUMAPLACE_FEAT_PTRACE_EXACT;
	features |= np_engines_features();
	if (np_watch_supported())
		features |= NUMAPLACE_FEAT_WATCH;
	return features | np_access_features();
}
