/*
 * payloads.c - encoders and decoders of the pftools-defined section payloads:
 * key/value (META, SYMINFO), MAPS, BUILDID, DSO_IMAGE, THREADS and END.
 * All fields are little-endian (format/pfile.md section 4).
 */
#include "advanced.h"
#include "internal/bound.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int pf_kv_add(struct pf_buf *b, const char *key, const char *value)
{
	size_t kl = strlen(key), vl = value ? strlen(value) : 0;
	if (kl > UINT16_MAX || vl > UINT32_MAX)
		return -E2BIG;
	int rc = pf_buf_put_le16(b, (uint16_t)kl);
	if (!rc)
		rc = pf_buf_put_le32(b, (uint32_t)vl);
	if (!rc)
		rc = pf_buf_put(b, key, kl);
	if (!rc)
		rc = pf_buf_put(b, value, vl);
	return rc;
}

int pf_kv_add_u64(struct pf_buf *b, const char *key, uint64_t value)
{
	char t[32];
	snprintf(t, sizeof(t), "%" PRIu64, value);
	return pf_kv_add(b, key, t);
}

int pf_kv_next(const uint8_t *data, size_t size, size_t *pos, const char **key, size_t *key_len,
	       const char **val, size_t *val_len)
{
	size_t p = *pos;
	if (p >= size)
		return 0;
	if (size - p < 6)
		return -EBADMSG;
	size_t kl = pf_le16(data + p), vl = pf_le32(data + p + 2);
	p += 6;
	if (kl > size - p || vl > size - p - kl)
		return -EBADMSG;
	*key = (const char *)data + p;
	*key_len = kl;
	*val = (const char *)data + p + kl;
	*val_len = vl;
	*pos = p + kl + vl;
	return 1;
}

int pf_kv_get(const uint8_t *data, size_t size, const char *key, char *out, size_t out_size)
{
	size_t pos = 0, kl, vl, want = strlen(key);
	const char *k, *v;
	int rc;
	while ((rc = pf_kv_next(data, size, &pos, &k, &kl, &v, &vl)) > 0) {
		if (kl == want && memcmp(k, key, kl) == 0) {
			if (out_size) {
				size_t n = vl < out_size - 1 ? vl : out_size - 1;
				memcpy(out, v, n);
				out[n] = 0;
			}
			return vl > INT32_MAX ? INT32_MAX : (int)vl;
		}
	}
	return rc < 0 ? rc : -ENOENT;
}

int pf_maps_encode(struct pf_buf *out, uint32_t pid, uint64_t time, const char *text, size_t len)
{
	int rc = pf_buf_put_le32(out, pid);
	if (!rc)
		rc = pf_buf_put_le32(out, 0);
	if (!rc)
		rc = pf_buf_put_le64(out, time);
	if (!rc)
		rc = pf_buf_put(out, text, len);
	return rc;
}

int pf_maps_decode(const uint8_t *data, size_t size, uint32_t *pid, uint64_t *time, const char **text,
		   size_t *len)
{
	if (size < 16)
		return -EBADMSG;
	*pid = pf_le32(data);
	*time = pf_le64(data + 8);
	*text = (const char *)data + 16;
	*len = size - 16;
	return 0;
}

int pf_buildid_encode(struct pf_buf *out, const struct pf_buildid *e)
{
	if (e->build_id_size > sizeof(e->build_id) || e->path_len > UINT16_MAX)
		return -E2BIG;
	uint8_t h[24];
	memset(h, 0, sizeof(h));
	h[0] = e->build_id_size;
	h[1] = e->flags;
	pf_put_le16(h + 2, (uint16_t)e->path_len);
	pf_put_le64(h + 8, e->file_size);
	pf_put_le64(h + 16, e->mtime_ns);
	int rc = pf_buf_put(out, h, sizeof(h));
	if (!rc)
		rc = pf_buf_put(out, e->build_id, e->build_id_size);
	if (!rc)
		rc = pf_buf_put(out, e->path, e->path_len);
	return rc;
}

int pf_buildid_next(const uint8_t *data, size_t size, size_t *pos, struct pf_buildid *e)
{
	size_t p = *pos;
	if (p >= size)
		return 0;
	if (size - p < 24)
		return -EBADMSG;
	const uint8_t *h = data + p;
	memset(e, 0, sizeof(*e));
	e->build_id_size = h[0];
	e->flags = h[1];
	e->path_len = pf_le16(h + 2);
	e->file_size = pf_le64(h + 8);
	e->mtime_ns = pf_le64(h + 16);
	p += 24;
	if (e->build_id_size > sizeof(e->build_id) || e->build_id_size > size - p ||
	    e->path_len > size - p - e->build_id_size)
		return -EBADMSG;
	memcpy(e->build_id, data + p, e->build_id_size);
	p += e->build_id_size;
	e->path = (const char *)data + p;
	p += e->path_len;
	*pos = p;
	return 1;
}

