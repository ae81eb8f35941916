/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * CPU sets, Linux cpu lists, and DPDK's --lcores syntax.
 *
 * --lcores grammar (DPDK "EAL parameters"), as accepted here:
 *   lcores  := element (',' element)*
 *   element := lset ['@' cset]
 *   lset    := NUM | NUM '-' NUM | '(' list ')'
 *   cset    := NUM | '(' list ')'
 *   list    := NUM ['-' NUM] (',' NUM ['-' NUM])*
 * Without '@', a parenthesised set is also the cpu set of each of its lcores
 * ("(0,6)": lcores 0 and 6 both float on cpus 0 and 6) and a bare number or
 * range maps each lcore onto the cpu of the same id ("7-8").
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config_pvt.h"

void tw_cfg_cpuset_zero(struct tw_cfg_cpuset *set)
{
	memset(set, 0, sizeof(*set));
}

void tw_cfg_cpuset_set(struct tw_cfg_cpuset *set, unsigned int cpu)
{
	if (cpu < TW_CFG_MAX_CPUS)
		set->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

void tw_cfg_cpuset_clear(struct tw_cfg_cpuset *set, unsigned int cpu)
{
	if (cpu < TW_CFG_MAX_CPUS)
		set->bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

bool tw_cfg_cpuset_isset(const struct tw_cfg_cpuset *set, unsigned int cpu)
{
	return cpu < TW_CFG_MAX_CPUS && (set->bits[cpu / 64] >> (cpu % 64) & 1) != 0;
}

unsigned int tw_cfg_cpuset_count(const struct tw_cfg_cpuset *set)
{
	unsigned int n = 0, i;

	for (i = 0; i < TW_CFG_MAX_CPUS / 64; i++)
		n += (unsigned int)__builtin_popcountll(set->bits[i]);
	return n;
}

int tw_cfg_cpuset_next(const struct tw_cfg_cpuset *set, unsigned int from)
{
	unsigned int i;

	for (i = from; i < TW_CFG_MAX_CPUS; i++) {
		uint64_t word = set->bits[i / 64] >> (i % 64);

		if (word == 0) {
			i |= 63; /* skip the rest of this word */
			continue;
		}
		return (int)(i + (unsigned int)__builtin_ctzll(word));
	}
	return -1;
}

void tw_cfg_cpuset_or(struct tw_cfg_cpuset *dst, const struct tw_cfg_cpuset *src)
{
	unsigned int i;

	for (i = 0; i < TW_CFG_MAX_CPUS / 64; i++)
		dst->bits[i] |= src->bits[i];
}

void tw_cfg_cpuset_and(struct tw_cfg_cpuset *dst, const struct tw_cfg_cpuset *src)
{
	unsigned int i;

	for (i = 0; i < TW_CFG_MAX_CPUS / 64; i++)
		dst->bits[i] &= src->bits[i];
}

void tw_cfg_cpuset_andnot(struct tw_cfg_cpuset *dst, const struct tw_cfg_cpuset *src)
{
	unsigned int i;

	for (i = 0; i < TW_CFG_MAX_CPUS / 64; i++)
		dst->bits[i] &= ~src->bits[i];
}

bool tw_cfg_cpuset_intersects(const struct tw_cfg_cpuset *a, const struct tw_cfg_cpuset *b)
{
	unsigned int i;

	for (i = 0; i < TW_CFG_MAX_CPUS / 64; i++)
		if ((a->bits[i] & b->bits[i]) != 0)
			return true;
	return false;
}

bool tw_cfg_cpuset_subset(const struct tw_cfg_cpuset *a, const struct tw_cfg_cpuset *b)
{
	unsigned int i;

	for (i = 0; i < TW_CFG_MAX_CPUS / 64; i++)
		if ((a->bits[i] & ~b->bits[i]) != 0)
			return false;
	return true;
}

/* A decimal number below @limit; advances *p. */
static int parse_number(const char **p, unsigned int limit, unsigned int *out)
{
	const char *s = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= limit)
			return -ERANGE;
		s++;
	}
	*p = s;
	*out = (unsigned int)v;
	return 0;
}

/* "A" or "A-B" with A <= B, each below @limit, into @set; advances *p. */
static int parse_range(const char **p, unsigned int limit, struct tw_cfg_cpuset *set)
{
	unsigned int lo, hi, i;
	int rc;

	rc = parse_number(p, limit, &lo);
	if (rc < 0)
		return rc;
	hi = lo;
	if (**p == '-') {
		(*p)++;
		rc = parse_number(p, limit, &hi);
		if (rc < 0)
			return rc;
		if (hi < lo)
			return -EINVAL;
	}
	for (i = lo; i <= hi; i++)
		tw_cfg_cpuset_set(set, i);
	return 0;
}

