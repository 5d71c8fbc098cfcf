// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the knobs an operator turns without reloading the module
 * (netlink CONFIG_SET). Readers take a snapshot with READ_ONCE() per call.
 */
#include <linux/mutex.h>

#include "numaplace.h"

struct np_config np_config = {
	.engine = NUMAPLACE_CONFIG_ENGINE_AUTO,
	.batch_pages = NP_BATCH_PAGES_DEFAULT,
};

/* Serialises CONFIG_SET so that a multi-knob update is applied whole. */
DEFINE_MUTEX(np_config_mutex);
