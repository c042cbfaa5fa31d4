/**
 * @module test/e2e/result-images.test
 * Images in results through a real gateway and a real MCP client over HTTP: PNG, JPEG, GIF and
 * WebP are image blocks; an SVG and bytes that are not what their type says (HTML labelled PNG,
 * also as a loopback upstream serves them to a plugin that hands them on) get
 * GW_ERR_RESULT_IMAGE_REFUSED in their place while the batch's other results are kept. REST
 * hands the same results (accepted images as sentinels, refused ones as the same error), and a
 * result too large for the answer keeps the error in its continuation, never the image. Where the
 * policy allows SVG (`images.allowSvg`), a clean SVG is an image block and one with script,
 * event handlers or external references is refused.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { image, IMAGES } from '../helpers/sample-images.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

const PLUGIN_DIRS = [
  path.join(PACKAGE_ROOT, 'test', 'fixtures', 'image-plugins'),
  path.join(PACKAGE_ROOT, 'test', 'fixtures', 'binary-plugins'),
];

type Content = { type: string; text?: string; data?: string; mimeType?: string };
// Tests read arbitrary result shapes.
type Json = any;

const returning = (result: unknown): { tool: string; args: { result: unknown } } => ({
  tool: 'images_return',
  args: { result },
});

/** a batch of each kind: four shown, two refused, one without an image */
const BATCH = [
  returning({ label: 'png', ...image(IMAGES.png, 'image/png') }),
  returning({ label: 'jpeg', ...image(IMAGES.jpeg, 'image/jpeg') }),
  returning({ label: 'gif', ...image(IMAGES.gif, 'image/gif') }),
  returning({ label: 'webp', ...image(IMAGES.webp, 'image/webp') }),
  returning({ label: 'svg', ...image(IMAGES.svg, 'image/svg+xml') }),
  returning({ label: 'html as png', ...image(IMAGES.html, 'image/png') }),
  returning({ text: 'beside' }),
];

describe('images in results', () => {
  let gw: TestGateway;
  let up: Upstream;
  let client: Client;

  before(async () => {
    up = await startUpstream((req) => {
      if (req.path === '/evil.svg')
        return {
          headers: { 'content-type': 'image/svg+xml' },
          body: '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>',
        };
      if (req.path === '/fake.png')
        return { headers: { 'content-type': 'image/png' }, body: Buffer.from(IMAGES.html, 'base64') };
      return { status: 404 };
    });
    gw = await startGateway({
      plugins: [],
      pluginDirs: PLUGIN_DIRS,
      upstreams: { 'https://files.fixture.test': up.origin },
    });
    client = await gw.mcpClient();
  });
  after(async () => {
    await client?.close();
    await gw?.close();
    await up?.close();
  });

  async function execute(executions: unknown[]): Promise<{ content: Content[]; isError?: boolean; results: Json[] }> {
    const res = (await client.callTool({ name: 'execute_tools', arguments: { executions } })) as {
      content: Content[];
      isError?: boolean;
    };
    const text = res.content.find((c) => c.type === 'text')?.text ?? '{}';
    return { ...res, results: (JSON.parse(text) as { results: Json[] }).results };
  }

  function assertRefused(stand: Json, mimeType: string, why: RegExp): void {
    assert.deepEqual(Object.keys(stand ?? {}), ['mimeType', 'bytes', 'error', 'code'], JSON.stringify(stand));
    assert.equal(stand.mimeType, mimeType);
    assert.equal(stand.code, 'GW_ERR_RESULT_IMAGE_REFUSED');
    assert.match(stand.error, why);
  }

  it('hands an MCP client the raster images as image blocks and an error in place of an SVG or mislabelled bytes, keeping the batch', async () => {
    const { content, isError, results } = await execute(BATCH);
    assert.equal(isError, undefined);
    assert.deepEqual(
      content.filter((c) => c.type === 'image'),
      [
        { type: 'image', data: IMAGES.png, mimeType: 'image/png' },
        { type: 'image', data: IMAGES.jpeg, mimeType: 'image/jpeg' },
        { type: 'image', data: IMAGES.gif, mimeType: 'image/gif' },
        { type: 'image', data: IMAGES.webp, mimeType: 'image/webp' },
      ],
    );
    assert.deepEqual(results[0].result._mcpImage, {
      mimeType: 'image/png',
      bytes: Buffer.from(IMAGES.png, 'base64').length,
      content: 'image block 1',
    });
    assert.equal(results[4].result.label, 'svg');
    assertRefused(
      results[4].result._mcpImage,
      'image/svg+xml',
      /SVG images are not shown on this server: an SVG is a document that can carry script/,
    );
    assert.equal(results[5].result.label, 'html as png');
    assertRefused(
      results[5].result._mcpImage,
      'image/png',
      /not a PNG image: its bytes do not start with PNG's signature/,
    );
    assert.deepEqual(results[6], { result: { text: 'beside' } });
  });

  it('refuses the SVG and the HTML an upstream serves as images, when a plugin hands them on', async () => {
    const { content, results } = await execute([
      { tool: 'files_image', args: { path: '/evil.svg' } },
      { tool: 'files_image', args: { path: '/fake.png' } },
    ]);
    assert.deepEqual(
      content.filter((c) => c.type === 'image'),
      [],
    );
    assertRefused(results[0].result._mcpImage, 'image/svg+xml', /SVG images are not shown on this server/);
    assertRefused(results[1].result._mcpImage, 'image/png', /not a PNG image/);
    assert.doesNotMatch(JSON.stringify(content), /PHN2Zy|alert/, 'none of their bytes reach the client');
  });

  it('hands a REST client the same results: images shown over MCP as sentinels, refused ones as the same error', async () => {
    const { status, json } = await gw.rest('fixture-images', { executions: BATCH });
    assert.equal(status, 200);
    const mcp = (await execute(BATCH)).results;
    for (const i of [0, 1, 2, 3])
      assert.deepEqual(json.results[i], BATCH[i]?.args, `item ${i} is the sentinel as the handler returned it`);
    for (const i of [4, 5, 6]) assert.deepEqual(json.results[i], mcp[i], `item ${i} as over MCP`);
  });

  it('keeps the error, not the image, in the continuation of a result too large for the answer', async () => {
    const big = {
      text: 'x'.repeat(100_000),
      picture: image(IMAGES.png, 'image/png'),
      drawing: image(IMAGES.svg, 'image/svg+xml'),
    };
    const { content, results } = await execute([returning(big), returning({ text: 'small' })]);
    assert.deepEqual(
      content.filter((c) => c.type === 'image').map((c) => c.mimeType),
      ['image/png'],
    );
    const stub = results[0].result;
    assert.equal(stub.truncated, true);
    assert.deepEqual(results[1], { result: { text: 'small' } });
    let joined = '';
    for (let part = 1; part <= stub.totalParts; part++) {
      const page = (await client.callTool({
        name: 'continue_tool_result',
        arguments: { continuationId: stub.continuationId, part },
      })) as { content: Content[] };
      joined += JSON.parse(page.content[0]?.text ?? '{}').chunk;
    }
    const full = JSON.parse(joined);
    assert.deepEqual(full.picture._mcpImage, {
      mimeType: 'image/png',
      bytes: Buffer.from(IMAGES.png, 'base64').length,
      content: 'image block 1',
    });
    assertRefused(full.drawing._mcpImage, 'image/svg+xml', /SVG images are not shown on this server/);
    assert.ok(!joined.includes(IMAGES.svg.slice(0, 40)), 'the SVG is not stored');
  });
});

