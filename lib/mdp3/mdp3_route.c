/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Route table: which destination group (and port) carries which stream of
 * which feed.  A linear scan of at most MDP3_ROUTES_MAX entries picks the
 * most specific match; tables are tiny and read once per datagram by tools,
 * while the appliance knows the stream of an rx queue without a lookup.
 */
#include <errno.h>
#include <string.h>

#include "mdp3_feed.h"

static uint32_t
prefix_mask(uint8_t len)
{
	return len == 0 ? 0 : UINT32_MAX << (32 - len);
}

int
mdp3_routes_init(struct mdp3_routes *routes, bool defaults)
{
	struct mdp3_route a = {
		.group = MDP3_ROUTE_DEFAULT_A_GROUP, .prefix_len = MDP3_ROUTE_DEFAULT_PREFIX,
		.stream = MDP3_STREAM_INCREMENTAL, .feed = MDP3_FEED_A,
	};
	struct mdp3_route b = {
		.group = MDP3_ROUTE_DEFAULT_B_GROUP, .prefix_len = MDP3_ROUTE_DEFAULT_PREFIX,
		.stream = MDP3_STREAM_INCREMENTAL, .feed = MDP3_FEED_B,
	};

	if (routes == NULL)
		return -EINVAL;
	memset(routes, 0, sizeof(*routes));
	if (defaults) {
		routes->route[0] = a;
		routes->route[1] = b;
		routes->count = 2;
	}
	return 0;
}

int
mdp3_routes_add(struct mdp3_routes *routes, const struct mdp3_route *route)
{
	struct mdp3_route r;
	uint32_t i;

	if (routes == NULL || route == NULL || route->prefix_len > 32 ||
			route->stream >= MDP3_STREAM_COUNT || route->feed >= MDP3_FEED_COUNT)
		return -EINVAL;
	r = *route;
	r.group &= prefix_mask(r.prefix_len);
	for (i = 0; i < routes->count; i++) {
		struct mdp3_route *o = &routes->route[i];

		if (o->group == r.group && o->prefix_len == r.prefix_len && o->port == r.port) {
			*o = r;
			return 0;
		}
	}
	if (routes->count >= MDP3_ROUTES_MAX)
		return -ENOSPC;
	routes->route[routes->count++] = r;
	return 0;
}

int
mdp3_routes_remove(struct mdp3_routes *routes, enum mdp3_stream stream,
		enum mdp3_feed_id feed)
{
	uint32_t i, kept = 0;
	int removed = 0;

	if (routes == NULL)
		return -EINVAL;
	for (i = 0; i < routes->count; i++) {
		if (routes->route[i].stream == stream && routes->route[i].feed == feed) {
			removed++;
			continue;
		}
		routes->route[kept++] = routes->route[i];
	}
	routes->count = kept;
	return removed;
}

int
mdp3_routes_match(const struct mdp3_routes *routes, uint32_t ip, uint16_t port,
		struct mdp3_route *out)
{
	const struct mdp3_route *best = NULL;
	uint32_t i;

	if (routes == NULL)
		return -EINVAL;
	for (i = 0; i < routes->count && i < MDP3_ROUTES_MAX; i++) {
		const struct mdp3_route *r = &routes->route[i];

		if ((ip & prefix_mask(r->prefix_len)) != r->group)
			continue;
		if (r->port != 0 && r->port != port)
			continue;
		if (best == NULL || r->prefix_len > best->prefix_len ||
				(r->prefix_len == best->prefix_len && best->port == 0 &&
				 r->port != 0))
			best = r;
	}
	if (best == NULL)
		return -ENOENT;
	if (out != NULL)
		*out = *best;
	return 0;
}

/* Unsigned decimal of at most max, digits only; advances *p. */
static int
parse_uint(const char **p, uint32_t max, uint32_t *value)
{
	uint32_t v = 0;
	int digits = 0;

	while (**p >= '0' && **p <= '9') {
		v = v * 10 + (uint32_t)(**p - '0');
		if (v > max || ++digits > 5)
			return -EINVAL;
		(*p)++;
	}
	if (digits == 0)
		return -EINVAL;
	*value = v;
	return 0;
}

int
mdp3_route_parse(const char *text, struct mdp3_route *route)
{
	const char *p = text;
	uint32_t ip = 0, v, len = 32, port = 0;
	int i;

	if (text == NULL || route == NULL)
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		if (parse_uint(&p, 255, &v) < 0)
			return -EINVAL;
		ip = ip << 8 | v;
		if (i < 3 && *p++ != '.')
			return -EINVAL;
	}
	if (*p == '/') {
		p++;
		if (parse_uint(&p, 32, &len) < 0)
			return -EINVAL;
	}
	if (*p == ':') {
		p++;
		if (parse_uint(&p, 65535, &port) < 0 || port == 0)
			return -EINVAL;
	}
	if (*p != '\0')
		return -EINVAL;
	route->group = ip & prefix_mask((uint8_t)len);
	route->prefix_len = (uint8_t)len;
	route->port = (uint16_t)port;
	return 0;
}

const char *
mdp3_feed_name(enum mdp3_feed_id feed)
{
	switch (feed) {
	case MDP3_FEED_A:
		return "A";
	case MDP3_FEED_B:
		return "B";
	default:
		return "?";
	}
}

const char *
mdp3_stream_name(enum mdp3_stream stream)
{
	switch (stream) {
	case MDP3_STREAM_INCREMENTAL:
		return "incremental";
	case MDP3_STREAM_SNAPSHOT:
		return "snapshot";
	case MDP3_STREAM_DEFINITION:
		return "definition";
	default:
		return "?";
	}
}
