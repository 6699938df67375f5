// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user walk by unwind tables, in the task_work, with faults allowed.
 *
 * Frame by frame: find the object mapped at the IP (a file mapping whose
 * ELF header is mapped at file offset 0, or the vDSO), read its program
 * headers from the task's memory, and ask its tables, in the order the
 * session chose, for the rules at that IP: SFrame (PT_GNU_SFRAME), then
 * .eh_frame (PT_GNU_EH_FRAME), then the frame-pointer rule.  The first
 * method that has a row for the IP gives the caller's CFA, return
 * address and callee-saved registers.  The first frame's IP is exact;
 * later ones are return addresses, looked up at ra - 1.
 *
 * On arm64 the return address of a function that has not saved x30 yet
 * is still in x30: the first frame's caller comes from there (its CFA may
 * then be its very SP), and a later frame that says so ends the walk, as
 * only the interrupted frame's x30 is known.  Return addresses lose their
 * pointer-authentication code, as in the frame-record walk.
 *
 * What the headers say of an object (its mapping, where its tables are)
 * is kept in a small cache, keyed by the mm, the mapping and the file's
 * identity, all checked against the VMA at each lookup: a mapping that
 * moved, was unmapped, replaced or made non-executable, an exec'd or new
 * mm, all miss.
 *
 * Everything read comes from the task's memory through copy_from_user(),
 * counted against a per-unwind byte budget; the parsers (uw_sframe.c,
 * uw_ehframe.c) bound their own loops.  An object, a table or a row that
 * does not make sense ends the walk with the frames found so far.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/spinlock.h>
#include <asm/ptrace.h>

#include "perf_defer.h"
#include "uwtab.h"

/* Bytes one unwind may read from tables and headers, frames apart. */
#define PD_UW_BUDGET		(256 * 1024)
/* Program headers looked at per object */
#define PD_UW_MAX_PHDRS		64

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

#ifdef CONFIG_ARM64
#define PD_UW_MACHINE		EM_AARCH64
/* AAPCS64's callee-saved general registers: what a caller keeps */
#define PD_UW_CALLEE_SAVED	GENMASK(PD_UW_X29, PD_UW_X19)
#else
#define PD_UW_MACHINE		EM_X86_64
/* The callee-saved registers of the x86-64 psABI: what a caller keeps */
#define PD_UW_CALLEE_SAVED	(BIT(PD_UW_RBX) | BIT(PD_UW_RBP) | BIT(PD_UW_R12) | \
				 BIT(PD_UW_R13) | BIT(PD_UW_R14) | BIT(PD_UW_R15))
#endif

/* The span from the lowest callee-saved register to the highest */
#define PD_UW_CS_LO		__builtin_ctz(PD_UW_CALLEE_SAVED)
#define PD_UW_CS_HI		(31 - __builtin_clz(PD_UW_CALLEE_SAVED))

/* The tables of the object around one executable mapping. */
struct pd_uw_obj {
	unsigned long	start, end;		/* the mapping; 0, 0: none */
	unsigned long	eh_hdr, eh_hdr_size;	/* 0: none */
	unsigned long	sframe, sframe_size;	/* 0: none */
	u64		id;			/* its layout entry's; 0: none */
	bool		vdso;
};

/*
 * What identifies an object's layout: the mm and executable mapping it
 * was read through, where its ELF header is, and the file mapped (NULL
 * inode: the vDSO).  The pointers are compared, never dereferenced.
 */
struct pd_uw_key {
	const struct mm_struct	*mm;
	const struct inode	*inode;
	unsigned long		ino;
	dev_t			dev;
	u32			gen;
	unsigned long		start, end, pgoff, base;
};

/* The layout cache: PD_UW_CACHE_SETS sets of PD_UW_CACHE_WAYS, LRU. */
#define PD_UW_CACHE_BITS	6
#define PD_UW_CACHE_WAYS	4

