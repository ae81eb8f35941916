/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire.cfg: every kind of bad file is refused with the right file, line
 * and reason (one test per kind); cross-file checks; the shipped profiles
 * load; the EAL argument vector.
 */
#include "cfg_fixture.h"

#define CFG "tickwire.cfg"

static void good_profile_loads(void **state)
{
	struct fx *fx = fx_new();
	struct tw_cfg *cfg;

	(void)state;
	cfg = fx_expect_ok(fx);
	assert_int_equal(cfg->lcores[TW_CFG_ROLE_DECODE].id, 3);
	assert_int_equal(cfg->lcores[TW_CFG_ROLE_DECODE].line,
			 fx_line_of(fx->config_text, "decode = 3"));
	assert_int_equal(cfg->topology, TW_CFG_TOPOLOGY_TWO_STAGE);
	assert_int_equal(cfg->capture_to_decode.type, TW_CFG_QUEUE_BATCHED);
	assert_int_equal(cfg->capture_to_decode.capacity, 4096);
	assert_int_equal(cfg->capture_to_decode.shards, 4);           /* default */
	assert_int_equal(cfg->signal_to_order_out.overflow, TW_CFG_OVERFLOW_FAIL);
	assert_int_equal(cfg->strategy.n_instruments, 2);
	assert_int_equal(cfg->strategy.instruments[1], 2615);
	assert_true(cfg->strategy.enabled);                            /* default */
	assert_int_equal(cfg->risk.max_messages_per_second, 50);
	assert_int_equal(cfg->session.tx_port, 0);
	assert_int_equal(cfg->replay.stop_idle_ms, 100);
	assert_int_equal(cfg->replay.stop_after_packets, 0);
	assert_int_equal(cfg->stats_interval_ms, 1000);                /* default */
	assert_string_equal(cfg->latency_file, "");
	assert_true(cfg->recovery.cancel_on_stale);
	assert_false(cfg->checks.require_dedicated_cores);
	assert_int_equal(cfg->poll.idle_sleep_us, 0);                  /* default: busy-poll */
	assert_int_equal(cfg->poll.idle_polls, 100000);                /* default */
	assert_int_equal(cfg->poll.order_out_idle_sleep_us, -1);       /* default: idle_sleep_us */
	assert_int_equal(cfg->poll.order_out_nice, 0);                 /* default: unchanged */
	fx_free(fx);
}

static void poll_idle_sleep(void **state)
{
	struct fx *fx = fx_new();
	struct tw_cfg *cfg;

	(void)state;
	fx_replace(&fx->config_text, "replay = {",
		   "poll = {\n  idle_sleep_us = 250;\n  idle_polls = 64;\n"
		   "  order_out_idle_sleep_us = 40;\n  order_out_nice = -20;\n};\nreplay = {");
	cfg = fx_expect_ok(fx);
	assert_int_equal(cfg->poll.idle_sleep_us, 250);
	assert_int_equal(cfg->poll.idle_polls, 64);
	assert_int_equal(cfg->poll.order_out_idle_sleep_us, 40);
	assert_int_equal(cfg->poll.order_out_nice, -20);
	/* a note that says what it costs, at the line of idle_sleep_us */
	assert_non_null(fx_find(fx, TW_CFG_INFO, CFG, fx_line_of(fx->config_text, "idle_sleep_us"),
				"the first packet after a quiet spell waits up to 250 us"));
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "replay = {",
		   "poll = {\n  idle_sleep_us = 200000;\n};\nreplay = {");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "idle_sleep_us"),
			"poll.idle_sleep_us = 200000: out of range 0..100000");
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "replay = {", "poll = {\n  idle_polls = 0;\n};\nreplay = {");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "idle_polls"),
			"poll.idle_polls = 0: out of range 1..1000000000");
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "replay = {", "poll = {\n  order_out_nice = -21;\n};\nreplay = {");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "order_out_nice"),
			"poll.order_out_nice = -21: out of range -20..19");
	fx_free(fx);
}

static void syntax_error(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  decode = 3;", "  decode = 3 4;");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "decode = 3 4"), "syntax error");
	fx_free(fx);
}

static void unterminated_comment(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	/* libconfig 1.5 silently drops everything after an open block comment */
	fx_replace(&fx->config_text, "replay = {", "/* replay settings\nreplay = {");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "/* replay"),
			"unterminated /* comment");
	fx_free(fx);
}

