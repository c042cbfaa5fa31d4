/**
 * @module host/builtins/jots/site-paths
 * The paths of a jot's files: what a stored path may be (a plain relative path, normalised, with
 * clear refusals), how a request's URL path finds one (a folder's address serves its index.html),
 * and the Content-Type a file is served with, chosen by its extension alone (never sniffed).
 *
 * Paths are data in the database, never file-system names, so `..` could not escape anything; it
 * is refused all the same because a URL path holding it is resolved by the browser before it is
 * sent (the file could never be reached) and because it reads as an attempt to leave the site.
 */
import { fail } from '../../../contracts/errors.js';

/** The longest path, in characters. */
export const MAX_PATH_CHARS = 512;
/** The most segments a path may have (folders and the file's name). */
export const MAX_PATH_DEPTH = 16;
const MAX_SEGMENT_CHARS = 255;

/** The file a site's root address serves; every site has one. */
export const INDEX_FILE = 'index.html';

/**
 * Control characters (C0, DEL, C1), the backslash (browsers read it as "/"), and "?" and "#"
 * (a URL path cannot hold them literally: the file could not be reached by a link).
 */
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\\?#]/;

/**
 * A stored file's path, normalised: `./` segments dropped. Refuses (GW_ERR_JOTS_INVALID_PATH, the
 * path in `details.path`) anything that is not a plain relative path.
 */
export function normalisePath(raw: string): string {
  const refuse = (why: string): never => {
    throw fail(
      'GW_ERR_JOTS_INVALID_PATH',
      { message: `file path ${JSON.stringify(raw.slice(0, 100))} ${why}` },
      { details: { path: raw.slice(0, MAX_PATH_CHARS) } },
    );
  };
  if (raw.length === 0) refuse('is empty');
  if (raw.length > MAX_PATH_CHARS) refuse(`is longer than ${MAX_PATH_CHARS} characters`);
  if (FORBIDDEN.test(raw)) refuse('holds a control character, a backslash, "?" or "#"');
  if (raw.startsWith('/')) refuse('is absolute: give it relative to the site root, like "css/site.css"');
  const segments = raw.split('/').filter((s) => s !== '.');
  if (segments.length === 0) refuse('names no file');
  if (segments.some((s) => s === '..')) refuse('holds ".." (a site cannot reach outside itself)');
  if (segments.some((s) => s === '')) refuse('has an empty segment ("//" or a trailing "/"): name a file');
  if (segments.length > MAX_PATH_DEPTH) refuse(`is deeper than ${MAX_PATH_DEPTH} levels`);
  if (segments.some((s) => s.length > MAX_SEGMENT_CHARS)) refuse(`has a name longer than ${MAX_SEGMENT_CHARS}`);
  return segments.join('/');
}

/**
 * The stored path a request's URL path (after the site's prefix, still percent-encoded, without
 * the query) asks for: "" and a path ending in "/" ask for the folder's index.html. Undefined
 * when it cannot name a file (bad encoding, a refused path): the answer is then a plain 404.
 */
export function requestedFile(encoded: string): string | undefined {
  let decoded: string;
  try {
    decoded = encoded.split('/').map(decodeURIComponent).join('/');
  } catch {
    return undefined;
  }
  const asked = decoded === '' || decoded.endsWith('/') ? `${decoded}${INDEX_FILE}` : decoded;
  try {
    return normalisePath(asked);
  } catch {
    return undefined;
  }
}

/** A stored path as a URL path (each segment percent-encoded), for links and redirects. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

const TEXT = '; charset=utf-8';

/** Types by extension (lower case). Anything else is application/octet-stream: downloaded, never rendered. */
const TYPES: Readonly<Record<string, string>> = {
  html: `text/html${TEXT}`,
  htm: `text/html${TEXT}`,
  css: `text/css${TEXT}`,
  js: `text/javascript${TEXT}`,
  mjs: `text/javascript${TEXT}`,
  json: `application/json${TEXT}`,
  map: `application/json${TEXT}`,
  txt: `text/plain${TEXT}`,
  md: `text/markdown${TEXT}`,
  csv: `text/csv${TEXT}`,
  xml: `application/xml${TEXT}`,
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  wasm: 'application/wasm',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  webm: 'video/webm',
  pdf: 'application/pdf',
};

/** The Content-Type a file is served with, from its name's extension. */
export function contentTypeOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  return TYPES[ext] ?? 'application/octet-stream';
}