struct pd_uw_cached {
	struct pd_uw_key	key;
	struct pd_uw_obj	obj;
	unsigned long		used;	/* 0: empty */
};

static struct pd_uw_cached pd_uw_cache[1 << PD_UW_CACHE_BITS][PD_UW_CACHE_WAYS];
static unsigned long pd_uw_cache_clock;
/* the last layout entry's id: ids are never reused */
static u64 pd_uw_cache_ids;
/* the layout cache's and the row cache's */
static DEFINE_SPINLOCK(pd_uw_cache_lock);

static bool pd_uw_key_eq(const struct pd_uw_key *a, const struct pd_uw_key *b)
{
	return a->mm == b->mm && a->inode == b->inode && a->ino == b->ino &&
	       a->dev == b->dev && a->gen == b->gen && a->start == b->start &&
	       a->end == b->end && a->pgoff == b->pgoff && a->base == b->base;
}

static struct pd_uw_cached *pd_uw_cache_set(const struct pd_uw_key *key)
{
	return pd_uw_cache[hash_long((unsigned long)key->mm ^ key->start, PD_UW_CACHE_BITS)];
}

static bool pd_uw_cache_get(const struct pd_uw_key *key, struct pd_uw_obj *obj)
{
	struct pd_uw_cached *set = pd_uw_cache_set(key);
	bool hit = false;
	unsigned int i;

	spin_lock(&pd_uw_cache_lock);
	for (i = 0; i < PD_UW_CACHE_WAYS; i++) {
		if (set[i].used && pd_uw_key_eq(&set[i].key, key)) {
			*obj = set[i].obj;
			set[i].used = ++pd_uw_cache_clock;
			hit = true;
			break;
		}
	}
	spin_unlock(&pd_uw_cache_lock);
	return hit;
}

/* Keeps @obj under @key, with a new id (into @obj too). */
static void pd_uw_cache_put(const struct pd_uw_key *key, struct pd_uw_obj *obj)
{
	struct pd_uw_cached *set = pd_uw_cache_set(key), *victim = set;
	unsigned int i;

	spin_lock(&pd_uw_cache_lock);
	for (i = 1; i < PD_UW_CACHE_WAYS; i++)
		if (set[i].used < victim->used)
			victim = &set[i];
	obj->id = ++pd_uw_cache_ids;
	victim->key = *key;
	victim->obj = *obj;
	victim->used = ++pd_uw_cache_clock;
	spin_unlock(&pd_uw_cache_lock);
}

/*
 * The row cache: the rows the tables gave, by object and PC.  The same
 * few PCs come back in every unwind of a workload (the sampled code's
 * return sites, main, libc's start), and a row from .eh_frame costs a
 * binary search, an FDE, its CIE and their instructions, some twenty
 * reads of the task's memory, where a hit costs none.  A row is kept
 * under the id of its object's layout entry: an object read again (its
 * mapping moved or replaced, another file or mm, or its entry evicted)
 * gets a new id, so its old rows are never found again, and age out.
 * The rows are thus taken as they were at their first read, as the
 * layouts are: a program that rewrites its own tables while it runs (no
 * linker or loader does: they are read-only after relocation) is walked
 * by its old rows, unless the row_cache parameter is off.  Only what a
 * step uses is kept: the CFA rule and the rules of the return address and
 * the callee-saved registers.  The rows of the frame-pointer rule are
 * kept too, as which method answers: a PC no table covers is looked up
 * once.
 */
#define PD_UW_KEPT		(PD_UW_CALLEE_SAVED | BIT(PD_UW_RA))
#define PD_UW_NKEPT		HWEIGHT32(PD_UW_KEPT)
#define PD_UW_ROWS_BITS		6
#define PD_UW_ROWS_WAYS		4

