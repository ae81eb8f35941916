/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Durable session journal: one small file, replaced atomically
 * (write temp, fsync, rename, fsync directory).  A torn or foreign file is
 * detected by magic, size and an FNV-1a checksum and refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ilink3.h"

#define JOURNAL_MAGIC UINT64_C(0x314c414e524a3349) /* "I3JRNAL1" */

struct journal_file {
	uint64_t magic;
	struct il3_journal_record rec;
	uint64_t checksum;
};

static uint64_t
fnv1a(const void *data, size_t length)
{
	const uint8_t *p = data;
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	size_t i;

	for (i = 0; i < length; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

int
il3_journal_load(const char *path, struct il3_journal_record *out)
{
	struct journal_file file;
	ssize_t n;
	int fd;

	if (path == NULL || out == NULL)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			return -errno;
		memset(out, 0, sizeof(*out));
		out->next_out_seq = 1;
		out->next_in_seq = 1;
		out->next_clordid = 1;
		return 0;
	}
	n = read(fd, &file, sizeof(file));
	close(fd);
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(file) || file.magic != JOURNAL_MAGIC ||
			file.checksum != fnv1a(&file, offsetof(struct journal_file, checksum)) ||
			file.rec.pending_length > IL3_JOURNAL_MAX_FRAME)
		return -EBADMSG;
	*out = file.rec;
	return 0;
}

int
il3_journal_save(const char *path, const struct il3_journal_record *rec)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	struct journal_file file;
	char *slash;
	int fd, dfd, rc = 0;

	if (path == NULL || rec == NULL)
		return -EINVAL;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp) ||
			snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	memset(&file, 0, sizeof(file));
	file.magic = JOURNAL_MAGIC;
	file.rec = *rec;
	file.checksum = fnv1a(&file, offsetof(struct journal_file, checksum));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, &file, sizeof(file)) != (ssize_t)sizeof(file))
		rc = errno != 0 ? -errno : -EIO;
	if (rc == 0 && fdatasync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		unlink(tmp);
		return rc;
	}
	slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fsync(dfd) < 0)
		rc = -errno;
	close(dfd);
	return rc;
}
