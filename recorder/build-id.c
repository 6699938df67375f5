// SPDX-License-Identifier: GPL-2.0-only
/* GNU build-ids from ELF files and from raw notes.  See build-id.h. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "build-id.h"
#include "event.h"
#include "util.h"

static int build_id__from_notes(const unsigned char *p, size_t size, __u8 *out, size_t *len)
{
	size_t off = 0;

	/* Elf32_Nhdr and Elf64_Nhdr are the same: three 32-bit words */
	while (size - off >= 12) {
		__u32 namesz = rd32(p + off), descsz = rd32(p + off + 4), type = rd32(p + off + 8);
		size_t name = off + 12, desc, next;

		if (namesz > size - name)
			break;
		desc = name + ALIGN_UP((size_t)namesz, 4);
		if (desc > size || descsz > size - desc)
			break;
		next = desc + ALIGN_UP((size_t)descsz, 4);
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name, "GNU", 4)) {
			size_t n = descsz < *len ? descsz : *len;

			if (n > PD_BUILD_ID_SIZE)
				n = PD_BUILD_ID_SIZE;
			memcpy(out, p + desc, n);
			*len = n;
			return 0;
		}
		if (next <= off)
			break;
		off = next;
	}
	return -ENODATA;
}

int filename__read_build_id(const char *path, __u8 *out, size_t *len)
{
	int fd, err = -ENODATA;
	Elf_Scn *scn = NULL;
	size_t nphdr;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	while (err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_rawdata(scn, NULL);
		if (d && d->d_buf)
			err = build_id__from_notes(d->d_buf, d->d_size, out, len);
	}
	/* no section headers (stripped hard): the PT_NOTE segments */
	if (err && !elf_getphdrnum(e, &nphdr)) {
		for (size_t i = 0; err && i < nphdr; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz, ELF_T_BYTE);
			if (d && d->d_buf)
				err = build_id__from_notes(d->d_buf, d->d_size, out, len);
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

int sysfs__read_build_id(const char *path, __u8 *out, size_t *len)
{
	unsigned char buf[65536];
	size_t size = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (size < sizeof(buf) && (n = read(fd, buf + size, sizeof(buf) - size)) > 0)
		size += n;
	close(fd);
	return build_id__from_notes(buf, size, out, len);
}

/*
 * The build-id of this process's vDSO: the kernel maps the same image into
 * every 64-bit task, the recorded ones included, and perf record reads its
 * own as well.  Read in memory, from the ELF header the auxiliary vector
 * points at: no /proc needed.
 */
int vdso__read_build_id(__u8 *out, size_t *len)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)base;

	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr))
		return -ENODATA;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(base + eh->e_phoff + i * sizeof(*ph));

		if (ph->p_type == PT_NOTE &&
		    !build_id__from_notes(base + ph->p_offset, ph->p_filesz, out, len))
			return 0;
	}
	return -ENODATA;
}

char *build_id__sprintf(const __u8 *id, size_t len, char *buf)
{
	for (size_t i = 0; i < len; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	buf[2 * len] = '\0';
	return buf;
}

/* Remember the files mapped executable, for their build-ids. */
int dsos__add_mmap2(struct dsos *d, const void *event, size_t size)
{
	const struct perf_event_header *h = event;
	const char *name;
	size_t i, max;

	if (h->type != PERF_RECORD_MMAP2 || size < 8 + 64 + 2)
		return 0;
	name = (const char *)h + 8 + 64;	/* after pid..flags */
	max = size - 8 - 64;
	if (!memchr(name, 0, max))
		return 0;
	if (!strcmp(name, "[vdso]"))
		d->vdso = true;
	if (name[0] != '/')
		return 0;
	for (i = 0; i < d->nr; i++)
		if (!strcmp(d->paths[i], name))
			return 0;
	if (d->nr % 64 == 0) {
		char **p = realloc(d->paths, (d->nr + 64) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		d->paths = p;
	}
	d->paths[d->nr] = strdup(name);
	return d->paths[d->nr++] ? 0 : -ENOMEM;
}

struct build_id_entry *dsos__build_ids(const struct dsos *d, size_t *nr)
{
	struct build_id_entry *ids = calloc(d->nr + 2, sizeof(*ids));
	size_t i, n = 0, len;

	if (!ids)
		return NULL;
	for (i = 0; i < d->nr; i++) {
		len = sizeof(ids[n].build_id);
		if (filename__read_build_id(d->paths[i], ids[n].build_id, &len))
			continue;
		ids[n].path = d->paths[i];
		ids[n].pid = -1;
		ids[n].size = len;
		n++;
	}
	len = sizeof(ids[n].build_id);
	if (d->vdso && !vdso__read_build_id(ids[n].build_id, &len)) {
		ids[n].path = "[vdso]";
		ids[n].pid = -1;
		ids[n].size = len;
		n++;
	}
	len = sizeof(ids[n].build_id);
	if (!sysfs__read_build_id("/sys/kernel/notes", ids[n].build_id, &len)) {
		ids[n].path = "[kernel.kallsyms]";
		ids[n].pid = -1;
		ids[n].kernel = true;
		ids[n].size = len;
		n++;
	}
	*nr = n;
	return ids;
}

void dsos__exit(struct dsos *d)
{
	for (size_t i = 0; i < d->nr; i++)
		free(d->paths[i]);
	free(d->paths);
	d->paths = NULL;
	d->nr = 0;
}