struct pd_uw_rcached {
	u64		obj;		/* its object's id; 0: empty */
	unsigned long	pc, used;
	u32		order;		/* the methods asked, in order */
	u8		method;		/* the one that gave the row */
	u8		cfa_how, cfa_reg;
	u8		rule[PD_UW_NKEPT];	/* pd_uw_rule_pack(), by kept register */
	s32		cfa_off;
	s32		off[PD_UW_NKEPT];
};

static struct pd_uw_rcached pd_uw_rows[1 << PD_UW_ROWS_BITS][PD_UW_ROWS_WAYS];

static struct pd_uw_rcached *pd_uw_rows_set(u64 obj, unsigned long pc)
{
	return pd_uw_rows[hash_long((unsigned long)obj ^ pc, PD_UW_ROWS_BITS)];
}

static bool pd_uw_rows_get(u64 obj, unsigned long pc, u32 order, struct pd_uw_row *row,
			   unsigned int *method)
{
	struct pd_uw_rcached *set = pd_uw_rows_set(obj, pc), c;
	bool hit = false;
	unsigned int i, k;

	spin_lock(&pd_uw_cache_lock);
	for (i = 0; i < PD_UW_ROWS_WAYS; i++) {
		if (set[i].obj == obj && set[i].pc == pc && set[i].order == order) {
			set[i].used = ++pd_uw_cache_clock;
			c = set[i];
			hit = true;
			break;
		}
	}
	spin_unlock(&pd_uw_cache_lock);
	if (!hit)
		return false;
	*row = (struct pd_uw_row){ .cfa_how = c.cfa_how, .cfa_reg = c.cfa_reg,
				   .cfa_off = c.cfa_off };
	for (i = 0, k = 0; i < PD_UW_NREGS; i++) {
		if (!(PD_UW_KEPT & BIT(i))) {
			row->reg[i].how = PD_UW_SAME;
			continue;
		}
		pd_uw_rule_unpack(&row->reg[i], c.rule[k], c.off[k]);
		k++;
	}
	*method = c.method;
	return true;
}

/* Keeps @row, unless an offset it holds does not fit the compact form. */
static void pd_uw_rows_put(u64 obj, unsigned long pc, u32 order, unsigned int method,
			   const struct pd_uw_row *row)
{
	struct pd_uw_rcached *set = pd_uw_rows_set(obj, pc), *victim = set;
	struct pd_uw_rcached c = { .obj = obj, .pc = pc, .order = order, .method = method,
				   .cfa_how = row->cfa_how, .cfa_reg = row->cfa_reg,
				   .cfa_off = row->cfa_off };
	unsigned int i, k;

	BUILD_BUG_ON(PD_UW_NREGS > 32);
	if (c.cfa_off != row->cfa_off)
		return;
	for (i = 0, k = 0; i < PD_UW_NREGS; i++) {
		if (!(PD_UW_KEPT & BIT(i)))
			continue;
		c.rule[k] = pd_uw_rule_pack(&row->reg[i]);
		c.off[k] = row->reg[i].off;
		if (c.off[k++] != row->reg[i].off)
			return;
	}
	spin_lock(&pd_uw_cache_lock);
	for (i = 1; i < PD_UW_ROWS_WAYS; i++)
		if (set[i].used < victim->used)
			victim = &set[i];
	c.used = ++pd_uw_cache_clock;
	*victim = c;
	spin_unlock(&pd_uw_cache_lock);
}

/*
 * Where the object that maps @ip has its ELF header: the address of its
 * file offset 0, if a mapping of the same file at offset 0 is there (as
 * ld.so and the kernel's ELF loader map objects), or the vDSO's start.
 * Also its cache key, taken under the same mmap lock.
 */
