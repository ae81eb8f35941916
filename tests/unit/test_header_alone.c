/* SPDX-License-Identifier: BSD-3-Clause
 * Every public header compiles on its own: each is included first in a
 * translation unit of its own (this one for act.h).
 */
#include "act.h"

#include "tw_test.h"

static void act_header_alone(void **unused)
{
	struct act_msg m;

	(void)unused;
	act_msg_init(&m, 1, 0);
	assert_int_equal(m.type, 1);
	/* the payload is 16-byte aligned after the header */
	assert_int_equal(offsetof(struct act_msg, payload) % 16, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(act_header_alone),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
