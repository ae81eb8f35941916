/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * CME MDP 3.0 decoding: the packet walker, zero-copy message views and the
 * schema metadata generated from CME's SBE schema XML.
 *
 * A UDP packet is a binary packet header (MsgSeqNum u32, SendingTime u64)
 * followed by messages; each message is MsgSize (u16, counting itself), the
 * SBE header (blockLength, templateId, schemaId, version, all u16), the root
 * block and the repeating groups.  On conflated TCP every message carries its
 * own 14-byte technical header (encoding type 0xCAFE, MsgSeqNum, SendingTime).
 * All integers are little-endian.
 *
 * The walker checks every length against the bytes that remain before any
 * message of a packet reaches the handler; a malformed packet is counted per
 * reason and dropped whole, never read past its end.  Messages of an unknown
 * schema or template are skipped (SBE framing lets a decoder step over them)
 * and counted.  Delivery is zero-copy: views point into the caller's buffer
 * and are valid only during the callback.
 *
 * Typed accessors (one inline function per field, per group) are generated
 * into mdp3_cme_gen.h, included at the end of this header; the metadata
 * tables (names, types, enum values, groups) drive generic consumers such as
 * the tickwire-decode JSON printer.
 *
 * Error convention: functions return 0 or a negative errno; lookups return a
 * pointer or NULL with errno set.  Nothing here allocates, prints, exits or
 * uses floating point.  Walkers are not shared between threads: each thread
 * uses its own struct mdp3_walker; the metadata tables are read-only and may
 * be read from any thread.
 */
#ifndef MDP3_H
#define MDP3_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of the UDP binary packet header: MsgSeqNum u32 + SendingTime u64. */
#define MDP3_PACKET_HEADER_SIZE 12
/** Bytes of MsgSize u16 + SBE message header (4 x u16). */
#define MDP3_MESSAGE_HEADER_SIZE 10
/** Bytes of the conflated-TCP technical header: 0xCAFE + MsgSeqNum + SendingTime. */
#define MDP3_TCP_HEADER_SIZE 14
/** Encoding type that opens every conflated-TCP technical header (SBE 1.0, LE). */
#define MDP3_TCP_ENCODING_TYPE 0xCAFE
/** Most repeating groups one block (message root or group entry) may have. */
#define MDP3_MAX_GROUPS 8

/* ------------------------------------------------------------------------ */
/* Schema metadata (generated tables; read-only)                             */
/* ------------------------------------------------------------------------ */

/** Primitive encoding of a value on the wire. */
enum mdp3_primitive {
	MDP3_PRIM_NONE = 0, /**< composite: see members */
	MDP3_PRIM_CHAR,
	MDP3_PRIM_INT8,
	MDP3_PRIM_UINT8,
	MDP3_PRIM_INT16,
	MDP3_PRIM_UINT16,
	MDP3_PRIM_INT32,
	MDP3_PRIM_UINT32,
	MDP3_PRIM_INT64,
	MDP3_PRIM_UINT64,
};

/** What a type is. */
enum mdp3_type_kind {
	MDP3_KIND_INTEGER,   /**< one integer or one char */
	MDP3_KIND_STRING,    /**< fixed-length char array, NUL padded */
	MDP3_KIND_ENUM,      /**< integer or char with named values */
	MDP3_KIND_SET,       /**< bit set with named choices (bit numbers) */
	MDP3_KIND_COMPOSITE, /**< members at fixed offsets (PRICE9, MaturityMonthYear ...) */
};

/** SBE presence of a type. */
enum mdp3_presence {
	MDP3_PRESENCE_REQUIRED,
	MDP3_PRESENCE_OPTIONAL, /**< null_value marks "no value" */
	MDP3_PRESENCE_CONSTANT, /**< not on the wire; constant / constant_value */
};

/** A named enum value (value) or a named set choice (value = bit number). */
struct mdp3_value_name {
	int64_t value;
	const char *name;
	uint16_t since_version;
};

struct mdp3_member_info;

