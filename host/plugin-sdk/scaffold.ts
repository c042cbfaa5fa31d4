/**
 * @module host/plugin-sdk/scaffold
 * `workbench plugin new NAME`: writes a plugin folder that builds, type-checks and passes its own
 * fixtures out of the box, and that can be moved or committed anywhere: no file in it names a path
 * of this machine. It holds plugin.ts (one tool on the SDK's client), fixtures/ (recorded answers
 * for `workbench plugin test`), a README with the next steps, a package.json whose scripts run
 * them, a .gitignore, and a tsconfig.json that type-checks plugin.ts as plugin code runs:
 * ECMAScript, the SDK and the sandbox's few web globals, no DOM and no Node.js types (which would
 * let `fetch`, `URL` or `process` pass and fail in the isolate). The SDK is reached through
 * `node_modules/workbench`, a link to this Workbench that `workbench plugin link` makes (and
 * `plugin new` makes at once); node_modules is not committed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PLUGIN_NAME } from '../../contracts/manifest.js';
import { PACKAGE_ROOT } from '../paths.js';
import { fail } from '../../contracts/errors.js';

export interface ScaffoldResult {
  dir: string;
  files: string[];
}

/** How a plugin folder runs this Workbench's CLI once linked: a path inside the folder itself. */
const CLI = 'node node_modules/workbench/bin/workbench.js';

function titleOf(name: string): string {
  return name
    .split('-')
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join(' ');
}

function pluginTs(name: string, tool: string): string {
  return `import { createApi, definePlugin, defineTool, path, z } from 'workbench/plugin-sdk';

// Replace api.example.com with the API your plugin calls, and declare every host it needs in
// \`egress\`: the gateway refuses all others. The client words failed answers for the agent
// (401: reconnect, 404: not found, 429: when to retry, …); \`failure\` words the ones you know better.
const api = createApi({
  base: 'https://api.example.com/v1',
  provider: 'Example',
  integration: '${name}',
  failure: (f) => (f.status === 404 ? new Error(\`No item with id "\${String(f.options['id'])}".\`) : undefined),
});

interface Item {
  id: string;
  title: string;
  updated_at: string;
  description?: string;
}

export default definePlugin({
  name: '${name}',
  version: '0.1.0',
  displayName: '${titleOf(name)}',
  description: 'What this integration lets an agent do, in one or two sentences.',
  // No credential. For an API key: { type: 'apikey', fields: [{ name: 'apiKey', label: 'API key', secret: true }],
  // inject: { header: 'authorization', format: 'Bearer {apiKey}' } }. For OAuth2 see the gateway's docs/plugins.md.
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
        // path\`…\` encodes each value as one path segment
        const item = await api.json<Item>(ctx, 'GET', path\`/items/\${args.id}\`, { action: \`read item \${args.id}\`, id: args.id });
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

/** Recorded answers for `workbench plugin test`: what the tool must ask and return. */
function fixtures(tool: string): string {
  const cases = [
    {
      name: 'reads the item and returns the fields that matter',
      tool,
      args: { id: '42' },
      exchanges: [
        {
          request: {
            method: 'GET',
            url: 'https://api.example.com/v1/items/42',
            headers: { accept: 'application/json' },
          },
          response: {
            status: 200,
            json: {
              id: '42',
              title: 'Hello',
              updated_at: '2024-01-01T00:00:00Z',
              description: 'long',
              internal: 'noise',
            },
          },
        },
      ],
      expect: { result: { id: '42', title: 'Hello', updatedAt: '2024-01-01T00:00:00Z' } },
    },
    {
      name: 'an id with a slash stays one path segment',
      tool,
      args: { id: 'a/b', includeDetails: true },
      exchanges: [
        {
          request: { method: 'GET', url: 'https://api.example.com/v1/items/a%2Fb' },
          response: { status: 200, json: { id: 'a/b', title: 'Odd', updated_at: '2024-01-01T00:00:00Z' } },
        },
      ],
      expect: { result: { id: 'a/b', title: 'Odd', updatedAt: '2024-01-01T00:00:00Z', description: '' } },
    },
    {
      name: 'a missing item is explained',
      tool,
      args: { id: 'nope' },
      exchanges: [
        {
          request: { method: 'GET', url: 'https://api.example.com/v1/items/nope' },
          response: { status: 404, json: { message: 'Not Found' } },
        },
      ],
      expect: { error: 'No item with id "nope".' },
    },
  ];
  return JSON.stringify(cases, null, 2) + '\n';
}

function readme(name: string, tool: string): string {
  return `# ${titleOf(name)}

A Workbench plugin written in TypeScript. \`plugin.ts\` defines it; \`workbench plugin build\` turns
it into the folder the gateway loads (\`dist/manifest.json\` and \`dist/plugin.js\`).

This folder reaches Workbench through \`node_modules/workbench\`, a link to a Workbench folder (not
committed: see \`.gitignore\`). \`workbench plugin new\` made it; after a fresh clone, or to use
another Workbench, run \`node <workbench folder>/bin/workbench.js plugin link .\` here.

| step | command (from this folder) |
|---|---|
| build | \`npm run build\` (\`${CLI} plugin build .\`) |
| test | \`npm test\` (\`${CLI} plugin test .\`: each tool against the recorded answers in \`fixtures/\`, in a sandboxed gateway) |
| type-check | \`npm run typecheck\` |
| validate | \`${CLI} plugin validate dist\` |
| run | \`WORKBENCH_PLUGINS_DIR=<this folder> ${CLI} serve\` (the gateway loads \`dist/\`, a sub-folder of it) |

Edit \`plugin.ts\`: each tool has a description written for an agent, a zod \`input\` schema
(its defaults and descriptions go into the manifest, and \`args\` is typed from it) and an async
\`handler(ctx, args)\` that calls the API through the SDK's client and returns slim JSON. The first
tool is \`${tool}\`. Handlers run in an isolate: no Node.js, no imports at run time, no network
except \`ctx.http\` to the hosts in \`egress\`.

\`fixtures/*.json\` hold, per case, the tool's arguments, the requests it must make with the answers
the provider gave (record them from the real API, e.g. with curl), and the result or error
expected. See the gateway's docs/plugins.md.
`;
}

