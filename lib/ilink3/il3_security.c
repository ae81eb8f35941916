/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * base64url, HMAC-SHA256 (OpenSSL libcrypto), canonical strings, and the
 * owner-only credentials file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "ilink3.h"

static int
b64url_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

int
il3_base64url_decode(const char *text, size_t length, uint8_t *out, size_t capacity)
{
	uint32_t acc = 0;
	size_t i, n = 0;
	int bits = 0;

	if (text == NULL || (out == NULL && capacity > 0))
		return -EINVAL;
	while (length > 0 && text[length - 1] == '=')
		length--;
	if (length % 4 == 1)
		return -EINVAL;
	for (i = 0; i < length; i++) {
		int v = b64url_value((unsigned char)text[i]);

		if (v < 0)
			return -EINVAL;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == capacity)
				return -ENOBUFS;
			out[n++] = (uint8_t)(acc >> bits);
		}
	}
	if (n > INT32_MAX)
		return -EINVAL;
	return (int)n;
}

int
il3_hmac_sha256(const uint8_t *key, size_t key_length, const void *message, size_t length,
		uint8_t out[IL3_SIGNATURE_SIZE])
{
	unsigned int out_length = 0;

	if (key == NULL || message == NULL || out == NULL || key_length > INT32_MAX)
		return -EINVAL;
	if (HMAC(EVP_sha256(), key, (int)key_length, message, length, out, &out_length) == NULL ||
			out_length != IL3_SIGNATURE_SIZE)
		return -EIO;
	return 0;
}

static int
fit(int n, size_t capacity)
{
	if (n < 0 || (size_t)n >= capacity)
		return -ENOBUFS;
	return n;
}

int
il3_canonical_negotiate(char *out, size_t capacity, uint64_t request_timestamp, uint64_t uuid,
		const char *session, const char *firm)
{
	if (out == NULL || session == NULL || firm == NULL)
		return -EINVAL;
	return fit(snprintf(out, capacity, "%" PRIu64 "\n%" PRIu64 "\n%s\n%s",
			request_timestamp, uuid, session, firm), capacity);
}

int
il3_canonical_establish(char *out, size_t capacity, uint64_t request_timestamp, uint64_t uuid,
		const char *session, const char *firm, const char *system_name,
		const char *system_version, const char *system_vendor, uint32_t next_seq_no,
		uint16_t keep_alive_ms)
{
	if (out == NULL || session == NULL || firm == NULL || system_name == NULL ||
			system_version == NULL || system_vendor == NULL)
		return -EINVAL;
	return fit(snprintf(out, capacity, "%" PRIu64 "\n%" PRIu64 "\n%s\n%s\n%s\n%s\n%s\n%"
			PRIu32 "\n%u", request_timestamp, uuid, session, firm, system_name,
			system_version, system_vendor, next_seq_no, (unsigned int)keep_alive_ms),
		capacity);
}

void
il3_credentials_wipe(struct il3_credentials *creds)
{
	if (creds != NULL)
		explicit_bzero(creds, sizeof(*creds));
}

static char *
trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' ||
			end[-1] == '\t'))
		*--end = '\0';
	return s;
}

int
il3_credentials_load(const char *path, struct il3_credentials *out)
{
	char buf[1024];
	char *line, *save = NULL;
	bool have_id = false, have_key = false;
	struct stat st;
	ssize_t n;
	int fd, rc = 0;

	if (path == NULL || out == NULL)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto done;
	}
	if ((st.st_mode & 077) != 0 || st.st_uid != geteuid()) {
		rc = -EPERM;
		goto done;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		rc = -errno;
		goto done;
	}
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *eq, *key, *value;

		line = trim(line);
		if (*line == '\0' || *line == '#')
			continue;
		eq = strchr(line, '=');
		if (eq == NULL) {
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		key = trim(line);
		value = trim(eq + 1);
		if (strcmp(key, "access_key_id") == 0) {
			if (strlen(value) == 0 || strlen(value) > 20) {
				rc = -EINVAL;
				break;
			}
			memcpy(out->access_key_id, value, strlen(value) + 1);
			have_id = true;
		} else if (strcmp(key, "secret_key") == 0) {
			int k = il3_base64url_decode(value, strlen(value), out->key, sizeof(out->key));

			if (k <= 0) {
				rc = -EINVAL;
				break;
			}
			out->key_length = (size_t)k;
			have_key = true;
		} else {
			rc = -EINVAL;
			break;
		}
	}
	if (rc == 0 && (!have_id || !have_key))
		rc = -EINVAL;
done:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	if (rc < 0)
		il3_credentials_wipe(out);
	return rc;
}
