/**
 * @module test/host/results/result-images.unit.test
 * Image sentinels in results: PNG, JPEG, GIF and WebP whose bytes start with their format's
 * signature are shown (lifted as image blocks over MCP); SVG, other image types, data that is not
 * base64 and bytes that are not what their type says are refused with GW_ERR_RESULT_IMAGE_REFUSED
 * in the image's place, wherever the sentinel sits; sentinels of other types stay as they are.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractImages, screenImages } from '../../../host/results/images.js';
import { image, IMAGES } from '../../helpers/sample-images.js';

/** the default policy: no SVG */
const NO_SVG = { allowSvg: false };

describe('image sentinels', () => {
  const shown: [string, string, string][] = [
    ['a PNG', IMAGES.png, 'image/png'],
    ['a JPEG', IMAGES.jpeg, 'image/jpeg'],
    ['a GIF', IMAGES.gif, 'image/gif'],
    ['a WebP', IMAGES.webp, 'image/webp'],
    ['a PNG without padding', IMAGES.png.replace(/=+$/, ''), 'image/png'],
  ];
  for (const [name, data, mimeType] of shown)
    it(`shows ${name}`, () => {
      const result = { label: name, ...image(data, mimeType) };
      assert.deepEqual(screenImages(result, NO_SVG), { value: result, refused: [] });
      const { value, images } = extractImages(result, NO_SVG);
      assert.deepEqual(images, [{ type: 'image', data, mimeType }]);
      assert.deepEqual(value, {
        label: name,
        _mcpImage: { mimeType, bytes: Buffer.from(data, 'base64').length, content: 'image block 1' },
      });
    });

  const refused: [string, string, string, RegExp][] = [
    [
      'an SVG',
      IMAGES.svg,
      'image/svg+xml',
      /^Image refused: SVG images are not shown on this server: an SVG is a document that can carry script\. Return the image as image\/png, image\/jpeg, image\/gif or image\/webp instead \(an operator may allow SVG without active content: the policy's images\.allowSvg\)\.$/,
    ],
    [
      'HTML labelled PNG',
      IMAGES.html,
      'image/png',
      /not a PNG image: its bytes do not start with PNG's signature \(89 50 4E 47 0D 0A 1A 0A\)\. Return the image's own bytes, with the mimeType of its real format/,
    ],
    ['a JPEG labelled PNG', IMAGES.jpeg, 'image/png', /not a PNG image/],
    ['a PNG labelled GIF', IMAGES.png, 'image/gif', /not a GIF image: .*"GIF87a" or "GIF89a"/],
    ['a PNG labelled WebP', IMAGES.png, 'image/webp', /not a WebP image/],
    ['an SVG labelled JPEG', IMAGES.svg, 'image/jpeg', /not a JPEG image: .*\(FF D8 FF\)/],
    [
      'a BMP',
      Buffer.from('BM\0\0\0\0').toString('base64'),
      'image/bmp',
      /^Image refused: "image\/bmp" is not an image type clients are handed/,
    ],
    ['a PNG declared in capitals', IMAGES.png, 'IMAGE/PNG', /"IMAGE\/PNG" is not an image type/],
    [
      'base64 with a line break',
      `${IMAGES.png.slice(0, 20)}\n${IMAGES.png.slice(20)}`,
      'image/png',
      /not plain base64 \(no line breaks, spaces or "data:" prefix\)/,
    ],
    ['a data: URL', `data:image/png;base64,${IMAGES.png}`, 'image/png', /not plain base64/],
    ['empty data', '', 'image/png', /not a PNG image/],
  ];
  for (const [name, data, mimeType, why] of refused)
    it(`refuses ${name} in the image's place, keeping the rest`, () => {
      const result = { before: 1, ...image(data, mimeType), after: [2] };
      const { value, refused: list } = screenImages(result, NO_SVG);
      assert.deepEqual(Object.keys(value as object), ['before', 'after', '_mcpImage']);
      const stand = (value as { _mcpImage: Record<string, unknown> })._mcpImage;
      assert.deepEqual(Object.keys(stand), ['mimeType', 'bytes', 'error', 'code']);
      assert.equal(stand['code'], 'GW_ERR_RESULT_IMAGE_REFUSED');
      assert.match(String(stand['error']), why);
      assert.equal(list.length, 1);
      assert.deepEqual(extractImages(result, NO_SVG).images, [], 'never lifted, even unscreened');
    });

  it('leaves a sentinel of another type as it is, and screens the sentinels nested inside it', () => {
    const result = {
      _mcpImage: { data: 'not base64 !!!', mimeType: 'text/html', inner: image(IMAGES.svg, 'image/svg+xml') },
    };
    const { value, refused: list } = screenImages(result, NO_SVG);
    assert.equal(list.length, 1);
    assert.equal(
      (value as { _mcpImage: { data: string; inner: { _mcpImage: { code: string } } } })._mcpImage.data,
      'not base64 !!!',
    );
    assert.equal(
      (value as { _mcpImage: { inner: { _mcpImage: { code: string } } } })._mcpImage.inner._mcpImage.code,
      'GW_ERR_RESULT_IMAGE_REFUSED',
    );
  });

  it('screens every sentinel of a batch, in arrays and under prototype-named keys, and lifts the rest in order', () => {
    const items = [
      { result: [image(IMAGES.png, 'image/png'), image(IMAGES.html, 'image/gif')] },
      { result: JSON.parse(`{"__proto__": ${JSON.stringify(image(IMAGES.svg, 'image/svg+xml'))}}`) },
      { error: 'x', code: 'GW_ERR_SANDBOX_HANDLER_THREW' },
    ];
    const { value, refused: list } = screenImages(items, NO_SVG);
    assert.deepEqual(
      list.map((r) => r.mimeType),
      ['image/gif', 'image/svg+xml'],
    );
    assert.equal(
      Object.getPrototypeOf((value as Array<{ result: object }>)[1]?.result),
      Object.prototype,
      'a "__proto__" key stays a key',
    );
    const { images } = extractImages(value, NO_SVG);
    assert.deepEqual(
      images.map((i) => i.mimeType),
      ['image/png'],
    );
    assert.deepEqual((value as unknown[])[2], items[2]);
  });
});