static int pd_uw_obj_base(unsigned long ip, struct pd_uw_obj *obj, struct pd_uw_key *key)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma, *first;
	struct inode *inode;
	unsigned long off;
	int ret = -ENOENT;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = find_vma(mm, ip);
	if (!vma || vma->vm_start > ip || !(vma->vm_flags & VM_EXEC))
		goto out;
	obj->start = vma->vm_start;
	obj->end = vma->vm_end;
	*key = (struct pd_uw_key){
		.mm = mm, .start = vma->vm_start, .end = vma->vm_end, .pgoff = vma->vm_pgoff,
	};
	if (vma->vm_start == (unsigned long)mm->context.vdso) {
		obj->vdso = true;
		key->base = vma->vm_start;
		ret = 0;
		goto out;
	}
	if (!vma->vm_file || vma->vm_pgoff > (vma->vm_start >> PAGE_SHIFT))
		goto out;
	inode = file_inode(vma->vm_file);
	off = vma->vm_pgoff << PAGE_SHIFT;
	first = find_vma(mm, vma->vm_start - off);
	if (first && first->vm_start == vma->vm_start - off && !first->vm_pgoff &&
	    first->vm_file && file_inode(first->vm_file) == inode) {
		key->base = first->vm_start;
		key->inode = inode;
		key->ino = inode->i_ino;
		key->dev = inode->i_sb->s_dev;
		key->gen = inode->i_generation;
		ret = 0;
	}
out:
	mmap_read_unlock(mm);
	return ret;
}

/* Find the tables of the object that maps @ip, into @obj. */
static int pd_uw_obj_find(struct pd_uw_reader *rd, unsigned long ip, struct pd_uw_obj *obj)
{
	unsigned long base, bias = 0;
	bool have_load = false;
	struct pd_uw_key key;
	struct elf64_hdr eh;
	struct elf64_phdr ph;
	unsigned int i;
	int ret;

	*obj = (struct pd_uw_obj){ };
	ret = pd_uw_obj_base(ip, obj, &key);
	if (ret)
		return ret;
	if (pd_uw_cache_get(&key, obj)) {
		pd_count(uw_cache_hits);
		return 0;
	}
	pd_count(uw_objects);
	base = key.base;
	ret = pd_uw_read(rd, &eh, base, sizeof(eh));
	if (ret)
		return ret;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != PD_UW_MACHINE ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > PD_UW_MAX_PHDRS ||
	    eh.e_phoff > PAGE_SIZE)
		return -EINVAL;
	/* the load bias from the first PT_LOAD, which maps offset 0 */
	for (i = 0; i < eh.e_phnum; i++) {
		ret = pd_uw_read(rd, &ph, base + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ret)
			return ret;
		if (ph.p_type == PT_LOAD && !have_load) {
			if (ph.p_offset || (ph.p_vaddr & ~PAGE_MASK))
				return -EINVAL;
			bias = base - ph.p_vaddr;
			have_load = true;
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			obj->eh_hdr = ph.p_vaddr;
			obj->eh_hdr_size = ph.p_memsz;
		} else if (ph.p_type == PT_GNU_SFRAME) {
			obj->sframe = ph.p_vaddr;
			obj->sframe_size = ph.p_memsz;
		}
	}
	if (!have_load)
		return -EINVAL;
	if (obj->eh_hdr)
		obj->eh_hdr += bias;
	if (obj->sframe)
		obj->sframe += bias;
	pd_uw_cache_put(&key, obj);
	return 0;
}

/*
 * A frame's IP and the registers a walk knows, by DWARF number; valid: a
 * bit per register.
 */
struct pd_uw_regs {
	unsigned long	ip;
	unsigned long	r[PD_UW_NREGS];
	u32		valid;
};

static void pd_uw_set(struct pd_uw_regs *regs, unsigned int reg, unsigned long val)
{
	regs->r[reg] = val;
	regs->valid |= BIT(reg);
}

/*
 * The frame-pointer rule, as the fp walk applies it, as a row.  On arm64
 * a first frame in the vDSO is a leaf instead: the kernel links its vDSO
 * without unwind tables there, and its functions (clock_gettime,
 * gettimeofday, clock_getres, as Debian's 6.1 and 6.12 build them) keep
 * their return address in x30 and have no frame: CFA = SP.
 */
