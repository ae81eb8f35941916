/* SPDX-License-Identifier: BSD-3-Clause
 * Driver that runs a fuzz harness once over files, without libFuzzer (any
 * compiler): the seed corpus as a regression test in the ordinary (and ASan)
 * builds.  Linked with each harness (fuzz_*_replay).  usage: PROGRAM
 * FILE|DIR...  Exit 0 when every input ran (a broken promise aborts), 1 when
 * an input could not be read or there was none.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *program = "fuzz_replay";

static int
run_file(const char *path, unsigned long *count)
{
	uint8_t *data = NULL;
	long size;
	FILE *f = fopen(path, "rb");

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
			fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "%s: %s: cannot read: %s\n", program, path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return -1;
	}
	/* An exact-size copy, so that ASan sees any read past the input. */
	data = malloc(size > 0 ? (size_t)size : 1);
	if (data == NULL || (size > 0 && fread(data, (size_t)size, 1, f) != 1)) {
		fprintf(stderr, "%s: %s: cannot read\n", program, path);
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, (size_t)size);
	free(data);
	(*count)++;
	return 0;
}

static int
run_path(const char *path, unsigned long *count)
{
	struct dirent **names;
	struct stat st;
	char child[4096];
	int n, i, rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "%s: %s: %s; hint: build the seed corpus first "
				"(target fuzz_seed_corpora)\n", program, path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path, count);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "%s: %s: %s\n", program, path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && rc == 0) {
			snprintf(child, sizeof(child), "%s/%s", path, names[i]->d_name);
			rc = run_path(child, count);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int
main(int argc, char **argv)
{
	unsigned long count = 0;
	int i;

	if (argc > 0 && strrchr(argv[0], '/') != NULL)
		program = strrchr(argv[0], '/') + 1;
	else if (argc > 0)
		program = argv[0];
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", program);
		return 2;
	}
	for (i = 1; i < argc; i++)
		if (run_path(argv[i], &count) < 0)
			return 1;
	printf("%s: %lu inputs, no broken promise\n", program, count);
	return count > 0 ? 0 : 1;
}
