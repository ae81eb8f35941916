/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the MDP3 fuzz harness and its generated accessor caller
 * (fuzz_accessors_gen.c, written at build time by gen_fuzz_accessors.py).
 */
#ifndef FUZZ_MDP3_H
#define FUZZ_MDP3_H

#include <stdint.h>

#include "fuzz_common.h"
#include "mdp3.h"

/**
 * Call every typed accessor of the message's template (root fields, every
 * entry of every group).
 * @return 1 if the template has accessors, 0 otherwise.
 */
int fuzz_touch_typed(const struct mdp3_msg *msg);

#endif /* FUZZ_MDP3_H */
