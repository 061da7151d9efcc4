/* pftest-writer: byte patching (flip, setu32), layout, and the modes that
 * copy a file section by section (recode, ksyms-damage) or compare two
 * (rawcmp). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pftest-writer.h"

int mode_flip(const char *path, long long off, int bitno)
{
	int fd = open(path, O_RDWR);
	uint8_t b;
	if (fd < 0 || pread(fd, &b, 1, off) != 1)
		tu_die("cannot read the byte to flip");
	b ^= (uint8_t)(1u << (bitno & 7));
	if (pwrite(fd, &b, 1, off) != 1)
		tu_die("cannot write");
	close(fd);
	return 0;
}

int mode_setu32(const char *path, long long off, uint32_t v)
{
	int fd = open(path, O_RDWR);
	uint8_t t[4];
	pf_put_le32(t, v);
	if (fd < 0 || pwrite(fd, t, 4, off) != 4)
		tu_die("cannot write");
	if (sec_off >= 0) {
		uint8_t h[PF_SECTION_HEADER_SIZE];
		if (pread(fd, h, sizeof(h), sec_off) != (ssize_t)sizeof(h))
			tu_die("cannot read the section header");
		pf_put_le32(h + 28, (uint32_t)pf_xxh3(h, 28));
		if (pwrite(fd, h, sizeof(h), sec_off) != (ssize_t)sizeof(h))
			tu_die("cannot write");
	}
	close(fd);
	return 0;
}

int mode_layout(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t h[PF_SECTION_HEADER_SIZE];
	if (!f)
		tu_die("cannot open");
	long long off = PF_FILE_HEADER_SIZE;
	for (unsigned i = 0;; i++) {
		if (fseek(f, off, SEEK_SET) != 0 || fread(h, 1, sizeof(h), f) != sizeof(h))
			break;
		uint32_t stored = pf_le32(h + 8);
		printf("%u 0x%04x %lld %u %u\n", i, pf_le16(h + 4), off, stored, pf_le32(h + 12));
		off += PF_SECTION_HEADER_SIZE + stored;
	}
	fclose(f);
	return 0;
}

pf_reader *open_in(const char *path)
{
	pf_reader *r;
	if (pf_reader_open(&r, path) < 0) {
		fprintf(stderr, "pftest-writer: %s\n", r ? pf_reader_errmsg(r) : path);
		exit(1);
	}
	return r;
}

int mode_recode(const char *in, const char *out)
{
	pf_reader *r = open_in(in);
	const struct pf_file_header *fh = pf_reader_header(r);
	int fd = tu_open_out(out);
	struct pf_writer_opts o = PF_WRITER_OPTS_INIT;
	writer_opts(&o);
	o.word_size = fh->word_size;
	o.e_machine = fh->e_machine;
	pf_writer *w = tu_writer(fd, &o);
	struct pf_section s;
	struct pf_buf late = { 0 }; /* ksyms-late: the KSYMS payload, held */
	int rc, have_late = 0;
	while (tu_next_section(r, &s, 1)) {
		if (s.type == PF_SEC_END && have_late) {
			if (pf_writer_section(w, PF_SEC_KSYMS, 0, late.data, late.len) < 0)
				tu_die("write failed");
			have_late = 0;
		}
		if (s.type == PF_SEC_KSYMS && ksyms_late == 2)
			continue; /* ksyms-drop */
		if (s.type == PF_SEC_META && ksyms_late == 2) {
			/* META without its ksyms key */
			struct pf_buf m = { 0 };
			size_t pos = 0, kl, vl;
			const char *k, *v;
			while (pf_kv_next(s.data, s.size, &pos, &k, &kl, &v, &vl) > 0) {
				char *ks = strndup(k, kl), *vs = strndup(v, vl);
				if (!ks || !vs)
					tu_die("out of memory");
				if (strcmp(ks, "ksyms") != 0)
					pf_kv_add(&m, ks, vs);
				free(ks);
				free(vs);
			}
			if (pf_writer_section(w, s.type, s.flags, m.data, m.len) < 0)
				tu_die("write failed");
			pf_buf_free(&m);
			continue;
		}
		if (s.type == PF_SEC_KSYMS && ksyms_late && !have_late) {
			pf_buf_put(&late, s.data, s.size);
			have_late = 1;
			continue;
		}
		if (s.type == PF_SEC_RECORDS) {
			rc = pf_writer_records(w, s.data, s.size);
			if (rc == 0)
				rc = pf_writer_flush(w);
		} else if (s.type == PF_SEC_KSYMS && ksyms_damage) {
			size_t n = s.size;
			if (!strcmp(ksyms_damage, "cut"))
				n = s.size * 6 / 10;
			else if (!strcmp(ksyms_damage, "count") && n >= 12)
				pf_put_le32(s.data + 8, 0xffffffffu);
			else if (!strcmp(ksyms_damage, "names"))
				for (size_t j = n > 64 ? n - 64 : 0; j < n; j++)
					if (!s.data[j])
						s.data[j] = 'x';
			rc = pf_writer_section(w, s.type, s.flags, s.data, n);
		} else if (s.type == PF_SEC_BUILDID && strip_inode) {
			/* as if no inode proof had been made (issue 29) */
			struct pf_buf b = { 0 };
			struct pf_buildid e;
			size_t pos = 0;
			while (pf_buildid_next(s.data, s.size, &pos, &e) > 0)
				if (!(e.flags & PF_BUILDID_INODE))
					pf_buildid_encode(&b, &e);
			rc = b.len ? pf_writer_section(w, s.type, s.flags, b.data, b.len) : 0;
			pf_buf_free(&b);
		} else
			rc = pf_writer_section(w, s.type, s.flags, s.data, s.size);
		if (rc < 0)
			tu_die("write failed");
	}
	if (have_late && pf_writer_section(w, PF_SEC_KSYMS, 0, late.data, late.len) < 0)
		tu_die("write failed");
	pf_buf_free(&late);
	pf_reader_close(r);
	finish(w, fd);
	return 0;
}

/* Next intact section of r, copied (type in *type); 0 at the end. */
static int next_copy(pf_reader *r, struct pf_buf *b, uint16_t *type)
{
	struct pf_section s;
	if (!tu_next_section(r, &s, 1))
		return 0;
	b->len = 0;
	pf_buf_put(b, s.data, s.size);
	*type = s.type;
	return 1;
}

int mode_rawcmp(const char *a, const char *b)
{
	pf_reader *ra = open_in(a), *rb = open_in(b);
	struct pf_buf ba = { 0 }, bb = { 0 };
	uint16_t ta = 0, tb = 0;
	unsigned n = 0;
	int diff = 0;
	for (;;) {
		int ha = next_copy(ra, &ba, &ta), hb = next_copy(rb, &bb, &tb);
		if (!ha && !hb)
			break;
		if (ha != hb || ta != tb || ba.len != bb.len || (ba.len && memcmp(ba.data, bb.data, ba.len))) {
			size_t at = 0;
			while (at < ba.len && at < bb.len && ba.data[at] == bb.data[at])
				at++;
			printf("section %u differs: type 0x%04x/0x%04x, %zu/%zu bytes, first difference at byte %zu\n",
			       n, ha ? ta : 0, hb ? tb : 0, ha ? ba.len : 0, hb ? bb.len : 0, at);
			diff = 1;
			break;
		}
		n++;
	}
	if (!diff)
		printf("%u sections identical\n", n);
	pf_buf_free(&ba);
	pf_buf_free(&bb);
	pf_reader_close(ra);
	pf_reader_close(rb);
	return diff;
}