int pf_dso_image_encode(struct pf_buf *out, const struct pf_dso_image *d)
{
	if (d->build_id_size > sizeof(d->build_id) || d->path_len > UINT16_MAX)
		return -E2BIG;
	uint8_t h[16];
	memset(h, 0, sizeof(h));
	pf_put_le32(h, d->pid);
	pf_put_le16(h + 4, (uint16_t)d->path_len);
	h[6] = d->build_id_size;
	pf_put_le64(h + 8, d->addr);
	int rc = pf_buf_put(out, h, sizeof(h));
	if (!rc)
		rc = pf_buf_put(out, d->build_id, d->build_id_size);
	if (!rc)
		rc = pf_buf_put(out, d->path, d->path_len);
	if (!rc)
		rc = pf_buf_put(out, d->image, d->image_size);
	return rc;
}

int pf_dso_image_decode(const uint8_t *data, size_t size, struct pf_dso_image *d)
{
	if (size < 16)
		return -EBADMSG;
	memset(d, 0, sizeof(*d));
	d->pid = pf_le32(data);
	d->path_len = pf_le16(data + 4);
	d->build_id_size = data[6];
	d->addr = pf_le64(data + 8);
	size_t p = 16;
	if (d->build_id_size > sizeof(d->build_id) || d->build_id_size > size - p ||
	    d->path_len > size - p - d->build_id_size)
		return -EBADMSG;
	memcpy(d->build_id, data + p, d->build_id_size);
	p += d->build_id_size;
	d->path = (const char *)data + p;
	p += d->path_len;
	d->image = data + p;
	d->image_size = size - p;
	return 0;
}

int pf_thread_encode(struct pf_buf *out, uint32_t pid, uint32_t tid, const char *comm)
{
	size_t n = strlen(comm);
	if (n > UINT16_MAX)
		return -E2BIG;
	int rc = pf_buf_put_le32(out, pid);
	if (!rc)
		rc = pf_buf_put_le32(out, tid);
	if (!rc)
		rc = pf_buf_put_le16(out, (uint16_t)n);
	if (!rc)
		rc = pf_buf_put(out, comm, n);
	return rc;
}

int pf_thread_next(const uint8_t *data, size_t size, size_t *pos, uint32_t *pid, uint32_t *tid,
		   const char **comm, size_t *comm_len)
{
	size_t p = *pos;
	if (p >= size)
		return 0;
	if (size - p < 10)
		return -EBADMSG;
	*pid = pf_le32(data + p);
	*tid = pf_le32(data + p + 4);
	size_t n = pf_le16(data + p + 8);
	p += 10;
	if (n > size - p)
		return -EBADMSG;
	*comm = (const char *)data + p;
	*comm_len = n;
	*pos = p + n;
	return 1;
}

#define END_FIXED 7

int pf_end_encode(struct pf_buf *out, const struct pf_end *e)
{
	const uint64_t f[END_FIXED] = { e->start_time, e->stop_time, e->duration_ns, e->samples,
					e->lost_samples, e->throttle_events, e->records };
	int rc = 0;
	for (int i = 0; i < END_FIXED && !rc; i++)
		rc = pf_buf_put_le64(out, f[i]);
	uint32_t n = sizeof(e->records_by_type) / sizeof(e->records_by_type[0]);
	if (!rc)
		rc = pf_buf_put_le32(out, n);
	if (!rc)
		rc = pf_buf_put_le32(out, 0);
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = pf_buf_put_le64(out, e->records_by_type[i]);
	return rc;
}

int pf_end_decode(const uint8_t *data, size_t size, struct pf_end *e)
{
	memset(e, 0, sizeof(*e));
	if (size < END_FIXED * 8 + 8)
		return -EBADMSG;
	uint64_t f[END_FIXED];
	for (int i = 0; i < END_FIXED; i++)
		f[i] = pf_le64(data + 8 * i);
	e->start_time = f[0];
	e->stop_time = f[1];
	e->duration_ns = f[2];
	e->samples = f[3];
	e->lost_samples = f[4];
	e->throttle_events = f[5];
	e->records = f[6];
	uint32_t n = pf_le32(data + END_FIXED * 8);
	size_t p = END_FIXED * 8 + 8;
	if (n > (size - p) / 8)
		return -EBADMSG;
	uint32_t keep = sizeof(e->records_by_type) / sizeof(e->records_by_type[0]);
	for (uint32_t i = 0; i < n && i < keep; i++)
		e->records_by_type[i] = pf_le64(data + p + 8 * i);
	return 0;
}