static void pd_uw_fp_row(struct pd_uw_row *row, bool vdso_leaf)
{
	bool leaf = IS_ENABLED(CONFIG_ARM64) && vdso_leaf;
	unsigned int i;

	*row = (struct pd_uw_row){ .cfa_how = PD_UW_CFA_REG,
				   .cfa_reg = leaf ? PD_UW_SP : PD_UW_FP, .cfa_off = leaf ? 0 : 16 };
	for (i = 0; i < PD_UW_NREGS; i++)
		row->reg[i].how = PD_UW_SAME;
	if (leaf)
		return;
	row->reg[PD_UW_FP] = (struct pd_uw_rule){ .how = PD_UW_AT_CFA, .off = -16 };
	row->reg[PD_UW_RA] = (struct pd_uw_rule){ .how = PD_UW_AT_CFA, .off = -8 };
}

/*
 * The row for @pc from the first method of @order that has one: from the
 * row cache if it holds the answer (the row_cache parameter), else from
 * the tables, and then kept there.
 */
static int pd_uw_row_for(struct pd_uw_reader *rd, const struct pd_uw_obj *obj,
			 unsigned int order, unsigned long pc, bool first, struct pd_uw_row *row,
			 unsigned int *method)
{
	const unsigned int asked = order;
	const bool cache = obj->id && READ_ONCE(pd_row_cache);
	int ret = -ENOENT;

	if (cache && pd_uw_rows_get(obj->id, pc, asked, row, method)) {
		pd_count(uw_row_hits);
		if (*method == PD_UW_METHOD_FP)
			pd_uw_fp_row(row, first && obj->vdso);
		return 0;
	}
	for (; order; order >>= PD_UW_METHOD_BITS) {
		*method = order & PD_UW_METHOD_MASK;
		switch (*method) {
		case PD_UW_METHOD_SFRAME:
			if (!obj->sframe)
				continue;
			ret = pd_sframe_row(rd, obj->sframe, obj->sframe_size, pc, row);
			break;
		case PD_UW_METHOD_EH_FRAME:
			if (!obj->eh_hdr)
				continue;
			ret = pd_ehframe_row(rd, obj->eh_hdr, obj->eh_hdr_size, pc, row);
			break;
		case PD_UW_METHOD_FP:
			pd_uw_fp_row(row, first && obj->vdso);
			ret = 0;
			break;
		default:
			return -EINVAL;
		}
		if (!ret) {
			if (*method != PD_UW_METHOD_FP)
				pd_count(uw_rows);
			if (cache)
				pd_uw_rows_put(obj->id, pc, asked, *method, row);
			return 0;
		}
		/* a budget spent or a fault ends the walk; a miss tries on */
		if (ret == -E2BIG || ret == -EFAULT || ret == -EINTR)
			return ret;
	}
	return ret;
}

/*
 * The caller's value of @reg by @rule; false when it cannot be known.
 * Inline: a step applies a rule for each callee-saved register.
 */
static __always_inline bool pd_uw_apply(struct pd_uw_reader *rd, const struct pd_uw_regs *cur,
			const struct pd_uw_rule *rule, unsigned int reg, unsigned long cfa,
			struct pd_uw_regs *next)
{
	unsigned long val;

	switch (rule->how) {
	case PD_UW_SAME:
		if (cur->valid & BIT(reg))
			pd_uw_set(next, reg, cur->r[reg]);
		return true;
	case PD_UW_UNDEF:
		return true;
	case PD_UW_AT_CFA:
		if (pd_uw_read_word(rd, &val, cfa + rule->off))
			return false;
		pd_uw_set(next, reg, val);
		return true;
	case PD_UW_IS_CFA:
		pd_uw_set(next, reg, cfa + rule->off);
		return true;
	case PD_UW_IN_REG:
		if (rule->reg < PD_UW_NREGS && (cur->valid & BIT(rule->reg)))
			pd_uw_set(next, reg, cur->r[rule->reg]);
		return true;
	}
	return false;
}

