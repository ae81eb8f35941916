/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * ports.ini: every kind of bad file is refused with the right file, line and
 * reason. One test per kind.
 */
#include <arpa/inet.h>

#include "cfg_fixture.h"

#define PORTS "ports.ini"

static void good_profile_loads(void **state)
{
	struct fx *fx = fx_new();
	struct tw_cfg *cfg;

	(void)state;
	cfg = fx_expect_ok(fx);
	assert_int_equal(cfg->n_ports, 2);
	assert_int_equal(cfg->n_feeds, 2);
	assert_string_equal(cfg->ports[1].name, "b");
	assert_int_equal(cfg->ports[1].kind, TW_CFG_PORT_VDEV);
	assert_string_equal(cfg->ports[1].devname, "net_null1");
	assert_int_equal(cfg->ports[0].rx_desc, 1024);                /* default */
	assert_int_equal(cfg->feeds[1].side, TW_CFG_SIDE_B);
	assert_int_equal(cfg->feeds[1].port, 1);
	assert_int_equal(cfg->feeds[1].udp_port, 15310);
	assert_int_equal(cfg->feeds[1].group, htonl(0xe0002001));     /* 224.0.32.1 */
	assert_int_equal(cfg->mempool.mbufs, 16383);
	assert_true(cfg->eal.no_huge);
	assert_true(tw_cfg_lcore_defined(cfg, 4));
	assert_false(tw_cfg_lcore_defined(cfg, 5));
	assert_true(tw_cfg_cpuset_isset(&cfg->eal.lcore_cpus[3], 1));
	assert_int_equal(cfg->eal.lcores_line, fx_line_of(fx->ports_text, "lcores ="));
	fx_free(fx);
}

static void syntax_error(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "cache = 128", "cache 128");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "cache 128"), "syntax error");
	fx_free(fx);
}

static void comment_after_section_header(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "[mempool]", "[mempool] ; the pool");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "[mempool]"), "must end with ']'");
	fx_free(fx);
}

static void backslash_continuation(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "; test profile", "; a comment ending in \\");
	fx_expect_error(fx, PORTS, 1, "backslash");
	fx_free(fx);
}

static void unknown_section(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->ports_text, "[mempool]", "[mempol]");
	f = fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "[mempol]"),
			    "unknown section [mempol]");
	assert_non_null(strstr(f->hint, "[mempool]"));
	fx_free(fx);
}

static void unknown_key(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->ports_text, "vdev = net_null1", "vdev = net_null1\nrx_queus = 1");
	f = fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "rx_queus"),
			    "[port.b] rx_queus: unknown key");
	assert_non_null(strstr(f->hint, "rx_queues"));
	fx_free(fx);
}

static void duplicate_key(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "cache = 128", "cache = 128\ncache = 256");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "cache = 256"), "set twice");
	fx_free(fx);
}

static void duplicate_section(void **state)
{
	struct fx *fx = fx_new();
	char *text;

	(void)state;
	text = malloc(strlen(fx->ports_text) + 64);
	assert_non_null(text);
	strcpy(text, fx->ports_text);
	strcat(text, "[mempool]\nmbufs = 4095\n");
	free(fx->ports_text);
	fx->ports_text = text;
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "mbufs = 4095") - 1,
			"section [mempool] appears twice");
	fx_free(fx);
}

static void missing_required_key(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "udp_port = 15310", "");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "[feed.incr_b]"),
			"missing the required key udp_port");
	fx_free(fx);
}

static void missing_section(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "[eal]", "[mempool_unused]");
	/* the keys of [eal] are now in an unknown section; [eal] itself is missing */
	fx_expect_error(fx, PORTS, 0, "missing section [eal]");
	fx_free(fx);
}

static void out_of_range(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "rx_queues = 1", "rx_queues = 40");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "rx_queues = 40"),
			"[port.a] rx_queues = 40: out of range 0..16");
	fx_free(fx);
}

static void not_an_integer(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "mbufs = 16383", "mbufs = 16k");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "mbufs = 16k"),
			"not a decimal integer");
	fx_free(fx);
}

static void not_a_boolean(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "no_huge = true", "no_huge = yes");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "no_huge"), "not a boolean");
	fx_free(fx);
}

static void bad_lcores(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "lcores = (0-4)@(0,1)", "lcores = (0-4)@(0,1");
	fx_expect_error(fx, PORTS, 3, "[eal] lcores = (0-4)@(0,1:");
	fx_free(fx);
}