/* ---- runs (format/pfile.md 4.10) ---- */

#define RUN_ENTRY 48u

int pf_run_mark_encode(struct pf_buf *out, const struct pf_run_mark *m)
{
	int rc = pf_buf_put_le32(out, m->run);
	if (!rc)
		rc = pf_buf_put_le32(out, 0);
	if (!rc)
		rc = pf_buf_put_le64(out, m->start_time);
	return rc;
}

int pf_run_mark_decode(const uint8_t *data, size_t size, struct pf_run_mark *m)
{
	memset(m, 0, sizeof(*m));
	if (size < 16 || pf_le32(data) == 0)
		return -EBADMSG;
	m->run = pf_le32(data);
	m->start_time = pf_le64(data + 8);
	return 0;
}

int pf_end_runs_encode(struct pf_buf *out, const struct pf_run *runs, uint32_t n)
{
	int rc = pf_buf_put_le32(out, n);
	if (!rc)
		rc = pf_buf_put_le32(out, RUN_ENTRY);
	for (uint32_t i = 0; i < n && !rc; i++) {
		struct pf_run r = PF_RUN_INIT;
		if (runs[i].sz == 0 || runs[i].sz > sizeof(r))
			return -EINVAL;
		memcpy(&r, &runs[i], runs[i].sz);
		const uint64_t f[5] = { r.start_time, r.stop_time, r.duration_ns, r.samples, r.lost_samples };
		for (int k = 0; k < 5 && !rc; k++)
			rc = pf_buf_put_le64(out, f[k]);
		if (!rc)
			rc = pf_buf_put_le32(out, (uint32_t)r.exit_status);
		if (!rc)
			rc = pf_buf_put_le32(out, 0);
	}
	return rc;
}

/* The offset of the run table in an END payload, its count and entry size. */
static int end_runs_at(const uint8_t *data, size_t size, size_t *at, uint32_t *n, uint32_t *esz)
{
	if (size < END_FIXED * 8 + 8)
		return -EBADMSG;
	uint32_t nt = pf_le32(data + END_FIXED * 8);
	size_t p = END_FIXED * 8 + 8;
	if (nt > (size - p) / 8)
		return -EBADMSG;
	p += (size_t)nt * 8;
	*n = 0;
	*esz = RUN_ENTRY;
	*at = p;
	if (size - p < 8)
		return 0; /* no table: 1.2 and earlier, or no runs */
	uint32_t cnt = pf_le32(data + p), es = pf_le32(data + p + 4);
	if (es < RUN_ENTRY || (cnt && (size - p - 8) / es < cnt))
		return -EBADMSG;
	*n = cnt;
	*esz = es;
	*at = p + 8;
	return 0;
}

int pf_end_runs_count(const uint8_t *data, size_t size, uint32_t *n)
{
	size_t at;
	uint32_t es;
	*n = 0;
	return end_runs_at(data, size, &at, n, &es);
}

int pf_end_run(const uint8_t *data, size_t size, uint32_t i, struct pf_run *r)
{
	size_t at;
	uint32_t n, es;
	if (!r || r->sz == 0 || r->sz > sizeof(struct pf_run))
		return -EINVAL;
	int rc = end_runs_at(data, size, &at, &n, &es);
	if (rc < 0)
		return rc;
	if (i >= n)
		return -EINVAL;
	const uint8_t *e = data + at + (size_t)i * es;
	struct pf_run t = PF_RUN_INIT;
	t.start_time = pf_le64(e);
	t.stop_time = pf_le64(e + 8);
	t.duration_ns = pf_le64(e + 16);
	t.samples = pf_le64(e + 24);
	t.lost_samples = pf_le64(e + 32);
	t.exit_status = (int32_t)pf_le32(e + 40);
	size_t sz = r->sz;
	memcpy(r, &t, sz);
	r->sz = sz;
	return 0;
}

uint32_t pf_run_of(const uint64_t *starts, uint32_t n, uint64_t time)
{
	if (n == 0)
		return 0;
	uint32_t lo = pfc_upper_bound(starts, n, sizeof(*starts), 0, time); /* the first start > time */
	return lo ? lo : 1;
}

int pf_section_resolved_mark(uint16_t type)
{
	if (type == PF_SEC_SYMINFO || type == PF_SEC_SAMPLES || type == PF_SEC_STRINGS)
		return 1;
	return type == PF_SEC_RECORDS ? -1 : 0;
}
