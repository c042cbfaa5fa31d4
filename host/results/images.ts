/**
 * @module host/results/images
 * Images in results: `{_mcpImage: {data, mimeType}}` sentinels anywhere in a result (also inside
 * a batch). `screenImages` runs on every result, whatever the transport: a sentinel declaring an
 * image type that may not be shown (image-check.ts) gets an error in the image's place, so neither
 * an MCP client nor a REST one is handed it. `extractImages` (MCP) then lifts the images left out
 * as image blocks, leaving a small reference in the JSON so the batch's text results are kept.
 */
import { declaresImage, imageProblem, type ImageOptions, type ImageSentinel } from './image-check.js';

export interface ImageBlock {
  type: 'image';
  data: string;
  mimeType: string;
}

/** An image refused in a result, as it is logged. */
export interface RefusedImage {
  mimeType: string;
  why: string;
}

type Sentinel = { _mcpImage: ImageSentinel };

function isImageSentinel(v: unknown): v is Sentinel {
  if (typeof v !== 'object' || v === null || !('_mcpImage' in v)) return false;
  const img = v._mcpImage;
  return (
    typeof img === 'object' &&
    img !== null &&
    typeof (img as { data?: unknown }).data === 'string' &&
    typeof (img as { mimeType?: unknown }).mimeType === 'string'
  );
}

/** The bytes base64 text holds: 3 for every 4 characters, less one for each `=` of padding. */
function decodedBytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** Defines an own data property, so a key like "__proto__" stays a key instead of a prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** What `replace` returns for a sentinel that stays as it is (it is copied like any other value). */
const KEEP = Symbol('keep');

/**
 * A copy of `value` in which the `_mcpImage` of every image sentinel is what `replace` returns for
 * it (or, for KEEP, itself); everything else is copied as it is.
 */
function mapSentinels(value: unknown, replace: (image: ImageSentinel) => unknown): unknown {
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > 100 || typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const replaced = isImageSentinel(v) ? replace(v._mcpImage) : KEEP;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v))
      if (k !== '_mcpImage' || replaced === KEEP) setOwn(out, k, walk(x, depth + 1));
    if (replaced !== KEEP) setOwn(out, '_mcpImage', replaced);
    return out;
  };
  return walk(value, 0);
}

/** `value` with each image that may not be shown replaced by GW_ERR_RESULT_IMAGE_REFUSED in its place, and what was refused. */
export function screenImages(value: unknown, options: ImageOptions): { value: unknown; refused: RefusedImage[] } {
  const refused: RefusedImage[] = [];
  const screened = mapSentinels(value, (image) => {
    const why = declaresImage(image.mimeType) ? imageProblem(image, options) : undefined;
    if (why === undefined) return KEEP;
    refused.push({ mimeType: image.mimeType.slice(0, 100), why });
    return {
      mimeType: image.mimeType.slice(0, 100),
      bytes: decodedBytes(image.data),
      error: `Image refused: ${why}`,
      code: 'GW_ERR_RESULT_IMAGE_REFUSED',
    };
  });
  return { value: refused.length > 0 ? screened : value, refused };
}

/**
 * Returns a copy of `value` with each image sentinel that may be shown replaced by a reference,
 * and the images. A sentinel of another type (not `image/*`) stays in the text as it is.
 */
export function extractImages(value: unknown, options: ImageOptions): { value: unknown; images: ImageBlock[] } {
  const images: ImageBlock[] = [];
  const out = mapSentinels(value, (image) => {
    if (!declaresImage(image.mimeType) || imageProblem(image, options) !== undefined) return KEEP;
    images.push({ type: 'image', data: image.data, mimeType: image.mimeType });
    return { mimeType: image.mimeType, bytes: decodedBytes(image.data), content: `image block ${images.length}` };
  });
  return { value: out, images };
}
