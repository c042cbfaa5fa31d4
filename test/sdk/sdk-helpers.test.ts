/**
 * @module test/sdk/sdk-helpers.test
 * The SDK's helpers, tested once, as plugins use them: a plugin built from TypeScript with
 * `workbench plugin build` runs in the real gateway and sandbox against a loopback stand-in for its
 * API. Covered: the JSON client (base URL, default headers, query strings, path segments, JSON
 * bodies, lenient and strict parsing), the one error mapping (status, the provider's own message,
 * Retry-After in seconds and as a date, a plugin's own wording, Google's error body read for it,
 * the gateway's refusals in words), pages read within the call's request budget (Link headers,
 * limits, maxPages), and bytes (an upload over the cap refused before it is sent, a download
 * lifted as an image, base64url).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buildPlugin } from '../../host/plugin-sdk/build.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { removeTempDirs, tempDir } from '../helpers/temp-plugin.js';

const PLUGIN = `import {
  checkUpload, collectPages, createApi, definePlugin, defineTool, fromBase64, googleErrorInfo, imageResult, linkNext, nextOffset,
  path, query, queryOf, segment, segments, toBase64Url, utf8, z,
} from 'workbench/plugin-sdk';

const api = createApi({
  base: 'https://api.sdk.example/v2',
  provider: 'Example',
  integration: 'sdk-check',
  headers: { 'x-api-version': '7' },
  failure: (f) => {
    if (f.status === 418) return new Error(\`Example is a teapot while trying to \${f.action} (hint: \${String(f.options.hint)})\`);
    if (f.status === 412) return new Error(JSON.stringify(googleErrorInfo(f.data)));
    return undefined;
  },
});

export default definePlugin({
  name: 'sdk-check',
  version: '1.0.0',
  displayName: 'SDK check',
  description: 'Exercises the plugin SDK helpers against a stand-in API.',
  auth: { type: 'apikey', fields: [{ name: 'apiKey', label: 'API key', secret: true }], inject: { header: 'authorization', format: 'Bearer {apiKey}' } },
  egress: ['api.sdk.example'],
  tools: {
    sdk_check_get: defineTool({
      description: 'GET an item through the JSON client.',
      input: z.object({ id: z.string(), tags: z.array(z.string()).optional(), q: z.string().optional(), lenient: z.boolean().default(false) }),
      handler: async (ctx, args) => {
        const answer = await api.request(ctx, 'GET', path\`/items/\${args.id}\`, { action: \`read item \${args.id}\`, query: { tags: args.tags, q: args.q, empty: '' }, lenient: args.lenient, hint: 'brew' });
        return { status: answer.status, data: answer.data as never };
      },
    }),
    sdk_check_post: defineTool({
      description: 'POST a JSON body.',
      input: z.object({ title: z.string() }),
      handler: async (ctx, args) => api.json(ctx, 'POST', '/items', { action: 'create an item', body: { title: args.title } }),
    }),
    sdk_check_paths: defineTool({
      description: 'Encode path segments and queries without a request.',
      input: z.object({ one: z.string(), many: z.string(), repeat: z.array(z.string()) }),
      handler: async (_ctx, args) => ({
        one: segment(args.one, 'one'),
        many: segments(args.many, 'many'),
        repeated: query({ k: args.repeat }, { repeat: true }),
        joined: query({ k: args.repeat, skip: undefined, none: null }),
        link: queryOf('https://x.example/a?page=3&per_page=2#frag'),
        offsets: [nextOffset(0, 10, 10), nextOffset(10, 10, 4), nextOffset(10, 10, 10, 20)],
      }),
    }),
    sdk_check_pages: defineTool({
      description: 'Read pages through Link headers.',
      input: z.object({ limit: z.int(), maxPages: z.int().optional(), reserve: z.int().optional() }),
      handler: async (ctx, args) => {
        const got = await collectPages<string>(
          ctx,
          null,
          async (cursor) => {
            const answer = await api.request<string[]>(ctx, 'GET', cursor ?? '/pages', { action: 'list pages', query: cursor ? undefined : { per_page: 2 } });
            return { items: answer.data, next: linkNext(answer.headers) };
          },
          { limit: args.limit, ...(args.maxPages !== undefined ? { maxPages: args.maxPages } : {}), ...(args.reserve !== undefined ? { reserve: args.reserve } : {}) },
        );
        return { ...got, left: ctx.limits.requestsLeft() };
      },
    }),
    sdk_check_bytes: defineTool({
      description: 'Upload and download bytes.',
      input: z.object({ size: z.int(), text: z.string() }),
      handler: async (ctx, args) => {
        const body = new Uint8Array(args.size);
        checkUpload(ctx, body.length, 'the file');
        await api.request(ctx, 'PUT', '/upload', { action: 'upload the file', rawBody: body, contentType: 'application/octet-stream', expect: 'text' });
        const image = await api.request<Uint8Array>(ctx, 'GET', '/image', { action: 'download the image', expect: 'bytes' });
        return { image: imageResult(image.data, 'image/png'), b64url: toBase64Url(utf8(args.text)), back: new TextDecoder().decode(fromBase64(toBase64Url(utf8(args.text)))) };
      },
    }),
  },
});
`;

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4a30000000049454e44ae426082',
  'hex',
);

let upstream: Upstream;
let gw: TestGateway;

before(async () => {
  const dir = path.join(tempDir(), 'src', 'sdk-check');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'plugin.ts'), PLUGIN);
  const out = path.join(tempDir(), 'sdk-check');
  await buildPlugin({ dir, outDir: out });
  upstream = await startUpstream();
  gw = await startGateway({
    plugins: [],
    pluginDirs: [path.dirname(out)],
    upstreams: { 'https://api.sdk.example': upstream.origin },
    policy: { limits: { maxRequestsPerCall: 4 }, http: { maxRequestBodyBytes: 1024, maxResponseBytes: 4096 } },
  });
  await gw.connect('sdk-check', { values: { apiKey: 'sdk-secret-key-123456' } });
});
after(async () => {
  await gw?.close();
  await upstream?.close();
  removeTempDirs();
});

describe('the JSON client', () => {
  test('base URL, default headers, an encoded path segment and a query that leaves out empty values', async () => {
    upstream.setHandler(() => ({ json: { id: 'a/b', ok: true } }));
    const item = await gw.execute('sdk_check_get', { id: 'a/b', tags: ['x', 'y z'], q: 'ad\ud800a' });
    assert.deepEqual(item.result, { status: 200, data: { id: 'a/b', ok: true } });
    const req = upstream.last();
    assert.equal(req.method, 'GET');
    assert.equal(req.url, '/v2/items/a%2Fb?tags=x%2Cy%20z&q=ad%EF%BF%BDa');
    assert.equal(req.headers['accept'], 'application/json');
    assert.equal(req.headers['x-api-version'], '7');
    assert.equal(req.headers['authorization'], 'Bearer sdk-secret-key-123456');
  });

  test('a JSON body is sent as JSON; an empty answer is {}', async () => {
    upstream.setHandler(() => ({ status: 204 }));
    const item = await gw.execute('sdk_check_post', { title: 'New' });
    assert.deepEqual(item.result, {});
    assert.equal(upstream.last().headers['content-type'], 'application/json');
    assert.deepEqual(upstream.last().json, { title: 'New' });
  });

  test('an answer that is not JSON fails in words, unless the request is lenient', async () => {
    upstream.setHandler(() => ({ body: '<html>hello</html>' }));
    assert.match(
      (await gw.execute('sdk_check_get', { id: '1' })).error ?? '',
      /^Example answered 200 with something that is not JSON while trying to read item 1\.$/,
    );
    assert.deepEqual((await gw.execute('sdk_check_get', { id: '1', lenient: true })).result, {
      status: 200,
      data: '<html>hello</html>',
    });
  });
});

describe('the one error mapping', () => {
  const cases: Array<
    [string, { status: number; headers?: Record<string, string>; json?: unknown; body?: string }, RegExp]
  > = [
    [
      '401 names what to reconnect',
      { status: 401, json: { message: 'Bad token' } },
      /^Example rejected the credential \(401\) while trying to read item 7: reconnect sdk-check\. Example said: Bad token\.$/,
    ],
    [
      '403 with the provider message',
      { status: 403, json: { errors: [{ message: 'No access to item' }] } },
      /^Example refused permission to read item 7 \(403\): No access to item\.$/,
    ],
    [
      '404 without a message',
      { status: 404, json: {} },
      /^Example found nothing while trying to read item 7 \(404\): it does not exist, or the connected account cannot see it\.$/,
    ],
    [
      '422 with error_description',
      { status: 422, json: { error: 'invalid', error_description: 'title is required' } },
      /^Example refused to read item 7 \(422\): title is required\.$/,
    ],
    [
      '429 with Retry-After seconds',
      { status: 429, headers: { 'retry-after': '30' }, json: {} },
      /^Example rate limited the request to read item 7 \(429\): retry after 30 seconds\.$/,
    ],
    ['429 without Retry-After', { status: 429, json: {} }, /wait a minute and retry\.$/],
    [
      '503 with a text body',
      { status: 503, body: 'upstream down' },
      /^Example had a server error \(503\) while trying to read item 7: retry later\. Example said: upstream down\.$/,
    ],
    [
      "418 in the plugin's own words, with its hint",
      { status: 418, json: {} },
      /^Example is a teapot while trying to read item 7 \(hint: brew\)$/,
    ],
    [
      "412 read as Google's error body: its status and reasons",
      {
        status: 412,
        json: {
          error: {
            code: 412,
            message: 'm',
            status: 'FAILED_PRECONDITION',
            errors: [{ reason: 'conditionNotMet' }, null],
            details: [{ '@type': 'x', reason: 'STALE' }, { reason: 7 }],
          },
        },
      },
      /^\{"status":"FAILED_PRECONDITION","reasons":\["conditionNotMet","STALE"\]\}$/,
    ],
    [
      "412 with a body that is not Google's: no status, no reasons",
      { status: 412, json: { error: 'invalid' } },
      /^\{"status":"","reasons":\[\]\}$/,
    ],
  ];
  for (const [name, reply, expected] of cases) {
    test(name, async () => {
      upstream.setHandler(() => reply);
      const item = await gw.execute('sdk_check_get', { id: '7' });
      assert.equal(item.code, 'GW_ERR_SANDBOX_HANDLER_THREW', JSON.stringify(item));
      assert.match(item.error ?? '', expected);
    });
  }

  test('Retry-After as an HTTP date becomes seconds from now', async () => {
    const at = new Date(Date.now() + 90_000).toUTCString();
    upstream.setHandler(() => ({ status: 429, headers: { 'retry-after': at }, json: {} }));
    const m = /retry after (\d+) seconds/.exec((await gw.execute('sdk_check_get', { id: '7' })).error ?? '');
    assert.ok(m && Number(m[1]) >= 85 && Number(m[1]) <= 91, `seconds: ${m?.[1]}`);
  });

  test('an answer over the gateway cap is refused in words that say what to do, with its code', async () => {
    upstream.setHandler(() => ({ json: { big: 'x'.repeat(10_000) } }));
    const item = await gw.execute('sdk_check_get', { id: '7' });
    assert.match(
      item.error ?? '',
      /^Example's answer is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\) while trying to read item 7: ask for less/,
    );
  });
});

describe('paths and queries', () => {
  test('segments are encoded one by one; a query may repeat an array; offsets stop on a short page or the total', async () => {
    const item = await gw.execute('sdk_check_paths', { one: 'a b/c', many: '/dir/a b/c.txt/', repeat: ['1', '2'] });
    assert.deepEqual(item.result, {
      one: 'a%20b%2Fc',
      many: 'dir/a%20b/c.txt',
      repeated: '?k=1&k=2',
      joined: '?k=1%2C2',
      link: { page: '3', per_page: '2' },
      offsets: [10, null, null],
    });
  });

  test('"..", "." and an empty segment are refused, naming the argument', async () => {
    assert.match(
      (await gw.execute('sdk_check_paths', { one: '..', many: 'a', repeat: [] })).error ?? '',
      /^Invalid one: "\.\."\.$/,
    );
    assert.match(
      (await gw.execute('sdk_check_paths', { one: 'a', many: 'a/./b', repeat: [] })).error ?? '',
      /^Invalid many: "\."\.$/,
    );
    assert.match(
      (await gw.execute('sdk_check_paths', { one: 'a', many: '//', repeat: [] })).error ?? '',
      /^Invalid many: it is empty\.$/,
    );
  });
});

describe('pages within the request budget', () => {
  const origin = 'https://api.sdk.example';
  before(() => {
    upstream.setHandler((req) => {
      const page = Number(new URLSearchParams(req.url.split('?')[1] ?? '').get('page') ?? '1');
      const next: Record<string, string> =
        page < 6
          ? {
              link: `<${origin}/v2/pages?page=${page + 1}&per_page=2>; rel="next", <${origin}/v2/pages?page=6>; rel="last"`,
            }
          : {};
      return { headers: next, json: [`p${page}a`, `p${page}b`] };
    });
  });

  test('stops at the limit, cut to it, with where to go on', async () => {
    const r = (await gw.execute('sdk_check_pages', { limit: 3 })).result;
    assert.deepEqual(r.items, ['p1a', 'p1b', 'p2a']);
    assert.equal(r.stopped, 'limit');
    assert.equal(r.next, `${origin}/v2/pages?page=3&per_page=2`);
  });

  test('stops at maxPages', async () => {
    const r = (await gw.execute('sdk_check_pages', { limit: 100, maxPages: 2 })).result;
    assert.deepEqual([r.items.length, r.stopped, r.next], [4, 'pages', `${origin}/v2/pages?page=3&per_page=2`]);
  });

  test('stops before the gateway would refuse a request, keeping the reserve', async () => {
    const r = (await gw.execute('sdk_check_pages', { limit: 100 })).result;
    assert.deepEqual([r.items.length, r.stopped, r.left], [8, 'budget', 0], JSON.stringify(r));
    const kept = (await gw.execute('sdk_check_pages', { limit: 100, reserve: 1 })).result;
    assert.deepEqual([kept.items.length, kept.stopped, kept.left], [6, 'budget', 1]);
    assert.equal(kept.next, `${origin}/v2/pages?page=4&per_page=2`);
  });
});

describe('bytes', () => {
  test('an upload within the cap is sent as bytes; a download becomes an image; base64url round-trips', async () => {
    upstream.setHandler((req) =>
      req.path === '/v2/image' ? { headers: { 'content-type': 'image/png' }, body: PNG } : { body: 'ok' },
    );
    const client = await gw.mcpClient();
    try {
      const res = (await client.callTool({
        name: 'execute_tools',
        arguments: { executions: [{ tool: 'sdk_check_bytes', args: { size: 512, text: 'hi??>' } }] },
      })) as { content: Array<{ type: string; text?: string; data?: string; mimeType?: string }> };
      const image = res.content.find((c) => c.type === 'image');
      assert.equal(image?.mimeType, 'image/png');
      assert.deepEqual(Buffer.from(image.data!, 'base64'), PNG);
      const text = JSON.parse(res.content.find((c) => c.type === 'text')!.text!) as {
        results: Array<{ result: { b64url: string; back: string } }>;
      };
      assert.deepEqual([text.results[0]!.result.b64url, text.results[0]!.result.back], ['aGk_Pz4', 'hi??>']);
    } finally {
      await client.close();
    }
    const put = upstream.requests.find((r) => r.method === 'PUT')!;
    assert.equal(put.headers['content-type'], 'application/octet-stream');
    assert.equal(put.headers['content-length'], '512');
  });

  test('an upload over the cap is refused before it is sent, in words', async () => {
    upstream.requests.length = 0;
    const item = await gw.execute('sdk_check_bytes', { size: 2048, text: 'x' });
    assert.match(
      item.error ?? '',
      /^the file is 2048 bytes, over the gateway's limit of 1024 bytes for one request: send a smaller one\.$/,
    );
    assert.equal(upstream.requests.length, 0);
  });
});