static void integer_that_libconfig_would_wrap(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	/* libconfig 1.5 reads 4294967297 as 1 */
	fx_replace(&fx->config_text, "  stop_idle_ms = 100;",
		   "  stop_idle_ms = 100;\n  stop_after_packets = 4294967297;");
	f = fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "stop_after_packets"),
			    "4294967297 does not fit in libconfig's 32-bit int");
	assert_non_null(strstr(f->hint, "4294967297L"));
	fx_free(fx);
}

static void int64_with_suffix_loads(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  stop_idle_ms = 100;",
		   "  stop_idle_ms = 100;\n  stop_after_packets = 4294967297L;");
	assert_int_equal(fx_expect_ok(fx)->replay.stop_after_packets, 4294967297ULL);
	fx_free(fx);
}

static void unknown_setting(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->config_text, "  decode = 3;", "  decdoe = 3;");
	f = fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "decdoe"),
			    "unknown setting lcores.decdoe");
	assert_non_null(strstr(f->hint, "lcores.decode"));
	/* and decode is now missing */
	assert_non_null(fx_find(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "lcores = {"),
				"missing required setting lcores.decode"));
	fx_free(fx);
}

static void unknown_group(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->config_text, "arbitration = {", "arbitraton = {");
	f = fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "arbitraton"),
			    "unknown setting arbitraton");
	assert_non_null(strstr(f->hint, "arbitration"));
	fx_free(fx);
}

static void missing_required_setting(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  max_position = 10;", "");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "risk = {"),
			"missing required setting risk.max_position");
	fx_free(fx);
}

static void missing_required_group(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "session = {", "");
	fx_replace(&fx->config_text, "  file = \"tw-test.session\";", "");
	fx_replace(&fx->config_text, "  tx_port = \"a\";", "");
	fx_replace(&fx->config_text, "};\nreplay = {", ""); /* the group's closing line */
	fx_expect_error(fx, CFG, 0, "missing required setting session.file (no group session)");
	fx_free(fx);
}

static void out_of_range(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  decode = 3;", "  decode = 200;");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "decode = 200"),
			"lcores.decode = 200: out of range 0..127");
	fx_free(fx);
}

static void wrong_type(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "    capacity = 1024;", "    capacity = \"1024\";");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "capacity = \"1024\""),
			"handoff.signal_to_order_out.capacity = \"1024\": expected an integer, "
			"found a string");
	fx_free(fx);
}

static void float_not_integer(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  imbalance_numerator = 3;", "  imbalance_numerator = 1.5;");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "imbalance_numerator"),
			"expected an integer, found a floating-point number");
	fx_free(fx);
}

static void bad_queue_type(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->config_text, "    type = \"batched\";", "    type = \"ring\";");
	f = fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "\"ring\""),
			    "handoff.capture_to_decode.type = \"ring\": not a known value");
	assert_non_null(strstr(f->hint, "\"rte_ring\""));
	fx_free(fx);
}

static void capacity_not_power_of_two(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->config_text, "    capacity = 4096;", "    capacity = 3000;");
	f = fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "3000"), "not a power of two");
	assert_non_null(strstr(f->hint, "4096"));
	fx_free(fx);
}

static void rte_ring_only_for_capture(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "    type = \"bqueue\";", "    type = \"rte_ring\";");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "\"rte_ring\""),
			"only the capture -> decode hand-off can be an rte_ring");
	fx_free(fx);
}

static void blocking_overflow(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "    overflow = \"drop\";", "    overflow = \"block\";");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "\"block\""),
			"overflow = \"block\": the sender would stall");
	fx_free(fx);
}

static void bad_topology(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "topology = \"two-stage\";", "topology = \"pipeline\";");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "pipeline"),
			"topology = \"pipeline\": not a known value");
	fx_free(fx);
}

static void duplicate_lcore(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  order_out = 4;", "  order_out = 2;");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "order_out = 2"),
			"lcores.order_out = 2: lcore 2 already runs capture_b");
	fx_free(fx);
}

/* One capture lcore may drain both feeds (capture_b = capture_a); any
 * other pair of roles on one lcore stays an error. */
