/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * report_gen OUT LABEL paced|unpaced|empty FLOOR_NS: one synthetic latency
 * record file (report_synth.h) for the tests of tickwire-report and
 * tickwire-plots.py. Slope 150 ns/idx, 60 s of capture, paced at 2x.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_synth.h"

int
main(int argc, char **argv)
{
	struct report_synth cfg = {.speed_milli = 2000, .tsc_hz = 2000000000u,
				   .slope_ns = 150, .seconds = 60};
	int rc;

	if (argc != 5) {
		fprintf(stderr, "usage: report_gen OUT LABEL paced|unpaced|empty FLOOR_NS\n");
		return 2;
	}
	cfg.label = argv[2];
	cfg.paced = strcmp(argv[3], "unpaced") != 0;
	cfg.empty = strcmp(argv[3], "empty") == 0;
	cfg.floor_ns = atof(argv[4]);
	rc = report_synth_write(argv[1], &cfg, NULL);
	if (rc != 0) {
		fprintf(stderr, "report_gen: %s: error %d\n", argv[1], rc);
		return 1;
	}
	return 0;
}
