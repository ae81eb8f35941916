/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire.cfg and ports.ini -> the chain's settings, in one place for the
 * appliance and the library-only replay (see tw_chain_opts_from_cfg()).
 */
#include "tw_chain.h"
#include "tw_config.h"

void
tw_chain_opts_from_cfg(struct tw_chain_opts *o, const struct tw_cfg *cfg)
{
	o->gap_wait_packets = cfg->arbitration.gap_wait_packets;
	o->gap_wait_us = cfg->arbitration.gap_wait_us;
	/* one arbiter and one set of books per channel of an incremental feed */
	o->n_channels = 0;
	for (uint32_t f = 0; f < cfg->n_feeds; f++) {
		const uint16_t ch = (uint16_t)cfg->feeds[f].channel;
		uint32_t i = 0;

		if (cfg->feeds[f].kind != TW_CFG_FEED_INCREMENTAL)
			continue;
		while (i < o->n_channels && o->channels[i] != ch)
			i++;
		if (i == o->n_channels && o->n_channels < TW_CHAIN_MAX_CHANNELS)
			o->channels[o->n_channels++] = ch;
	}
	o->join = cfg->recovery.join == TW_CFG_JOIN_RECOVER ? 1 : 0;
	o->loss_policy = cfg->recovery.on_loss == TW_CFG_ON_LOSS_STALE_ALL ? 1 : 0;
	o->skip_snapshots = cfg->recovery.mode != TW_CFG_RECOVERY_SNAPSHOT;
	o->recovery_packets = cfg->recovery.buffer_packets;
	o->cancel_on_stale = cfg->recovery.cancel_on_stale;
	o->resume = cfg->recovery.resume;
	o->kill_on_alarm = cfg->recovery.kill_on_alarm;
	o->max_stale_ns = (uint64_t)cfg->recovery.max_wait_ms * 1000000u;
	o->silence_ns = (uint64_t)cfg->recovery.silence_ms * 1000000u;
	/* pre-trade risk on every order, whatever the output */
	o->risk_enabled = true;
	o->risk.max_order_qty = cfg->risk.max_order_qty;
	o->risk.max_position = cfg->risk.max_position;
	o->risk.max_open_orders = cfg->risk.max_open_orders;
	o->risk.max_messages = cfg->risk.max_messages_per_second;
	o->risk.rate_window_ns = UINT64_C(1000000000);
	o->risk.price_band = 1;  /* per order: price_band_ticks of its tick */
	o->price_band_ticks = cfg->risk.price_band_ticks;
	o->publish = cfg->book.publish == TW_CFG_PUBLISH_PACKET ? 1 : 0;
	o->max_instruments = cfg->book.max_instruments;
	for (uint32_t i = 0; i < o->n_channels; i++)
		for (uint32_t k = 0; k < cfg->book.mbo.n_channels; k++)
			if (cfg->book.mbo.channels[k] == o->channels[i])
				o->mbo[i] = true;
	o->mbo_instruments = cfg->book.mbo.instruments;
	o->mbo_orders = cfg->book.mbo.orders;
	o->mbo_levels = cfg->book.mbo.levels;
	o->mbo_diffs = cfg->book.mbo.diffs;
	o->mbo_presize = cfg->book.mbo.presize;
	o->strategy_enabled = cfg->strategy.enabled;
	o->strategy.n_instruments = cfg->strategy.n_instruments;
	for (uint32_t i = 0; i < cfg->strategy.n_instruments &&
			     i < TW_STRATEGY_MAX_INSTRUMENTS; i++)
		o->strategy.instruments[i] = cfg->strategy.instruments[i];
	o->strategy.ratio_numerator = cfg->strategy.imbalance_numerator;
	o->strategy.ratio_denominator = cfg->strategy.imbalance_denominator;
	o->strategy.order_qty = cfg->strategy.order_qty;
	o->strategy.max_orders = cfg->strategy.max_orders;
	o->strategy.queue_max_ahead = cfg->strategy.queue_max_ahead;
}

enum act_overflow
tw_chain_overflow(const struct tw_cfg_handoff *h, bool capture)
{
	/* A capture must get a refused datagram back to free its mbuf: it
	 * drops the newest itself, whatever the policy (dpdk-config/README.md). */
	if (capture)
		return ACT_OVERFLOW_FAIL;
	return h->overflow == TW_CFG_OVERFLOW_DROP ? ACT_OVERFLOW_DROP_NEWEST : ACT_OVERFLOW_FAIL;
}
