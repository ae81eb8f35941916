/* SPDX-License-Identifier: BSD-3-Clause
 * mdp3_feed.h compiles on its own (first include).
 */
#include "mdp3_feed.h"

int header_mdp3_feed_alone(void);

int
header_mdp3_feed_alone(void)
{
	struct mdp3_routes routes;

	if (mdp3_routes_init(&routes, true) != 0)
		return -1;
	return (int)MDP3_FEED_COUNT;
}
