/**
 * @module host/results/svg-check
 * Whether an SVG holds active content: anything that runs script, or makes a client showing it
 * fetch something or leave the document. Such an SVG is refused, never cleaned, so what a client
 * is shown is exactly what the plugin returned. The document is read as XML, strictly, token by
 * token, and every element and attribute is checked wherever it sits. Markup this reading cannot
 * account for is refused too, as is a `<` in a comment or CDATA section: an HTML parser showing
 * the SVG inline may read those otherwise (`<!-->` ends a comment there) and find elements this
 * check never saw; text and attribute values cannot hold a `<` in XML.
 */

const NAME = '[A-Za-z_][\\w.:-]*';

/** One token of the document, read where the last one ended. */
const TOKEN = new RegExp(
  [
    '<!--(?<comment>[\\s\\S]*?)-->',
    '<!\\[CDATA\\[(?<cdata>[\\s\\S]*?)\\]\\]>',
    `<(?<open>${NAME})(?<attributes>(?:\\s+${NAME}\\s*=\\s*(?:"[^"<]*"|'[^'<]*'))*)\\s*(?<selfClosing>/?)>`,
    `</(?<close>${NAME})\\s*>`,
    '(?<text>[^<]+)',
  ].join('|'),
  'y',
);
const ATTRIBUTE = new RegExp(`\\s+(${NAME})\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'g');
const XML_DECLARATION = /^<\?xml\s[^<>?]*\?>/;

/** Elements that run script, embed another document or load one. */
const ACTIVE_ELEMENTS = new Set([
  'script',
  'foreignobject',
  'handler',
  'listener',
  'iframe',
  'frame',
  'frameset',
  'embed',
  'object',
  'applet',
  'base',
  'link',
  'meta',
  'portal',
]);
/** Attributes holding a URL: only a reference inside the document (`#id`) is accepted. */
const REFERENCE_ATTRIBUTES = new Set(['href', 'src', 'srcset', 'action', 'formaction', 'poster', 'background', 'base']);
const ACTIVE_CSS = /@import|@font-face|expression\s*\(|behavior\s*:|-moz-binding|image-set\s*\(|\bsrc\s*\(/i;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

const localName = (name: string): string => name.slice(name.lastIndexOf(':') + 1).toLowerCase();

/**
 * The text with its character references and XML's five predefined entities decoded; undefined
 * when it holds any other `&` (an entity only a DTD could define, or one of HTML's hundreds).
 */
function decodeReferences(text: string): string | undefined {
  let unknown = false;
  const decoded = text.replace(
    /&(?:#x([0-9a-f]{1,6})|#([0-9]{1,7})|(lt|gt|amp|quot|apos));|&/gi,
    (m, hex?: string, dec?: string, named?: string) => {
      const code = hex !== undefined ? parseInt(hex, 16) : dec !== undefined ? parseInt(dec, 10) : undefined;
      if (code !== undefined && code <= 0x10ffff) return String.fromCodePoint(code);
      if (named !== undefined) return PREDEFINED[named.toLowerCase()] ?? m;
      unknown = true;
      return m;
    },
  );
  return unknown ? undefined : decoded;
}

function cssProblem(css: string, where: string): string | undefined {
  const plain = css.replace(/\/\*[\s\S]*?\*\//g, '');
  if (plain.includes('\\')) return `a CSS escape (\\) in ${where}`;
  const active = ACTIVE_CSS.exec(plain);
  if (active) return `CSS that loads or runs something (${active[0]}) in ${where}`;
  for (const m of plain.matchAll(/url\s*\(\s*['"]?\s*([^'")\s]*)/gi))
    if (!m[1]?.startsWith('#')) return `a CSS url() to outside the document in ${where}`;
  return undefined;
}

function attributeProblem(name: string, raw: string): string | undefined {
  const local = localName(name);
  const value = decodeReferences(raw);
  if (value === undefined) return `an entity reference in the attribute ${name}`;
  if (local.startsWith('on')) return `an event handler attribute (${name})`;
  if (/(?:javascript|vbscript|data):/.test(value.replace(/[\s\u0000-\u001f]/g, '').toLowerCase()))
    return `a javascript:, vbscript: or data: URL in the attribute ${name}`;
  if (REFERENCE_ATTRIBUTES.has(local) && !value.trim().startsWith('#'))
    return `a reference to outside the document (${name}="${value.slice(0, 60)}")`;
  if (local === 'attributename' && /^(?:[\w.-]+:)?(?:href|src)$|^on/i.test(value.trim()))
    return `an animation of the attribute ${value.trim().slice(0, 60)}`;
  return cssProblem(value, `the attribute ${name}`);
}

function elementProblem(name: string, attributes: string): string | undefined {
  if (ACTIVE_ELEMENTS.has(localName(name))) return `a <${name}> element`;
  for (const m of attributes.matchAll(ATTRIBUTE)) {
    const problem = attributeProblem(m[1] as string, m[2] ?? m[3] ?? '');
    if (problem) return problem;
  }
  return undefined;
}

/** Why the markup at `at` cannot be read, in words an author recognises. */
function unreadable(svg: string, at: number): string {
  const rest = svg.slice(at, at + 40);
  if (/^<!(?:DOCTYPE|ENTITY)/i.test(rest)) return 'a DOCTYPE or entity declaration';
  if (rest.startsWith('<?')) return 'a processing instruction (<?…?>)';
  return `markup that cannot be read as plain XML at character ${at} ("${rest.replace(/\s+/g, ' ')}…"): unquoted attribute values, a < inside an attribute value and unterminated comments are refused`;
}

/** The problem of a comment or CDATA section an HTML parser could read otherwise, if any. */
function sectionProblem(comment: string | undefined, cdata: string | undefined): string | undefined {
  if (
    comment !== undefined &&
    (comment.startsWith('>') || comment.startsWith('->') || comment.includes('--') || comment.includes('<'))
  )
    return 'a comment holding <, -- or starting with >';
  if (cdata?.includes('<')) return 'a CDATA section holding <';
  return undefined;
}

/** What the reading has seen so far: the root element, and the text of the <style> elements it is inside. */
interface Reading {
  root: string | undefined;
  styleDepth: number;
  /** the style's text so far: CSS is checked whole when the style ends (a comment or element inside may split an `@import`) */
  css: string;
}

function tokenProblem(groups: Record<string, string | undefined>, reading: Reading): string | undefined {
  const { comment, cdata, open, attributes, selfClosing, close, text } = groups;
  if (open !== undefined) {
    reading.root ??= localName(open);
    if (reading.root !== 'svg') return `not an SVG document: its root element is <${open}>`;
    if (localName(open) === 'style' && selfClosing === '') reading.styleDepth++;
    return elementProblem(open, attributes ?? '');
  }
  if (close !== undefined) {
    if (localName(close) !== 'style' || reading.styleDepth === 0) return undefined;
    reading.styleDepth--;
    return reading.styleDepth === 0 ? styleEnded(reading) : undefined;
  }
  const problem = sectionProblem(comment, cdata);
  if (problem || reading.styleDepth === 0 || comment !== undefined) return problem;
  const css = cdata ?? decodeReferences(text ?? '');
  if (css === undefined) return 'an entity reference in a <style> element';
  reading.css += css;
  return undefined;
}

function styleEnded(reading: Reading): string | undefined {
  const problem = cssProblem(reading.css, 'a <style> element');
  reading.css = '';
  return problem;
}

/**
 * Why the SVG document (its text, without a byte-order mark) may not be shown, or undefined when it
 * holds no active content.
 */
export function svgProblem(svg: string): string | undefined {
  const reading: Reading = { root: undefined, styleDepth: 0, css: '' };
  let at = XML_DECLARATION.exec(svg)?.[0].length ?? 0;
  while (at < svg.length) {
    TOKEN.lastIndex = at;
    const groups = TOKEN.exec(svg)?.groups;
    if (!groups) return unreadable(svg, at);
    at = TOKEN.lastIndex;
    const problem = tokenProblem(groups, reading);
    if (problem) return problem;
  }
  if (reading.root === undefined) return 'not an SVG document: it has no root element';
  return reading.styleDepth > 0 ? styleEnded(reading) : undefined;
}
