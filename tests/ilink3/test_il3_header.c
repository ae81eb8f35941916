/* SPDX-License-Identifier: BSD-3-Clause */
/* ilink3.h compiles on its own: it is the first and only include. */
#include "ilink3.h"

int
main(void)
{
	struct il3_order order = { .quantity = 1 };
	struct il3_journal_record rec = { .next_out_seq = 1 };

	return (order.quantity == 1 && rec.next_out_seq == 1 &&
		il3_state_name(IL3_STATE_ESTABLISHED) != NULL) ? 0 : 1;
}