static void one_capture_lcore(void **state)
{
	struct fx *fx = fx_new();
	struct tw_cfg *cfg;

	(void)state;
	fx_replace(&fx->config_text, "  capture_b = 2;", "  capture_b = 1;");
	cfg = fx_expect_ok(fx);
	assert_int_equal(cfg->lcores[TW_CFG_ROLE_CAPTURE_A].id, 1);
	assert_int_equal(cfg->lcores[TW_CFG_ROLE_CAPTURE_B].id, 1);
	fx_free(fx);
	fx = fx_new();
	fx_replace(&fx->config_text, "  capture_b = 2;", "  capture_b = 3;");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "  decode = 3"),
			"lcores.decode = 3: lcore 3 already runs capture_b");
	fx_free(fx);
}

static void lcore_not_in_eal(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  decode = 3;", "  decode = 9;");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "decode = 9"),
			"lcores.decode = 9: not an lcore of eal.lcores \"(0-4)@(0,1)\"");
	fx_free(fx);
}

static void two_stage_needs_captures(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  capture_b = 2;", "");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "lcores = {"),
			"missing lcores.capture_b, required by topology \"two-stage\"");
	fx_free(fx);
}

static void one_thread_without_captures(void **state)
{
	struct fx *fx = fx_new();
	struct tw_cfg *cfg;

	(void)state;
	fx_replace(&fx->config_text, "topology = \"two-stage\";", "topology = \"one-thread\";");
	fx_replace(&fx->config_text, "  capture_b = 2;", "");
	cfg = fx_expect_ok(fx);
	assert_int_equal(cfg->topology, TW_CFG_TOPOLOGY_ONE_THREAD);
	assert_false(tw_cfg_role_used(cfg, TW_CFG_ROLE_CAPTURE_A));
	assert_int_equal(cfg->lcores[TW_CFG_ROLE_CAPTURE_B].id, -1);
	/* capture_a is still set: an info note, not an error */
	assert_non_null(fx_find(fx, TW_CFG_INFO, CFG, fx_line_of(fx->config_text, "capture_a"),
				"not used by topology \"one-thread\""));
	fx_free(fx);
}

static void two_stage_feeds_share_a_queue(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "port = b", "port = a");
	fx_expect_error(fx, "ports.ini", fx_line_of(fx->ports_text, "[feed.incr_b]") + 6,
			"[feed.incr_b] (B) arrives on port a rx queue 0, which capture A polls");
	/* the one-thread topology polls both itself: fine */
	fx_replace(&fx->config_text, "topology = \"two-stage\";", "topology = \"one-thread\";");
	fx_expect_ok(fx);
	fx_free(fx);
}

static void inline_secret(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->config_text, "  file = \"tw-test.session\";",
		   "  file = \"tw-test.session\";\n  secret_key = \"dGhpcyBpcyBzZWNyZXQ\";");
	f = fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "secret_key"),
			    "session.secret_key: inline credentials are refused");
	assert_null(strstr(f->message, "dGhpcyBpcyBzZWNyZXQ"));
	assert_non_null(strstr(f->hint, "credentials_file"));
	fx_free(fx);
}

static void readable_credentials_file(void **state)
{
	struct fx *fx = fx_new();
	char path[192], line[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/credentials", fx->dir);
	fx_write(path, "not a real key\n");
	assert_int_equal(chmod(path, 0644), 0);
	snprintf(line, sizeof(line), "  credentials_file = \"%s\";", path);
	fx_replace(&fx->config_text, "  tx_port = \"a\";", line);
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "credentials_file"),
			"mode 0644 lets other users read the keys");
	assert_int_equal(chmod(path, 0600), 0);
	fx_expect_ok(fx);
	fx_free(fx);
}

