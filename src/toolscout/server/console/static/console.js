// toolscout console: plain JavaScript, no framework, nothing loaded from elsewhere.
//
// Every piece of text that comes from the gateway (tool names, descriptions, errors) may be
// hostile: it only ever reaches the page as textContent (see h() below), never as HTML.
// The view lives in the URL hash (#view=search&q=...), so a link or a headless browser can
// open any view directly; <html data-state="ready" data-view="..."> says when it is drawn.
"use strict";
(() => {
  const TOKEN_KEY = "toolscout.token";
  const VIEWS = ["servers", "catalog", "search", "call", "tokens", "activity", "audit"];
  const FIELD_LABELS = {
    name: "name", description: "description", param_names: "parameter names",
    param_text: "parameter text", labels: "category, tags", i18n: "translations",
  };
  const SIGNALS = {
    keyword: "BM25F over the tool's fields", semantic: "embedding similarity",
    name: "close to a name in the query", regex: "regular expression", "exact name": "the query names it",
    select: "asked for by name (select:)", usage: "learned usage: what sessions called for such queries (negative: shown, never called)",
    rank: "the fused list's tie-break by rank", hybrid: "the fused score", score: "the score",
  };
  let caps = null;
  let generation = 0;

  // -- DOM helpers: text is always a text node ---------------------------------------------
  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") el.className = value;
      else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else if (key === "style") for (const [p, v] of Object.entries(value)) el.style.setProperty(p, v);
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }
  const $ = (sel) => document.querySelector(sel);
  const num = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : "-");
  const fixed = (n, d = 2) => (typeof n === "number" ? n.toFixed(d) : "-");
  const json = (v) => JSON.stringify(v, null, 2);

  function ago(epoch) {
    if (!epoch) return "-";
    const s = Math.max(0, Date.now() / 1000 - epoch);
    if (s >= 86400) return `${Math.round(s / 86400)} d ago`;
    if (s >= 3600) return `${Math.round(s / 3600)} h ago`;
    if (s >= 60) return `${Math.round(s / 60)} min ago`;
    return `${Math.round(s)} s ago`;
  }
  function clock(epoch) {
    const d = new Date(epoch * 1000);
    return d.toTimeString().slice(0, 8);
  }
  const badge = (text, kind) => h("span", { class: `badge ${kind || ""}` }, text);
  const stat = (label, value, note) =>
    h("div", { class: "stat" }, h("div", { class: "value" }, value), h("div", { class: "label" }, label),
      note ? h("div", { class: "note" }, note) : null);

  function table(headers, rows, cls) {
    // In a wrapper that scrolls sideways: columns keep their words whole (console.css).
    return h("div", { class: "table-wrap" }, h("table", { class: cls || "" },
      h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))),
      h("tbody", {}, rows)));
  }

  // -- state in the hash ---------------------------------------------------------------------
  const params = () => new URLSearchParams(location.hash.slice(1));
  function go(changes, view) {
    const p = view ? new URLSearchParams() : params();
    if (view) p.set("view", view);
    for (const [k, v] of Object.entries(changes || {})) {
      if (v === null || v === undefined || v === "" || v === false) p.delete(k);
      else p.set(k, v === true ? "1" : String(v));
    }
    const next = "#" + p.toString();
    if (next === location.hash) route();
    else location.hash = next;
  }
  const link = (text, changes, view) =>
    h("a", { href: "#", onclick: (e) => { e.preventDefault(); go(changes, view); } }, text);

  // -- the API ---------------------------------------------------------------------------------
  class Unauthorized extends Error {}
  const token = () => sessionStorage.getItem(TOKEN_KEY) || "";

  async function api(path, query) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query || {})) if (v !== null && v !== undefined && v !== "") qs.set(k, v);
    const url = qs.toString() ? `${path}?${qs}` : path;
    const headers = { Accept: "application/json" };
    if (token()) headers.Authorization = "Bearer " + token();
    const response = await fetch(url, { headers, cache: "no-store", credentials: "omit" });
    if (response.status === 401) throw new Unauthorized();
    try {
      return await response.json();
    } catch {
      throw new Error(`${path} answered HTTP ${response.status} without JSON`);
    }
  }

  async function post(path, body) {
    const headers = { Accept: "application/json", "Content-Type": "application/json" };
    if (token()) headers.Authorization = "Bearer " + token();
    const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body), cache: "no-store", credentials: "omit" });
    if (response.status === 401) throw new Unauthorized();
    try {
      return await response.json();
    } catch {
      throw new Error(`${path} answered HTTP ${response.status} without JSON`);
    }
  }

  function errorBox(error) {
    const details = error.details || {};
    return h("div", { class: "card error-box" },
      h("div", {}, badge(error.code || "error", "bad"), " ", error.message || ""),
      error.hint ? h("div", { class: "muted" }, error.hint) : null,
      details.errors && details.errors.length
        ? h("ul", { class: "problems" }, details.errors.map((e) => h("li", {}, h("code", {}, e.pointer || e.loc || ""), " ", e.message || e.msg || "")))
        : null,
      details.suggestions && details.suggestions.length
        ? h("div", {}, "Did you mean: ", details.suggestions.map((s, i) => [i ? ", " : "", h("code", {}, s)])) : null,
      ...sourceBanners(details),
      details.categories && Object.keys(details.categories).length
        ? h("div", { class: "muted" }, "Categories: ",
          Object.entries(details.categories).map(([c, n], i) => [i ? ", " : "", link(`${c} (${n})`, { category: c })]))
        : null);
  }

  // Sources not listed yet: still loading (will come), or failed (with the reason and the next
  // retry; a failed source is never shown as "still loading").
  function sourceBanners(meta) {
    const out = [];
    const entries = (m) => Object.entries(m || {}).map(([k, v]) => `${k} (${v})`).join("; ");
    if (meta && meta.loading && Object.keys(meta.loading).length) out.push(h("div", { class: "warning" }, "Still loading: ", entries(meta.loading)));
    if (meta && meta.failed && Object.keys(meta.failed).length) {
      out.push(h("div", { class: "warning failed-sources" }, "Failed to load (their tools cannot be found until they are back): ", entries(meta.failed)));
    }
    return out;
  }

  function readinessNote(ready) {
    const parts = [];
    if (Object.keys(ready.pending || {}).length) parts.push("still listing: " + Object.keys(ready.pending).join(", "));
    if (Object.keys(ready.failed || {}).length) parts.push("failed: " + Object.entries(ready.failed).map(([k, v]) => `${k} (${v})`).join("; "));
    return parts.length ? parts.join(" · ") : null;
  }

  // -- views -------------------------------------------------------------------------------------
  async function viewServers() {
    const [servers, catalog, ready] = await Promise.all([
      api("../v1/servers"), api("api/catalog", { limit: 0 }), api("../v1/ready"),
    ]);
    const rows = Object.entries(servers.servers || {});
    const failed = rows.filter(([, s]) => s.state === "failed").length;
    const upReady = rows.filter(([, s]) => s.state === "ready").length;
    const stats = h("div", { class: "stats" },
      stat("tools in the catalog", num(catalog.total)),
      stat("configured servers and sources", num(rows.length), rows.length ? `${upReady} ready, ${failed} failed` : "none configured"),
      stat("sources in the catalog", num(catalog.sources.length)),
      stat("flagged tools", num(catalog.facets.flagged), "tool-poisoning findings"),
      stat("readiness", ready.status || "-", readinessNote(ready)));
    const upstream = rows.length
      ? table(["server", "state", "kind", "transport", "tools", "skipped", "calls", "flagged", "quarantined", "tool list", "last error"],
        rows.map(([name, s]) => h("tr", {},
          h("td", {}, link(name, { server: name }, "catalog")),
          h("td", {}, badge(s.state, stateClass(s.state))),
          h("td", {}, s.kind || "mcp"),
          h("td", {}, s.transport || "-"),
          h("td", { class: "n" }, num(s.tools), s.metadata_only ? h("span", { class: "muted" }, ` (${num(s.metadata_only)} metadata only)`) : null),
          h("td", { class: "n" }, num(s.skipped)),
          h("td", { class: "n" }, num(s.calls)),
          h("td", { class: "n" }, s.flagged ? badge(String(s.flagged), "warn") : "0"),
          h("td", { class: "n" }, s.quarantined ? badge(String(s.quarantined), "bad") : "0"),
          h("td", { class: "nowrap" }, s.fetched_at ? `${s.from_cache ? "cache" : "live"}, ${ago(s.fetched_at)}` : "-"),
          h("td", { class: "err" }, s.last_error || "", typeof s.retry_in === "number" ? h("span", { class: "muted" }, ` (retry in ${Math.round(s.retry_in)} s)`) : null))))
      : h("p", { class: "muted" }, "No servers or sources configured: this gateway serves the local catalog below.");
    const sources = table(["source", "kind", "tools", "flagged"],
      catalog.sources.map((s) => h("tr", {},
        h("td", {}, link(s.server, { server: s.server }, "catalog")),
        h("td", {}, s.kinds.join(", ")),
        h("td", { class: "n" }, num(s.tools)),
        h("td", { class: "n" }, s.flagged ? badge(String(s.flagged), "warn") : "0"))));
    return h("section", {}, stats,
      h("div", { class: "card" }, h("h2", {}, "Configured servers and sources"), upstream),
      h("div", { class: "card" }, h("h2", {}, "Sources in the catalog"), sources));
  }

  function stateClass(state) {
    return { ready: "good", failed: "bad", connecting: "warn", idle: "", disabled: "" }[state] || "";
  }

  function select(name, label, facet, current) {
    const options = [h("option", { value: "" }, "all")];
    for (const [value, count] of Object.entries(facet || {})) {
      options.push(h("option", { value, selected: value === current }, `${value} (${count})`));
    }
    return h("label", {}, label, h("select", { name, onchange: (e) => go({ [name]: e.target.value, offset: null, tool: null }) }, options));
  }

  async function viewCatalog(p) {
    const filters = {};
    for (const key of ["server", "category", "kind", "permission", "text"]) filters[key] = p.get(key) || "";
    const flagged = p.get("flagged") === "1";
    const offset = Number(p.get("offset") || 0);
    const name = p.get("tool");
    const [page, detail] = await Promise.all([
      api("api/catalog", { ...filters, flagged: flagged ? "true" : "", offset, limit: 100 }),
      name ? api("api/tool", { name }) : null,
    ]);
    const form = h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); go({ text: e.target.elements.text.value, offset: null }); } },
      h("label", {}, "Name or summary", h("input", { name: "text", type: "search", value: filters.text, placeholder: "filter" })),
      select("server", "Server", page.facets.server, filters.server),
      select("category", "Category", page.facets.category, filters.category),
      select("kind", "Kind", page.facets.kind, filters.kind),
      select("permission", "Permission", page.facets.permission, filters.permission),
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "flagged", checked: flagged, onchange: (e) => go({ flagged: e.target.checked, offset: null }) }),
        `flagged only (${page.facets.flagged})`));
    const rows = page.tools.map((t) => h("tr", { class: t.name === name ? "selected" : "" },
      h("td", {}, link(t.name, { tool: t.name })),
      h("td", { class: "summary" }, t.summary),
      h("td", {}, t.server), h("td", {}, t.kind), h("td", {}, t.category || "-"),
      h("td", {}, t.permission ? badge(t.permission, t.permission === "dangerous" ? "bad" : "") : "-"),
      h("td", {}, t.flagged ? badge(`flagged: ${t.severity}`, "bad") : t.findings ? badge(`${t.findings} low`, "") : "")));
    const end = Math.min(page.offset + page.tools.length, page.matched);
    const pager = h("div", { class: "pager" },
      h("span", { class: "muted" }, page.matched ? `${num(page.offset + 1)}–${num(end)} of ${num(page.matched)} tools (catalog: ${num(page.total)})` : `no tool matches these filters (catalog: ${num(page.total)})`),
      page.offset > 0 ? link("previous", { offset: Math.max(0, page.offset - page.limit) }) : null,
      end < page.matched ? link("next", { offset: page.offset + page.limit }) : null);
    return h("section", { class: name ? "split" : "" },
      h("div", { class: "card" }, h("h2", {}, "Catalog"), form,
        table(["tool", "summary", "server", "kind", "category", "permission", "findings"], rows, "tools"), pager),
      detail ? toolDetail(detail) : null);
  }

  function formatTabs(renderings, preferred) {
    const names = Object.keys(renderings);
    const first = names.includes(preferred) ? preferred : names[0];
    const panels = {};
    const buttons = {};
    const show = (fmt) => {
      for (const n of names) {
        panels[n].hidden = n !== fmt;
        buttons[n].classList.toggle("active", n === fmt);
      }
    };
    for (const fmt of names) {
      const r = renderings[fmt];
      buttons[fmt] = h("button", { type: "button", class: "tab", onclick: () => show(fmt) }, fmt);
      panels[fmt] = h("div", { class: "panel", "data-format": fmt },
        r.error ? h("p", { class: "error" }, r.error)
          : [h("div", { class: "muted" }, `${num(r.tokens)} tokens (o200k) as sent in the ${fmt} format`), h("pre", { class: "schema" }, json(r.definition))]);
    }
    const box = h("div", { class: "formats" }, h("div", { class: "tabs" }, names.map((n) => buttons[n])), names.map((n) => panels[n]));
    show(first);
    return box;
  }

  function findingsTable(findings) {
    if (!findings.length) return null;
    return table(["severity", "code", "field", "evidence"], findings.map((f) => h("tr", {},
      h("td", {}, badge(f.severity, f.severity === "low" ? "" : "bad")), h("td", {}, h("code", {}, f.code)),
      h("td", {}, f.field), h("td", { class: "evidence" }, f.evidence))), "findings");
  }

  function toolDetail(detail) {
    if (detail.error) return errorBox(detail.error);
    const t = detail.row;
    const rec = detail.record;
    return h("div", { class: "card detail" },
      h("h2", {}, t.name),
      h("div", { class: "chips" }, badge(`server ${t.server}`), badge(`kind ${t.kind}`), t.category ? badge(`category ${t.category}`) : null,
        t.permission ? badge(t.permission, t.permission === "dangerous" ? "bad" : "") : null,
        detail.visible ? null : badge("hidden by policy or platform", "warn"),
        t.available ? null : badge("unavailable", "warn"), badge(`version ${rec.version}`)),
      h("div", { class: "actions" }, link("Call this tool", { tool: t.name }, "call")),
      h("p", { class: "description" }, rec.description || "(no description)"),
      detail.findings.length ? [h("h3", {}, "Tool-poisoning findings"), findingsTable(detail.findings)] : null,
      detail.openai_strict ? h("p", { class: "muted" }, "Not OpenAI strict mode: ", detail.openai_strict) : null,
      h("h3", {}, "What a model receives"),
      formatTabs(detail.formats, "openai"));
  }

  async function viewSearch(p) {
    const q = p.get("q") || "";
    const format = p.get("format") || "openai";
    const [facets, found] = await Promise.all([
      api("api/catalog", { limit: 0 }),
      q ? api("api/search", { q, limit: p.get("limit"), type: p.get("type"), category: p.get("category"), format }) : null,
    ]);
    const modes = ((caps.search || {}).backends || ["auto", "keyword", "regex"]);
    const formats = ((caps.http || {}).formats || ["openai"]);
    const form = h("form", { class: "filters search", onsubmit: (e) => {
      e.preventDefault();
      const f = e.target.elements;
      go({ q: f.q.value, type: f.type.value, limit: f.limit.value, category: f.category.value, format: f.format.value });
    } },
    h("label", { class: "grow" }, "Query", h("input", { name: "q", type: "search", value: q, placeholder: "what the model wants to do, a tool name, or select:a,b", required: true })),
    h("label", {}, "Search type", h("select", { name: "type" }, modes.map((m) => h("option", { value: m, selected: m === (p.get("type") || "auto") }, m)))),
    h("label", {}, "Limit", h("input", { name: "limit", type: "number", min: 1, max: 20, value: p.get("limit") || "", placeholder: "5" })),
    h("label", {}, "Category", h("select", { name: "category" }, h("option", { value: "" }, "all"),
      Object.keys(facets.facets.category).filter((c) => c !== "(none)").map((c) => h("option", { value: c, selected: c === p.get("category") }, c)))),
    h("label", {}, "Format", h("select", { name: "format" }, formats.map((f) => h("option", { value: f, selected: f === format }, f)))),
    h("button", { type: "submit" }, "Search"));
    const parts = [h("div", { class: "card" }, h("h2", {}, "Search playground"),
      h("p", { class: "muted" }, "Runs find_tools as a model would (stateless: nothing is revealed) and shows why each tool ranked where it did."), form)];
    if (found) parts.push(searchResult(found, format));
    return h("section", {}, parts);
  }

  function searchResult(found, format) {
    const result = found.result || {};
    const meta = result.search_metadata || {};
    const refs = result.tool_references || [];
    const out = [];
    const head = h("div", { class: "result-head" },
      h("strong", {}, `${refs.length} of ${num(result.total_matches)} matching tools`),
      h("span", { class: "muted" }, ` · ${fixed(meta.execution_time_ms, 2)} ms · ${meta.search_type || "-"} search`),
      refs.length < (result.total_matches || 0) ? h("span", { class: "muted" }, " · the rest fell below the limit or AutoCut's score gap") : null);
    out.push(head);
    if (refs.length) {
      out.push(h("p", { class: "muted scale-note" },
        "relevance (0 to 1) is the relevance_score the model receives; score is the ranker's raw total (the sum of the score parts below). ",
        "Both rank the tools in the same order; only their scales differ, and a score is comparable only within one search."));
    }
    for (const w of meta.warnings || []) out.push(h("div", { class: "warning" }, w));
    out.push(...sourceBanners(meta));
    if (result.error) out.push(errorBox(result.error));
    // A request of several steps: its sub-intents, and on each hit the one it answers.
    if (meta.sub_intents) out.push(h("div", { class: "sub-intents" }, h("strong", {}, "Sub-intents: "),
      meta.sub_intents.map((s, i) => h("span", { class: "chip" }, `${i + 1}. ${s}`))));
    found.hits.forEach((hit, i) => {
      const card = hitCard(hit, i + 1, found.fields || Object.keys(FIELD_LABELS), format);
      const answers = (refs[i] || {}).answers;
      if (answers) card.querySelector(".chips").prepend(h("span", { class: "chip answers", title: "the sub-intent this tool answers" }, `answers: ${answers}`));
      out.push(card);
    });
    out.push(h("details", { class: "card" }, h("summary", {}, `The whole find_tools answer (${format})`), h("pre", { class: "schema" }, json(result))));
    return h("div", { class: "results" }, out);
  }

  function partsTable(hit, used) {
    // Every part of the score, named; they add up to it (the keyword part is split over terms below).
    const parts = hit.parts || [];
    const total = parts.reduce((a, p) => a + p.score, 0);
    return table(["part of the score", "adds", "what it is"], [
      ...parts.map((p) => h("tr", { "data-part": p.signal }, h("td", {}, h("span", { class: "chip signal" }, p.signal)),
        h("td", { class: "n" }, fixed(p.score, 3)), h("td", { class: "muted" }, SIGNALS[p.signal] || ""))),
      h("tr", { class: "total" }, h("td", {}, "score"), h("td", { class: "n" }, fixed(total, 3)), h("td", {}, "")),
    ], "parts summary");
  }

  function hitCard(hit, rank, fields, format) {
    const signals = hit.signals.map((s) => h("span", { class: "chip signal", title: SIGNALS[s] || s }, s));
    const used = fields.filter((f) => hit.terms.some((t) => t.fields[f]));
    const totals = Object.fromEntries(used.map((f) => [f, hit.terms.reduce((a, t) => a + (t.fields[f] || 0), 0)]));
    const sum = Object.values(totals).reduce((a, b) => a + b, 0);
    const bar = sum > 0 ? h("div", { class: "stack", title: "BM25F score by field" },
      used.map((f) => h("span", { class: `seg f-${f}`, style: { width: `${(100 * totals[f] / sum).toFixed(2)}%` }, title: `${FIELD_LABELS[f]}: ${fixed(totals[f])}` }))) : null;
    const legend = sum > 0 ? h("div", { class: "legend" }, used.map((f) => h("span", {}, h("i", { class: `f-${f}` }), `${FIELD_LABELS[f]} ${fixed(totals[f])}`))) : null;
    const termTable = hit.terms.length
      ? table(["term (as indexed)", "score", ...used.map((f) => FIELD_LABELS[f])], [
        ...hit.terms.map((t) => h("tr", {}, h("td", {}, h("code", {}, t.term)), h("td", { class: "n" }, fixed(t.score, 3)),
          used.map((f) => h("td", { class: "n" }, t.fields[f] ? fixed(t.fields[f], 3) : "")))),
        h("tr", { class: "total" }, h("td", {}, "keyword part"), h("td", { class: "n" }, fixed(sum, 3)), used.map((f) => h("td", { class: "n" }, fixed(totals[f], 3)))),
      ], "parts")
      : null;
    return h("article", { class: "card hit" },
      h("div", { class: "hit-head" },
        h("span", { class: "rank" }, `#${rank}`),
        h("h3", {}, link(hit.name, { tool: hit.name }, "catalog")),
        h("div", { class: "relevance", title: "relevance (0 to 1): the relevance_score the model receives" },
          h("div", { class: "meter" }, h("span", { style: { width: `${Math.round(100 * hit.relevance)}%` } })),
          h("span", {}, `relevance ${fixed(hit.relevance)}`)),
        h("span", { class: "muted", title: "score: the ranker's raw total, the sum of the score parts below" }, hit.score !== null ? `score ${fixed(hit.score, 3)}` : ""),
        link("call", { tool: hit.name }, "call")),
      h("p", { class: "summary" }, hit.summary),
      h("div", { class: "chips" }, signals, badge(hit.server), hit.category ? badge(hit.category) : null,
        hit.permission ? badge(hit.permission, hit.permission === "dangerous" ? "bad" : "") : null,
        hit.findings.map((f) => badge(`${f.code} (${f.severity})`, f.severity === "low" ? "" : "bad"))),
      h("div", { class: "why" }, h("h4", {}, "Score parts: each signal's share (they add up to the score)"), partsTable(hit, used),
        termTable ? [h("h4", {}, "The keyword part: each query term's BM25F share, split over the fields that hold it"), bar, legend, termTable] : null),
      h("details", { open: rank === 1 }, h("summary", {}, "The schema the model receives, per format"), formatTabs(hit.formats, format)));
  }

  // -- the call panel: a form generated from the tool's input schema, approval, the result ----------
  function fieldFor(name, schema, required) {
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
    const attrs = { name: `arg:${name}`, "data-arg": name, "data-kind": "json" };
    let input;
    if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string")) {
      attrs["data-kind"] = "string";
      input = h("select", attrs, h("option", { value: "" }, required ? "(choose)" : "(leave out)"),
        schema.enum.map((v) => h("option", { value: v, selected: v === schema.default }, v)));
    } else if (type === "string") {
      attrs["data-kind"] = "string";
      input = h("input", { ...attrs, type: "text", placeholder: schema.default !== undefined ? String(schema.default) : (schema.format || "") });
    } else if (type === "integer" || type === "number") {
      attrs["data-kind"] = type;
      input = h("input", { ...attrs, type: "number", step: type === "integer" ? "1" : "any", placeholder: schema.default !== undefined ? String(schema.default) : "" });
    } else if (type === "boolean") {
      attrs["data-kind"] = "boolean";
      input = h("select", attrs, h("option", { value: "" }, required ? "(choose)" : "(leave out)"), h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
    } else {
      input = h("textarea", { ...attrs, rows: 3, placeholder: `JSON ${type || "value"}` });
    }
    return h("label", { class: "arg" },
      h("span", { class: "arg-name" }, h("code", {}, name), required ? h("span", { class: "req", title: "required" }, " *") : null,
        h("span", { class: "muted" }, ` ${type || "any"}`)),
      input,
      schema.description ? h("span", { class: "muted arg-help" }, schema.description) : null);
  }

  function readArguments(form) {
    // The form's values as the tool's arguments; empty fields are left out.
    if (form.elements.raw && form.elements.raw.value.trim()) return JSON.parse(form.elements.raw.value);
    const args = {};
    for (const el of form.querySelectorAll("[data-arg]")) {
      const v = el.value.trim();
      if (v === "") continue;
      const kind = el.dataset.kind;
      const key = el.dataset.arg;
      if (kind === "string") args[key] = el.value;
      else if (kind === "integer" || kind === "number") args[key] = Number(v);
      else if (kind === "boolean") args[key] = v === "true";
      else {
        try { args[key] = JSON.parse(v); } catch { throw new Error(`${key}: not valid JSON`); }
      }
    }
    return args;
  }

  function callResult(answer, ms) {
    const out = [h("div", { class: "result-head" },
      answer.ok ? badge("ok", "good") : badge((answer.error || {}).code || "tool error", "bad"),
      h("span", { class: "muted" }, ` ${answer.tool || ""} · ${fixed(ms, 1)} ms`))];
    if (answer.error) out.push(errorBox(answer.error));
    for (const block of answer.content || []) {
      if (block.type === "text") out.push(h("pre", { class: "schema result-text" }, block.text));
      else if (block.type === "image" && /^image\/(png|jpeg|gif|webp)$/.test(block.mimeType || "")) out.push(h("img", { class: "result-image", alt: "image result", src: `data:${block.mimeType};base64,${block.data}` }));
      else out.push(h("pre", { class: "schema" }, json(block)));
    }
    if (answer.structured !== undefined && answer.structured !== null) out.push(h("h4", {}, "Structured result"), h("pre", { class: "schema" }, json(answer.structured)));
    return h("div", { class: "card call-result", "data-ok": answer.ok ? "true" : "false" }, h("h2", {}, "Result"), out);
  }

  async function viewCall(p) {
    const name = p.get("tool") || "";
    const detail = name ? await api("api/tool", { name }) : null;
    const pick = h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); go({ tool: e.target.elements.tool.value }, "call"); } },
      h("label", { class: "grow" }, "Tool", h("input", { name: "tool", type: "search", value: name, placeholder: "a tool name (find one in Search or Catalog)", required: true })),
      h("button", { type: "submit" }, "Open"));
    const parts = [h("div", { class: "card" }, h("h2", {}, "Call a tool"),
      h("p", { class: "muted" }, "Runs the tool through /v1/call, the one call path every client uses: the same validation, policy and approval."), pick)];
    if (!detail) return h("section", {}, parts);
    if (detail.error) { parts.push(errorBox(detail.error)); return h("section", {}, parts); }
    const t = detail.row;
    const schema = detail.record.input_schema || {};
    const props = schema.properties || {};
    const required = new Set(schema.required || []);
    const output = h("div", { id: "call-output" });
    const run = async (args, approved) => {
      const started = performance.now();
      const body = { name: t.name, arguments: args };
      if (approved !== undefined) body.approved = approved;
      const answer = await post("../v1/call", body);
      output.replaceChildren(callResult(answer, performance.now() - started));
      document.documentElement.dataset.call = answer.ok ? "ok" : "error";
    };
    const ask = (args) => {
      // The person at the console is the approver: nothing runs until they answer.
      document.documentElement.dataset.call = "approval";
      output.replaceChildren(h("div", { class: "card approval", role: "alertdialog" },
        h("h2", {}, "Approve this call?"),
        h("p", {}, h("code", {}, t.name), ` is ${detail.approval || t.permission || "gated"}: the gateway runs it only once you approve.`),
        h("pre", { class: "schema" }, json(args)),
        h("div", { class: "actions" },
          h("button", { type: "button", id: "approve", onclick: () => run(args, true) }, "Approve and run"),
          h("button", { type: "button", id: "deny", class: "secondary", onclick: () => run(args, false) }, "Deny"))));
    };
    const form = h("form", { class: "call-form", onsubmit: async (e) => {
      e.preventDefault();
      let args;
      try {
        args = readArguments(e.target);
      } catch (err) {
        output.replaceChildren(h("div", { class: "card error-box" }, String(err.message || err)));
        return;
      }
      if (detail.approval) ask(args);
      else await run(args);
    } },
    Object.keys(props).length ? Object.entries(props).map(([k, v]) => fieldFor(k, v || {}, required.has(k)))
      : h("p", { class: "muted" }, "This tool takes no declared arguments."),
    h("details", {}, h("summary", {}, "Arguments as JSON (replaces the fields above)"),
      h("textarea", { name: "raw", rows: 5, placeholder: "{\"key\": \"value\"}" })),
    h("div", { class: "actions" }, h("button", { type: "submit", id: "run" }, detail.approval ? "Call (asks for approval)" : "Call")));
    parts.push(h("div", { class: "card call" },
      h("h2", {}, t.name, " ", t.permission ? badge(t.permission, t.permission === "dangerous" ? "bad" : "") : null,
        detail.approval ? badge("needs approval", "warn") : null),
      h("p", { class: "description" }, detail.record.description || "(no description)"),
      form), output);
    return h("section", {}, parts);
  }

  async function viewTokens(p) {
    const format = p.get("format") || "openai";
    const searches = p.get("searches") || "3";
    const perSearch = p.get("per_search") || "5";
    const report = await api("api/tokens", { format, searches, per_search: perSearch });
    const formats = ((caps.http || {}).formats || ["openai"]);
    const form = h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); const f = e.target.elements; go({ format: f.format.value, searches: f.searches.value, per_search: f.per_search.value }); } },
      h("label", {}, "Format", h("select", { name: "format" }, formats.map((f) => h("option", { value: f, selected: f === format }, f)))),
      h("label", {}, "Searches", h("input", { name: "searches", type: "number", min: 0, max: 100, value: searches })),
      h("label", {}, "Tools per search", h("input", { name: "per_search", type: "number", min: 1, max: 20, value: perSearch })),
      h("button", { type: "submit" }, "Count"));
    if (report.error) return h("section", {}, h("div", { class: "card" }, h("h2", {}, "Token savings"), form), errorBox(report.error));
    const worse = report.after_pct > 100;
    const top = Math.max(...report.rows.map((r) => r.tokens), 1);
    return h("section", {},
      h("div", { class: "card" }, h("h2", {}, "Token savings"),
        h("p", { class: "muted" }, "Tool-definition tokens in a model's context: every schema sent up front, against toolscout's meta-tools plus the tools a few searches reveal."),
        form,
        h("div", { class: "stats" },
          stat(worse ? "more than the static list" : "saved after the searches", `${fixed(Math.abs(report.saved_pct), 1)}%`),
          stat("static list", num(report.static), `${num(report.tools)} tools, ${fixed(report.per_tool, 1)} per tool`),
          stat("meta-tools only", num(report.meta_only)),
          stat(`after ${report.searches} searches`, num(report.after_searches))),
        table(["what is sent", "tokens", "of the static list", ""], report.rows.map((r) => h("tr", {},
          h("td", {}, r.label), h("td", { class: "n" }, num(r.tokens)), h("td", { class: "n" }, r.share),
          h("td", { class: "barcell" }, h("div", { class: "bar" }, h("span", { style: { width: `${(100 * r.tokens / top).toFixed(1)}%` } })))))),
        worse ? h("p", { class: "warning" }, "Tool search does not pay off on a catalog this small (below about 15 tools): sending every schema costs less.") : null,
        report.estimate ? h("p", { class: "muted" }, `${format} counts are o200k estimates of the JSON definitions (the provider's tokenizer is not public).`) : null));
  }

  async function viewActivity(p) {
    const errorsOnly = p.get("errors") === "1";
    const data = await api("api/calls");
    const calls = errorsOnly ? data.calls.filter((c) => !c.ok) : data.calls;
    const rows = calls.map((c) => h("tr", { class: c.ok ? "" : "failed" },
      h("td", {}, clock(c.at)), h("td", {}, c.surface), h("td", {}, c.op),
      h("td", {}, c.op === "call" ? link(c.name, { tool: c.name }, "catalog") : c.op === "find" || c.op === "use" ? link(c.name, { q: c.name }, "search") : c.name),
      h("td", {}, c.ok ? badge("ok", "good") : badge(c.code || "error", "bad")),
      h("td", { class: "n" }, fixed(c.ms, 1)),
      h("td", { class: "err" }, c.message || "")));
    return h("section", {},
      h("div", { class: "stats" }, stat("finds and calls answered", num(data.total)), stat("with an error", num(data.errors)), stat("kept here", `last ${num(data.capacity)}`)),
      h("div", { class: "card" }, h("h2", {}, "Recent finds and calls"),
        h("div", { class: "filters" },
          h("label", { class: "check" }, h("input", { type: "checkbox", checked: errorsOnly, onchange: (e) => go({ errors: e.target.checked }) }), "errors only"),
          h("button", { type: "button", onclick: () => route() }, "Refresh")),
        rows.length ? table(["time", "surface", "op", "tool or query", "result", "ms", "message"], rows, "calls")
          : h("p", { class: "muted" }, errorsOnly ? "No errors among the recent finds and calls." : "No finds or calls yet: they appear here as clients use /mcp or /v1."),
        h("p", { class: "muted" }, "Arguments and results are never kept; the list lives in memory and is lost on restart.")));
  }

  // -- who is signed in, and the audit log (admins see everyone's, others their own) ----------
  let me = null;

  async function viewAudit(p) {
    const since = p.get("since") || "1h";
    const data = await api("../v1/audit", { since, principal: p.get("principal") || "" });
    if (data.error) return h("div", { class: "card error-box" }, data.error.message || data.error.code || "The audit log is not available.");
    const rows = (data.records || []).map((r) => h("tr", {},
      h("td", {}, new Date(r.time * 1000).toISOString().replace("T", " ").slice(0, 19)),
      h("td", {}, r.principal), h("td", {}, r.tool),
      h("td", {}, badge(r.decision, r.decision === "allowed" || r.decision === "approved" ? "good" : "bad")),
      h("td", {}, r.outcome), h("td", { class: "n" }, fixed(r.duration_ms, 1)), h("td", {}, r.replica)));
    return h("section", {},
      h("div", { class: "card" }, h("h2", {}, me && me.admin ? "Audit log (everyone)" : "Audit log (your calls)"),
        h("div", { class: "filters" },
          ...["1h", "24h", "7d"].map((s) => h("button", { type: "button", onclick: () => go({ since: s }) }, s))),
        rows.length ? table(["time (UTC)", "principal", "tool", "decision", "outcome", "ms", "replica"], rows, "audit")
          : h("p", { class: "muted" }, `No calls recorded since ${since}.`)));
  }

  function signedIn(who) {
    const el = $("#whoami");
    if (!el) return;
    el.textContent = who && who.kind !== "anonymous" ? `signed in as ${who.principal}${who.admin ? " (admin)" : ""}` : "";
  }

  const RENDER = { servers: viewServers, catalog: viewCatalog, search: viewSearch, call: viewCall, tokens: viewTokens, activity: viewActivity, audit: viewAudit };

  // -- routing, login ------------------------------------------------------------------------------
  function setState(state, view) {
    document.documentElement.dataset.state = state;
    document.documentElement.dataset.view = view || "";
  }

  function showLogin(message) {
    $("#main").replaceChildren();
    $("#login").hidden = false;
    const error = $("#login-error");
    error.hidden = !message;
    error.textContent = message || "";
    $("#token").focus();
    setState("login", "");
  }

  async function route() {
    const p = params();
    if (p.has("token")) { // a link from `toolscout console`: keep the token, drop it from the address bar
      sessionStorage.setItem(TOKEN_KEY, p.get("token"));
      p.delete("token");
      history.replaceState(null, "", location.pathname + location.search + (p.toString() ? "#" + p : ""));
    }
    const view = VIEWS.includes(p.get("view")) ? p.get("view") : "servers";
    for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("active", a.dataset.view === view);
    $("#forget").hidden = !token();
    const mine = ++generation;
    setState("loading", view);
    try {
      if (!caps) caps = await api("../v1/capabilities");
      if (!me) { me = await api("../v1/whoami").catch(() => null); signedIn(me); }
      $("#summary").textContent = `${num(caps.tools)} tools · ${caps.name || "toolscout"} ${caps.version || ""}`;
      const node = await RENDER[view](p);
      if (mine !== generation) return;
      $("#login").hidden = true;
      $("#main").replaceChildren(node);
      setState("ready", view);
    } catch (e) {
      if (mine !== generation) return;
      if (e instanceof Unauthorized) {
        caps = null; me = null; signedIn(null);
        showLogin(token() ? "The gateway refused this token." : "");
        return;
      }
      $("#main").replaceChildren(h("div", { class: "card error-box" }, "Could not load this view: ", String(e && e.message ? e.message : e)));
      setState("error", view);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("#login").addEventListener("submit", (e) => {
      e.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $("#token").value);
      $("#token").value = "";
      route();
    });
    $("#forget").addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); caps = null; me = null; signedIn(null); route(); });
    window.addEventListener("hashchange", route);
    route();
  });
})();
