// SPDX-License-Identifier: GPL-2.0-only
/* GNU build-ids from ELF files and from raw notes.  See build-id.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "build-id.h"
#include "event.h"
#include "util.h"

static int note_build_id(const unsigned char *p, size_t size, __u8 *out, size_t *len)
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

int pd_build_id(const char *path, __u8 *out, size_t *len)
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
			err = note_build_id(d->d_buf, d->d_size, out, len);
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
				err = note_build_id(d->d_buf, d->d_size, out, len);
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

int pd_build_id_notes(const char *path, __u8 *out, size_t *len)
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
	return note_build_id(buf, size, out, len);
}

char *pd_build_id__sprintf(const __u8 *id, size_t len, char *buf)
{
	for (size_t i = 0; i < len; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	buf[2 * len] = '\0';
	return buf;
}