static void lcore_mapped_twice(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "lcores = (0-4)@(0,1)", "lcores = 0-4,3@1");
	fx_expect_error(fx, PORTS, 3, "lcore 3 is mapped twice");
	fx_free(fx);
}

static void bad_pci_address(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "no_pci = true", "no_pci = false");
	fx_replace(&fx->ports_text, "vdev = net_null0", "pci = 0000:3b:00.9");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "pci = 0000"),
			"not a PCI address");
	fx_free(fx);
}

/* iniparser unquotes every value: a quoted address is the address (issue 19);
 * tickwire-check prints the canonical form the binding script uses. */
static void quoted_pci_address(void **state)
{
	struct fx *fx = fx_new();
	struct tw_cfg *cfg;

	(void)state;
	fx_replace(&fx->ports_text, "no_pci = true", "no_pci = false");
	fx_replace(&fx->ports_text, "vdev = net_null0", "pci = \"0000:3b:00.0\"");
	fx_replace(&fx->ports_text, "vdev = net_null1", "pci = '3B:00.1'  ; second port");
	cfg = fx_expect_ok(fx);
	assert_int_equal(cfg->ports[0].kind, TW_CFG_PORT_PCI);
	assert_string_equal(cfg->ports[0].device, "0000:3b:00.0");
	assert_string_equal(cfg->ports[0].devname, "0000:3b:00.0");
	assert_int_equal(cfg->ports[1].kind, TW_CFG_PORT_PCI);
	assert_string_equal(cfg->ports[1].device, "0000:3b:00.1");
	assert_int_equal(cfg->ports[1].pci.bus, 0x3b);
	assert_int_equal(cfg->ports[1].pci.function, 1);
	fx_free(fx);
}

/* Quotes around the address do not make a space inside it valid. */
static void quoted_pci_address_with_space(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "no_pci = true", "no_pci = false");
	fx_replace(&fx->ports_text, "vdev = net_null0", "pci = \" 0000:3b:00.0\"");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "pci = \""),
			"pci = \" 0000:3b:00.0\": not a PCI address");
	fx_free(fx);
}

static void pci_and_vdev(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "no_pci = true", "no_pci = false");
	fx_replace(&fx->ports_text, "vdev = net_null0", "pci = 0000:3b:00.0\nvdev = net_null0");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "vdev = net_null0"),
			"has both pci");
	fx_free(fx);
}

static void bad_vdev(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "vdev = net_null0", "vdev = pcap0,rx_pcap=a.pcap");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "vdev = pcap0"),
			"bad device name");
	fx_free(fx);
}

static void same_device_twice(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "vdev = net_null1", "vdev = net_null0");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "[port.b]") + 1,
			"uses device net_null0, already used by [port.a]");
	fx_free(fx);
}

static void no_pci_with_pci_port(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "vdev = net_null0", "pci = 0000:3b:00.0");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "no_pci = true"),
			"no_pci = true, but [port.a] is the PCI device 0000:3b:00.0");
	fx_free(fx);
}

static void feed_names_missing_port(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->ports_text, "port = b", "port = c");
	f = fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "port = c"),
			    "[feed.incr_b] port = c: no section [port.c]");
	assert_non_null(strstr(f->hint, "a, b"));
	fx_free(fx);
}

static void feed_queue_beyond_port(void **state)
{
	struct fx *fx = fx_new();
	char *text;

	(void)state;
	text = fx_edit(fx->ports_text, "rx_queue = 0", "rx_queue = 1");
	free(fx->ports_text);
	fx->ports_text = text;
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "rx_queue = 1"),
			"[feed.incr_a] rx_queue = 1: port a has 1 rx queue");
	fx_free(fx);
}

static void bad_multicast_group(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "group = 224.0.32.1", "group = 10.0.32.1");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "group = 10."),
			"not an IPv4 multicast address");
	fx_free(fx);
}

static void same_stream_twice(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "group = 224.0.32.1", "group = 224.0.31.1");
	fx_replace(&fx->ports_text, "udp_port = 15310", "udp_port = 14310");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "[feed.incr_b]"),
			"receives 224.0.31.1:14310, as [feed.incr_a]");
	fx_free(fx);
}

static void same_side_twice(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "side = b", "side = a");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "[feed.incr_b]"),
			"is incremental feed A of channel 310, as [feed.incr_a]");
	fx_free(fx);
}