/*
 * The row of the last caller frame looked up, and by which method: a
 * recursion's frames return to one PC, and take one lookup between them.
 * Within one walk the tables are taken as they were at their first read.
 */
struct pd_uw_memo {
	unsigned long		pc;	/* 0: none */
	unsigned int		method;
	struct pd_uw_row	row;
	/*
	 * The row's callee-saved registers, sorted once per lookup rather
	 * than once per step: the ones it leaves as they are (most, as a
	 * mask), and the few it saves (by number).
	 */
	u32			same;
	unsigned int		nsaved;
	u8			saved[HWEIGHT32(PD_UW_CALLEE_SAVED)];
};

static void pd_uw_memo_sort(struct pd_uw_memo *memo)
{
	unsigned int reg;

	memo->same = 0;
	memo->nsaved = 0;
	for (reg = PD_UW_CS_LO; reg <= PD_UW_CS_HI; reg++) {
		if (!(PD_UW_CALLEE_SAVED & BIT(reg)))
			continue;
		if (memo->row.reg[reg].how == PD_UW_SAME)
			memo->same |= BIT(reg);
		else
			memo->saved[memo->nsaved++] = reg;
	}
}

/*
 * One step: from the frame in @cur to its caller's, into @next.  0, or an
 * error that ends the walk.
 */
static int pd_uw_step(struct pd_uw_reader *rd, struct pd_uw_obj *obj, unsigned int order,
		      const struct pd_uw_regs *cur, struct pd_uw_regs *next, bool first,
		      struct pd_uw_memo *memo)
{
	unsigned long ip = cur->ip, pc = first ? ip : ip - 1, cfa, sp = cur->r[PD_UW_SP];
	const struct pd_uw_row *rowp = &memo->row;
	const struct pd_uw_rule *ra;
	unsigned int reg, i;
	int ret;

	if (first || pc != memo->pc) {
		if (pc < obj->start || pc >= obj->end) {
			ret = pd_uw_obj_find(rd, pc, obj);
			if (ret == -E2BIG || ret == -EFAULT || ret == -EINTR)
				return ret;
			if (ret)	/* no object: the frame-pointer rule still may */
				*obj = (struct pd_uw_obj){ .start = pc, .end = pc + 1 };
		}
		/* the first frame's rules (a leaf's) are not its callers' */
		memo->pc = 0;
		ret = pd_uw_row_for(rd, obj, order, pc, first, &memo->row, &memo->method);
		if (ret)
			return ret;
		pd_uw_memo_sort(memo);
		if (!first)
			memo->pc = pc;
	}

