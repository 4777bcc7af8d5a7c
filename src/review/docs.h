/* docs.h - a backend's native API support pages: read them, look up an API,
 * and write an entry in their format.
 *
 * A page (one per torch module, Markdown with some HTML) lists APIs as
 * `### <api>` blocks; a class carries a `<code><i>class</i></code>` prefix
 * (`_`class`_` on the 2.7.1 pages) and its methods appear inside it as
 * `> <font size="3">name()</font>` sub-entries. Each entry states support per
 * product in one of several formats that the pages used over the years:
 *   - table: `**支持情况**：` then a Markdown table `| <term>product</term> | ✔ |`
 *     (✔ supported, ✘ not);
 *   - list: `**产品支持情况**：` then `- <term>product</term>：支持|不支持`;
 *   - line: `**是否支持**：是` or `是，暂不支持<term>X</term>` (all products
 *     but the named ones), or `否`;
 * plus an optional `**原生文档**：[name](url)` link and `**限制与说明**：` text
 * (the rest of that line, or the list that follows). The oldest pages have no
 * headings but one table of APIs, `| API名称 | 是否支持 | 限制与说明 |`:
 *   - api-table: a row per API, `| torch.abs | 是 | - |`, the name cell
 *     possibly a `[name](url)` link, the support cell as the line format's
 *     value with `<br>` for `，` (`是<br>暂不支持<term>X</term>`), the limits
 *     cell `-` or text whose `<br>` breaks become "; ".
 * An entry whose support cannot be read is kept with format "unreadable" and
 * its line, never guessed.
 *
 * Pages are untrusted: any bytes parse (CRLF, NUL, invalid UTF-8, a page cut
 * anywhere); what cannot be read becomes "unreadable", never a crash.
 */
#ifndef AP_DOCS_H
#define AP_DOCS_H

#include <jansson.h>

#include "base/buf.h"

/* What an entry is: a `###` heading, a class's `>` sub-entry, or an API
 * table's row (which does not say what the API is). */
enum ap_docs_kind { AP_DOCS_FUNCTION, AP_DOCS_CLASS, AP_DOCS_METHOD, AP_DOCS_ROW };

/* The format an entry's support was read in (the file comment). */
enum ap_docs_format {
	AP_DOCS_UNREADABLE,
	AP_DOCS_TABLE,
	AP_DOCS_LIST,
	AP_DOCS_LINE,
	AP_DOCS_API_TABLE,
	AP_DOCS_NFORMATS
};

/* "function", "class", "method", "row"; "table", "list", "line",
 * "api-table", "unreadable": the words the JSON and the text write. */
const char *ap_docs_kind_name(enum ap_docs_kind k);
const char *ap_docs_format_name(enum ap_docs_format f);

struct ap_docs_product {
	char *product; /* "Atlas A2 训练系列产品" */
	int supported;
};

/* One entry of a page. Every string is owned by the entry and valid UTF-8
 * (bad bytes and control characters but tab become U+FFFD).
 *   api: "torch.autograd.Function.forward" (a method: class + "." + name),
 *        the heading or the name cell as written (some pages write
 *        `### profile.key_averages`, `torch.\_\_config\_\_.show` or, after
 *        a row `torch.Tensor`, a row `names`); a method's class is the last
 *        `###` heading, none after a `##` section or an API table.
 *   file: the page's name; line: the 1-based line of the `###` heading, of
 *        the `>` sub-entry or of the row.
 *   doc_url, limits: NULL when the page gives none. limits joins a list's
 *        items (a cell's `<br>` parts) with "; "; `-` means none.
 *   products: in the line and api-table formats only the named exceptions,
 *        unsupported: `是` gives all_products and no products,
 *        `是，暂不支持<term>X</term>` X unsupported (the others supported),
 *        `否` no products (none supported).
 *   all_products: 1 only for `是` with no exceptions.
 *   others: what it says of a product it does not name: 1 supported (the
 *        line and api-table formats' `是`, with or without exceptions), 0 not
 *        (their `否`), -1 nothing (the table and list formats, and an
 *        unreadable entry).
 * An unreadable entry has no products and all_products 0, but keeps the
 * doc_url and limits that could be read; a class whose support is stated only
 * per method is unreadable itself. A row is unreadable when its width is not
 * the header's, its name is empty, or the header has no rule row under it. */
struct ap_docs_entry {
	char *api;
	enum ap_docs_kind kind;
	char *file;
	long long line;
	enum ap_docs_format format;
	char *doc_url;
	struct ap_docs_product *products;
	size_t nproducts;
	int all_products;
	int others;
	char *limits;
};

/* Entries in page order (pages in path order). */
struct ap_docs_entries {
	struct ap_docs_entry *v;
	size_t n, cap;
};

/* What one page was read as: its file (repaired as the entries' is), its
 * number of entries, and per format found, in the order first found, how
 * many entries (a page in no format the parser knows has no entries: it is
 * listed all the same). */
struct ap_docs_page {
	char *file;
	char *not_read;       /* why the page was not read (a link, too large), or NULL */
	size_t entries;
	enum ap_docs_format formats[AP_DOCS_NFORMATS];
	size_t counts[AP_DOCS_NFORMATS];
	size_t nformats;
};

