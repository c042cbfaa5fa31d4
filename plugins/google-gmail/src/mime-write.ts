/**
 * @module plugins/google-gmail/src/mime-write
 * Writing the message Gmail sends or saves: RFC 2822 headers (non-ASCII text as RFC 2047 encoded
 * words, folded; CR, LF and control characters refused, so no value can inject a header), a UTF-8
 * plain-text body in base64, and the whole as base64url `raw`. And the addresses it goes to: an
 * agent's "a@b.c" or "Name <a@b.c>", or a mailbox parsed from the message a reply answers, without
 * being fooled by what its display names decode to.
 */
import { toBase64, toBase64Url, utf8 } from 'workbench/plugin-sdk';
import { decodeWords } from './mime-read.js';

const isAscii = (s: string): boolean => /^[\x20-\x7e]*$/.test(s);

/** Throws when a header value holds a line break or another control character (`name` words the error). */
function refuseLineBreaks(name: string, value: string): void {
  if (/[\r\n]/.test(value))
    throw new Error(
      `${name} contains a line break (CR or LF): header values must be one line (a line break would inject headers). Remove it and retry.`,
    );
  if (/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(value))
    throw new Error(`${name} contains a control character: remove it and retry.`);
}

/** =?UTF-8?B?…?= words of at most 75 characters (45 UTF-8 bytes each, never splitting a character), folded. */
function encodeWords(text: string): string {
  const words: string[] = [];
  let cur = '';
  for (const ch of text) {
    if (utf8(cur + ch).length > 45) {
      words.push(cur);
      cur = '';
    }
    cur += ch;
  }
  if (cur) words.push(cur);
  return words.map((w) => `=?UTF-8?B?${toBase64(utf8(w))}?=`).join('\r\n ');
}

/** A mailbox of To, Cc or Bcc: as the header has it, and the bare address. */
type Mailbox = { header: string; address: string };

