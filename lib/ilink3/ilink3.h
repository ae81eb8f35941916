/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * lib/ilink3: CME iLink 3 order entry (DESIGN.md section 4).
 *
 * Four parts, one header:
 *  - codec: Simple Open Framing Header (u16 length incl. the 4-byte header,
 *    u16 0xCAFE, little-endian) + SBE schema id 8; generated accessors and
 *    setters (generated/il3_cme_gen.h), metadata tables, a validating parser,
 *    an encoder, and a bounded TCP stream reassembler;
 *  - security: base64url key decoding, HMAC-SHA256 over the canonical
 *    Negotiate / Establish strings (OpenSSL libcrypto), credential files that
 *    must be readable by their owner only;
 *  - session: the FIXP client state machine, poll driven and single threaded,
 *    with a durable journal of outbound sequence numbers, UUID and ClOrdIDs;
 *  - risk: pre-trade checks the order-out actor runs before any byte is
 *    written.
 *
 * Error convention: constructors return a pointer or NULL with errno set;
 * operations return 0 (or a count) or a negative errno.  Nothing prints or
 * exits.  No function allocates after il3_session_create().  Unless stated
 * otherwise an object is used by one thread at a time (the order-out actor's).
 */
#ifndef ILINK3_H
#define ILINK3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "il3_pvt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Codec                                                                     */
/* ------------------------------------------------------------------------ */

/** Simple Open Framing Header encoding type of SBE 1.0 little-endian. */
#define IL3_SOFH_ENCODING 0xCAFE
/** Bytes of the framing header. */
#define IL3_SOFH_SIZE 4
/** Bytes of the SBE message header. */
#define IL3_SBE_HEADER_SIZE 8
/** Largest frame (the SOFH length is a u16). */
#define IL3_MAX_FRAME 65535

/** Kind of a metadata leaf. */
enum il3_kind { IL3_KIND_INTEGER, IL3_KIND_STRING, IL3_KIND_ENUM, IL3_KIND_SET };

/** Primitive encodings. */
enum il3_primitive {
	IL3_PRIM_CHAR, IL3_PRIM_INT8, IL3_PRIM_UINT8, IL3_PRIM_INT16, IL3_PRIM_UINT16,
	IL3_PRIM_INT32, IL3_PRIM_UINT32, IL3_PRIM_INT64, IL3_PRIM_UINT64,
};

/** Presence of a field. */
enum il3_presence { IL3_PRESENCE_REQUIRED, IL3_PRESENCE_OPTIONAL, IL3_PRESENCE_CONSTANT };

/** One scalar leaf of a block (composite members are flattened: "Price.mantissa"). */
struct il3_field_info {
	const char *name;
	const char *type_name;
	const char *constant;        /**< value of a constant field, else NULL */
	uint64_t null_value;         /**< raw null (sign-extended) if optional */
	uint32_t id;                 /**< FIX tag */
	uint16_t offset;             /**< from the block start (0 for constants) */
	uint16_t size;               /**< bytes on the wire (0 for constants) */
	uint8_t since_version;
	uint8_t kind;                /**< enum il3_kind */
	uint8_t primitive;           /**< enum il3_primitive */
	uint8_t presence;            /**< enum il3_presence */
	int8_t decimal_exponent;     /**< with decimal: constant exponent */
	uint8_t decimal;             /**< 1: mantissa of a constant-exponent decimal */
};

/** A repeating group (groupSize: u16 blockLength, u8 numInGroup). */
struct il3_group_info {
	const char *name;
	const struct il3_field_info *fields;
	const uint8_t *null_image;   /**< block_length bytes of nulls, or NULL (zeros) */
	uint32_t id;
	uint16_t block_length;
	uint16_t min_block_length;
	uint16_t since_version;
	uint16_t field_count;
	uint8_t dim_size;
	uint8_t num_in_group_size;
};

/** A message template of one schema version. */
struct il3_message_info {
	const char *name;
	const struct il3_field_info *fields;
	const struct il3_group_info *groups;
	const uint8_t *null_image;   /**< block_length bytes of nulls, or NULL (zeros) */
	const char *data_name;       /**< trailing variable-length data, or NULL */
	uint32_t data_id;
	uint16_t template_id;
	uint16_t schema_version;
	uint16_t since_version;
	uint16_t block_length;
	uint16_t min_block_length;
	uint16_t field_count;
	uint8_t group_count;
	uint8_t data_count;
	uint8_t data_length_size;
};

/**
 * Metadata for a wire (version, templateId): the same version if generated,
 * else the oldest newer one with the template, else the newest older one.
 * @return the metadata or NULL for an unknown template.  Any thread.
 */
const struct il3_message_info *il3_lookup(uint16_t version, uint16_t template_id);

/** Metadata the encoder uses for a template (IL3_SCHEMA_VERSION); NULL if unknown. */
const struct il3_message_info *il3_lookup_encode(uint16_t template_id);

/** Why a frame was refused. */
enum il3_parse_error {
	IL3_PARSE_OK = 0,
	IL3_PARSE_SHORT_FRAME,        /**< fewer bytes than the SOFH length says */
	IL3_PARSE_BAD_LENGTH,         /**< SOFH length below header sizes */
	IL3_PARSE_BAD_ENCODING,       /**< SOFH encoding type is not 0xCAFE */
	IL3_PARSE_WRONG_SCHEMA,       /**< schemaId is not 8 */
	IL3_PARSE_UNKNOWN_TEMPLATE,
	IL3_PARSE_BLOCK_TOO_SHORT,    /**< blockLength below the template minimum */
	IL3_PARSE_BLOCK_PAST_END,
	IL3_PARSE_GROUP_PAST_END,
	IL3_PARSE_GROUP_BLOCK_TOO_SHORT,
	IL3_PARSE_DATA_PAST_END,
	IL3_PARSE_ERROR_COUNT
};

/** Name of a parse error ("block_past_end" ...); "unknown" if out of range. */
const char *il3_parse_error_name(enum il3_parse_error error);

/**
 * Validate one whole frame (SOFH + SBE header + body) and fill a view.
 * Every length is checked against the frame; accessors never read past it.
 *
 * @param frame   first byte of the SOFH.
 * @param length  bytes available from frame (at least the SOFH length).
 * @param msg     the view, set on success.
 * @param error   why it failed (may be NULL).
 * @return 0; -EINVAL for NULL arguments; -EBADMSG when malformed (*error says
 *         why); -ENOENT for a well-formed frame of an unknown template or
 *         schema (skip it: the SOFH length says how far).  Any thread.
 */
int il3_msg_parse(const uint8_t *frame, size_t length, struct il3_msg *msg,
		enum il3_parse_error *error);

/**
 * Open the iterator of repeating group @p index (0-based, schema order).
 * @return 0; -ENOENT when the group is absent (older version).
 */
int il3_msg_group(const struct il3_msg *msg, unsigned int index, struct il3_group *group);

/** Advance to the next entry; false after the last. */
bool il3_group_next(struct il3_group *group);

/**
 * The trailing variable-length data (Credentials).
 * @return 0 with *data and *length; -ENOENT when the template has none.
 */
int il3_msg_data(const struct il3_msg *msg, const uint8_t **data, size_t *length);

/** Raw value of a leaf (sign-extended for signed primitives). */
uint64_t il3_load(const uint8_t *block, const struct il3_field_info *field);

/** Whether a leaf is present in a block of this wire version and length. */
bool il3_field_present(const struct il3_field_info *field, uint16_t version,
		uint16_t block_length);

/** An encoder writing one frame into a caller's buffer. */
struct il3_encoder {
	uint8_t *buf;
	size_t capacity;
	size_t length;
	const struct il3_message_info *info;
	unsigned int next_group;     /**< groups must be appended in schema order */
	bool failed;
};

/**
 * Start a frame: SOFH, SBE header (IL3_SCHEMA_VERSION, newest block length),
 * root block pre-filled with nulls.
 * @return the root block to set fields in (il3_<msg>_set_<field>()), or NULL
 *         with errno ENOENT (unknown template) / ENOBUFS (capacity) / EINVAL.
 */
uint8_t *il3_encode_begin(struct il3_encoder *enc, uint8_t *buf, size_t capacity,
		uint16_t template_id);

/**
 * Append group @p index with @p count entries (pre-filled with nulls); groups
 * that are skipped are written empty.
 * @return the first entry (entries are contiguous, the group's
 *         *_BLOCK_LENGTH apart), or NULL with errno ENOBUFS / EINVAL (out of
 *         order or too many entries).  count 0 returns a non-NULL pointer.
 */
uint8_t *il3_encode_group(struct il3_encoder *enc, unsigned int index, unsigned int count);

/** Append the trailing data. @return 0, -ENOBUFS, -EINVAL (no data field). */
int il3_encode_data(struct il3_encoder *enc, const void *data, size_t length);

/**
 * Finish: write empty remaining groups and zero-length data, then the SOFH length.
 * @return the frame length, or -ENOBUFS / -EINVAL if an earlier step failed.
 */
int il3_encode_end(struct il3_encoder *enc);

/** Counters of a stream reassembler. */
struct il3_stream_counters {
	uint64_t frames;          /**< frames returned */
	uint64_t bytes;           /**< bytes accepted */
	uint64_t skipped_unknown; /**< well-formed frames of unknown templates */
	uint64_t malformed;       /**< malformed frames (the stream is then broken) */
};

/**
 * Reassembles frames from a TCP byte stream: a frame split across reads is
 * held until complete.  Bounded: one frame plus one read (IL3_STREAM_CAPACITY).
 */
#define IL3_STREAM_CAPACITY (2 * 65536)
struct il3_stream {
	size_t start;   /**< first unread byte */
	size_t end;     /**< one past the last byte */
	enum il3_parse_error last_error;
	struct il3_stream_counters counters;
	uint8_t buf[IL3_STREAM_CAPACITY];
};

/** Empty the reassembler (after a reconnect). */
void il3_stream_reset(struct il3_stream *stream);

/**
 * Space to read into (compacts first).  Then call il3_stream_commit().
 * @return bytes available at *space (0 only if a frame larger than
 *         IL3_MAX_FRAME were pending, which the SOFH makes impossible).
 */
size_t il3_stream_space(struct il3_stream *stream, uint8_t **space);

/** Account @p length bytes written at the il3_stream_space() pointer. */
void il3_stream_commit(struct il3_stream *stream, size_t length);

/** Copy bytes in. @return bytes taken (less than length when full). */
size_t il3_stream_push(struct il3_stream *stream, const void *data, size_t length);

/**
 * Next complete frame.  The view is valid until the next call that changes
 * the stream.  Unknown templates are skipped and counted.
 * @return 1 with *msg; 0 when more bytes are needed; -EBADMSG when the stream
 *         is broken (stream->last_error says why; reset after reconnecting).
 */
int il3_stream_next(struct il3_stream *stream, struct il3_msg *msg);

/** Bytes held that do not yet form a complete frame. */
size_t il3_stream_pending(const struct il3_stream *stream);

/* ------------------------------------------------------------------------ */
/* Security                                                                  */
/* ------------------------------------------------------------------------ */

/** Largest secret key accepted (decoded bytes). */
#define IL3_MAX_KEY 128
/** HMAC-SHA256 signature bytes. */
#define IL3_SIGNATURE_SIZE 32

/**
 * Decode base64url (RFC 4648 section 5; '=' padding optional, no whitespace).
 * @return decoded length, -EINVAL on a bad character or length, -ENOBUFS
 *         when out is too small.  Any thread.
 */
int il3_base64url_decode(const char *text, size_t length, uint8_t *out, size_t capacity);

/** Credentials of a session. */
struct il3_credentials {
	char access_key_id[21];        /**< NUL-terminated, up to 20 chars */
	uint8_t key[IL3_MAX_KEY];      /**< decoded secret key */
	size_t key_length;
};

/**
 * Read credentials from a file with two lines "access_key_id=..." and
 * "secret_key=<base64url>" ('#' comments allowed).  The file must be a regular
 * file owned by the caller's effective uid and readable by nobody else
 * (mode & 077 == 0).
 * @return 0; -EPERM when group/other may read or the owner differs; -EINVAL
 *         for a bad format or key; the open/read error otherwise.
 */
int il3_credentials_load(const char *path, struct il3_credentials *out);

/** Wipe a credentials object (explicit_bzero). */
void il3_credentials_wipe(struct il3_credentials *creds);

/**
 * HMAC-SHA256 of @p message with @p key.
 * @return 0; -EINVAL; -EIO if libcrypto fails.  Any thread.
 */
int il3_hmac_sha256(const uint8_t *key, size_t key_length, const void *message,
		size_t length, uint8_t out[IL3_SIGNATURE_SIZE]);

/**
 * Canonical Negotiate string: RequestTimestamp "\n" UUID "\n" Session "\n"
 * Firm (decimal numbers; strings as sent, without padding).
 * @return its length (excluding the NUL written), or -ENOBUFS.
 */
int il3_canonical_negotiate(char *out, size_t capacity, uint64_t request_timestamp,
		uint64_t uuid, const char *session, const char *firm);

/**
 * Canonical Establish string: RequestTimestamp, UUID, Session, Firm,
 * TradingSystemName, TradingSystemVersion, TradingSystemVendor, NextSeqNo,
 * KeepAliveInterval joined by "\n".
 * @return its length, or -ENOBUFS.
 */
int il3_canonical_establish(char *out, size_t capacity, uint64_t request_timestamp,
		uint64_t uuid, const char *session, const char *firm,
		const char *system_name, const char *system_version, const char *system_vendor,
		uint32_t next_seq_no, uint16_t keep_alive_ms);

/* ------------------------------------------------------------------------ */
/* Durable session journal                                                   */
/* ------------------------------------------------------------------------ */

/** Largest frame the journal keeps for resending after a crash. */
#define IL3_JOURNAL_MAX_FRAME 512

/**
 * What survives a crash.  Invariant: every application message is recorded
 * (with its bytes) *before* its first byte is written, so after kill -9 the
 * last one may or may not have reached the gateway; the gateway tells which
 * (NotApplied) and the session resends it with the same number.
 */
struct il3_journal_record {
	uint64_t uuid;                 /**< session UUID (0: none negotiated yet) */
	uint64_t last_uuid;            /**< previous UUID (RetransmitRequest.LastUUID) */
	uint32_t next_out_seq;         /**< next application SeqNum to send */
	uint32_t next_in_seq;          /**< next SeqNum expected from the gateway */
	uint64_t next_clordid;         /**< next ClOrdID number (never reused) */
	uint32_t pending_seq;          /**< SeqNum of pending_frame; 0: none */
	uint16_t pending_length;
	uint8_t pending_frame[IL3_JOURNAL_MAX_FRAME];
};

/**
 * Load the journal; a missing file gives a fresh record (next_out_seq 1,
 * next_in_seq 1, next_clordid 1, uuid 0).
 * @return 0; -EBADMSG when the file is corrupt (checksum, size, magic); the
 *         open/read error otherwise.
 */
int il3_journal_load(const char *path, struct il3_journal_record *out);

/**
 * Save durably: write a temporary file beside @p path, fsync it, rename it
 * over @p path, fsync the directory.  Cost: two fsyncs (milliseconds on a
 * disk; the order path pays it once per application message, by design).
 * @return 0 or the negative errno of the failing call.
 */
int il3_journal_save(const char *path, const struct il3_journal_record *rec);

/* ------------------------------------------------------------------------ */
/* Session                                                                   */
/* ------------------------------------------------------------------------ */

/** FIXP client states. */
enum il3_state {
	IL3_STATE_DISCONNECTED,   /**< no socket */
	IL3_STATE_CONNECTING,     /**< non-blocking connect in progress */
	IL3_STATE_NEGOTIATING,    /**< Negotiate sent, awaiting response */
	IL3_STATE_ESTABLISHING,   /**< Establish sent, awaiting ack */
	IL3_STATE_ESTABLISHED,    /**< application messages may flow */
	IL3_STATE_TERMINATING,    /**< Terminate sent, awaiting the peer's */
	IL3_STATE_COUNT
};

/** Name of a state ("established" ...). */
const char *il3_state_name(enum il3_state state);

/** Why the session left a state (il3_session_last_event()). */
enum il3_event {
	IL3_EVENT_NONE,
	IL3_EVENT_CONNECTED,
	IL3_EVENT_CONNECT_FAILED,
	IL3_EVENT_NEGOTIATED,
	IL3_EVENT_NEGOTIATION_REJECTED,
	IL3_EVENT_ESTABLISHED,
	IL3_EVENT_ESTABLISHMENT_REJECTED,
	IL3_EVENT_PEER_LAPSED,         /**< no byte from the peer for 2 keep-alives... */
	IL3_EVENT_RESPONSE_TIMEOUT,    /**< no answer to Negotiate/Establish/Terminate */
	IL3_EVENT_TERMINATED_BY_PEER,
	IL3_EVENT_TERMINATED,          /**< our Terminate answered */
	IL3_EVENT_PEER_CLOSED,         /**< EOF or socket error */
	IL3_EVENT_PROTOCOL_ERROR,      /**< malformed or unexpected message */
	IL3_EVENT_COUNT
};

/** Name of an event. */
const char *il3_event_name(enum il3_event event);

/** Session configuration (strings are copied by il3_session_create()). */
struct il3_session_config {
	const char *journal_path;      /**< durable state (il3_journal_*) */
	const char *credentials_path;  /**< il3_credentials_load() */
	const char *session_id;        /**< 3 chars */
	const char *firm_id;           /**< 5 chars */
	const char *sender_id;         /**< SenderID (Operator ID) of app messages */
	const char *location;          /**< Location, 5 chars ("US,IL") */
	const char *system_name;       /**< TradingSystemName */
	const char *system_version;
	const char *system_vendor;
	uint32_t gateway_ip;           /**< host byte order (INADDR_LOOPBACK) */
	uint16_t gateway_port;
	uint16_t keep_alive_ms;        /**< proposed KeepAliveInterval */
	uint64_t party_details_list_req_id; /**< PartyDetailsListReqID of app messages */
};

/** Callbacks; run inside il3_session_step() on the caller's thread. */
struct il3_session_handlers {
	/** An application message from the gateway (execution report, reject...). */
	void (*on_app_message)(void *ctx, const struct il3_msg *msg, bool retransmitted);
	/** A state change and its cause. */
	void (*on_state)(void *ctx, enum il3_state from, enum il3_state to,
			enum il3_event why);
	void *ctx;
};

/** Session counters. */
/** Inbound gaps that may wait for their RetransmitRequest. */
#define IL3_SESSION_GAP_QUEUE 16u
/** Requests sent for one gap before it is given up. */
#define IL3_SESSION_RETRANSMIT_ATTEMPTS 2u

struct il3_session_counters {
	uint64_t frames_in, frames_out, app_in, app_out;
	uint64_t heartbeats_in, heartbeats_out;
	uint64_t retransmit_requests, retransmitted_in, not_applied, resent_after_crash;
	uint64_t gaps_in;               /**< inbound gaps detected */
	uint64_t retransmit_timeouts;   /**< requests unanswered within 2 keep-alive intervals */
	uint64_t retransmit_rejects;    /**< RetransmitReject received */
	/** inbound numbers given up on: rejected, unanswered after
	 *  IL3_SESSION_RETRANSMIT_ATTEMPTS requests, or the gap queue was full */
	uint64_t retransmit_lost;
	uint64_t send_blocked;          /**< sends refused: output buffer full */
};

struct il3_session;

/**
 * Create a session: loads the journal and the credentials.  The only call
 * that allocates.
 * @return the session or NULL with errno: EINVAL (config), EPERM
 *         (credentials readable by others), EBADMSG (corrupt journal), ENOMEM.
 */
struct il3_session *il3_session_create(const struct il3_session_config *config,
		const struct il3_session_handlers *handlers);

/** Close the socket, wipe the key, free.  NULL accepted. */
void il3_session_destroy(struct il3_session *session);

/**
 * Start connecting (non-blocking) and, once connected, Negotiate (when the
 * journal has no UUID, @p new_uuid, or an earlier Negotiate of this session
 * object was not accepted) or Establish with the journal's UUID and
 * NextSeqNo.  After a crash the journal's pending message is held in memory
 * until the gateway says (NotApplied) whether it must be resent.
 * @param new_uuid  force a new FIXP session (UUID = now in microseconds).
 * @return 0, -EISCONN when not DISCONNECTED, or the socket error.
 */
int il3_session_connect(struct il3_session *session, uint64_t now_ns, bool new_uuid);

/**
 * Do all pending work without blocking: finish connect, read and process
 * every complete inbound frame, run timers (keep-alive, lapsed peer,
 * response timeouts), flush output.  Call when il3_session_fd() is ready or
 * at least every il3_session_next_timeout_ns().
 * @return 0, or -ENOTCONN when the session is (now) disconnected.
 */
int il3_session_step(struct il3_session *session, uint64_t now_ns);

/** The socket to poll (-1 when disconnected). */
int il3_session_fd(const struct il3_session *session);

/** poll() events wanted: POLLIN, plus POLLOUT while output is queued/connecting. */
short il3_session_poll_events(const struct il3_session *session);

/** Absolute time (ns) by which il3_session_step() must run again. */
uint64_t il3_session_next_timeout_ns(const struct il3_session *session);

/** Current state. */
enum il3_state il3_session_state(const struct il3_session *session);

/** Cause of the last state change. */
enum il3_event il3_session_last_event(const struct il3_session *session);

/** Counters (live pointer; read on the session's thread). */
const struct il3_session_counters *il3_session_counters(const struct il3_session *session);

/** UUID, next outbound and next expected inbound sequence numbers. */
void il3_session_sequence(const struct il3_session *session, uint64_t *uuid,
		uint32_t *next_out, uint32_t *next_in);

/**
 * Send Terminate (state TERMINATING; the socket closes on the peer's answer
 * or after a timeout).  @return 0, -ENOTCONN.
 */
int il3_session_terminate(struct il3_session *session, uint16_t error_code, uint64_t now_ns);

/** Drop the connection at once (no Terminate); state DISCONNECTED (event peer_closed). */
void il3_session_disconnect(struct il3_session *session);

/** A limit order (the fields tickwire uses). */
struct il3_order {
	int32_t security_id;
	uint8_t side;              /**< IL3_SIDE_REQ_BUY / IL3_SIDE_REQ_SELL */
	uint32_t quantity;
	int64_t price_mantissa;    /**< PRICE9: price * 1e9 */
	uint8_t time_in_force;     /**< IL3_TIME_IN_FORCE_DAY ... */
};

/**
 * Send NewOrderSingle514.  A fresh ClOrdID (decimal, unique across restarts)
 * is assigned and returned.  The journal is saved before any byte is
 * written.  No allocation.
 * @param clordid  receives the ClOrdID number (may be NULL).
 * @return 0; -ENOTCONN unless ESTABLISHED; -ENOBUFS when the output buffer is
 *         full; the journal error (nothing sent).
 */
int il3_session_send_new_order(struct il3_session *session, const struct il3_order *order,
		uint64_t now_ns, uint64_t *clordid);

/**
 * Send OrderCancelRequest516 for an order (by its ClOrdID number and
 * exchange OrderID, 0 if unknown).  The request carries the order's own
 * ClOrdID (@p orig_clordid, reused as iLink 3 requires) and a fresh
 * OrderRequestID drawn from the same never-reused counter as ClOrdIDs.
 * Otherwise the same contract as il3_session_send_new_order().
 * @param clordid  receives the new OrderRequestID (not a ClOrdID; may be NULL).
 * @return as il3_session_send_new_order().
 */
int il3_session_send_cancel(struct il3_session *session, uint64_t orig_clordid,
		uint64_t order_id, int32_t security_id, uint8_t side, uint64_t now_ns,
		uint64_t *clordid);

/**
 * Send OrderCancelReplaceRequest515 (new quantity and price).  Like
 * il3_session_send_cancel(): the ClOrdID is @p orig_clordid (reused) and
 * @p clordid receives the new OrderRequestID.
 * @return as il3_session_send_new_order().
 */
int il3_session_send_replace(struct il3_session *session, uint64_t orig_clordid,
		uint64_t order_id, const struct il3_order *order, uint64_t now_ns,
		uint64_t *clordid);

/**
 * Request retransmission of gateway messages [from, from + count).  The
 * session requests gaps it detects by itself; one request is outstanding at
 * a time (until all its messages or a RetransmitReject arrived, or 2
 * keep-alive intervals passed), the others wait in a queue of
 * IL3_SESSION_GAP_QUEUE ranges and are requested in turn, 2500 messages per
 * request at most.  An unanswered request is sent again once
 * (IL3_SESSION_RETRANSMIT_ATTEMPTS), then its range is given up
 * (counters: retransmit_timeouts, retransmit_rejects, retransmit_lost).
 * Queued gaps survive a reconnect on the same UUID.
 * @return 0, -ENOTCONN, -EBUSY when one is outstanding, -EINVAL for count 0,
 *         -ENOBUFS (queue full, or the output buffer: then it stays queued).
 */
int il3_session_request_retransmit(struct il3_session *session, uint32_t from,
		uint16_t count, uint64_t now_ns);

/* ------------------------------------------------------------------------ */
/* Pre-trade risk                                                            */
/* ------------------------------------------------------------------------ */

/** Most instruments the risk module tracks. */
#define IL3_RISK_MAX_INSTRUMENTS 64

/** Why an order was refused. */
enum il3_risk_reason {
	IL3_RISK_OK = 0,
	IL3_RISK_KILL_SWITCH,       /**< kill switch engaged */
	IL3_RISK_MAX_ORDER_QTY,
	IL3_RISK_NO_REFERENCE_PRICE,/**< no book mid known for the instrument */
	IL3_RISK_PRICE_BAND,
	IL3_RISK_MAX_POSITION,      /**< position + open same-side qty would exceed */
	IL3_RISK_MAX_OPEN_ORDERS,
	IL3_RISK_RATE_LIMIT,
	IL3_RISK_UNKNOWN_INSTRUMENT,/**< table full */
	IL3_RISK_BAD_ORDER,         /**< zero quantity, bad side */
	IL3_RISK_REASON_COUNT
};

/** Name of a reason ("price_band" ...). */
const char *il3_risk_reason_name(enum il3_risk_reason reason);

/** Limits. */
struct il3_risk_limits {
	uint32_t max_order_qty;
	int64_t price_band;          /**< max |price - mid|, in price mantissa units */
	int64_t max_position;        /**< max |position| per instrument, contracts */
	uint32_t max_open_orders;    /**< over all instruments */
	uint32_t max_messages;       /**< per rate window (orders, cancels, replaces) */
	uint64_t rate_window_ns;
};

struct il3_risk_instrument {
	int32_t security_id;
	bool has_mid;
	int64_t mid;                 /**< last book mid, price mantissa */
	int64_t position;            /**< filled, signed (buy +) */
	int64_t open_buy, open_sell; /**< open quantity */
};

/** The risk state (no allocation; embed it in the actor). */
struct il3_risk {
	struct il3_risk_limits limits;
	bool killed;
	uint32_t open_orders;
	uint32_t instrument_count;
	uint32_t window_count;
	uint64_t window_start_ns;
	uint64_t checked;
	uint64_t rejected[IL3_RISK_REASON_COUNT];
	struct il3_risk_instrument instruments[IL3_RISK_MAX_INSTRUMENTS];
};

/** Initialise with limits.  @return 0 or -EINVAL. */
int il3_risk_init(struct il3_risk *risk, const struct il3_risk_limits *limits);

/** Record the last book mid of an instrument.  @return 0 or -ENOSPC. */
int il3_risk_set_mid(struct il3_risk *risk, int32_t security_id, int64_t mid);

/**
 * Check a new order; on IL3_RISK_OK the order is counted as open and as one
 * message of the rate window.  Every rejection is counted in rejected[].
 * @return IL3_RISK_OK or the reason.
 */
enum il3_risk_reason il3_risk_check_new(struct il3_risk *risk, const struct il3_order *order,
		uint64_t now_ns);

/**
 * Check a cancel or replace (rate limit only; a cancel is allowed even with
 * the kill switch engaged, a replace is not).  @return IL3_RISK_OK or reason.
 */
enum il3_risk_reason il3_risk_check_modify(struct il3_risk *risk, bool is_cancel,
		uint64_t now_ns);

/** An order left the book (cancelled, rejected, expired): open qty released. */
void il3_risk_on_order_closed(struct il3_risk *risk, int32_t security_id, uint8_t side,
		uint32_t leaves_qty);

/** A fill: position moves, open qty drops; closes the order when @p done. */
void il3_risk_on_fill(struct il3_risk *risk, int32_t security_id, uint8_t side,
		uint32_t qty, bool done);

/**
 * Engage (or release) the kill switch.  While engaged every new order and
 * replace is refused; the caller then cancels its open orders (cancels pass).
 */
void il3_risk_kill(struct il3_risk *risk, bool engaged);

/** Instrument state, or NULL if unknown. */
const struct il3_risk_instrument *il3_risk_instrument(const struct il3_risk *risk,
		int32_t security_id);

#ifdef __cplusplus
}
#endif

#include "il3_cme_gen.h"

#endif /* ILINK3_H */
