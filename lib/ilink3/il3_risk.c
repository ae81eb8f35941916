/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pre-trade risk checks, run by the order-out actor before any byte is
 * written.  Fixed table of IL3_RISK_MAX_INSTRUMENTS, linear search (small),
 * fixed rate window; no allocation.
 */
#include <errno.h>
#include <string.h>

#include "ilink3.h"

static const char *const reason_names[IL3_RISK_REASON_COUNT] = {
	[IL3_RISK_OK] = "ok",
	[IL3_RISK_KILL_SWITCH] = "kill_switch",
	[IL3_RISK_MAX_ORDER_QTY] = "max_order_qty",
	[IL3_RISK_NO_REFERENCE_PRICE] = "no_reference_price",
	[IL3_RISK_PRICE_BAND] = "price_band",
	[IL3_RISK_MAX_POSITION] = "max_position",
	[IL3_RISK_MAX_OPEN_ORDERS] = "max_open_orders",
	[IL3_RISK_RATE_LIMIT] = "rate_limit",
	[IL3_RISK_UNKNOWN_INSTRUMENT] = "unknown_instrument",
	[IL3_RISK_BAD_ORDER] = "bad_order",
};

const char *
il3_risk_reason_name(enum il3_risk_reason reason)
{
	if ((unsigned int)reason >= IL3_RISK_REASON_COUNT)
		return "unknown";
	return reason_names[reason];
}

int
il3_risk_init(struct il3_risk *risk, const struct il3_risk_limits *limits)
{
	if (risk == NULL || limits == NULL || limits->rate_window_ns == 0 ||
			limits->price_band < 0 || limits->max_position < 0)
		return -EINVAL;
	memset(risk, 0, sizeof(*risk));
	risk->limits = *limits;
	return 0;
}

static struct il3_risk_instrument *
find(struct il3_risk *risk, int32_t security_id, bool create)
{
	uint32_t i;

	for (i = 0; i < risk->instrument_count; i++)
		if (risk->instruments[i].security_id == security_id)
			return &risk->instruments[i];
	if (!create || risk->instrument_count == IL3_RISK_MAX_INSTRUMENTS)
		return NULL;
	risk->instruments[risk->instrument_count].security_id = security_id;
	return &risk->instruments[risk->instrument_count++];
}

const struct il3_risk_instrument *
il3_risk_instrument(const struct il3_risk *risk, int32_t security_id)
{
	return find((struct il3_risk *)(uintptr_t)risk, security_id, false);
}

int
il3_risk_set_mid(struct il3_risk *risk, int32_t security_id, int64_t mid)
{
	struct il3_risk_instrument *ins = find(risk, security_id, true);

	if (ins == NULL)
		return -ENOSPC;
	ins->mid = mid;
	ins->has_mid = true;
	return 0;
}

static enum il3_risk_reason
reject(struct il3_risk *risk, enum il3_risk_reason why)
{
	risk->rejected[why]++;
	return why;
}

static bool
rate_ok(struct il3_risk *risk, uint64_t now_ns)
{
	if (now_ns - risk->window_start_ns >= risk->limits.rate_window_ns) {
		risk->window_start_ns = now_ns;
		risk->window_count = 0;
	}
	return risk->window_count < risk->limits.max_messages;
}

enum il3_risk_reason
il3_risk_check_new(struct il3_risk *risk, const struct il3_order *order, uint64_t now_ns)
{
	struct il3_risk_instrument *ins;
	int64_t distance, exposure;

	risk->checked++;
	if (risk->killed)
		return reject(risk, IL3_RISK_KILL_SWITCH);
	if (order->quantity == 0 ||
			(order->side != IL3_SIDE_REQ_BUY && order->side != IL3_SIDE_REQ_SELL))
		return reject(risk, IL3_RISK_BAD_ORDER);
	if (order->quantity > risk->limits.max_order_qty)
		return reject(risk, IL3_RISK_MAX_ORDER_QTY);
	ins = find(risk, order->security_id, true);
	if (ins == NULL)
		return reject(risk, IL3_RISK_UNKNOWN_INSTRUMENT);
	if (!ins->has_mid)
		return reject(risk, IL3_RISK_NO_REFERENCE_PRICE);
	distance = order->price_mantissa > ins->mid ? order->price_mantissa - ins->mid :
		ins->mid - order->price_mantissa;
	if (distance < 0 || distance > risk->limits.price_band)
		return reject(risk, IL3_RISK_PRICE_BAND);
	/* worst case: every open order on this side fills, then this one */
	if (order->side == IL3_SIDE_REQ_BUY)
		exposure = ins->position + ins->open_buy + (int64_t)order->quantity;
	else
		exposure = -(ins->position - ins->open_sell - (int64_t)order->quantity);
	if (exposure > risk->limits.max_position)
		return reject(risk, IL3_RISK_MAX_POSITION);
	if (risk->open_orders >= risk->limits.max_open_orders)
		return reject(risk, IL3_RISK_MAX_OPEN_ORDERS);
	if (!rate_ok(risk, now_ns))
		return reject(risk, IL3_RISK_RATE_LIMIT);
	risk->window_count++;
	risk->open_orders++;
	if (order->side == IL3_SIDE_REQ_BUY)
		ins->open_buy += order->quantity;
	else
		ins->open_sell += order->quantity;
	return IL3_RISK_OK;
}

enum il3_risk_reason
il3_risk_check_modify(struct il3_risk *risk, bool is_cancel, uint64_t now_ns)
{
	risk->checked++;
	if (risk->killed && !is_cancel)
		return reject(risk, IL3_RISK_KILL_SWITCH);
	/* cancels reduce risk: they pass the rate limit under the kill switch */
	if (!(is_cancel && risk->killed) && !rate_ok(risk, now_ns))
		return reject(risk, IL3_RISK_RATE_LIMIT);
	risk->window_count++;
	return IL3_RISK_OK;
}

void
il3_risk_on_order_closed(struct il3_risk *risk, int32_t security_id, uint8_t side,
		uint32_t leaves_qty)
{
	struct il3_risk_instrument *ins = find(risk, security_id, false);

	if (risk->open_orders > 0)
		risk->open_orders--;
	if (ins == NULL)
		return;
	if (side == IL3_SIDE_REQ_BUY)
		ins->open_buy -= ins->open_buy < leaves_qty ? ins->open_buy : leaves_qty;
	else
		ins->open_sell -= ins->open_sell < leaves_qty ? ins->open_sell : leaves_qty;
}

void
il3_risk_on_fill(struct il3_risk *risk, int32_t security_id, uint8_t side, uint32_t qty,
		bool done)
{
	struct il3_risk_instrument *ins = find(risk, security_id, true);

	if (ins != NULL) {
		if (side == IL3_SIDE_REQ_BUY) {
			ins->position += qty;
			ins->open_buy -= ins->open_buy < qty ? ins->open_buy : qty;
		} else {
			ins->position -= qty;
			ins->open_sell -= ins->open_sell < qty ? ins->open_sell : qty;
		}
	}
	if (done && risk->open_orders > 0)
		risk->open_orders--;
}

void
il3_risk_kill(struct il3_risk *risk, bool engaged)
{
	risk->killed = engaged;
}
