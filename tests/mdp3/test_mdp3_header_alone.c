/* SPDX-License-Identifier: BSD-3-Clause
 * Each public header of lib/mdp3 and lib/pcap compiles on its own: mdp3.h is
 * the first include of this file, tw_pcap.h of test_tw_pcap.c.
 */
#include "mdp3.h"

#include "tw_test.h"

static void
test_mdp3_header_alone(void **state)
{
	struct mdp3_walker w;

	(void)state;
	assert_int_equal(mdp3_walker_init(&w, NULL, NULL), 0);
	assert_ptr_equal(w.dict, &mdp3_dictionary_cme);
	assert_int_equal(mdp3_walker_init(NULL, NULL, NULL), -EINVAL);
	assert_int_equal(mdp3_walk_packet(&w, NULL, 5), -EINVAL);
	assert_int_equal(mdp3_walk_packet(&w, NULL, 0), -EBADMSG);
	assert_int_equal(w.counters.reason[MDP3_REASON_SHORT_PACKET], 1);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mdp3_header_alone),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