/** An SBE type: scalar, string, enum, set or composite. */
struct mdp3_type_info {
	const char *name;               /**< schema name, e.g. "PRICENULL9" */
	enum mdp3_type_kind kind;
	enum mdp3_primitive primitive;  /**< encoding (of the enum/set too) */
	enum mdp3_presence presence;
	uint16_t size;                  /**< bytes on the wire (0 for constants) */
	uint16_t length;                /**< char array length, 1 otherwise */
	uint64_t null_value;            /**< optional: null, as mdp3_load() returns it */
	const char *constant;           /**< constant: value text, else NULL */
	int64_t constant_value;         /**< constant scalar: its value */
	const struct mdp3_value_name *values; /**< enum values / set choices */
	uint16_t value_count;
	const struct mdp3_member_info *members; /**< composite members */
	uint16_t member_count;
	uint8_t is_decimal;             /**< composite of exactly mantissa, exponent */
};

/** A member of a composite type. */
struct mdp3_member_info {
	const char *name;
	uint16_t offset;                /**< from the start of the composite */
	const struct mdp3_type_info *type;
};

/** A field of a message root or of a group entry. */
struct mdp3_field_info {
	const char *name;               /**< schema name, e.g. "MDEntryPx" */
	uint32_t id;                    /**< FIX tag */
	uint16_t offset;                /**< from the start of the block (0 for constants) */
	uint16_t since_version;
	const struct mdp3_type_info *type;
};

/** A message root block or a repeating group; fields in wire order. */
struct mdp3_block_info {
	const char *name;               /**< message or group name ("NoMDEntries") */
	uint32_t id;                    /**< templateId, or the group's FIX tag */
	uint16_t block_length;          /**< schema blockLength */
	uint16_t min_block_length;      /**< shortest wire blockLength accepted */
	uint16_t since_version;
	const struct mdp3_type_info *dimension; /**< group: dimension composite */
	uint8_t dim_size;               /**< group: bytes of the dimension header */
	uint8_t dim_block_length_offset;
	uint8_t dim_block_length_size;  /**< 1 or 2 */
	uint8_t dim_num_in_group_offset;
	uint8_t dim_num_in_group_size;  /**< 1 or 2 */
	const struct mdp3_field_info *fields;
	uint16_t field_count;
	const struct mdp3_block_info *groups;
	uint16_t group_count;
};

/** One template of one schema version. */
struct mdp3_message_info {
	const char *name;               /**< e.g. "MDIncrementalRefreshBook46" */
	const char *semantic_type;      /**< FIX MsgType, e.g. "X" */
	uint16_t template_id;
	uint16_t schema_id;
	uint16_t schema_version;        /**< version of the schema file */
	struct mdp3_block_info root;
};

/** Dispatch table of one schema id. */
struct mdp3_schema_dispatch {
	uint16_t schema_id;
	uint16_t max_version;           /**< wire versions above use this row */
	uint16_t min_template;
	uint16_t max_template;
	/** [(version) * (max_template - min_template + 1) + template - min_template] */
	const struct mdp3_message_info *const *table;
};

/** A set of generated schemas (see mdp3_dictionary_cme). */
struct mdp3_dictionary {
	const char *name;
	const struct mdp3_schema_dispatch *schemas;
	uint16_t schema_count;
	const struct mdp3_message_info *const *messages; /**< every (version, template) */
	uint32_t message_count;
};

/* ------------------------------------------------------------------------ */
/* Views delivered by the walker (zero-copy)                                 */
/* ------------------------------------------------------------------------ */

/** A price or quantity: value = mantissa * 10^exponent. */
struct mdp3_decimal {
	int64_t mantissa;
	int8_t exponent;
};

/** How a packet was framed. */
enum mdp3_framing {
	MDP3_FRAMING_UDP, /**< binary packet header, then messages */
	MDP3_FRAMING_TCP, /**< conflated TCP: technical header, one message */
};