static void managed_eal_arg(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->ports_text, "no_pci = true", "no_pci = true\nargs = -v --no-huge");
	f = fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "args ="),
			    "--no-huge is set by its own key");
	assert_non_null(strstr(f->hint, "no_huge"));
	fx_free(fx);
}

static void inline_secret(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->ports_text, "file_prefix = tw-test",
		   "file_prefix = tw-test\npassword = hunter2");
	f = fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "password"),
			    "inline credentials are refused");
	assert_null(strstr(f->message, "hunter2"));
	assert_null(strstr(f->hint, "hunter2"));
	fx_free(fx);
}

static void mempool_below_rx_rings(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "mbufs = 16383", "mbufs = 1023");
	fx_replace(&fx->ports_text, "cache = 128", "cache = 0");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "mbufs = 1023"),
			"the rx rings alone hold 2048");
	fx_free(fx);
}

static void mempool_cache_too_big(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "mbufs = 16383", "mbufs = 511");
	fx_replace(&fx->ports_text, "cache = 128", "cache = 400");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "cache = 400"),
			"cache = 400: more than mbufs / 1.5 (340)");
	fx_free(fx);
}

static void memory_below_estimate(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "no_pci = true", "no_pci = true\nmemory_mb = 64");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "memory_mb"),
			"memory_mb = 64: the mempool and rings need");
	fx_free(fx);
}

static void desc_not_multiple_of_32(void **state)
{
	struct fx *fx = fx_new();

	(void)state;
	fx_replace(&fx->ports_text, "vdev = net_null1", "vdev = net_null1\nrx_desc = 1000");
	fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "rx_desc = 1000"),
			"not a multiple of 32");
	fx_free(fx);
}

static void missing_file(void **state)
{
	struct tw_cfg_findings *findings = calloc(1, sizeof(*findings));
	struct tw_cfg *cfg;

	(void)state;
	assert_non_null(findings);
	cfg = tw_cfg_load("/nonexistent/ports.ini", "/nonexistent/tickwire.cfg", findings);
	assert_null(cfg);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(findings->errors, 2);
	assert_string_equal(findings->item[0].file, "/nonexistent/ports.ini");
	assert_int_equal(findings->item[0].line, 0);
	assert_non_null(strstr(findings->item[0].message, "cannot open"));
	assert_string_equal(findings->item[1].file, "/nonexistent/tickwire.cfg");
	free(findings);
}

static void findings_are_bounded(void **state)
{
	struct fx *fx = fx_new();
	size_t size = strlen(fx->ports_text) + 100 * 24;
	char *text = malloc(size);
	int i;

	(void)state;
	assert_non_null(text);
	strcpy(text, fx->ports_text);
	for (i = 0; i < 100; i++)
		sprintf(text + strlen(text), "bogus_key_%03d = 1\n", i);
	free(fx->ports_text);
	fx->ports_text = text;
	assert_null(fx_load(fx));
	assert_int_equal(fx->findings.count, TW_CFG_MAX_FINDINGS);
	assert_int_equal(fx->findings.errors, 100);
	assert_int_equal(fx->findings.dropped, 100 - TW_CFG_MAX_FINDINGS);
	fx_free(fx);
}

/* [feed.NAME] fault.*: parsed, defaults, and a warning that names them. */
static void fault_keys(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_fault *ft;
	struct tw_cfg *cfg;

	(void)state;
	fx_replace(&fx->ports_text, "udp_port = 15310",
		   "udp_port = 15310\nfault.drop_ppm = 10000\nfault.reorder_ppm = 5\n"
		   "fault.seed = 9007199254740992\nfault.die_after = 700\nfault.last_seq = 90");
	cfg = fx_expect_ok(fx);
	assert_false(cfg->feeds[0].fault.enabled);
	assert_int_equal(cfg->feeds[0].fault.line, 0);
	ft = &cfg->feeds[1].fault;
	assert_true(ft->enabled);
	assert_int_equal(ft->drop_ppm, 10000);
	assert_int_equal(ft->dup_ppm, 0);
	assert_int_equal(ft->reorder_ppm, 5);
	assert_int_equal(ft->reorder_window, 4);              /* defaults */
	assert_int_equal(ft->delay_packets, 16);
	assert_int_equal(ft->delay_us, 0);
	assert_int_equal(ft->first_seq, 0);
	assert_int_equal(ft->last_seq, 90);
	assert_true(ft->seed == UINT64_C(9007199254740992));
	assert_true(ft->die_after == 700);
	assert_int_equal(ft->line, fx_line_of(fx->ports_text, "fault.drop_ppm"));
	if (fx_find(fx, TW_CFG_WARNING, PORTS, ft->line, "[feed.incr_b]: fault injection on: "
		    "per million 10000 dropped, 0 duplicated, 5 reordered, 0 delayed; dies after "
		    "700 packets") == NULL) {
		fx_dump(fx);
		fail_msg("no warning naming the faults of [feed.incr_b]");
	}
	fx_free(fx);
}

