// SPDX-License-Identifier: GPL-2.0-only
/*
 * PD_HAVE_PAGE_KMEMCG: a page charged to a memory cgroup has the Kmemcg
 * page type (up to 5.10), which vm_insert_page() refuses to map
 */
#include <linux/page-flags.h>

bool pd_probe(struct page *page);
bool pd_probe(struct page *page)
{
	return PageKmemcg(page);
}
