/**
 * @module host/results/images
 * Finds `{_mcpImage: {data, mimeType}}` sentinels anywhere in a result (also inside a batch) and
 * lifts them out as MCP image blocks, leaving a small reference in the JSON so the batch's text
 * results are kept.
 */
export interface ImageBlock {
  type: 'image';
  data: string;
  mimeType: string;
}

const MIME = /^image\/(png|jpeg|gif|webp|svg\+xml)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function isImageSentinel(v: unknown): v is { _mcpImage: { data: string; mimeType: string } } {
  if (typeof v !== 'object' || v === null || !('_mcpImage' in v)) return false;
  const img = (v as { _mcpImage: unknown })._mcpImage;
  return (
    typeof img === 'object' &&
    img !== null &&
    typeof (img as { data?: unknown }).data === 'string' &&
    typeof (img as { mimeType?: unknown }).mimeType === 'string' &&
    MIME.test((img as { mimeType: string }).mimeType) &&
    BASE64.test((img as { data: string }).data)
  );
}

/** The bytes base64 text holds: 3 for every 4 characters, less one for each `=` of padding. */
function decodedBytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

/** Defines an own data property, so a key like "__proto__" stays a key instead of a prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Returns a copy of `value` with each image sentinel replaced by a reference, and the images. */
export function extractImages(value: unknown): { value: unknown; images: ImageBlock[] } {
  const images: ImageBlock[] = [];
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > 100 || typeof v !== 'object' || v === null) return v;
    if (isImageSentinel(v)) {
      images.push({ type: 'image', data: v._mcpImage.data, mimeType: v._mcpImage.mimeType });
      const ref = { mimeType: v._mcpImage.mimeType, bytes: decodedBytes(v._mcpImage.data), content: `image block ${images.length}` };
      const rest: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) if (k !== '_mcpImage') setOwn(rest, k, walk(x, depth + 1));
      setOwn(rest, '_mcpImage', ref);
      return rest;
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, walk(x, depth + 1));
    return out;
  };
  const out = walk(value, 0);
  return { value: out, images };
}
