/**
 * @module plugins/atlassian-confluence/src/storage-markup
 * Markdown-ish or plain text → Confluence storage format (XHTML). Everything the user wrote is
 * escaped; only the markup recognised here becomes elements.
 */

/** Text safe inside XHTML: no control characters XML forbids, no lone surrogates, & < > " escaped. */
function esc(s: string): string {
  return String(s)
    .toWellFormed()
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

const cdata = (s: string): string =>
  `<![CDATA[${String(s)
    .toWellFormed()
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/\]\]>/g, ']]]]><![CDATA[>')}]]>`;

/** Inline markdown: `code`, [text](url), **bold**, *em* / _em_, bare http(s) links. Escapes first. */
function mdInline(line: string): string {
  const slots: string[] = [];
  // placeholders from the private-use area (removed from the input first) survive esc()
  const keep = (html: string) => `\ue000${slots.push(html) - 1}\ue001`;
  let s = String(line).replace(/[\ue000\ue001]/g, '');
  s = s.replace(/`([^`]+)`/g, (_, code: string) => keep(`<code>${esc(code)}</code>`));
  s = s.replace(/\[([^\]\n]+)\]\(((?:https?:\/\/|mailto:)[^\s)]+)\)/g, (_, text: string, url: string) =>
    keep(`<a href="${esc(url)}">${esc(text)}</a>`),
  );
  s = s.replace(/\bhttps?:\/\/[^\s<>"')\]]+[^\s<>"')\].,;:!?]/g, (url) =>
    keep(`<a href="${esc(url)}">${esc(url)}</a>`),
  );
  s = esc(s);
  s = s.replace(/\*\*(?=\S)([^*]*?\S)\*\*/g, '<strong>$1</strong>');
  s = s.replace(/(^|[^*\w])\*(?=\S)([^*]*?\S)\*(?![*\w])/g, '$1<em>$2</em>');
  s = s.replace(/(^|[^_\w])_(?=\S)([^_]*?\S)_(?![_\w])/g, '$1<em>$2</em>');
  return s.replace(/\ue000(\d+)\ue001/g, (_, i: string) => slots[Number(i)]);
}

const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

type ListItem = { indent: number; ordered: boolean; text: string };

/** List items → nested <ul>/<ol>. */
function mdList(items: ListItem[]): string {
  let html = '';
  const open: Array<{ indent: number; tag: string }> = [];
  const close = () => `</li></${open.pop()?.tag}>`;
  for (const it of items) {
    while (open.length && it.indent < open[open.length - 1].indent) html += close();
    const cur = open[open.length - 1];
    if (!cur || it.indent > cur.indent) {
      const tag = it.ordered ? 'ol' : 'ul';
      html += `<${tag}>`;
      open.push({ indent: it.indent, tag });
    } else {
      html += '</li>';
      if ((cur.tag === 'ol') !== it.ordered) {
        html += `</${open.pop()?.tag}>`;
        const tag = it.ordered ? 'ol' : 'ul';
        html += `<${tag}>`;
        open.push({ indent: it.indent, tag });
      }
    }
    html += `<li>${mdInline(it.text)}`;
  }
  while (open.length) html += close();
  return html;
}

const splitRow = (line: string): string[] =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|'));

function markdownToStorage(md: string): string {
  const lines = String(md).replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    const fenceOpen = /^\s*(```|~~~)\s*([\w+#.-]*)\s*$/.exec(line);
    if (fenceOpen) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !new RegExp(`^\\s*${fenceOpen[1]}\\s*$`).test(lines[i])) body.push(lines[i++]);
      i++;
      const lang = fenceOpen[2]
        ? `<ac:parameter ac:name="language">${esc(fenceOpen[2].toLowerCase())}</ac:parameter>`
        : '';
      out.push(
        `<ac:structured-macro ac:name="code">${lang}<ac:plain-text-body>${cdata(body.join('\n'))}</ac:plain-text-body></ac:structured-macro>`,
      );
      continue;
    }
    const heading = /^\s*(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      out.push(`<h${heading[1].length}>${mdInline(heading[2])}</h${heading[1].length}>`);
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      out.push('<hr />');
      i++;
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*> ?/, ''));
      out.push(`<blockquote>${markdownToStorage(quoted.join('\n'))}</blockquote>`);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const items: ListItem[] = [];
      while (i < lines.length && lines[i].trim()) {
        const m = LIST_ITEM.exec(lines[i]);
        if (m) items.push({ indent: m[1].replace(/\t/g, '    ').length, ordered: /\d/.test(m[2]), text: m[3] });
        else items[items.length - 1].text += ` ${lines[i].trim()}`;
        i++;
      }
      out.push(mdList(items));
      continue;
    }
    if (/^\s*\|/.test(line) && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      const head = splitRow(line);
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && /^\s*\|/.test(lines[i])) rows.push(splitRow(lines[i++]));
      const tr = (cells: string[], tag: string) =>
        `<tr>${cells.map((c) => `<${tag}>${mdInline(c)}</${tag}>`).join('')}</tr>`;
      out.push(`<table><tbody>${tr(head, 'th')}${rows.map((r) => tr(r, 'td')).join('')}</tbody></table>`);
      continue;
    }
    // the first line always belongs to the paragraph, so every pass consumes at least one line
    const para = [lines[i++].trim()];
    while (
      i < lines.length &&
      lines[i].trim() &&
      !/^\s*(```|~~~|#{1,6}\s|>|\|)/.test(lines[i]) &&
      !LIST_ITEM.test(lines[i])
    )
      para.push(lines[i++].trim());
    out.push(`<p>${para.map(mdInline).join('<br />')}</p>`);
  }
  return out.join('');
}

/** Plain text: blank lines separate paragraphs, single newlines become line breaks, nothing else. */
function textToStorage(text: string): string {
  const paragraphs = String(text)
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .filter((p) => p.trim());
  return paragraphs.map((p) => `<p>${p.trim().split('\n').map(esc).join('<br />')}</p>`).join('');
}

export type BodyFormat = 'markdown' | 'text' | 'storage';

/** A body as the tools take it → storage format. */
export function toStorage(body: string, format: BodyFormat): string {
  if (format === 'storage') return String(body);
  if (format === 'text') return textToStorage(body);
  return markdownToStorage(body);
}