static void session_gateway(void **state)
{
	struct fx *fx = fx_new();
	struct tw_cfg *cfg;

	(void)state;
	cfg = fx_expect_ok(fx);
	assert_string_equal(cfg->session.gateway_host, "");        /* defaults */
	assert_int_equal(cfg->session.gateway_port, 0);
	assert_int_equal(cfg->session.keep_alive_ms, 5000);
	fx_replace(&fx->config_text, "  tx_port = \"a\";",
		   "  tx_port = \"a\";\n  gateway_host = \"127.0.0.1\";\n"
		   "  gateway_port = 9563;\n  session_id = \"TWS\";\n  firm_id = \"001\";\n"
		   "  keep_alive_ms = 1000;");
	cfg = fx_expect_ok(fx);
	assert_string_equal(cfg->session.gateway_host, "127.0.0.1");
	assert_int_equal(cfg->session.gateway_line, fx_line_of(fx->config_text, "gateway_host"));
	assert_int_equal(cfg->session.gateway_port, 9563);
	assert_string_equal(cfg->session.session_id, "TWS");
	assert_string_equal(cfg->session.firm_id, "001");
	assert_int_equal(cfg->session.keep_alive_ms, 1000);
	/* fx_replace swaps whole lines */
	fx_replace(&fx->config_text, "\"127.0.0.1\"", "  gateway_host = \"gateway.cme\";");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "gateway_host"),
			"session.gateway_host = \"gateway.cme\": not an IPv4 address");
	fx_replace(&fx->config_text, "\"gateway.cme\"", "  gateway_host = \"127.0.0.1\";");
	fx_replace(&fx->config_text, "gateway_port = 9563", "  gateway_port = 70000;");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "gateway_port"),
			"session.gateway_port = 70000: out of range 0..65535");
	fx_replace(&fx->config_text, "gateway_port = 70000", "  gateway_port = 9563;");
	fx_replace(&fx->config_text, "\"TWS\"", "  session_id = \"TWSX\";");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "session_id"), "session.session_id");
	fx_free(fx);
}

static void ratio_not_above_one(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  imbalance_numerator = 3;", "  imbalance_numerator = 2;");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "imbalance_numerator"),
			"= 2/2: the ratio must exceed 1");
	fx_free(fx);
}

static void duplicate_instrument(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  instruments = [ 13950, 2615 ];",
		   "  instruments = [ 13950, 2615, 13950 ];");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "instruments"),
			"13950 is listed twice");
	fx_free(fx);
}

static void order_above_risk_limit(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  order_qty = 1;", "  order_qty = 8;");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "max_order_qty"),
			"risk.max_order_qty = 5: below strategy.order_qty = 8");
	fx_free(fx);
}

static void unbounded_gap_wait(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  gap_wait_packets = 64;", "  gap_wait_packets = 0;");
	fx_replace(&fx->config_text, "  gap_wait_us = 500;", "  gap_wait_us = 0;");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "arbitration = {"),
			"a gap would wait forever");
	fx_free(fx);
}

static void tx_port_missing(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  tx_port = \"a\";", "  tx_port = \"orders\";");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "tx_port"),
			"session.tx_port = \"orders\": no [port.orders]");
	fx_free(fx);
}

static void orders_have_nowhere_to_go(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  tx_port = \"a\";", "");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "session = {"),
			"neither credentials_file nor tx_port");
	fx_free(fx);
}

static void snapshot_recovery_without_snapshot_feed(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "  mode = \"none\";", "  mode = \"snapshot\";");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "\"snapshot\""),
			"channel 310 has no snapshot feed");
	fx_free(fx);
}

static void recovery_and_book_settings(void **state)
{
	struct fx *fx = fx_new();
	struct tw_cfg *cfg;

	(void)state;
	/* defaults: join "auto" is trust without snapshot recovery */
	cfg = fx_expect_ok(fx);
	assert_int_equal(cfg->recovery.join, TW_CFG_JOIN_TRUST);
	assert_int_equal(cfg->recovery.on_loss, TW_CFG_ON_LOSS_RPT_SEQ);
	assert_int_equal(cfg->recovery.buffer_packets, 1024);
	assert_int_equal(cfg->book.publish, TW_CFG_PUBLISH_END_OF_EVENT);
	assert_int_equal(cfg->book.max_instruments, 1024);
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "  mode = \"none\";",
		   "  mode = \"none\";\n  join = \"recover\";\n  on_loss = \"stale_all\";\n"
		   "  buffer_packets = 4096;\n};\nbook = {\n  publish = \"packet\";\n"
		   "  max_instruments = 64;");
	cfg = fx_expect_ok(fx);
	assert_int_equal(cfg->recovery.join, TW_CFG_JOIN_RECOVER);
	assert_int_equal(cfg->recovery.on_loss, TW_CFG_ON_LOSS_STALE_ALL);
	assert_int_equal(cfg->recovery.buffer_packets, 4096);
	assert_int_equal(cfg->book.publish, TW_CFG_PUBLISH_PACKET);
	assert_int_equal(cfg->book.max_instruments, 64);
	/* recover without snapshots: books first seen mid-stream stay stale */
	assert_non_null(fx_find(fx, TW_CFG_WARNING, CFG,
				fx_line_of(fx->config_text, "join = "), "stays stale"));
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "  mode = \"none\";",
		   "  mode = \"none\";\n  join = \"late\";");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "join = "),
			"recovery.join = \"late\": not a known value");
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "  mode = \"none\";",
		   "  mode = \"none\";\n};\nbook = {\n  publish = \"never\";");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "publish = "),
			"book.publish = \"never\"");
	fx_free(fx);
}

