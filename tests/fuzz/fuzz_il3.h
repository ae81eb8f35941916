/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the iLink 3 fuzz harnesses (fuzz_il3_decode.c,
 * fuzz_il3_session.c), the message checks they both run (fuzz_il3_msg.c),
 * the generated accessor caller (fuzz_il3_accessors_gen.c, written at build
 * time by gen_fuzz_accessors.py --flavour il3) and the seed writer
 * (fuzz_il3_seeds.c): the checks and the input format of the session
 * harness.
 */
#ifndef FUZZ_IL3_H
#define FUZZ_IL3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"
#include "ilink3.h"

/**
 * Call every typed accessor of the message's template (root fields, every
 * entry of every group), each result through fuzz_il3_read().
 * @return 1 if the template has accessors, 0 otherwise.
 */
int fuzz_il3_touch_typed(const struct il3_msg *msg);

/**
 * Check what an accessor returned: 0, -ENODATA (null value) or -ENOENT
 * (absent); unless absent, the bytes it read, up to @p end from the block
 * start, lie inside the block of @p block_length bytes.
 */
void fuzz_il3_read(int rc, size_t end, uint16_t block_length);

/**
 * Open group @p index of @p msg: il3_msg_group() returns 0 or -ENOENT, and
 * the group opened is the one whose accessors check tag @p tag.
 * @return true when the group is present.
 */
bool fuzz_il3_group_open(const struct il3_msg *msg, unsigned int index, uint32_t tag,
		struct il3_group *group);

/**
 * Check a message il3_msg_parse() or il3_stream_next() delivered: copy its
 * frame to a buffer of exactly frame_length bytes (so that AddressSanitizer
 * sees any read past the frame), parse the copy again (same result), then
 * read every leaf through the metadata (il3_field_present, il3_load), every
 * entry of every group, the trailing data and every typed accessor, and
 * abort when a view leaves the frame or the block it belongs to.
 */
void fuzz_il3_check_msg(const struct il3_msg *msg);

/** A root (or group entry) leaf to set by its schema name ("UUID", "Price.mantissa"). */
struct fuzz_il3_leaf {
	const char *name;
	uint64_t value;         /**< strings: up to 8 bytes of it, NUL-padded */
};

/**
 * Encode a frame of @p template_id (newest schema version): the root block
 * null but for @p leaves, every group with @p entries entries (leaves of the
 * same names set there too, plus the entry index), trailing data of a few
 * bytes when @p entries > 0.
 * @return the frame length, or a negative errno (unknown template, capacity).
 */
int fuzz_il3_encode(uint8_t *buf, size_t capacity, uint16_t template_id,
		const struct fuzz_il3_leaf *leaves, unsigned int count, unsigned int entries);

/* ---- input of fuzz_il3_session ----------------------------------------- */
/*
 * Byte 0: FUZZ_IL3_START_* flags.  Then records until the input ends:
 *   u8 op, u16 little-endian length, length bytes of argument (cut short at
 *   the end of the input).  op % FUZZ_IL3_OP_COUNT is one of FUZZ_IL3_OP_*.
 */

/** The harness answers Negotiate and Establish itself before the records. */
#define FUZZ_IL3_START_ESTABLISHED 0x01
/** The journal holds a negotiated UUID: the session Establishes at once. */
#define FUZZ_IL3_START_JOURNAL_UUID 0x02
/** ... and a pending application frame (a crash after journaling it). */
#define FUZZ_IL3_START_JOURNAL_PENDING 0x04

enum fuzz_il3_op {
	FUZZ_IL3_OP_BYTES,       /**< the gateway writes the argument, then a step */
	FUZZ_IL3_OP_WAIT,        /**< the clock moves u16 (argument) ms, then a step */
	FUZZ_IL3_OP_ORDER,       /**< send a new order (quantity, price from the argument) */
	FUZZ_IL3_OP_MODIFY,      /**< send a cancel or a replace of an earlier ClOrdID */
	FUZZ_IL3_OP_RETRANSMIT,  /**< il3_session_request_retransmit(u32 from, u16 count) */
	FUZZ_IL3_OP_END,         /**< terminate; when disconnected, connect again */
	FUZZ_IL3_OP_COUNT
};

/** Clock of the session harness at the first connect: the UUID is this / 1000. */
#define FUZZ_IL3_T0_NS UINT64_C(1700000000000000000)
/** KeepAliveInterval the harness proposes and its gateway accepts. */
#define FUZZ_IL3_KEEP_ALIVE_MS 1000
/** Journal of FUZZ_IL3_START_JOURNAL_UUID: UUID, next outbound, next inbound. */
#define FUZZ_IL3_JOURNAL_UUID (FUZZ_IL3_T0_NS / 1000 - 5)
#define FUZZ_IL3_JOURNAL_NEXT_OUT 10
#define FUZZ_IL3_JOURNAL_NEXT_IN 7

#endif /* FUZZ_IL3_H */
