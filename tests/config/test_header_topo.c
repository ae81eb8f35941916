/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tw_topo.h compiles on its own (first include, nothing before it).
 */
#include "tw_topo.h"

int main(void)
{
	struct tw_topo_opts opts = { .source = TW_TOPO_SOURCE_SYNTHETIC, .arg = "pack:1 pu:2" };
	struct tw_topo *topo = tw_topo_open(&opts);
	int ok = topo != NULL && tw_topo_numa_nodes(topo) == 1;

	tw_topo_close(topo);
	return ok ? 0 : 1;
}
