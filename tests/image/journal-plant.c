/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tw-journal-plant FILE NEXT_OUT_SEQ NEXT_IN_SEQ NEXT_CLORDID UUID: write an
 * iLink 3 session journal with il3_journal_save(), the appliance's own
 * writer. ansible_flash puts one on the data partition before a slot switch
 * ("the journal the old slot left") and expects the new slot to read the
 * same numbers back (tickwire-session in its boot check).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ilink3.h"

static int
number(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' && *out <= max ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct il3_journal_record rec;
	uint64_t out_seq, in_seq, clordid, uuid;
	int rc;

	if (argc != 6 || number(argv[2], UINT32_MAX, &out_seq) != 0 ||
	    number(argv[3], UINT32_MAX, &in_seq) != 0 ||
	    number(argv[4], UINT64_MAX, &clordid) != 0 || number(argv[5], UINT64_MAX, &uuid) != 0) {
		fprintf(stderr, "usage: tw-journal-plant FILE NEXT_OUT_SEQ NEXT_IN_SEQ NEXT_CLORDID UUID\n");
		return 2;
	}
	memset(&rec, 0, sizeof(rec));
	rec.uuid = uuid;
	rec.next_out_seq = (uint32_t)out_seq;
	rec.next_in_seq = (uint32_t)in_seq;
	rec.next_clordid = clordid;
	rc = il3_journal_save(argv[1], &rec);
	if (rc != 0) {
		fprintf(stderr, "tw-journal-plant: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	return 0;
}
