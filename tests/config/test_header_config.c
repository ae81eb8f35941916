/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tw_config.h compiles on its own (first include, nothing before it).
 */
#include "tw_config.h"

int main(void)
{
	struct tw_cfg_findings findings;

	tw_cfg_findings_init(&findings);
	return findings.count == 0 && tw_cfg_role_is_hot(TW_CFG_ROLE_DECODE) ? 0 : 1;
}