/** A packet being delivered. */
struct mdp3_packet {
	const uint8_t *data;            /**< first byte of the packet (header) */
	uint32_t length;                /**< bytes of the packet */
	uint32_t msg_seq_num;           /**< MsgSeqNum */
	uint64_t sending_time;          /**< SendingTime, ns since the Unix epoch */
	enum mdp3_framing framing;
	uint16_t message_count;         /**< messages in the packet (skipped ones too) */
};

/** A validated message: the generated accessors read it in place. */
struct mdp3_msg {
	const uint8_t *start;           /**< first byte of the message (MsgSize) */
	const uint8_t *root;            /**< first byte of the root block */
	const struct mdp3_message_info *info; /**< metadata used to decode it */
	uint16_t size;                  /**< MsgSize */
	uint16_t block_length;          /**< root blockLength on the wire */
	uint16_t template_id;
	uint16_t schema_id;
	uint16_t version;               /**< wire version */
	uint16_t index;                 /**< position in the packet, from 0 */
	/** Offset from root of each top-level group's dimension header; 0: absent. */
	uint16_t group_offset[MDP3_MAX_GROUPS];
};

/** Iterator over the entries of a repeating group. */
struct mdp3_group {
	const uint8_t *entry;           /**< current entry, after mdp3_group_next() */
	const uint8_t *next;            /**< where the next entry starts */
	const uint8_t *end;             /**< one past the message */
	const struct mdp3_block_info *info;
	uint16_t block_length;          /**< entry blockLength on the wire */
	uint16_t count;                 /**< numInGroup */
	uint16_t index;                 /**< entries returned so far */
	uint16_t version;               /**< wire version of the message */
	/** Offsets from entry of the current entry's nested groups; 0: absent. */
	uint16_t group_offset[MDP3_MAX_GROUPS];
};

/* ------------------------------------------------------------------------ */
/* Walker                                                                    */
/* ------------------------------------------------------------------------ */

/** Why a packet was dropped or a message skipped. */
enum mdp3_reason {
	MDP3_REASON_NONE = 0,
	MDP3_REASON_SHORT_PACKET,          /**< fewer bytes than the packet header */
	MDP3_REASON_SHORT_MESSAGE_HEADER,  /**< 1..9 bytes left: no room for MsgSize + header */
	MDP3_REASON_MSG_SIZE_TOO_SMALL,    /**< MsgSize < 10 */
	MDP3_REASON_MSG_SIZE_TOO_LARGE,    /**< MsgSize > bytes left in the packet */
	MDP3_REASON_BLOCK_TOO_SHORT,       /**< root blockLength < the template's minimum */
	MDP3_REASON_BLOCK_PAST_END,        /**< root block runs past MsgSize */
	MDP3_REASON_GROUP_HEADER_PAST_END, /**< group dimension header runs past MsgSize */
	MDP3_REASON_GROUP_BLOCK_TOO_SHORT, /**< group blockLength < the group's minimum */
	MDP3_REASON_GROUP_PAST_END,        /**< group entries run past MsgSize */
	MDP3_REASON_BAD_ENCODING_TYPE,     /**< TCP: technical header is not 0xCAFE */
	MDP3_REASON_UNKNOWN_SCHEMA,        /**< skipped message: schemaId not generated */
	MDP3_REASON_UNKNOWN_TEMPLATE,      /**< skipped message: templateId unknown */
	MDP3_REASON_COUNT
};

/** Walker counters; reason[] counts drops (structural) and skips (unknown). */
struct mdp3_counters {
	uint64_t packets;            /**< packets (TCP: technical-header frames) seen */
	uint64_t packets_dropped;    /**< malformed packets, nothing delivered */
	uint64_t messages;           /**< messages delivered to on_message */
	uint64_t messages_skipped;   /**< unknown schema/template, stepped over */
	uint64_t version_fallbacks;  /**< decoded with metadata of another version */
	uint64_t trailing_bytes;     /**< messages with bytes after their last group */
	uint64_t reason[MDP3_REASON_COUNT];
};

/** Where and why the last packet was dropped. */
struct mdp3_error {
	enum mdp3_reason reason;
	uint32_t offset;             /**< byte offset in the packet of the fault */
	uint16_t msg_index;          /**< message index in the packet */
	uint16_t template_id;        /**< of that message, when its header was read */
};

