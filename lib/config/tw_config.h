/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_CONFIG_H
#define TICKWIRE_TW_CONFIG_H

/**
 * @file
 * tickwire configuration: loads and validates a profile, the pair
 * dpdk-config/<profile>/ports.ini (iniparser: EAL defaults, ports, mempool,
 * feeds) and dpdk-config/<profile>/tickwire.cfg (libconfig: core map,
 * topology, hand-off queues, arbitration, recovery, strategy, risk, session,
 * replay, outputs, check policy). DESIGN.md section 5; every key, its
 * default and its range are in dpdk-config/README.md.
 *
 * The library never prints and never exits. What is wrong with a profile is
 * returned as a list of findings (severity, file, line, message, hint) that
 * the program prints; an error anywhere refuses the whole profile.
 *
 * Error convention: constructors return a pointer or NULL with errno set;
 * operations return 0 (or a non-negative count) or a negative errno value.
 *
 * Threads: every function may be called from any thread; calls that share a
 * struct tw_cfg_findings must not run concurrently. A loaded struct tw_cfg is
 * read-only and may be read from any number of threads. tw_cfg_load() sets
 * iniparser's process-wide error callback for the length of its
 * iniparser_load() (to keep iniparser silent) and then restores the default,
 * so it must not run concurrently with other users of iniparser.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Bounds                                                                   */
/* ------------------------------------------------------------------------ */

#define TW_CFG_MAX_CPUS 1024        /**< cpu ids 0 .. 1023 */
#define TW_CFG_MAX_LCORES 128       /**< lcore ids 0 .. 127 (DPDK RTE_MAX_LCORE) */
#define TW_CFG_MAX_PORTS 8          /**< [port.*] sections */
#define TW_CFG_MAX_FEEDS 16         /**< [feed.*] sections */
#define TW_CFG_MAX_INSTRUMENTS 64   /**< strategy.instruments entries */
#define TW_CFG_MAX_EAL_ARGS 16      /**< words in eal.args */
#define TW_CFG_MAX_ARGV 64          /**< tw_cfg_eal_argv() slots */
#define TW_CFG_MAX_FINDINGS 64      /**< findings kept; more are counted as dropped */
#define TW_CFG_NAME_MAX 32          /**< port and feed names, with the NUL */
#define TW_CFG_PATH_MAX 256         /**< file paths, with the NUL */
#define TW_CFG_STRING_MAX 512       /**< vdev strings, eal.lcores, eal.args, with the NUL */
#define TW_CFG_TEXT_MAX 256         /**< finding message and hint, with the NUL */

/* ------------------------------------------------------------------------ */
/* Findings                                                                 */
/* ------------------------------------------------------------------------ */

/** How bad a finding is. */
enum tw_cfg_severity {
	TW_CFG_INFO = 0,  /**< a note: nothing to fix */
	TW_CFG_WARNING,   /**< printed; the appliance starts anyway */
	TW_CFG_ERROR,     /**< the appliance refuses to start */
};

/** One thing wrong with (or worth knowing about) a profile. */
struct tw_cfg_finding {
	enum tw_cfg_severity severity;
	char file[TW_CFG_PATH_MAX];     /**< the file at fault, as the caller named it */
	uint32_t line;                  /**< 1-based line in @c file; 0 = the file as a whole */
	char message[TW_CFG_TEXT_MAX];  /**< what is wrong, naming the key and its value */
	char hint[TW_CFG_TEXT_MAX];     /**< how to fix it; may be empty */
};

/** A bounded list of findings, in the order they were added (see tw_cfg_findings_sort()). */
struct tw_cfg_findings {
	uint32_t count;                 /**< entries used in @c item */
	uint32_t errors;                /**< TW_CFG_ERROR findings, dropped ones included */
	uint32_t warnings;              /**< TW_CFG_WARNING findings, dropped ones included */
	uint32_t infos;                 /**< TW_CFG_INFO findings, dropped ones included */
	uint32_t dropped;               /**< findings not kept because the list was full */
	struct tw_cfg_finding item[TW_CFG_MAX_FINDINGS];
};

