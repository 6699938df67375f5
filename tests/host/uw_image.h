/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * uw_image.h - an ELF object laid out at its link addresses, as the
 * module's table parsers see a mapped object, and the pd_uw_read() they
 * call, for the host tests of module/uw_*.c.
 *
 * uw_image_load() maps every PT_LOAD segment of an executable or shared
 * object at p_vaddr (load bias 0; .bss zeroed) and notes where its
 * PT_GNU_EH_FRAME and PT_GNU_SFRAME segments are.  Reads outside the
 * loaded span fail with -EFAULT, as an unmapped page does in the module;
 * each read is counted against the reader's byte budget (-E2BIG), as the
 * module counts it.
 */
#ifndef PD_UW_IMAGE_H
#define PD_UW_IMAGE_H

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uwtab.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

struct pd_uw_reader {
	const u8	*img;		/* the image: img[0] is address base */
	unsigned long	base;
	size_t		size;
	size_t		budget;		/* bytes left to read */
	size_t		reads;		/* pd_uw_read() calls */
};

struct uw_image {
	u8		*mem;
	unsigned long	base, size;
	unsigned long	eh_hdr, eh_hdr_size;	/* PT_GNU_EH_FRAME, or 0 */
	unsigned long	sframe, sframe_size;	/* PT_GNU_SFRAME, or 0 */
	unsigned long	text, text_end;		/* the executable PT_LOAD */
};

int pd_uw_read(struct pd_uw_reader *rd, void *dst, unsigned long addr, size_t len)
{
	rd->reads++;
	if (addr < rd->base || addr - rd->base > rd->size || len > rd->size - (addr - rd->base))
		return -EFAULT;
	if (len > rd->budget)
		return -E2BIG;
	rd->budget -= len;
	memcpy(dst, rd->img + (addr - rd->base), len);
	return 0;
}

static inline void uw_reader_init(struct pd_uw_reader *rd, const struct uw_image *im,
				  size_t budget)
{
	*rd = (struct pd_uw_reader){ .img = im->mem, .base = im->base, .size = im->size,
				     .budget = budget };
}

static inline void uw_image_free(struct uw_image *im)
{
	free(im->mem);
	memset(im, 0, sizeof(*im));
}

/* 0, or -1 with a message on stderr */
static inline int uw_image_load(struct uw_image *im, const char *path)
{
	unsigned long lo = ~0ul, hi = 0;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	struct stat stb;
	u8 *file = NULL;
	int fd, i, ret = -1;

	memset(im, 0, sizeof(*im));
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &stb) || stb.st_size < (off_t)sizeof(eh)) {
		fprintf(stderr, "uw_image: cannot read %s\n", path);
		goto out;
	}
	file = malloc(stb.st_size);
	if (!file || pread(fd, file, stb.st_size, 0) != stb.st_size)
		goto out;
	memcpy(&eh, file, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(*ph) ||
	    eh.e_phoff + (u64)eh.e_phnum * sizeof(*ph) > (u64)stb.st_size) {
		fprintf(stderr, "uw_image: %s is not a 64-bit ELF object\n", path);
		goto out;
	}
	ph = (Elf64_Phdr *)(file + eh.e_phoff);
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	if (lo >= hi || hi - lo > (1ul << 30)) {
		fprintf(stderr, "uw_image: %s has no loadable span\n", path);
		goto out;
	}
	im->base = lo;
	im->size = hi - lo;
	im->mem = calloc(1, im->size);
	if (!im->mem)
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];

		if (p->p_type == PT_LOAD) {
			if (p->p_offset + p->p_filesz > (u64)stb.st_size)
				goto out;
			memcpy(im->mem + (p->p_vaddr - lo), file + p->p_offset, p->p_filesz);
			if (p->p_flags & PF_X) {
				im->text = p->p_vaddr;
				im->text_end = p->p_vaddr + p->p_memsz;
			}
		} else if (p->p_type == PT_GNU_EH_FRAME) {
			im->eh_hdr = p->p_vaddr;
			im->eh_hdr_size = p->p_memsz;
		} else if (p->p_type == PT_GNU_SFRAME) {
			im->sframe = p->p_vaddr;
			im->sframe_size = p->p_memsz;
		}
	}
	ret = 0;
out:
	if (ret)
		uw_image_free(im);
	if (fd >= 0)
		close(fd);
	free(file);
	return ret;
}

#endif /* PD_UW_IMAGE_H */