function packageJson(name: string): string {
  const pkg = {
    name: `workbench-plugin-${name}`,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: {
      build: `${CLI} plugin build .`,
      test: `${CLI} plugin test .`,
      typecheck: 'node node_modules/workbench/node_modules/typescript/bin/tsc -p .',
    },
  };
  return JSON.stringify(pkg, null, 2) + '\n';
}

function tsconfig(): string {
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
    },
    // the globals the sandbox adds (URLSearchParams, atob, btoa, …): the lib above has no DOM or Node
    files: ['node_modules/workbench/sdk/sandbox-globals.d.ts'],
    include: ['plugin.ts', 'src/**/*.ts'],
  };
  return JSON.stringify(config, null, 2) + '\n';
}

/**
 * Gives `dir` a `node_modules/workbench` link to this Workbench (replacing a link that is there),
 * so that `workbench/plugin-sdk` type-checks and the package scripts find the CLI. Returns what it did.
 */
export function linkWorkbench(dir: string): string {
  if (!fs.existsSync(dir)) throw fail('GW_ERR_CLI_REFUSED', { message: `${dir} does not exist` });
  const link = path.join(dir, 'node_modules', 'workbench');
  const there = fs.lstatSync(link, { throwIfNoEntry: false });
  if (there && !there.isSymbolicLink())
    throw fail('GW_ERR_CLI_REFUSED', { message: `${link} exists and is not a link: remove it first` });
  if (there) fs.unlinkSync(link);
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.symlinkSync(PACKAGE_ROOT, link, 'dir');
  return `linked ${link} → ${PACKAGE_ROOT}`;
}

/** Creates `<parent>/<name>`; refuses a bad name or a folder that already has files. */
export function scaffoldPlugin(name: string, parent: string): ScaffoldResult {
  if (!PLUGIN_NAME.test(name))
    throw fail('GW_ERR_CLI_USAGE', {
      message: `"${name}" is not a plugin name: use kebab-case (a-z, 0-9 and -, starting with a letter), e.g. "weather"`,
    });
  const dir = path.resolve(parent, name);
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0)
    throw fail('GW_ERR_CLI_REFUSED', { message: `${dir} already exists and is not empty` });
  const tool = `${name.replace(/-/g, '_').slice(0, 50).replace(/_+$/, '')}_get_item`;
  const files: Record<string, string> = {
    'plugin.ts': pluginTs(name, tool),
    [path.join('fixtures', `${tool}.json`)]: fixtures(tool),
    'README.md': readme(name, tool),
    'package.json': packageJson(name),
    'tsconfig.json': tsconfig(),
    '.gitignore': 'node_modules/\n',
  };
  fs.mkdirSync(path.join(dir, 'fixtures'), { recursive: true });
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  linkWorkbench(dir);
  return { dir, files: Object.keys(files) };
}