const ADDR = /^[^\s<>()[\]\\,;:"@]+@[^\s<>()[\]\\,;:"@]+\.[^\s<>()[\]\\,;:"@]+$/;

/** An address a reply may go to: an email address without control characters. */
export const usableAddress = (a: string): boolean => ADDR.test(a) && !/[\x00-\x1f\x7f]/.test(a);

/** A mailbox parsed from a header; the name decoded, for display only. */
export type Parsed = { name: string; address: string };

/**
 * An address-list header value (To, From, Reply-To) → [{ name, address }], parsed before anything
 * is decoded: quoted strings, comments, angle brackets and RFC 2047 encoded words are tokens, so a
 * comma or an angle bracket inside a (decoded) display name never makes another address. Groups
 * (`Team: a@x.org, b@y.org;`) give their members. The name is decoded afterwards, for display only.
 */
export function parseAddressList(s: string): Parsed[] {
  const out: Parsed[] = [];
  const word = /=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=/y;
  let phrase = '';
  let bare = '';
  let angle: string | null = null;
  const flush = () => {
    if (angle !== null) {
      const address = angle.replace(/^(@[^:]*:)/, '').replace(/\s+/g, '');
      if (address) out.push({ name: decodeWords(phrase.replace(/\s+/g, ' ').trim()), address });
    } else if (bare.trim()) out.push({ name: '', address: bare.replace(/\s+/g, '') });
    phrase = '';
    bare = '';
    angle = null;
  };
  for (let i = 0; i < s.length;) {
    const ch = s[i];
    if (ch === '"') {
      let j = i + 1;
      let text = '';
      while (j < s.length && s[j] !== '"') {
        if (s[j] === '\\' && j + 1 < s.length) j++;
        text += s[j++];
      }
      phrase += text;
      bare += s.slice(i, j + 1);
      i = j + 1;
    } else if (ch === '(') {
      let depth = 0;
      let j = i;
      for (; j < s.length; j++) {
        if (s[j] === '\\') j++;
        else if (s[j] === '(') depth++;
        else if (s[j] === ')' && --depth === 0) break;
      }
      phrase += ' ';
      i = j + 1;
    } else if (ch === '<') {
      const end = s.indexOf('>', i + 1);
      const stop = end < 0 ? s.length : end;
      angle = (angle ?? '') + s.slice(i + 1, stop);
      i = stop + 1;
    } else if (ch === ',' || ch === ';') {
      flush();
      i++;
    } else if (ch === ':' && angle === null) {
      // a group's name: what came before is not an address
      phrase = '';
      bare = '';
      i++;
    } else {
      word.lastIndex = i;
      const m = ch === '=' ? word.exec(s) : null;
      const piece = m ? m[0] : ch;
      phrase += piece;
      bare += piece;
      i += piece.length;
    }
  }
  flush();
  return out;
}

/** A mailbox in header form: the name encoded when it is not ASCII, quoted when it holds specials. */
function mailboxHeader(name: string, addr: string): string {
  if (!name) return addr;
  if (!isAscii(name)) return `${encodeWords(name)} <${addr}>`;
  const shown = /[()<>[\]:;@\\,."]|=\?/.test(name) ? `"${name.replace(/["\\]/g, '\\$&')}"` : name;
  return `${shown} <${addr}>`;
}

/**
 * An entry of to/cc/bcc → { header, address }. An agent's entry is "a@b.c" or "Name <a@b.c>"; an
 * entry taken from the original message (a reply's default) is { name, address } already parsed
 * (parseAddressList), whose name is only ever written back encoded or quoted.
 */
export function formatAddress(field: string, entry: string | Parsed): Mailbox {
  if (typeof entry === 'object') {
    return {
      header: mailboxHeader(entry.name.replace(/[\x00-\x1f\x7f]+/g, ' ').trim(), entry.address),
      address: entry.address,
    };
  }
  refuseLineBreaks(field, entry);
  const s = entry.trim();
  if (ADDR.test(s)) return { header: s, address: s };
  const m = /^(.*?)\s*<([^<>]+)>$/.exec(s);
  if (!m || !ADDR.test(m[2].trim()))
    throw new Error(
      `${field}: "${entry}" is not an email address; give one address per entry, as "name@example.com" or "Name <name@example.com>".`,
    );
  const addr = m[2].trim();
  return {
    header: mailboxHeader(
      m[1]
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .replace(/\\(.)/g, '$1'),
      addr,
    ),
    address: addr,
  };
}

/** An email to write; a reply has In-Reply-To (the original's Message-ID) and References. */
type Outgoing = {
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  subject: string;
  body: string;
  inReplyTo?: string | undefined;
  references?: string[] | undefined;
};

/** The RFC 2822 message: headers (to, cc, bcc already formatted), then the UTF-8 text body in base64 lines of 76. */
function buildMessage({ to, cc, bcc, subject, body, inReplyTo, references }: Outgoing): string {
  refuseLineBreaks('subject', subject);
  const lines: string[] = [];
  const list = (name: string, boxes: Mailbox[]) => {
    if (boxes.length) lines.push(`${name}: ${boxes.map((a) => a.header).join(',\r\n ')}`);
  };
  list('To', to);
  list('Cc', cc);
  list('Bcc', bcc);
  lines.push(`Subject: ${isAscii(subject) ? subject : encodeWords(subject)}`);
  if (inReplyTo) {
    refuseLineBreaks('In-Reply-To', inReplyTo);
    lines.push(`In-Reply-To: ${inReplyTo}`);
  }
  if (references && references.length) {
    for (const id of references) refuseLineBreaks('References', id);
    lines.push(`References: ${references.join('\r\n ')}`);
  }
  lines.push('MIME-Version: 1.0', 'Content-Type: text/plain; charset="UTF-8"', 'Content-Transfer-Encoding: base64');
  const text = body.replace(/\r\n?/g, '\n').replace(/\n/g, '\r\n');
  const wrapped = toBase64(utf8(text)).match(/.{1,76}/g) || [];
  return `${lines.join('\r\n')}\r\n\r\n${wrapped.join('\r\n')}\r\n`;
}

/** The message as Gmail's `raw`: base64url without padding. */
export const toRaw = (message: Outgoing): string => toBase64Url(utf8(buildMessage(message)));