/* book.mbo: per channel, its bounds, the channels checked against ports.ini;
 * strategy.queue_max_ahead. */
static void mbo_settings(void **state)
{
	struct fx *fx = fx_new();
	struct tw_cfg *cfg;

	(void)state;
	cfg = fx_expect_ok(fx);
	assert_int_equal(cfg->book.mbo.n_channels, 0);      /* off by default */
	assert_int_equal(cfg->book.mbo.instruments, 64);
	assert_int_equal(cfg->book.mbo.orders, 4096);
	assert_int_equal(cfg->book.mbo.levels, 1024);
	assert_int_equal(cfg->book.mbo.diffs, 16);
	assert_false(cfg->book.mbo.presize);
	assert_int_equal(cfg->strategy.queue_max_ahead, 0);
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "  mode = \"none\";",
		   "  mode = \"none\";\n};\nbook = {\n  mbo = {\n    channels = [ 310 ];\n"
		   "    instruments = 8;\n    orders = 100000;\n    levels = 64;\n"
		   "    diffs = 0;\n    presize = true;\n  };");
	fx_replace(&fx->config_text, "  instruments = [ 13950, 2615 ];",
		   "  instruments = [ 13950, 2615 ];\n  queue_max_ahead = 25;");
	cfg = fx_expect_ok(fx);
	assert_int_equal(cfg->book.mbo.n_channels, 1);
	assert_int_equal(cfg->book.mbo.channels[0], 310);
	assert_int_equal(cfg->book.mbo.instruments, 8);
	assert_int_equal(cfg->book.mbo.orders, 100000);
	assert_int_equal(cfg->book.mbo.levels, 64);
	assert_int_equal(cfg->book.mbo.diffs, 0);
	assert_true(cfg->book.mbo.presize);
	assert_int_equal(cfg->strategy.queue_max_ahead, 25);
	fx_free(fx);

	/* a channel ports.ini has no incremental feed for */
	fx = fx_new();
	fx_replace(&fx->config_text, "  mode = \"none\";",
		   "  mode = \"none\";\n};\nbook = {\n  mbo = {\n    channels = [ 310, 344 ];\n  };");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "channels = "),
			"book.mbo.channels: channel 344 has no incremental feed");
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "  mode = \"none\";",
		   "  mode = \"none\";\n};\nbook = {\n  mbo = {\n    channels = [ 310, 310 ];\n  };");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "channels = "),
			"book.mbo.channels: 310 is listed twice");
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "  mode = \"none\";",
		   "  mode = \"none\";\n};\nbook = {\n  mbo = {\n    orders = 8;\n  };");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "orders = 8"),
			"book.mbo.orders = 8: out of range 16..16777216");
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "  mode = \"none\";",
		   "  mode = \"none\";\n};\nbook = {\n  mbo = {\n    presize = 1;\n  };");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "presize = 1"),
			"book.mbo.presize");
	fx_free(fx);

	fx = fx_new();
	fx_replace(&fx->config_text, "  mode = \"none\";",
		   "  mode = \"none\";\n};\nbook = {\n  mbo = {\n    channel = [ 310 ];\n  };");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "channel = "),
			"unknown setting book.mbo.channel");
	fx_free(fx);
}

static void include_refused(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "# test profile", "@include \"other.cfg\"");
	fx_expect_error(fx, CFG, 1, "directive @include is not supported");
	fx_free(fx);
}

static void group_where_value_expected(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->config_text, "topology = \"two-stage\";", "topology = { x = 1; };");
	fx_expect_error(fx, CFG, fx_line_of(fx->config_text, "topology ="),
			"topology: expected a string, found a group");
	fx_free(fx);
}