struct ap_docs_pages {
	struct ap_docs_page *v;
	size_t n, cap;
};

/* Parses one page (text of len bytes; name is used for file:line),
 * appending its entries to *out (zeroed, or holding entries already).
 * 0, or -ENOMEM (out then holds what it held before, or more). */
int ap_docs_parse(const char *text, size_t len, const char *name, struct ap_docs_entries *out);

void ap_docs_entries_free(struct ap_docs_entries *e);
void ap_docs_pages_free(struct ap_docs_pages *p);

/* Parses every *.md file under dir (recursively, sorted by path; hidden names
 * and symbolic links to directories skipped) into *out (zeroed), each entry's
 * file the path relative to dir; and in *pages (when not NULL; zeroed) one
 * page per file read, in the same order. 0, else an error with "path:
 * reason" in err (and nothing to free). */
int ap_docs_load_pages(const char *dir, struct ap_docs_entries *out, struct ap_docs_pages *pages,
		       struct ap_buf *err);

/* ap_docs_load_pages() without the pages. */
int ap_docs_load(const char *dir, struct ap_docs_entries *out, struct ap_buf *err);

/* The first entry for api in entries: the exact api, else for a method
 * (a.b.Class.method) the entry of a.b.Class, whatever kind its page gave it
 * (pages list some classes without the class tag). NULL if none. *exact
 * (may be NULL) is 1 for the exact api, else 0. */
const struct ap_docs_entry *ap_docs_find(const struct ap_docs_entries *entries, const char *api,
					 int *exact);

/* The entry as JSON (report.json's docs.entry): a new object
 *   {"api", "kind", "file", "line", "format", "doc_url" (or null),
 *    "products": [{"product", "supported"}], "all_products",
 *    "others" (true, false or null), "limits" (or null)}.
 * NULL when out of memory. */
json_t *ap_docs_entry_json(const struct ap_docs_entry *e);

/* The entry ap_docs_entry_json() wrote, read back into *e (its strings
 * owned; free with ap_docs_entries_free() of a one-entry set, or as that
 * does). 0, -EINVAL when o is not such an object, -ENOMEM. */
int ap_docs_entry_from_json(const json_t *o, struct ap_docs_entry *e);

/* Writes an entry for api in the list format of the pages, laid out as the
 * 2.10.0 pages are (a blank line between blocks, inside a <div>):
 *   ### api
 *   <div style="margin-left: 2em">
 *   **原生文档**：[api](url)        (when url is not NULL)
 *   **产品支持情况**：
 *   - <term>product</term>：支持 | 不支持    (one per product)
 *   **限制与说明**：limits or -
 *   </div>
 * The entry ends with "</div>\n": put a blank line before the next one.
 * Newlines in the strings become spaces. ap_docs_parse reads it back with
 * format list, the same products and limits (trimmed), provided there are
 * products and no product name holds "</term>". */
void ap_docs_entry(const char *api, const char *url, const struct ap_docs_product *products,
		   size_t nproducts, const char *limits, struct ap_buf *out);

/* As ap_docs_entry(), for api a member of the class owner: a sub-entry of
 * its class, as the pages write members, inside the class's block (its
 * heading, with no support of its own: the class was not measured here):
 *   ### <code><i>class</i></code> owner
 *   <div style="margin-left: 2em">
 *   > <font size="3">NAME()</font>      (NAME without "()" with AP_DOCS_NO_CALL)
 *   <div style="margin-left: 2em"> ... as ap_docs_entry() ... </div>
 *   </div>
 * NAME is api after "owner.", else its last part. ap_docs_parse reads the
 * member back as owner.NAME with the same products and limits. */
void ap_docs_member_entry(const char *owner, const char *api, unsigned flags, const char *url,
			  const struct ap_docs_product *products, size_t nproducts,
			  const char *limits, struct ap_buf *out);

/* Whether a member of this kind (a matrix line's or a resolution's: "method",
 * "property", "value"...) is called, written with "()": not a value, a
 * property or an enum's member. */
int ap_docs_called(const char *kind);

/* How ap_docs_block() writes a block (or-ed). */
#define AP_DOCS_OPEN    1u /* its <div> is left open, as a class's is for its
			      sub-entries: AP_DOCS_BLOCK_END closes it */
#define AP_DOCS_NO_CALL 2u /* a sub-entry not called (a property, a value):
			      its name without "()" */
#define AP_DOCS_BLOCK_END "</div>\n\n"

/* One block of a generated page, in format table (`**支持情况**：` and a
 * `| <term>product</term> | ✔ |` table) or list (as ap_docs_entry()):
 * kind function or class is a `### ` heading (a class with the class tag);
 * method is a `> <font size="3">name()</font>` sub-entry, name the last
 * component of api, which must follow its class's block (inside it, as the
 * backend's pages have them, where that block was left open). limits is
 * written only when given. ap_docs_parse() reads the blocks back as the
 * same api, kind, format, doc_url, products and limits, provided there are
 * products and no string holds "</term>" or "|". */
void ap_docs_block(enum ap_docs_format format, enum ap_docs_kind kind, const char *api,
		   const char *url, const struct ap_docs_product *products, size_t nproducts,
		   const char *limits, unsigned flags, struct ap_buf *out);

#endif