/** Empty @p findings. Any thread. */
void tw_cfg_findings_init(struct tw_cfg_findings *findings);

/**
 * Append a finding; @p fmt and what follows form the message (truncated to
 * TW_CFG_TEXT_MAX - 1 bytes). The counters are updated even when the list
 * is full.
 *
 * @param file the file at fault; NULL or "" for a finding about no file
 * @param line 1-based line, 0 for the whole file
 * @return the new finding, to which tw_cfg_finding_hint() may add a hint, or
 *         NULL when the list is full (the finding is counted in @c dropped)
 *         or an argument is NULL.
 */
struct tw_cfg_finding *tw_cfg_findings_add(struct tw_cfg_findings *findings,
					   enum tw_cfg_severity severity, const char *file,
					   uint32_t line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/** tw_cfg_findings_add() with a va_list. */
struct tw_cfg_finding *tw_cfg_findings_addv(struct tw_cfg_findings *findings,
					    enum tw_cfg_severity severity, const char *file,
					    uint32_t line, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

/** Set the hint of @p finding (printf-style). NULL @p finding is ignored. */
void tw_cfg_finding_hint(struct tw_cfg_finding *finding, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * Sort stably: by file name, then by line (so a profile's ports.ini comes
 * before its tickwire.cfg). Findings with no file come last.
 */
void tw_cfg_findings_sort(struct tw_cfg_findings *findings);

/**
 * Format one finding as a single line, without a newline:
 * "FILE:LINE: SEVERITY: MESSAGE; hint: HINT" (":LINE" is left out for line
 * 0, "FILE:" for no file, "; hint: ..." for an empty hint).
 *
 * @return the length of the whole line (as snprintf(): a value >= @p size
 *         means it was truncated), or -EINVAL.
 */
int tw_cfg_finding_format(const struct tw_cfg_finding *finding, char *buf, size_t size);

/** "info", "warning" or "error". */
const char *tw_cfg_severity_name(enum tw_cfg_severity severity);

/* ------------------------------------------------------------------------ */
/* CPU sets                                                                 */
/* ------------------------------------------------------------------------ */

/** A set of cpu ids (Linux numbering, as in /sys/devices/system/cpu). */
struct tw_cfg_cpuset {
	uint64_t bits[TW_CFG_MAX_CPUS / 64];
};

/** Empty @p set. */
void tw_cfg_cpuset_zero(struct tw_cfg_cpuset *set);
/** Add @p cpu; ids >= TW_CFG_MAX_CPUS are ignored. */
void tw_cfg_cpuset_set(struct tw_cfg_cpuset *set, unsigned int cpu);
/** Remove @p cpu. */
void tw_cfg_cpuset_clear(struct tw_cfg_cpuset *set, unsigned int cpu);
/** Whether @p cpu is in @p set (false for ids out of range). */
bool tw_cfg_cpuset_isset(const struct tw_cfg_cpuset *set, unsigned int cpu);
/** Number of cpus in @p set. */
unsigned int tw_cfg_cpuset_count(const struct tw_cfg_cpuset *set);
/** Lowest cpu in @p set at or above @p from, or -1. */
int tw_cfg_cpuset_next(const struct tw_cfg_cpuset *set, unsigned int from);
/** @p dst = @p dst | @p src. */
void tw_cfg_cpuset_or(struct tw_cfg_cpuset *dst, const struct tw_cfg_cpuset *src);
/** @p dst = @p dst & @p src. */
void tw_cfg_cpuset_and(struct tw_cfg_cpuset *dst, const struct tw_cfg_cpuset *src);
/** @p dst = @p dst & ~@p src. */
void tw_cfg_cpuset_andnot(struct tw_cfg_cpuset *dst, const struct tw_cfg_cpuset *src);
/** Whether @p a and @p b share a cpu. */
bool tw_cfg_cpuset_intersects(const struct tw_cfg_cpuset *a, const struct tw_cfg_cpuset *b);
/** Whether every cpu of @p a is in @p b. */
bool tw_cfg_cpuset_subset(const struct tw_cfg_cpuset *a, const struct tw_cfg_cpuset *b);

/**
 * Parse a Linux cpu list ("0-3,8,10-11"; whitespace around it and an empty
 * list are accepted, as in /sys/devices/system/cpu/isolated).
 *
 * @return 0, -EINVAL (malformed), -ERANGE (a cpu id >= TW_CFG_MAX_CPUS).
 */
int tw_cfg_cpuset_parse(const char *list, struct tw_cfg_cpuset *set);

/**
 * Format @p set as a Linux cpu list ("0-3,8,10-11"; "" when empty).
 *
 * @return the length of the list (>= @p size means truncated), or -EINVAL.
 */
int tw_cfg_cpuset_format(const struct tw_cfg_cpuset *set, char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* ports.ini                                                                */
/* ------------------------------------------------------------------------ */

/** [eal]: the EAL arguments the profile implies (tw_cfg_eal_argv()). */
struct tw_cfg_eal {
	char lcores[TW_CFG_STRING_MAX];   /**< --lcores, as written */
	uint64_t lcore_defined[TW_CFG_MAX_LCORES / 64]; /**< bit per lcore id eal.lcores names */
	/** cpus each defined lcore may run on */
	struct tw_cfg_cpuset lcore_cpus[TW_CFG_MAX_LCORES];
	char file_prefix[TW_CFG_NAME_MAX]; /**< --file-prefix */
	bool no_huge;                     /**< --no-huge */
	bool no_pci;                      /**< --no-pci */
	/** -m; 0 = the estimate under no_huge, none otherwise */
	uint32_t memory_mb;
	uint64_t hugepage_size;           /**< bytes: 2 MiB or 1 GiB */
	uint32_t hugepages;               /**< pages to reserve; 0 = derived by lib/topo */
	char huge_dir[TW_CFG_PATH_MAX];   /**< --huge-dir; "" = EAL's default */
	char args[TW_CFG_STRING_MAX];     /**< further EAL arguments, whitespace-separated */
	uint32_t section_line;            /**< line of [eal] */
	uint32_t lcores_line;             /**< line of eal.lcores */
	uint32_t no_huge_line;            /**< line of eal.no_huge; 0 if absent */
	uint32_t memory_mb_line;          /**< line of eal.memory_mb; 0 if absent */
	uint32_t hugepage_size_line;      /**< line of eal.hugepage_size; 0 if absent */
	uint32_t hugepages_line;          /**< line of eal.hugepages; 0 if absent */
};

/** [mempool]: the one packet-buffer pool, on the NUMA node of the ports. */
struct tw_cfg_mempool {
	uint32_t mbufs;                   /**< mbufs in the pool (n of rte_pktmbuf_pool_create) */
	uint32_t cache;                   /**< per-lcore cache size */
	uint32_t data_room;               /**< data room per mbuf, headroom included */
	uint32_t section_line;            /**< line of [mempool]; 0 if absent (defaults) */
	uint32_t mbufs_line;              /**< line of mempool.mbufs; 0 if absent */
};

/** How a port reaches the NIC. */
enum tw_cfg_port_kind {
	TW_CFG_PORT_PCI = 0,              /**< a PCI device bound to a DPDK driver */
	TW_CFG_PORT_VDEV,                 /**< a virtual device (net_pcap, net_null, ...) */
};

/** A PCI address, domain:bus:device.function. */
struct tw_cfg_pci_addr {
	uint32_t domain;
	uint8_t bus;
	uint8_t device;
	uint8_t function;
};

/** [port.NAME] */
struct tw_cfg_port {
	char name[TW_CFG_NAME_MAX];       /**< NAME of [port.NAME] */
	enum tw_cfg_port_kind kind;
	struct tw_cfg_pci_addr pci;       /**< TW_CFG_PORT_PCI only */
	/** "0000:3b:00.0" (for -a) or the vdev string (--vdev) */
	char device[TW_CFG_STRING_MAX];
	char devname[TW_CFG_NAME_MAX];    /**< for rte_eth_dev_get_port_by_name(): PCI address, or
					   *   the vdev string up to its first comma */
	uint16_t rx_queues;
	uint16_t tx_queues;
	uint16_t rx_desc;                 /**< descriptors per rx queue */
	uint16_t tx_desc;                 /**< descriptors per tx queue */
	uint32_t section_line;            /**< line of [port.NAME] */
	uint32_t device_line;             /**< line of its pci or vdev key */
};

/**
 * The rx_pcap= file of a vdev port (net_pcap replaying a capture), or ""
 * (a PCI port, or a vdev without one). @return the length written.
 */
size_t tw_cfg_port_rx_pcap(const struct tw_cfg_port *port, char *out, size_t cap);

/** Which copy of a channel a feed carries. */
enum tw_cfg_feed_side {
	TW_CFG_SIDE_A = 0,
	TW_CFG_SIDE_B,
};

/** What a feed carries. */
enum tw_cfg_feed_kind {
	TW_CFG_FEED_INCREMENTAL = 0,      /**< incremental refresh: the hot path */
	TW_CFG_FEED_SNAPSHOT,             /**< market recovery (snapshot loop) */
	TW_CFG_FEED_DEFINITION,           /**< instrument definitions */
};

/**
 * [feed.NAME] fault.*: fault injection on the appliance's rx path, for tests
 * (app/tickwire/tw_fault.h). Rates are integers per million. Each decision
 * is a pure function of (seed, side, channel, the packet's MsgSeqNum), so a
 * test can recompute which sequence numbers a feed dropped.
 */
struct tw_cfg_fault {
	uint32_t drop_ppm;                /**< packets dropped */
	uint32_t dup_ppm;                 /**< packets passed on twice */
	uint32_t reorder_ppm;             /**< packets passed on after 1..reorder_window later ones */
	uint32_t reorder_window;          /**< 1..TW_CFG_FAULT_REORDER_MAX */
	uint32_t delay_ppm;               /**< packets held back ... */
	uint32_t delay_packets;           /**< ... until this many later packets of the feed came, */
	uint32_t delay_us;                /**< ... or this long (0: by count only) */
	uint32_t first_seq;               /**< the rates apply from this MsgSeqNum ... */
	uint32_t last_seq;                /**< ... to this one; 0: no end */
	uint64_t seed;
	uint64_t die_after;               /**< the feed goes silent after this many packets; 0 never */
	bool enabled;                     /**< a rate or die_after is set: the feed has faults */
	uint32_t line;                    /**< line of its first fault.* key; 0 if none */
};

#define TW_CFG_FAULT_REORDER_MAX 16   /**< fault.reorder_window at most */
#define TW_CFG_FAULT_DELAY_MAX 64     /**< fault.delay_packets at most */

/** [feed.NAME]: one multicast stream and where it arrives. */
struct tw_cfg_feed {
	char name[TW_CFG_NAME_MAX];       /**< NAME of [feed.NAME] */
	uint32_t channel;                 /**< CME channel id */
	enum tw_cfg_feed_kind kind;
	enum tw_cfg_feed_side side;
	uint32_t group;                   /**< IPv4 multicast group, network byte order */
	char group_text[16];              /**< the group as written, dotted quad */
	uint16_t udp_port;                /**< host byte order */
	uint16_t port;                    /**< index into tw_cfg.ports */
	uint16_t rx_queue;                /**< rx queue of that port */
	uint32_t section_line;            /**< line of [feed.NAME] */
	uint32_t port_line;               /**< line of its port key */
	uint32_t rx_queue_line;           /**< line of its rx_queue key; 0 if absent */
	struct tw_cfg_fault fault;        /**< fault.* keys (tests) */
};

/* ------------------------------------------------------------------------ */
/* tickwire.cfg                                                             */
/* ------------------------------------------------------------------------ */

/** The threads of DESIGN.md section 1, each on its own lcore. */
enum tw_cfg_role {
	TW_CFG_ROLE_MAIN = 0,             /**< control, stats, telemetry, timers */
	TW_CFG_ROLE_CAPTURE_A,            /**< drains feed A's rx queues (two-stage only) */
	TW_CFG_ROLE_CAPTURE_B,            /**< drains feed B's rx queues (two-stage only) */
	TW_CFG_ROLE_DECODE,               /**< the decode group: arbiter, decoder, book, signal */
	TW_CFG_ROLE_ORDER_OUT,            /**< the order-entry session */
	TW_CFG_ROLE_COUNT,
};

/** One entry of lcores { }. */
struct tw_cfg_lcore {
	/** lcore id; -1 = not set (captures, one-thread only) */
	int32_t id;
	uint32_t line;                    /**< line of the setting; 0 if absent */
};

/** topology */
enum tw_cfg_topology {
	TW_CFG_TOPOLOGY_TWO_STAGE = 0,    /**< capture lcores hand mbufs to the decode lcore */
	TW_CFG_TOPOLOGY_ONE_THREAD,       /**< the decode lcore polls both rx queues itself */
};

/** Queue of a hand-off (lib/actor's mailbox queues, plus DPDK's rte_ring). */
enum tw_cfg_queue_type {
	TW_CFG_QUEUE_BQUEUE = 0,          /**< "bqueue": ACT_QUEUE_BQUEUE */
	TW_CFG_QUEUE_BATCHED,             /**< "batched": ACT_QUEUE_BQUEUE_BATCHED */
	TW_CFG_QUEUE_SHARDED,             /**< "sharded": ACT_QUEUE_SHARDED */
	TW_CFG_QUEUE_LOCKFREE,            /**< "lockfree": ACT_QUEUE_LOCKFREE */
	TW_CFG_QUEUE_RTE_RING,            /**< "rte_ring": capture -> decode only */
};

/** What a full hand-off does (lib/actor's enum act_overflow, without block). */
enum tw_cfg_overflow {
	TW_CFG_OVERFLOW_DROP = 0,         /**< "drop": drop the newest, count it */
	TW_CFG_OVERFLOW_FAIL,             /**< "fail": the sender gets -EAGAIN and keeps it */
};

/** handoff.capture_to_decode and handoff.signal_to_order_out */
struct tw_cfg_handoff {
	enum tw_cfg_queue_type type;
	uint32_t capacity;                /**< slots, a power of two */
	uint32_t shards;                  /**< lanes of a sharded queue, a power of two */
	enum tw_cfg_overflow overflow;
	uint32_t line;                    /**< line of the group; 0 if absent (defaults) */
};

/** arbitration: how long a sequence gap waits for the other feed. */
struct tw_cfg_arbitration {
	uint32_t gap_wait_packets;        /**< packets of the other feed; 0 = no packet bound */
	uint32_t gap_wait_us;             /**< microseconds; 0 = no time bound */
};

/** recovery mode */
enum tw_cfg_recovery_mode {
	TW_CFG_RECOVERY_NONE = 0,         /**< a stale book waits for a channel reset */
	TW_CFG_RECOVERY_SNAPSHOT,         /**< recover from the snapshot feeds of ports.ini */
};

/** How an instrument first seen mid-stream starts (lib/book's enum book_join). */
enum tw_cfg_join {
	TW_CFG_JOIN_TRUST = 0,            /**< "trust": valid at once */
	TW_CFG_JOIN_RECOVER,              /**< "recover": stale until a snapshot (CME late join) */
};

/** What a declared packet loss does to the books (lib/book's enum book_loss_policy). */
enum tw_cfg_on_loss {
	TW_CFG_ON_LOSS_RPT_SEQ = 0,       /**< "rpt_seq": each instrument's RptSeq gap shows */
	TW_CFG_ON_LOSS_STALE_ALL,         /**< "stale_all": every valid book goes stale */
};

/** recovery */
struct tw_cfg_recovery {
	enum tw_cfg_recovery_mode mode;
	/** join policy; "auto" in the file resolves to recover with mode
	 *  snapshot, trust with mode none */
	enum tw_cfg_join join;
	enum tw_cfg_on_loss on_loss;
	/** incremental packets kept while a book is stale (lib/book's recovery buffer) */
	uint32_t buffer_packets;
	/** an instrument halted (stale, silent) longer than this raises an alarm */
	uint32_t max_wait_ms;
	/** cancel open orders of an instrument whose book goes stale */
	bool cancel_on_stale;
	/** trade again on an instrument once its book is valid again */
	bool resume;
	/** the alarm also engages the kill switch */
	bool kill_on_alarm;
	/** no packet on either feed of a channel this long: its books are
	 *  treated as stale; 0: never */
	uint32_t silence_ms;
	uint32_t mode_line;               /**< line of recovery.mode; 0 if absent */
	uint32_t join_line;               /**< line of recovery.join; 0 if absent */
};

/** When book changes are published to the signal (lib/book's enum book_publish). */
enum tw_cfg_publish {
	TW_CFG_PUBLISH_END_OF_EVENT = 0,  /**< "end_of_event": at MatchEventIndicator EndOfEvent */
	TW_CFG_PUBLISH_PACKET,            /**< "packet": also after every packet */
};

/**
 * book.mbo: market-by-order books (lib/book's book_feed_config.mbo), kept
 * for the listed channels only; the bounds apply to each of them.
 */
struct tw_cfg_mbo {
	uint32_t n_channels;
	uint32_t channels[TW_CFG_MAX_FEEDS]; /**< CME channel ids, distinct */
	uint32_t channels_line;           /**< line of book.mbo.channels; 0 if absent */
	uint32_t instruments;             /**< MBO books per channel */
	uint32_t orders;                  /**< resting orders per MBO book */
	uint32_t levels;                  /**< price levels per side of an MBO book */
	uint32_t diffs;                   /**< MBO/MBP differences kept per channel */
	bool presize;                     /**< OrderID tables at full size from the start */
};

/** book: the books of each channel (lib/book). */
struct tw_cfg_book {
	enum tw_cfg_publish publish;
	uint32_t max_instruments;         /**< instruments per channel */
	struct tw_cfg_mbo mbo;
};

/**
 * strategy: the sample top-of-book imbalance rule. With bid and ask the
 * quantities at the best levels: buy order_qty when
 * bid * imbalance_denominator >= ask * imbalance_numerator, sell when
 * ask * imbalance_denominator >= bid * imbalance_numerator. Integer
 * arithmetic only.
 */
struct tw_cfg_strategy {
	bool enabled;
	uint32_t n_instruments;
	int32_t instruments[TW_CFG_MAX_INSTRUMENTS]; /**< security ids, distinct, > 0 */
	uint32_t imbalance_numerator;     /**< > imbalance_denominator */
	uint32_t imbalance_denominator;   /**< > 0 */
	uint32_t order_qty;
	uint32_t max_orders;              /**< orders in the whole run */
	/** hold a new order while the last one on that side of the instrument
	 *  still has more than this many contracts ahead of it (market by
	 *  order; book.mbo); 0: no such rule */
	uint32_t queue_max_ahead;
};

/** risk: pre-trade limits, checked by the order-out actor before any byte is written. */
struct tw_cfg_risk {
	uint32_t max_order_qty;
	uint32_t price_band_ticks;        /**< around the last mid */
	uint32_t max_position;            /**< absolute, per instrument */
	uint32_t max_open_orders;
	uint32_t max_messages_per_second;
};

/** session: the order-entry session. Credentials only ever by file. */
struct tw_cfg_session {
	/** session file (parameters, persisted sequence numbers) */
	char file[TW_CFG_PATH_MAX];
	char credentials_file[TW_CFG_PATH_MAX]; /**< iLink 3 keys; "" = no log-on */
	/** index into tw_cfg.ports orders are written to; -1 = none */
	int32_t tx_port;
	/** iLink 3 gateway, an IPv4 address (dotted quad); "" = none */
	char gateway_host[16];
	uint16_t gateway_port;            /**< its TCP port; 0 = none */
	uint16_t keep_alive_ms;           /**< proposed FIXP KeepAliveInterval */
	char session_id[4];               /**< iLink 3 session id (3 characters) */
	char firm_id[6];                  /**< firm id (up to 5 characters) */
	uint32_t credentials_line;        /**< line of credentials_file; 0 if absent */
	uint32_t gateway_line;            /**< line of gateway_host; 0 if absent */
};

/** replay: when a replay stops. Both 0 = run until SIGINT/SIGTERM. */
struct tw_cfg_replay {
	uint64_t stop_after_packets;      /**< 0 = no limit */
	/** idle this long after the inputs are exhausted; 0 = never */
	uint32_t stop_idle_ms;
};

/**
 * poll: what a hot lcore (capture, decode, order-out) does when it finds no
 * work. Default: busy-poll forever (idle_sleep_us = 0), the production
 * setting on isolated cores. A lab host (a VM sharing its cpus) may let the
 * lcores sleep idle_sleep_us after idle_polls empty polls in a row; the first
 * packet after a quiet spell then waits up to idle_sleep_us.
 */
struct tw_cfg_poll {
	uint32_t idle_sleep_us;           /**< 0 = never sleep */
	uint32_t idle_polls;              /**< empty polls in a row before sleeping */
	/** order-out's own idle sleep; -1: idle_sleep_us */
	int32_t order_out_idle_sleep_us;
	/** order-out thread's nice value (-20..19); 0: unchanged. Where
	 *  order-out shares a cpu with busy-polling lcores (lab hosts), a
	 *  negative value lets it run soon after it wakes. */
	int32_t order_out_nice;
	uint32_t idle_sleep_us_line;      /**< 0 if absent */
};

/** checks: how strictly lib/topo judges the core map. */
struct tw_cfg_checks {
	bool require_isolation;           /**< hot lcore not isolated: error, else warning */
	/** hot lcores sharing a physical core: error, else warning */
	bool require_dedicated_cores;
	/** hot lcore off its NIC's NUMA node: error, else warning */
	bool require_numa_local;
	uint32_t require_isolation_line;
	uint32_t require_dedicated_cores_line;
	uint32_t require_numa_local_line;
};

/** A loaded, valid profile. Read-only once tw_cfg_load() returns it. */
struct tw_cfg {
	char ports_path[TW_CFG_PATH_MAX];  /**< ports.ini, as named to tw_cfg_load() */
	char config_path[TW_CFG_PATH_MAX]; /**< tickwire.cfg, as named to tw_cfg_load() */

	/* ports.ini */
	struct tw_cfg_eal eal;
	struct tw_cfg_mempool mempool;
	uint32_t n_ports;
	struct tw_cfg_port ports[TW_CFG_MAX_PORTS];  /**< in file order */
	uint32_t n_feeds;
	struct tw_cfg_feed feeds[TW_CFG_MAX_FEEDS];  /**< in file order */

	/* tickwire.cfg */
	struct tw_cfg_lcore lcores[TW_CFG_ROLE_COUNT]; /**< indexed by enum tw_cfg_role */
	uint32_t lcores_line;              /**< line of the lcores group */
	enum tw_cfg_topology topology;
	uint32_t topology_line;            /**< 0 if absent (default two-stage) */
	struct tw_cfg_handoff capture_to_decode;
	struct tw_cfg_handoff signal_to_order_out;
	struct tw_cfg_arbitration arbitration;
	struct tw_cfg_recovery recovery;
	struct tw_cfg_book book;
	struct tw_cfg_strategy strategy;
	struct tw_cfg_risk risk;
	struct tw_cfg_session session;
	struct tw_cfg_replay replay;
	struct tw_cfg_poll poll;
	char latency_file[TW_CFG_PATH_MAX]; /**< latency records; "" = not recorded */
	uint32_t stats_interval_ms;        /**< periodic stats on the main lcore; 0 = off */
	struct tw_cfg_checks checks;
};

/**
 * Load and validate a profile: @p ports_path (ports.ini) and @p config_path
 * (tickwire.cfg). Both files are checked completely, then against each other
 * (lcores exist in eal.lcores, feeds name ports, the mempool covers the rx
 * rings, ...), so one call reports every problem it can find. Relative paths
 * inside the files are used as written (relative to the working directory,
 * as DPDK does); the credentials file, when it exists, must not be readable
 * by group or others.
 *
 * @param findings receives every finding; it is not emptied first
 * @return the configuration (free with tw_cfg_free()), or NULL with errno:
 *         EINVAL (the profile has errors, all in @p findings; or a NULL
 *         argument), ENOMEM.
 */
struct tw_cfg *tw_cfg_load(const char *ports_path, const char *config_path,
			   struct tw_cfg_findings *findings);

/** Free a configuration from tw_cfg_load(); NULL is ignored. */
void tw_cfg_free(struct tw_cfg *cfg);

/** "main", "capture_a", "capture_b", "decode", "order_out" (the tickwire.cfg keys). */
const char *tw_cfg_role_name(enum tw_cfg_role role);

/** Whether @p role polls or handles packets (capture, decode, order-out): a hot lcore. */
bool tw_cfg_role_is_hot(enum tw_cfg_role role);

/** Whether @p cfg runs @p role (the captures do not run in the one-thread topology). */
bool tw_cfg_role_used(const struct tw_cfg *cfg, enum tw_cfg_role role);

/** Whether eal.lcores of @p cfg defines lcore @p lcore. */
bool tw_cfg_lcore_defined(const struct tw_cfg *cfg, unsigned int lcore);

/** "two-stage" or "one-thread". */
const char *tw_cfg_topology_name(enum tw_cfg_topology topology);

/** "bqueue", "batched", "sharded", "lockfree" or "rte_ring". */
const char *tw_cfg_queue_type_name(enum tw_cfg_queue_type type);

/**
 * Bytes of DPDK memory (hugepages, or -m under no_huge) the profile needs:
 * the mempool (mbufs x (data_room + 192 bytes of mbuf and mempool headers)),
 * the descriptor rings (64 bytes per descriptor), the rte_ring hand-off if
 * any (8 bytes per slot), plus 128 MiB for EAL's own heap and memzones.
 */
uint64_t tw_cfg_memory_bytes(const struct tw_cfg *cfg);

/** The EAL argument vector the profile implies; see tw_cfg_eal_argv(). */
struct tw_cfg_argv {
	int argc;
	char *argv[TW_CFG_MAX_ARGV + 1];   /**< argv[argc] is NULL; points into @c storage */
	char storage[4 * TW_CFG_STRING_MAX + 1024];
};

/**
 * Build the EAL arguments of the profile: @p prog, --lcores, --main-lcore,
 * --file-prefix, --no-huge and -m, --no-pci, --huge-dir, -a per PCI port,
 * --vdev per vdev port, then the words of eal.args. A program puts its own
 * command-line EAL arguments after these, so they override.
 *
 * @return 0, -EINVAL (NULL argument), -E2BIG (does not fit @p out).
 */
int tw_cfg_eal_argv(const struct tw_cfg *cfg, const char *prog, struct tw_cfg_argv *out);

/* ------------------------------------------------------------------------ */
/* Schema                                                                   */
/* ------------------------------------------------------------------------ */

/** Which file a key lives in. */
enum tw_cfg_file {
	TW_CFG_FILE_PORTS = 0,            /**< ports.ini */
	TW_CFG_FILE_CONFIG,               /**< tickwire.cfg */
};

/** Value type of a key. */
enum tw_cfg_key_type {
	TW_CFG_KEY_INT = 0,
	TW_CFG_KEY_BOOL,
	TW_CFG_KEY_STRING,
	TW_CFG_KEY_INT_LIST,              /**< libconfig array or list of integers */
};

/** One documented key (dpdk-config/README.md lists the same). */
struct tw_cfg_key {
	enum tw_cfg_file file;
	/** INI section ("eal", "port.*") or libconfig group ("" = top) */
	const char *section;
	const char *name;
	enum tw_cfg_key_type type;
	bool required;
	int64_t min;                      /**< integers: least value; strings: least length */
	/** integers: greatest value; strings: greatest length */
	int64_t max;
	/** the default as written in a file; NULL if required */
	const char *default_text;
};

/**
 * Every key of both files, in documentation order.
 *
 * @param count receives the number of entries
 * @return the table (static storage).
 */
const struct tw_cfg_key *tw_cfg_keys(size_t *count);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_CONFIG_H */