int tw_cfg_cpuset_parse(const char *list, struct tw_cfg_cpuset *set)
{
	const char *p;
	int rc;

	if (list == NULL || set == NULL)
		return -EINVAL;
	tw_cfg_cpuset_zero(set);
	p = list;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0')
		return 0;
	for (;;) {
		rc = parse_range(&p, TW_CFG_MAX_CPUS, set);
		if (rc < 0)
			return rc;
		if (*p != ',')
			break;
		p++;
	}
	while (isspace((unsigned char)*p))
		p++;
	return *p == '\0' ? 0 : -EINVAL;
}

int tw_cfg_cpuset_format(const struct tw_cfg_cpuset *set, char *buf, size_t size)
{
	size_t len = 0;
	int cpu, end, n;

	if (set == NULL || (buf == NULL && size > 0))
		return -EINVAL;
	if (size > 0)
		buf[0] = '\0';
	for (cpu = tw_cfg_cpuset_next(set, 0); cpu >= 0;) {
		end = cpu;
		while (end + 1 < TW_CFG_MAX_CPUS &&
		       tw_cfg_cpuset_isset(set, (unsigned int)end + 1))
			end++;
		if (end == cpu)
			n = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0,
				     "%s%d", len > 0 ? "," : "", cpu);
		else
			n = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0,
				     "%s%d-%d", len > 0 ? "," : "", cpu, end);
		len += (size_t)n;
		cpu = tw_cfg_cpuset_next(set, (unsigned int)end + 1);
	}
	return (int)len;
}

/* lset or cset: NUM, NUM-NUM (@allow_range), or '(' list ')'. */
static int parse_set(const char **p, unsigned int limit, bool allow_range, bool *grouped,
		     struct tw_cfg_cpuset *set)
{
	int rc;

	tw_cfg_cpuset_zero(set);
	*grouped = false;
	if (**p != '(') {
		unsigned int v;

		if (allow_range)
			return parse_range(p, limit, set);
		rc = parse_number(p, limit, &v);
		if (rc == 0)
			tw_cfg_cpuset_set(set, v);
		return rc;
	}
	(*p)++;
	*grouped = true;
	for (;;) {
		rc = parse_range(p, limit, set);
		if (rc < 0)
			return rc;
		if (**p == ')')
			break;
		if (**p != ',')
			return -EINVAL;
		(*p)++;
	}
	(*p)++;
	return 0;
}

int tw_cfg__parse_lcores(const char *text, struct tw_cfg_eal *eal, char *why, size_t why_len)
{
	struct tw_cfg_cpuset lset, cset;
	const char *p = text;
	bool grouped, cgrouped, own_cpu;
	unsigned int lcore;
	int rc;

	memset(eal->lcore_defined, 0, sizeof(eal->lcore_defined));
	for (lcore = 0; lcore < TW_CFG_MAX_LCORES; lcore++)
		tw_cfg_cpuset_zero(&eal->lcore_cpus[lcore]);
	if (*p == '\0') {
		snprintf(why, why_len, "empty");
		return -EINVAL;
	}
	for (;;) {
		const char *start = p;

		rc = parse_set(&p, TW_CFG_MAX_LCORES, true, &grouped, &lset);
		if (rc == -ERANGE) {
			snprintf(why, why_len, "lcore id at \"%.20s\" is %u or more", start,
				 TW_CFG_MAX_LCORES);
			return -EINVAL;
		}
		if (rc < 0) {
			snprintf(why, why_len, "expected an lcore number or (set) at \"%.20s\"",
				 start);
			return -EINVAL;
		}
		/* a bare number or range without '@' puts lcore N on cpu N */
		own_cpu = !grouped && *p != '@';
		cset = lset;
		if (*p == '@') {
			p++;
			start = p;
			rc = parse_set(&p, TW_CFG_MAX_CPUS, false, &cgrouped, &cset);
			if (rc == -ERANGE) {
				snprintf(why, why_len, "cpu id at \"%.20s\" is %u or more", start,
					 TW_CFG_MAX_CPUS);
				return -EINVAL;
			}
			if (rc < 0) {
				snprintf(why, why_len,
					 "expected a cpu number or (set) after '@' at \"%.20s\"",
					 start);
				return -EINVAL;
			}
		}
		for (lcore = 0; lcore < TW_CFG_MAX_LCORES; lcore++) {
			if (!tw_cfg_cpuset_isset(&lset, lcore))
				continue;
			if ((eal->lcore_defined[lcore / 64] >> (lcore % 64) & 1) != 0) {
				snprintf(why, why_len, "lcore %u is mapped twice", lcore);
				return -EINVAL;
			}
			eal->lcore_defined[lcore / 64] |= UINT64_C(1) << (lcore % 64);
			if (own_cpu)
				tw_cfg_cpuset_set(&eal->lcore_cpus[lcore], lcore);
			else
				eal->lcore_cpus[lcore] = cset;
		}
		if (*p == '\0')
			break;
		if (*p != ',') {
			snprintf(why, why_len, "expected ',' or the end at \"%.20s\"", p);
			return -EINVAL;
		}
		p++;
	}
	return 0;
}
