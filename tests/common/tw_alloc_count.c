/* SPDX-License-Identifier: BSD-3-Clause */
#include <stddef.h>

#include "tw_alloc_count.h"

int tw_alloc_counting;
unsigned long tw_allocations;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);

static void count(void)
{
	if (tw_alloc_counting)
		tw_allocations++;
}

void *__wrap_malloc(size_t n)
{
	count();
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	count();
	return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	count();
	return __real_realloc(p, n);
}

int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
	count();
	return __real_posix_memalign(p, a, n);
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
	count();
	return __real_aligned_alloc(a, n);
}