describe('SVG images where the policy allows them', () => {
  let gw: TestGateway;
  let up: Upstream;
  let client: Client;
  const CLEAN = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs><rect width="4" height="4" fill="url(#g)"/></svg>',
  ).toString('base64');
  const ACTIVE = {
    script: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>',
    handler: '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
    external: '<svg xmlns="http://www.w3.org/2000/svg"><image href="https://tracker.example/pixel.png"/></svg>',
  };

  before(async () => {
    up = await startUpstream((req) =>
      req.path === '/evil.svg'
        ? { headers: { 'content-type': 'image/svg+xml' }, body: ACTIVE.script }
        : { status: 404 },
    );
    gw = await startGateway({
      plugins: [],
      pluginDirs: PLUGIN_DIRS,
      upstreams: { 'https://files.fixture.test': up.origin },
      policy: { images: { allowSvg: true } },
    });
    client = await gw.mcpClient();
  });
  after(async () => {
    await client?.close();
    await gw?.close();
    await up?.close();
  });

  it('shows a clean SVG as an image block and refuses one with script, an event handler or an external reference, over MCP and REST alike', async () => {
    const batch = [
      returning(image(CLEAN, 'image/svg+xml')),
      ...Object.values(ACTIVE).map((text) => returning(image(Buffer.from(text).toString('base64'), 'image/svg+xml'))),
      { tool: 'files_image', args: { path: '/evil.svg' } },
    ];
    const res = (await client.callTool({ name: 'execute_tools', arguments: { executions: batch } })) as {
      content: Content[];
    };
    assert.deepEqual(
      res.content.filter((c) => c.type === 'image'),
      [{ type: 'image', data: CLEAN, mimeType: 'image/svg+xml' }],
    );
    const results = (JSON.parse(res.content.find((c) => c.type === 'text')?.text ?? '{}') as { results: Json[] })
      .results;
    assert.equal(results[0].result._mcpImage.content, 'image block 1');
    const whys = [
      /a <script> element/,
      /an event handler attribute \(onload\)/,
      /a reference to outside the document \(href="https:\/\/tracker\.example\/pixel\.png"\)/,
      /a <script> element/,
    ];
    whys.forEach((why, i) => {
      const stand = results[i + 1].result._mcpImage;
      assert.equal(stand.code, 'GW_ERR_RESULT_IMAGE_REFUSED', JSON.stringify(stand));
      assert.match(stand.error, /^Image refused: the SVG holds active content/);
      assert.match(stand.error, why);
    });
    const rest = await gw.rest('fixture-images', { executions: batch.slice(0, 4) });
    assert.deepEqual(rest.json.results[0], batch[0]?.args, 'the clean SVG as the handler returned it');
    for (const i of [1, 2, 3]) assert.deepEqual(rest.json.results[i], results[i], `item ${i} as over MCP`);
  });
});