/** A message the walker stepped over (unknown schema or template). */
struct mdp3_skip {
	enum mdp3_reason reason;
	uint32_t offset;             /**< of the message in the packet */
	uint16_t size;
	uint16_t block_length;
	uint16_t template_id;
	uint16_t schema_id;
	uint16_t version;
	uint16_t index;
};

/**
 * Message callback. Runs on the walking thread, once per message, in packet
 * order, after the whole packet was validated.  The views are valid only
 * during the call.  Return 0 to go on, a negative value to stop this packet
 * (the walker returns that value; later messages are not delivered).
 */
typedef int (*mdp3_message_fn)(void *ctx, const struct mdp3_packet *packet,
		const struct mdp3_msg *msg);

/** Skip callback (optional): a message of unknown schema/template. */
typedef void (*mdp3_skip_fn)(void *ctx, const struct mdp3_packet *packet,
		const struct mdp3_skip *skip);

/** The consumer of a walker. */
struct mdp3_handler {
	mdp3_message_fn on_message;  /**< may be NULL (validate and count only) */
	mdp3_skip_fn on_skip;        /**< may be NULL */
	void *ctx;
};

/** Internal: the dispatch row of the last (schemaId, version) walked. */
struct mdp3__lookup_cache {
	uint64_t key;                   /* 1 << 32 | schemaId << 16 | version; 0: empty */
	const struct mdp3_message_info *const *row; /* NULL: unknown schema */
	int32_t span;                   /* max_template - min_template; -1: unknown schema */
	uint16_t min_template;
};

/** Walker state: owned by one thread. */
struct mdp3_walker {
	const struct mdp3_dictionary *dict;
	struct mdp3_handler handler;
	struct mdp3_counters counters;
	struct mdp3_error last_error;
	struct mdp3__lookup_cache cache; /**< internal (mdp3_walker_init() clears it) */
};

/**
 * Initialise a walker.
 *
 * @param walker   walker to initialise (counters zeroed).
 * @param dict     schemas to decode with; NULL for mdp3_dictionary_cme.
 * @param handler  callbacks, copied; NULL for none.
 * @return 0, or -EINVAL if walker is NULL.
 * Thread safety: touches only *walker.
 */
int mdp3_walker_init(struct mdp3_walker *walker, const struct mdp3_dictionary *dict,
		const struct mdp3_handler *handler);

/**
 * Validate a UDP packet without delivering it (for an arbiter that must
 * choose between feed A and B copies).
 *
 * @param dict    schemas; NULL for mdp3_dictionary_cme.
 * @param data    packet bytes (binary packet header first); NULL only if length 0.
 * @param length  bytes in data.
 * @param error   where and why it is malformed; may be NULL.
 * @return 0 if every length checks out (unknown templates are fine: they would
 *         be skipped), -EBADMSG if malformed, -EINVAL if data is NULL with
 *         length > 0.
 * Thread safety: any thread; reads only its arguments and the tables.
 */
int mdp3_packet_validate(const struct mdp3_dictionary *dict, const uint8_t *data,
		size_t length, struct mdp3_error *error);

/**
 * Walk one UDP packet: validate it whole, then deliver every message.
 *
 * @param walker  initialised walker; counters updated.
 * @param data    packet bytes (binary packet header first).
 * @param length  bytes in data (the UDP payload length).
 * @return 0 when delivered (skipped unknown messages included);
 *         -EBADMSG when malformed: nothing delivered, the packet counted in
 *         packets_dropped and reason[walker->last_error.reason];
 *         the callback's negative value if it stopped the walk;
 *         -EINVAL on NULL arguments.
 * Thread safety: the walker's owning thread only. No allocation.
 */
int mdp3_walk_packet(struct mdp3_walker *walker, const uint8_t *data, size_t length);