static void load_profile(const char *name, bool expect_pci)
{
	char ports[512], config[512], rel[128], line[1024];
	struct tw_cfg_findings *findings = calloc(1, sizeof(*findings));
	struct tw_cfg *cfg;
	uint32_t i;

	assert_non_null(findings);
	snprintf(rel, sizeof(rel), "dpdk-config/%s/ports.ini", name);
	fx_source_path(ports, sizeof(ports), rel);
	snprintf(rel, sizeof(rel), "dpdk-config/%s/tickwire.cfg", name);
	fx_source_path(config, sizeof(config), rel);
	cfg = tw_cfg_load(ports, config, findings);
	if (cfg == NULL) {
		for (i = 0; i < findings->count; i++) {
			tw_cfg_finding_format(&findings->item[i], line, sizeof(line));
			print_message("  %s\n", line);
		}
		fail_msg("profile %s refused", name);
	}
	assert_int_equal(findings->errors, 0);
	assert_int_equal(cfg->ports[0].kind, expect_pci ? TW_CFG_PORT_PCI : TW_CFG_PORT_VDEV);
	assert_true(cfg->n_feeds >= 2);
	tw_cfg_free(cfg);
	free(findings);
}

static void demo_profile_loads(void **state)
{
	(void)state;
	load_profile("demo", false);
}

static void colo_example_profile_loads(void **state)
{
	(void)state;
	/* warnings are expected here: /etc/tickwire/ilink3.credentials is not installed */
	load_profile("colo-example", true);
}

static void eal_arguments(void **state)
{
	struct fx *fx = fx_new();
	struct tw_cfg_argv *argv = calloc(1, sizeof(*argv));
	char joined[1024] = "";
	int i;

	(void)state;
	assert_non_null(argv);
	fx_replace(&fx->ports_text, "no_pci = true", "no_pci = true\nargs = -v  --log-level=8");
	assert_int_equal(tw_cfg_eal_argv(fx_expect_ok(fx), "tickwire", argv), 0);
	for (i = 0; i < argv->argc; i++) {
		strcat(joined, i > 0 ? " " : "");
		strcat(joined, argv->argv[i]);
	}
	assert_null(argv->argv[argv->argc]);
	/* -m: (16383 x 2368 + 4 x 1024 x 64 + 128 MiB) rounded up to MiB */
	assert_string_equal(joined, "tickwire --lcores (0-4)@(0,1) --main-lcore 0 "
			    "--file-prefix tw-test --no-huge -m 166 --no-pci --vdev net_null0 "
			    "--vdev net_null1 -v --log-level=8");
	free(argv);
	fx_free(fx);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_profile_loads),
		cmocka_unit_test(poll_idle_sleep),
		cmocka_unit_test(syntax_error),
		cmocka_unit_test(unterminated_comment),
		cmocka_unit_test(integer_that_libconfig_would_wrap),
		cmocka_unit_test(int64_with_suffix_loads),
		cmocka_unit_test(unknown_setting),
		cmocka_unit_test(unknown_group),
		cmocka_unit_test(missing_required_setting),
		cmocka_unit_test(missing_required_group),
		cmocka_unit_test(out_of_range),
		cmocka_unit_test(wrong_type),
		cmocka_unit_test(float_not_integer),
		cmocka_unit_test(bad_queue_type),
		cmocka_unit_test(capacity_not_power_of_two),
		cmocka_unit_test(rte_ring_only_for_capture),
		cmocka_unit_test(blocking_overflow),
		cmocka_unit_test(bad_topology),
		cmocka_unit_test(duplicate_lcore),
		cmocka_unit_test(one_capture_lcore),
		cmocka_unit_test(lcore_not_in_eal),
		cmocka_unit_test(two_stage_needs_captures),
		cmocka_unit_test(one_thread_without_captures),
		cmocka_unit_test(two_stage_feeds_share_a_queue),
		cmocka_unit_test(inline_secret),
		cmocka_unit_test(readable_credentials_file),
		cmocka_unit_test(session_gateway),
		cmocka_unit_test(ratio_not_above_one),
		cmocka_unit_test(duplicate_instrument),
		cmocka_unit_test(order_above_risk_limit),
		cmocka_unit_test(unbounded_gap_wait),
		cmocka_unit_test(tx_port_missing),
		cmocka_unit_test(orders_have_nowhere_to_go),
		cmocka_unit_test(snapshot_recovery_without_snapshot_feed),
		cmocka_unit_test(recovery_and_book_settings),
		cmocka_unit_test(mbo_settings),
		cmocka_unit_test(include_refused),
		cmocka_unit_test(group_where_value_expected),
		cmocka_unit_test(demo_profile_loads),
		cmocka_unit_test(colo_example_profile_loads),
		cmocka_unit_test(eal_arguments),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
