/* SPDX-License-Identifier: BSD-3-Clause
 * Allocation counting for the "allocates nothing" tests: tw_alloc_count.c
 * wraps malloc, calloc, realloc, posix_memalign and aligned_alloc at link
 * time (meson variable tw_alloc_count_link) and counts calls while
 * tw_alloc_counting is set. Not used under sanitizers, which own malloc.
 */
#ifndef TW_ALLOC_COUNT_H
#define TW_ALLOC_COUNT_H

extern int tw_alloc_counting;
extern unsigned long tw_allocations;

#endif
