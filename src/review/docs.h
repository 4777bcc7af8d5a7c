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

/* Parses one page (text of len bytes; name is used for file:line). Returns a
 * new array of entries, in page order:
 *   {"api": "torch.autograd.Function.forward" (a method: class + "." + name),
 *    "kind": "function" | "class" | "method" | "row", "file": name, "line": N,
 *    "format": "table" | "list" | "line" | "api-table" | "unreadable",
 *    "doc_url": "..." or null,
 *    "products": [{"product": "Atlas A2 训练系列产品", "supported": true}],
 *    "all_products": true only for `是` with no exceptions,
 *    "others": true | false | null, what it says of a product it does not
 *              name: supported (the line and api-table formats' `是`, with or
 *              without exceptions), not supported (their `否`), or nothing
 *              (the table and list formats, and an unreadable entry),
 *    "limits": "text" or null}
 * api is the heading or the name cell as written (some pages write
 * `### profile.key_averages`, `torch.\_\_config\_\_.show` or, after a row
 * `torch.Tensor`, a row `names`); a method's class is the last `###`
 * heading, none after a `##` section or an API table. kind "row" is an API
 * table's row, which does not say what the API is. line is the 1-based line
 * of the `###` heading, of the `>` sub-entry or of the row.
 * In the line and api-table formats products lists only the named
 * exceptions, unsupported: `是` gives all_products and no products,
 * `是，暂不支持<term>X</term>` X unsupported (the others supported), `否` no
 * products (none supported).
 * An unreadable entry has no products and all_products false, but keeps the
 * doc_url and limits that could be read; a class whose support is stated only
 * per method is unreadable itself. A row is unreadable when its width is not
 * the header's, its name is empty, or the header has no rule row under it.
 * limits joins a list's items (a cell's `<br>` parts) with "; "; `-` means
 * none. Strings are valid UTF-8: bad bytes and control characters but tab
 * become U+FFFD. NULL only when out of memory. */
json_t *ap_docs_parse(const char *text, size_t len, const char *name);

/* Parses every *.md file under dir (recursively, sorted by path; hidden names
 * and symbolic links to directories skipped) into one array, each entry's
 * "file" the path relative to dir. NULL with "path: reason" in err when dir
 * or a page cannot be read. */
json_t *ap_docs_load(const char *dir, struct ap_buf *err);

/* ap_docs_load(), and in *pages (when pages is not NULL) a new array with
 * one object per page read, in the same order, saying which formats it was
 * found in: {"file", "entries": N, "formats": {"table": N, "unreadable": N}}
 * (a page in no format the parser knows has no entries: it is listed
 * all the same). */
json_t *ap_docs_load_pages(const char *dir, json_t **pages, struct ap_buf *err);

/* The first entry for api in entries: the exact api, else for a method
 * (a.b.Class.method) the entry of a.b.Class, whatever kind its page gave it
 * (pages list some classes without the class tag). NULL if none. *exact
 * (may be NULL) is 1 for the exact api, else 0. */
const json_t *ap_docs_find(const json_t *entries, const char *api, int *exact);

/* Writes an entry for api in the list format of the pages, laid out as the
 * 2.10.0 pages are (a blank line between blocks, inside a <div>):
 *   ### api
 *   <div style="margin-left: 2em">
 *   **原生文档**：[api](url)        (when url is not NULL)
 *   **产品支持情况**：
 *   - <term>product</term>：支持 | 不支持    (one per element of products)
 *   **限制与说明**：limits or -
 *   </div>
 * products is an array of {"product", "supported"}. The entry ends with
 * "</div>\n": put a blank line before the next one. Newlines in the strings
 * become spaces. ap_docs_parse reads it back with format "list", the same
 * products and limits (trimmed), provided products is not empty and no
 * product name holds "</term>". */
void ap_docs_entry(const char *api, const char *url, const json_t *products,
		   const char *limits, struct ap_buf *out);

/* One block of a generated page, in format "table" (`**支持情况**：` and a
 * `| <term>product</term> | ✔ |` table) or "list" (as ap_docs_entry()):
 * kind "function" or "class" is a `### ` heading (a class with the class
 * tag); "method" is a `> <font size="3">name()</font>` sub-entry, name the
 * last component of api, which must follow its class's block. limits is
 * written only when given. ap_docs_parse() reads the blocks back as the same
 * api, kind, format, doc_url, products and limits, provided products is not
 * empty and no string holds "</term>" or "|". */
void ap_docs_block(const char *format, const char *kind, const char *api, const char *url,
		   const json_t *products, const char *limits, struct ap_buf *out);

#endif