static void fault_rate_as_fraction(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_finding *f;

	(void)state;
	fx_replace(&fx->ports_text, "udp_port = 14310", "udp_port = 14310\nfault.dup_ppm = 0.025");
	f = fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, "fault.dup_ppm"),
			    "[feed.incr_a] fault.dup_ppm = 0.025: not an integer per million");
	assert_non_null(strstr(f->hint, "fault.dup_ppm = 25000"));
	fx_free(fx);
}

static void fault_bad_values(void **state)
{
	static const struct {
		const char *line;
		const char *where;
		const char *message;
	} cases[] = {
		{ "fault.drop_ppm = 1000001", "fault.drop_ppm",
		  "[feed.incr_a] fault.drop_ppm = 1000001: out of range 0..1000000" },
		{ "fault.reorder_window = 17", "fault.reorder_window",
		  "[feed.incr_a] fault.reorder_window = 17: out of range 1..16" },
		{ "fault.delay_packets = 0", "fault.delay_packets",
		  "[feed.incr_a] fault.delay_packets = 0: out of range 1..64" },
		{ "fault.first_seq = 9\nfault.last_seq = 8", "fault.last_seq",
		  "[feed.incr_a] fault.last_seq = 8: below fault.first_seq = 9" },
		{ "fault.die_after = -1", "fault.die_after",
		  "[feed.incr_a] fault.die_after = -1: out of range 0..9007199254740992" },
		{ "fault.dropppm = 1", "fault.dropppm", "[feed.incr_a] fault.dropppm: unknown key" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *fx = fx_new();
		char text[128];

		snprintf(text, sizeof(text), "udp_port = 14310\n%s", cases[i].line);
		fx_replace(&fx->ports_text, "udp_port = 14310", text);
		fx_expect_error(fx, PORTS, fx_line_of(fx->ports_text, cases[i].where),
				cases[i].message);
		fx_free(fx);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_profile_loads),
		cmocka_unit_test(syntax_error),
		cmocka_unit_test(comment_after_section_header),
		cmocka_unit_test(backslash_continuation),
		cmocka_unit_test(unknown_section),
		cmocka_unit_test(unknown_key),
		cmocka_unit_test(duplicate_key),
		cmocka_unit_test(duplicate_section),
		cmocka_unit_test(missing_required_key),
		cmocka_unit_test(missing_section),
		cmocka_unit_test(out_of_range),
		cmocka_unit_test(not_an_integer),
		cmocka_unit_test(not_a_boolean),
		cmocka_unit_test(bad_lcores),
		cmocka_unit_test(lcore_mapped_twice),
		cmocka_unit_test(bad_pci_address),
		cmocka_unit_test(quoted_pci_address),
		cmocka_unit_test(quoted_pci_address_with_space),
		cmocka_unit_test(pci_and_vdev),
		cmocka_unit_test(bad_vdev),
		cmocka_unit_test(same_device_twice),
		cmocka_unit_test(no_pci_with_pci_port),
		cmocka_unit_test(feed_names_missing_port),
		cmocka_unit_test(feed_queue_beyond_port),
		cmocka_unit_test(bad_multicast_group),
		cmocka_unit_test(same_stream_twice),
		cmocka_unit_test(same_side_twice),
		cmocka_unit_test(managed_eal_arg),
		cmocka_unit_test(inline_secret),
		cmocka_unit_test(mempool_below_rx_rings),
		cmocka_unit_test(mempool_cache_too_big),
		cmocka_unit_test(memory_below_estimate),
		cmocka_unit_test(desc_not_multiple_of_32),
		cmocka_unit_test(missing_file),
		cmocka_unit_test(findings_are_bounded),
		cmocka_unit_test(fault_keys),
		cmocka_unit_test(fault_rate_as_fraction),
		cmocka_unit_test(fault_bad_values),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
