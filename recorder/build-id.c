// SPDX-License-Identifier: GPL-2.0-only
/* GNU build-ids from ELF files and from raw notes.  See build-id.h. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
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
 * The vDSO's image in this process, and its size: the pages up to the end
 * of its headers and segments.
 */
static const void *vdso__image(size_t *size)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)base;
	size_t end;

	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr))
		return NULL;
	end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(base + eh->e_phoff + i * sizeof(*ph));

		if (ph->p_offset + ph->p_filesz > end)
			end = ph->p_offset + ph->p_filesz;
	}
	/* mapped whole pages, as perf record copies them */
	*size = ALIGN_UP(end, (size_t)getpagesize());
	return base;
}

/*
 * The build-id of this process's vDSO: the kernel maps the same image into
 * every 64-bit task, the recorded ones included, and perf record reads its
 * own as well.  Read in memory, from the ELF header the auxiliary vector
 * points at: no /proc needed.
 */
int vdso__read_build_id(__u8 *out, size_t *len)
{
	size_t size;
	const unsigned char *base = vdso__image(&size);
	const Elf64_Ehdr *eh = (const void *)base;

	if (!base)
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

/* mkdir -p: every directory of path.  0 or -1 with errno. */
static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; ; p++) {
		char c = *p;

		if (c != '/' && c)
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		if (!c)
			return 0;
		*p = c;
	}
}

/* Write len bytes of data to a new file to.  0 or -1 with errno. */
static int write_new(const char *to, const void *data, size_t len)
{
	int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t n = write(fd, (const char *)data + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			unlink(to);
			return -1;
		}
		off += n;
	}
	return close(fd);
}

/* to: a hard link to from where it can be, else a copy.  0 or -1 with errno. */
static int link_or_copy(const char *from, const char *to)
{
	unsigned char buf[65536];
	int in, out, err = 0;
	ssize_t n;

	if (!link(from, to))
		return 0;
	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(out, buf, n) != n) {
			err = -1;
			break;
		}
	}
	close(in);
	if (close(out) || err) {
		unlink(to);
		return -1;
	}
	return 0;
}

/* One entry into the cache under dir.  0 or -1 with errno. */
static int build_id_cache__add_one(const char *dir, const struct build_id_entry *e)
{
	bool kallsyms = e->kernel && !strcmp(e->path, "[kernel.kallsyms]");
	bool vdso = !strcmp(e->path, "[vdso]");
	const char *name = e->path[0] == '/' ? e->path + 1 : e->path;
	char sbid[2 * PD_BUILD_ID_SIZE + 1], d[PATH_MAX], f[PATH_MAX], l[PATH_MAX], t[PATH_MAX];
	size_t ldir;	/* l up to .build-id/XX */
	struct stat sb;
	int ret = 0;

	if ((e->path[0] != '/' && !kallsyms && !vdso) || e->size < 2)
		return 0;
	build_id__sprintf(e->build_id, e->size, sbid);
	if ((size_t)snprintf(d, sizeof(d), "%s/%s/%s", dir, name, sbid) >= sizeof(d) ||
	    (size_t)snprintf(f, sizeof(f), "%s/%s", d, kallsyms ? "kallsyms" : vdso ? "vdso" : "elf") >=
		    sizeof(f) ||
	    (size_t)snprintf(l, sizeof(l), "%s/.build-id/%.2s/%s", dir, sbid, sbid + 2) >= sizeof(l) ||
	    (size_t)snprintf(t, sizeof(t), "../../%s/%s", name, sbid) >= sizeof(t)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (stat(f, &sb)) {
		if (mkdir_p(d))
			return -1;
		if (kallsyms) {
			ret = link_or_copy("/proc/kallsyms", f);
		} else if (vdso) {
			size_t size;
			const void *img = vdso__image(&size);

			ret = img ? write_new(f, img, size) : 0;
		} else {
			ret = link_or_copy(e->path, f);
		}
		if (ret && errno != EEXIST)
			return -1;
		/* and its separate debug info, where the system has it */
		if (!kallsyms && !vdso) {
			char dbg[PATH_MAX], to[PATH_MAX];

			snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", sbid,
				 sbid + 2);
			if ((size_t)snprintf(to, sizeof(to), "%s/debug", d) < sizeof(to) &&
			    !access(dbg, R_OK) && link_or_copy(dbg, to) && errno != EEXIST)
				return -1;
		}
	}
	ldir = strlen(l) - strlen(sbid + 2) - 1;
	l[ldir] = '\0';
	if (mkdir_p(l))
		return -1;
	l[ldir] = '/';
	if (symlink(t, l) && errno != EEXIST)
		return -1;
	return 0;
}

int build_id_cache__add(const struct build_id_entry *ids, size_t nr)
{
	const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	char dir[PATH_MAX];
	int err = 0;

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else if (home && *home)
		snprintf(dir, sizeof(dir), "%s/.debug", home);
	else
		return 0;
	for (size_t i = 0; i < nr; i++) {
		if (build_id_cache__add_one(dir, &ids[i]) && !err) {
			err = -errno;
			pr_warn("build-id cache %s: cannot add %s: %s", dir, ids[i].path, strerror(errno));
		}
	}
	return err;
}
