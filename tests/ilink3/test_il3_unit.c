/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/ilink3 unit tests: codec round trip, reassembly at every split,
 * base64url, HMAC against the openssl binary, credentials file mode,
 * journal durability format, and every pre-trade risk check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ilink3.h"

static int
encode_order(uint8_t *buf, size_t cap, uint32_t seq, int64_t price)
{
	struct il3_encoder enc;
	uint8_t *root = il3_encode_begin(&enc, buf, cap, IL3_TEMPLATE_NEW_ORDER_SINGLE514);

	assert_non_null(root);
	il3_new_order_single514_set_price(root, price);
	il3_new_order_single514_set_order_qty(root, 7);
	il3_new_order_single514_set_security_id(root, 42);
	il3_new_order_single514_set_side(root, IL3_SIDE_REQ_SELL);
	il3_new_order_single514_set_seq_num(root, seq);
	il3_new_order_single514_set_cl_ord_id(root, "abc", 3);
	return il3_encode_end(&enc);
}

static void
test_round_trip(void **state)
{
	uint8_t buf[512];
	struct il3_msg msg;
	struct il3_decimal px;
	const char *chars;
	size_t len;
	uint32_t qty, seq;
	int n = encode_order(buf, sizeof(buf), 9, 123450000000);

	(void)state;
	assert_true(n > 12);
	assert_int_equal(il3_msg_parse(buf, (size_t)n, &msg, NULL), 0);
	assert_int_equal(msg.template_id, 514);
	assert_int_equal(il3_new_order_single514_price(&msg, &px), 0);
	assert_int_equal(px.mantissa, 123450000000);
	assert_int_equal(px.exponent, -9);
	assert_int_equal(il3_new_order_single514_order_qty(&msg, &qty), 0);
	assert_int_equal(qty, 7);
	assert_int_equal(il3_new_order_single514_seq_num(&msg, &seq), 0);
	assert_int_equal(seq, 9);
	assert_int_equal(il3_new_order_single514_cl_ord_id(&msg, &chars, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(chars, "abc", 3);
	/* unset optional field is null */
	assert_int_equal(il3_new_order_single514_stop_px(&msg, &px), -ENODATA);
	/* every truncation is refused */
	for (int cut = 0; cut < n; cut++)
		assert_int_not_equal(il3_msg_parse(buf, (size_t)cut, &msg, NULL), 0);
}

static void
test_reassembly_every_split(void **state)
{
	static struct il3_stream stream;
	uint8_t buf[2048];
	int a = encode_order(buf, sizeof(buf), 1, 1);
	int b = encode_order(buf + a, sizeof(buf) - (size_t)a, 2, 2);
	size_t total = (size_t)(a + b);

	(void)state;
	for (size_t split = 0; split <= total; split++) {
		struct il3_msg msg;
		uint32_t seq;
		int got = 0;

		il3_stream_reset(&stream);
		il3_stream_push(&stream, buf, split);
		while (il3_stream_next(&stream, &msg) == 1) {
			il3_new_order_single514_seq_num(&msg, &seq);
			assert_int_equal(seq, (uint32_t)++got);
		}
		il3_stream_push(&stream, buf + split, total - split);
		while (il3_stream_next(&stream, &msg) == 1) {
			il3_new_order_single514_seq_num(&msg, &seq);
			assert_int_equal(seq, (uint32_t)++got);
		}
		assert_int_equal(got, 2);
		assert_int_equal(il3_stream_pending(&stream), 0);
	}
}

static void
test_base64url(void **state)
{
	uint8_t out[16];

	(void)state;
	assert_int_equal(il3_base64url_decode("-_8", 3, out, sizeof(out)), 2);
	assert_int_equal(out[0], 0xfb);
	assert_int_equal(out[1], 0xff);
	assert_int_equal(il3_base64url_decode("aGk=", 4, out, sizeof(out)), 2);
	assert_memory_equal(out, "hi", 2);
	assert_int_equal(il3_base64url_decode("a+b/", 4, out, sizeof(out)), -EINVAL);
	assert_int_equal(il3_base64url_decode("a", 1, out, sizeof(out)), -EINVAL);
}

static void
test_hmac_vs_openssl(void **state)
{
	static const uint8_t key[] = { 0x01, 0x02, 0xfe, 0xff, 0x10, 0x20, 0x30 };
	uint8_t sig[32];
	char canon[512], cmd[1024], got[128], want[80];
	FILE *f, *p;
	int n;

	(void)state;
	n = il3_canonical_establish(canon, sizeof(canon), 1585839227794207123ULL,
			1585839227794207ULL, "ABC", "XYZ12", "tickwire", "0.1", "tw", 17, 500);
	assert_true(n > 0);
	assert_string_equal(canon, "1585839227794207123\n1585839227794207\nABC\nXYZ12\n"
			"tickwire\n0.1\ntw\n17\n500");
	assert_int_equal(il3_hmac_sha256(key, sizeof(key), canon, (size_t)n, sig), 0);
	f = fopen("il3_canon.txt", "wb");
	assert_non_null(f);
	fwrite(canon, 1, (size_t)n, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "openssl dgst -sha256 -mac HMAC -macopt hexkey:0102feff102030"
			" -r il3_canon.txt");
	p = popen(cmd, "r");
	if (p == NULL || fgets(got, sizeof(got), p) == NULL) {
		if (p != NULL)
			pclose(p);
		skip();
	}
	pclose(p);
	unlink("il3_canon.txt");
	for (int i = 0; i < 32; i++)
		sprintf(want + 2 * i, "%02x", sig[i]);
	assert_memory_equal(got, want, 64);
}

static void
test_credentials_mode(void **state)
{
	struct il3_credentials c;
	FILE *f = fopen("il3_creds.txt", "w");

	(void)state;
	assert_non_null(f);
	fputs("# test\naccess_key_id=KEY1\nsecret_key=AQL-_xAgMA\n", f);
	fclose(f);
	chmod("il3_creds.txt", 0644);
	assert_int_equal(il3_credentials_load("il3_creds.txt", &c), -EPERM);
	chmod("il3_creds.txt", 0640);
	assert_int_equal(il3_credentials_load("il3_creds.txt", &c), -EPERM);
	chmod("il3_creds.txt", 0600);
	assert_int_equal(il3_credentials_load("il3_creds.txt", &c), 0);
	assert_string_equal(c.access_key_id, "KEY1");
	assert_int_equal(c.key_length, 7);
	assert_int_equal(c.key[2], 0xfe);
	il3_credentials_wipe(&c);
	unlink("il3_creds.txt");
}

static void
test_journal(void **state)
{
	struct il3_journal_record a, b;
	FILE *f;

	(void)state;
	unlink("il3_journal.bin");
	assert_int_equal(il3_journal_load("il3_journal.bin", &a), 0);
	assert_int_equal(a.next_out_seq, 1);
	assert_int_equal(a.next_clordid, 1);
	a.uuid = 77;
	a.next_out_seq = 1234;
	a.pending_seq = 1233;
	assert_int_equal(il3_journal_save("il3_journal.bin", &a), 0);
	assert_int_equal(il3_journal_load("il3_journal.bin", &b), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	f = fopen("il3_journal.bin", "r+b");
	fseek(f, 20, SEEK_SET);
	fputc(0x55, f);
	fclose(f);
	assert_int_equal(il3_journal_load("il3_journal.bin", &b), -EBADMSG);
	unlink("il3_journal.bin");
}

static void
test_risk(void **state)
{
	struct il3_risk_limits lim = { .max_order_qty = 10, .price_band = 100,
		.max_position = 15, .max_open_orders = 3, .max_messages = 3,
		.rate_window_ns = 1000 };
	struct il3_order o = { .security_id = 1, .side = IL3_SIDE_REQ_BUY, .quantity = 5,
		.price_mantissa = 1000 };
	static struct il3_risk r;

	(void)state;
	assert_int_equal(il3_risk_init(&r, &lim), 0);
	assert_int_equal(il3_risk_check_new(&r, &o, 0), IL3_RISK_NO_REFERENCE_PRICE);
	il3_risk_set_mid(&r, 1, 1000);
	o.quantity = 11;
	assert_int_equal(il3_risk_check_new(&r, &o, 0), IL3_RISK_MAX_ORDER_QTY);
	o.quantity = 5;
	o.price_mantissa = 1101;
	assert_int_equal(il3_risk_check_new(&r, &o, 0), IL3_RISK_PRICE_BAND);
	o.price_mantissa = 900;
	assert_int_equal(il3_risk_check_new(&r, &o, 0), IL3_RISK_OK);
	assert_int_equal(il3_risk_check_new(&r, &o, 0), IL3_RISK_OK);
	assert_int_equal(il3_risk_check_new(&r, &o, 0), IL3_RISK_OK);
	assert_int_equal(il3_risk_check_new(&r, &o, 0), IL3_RISK_MAX_POSITION);
	o.side = IL3_SIDE_REQ_SELL;
	assert_int_equal(il3_risk_check_new(&r, &o, 0), IL3_RISK_MAX_OPEN_ORDERS);
	il3_risk_on_order_closed(&r, 1, IL3_SIDE_REQ_BUY, 5);
	assert_int_equal(il3_risk_check_new(&r, &o, 0), IL3_RISK_RATE_LIMIT);
	assert_int_equal(il3_risk_check_new(&r, &o, 1000), IL3_RISK_OK);
	il3_risk_kill(&r, true);
	assert_int_equal(il3_risk_check_new(&r, &o, 2000), IL3_RISK_KILL_SWITCH);
	assert_int_equal(il3_risk_check_modify(&r, false, 2000), IL3_RISK_KILL_SWITCH);
	assert_int_equal(il3_risk_check_modify(&r, true, 2000), IL3_RISK_OK);
	o.quantity = 0;
	il3_risk_kill(&r, false);
	assert_int_equal(il3_risk_check_new(&r, &o, 3000), IL3_RISK_BAD_ORDER);
	assert_int_equal(r.rejected[IL3_RISK_PRICE_BAND], 1);
	assert_int_equal(r.rejected[IL3_RISK_KILL_SWITCH], 2);
	assert_int_equal(r.rejected[IL3_RISK_MAX_POSITION], 1);
	assert_int_equal(r.rejected[IL3_RISK_RATE_LIMIT], 1);
	il3_risk_on_fill(&r, 1, IL3_SIDE_REQ_BUY, 5, true);
	assert_int_equal(il3_risk_instrument(&r, 1)->position, 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_reassembly_every_split),
		cmocka_unit_test(test_base64url),
		cmocka_unit_test(test_hmac_vs_openssl),
		cmocka_unit_test(test_credentials_mode),
		cmocka_unit_test(test_journal),
		cmocka_unit_test(test_risk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
