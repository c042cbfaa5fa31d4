/**
 * @module host/results/image-check
 * Whether an image a handler returned (`{_mcpImage: {data, mimeType}}`) may be shown to a client.
 * Only raster types are shown, and only when their bytes are what the type says: a client that
 * sniffs the bytes (or saves them and opens the file) must not find an HTML or SVG document under
 * a PNG label. SVG is a document that can carry script: it is refused unless the policy allows
 * it (`images.allowSvg`), and then only when it holds no active content (svg-check.ts).
 */
import { svgProblem } from './svg-check.js';

/** The types a client is handed as an image, each with the signature its bytes start with. */
const RASTER_SIGNATURES: Record<string, { name: string; signature: string; matches: (head: Buffer) => boolean }> = {
  'image/png': {
    name: 'PNG',
    signature: '89 50 4E 47 0D 0A 1A 0A',
    matches: (h) => h.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  'image/jpeg': {
    name: 'JPEG',
    signature: 'FF D8 FF',
    matches: (h) => h[0] === 0xff && h[1] === 0xd8 && h[2] === 0xff,
  },
  'image/gif': {
    name: 'GIF',
    signature: '"GIF87a" or "GIF89a"',
    matches: (h) => ['GIF87a', 'GIF89a'].includes(h.subarray(0, 6).toString('latin1')),
  },
  'image/webp': {
    name: 'WebP',
    signature: '"RIFF", 4 bytes of size, "WEBP"',
    matches: (h) => h.subarray(0, 4).toString('latin1') === 'RIFF' && h.subarray(8, 12).toString('latin1') === 'WEBP',
  },
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const SHOWN = 'image/png, image/jpeg, image/gif or image/webp';

/** The policy's `images`. */
export interface ImageOptions {
  allowSvg: boolean;
}

/** An image a handler returned, as the sentinel holds it. */
export interface ImageSentinel {
  data: string;
  mimeType: string;
}

/** Whether `mimeType` declares an image: such a sentinel is shown or refused, never left in the text. */
export const declaresImage = (mimeType: string): boolean => /^image\//i.test(mimeType);

/** Why the image may not be shown (a sentence the model reads, saying what to return instead), or undefined when it may. */
export function imageProblem(image: ImageSentinel, options: ImageOptions): string | undefined {
  const svg = image.mimeType === 'image/svg+xml';
  const raster = RASTER_SIGNATURES[image.mimeType];
  if (svg && !options.allowSvg)
    return `SVG images are not shown on this server: an SVG is a document that can carry script. Return the image as ${SHOWN} instead (an operator may allow SVG without active content: the policy's images.allowSvg).`;
  if (!svg && !raster)
    return `"${image.mimeType.slice(0, 100)}" is not an image type clients are handed; return the image as ${SHOWN}, with that mimeType.`;
  if (!BASE64.test(image.data) || image.data.length % 4 === 1)
    return 'the image data is not plain base64 (no line breaks, spaces or "data:" prefix): return (await res.bytes()).toBase64() of the image\'s bytes.';
  return raster ? signatureProblem(raster, image.data) : activeContent(image.data);
}

function signatureProblem(
  raster: { name: string; signature: string; matches: (head: Buffer) => boolean },
  data: string,
): string | undefined {
  if (raster.matches(Buffer.from(data.slice(0, 16), 'base64'))) return undefined;
  return `the image data is not a ${raster.name} image: its bytes do not start with ${raster.name}'s signature (${raster.signature}). Return the image's own bytes, with the mimeType of its real format (${SHOWN}).`;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Why an SVG's bytes may not be shown: not UTF-8 text, or active content in it. */
function activeContent(data: string): string | undefined {
  let text: string;
  try {
    text = UTF8.decode(Buffer.from(data, 'base64'));
  } catch {
    return 'the image data is not an SVG document: its bytes are not UTF-8 text.';
  }
  const problem = svgProblem(text);
  if (problem === undefined) return undefined;
  return `the SVG holds active content or markup that cannot be checked (${problem}); SVGs with scripts, event handlers, foreignObject, DOCTYPEs, links or references outside the document, or CSS that loads anything are refused. Return it without that, or as ${SHOWN}.`;
}
