import { h } from "./dom.js";

// The model's Markdown, as elements built with h() (text nodes and attributes only): HTML in the
// text stays text, and only http(s) links become links. Covered: paragraphs, headings, fenced
// code, lists, block quotes, `code`, **bold**, *emphasis*, [links](https://…).

/** Inline spans of one line. */
function inline(text: string): (Node | string)[] {
  const out: (Node | string)[] = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) out.push(h("code", {}, m[1]));
    else if (m[2] !== undefined) out.push(h("strong", {}, m[2]));
    else if (m[3] !== undefined) out.push(h("em", {}, m[3]));
    else out.push(h("a", { href: m[5], target: "_blank", rel: "noopener noreferrer" }, m[4]));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** A message's Markdown as a fragment of block elements. */
export function markdown(text: string): DocumentFragment {
  const root = document.createDocumentFragment();
  const lines = text.split("\n");
  let paragraph: string[] = [];
  let list: HTMLElement | undefined;
  const flush = (): void => {
    if (paragraph.length > 0) root.append(h("p", {}, ...paragraph.flatMap((line, i) => [...(i > 0 ? [h("br")] : []), ...inline(line)])));
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^\s*```/.exec(line);
    if (fence) {
      flush();
      list = undefined;
      const code: string[] = [];
      while (++i < lines.length && !/^\s*```/.test(lines[i]!)) code.push(lines[i]!);
      root.append(h("pre", {}, h("code", {}, code.join("\n"))));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$/.exec(line);
    const quote = /^>\s?(.*)$/.exec(line);
    if (heading) {
      flush();
      list = undefined;
      root.append(h(`h${Math.min(heading[1]!.length + 2, 6)}` as "h3", {}, ...inline(heading[2]!)));
    } else if (item) {
      flush();
      const ordered = item[1] !== undefined;
      if (!list || (list.tagName === "OL") !== ordered) root.append((list = h(ordered ? "ol" : "ul")));
      list.append(h("li", {}, ...inline(item[2]!)));
    } else if (quote) {
      flush();
      list = undefined;
      root.append(h("blockquote", {}, ...inline(quote[1]!)));
    } else if (line.trim() === "") {
      flush();
      list = undefined;
    } else {
      list = undefined;
      paragraph.push(line);
    }
  }
  flush();
  return root;
}
