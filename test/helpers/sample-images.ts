/**
 * @module test/helpers/sample-images
 * Small images in base64 for the tests of image results: one of each raster type shown (their bytes
 * start with their format's signature), a clean SVG, and an HTML page with a script.
 */
export const IMAGES = {
  png: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]).toString(
    'base64',
  ),
  gif: 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
  webp: 'UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==',
  svg: Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1" fill="red"/></svg>',
  ).toString('base64'),
  html: Buffer.from('<html><body><script>alert(document.cookie)</script></body></html>').toString('base64'),
} as const;

/** A result that is one image sentinel. */
export const image = (data: string, mimeType: string): { _mcpImage: { data: string; mimeType: string } } => ({
  _mcpImage: { data, mimeType },
});
