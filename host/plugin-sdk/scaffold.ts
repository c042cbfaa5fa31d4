/**
 * @module host/plugin-sdk/scaffold
 * `workbench plugin new NAME`: writes a plugin folder that builds out of the box — plugin.ts with
 * one tool calling ctx.http, a README with the next steps, a handler test to run after a build,
 * and a tsconfig.json that lets an editor type-check plugin.ts against this SDK. That config
 * declares what plugin code has at run time: ECMAScript, the SDK's types (define.ts and what it
 * reaches, all free of Node.js) and the sandbox's few web globals (sandbox-globals.d.ts); no DOM
 * and no Node.js types, which would let `fetch`, `URL` or `process` pass the type-check and fail
 * in the isolate.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PLUGIN_NAME } from '../../sandbox/manifest.js';
import { PACKAGE_ROOT } from '../paths.js';

export interface ScaffoldResult {
  dir: string;
  files: string[];
}

function titleOf(name: string): string {
  return name
    .split('-')
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join(' ');
}

function pluginTs(name: string, tool: string): string {
  return `import { definePlugin, defineTool, z } from 'workbench/plugin-sdk';

// Replace api.example.com with the API your plugin calls, and declare every host it needs in
// \`egress\`: the gateway refuses all others.
const API = 'https://api.example.com';

// encodeURIComponent throws URIError on a lone surrogate, which a JSON string argument may hold;
// toWellFormed() makes it U+FFFD first (%EF%BF%BD), as URLSearchParams sends it.
const enc = (s: string | number) => encodeURIComponent(String(s).toWellFormed());

export default definePlugin({
  name: '${name}',
  version: '0.1.0',
  displayName: '${titleOf(name)}',
  description: 'What this integration lets an agent do, in one or two sentences.',
  // No credential. For an API key: { type: 'apikey', fields: [{ name: 'apiKey', label: 'API key', secret: true }],
  // inject: { header: 'authorization', format: 'Bearer {apiKey}' } }. For OAuth2 see docs/plugins.md.
  auth: { type: 'none' },
  egress: ['api.example.com'],
  tools: {
    ${tool}: defineTool({
      description: 'Get one item by its id. Use it when the user names an item. Returns its id, title and when it was last updated.',
      input: z.object({
        id: z.string().min(1).describe('The item id, e.g. "42"'),
        includeDetails: z.boolean().default(false).describe('Also return the long description'),
      }),
      annotations: { readOnlyHint: true },
      // args is typed from the schema above: { id: string; includeDetails: boolean }
      handler: async (ctx, args) => {
        const res = await ctx.http(\`\${API}/v1/items/\${enc(args.id)}\`, { headers: { accept: 'application/json' } });
        if (res.status === 404) throw new Error(\`No item with id "\${args.id}".\`);
        if (!res.ok) throw new Error(\`api.example.com answered \${res.status} \${res.statusText}\`);
        const item = await res.json<{ id: string; title: string; updated_at: string; description?: string }>();
        return {
          id: item.id,
          title: item.title,
          updatedAt: item.updated_at,
          ...(args.includeDetails ? { description: item.description ?? '' } : {}),
        };
      },
    }),
  },
});
`;
}

function testMjs(tool: string): string {
  return `// Run after \`workbench plugin build\`: node --test
// Calls the built handler directly with a fake ctx (the gateway runs it in an isolate instead).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import plugin from './dist/plugin.js';

function fakeCtx(reply) {
  const requests = [];
  const http = async (url, init = {}) => {
    requests.push({ url, ...init });
    const body = JSON.stringify(reply.json);
    return { status: reply.status, ok: reply.status >= 200 && reply.status < 300, statusText: '', url, headers: { get: () => null }, body, text: async () => body, json: async () => JSON.parse(body) };
  };
  const limits = { maxRequests: 25, requestsLeft: () => 25 - requests.length, maxResultBytes: 1048576, maxRequestBodyBytes: 1048576 };
  return { ctx: { http, config: {}, log: { info() {}, warn() {}, error() {} }, limits }, requests };
}

test('${tool} asks for the item and returns the fields that matter', async () => {
  const { ctx, requests } = fakeCtx({ status: 200, json: { id: '42', title: 'Hello', updated_at: '2024-01-01T00:00:00Z', description: 'long' } });
  // arguments arrive validated and with defaults applied
  const result = await plugin.${tool}(ctx, { id: '42', includeDetails: false });
  assert.equal(requests[0].url, 'https://api.example.com/v1/items/42');
  assert.deepEqual(result, { id: '42', title: 'Hello', updatedAt: '2024-01-01T00:00:00Z' });
});

test('${tool} sends a lone surrogate in the id as U+FFFD instead of throwing URIError', async () => {
  const { ctx, requests } = fakeCtx({ status: 200, json: { id: 'a\\uFFFDb', title: 'Odd', updated_at: '2024-01-01T00:00:00Z' } });
  // "\\uD800" alone is valid in JSON, so an agent can send it
  await plugin.${tool}(ctx, { id: 'a\\uD800b', includeDetails: false });
  assert.equal(requests[0].url, 'https://api.example.com/v1/items/a%EF%BF%BDb');
});

test('${tool} explains a missing item', async () => {
  const { ctx } = fakeCtx({ status: 404, json: {} });
  await assert.rejects(plugin.${tool}(ctx, { id: 'nope', includeDetails: false }), /No item with id "nope"/);
});
`;
}

function readme(name: string, tool: string): string {
  const bin = path.join(PACKAGE_ROOT, 'bin', 'workbench.js');
  return `# ${titleOf(name)}

A Workbench plugin written in TypeScript. \`plugin.ts\` defines it; \`workbench plugin build\` turns
it into the folder the gateway loads (\`dist/manifest.json\` and \`dist/plugin.js\`).

Run \`workbench\` as \`node ${bin} …\` (the Workbench this plugin was made with), or as
\`workbench …\` after \`npm link\` in the Workbench folder. \`npx workbench\` works only inside the
Workbench folder: anywhere else npx would download an unrelated package named workbench.

| step | command (from this folder) |
|---|---|
| build | \`node ${bin} plugin build .\` |
| test the handlers | \`node --test\` (runs \`plugin.test.mjs\` against \`dist/plugin.js\`) |
| validate | \`node ${bin} plugin validate dist\` |
| run | \`WORKBENCH_PLUGINS_DIR=<this folder> node ${bin} serve\` (the gateway loads \`dist/\`, a sub-folder of it) |

The gateway reads plugins at start-up: restart it after each build.

Edit \`plugin.ts\`: each tool has a description written for an agent, a zod \`input\` schema
(its defaults and descriptions go into the manifest, and \`args\` is typed from it) and an async
\`handler(ctx, args)\` that calls the API with \`ctx.http\` and returns slim JSON. The first tool is
\`${tool}\`. Handlers run in an isolate: no Node.js, no imports at run time, no network except
\`ctx.http\` to the hosts in \`egress\`. See the gateway's docs/plugins.md.
`;
}

function tsconfig(): string {
  const sdk = path.join(PACKAGE_ROOT, 'sdk', 'index.ts');
  const globals = path.join(PACKAGE_ROOT, 'sdk', 'sandbox-globals.d.ts');
  const config = {
    compilerOptions: {
      target: 'ES2022',
      module: 'ESNext',
      moduleResolution: 'Bundler',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      // ES2024.String for toWellFormed (in V8 since Node 20, so inside the isolates too); not all
      // of ES2024, whose Promise.withResolvers and Object.groupBy the Node 20 isolates lack
      lib: ['ES2023', 'ES2024.String'],
      types: [],
      paths: { 'workbench/plugin-sdk': [sdk], zod: [path.join(PACKAGE_ROOT, 'node_modules', 'zod')] },
    },
    // the globals the sandbox adds (URLSearchParams, atob, btoa): the lib above has no DOM or Node
    files: [globals],
    include: ['plugin.ts'],
  };
  return JSON.stringify(config, null, 2) + '\n';
}

/** Creates `<parent>/<name>`; refuses a bad name or a folder that already has files. */
export function scaffoldPlugin(name: string, parent: string): ScaffoldResult {
  if (!PLUGIN_NAME.test(name)) throw new Error(`"${name}" is not a plugin name: use kebab-case (a-z, 0-9 and -, starting with a letter), e.g. "weather"`);
  const dir = path.resolve(parent, name);
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new Error(`${dir} already exists and is not empty`);
  const tool = `${name.replace(/-/g, '_').slice(0, 50).replace(/_+$/, '')}_get_item`;
  const files: Record<string, string> = {
    'plugin.ts': pluginTs(name, tool),
    'plugin.test.mjs': testMjs(tool),
    'README.md': readme(name, tool),
    'tsconfig.json': tsconfig(),
  };
  fs.mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  return { dir, files: Object.keys(files) };
}
