// A small, safe Markdown renderer for an interaction's context. It builds
// DOM nodes and text nodes only, never HTML from a string, so whatever the
// agent sends (tags, scripts, entities) is shown as the characters it is.
//
// Supported: paragraphs (blank line between), line breaks, # headings (as
// bold lines), > quotes, - * + and 1. lists, ``` fenced code, `code`,
// **strong**, *em* and _em_, [links](https://…) and bare http(s) URLs.
// Links open in a new tab with rel="noopener noreferrer" and only for
// http:, https: and mailto:; any other link is shown as its text.

import { h } from "./dom.js";

const FENCE = /^\s{0,3}(```|~~~)/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const ORDERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const BLANK = /^\s*$/;

// renderMarkdown returns a DocumentFragment for src.
export function renderMarkdown(src) {
  const frag = document.createDocumentFragment();
  const lines = String(src ?? "").replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (BLANK.test(line)) {
      i++;
      continue;
    }
    const fence = line.match(FENCE);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i++; // closing fence (or end of text)
      frag.append(h("pre", { class: "md-pre" }, h("code", { text: body.join("\n") })));
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      frag.append(h("p", { class: "md-heading" }, h("strong", {}, inline(heading[1]))));
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && QUOTE.test(lines[i])) body.push(lines[i++].match(QUOTE)[1]);
      frag.append(h("blockquote", { class: "md-quote" }, renderMarkdown(body.join("\n"))));
      continue;
    }
    if (BULLET.test(line) || ORDERED.test(line)) {
      const ordered = !BULLET.test(line);
      const re = ordered ? ORDERED : BULLET;
      const items = [];
      while (i < lines.length && !BLANK.test(lines[i])) {
        const m = lines[i].match(re);
        if (m) items.push([ordered ? m[2] : m[1]]);
        else if (BULLET.test(lines[i]) || ORDERED.test(lines[i])) break; // the other kind of list
        else items[items.length - 1].push(lines[i].trim()); // continuation
        i++;
      }
      const start = ordered ? Number(line.match(ORDERED)[1]) : 1;
      const list = h(ordered ? "ol" : "ul", { class: "md-list", start: ordered && start !== 1 ? start : null });
      for (const item of items) list.append(h("li", {}, inlineLines(item)));
      frag.append(list);
      continue;
    }
    const para = [];
    while (
      i < lines.length && !BLANK.test(lines[i]) && !FENCE.test(lines[i]) &&
      !HEADING.test(lines[i]) && !QUOTE.test(lines[i]) &&
      !(para.length > 0 && (BULLET.test(lines[i]) || ORDERED.test(lines[i])))
    ) {
      para.push(lines[i++].trim());
    }
    frag.append(h("p", {}, inlineLines(para)));
  }
  return frag;
}

// inlineLines renders lines joined by line breaks.
function inlineLines(lines) {
  const out = [];
  lines.forEach((l, n) => {
    if (n > 0) out.push(h("br"));
    out.push(...inline(l));
  });
  return out;
}

// One pass over the text finds the earliest span of any kind.
const INLINE = new RegExp([
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/.source, // 1,2: code
  /\[([^\]\n]+)\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))+)>?(?:\s+"[^"\n]*")?\s*\)/.source, // 3,4: link
  /\*\*(?=\S)([\s\S]*?\S)\*\*/.source, // 5: strong
  /__(?=\S)([\s\S]*?\S)__(?!\w)/.source, // 6: strong
  /\*(?=[^\s*])([\s\S]*?[^\s*])\*/.source, // 7: em
  /(?<![\p{L}\p{N}_])_(?=[^\s_])([\s\S]*?[^\s_])_(?![\p{L}\p{N}_])/.source, // 8: em
  /<((?:https?:\/\/|mailto:)[^\s<>]+)>/.source, // 9: autolink
  /(https?:\/\/[^\s<>]*[^\s<>.,:;"'!?)\]])/.source, // 10: bare URL
].join("|"), "gu");

// inline returns the nodes for one line of inline Markdown.
export function inline(text) {
  const out = [];
  let last = 0;
  // A regexp of its own: inline() recurses, and a shared lastIndex would
  // be reset under the outer loop's feet.
  const re = new RegExp(INLINE);
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    last = re.lastIndex;
    if (m[2] !== undefined) out.push(h("code", { class: "md-code", text: m[2] }));
    else if (m[3] !== undefined) out.push(link(m[4], inline(m[3])));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(h("strong", {}, inline(m[5] ?? m[6])));
    else if (m[7] !== undefined || m[8] !== undefined) out.push(h("em", {}, inline(m[7] ?? m[8])));
    else if (m[9] !== undefined) out.push(link(m[9], [m[9].replace(/^mailto:/, "")]));
    else if (m[10] !== undefined) out.push(link(m[10], [m[10]]));
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// safeURL returns href when it is an absolute http, https or mailto URL.
export function safeURL(href) {
  try {
    const u = new URL(href);
    if (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "mailto:") return u.href;
  } catch {
    // not an absolute URL
  }
  return null;
}

function link(href, children) {
  const url = safeURL(href);
  if (!url) return h("span", { class: "md-unsafe-link" }, children);
  return h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, children);
}
