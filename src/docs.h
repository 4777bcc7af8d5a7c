/* docs.h - a backend's native API support pages: read them, look up an API,
 * and write an entry in their format.
 *
 * A page (one per torch module, Markdown with some HTML) lists APIs as
 * `### <api>` blocks; a class carries a `<code><i>class</i></code>` prefix and
 * its methods appear inside it as `> <font size="3">name()</font>` sub-entries.
 * Each entry states support per product in one of several formats that the
 * pages used over the years:
 *   - table: `**支持情况**：` then a Markdown table `| <term>product</term> | ✔ |`
 *     (✔ supported, ✘ not);
 *   - list: `**产品支持情况**：` then `- <term>product</term>：支持|不支持`;
 *   - line: `**是否支持**：是` or `是，暂不支持<term>X</term>` (all products
 *     but the named ones);
 * plus an optional `**原生文档**：[name](url)` link and `**限制与说明**：` text
 * (the rest of that line, or the list that follows). An entry whose support
 * cannot be read is kept with format "unreadable" and its line, never guessed.
 */
#ifndef AP_DOCS_H
#define AP_DOCS_H

#include <jansson.h>

#include "buf.h"

/* Parses one page (text of len bytes; name is used for file:line). Returns a
 * new array of entries, in page order:
 *   {"api": "torch.autograd.Function.forward" (a method: class + "." + name),
 *    "kind": "function" | "class" | "method", "file": name, "line": N,
 *    "format": "table" | "list" | "line" | "unreadable",
 *    "doc_url": "..." or null,
 *    "products": [{"product": "Atlas A2 训练系列产品", "supported": true}],
 *    "all_products": true only for `是否支持：是` with no exceptions,
 *    "limits": "text" or null}
 * NULL only when out of memory. */
json_t *ap_docs_parse(const char *text, size_t len, const char *name);

/* Parses every *.md file under dir (recursively, sorted) into one array;
 * NULL with err set when dir cannot be read. */
json_t *ap_docs_load(const char *dir, struct ap_buf *err);

/* The entry for api in entries: the exact api, else for a method
 * (a.b.Class.method) the entry of its class. NULL if none. *exact tells
 * which. */
const json_t *ap_docs_find(const json_t *entries, const char *api, int *exact);

/* Writes an entry for api in the list format of the pages:
 *   ### api
 *   **原生文档**：[api](url)        (when url is not NULL)
 *   **产品支持情况**：
 *   - <term>product</term>：支持 | 不支持    (one per element of products)
 *   **限制与说明**：limits or -
 * products is an array of {"product", "supported"}. */
void ap_docs_entry(const char *api, const char *url, const json_t *products,
		   const char *limits, struct ap_buf *out);

#endif