/**
 * Walk the payload of one TCP segment of an MDP conflated-TCP session: a
 * sequence of frames, each a 14-byte technical header (0xCAFE, MsgSeqNum,
 * SendingTime) and one message.  Each frame is delivered as a packet of one
 * message.  Segments are not reassembled: a frame cut at the segment end is
 * malformed (msg_size_too_large or short_message_header).
 *
 * @return 0 when every frame was delivered; -EBADMSG when a frame is
 *         malformed: that frame and the rest of the segment are dropped
 *         (earlier frames were delivered), see walker->last_error (offset in
 *         the segment); the callback's negative value; -EINVAL.
 * Thread safety: the walker's owning thread only. No allocation.
 */
int mdp3_walk_tcp(struct mdp3_walker *walker, const uint8_t *data, size_t length);

/**
 * Name of a reason ("msg_size_too_large" ...); "unknown" if out of range.
 * Thread safety: any thread.
 */
const char *mdp3_reason_name(enum mdp3_reason reason);

/**
 * Metadata used for a message of a given schema id, wire version and
 * template: the same version if generated, else the nearest version that has
 * the template (see README).
 *
 * @return the metadata, or NULL with errno = EPROTONOSUPPORT (schema id not
 *         in the dictionary) or ENOENT (no such template for that version).
 * Thread safety: any thread.
 */
const struct mdp3_message_info *mdp3_lookup(const struct mdp3_dictionary *dict,
		uint16_t schema_id, uint16_t version, uint16_t template_id);

/* ------------------------------------------------------------------------ */
/* Generic (metadata-driven) access, for printers and tools                  */
/* ------------------------------------------------------------------------ */

/**
 * Open top-level group number index of a message.
 * @return 0; -ENOENT if the message has no such group on the wire.
 * Thread safety: any thread owning the views.
 */
static inline int mdp3_msg_group(const struct mdp3_msg *msg, unsigned int index,
		struct mdp3_group *group);

/**
 * Advance a group iterator to its next entry.
 * @return true with group->entry set, false after the last entry.
 */
static inline bool mdp3_group_next(struct mdp3_group *group);

/**
 * mdp3_group_next() for a group without nested groups (info->group_count
 * is 0: every MDP3 incremental NoMDEntries): the next entry is blockLength
 * bytes on.  Never calls out of line, so an iterator on the stack can stay
 * in registers.  On a group with nested groups it would step over entries
 * wrongly but never past what the walker checked (debug builds assert).
 * @return true with group->entry set, false after the last entry.
 */
static inline bool mdp3_group_next_flat(struct mdp3_group *group);

/**
 * Open nested group number index of the current entry of a group.
 * @return 0; -ENOENT if absent; -EINVAL before mdp3_group_next().
 */
int mdp3_group_nested(const struct mdp3_group *group, unsigned int index,
		struct mdp3_group *nested);

/**
 * Whether a field is on the wire of a block with the given wire blockLength
 * and version (constants: always).
 */
static inline bool mdp3_field_present(const struct mdp3_field_info *field,
		uint16_t block_length, uint16_t version);

/**
 * Load one value of a primitive at p (little-endian, unaligned).  Signed
 * values come sign-extended, as uint64_t bits; chars as their byte.
 * p must point to at least the primitive's size of readable bytes.
 */
static inline uint64_t mdp3_load(const uint8_t *p, enum mdp3_primitive primitive);

/** Whether raw (as mdp3_load() returned it) is the null value of an optional type. */
bool mdp3_type_is_null(const struct mdp3_type_info *type, uint64_t raw);

/** Whether a primitive is signed (int8..int64). */
bool mdp3_primitive_signed(enum mdp3_primitive primitive);

/**
 * Name of an enum value (raw as mdp3_load() returned it).
 * @return the name, or NULL with errno = ENOENT if the value is not in the
 *         schema, EINVAL if type is not an enum.
 */
const char *mdp3_enum_name(const struct mdp3_type_info *type, uint64_t raw);

#include "mdp3_pvt.h"
#include "mdp3_cme_gen.h"

#ifdef __cplusplus
}
#endif

#endif /* MDP3_H */
