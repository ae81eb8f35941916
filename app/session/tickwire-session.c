/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tickwire-session: what an iLink 3 session journal holds, read the way the
 * appliance reads it (il3_journal_load: magic, size, checksum).
 *
 *   tickwire-session FILE
 *
 * One line of KEY=VALUE words, for people and scripts:
 *   journal=FILE state=ok uuid=U last_uuid=L next_out_seq=N next_in_seq=M
 *   next_clordid=C pending_seq=P
 * state=none when FILE does not exist (the next session negotiates a new
 * UUID and starts at 1). Exit status: 0 read (or none), 1 unreadable or
 * corrupt (the appliance would refuse to start on it), 2 usage.
 *
 * Read-only by design: the journal is the appliance's, and a sequence number
 * written by hand is how a session reuses one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ilink3.h"

int
main(int argc, char **argv)
{
	struct il3_journal_record rec;
	struct stat st;
	const char *path;
	int rc;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("usage: tickwire-session FILE\n"
		       "  prints the session journal FILE (tickwire.cfg session.file):\n"
		       "  uuid, next_out_seq, next_in_seq, next_clordid, pending_seq\n");
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: tickwire-session FILE\n"
			"tickwire-session: hint: FILE is session.file of tickwire.cfg "
			"(tickwire-check --format shell prints it as TW_SESSION_FILE)\n");
		return 2;
	}
	path = argv[1];
	if (stat(path, &st) != 0 && errno == ENOENT) {
		printf("journal=%s state=none next_out_seq=1 next_in_seq=1 next_clordid=1\n", path);
		return 0;
	}
	rc = il3_journal_load(path, &rec);
	if (rc != 0) {
		fprintf(stderr, "tickwire-session: %s: %s%s\n", path,
			rc == -EBADMSG ? "not a session journal, or a corrupt one (magic, size or checksum)"
				       : strerror(-rc),
			rc == -EBADMSG ? "; hint: the appliance refuses it too: restore it from the host's "
					 "backup, or ask CME for a new session before removing it" : "");
		return 1;
	}
	printf("journal=%s state=ok uuid=%" PRIu64 " last_uuid=%" PRIu64 " next_out_seq=%" PRIu32
	       " next_in_seq=%" PRIu32 " next_clordid=%" PRIu64 " pending_seq=%" PRIu32 "\n",
	       path, rec.uuid, rec.last_uuid, rec.next_out_seq, rec.next_in_seq, rec.next_clordid,
	       rec.pending_seq);
	return 0;
}
