/* SPDX-License-Identifier: BSD-3-Clause
 * What every fuzz harness shares (fuzz_common.h): the sink, and a scratch
 * directory for the harnesses whose library only reads or writes files
 * (journal, credentials, ports.ini, tickwire.cfg, a sysfs tree).
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"

volatile uint64_t fuzz_sink;

static char tmpdir[256];

static int
remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

static void
remove_tmpdir(void)
{
	if (tmpdir[0] != '\0')
		nftw(tmpdir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* Start time of process @p pid (/proc/PID/stat field 22), 0 if there is none. */
static unsigned long long
start_time(long pid)
{
	char path[64], text[1024], *p;
	size_t n;
	FILE *f;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	p = strrchr(text, ')');         /* the command name may hold spaces */
	for (field = 2; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	return p != NULL ? strtoull(p + 1, NULL, 10) : 0;
}

/*
 * Scratch directories of harness processes that crashed (no atexit then):
 * named after the process id and start time, so a directory whose process
 * is gone (or whose id was reused) is stale.  No file is held open meanwhile.
 */
static void
remove_stale(const char *base)
{
	DIR *dir = opendir(base);
	struct dirent *entry;
	unsigned long long started;
	char path[512];
	long pid;

	if (dir == NULL)
		return;
	while ((entry = readdir(dir)) != NULL) {
		if (sscanf(entry->d_name, "fuzz-scratch-%ld-%llu-", &pid, &started) != 2 ||
				start_time(pid) == started)
			continue;
		snprintf(path, sizeof(path), "%s/%s", base, entry->d_name);
		nftw(path, remove_one, 8, FTW_DEPTH | FTW_PHYS);
	}
	closedir(dir);
}

const char *
fuzz_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	struct stat st;

	if (tmpdir[0] != '\0')
		return tmpdir;
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
		base = "/dev/shm";
	else if (base == NULL || base[0] == '\0')
		base = "/tmp";
	remove_stale(base);
	snprintf(tmpdir, sizeof(tmpdir), "%s/fuzz-scratch-%ld-%llu-XXXXXX", base, (long)getpid(),
			start_time((long)getpid()));
	FUZZ_CHECK(mkdtemp(tmpdir) != NULL);
	atexit(remove_tmpdir);
	return tmpdir;
}

void
fuzz_write_file(const char *path, const void *data, size_t size, unsigned int mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)mode);

	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(fchmod(fd, (mode_t)mode) == 0);
	FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size);
	FUZZ_CHECK(close(fd) == 0);
}