	if (rowp->cfa_how == PD_UW_CFA_PLT) {
		cfa = sp + rowp->cfa_off + ((ip & 15) >= 11 ? 8 : 0);
	} else {
		if (rowp->cfa_reg >= PD_UW_NGPRS || !(cur->valid & BIT(rowp->cfa_reg)))
			return -EINVAL;
		cfa = cur->r[rowp->cfa_reg] + rowp->cfa_off;
	}
	ra = &rowp->reg[PD_UW_RA];
	if (ra->how == PD_UW_UNDEF)
		return -ENOENT;		/* the outermost frame */
	/*
	 * The stack grows down: a caller's frame is above, word-aligned.  An
	 * RA in a register (arm64's x30) may come with the CFA at SP; only the
	 * first frame knows that register, so the walk still moves on.
	 */
	if (cfa < sp || (cfa == sp && ra->how == PD_UW_AT_CFA) || (cfa & 7))
		return -EINVAL;
	if (ra->how != PD_UW_AT_CFA &&
	    (!IS_ENABLED(CONFIG_ARM64) || (ra->how != PD_UW_SAME && ra->how != PD_UW_IN_REG)))
		return -EINVAL;
	next->valid = 0;
	if (!pd_uw_apply(rd, cur, ra, PD_UW_RA, cfa, next) || !(next->valid & BIT(PD_UW_RA)))
		return -EINVAL;
	/* the caller's IP; the RA column is no register of the caller's */
	next->ip = pd_strip_pac(next->r[PD_UW_RA]);
	/*
	 * The callee-saved registers the row leaves alone keep their values
	 * and their validity (the RA column is none of them).  The values are
	 * copied as one span, the registers between them too, which is
	 * cheaper than asking which: a value counts only with its valid bit.
	 * Then the ones the row saved.
	 */
	next->valid = cur->valid & memo->same;
	memcpy(&next->r[PD_UW_CS_LO], &cur->r[PD_UW_CS_LO],
	       (PD_UW_CS_HI + 1 - PD_UW_CS_LO) * sizeof(cur->r[0]));
	for (i = 0; i < memo->nsaved; i++) {
		reg = memo->saved[i];
		if (!pd_uw_apply(rd, cur, &rowp->reg[reg], reg, cfa, next))
			return -EFAULT;
	}
	pd_uw_set(next, PD_UW_SP, cfa);
	pd_count(uw_frames[memo->method]);
	return 0;
}

#ifdef CONFIG_ARM64
/* pt_regs by DWARF number: x0-x30, SP */
static void pd_uw_regs_from(struct pd_uw_regs *r, const struct pt_regs *regs)
{
	unsigned int i;

	for (i = 0; i < PD_UW_SP; i++)
		pd_uw_set(r, i, regs->regs[i]);
	pd_uw_set(r, PD_UW_SP, regs->sp);
	r->ip = regs->pc;
}
#else
/* pt_regs by DWARF number (x86-64 psABI order) */
static void pd_uw_regs_from(struct pd_uw_regs *r, const struct pt_regs *regs)
{
	static const unsigned short off[PD_UW_RA] = {
		offsetof(struct pt_regs, ax), offsetof(struct pt_regs, dx),
		offsetof(struct pt_regs, cx), offsetof(struct pt_regs, bx),
		offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
		offsetof(struct pt_regs, bp), offsetof(struct pt_regs, sp),
		offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
		offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
		offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
		offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
	};
	unsigned int i;

	for (i = 0; i < PD_UW_RA; i++)
		pd_uw_set(r, i, *(const unsigned long *)((const u8 *)regs + off[i]));
	r->ip = regs->ip;
}
#endif

/*
 * Walk current's user stack by the methods of @order (see perf_defer.h)
 * into @ips; returns the number of entries.  64-bit tasks only: the
 * caller takes the frame-pointer walk for compat tasks.  A frame that no
 * method has a row for ends the walk, as does the outermost frame (its
 * return address undefined); others that end it count in uw_stopped.
 */
unsigned int pd_unwind_user_tables(u64 *ips, unsigned int max, unsigned int order)
{
	struct pd_uw_reader rd = { .budget = PD_UW_BUDGET };
	struct pd_uw_memo memo = { };
	struct pd_uw_obj obj = { };
	/* a frame's registers and its caller's, in turn: no copy per step */
	struct pd_uw_regs regs[2] = { };
	unsigned int nr = 0, c = 0;
	int ret;

	pd_uw_regs_from(&regs[0], task_pt_regs(current));
	for (;;) {
		ips[nr++] = regs[c].ip;
		if (nr >= max)
			break;
		ret = pd_uw_step(&rd, &obj, order, &regs[c], &regs[c ^ 1], nr == 1, &memo);
		if (ret) {
			if (ret != -ENOENT)
				pd_count(uw_stopped);
			break;
		}
		c ^= 1;
	}
	return nr;
}
