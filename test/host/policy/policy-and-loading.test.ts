/**
 * @module test/host/policy/policy-and-loading
 * Policy files and plugin folders are data validated before use: bad ones are refused with
 * messages naming the file, the field and the problem; tenancy rules are enforced as FORBIDDEN.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadPolicyFile, parsePolicy } from '../../../host/policy/load.js';
import { decideToolAccess, unknownPolicyNames } from '../../../host/policy/tenancy.js';
import { DEFAULT_POLICY_FILE, PACKAGE_ROOT } from '../../../host/paths.js';
import { loadPlugins, probePlugins } from '../../../host/registry/load-plugins.js';
import { checkRegExpLiterals } from '../../../host/registry/regexp-literals.js';
import { sandboxLimits } from '../../../host/policy/limits.js';
import { createSandbox, probePlugin, type Sandbox } from '../../../host/supervisor/index.js';
import { isGatewayError } from '../../../host/errors.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins');

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-load-'));
}

function writePlugin(
  root: string,
  folder: string,
  manifest: unknown,
  source: string | null = 'export default {};',
): void {
  const dir = path.join(root, folder);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'manifest.json'), typeof manifest === 'string' ? manifest : JSON.stringify(manifest));
  if (source !== null) fs.writeFileSync(path.join(dir, 'plugin.js'), source);
}

const tool = (name: string, inputSchema: unknown = { type: 'object', properties: {} }) => ({
  name,
  description: `does ${name}`,
  inputSchema,
});
const manifest = (name: string, tools: unknown[], extra: Record<string, unknown> = {}) => ({
  name,
  version: '1.0.0',
  displayName: name,
  description: 'test',
  auth: { type: 'none' },
  egress: [],
  tools,
  ...extra,
});

describe('policy files', () => {
  it('the shipped default policy validates', () => {
    const p = loadPolicyFile(DEFAULT_POLICY_FILE);
    assert.equal(p.sandbox.workers, 8);
    assert.equal(p.resultCap.maxChars, 60_000);
    assert.equal(p.audit.retentionDays, 0);
    assert.equal(p.images.allowSvg, false);
  });

  it('an empty policy takes every default', () => {
    const p = parsePolicy({});
    assert.equal(p.schemaErrors, 'reject');
    assert.deepEqual(
      p.audit,
      { sink: 'database', storeArguments: false, retentionDays: 0 },
      'audit rows are kept for ever unless the operator says otherwise',
    );
    assert.equal(parsePolicy({ audit: { sink: 'stdout' } }).audit.retentionDays, 0);
    assert.equal(parsePolicy({ audit: { retentionDays: 90 } }).audit.retentionDays, 90);
    assert.equal(parsePolicy({ audit: { retentionDays: 36_500 } }).audit.retentionDays, 36_500);
    assert.deepEqual(p.images, { allowSvg: false }, 'SVG images are refused unless the operator says otherwise');
    assert.equal(parsePolicy({ images: { allowSvg: true } }).images.allowSvg, true);
    assert.equal(p.limits.memoryMb, 64);
    assert.deepEqual(p.upstreams, {});
  });

  const bad: [string, unknown, RegExp][] = [
    ['unknown key', { limit: {} }, /Unrecognized key.*limit/],
    ['memory too small', { limits: { memoryMb: 4 } }, /limits\.memoryMb/],
    ['workers not a number', { sandbox: { workers: 'eight' } }, /sandbox\.workers/],
    ['upstream with a path', { upstreams: { 'https://api.github.com/v3': 'http://127.0.0.1:1' } }, /upstreams/],
    ['bad schemaErrors', { schemaErrors: 'ignore' }, /schemaErrors/],
    // a tenant no user can have: its rule would never apply (a deny that silently allows)
    [
      'a tenant name in capitals',
      { tenants: { Acme: { denyPlugins: ['github'] } } },
      /tenants\.Acme: "Acme" is no tenant name: tenant must be 1-63 characters/,
    ],
    [
      'a tenant name with a space',
      { tenants: { 'acme corp': { allowPlugins: ['github'] } } },
      /tenants\.acme corp: "acme corp" is no tenant name/,
    ],
    // a capped answer keeps one item per execution: 58 characters each at the least, and 200 more
    [
      'a result cap too small for the largest batch',
      { resultCap: { maxChars: 3099 } },
      /resultCap\.maxChars: must be at least 3100 with requests\.maxBatch 50/,
    ],
    [
      'a batch too large for the result cap',
      { requests: { maxBatch: 1000 }, resultCap: { maxChars: 58199 } },
      /resultCap\.maxChars: must be at least 58200 with requests\.maxBatch 1000/,
    ],
    // the largest response must fit in the buffer budget, or it could never be read
    [
      'a buffer budget smaller than one response',
      { http: { maxBufferedBytes: 4 * 1024 * 1024 } },
      /http\.maxBufferedBytes: must be at least http\.maxResponseBytes \(8388608\)/,
    ],
    [
      'a buffer budget that is not a whole number of bytes',
      { http: { maxBufferedBytes: 1e9 + 0.5 } },
      /http\.maxBufferedBytes/,
    ],
    // a user's share of the sandbox: a fraction in [0.01, 1]; 0 would let no user run anything
    [
      'a negative user share',
      { sandbox: { maxUserShare: -0.5 } },
      /sandbox\.maxUserShare: Too small: expected number to be >=0\.01/,
    ],
    [
      'a user share of 0',
      { sandbox: { maxUserShare: 0 } },
      /sandbox\.maxUserShare: Too small: expected number to be >=0\.01/,
    ],
    [
      'a user share over 1',
      { sandbox: { maxUserShare: 1.5 } },
      /sandbox\.maxUserShare: Too big: expected number to be <=1/,
    ],
    [
      'a user share that is not a number',
      { sandbox: { maxUserShare: '0.5' } },
      /sandbox\.maxUserShare: Invalid input: expected number, received string/,
    ],
    // audit rows are deleted after whole days; a bad value must not load as "keep for ever" or "delete all"
    ...(
      [
        ['a negative audit retention', -1],
        ['an audit retention that is not a whole number of days', 1.5],
        ['an audit retention given as a string', '30'],
        ['an audit retention of null', null],
        ['an audit retention beyond a century', 36_501],
      ] as const
    ).map(([name, value]): [string, unknown, RegExp] => [
      name,
      { audit: { retentionDays: value } },
      /^my-policy\.json: audit\.retentionDays: must be a whole number of days from 0 to 36500: audit rows older than that many days are deleted \(0, the default, keeps them for ever\)$/,
    ]),
    // an SVG can carry script: only a real boolean opts in
    ...(
      [
        ['an SVG switch given as a string', 'true'],
        ['an SVG switch given as a number', 1],
        ['an SVG switch of null', null],
      ] as const
    ).map(([name, value]): [string, unknown, RegExp] => [
      name,
      { images: { allowSvg: value } },
      /^my-policy\.json: images\.allowSvg: must be true or false: true shows SVG images that hold no active content \(scripts, event handlers, external references\); false, the default, refuses every SVG image$/,
    ]),
    [
      'an unknown images key',
      { images: { allowSVG: true } },
      /^my-policy\.json: images: Unrecognized key: "allowSVG"$/,
    ],
  ];
  for (const [name, raw, pattern] of bad) {
    it(`refuses ${name} with the field named`, () => {
      assert.throws(
        () => parsePolicy(raw, 'my-policy.json'),
        (err: unknown) =>
          isGatewayError(err) &&
          err.code === 'GW_ERR_POLICY_INVALID' &&
          /^my-policy\.json: /.test(err.message) &&
          pattern.test(err.message),
      );
    });
  }

  it('http.maxBufferedBytes: 256 MiB when left out, or maxResponseBytes when that is larger; exactly maxResponseBytes is accepted', () => {
    assert.equal(parsePolicy({}).http.maxBufferedBytes, 256 * 1024 * 1024);
    assert.equal(loadPolicyFile(DEFAULT_POLICY_FILE).http.maxBufferedBytes, 256 * 1024 * 1024);
    assert.equal(
      parsePolicy({ http: { maxResponseBytes: 300 * 1024 * 1024 } }).http.maxBufferedBytes,
      300 * 1024 * 1024,
      'a policy raising only the response cap still loads',
    );
    assert.equal(parsePolicy({ http: { maxResponseBytes: 2048, maxBufferedBytes: 2048 } }).http.maxBufferedBytes, 2048);
  });

  it('sandbox.maxUserShare: 0.5 when left out (as in the shipped policy); 0.01 and 1 (no user share) are accepted', () => {
    assert.equal(parsePolicy({}).sandbox.maxUserShare, 0.5);
    assert.equal(loadPolicyFile(DEFAULT_POLICY_FILE).sandbox.maxUserShare, 0.5);
    assert.equal(parsePolicy({ sandbox: { maxUserShare: 0.01 } }).sandbox.maxUserShare, 0.01);
    assert.equal(parsePolicy({ sandbox: { maxUserShare: 1 } }).sandbox.maxUserShare, 1);
  });

  it('accepts a result cap right at the floor for its largest batch', () => {
    assert.equal(parsePolicy({ resultCap: { maxChars: 3100 } }).resultCap.maxChars, 3100);
    assert.equal(parsePolicy({ resultCap: { maxChars: 1000 }, requests: { maxBatch: 13 } }).requests.maxBatch, 13);
  });

  it('refuses a file that is not JSON, naming the file', () => {
    const dir = tempDir();
    const file = path.join(dir, 'p.json');
    fs.writeFileSync(file, '{ not json');
    assert.throws(
      () => loadPolicyFile(file),
      (err: unknown) =>
        isGatewayError(err) &&
        err.code === 'GW_ERR_POLICY_INVALID' &&
        err.message.startsWith(`${file}: not valid JSON`),
    );
  });

  it('tenancy: deny wins, allow lists restrict, "*" applies to everyone', () => {
    const p = parsePolicy({
      tenants: {
        '*': { denyTools: ['github_delete_repo'] },
        acme: { allowPlugins: ['github', 'slack'], denyTools: ['slack_delete_message'] },
        beta: { allowTools: ['github_get_issue'] },
      },
    });
    assert.deepEqual(decideToolAccess(p, 'acme', 'github', 'github_get_issue'), { allowed: true });
    assert.equal(decideToolAccess(p, 'acme', 'jira', 'jira_get_issue').allowed, false);
    const d = decideToolAccess(p, 'acme', 'slack', 'slack_delete_message');
    assert.ok(!d.allowed && d.rule === 'tenants.acme.denyTools');
    const star = decideToolAccess(p, 'other', 'github', 'github_delete_repo');
    assert.ok(!star.allowed && star.rule === 'tenants.*.denyTools');
    assert.equal(decideToolAccess(p, 'beta', 'github', 'github_get_issue').allowed, true);
    assert.equal(decideToolAccess(p, 'beta', 'github', 'github_list_issues').allowed, false);
  });

  it('refuses policy entries that would load and match nothing: patterns, stray spaces, URLs as hosts, bad CIDRs', () => {
    for (const [policy, field] of [
      [{ tenants: { '*': { denyTools: ['echo_*'] } } }, /tenants\.\*\.denyTools\.0: must be a plugin or tool name/],
      [{ tenants: { acme: { denyPlugins: [' github'] } } }, /tenants\.acme\.denyPlugins\.0/],
      [{ tenants: { acme: { allowPlugins: ['Fixture-Echo'] } } }, /tenants\.acme\.allowPlugins\.0/],
      [{ http: { denyHosts: ['https://api.github.com/'] } }, /http\.denyHosts\.0: must be a lower-case DNS host name/],
      [{ http: { denyHosts: ['*.slack.com'] } }, /http\.denyHosts\.0/],
      [
        { http: { allowPrivateCidrs: ['10.0.0.0/33'] } },
        /http\.allowPrivateCidrs\.0: must be an IP address or CIDR range/,
      ],
    ] as const) {
      assert.throws(
        () => parsePolicy(policy),
        { code: 'GW_ERR_POLICY_INVALID', message: field },
        JSON.stringify(policy),
      );
    }
    assert.doesNotThrow(() =>
      parsePolicy({
        tenants: { '*': { denyTools: ['*'], allowPlugins: ['atlassian-jira'] } },
        http: { denyHosts: ['api.github.com'], allowPrivateCidrs: ['10.0.0.0/8', '127.0.0.1'] },
      }),
    );
  });

  it('names the policy entries that match no loaded plugin or tool (they load, and apply to nothing)', () => {
    const p = parsePolicy({
      plugins: { 'fixture-ecko': { limits: { memoryMb: 128 } } },
      tenants: { '*': { denyPlugins: ['fixture-echo', 'slak'], denyTools: ['echo_args', 'echo_argz', '*'] } },
    });
    const catalog = {
      plugin: (n: string) => (n === 'fixture-echo' ? {} : undefined),
      tool: (n: string) => (n === 'echo_args' ? {} : undefined),
    };
    assert.deepEqual(unknownPolicyNames(p, catalog), [
      'plugins.fixture-ecko',
      'tenants.*.denyPlugins: slak',
      'tenants.*.denyTools: echo_argz',
    ]);
  });

  it('the tenancy examples of docs/policies.md name only plugins and tools the shipped catalog has', () => {
    const shipped = path.join(PACKAGE_ROOT, 'plugins');
    const manifests = fs
      .readdirSync(shipped)
      .filter((d) => fs.existsSync(path.join(shipped, d, 'manifest.json')))
      .map(
        (d) =>
          JSON.parse(fs.readFileSync(path.join(shipped, d, 'manifest.json'), 'utf8')) as {
            name: string;
            tools: Array<{ name: string }>;
          },
      );
    const plugins = new Set(manifests.map((m) => m.name));
    const tools = new Set(manifests.flatMap((m) => m.tools.map((t) => t.name)));
    const catalog = {
      plugin: (n: string) => (plugins.has(n) ? {} : undefined),
      tool: (n: string) => (tools.has(n) ? {} : undefined),
    };
    const doc = fs.readFileSync(path.join(PACKAGE_ROOT, 'docs', 'policies.md'), 'utf8');
    const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)]
      .map((m) => m[1] ?? '')
      .filter((b) => b.includes('"tenants"'));
    assert.ok(examples.length > 0);
    for (const example of examples)
      assert.deepEqual(unknownPolicyNames(parsePolicy(JSON.parse(example)), catalog), [], example);
  });

  it("a plugin's limits override changes only the limits it names", () => {
    const p = parsePolicy({
      limits: { maxResultBytes: 2048, wallMsPerCall: 90_000 },
      plugins: { github: { limits: { memoryMb: 128 } } },
    });
    assert.deepEqual(p.plugins['github']?.limits, { memoryMb: 128 });
    assert.equal(p.limits.maxResultBytes, 2048);
    assert.throws(() => parsePolicy({ plugins: { github: { limits: { cpuMsPerCall: 1 } } } }), {
      code: 'GW_ERR_POLICY_INVALID',
      message: /plugins\.github\.limits\.cpuMsPerCall/,
    });
  });

  it('tenancy: a tenant named like a member of Object (constructor, __proto__, toString) has only the "*" rules', () => {
    const p = parsePolicy({ tenants: { '*': { denyTools: ['github_delete_repo'] } } });
    for (const tenant of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      assert.deepEqual(decideToolAccess(p, tenant, 'github', 'github_get_issue'), { allowed: true }, tenant);
      assert.equal(decideToolAccess(p, tenant, 'github', 'github_delete_repo').allowed, false, tenant);
    }
  });
});

describe('plugin loading', () => {
  it('refuses bad plugins with file, field and problem, and loads the rest', () => {
    const root = tempDir();
    writePlugin(root, 'a-good', manifest('good', [tool('good_one')]));
    writePlugin(root, 'broken-json', '{ "name": ');
    writePlugin(root, 'bad-name', manifest('Bad_Name', [tool('x_one')]));
    writePlugin(root, 'bad-schema', manifest('bad-schema', [tool('schema_one', { type: 'string' })]));
    writePlugin(root, 'no-source', manifest('no-source', [tool('source_one')]), null);
    writePlugin(root, 'z-off-prefix', manifest('off-prefix', [tool('good_one')]));
    writePlugin(root, 'egress-bad', manifest('egress-bad', [tool('eg_one')], { egress: ['https://api.example.com'] }));
    writePlugin(root, 'no-schema', manifest('no-schema', [{ name: 'nos_one', description: 'no schema' }]));
    const { plugins, errors } = loadPlugins([root]);
    assert.deepEqual(
      plugins.map((p) => p.manifest.name),
      ['good'],
    );
    const byDir = new Map(errors.map((e) => [path.basename(e.dir), e]));
    assert.match(byDir.get('broken-json')?.message ?? '', /not valid JSON/);
    assert.match(byDir.get('bad-name')?.message ?? '', /^name: must be kebab-case/);
    assert.match(byDir.get('bad-schema')?.message ?? '', /tools\.0\.inputSchema/);
    assert.match(byDir.get('no-source')?.file ?? '', /plugin\.js$/);
    assert.equal(
      byDir.get('z-off-prefix')?.message,
      'tools: every tool name of plugin "off-prefix" starts with one prefix, the same for all its tools: "off_prefix_" or "prefix_" (the plugin\'s name, or its last words, with "_" for "-"); "good_one" does not start with "off_prefix_"',
    );
    assert.match(byDir.get('egress-bad')?.message ?? '', /^egress\.0: /);
    assert.match(
      byDir.get('no-schema')?.message ?? '',
      /^tools\.0\.inputSchema: required: a JSON Schema of the arguments, e\.g\. \{"type": "object", "properties": \{\}\}/,
    );
    for (const e of errors) assert.ok(e.file.startsWith(root), 'each error names its file');
  });

  it('refuses an inputSchema that is not a valid JSON Schema (it compiled into a validator accepting anything), and accepts one naming another draft', () => {
    const root = tempDir();
    writePlugin(
      root,
      'req-string',
      manifest('req-string', [tool('req_string_one', { type: 'object', required: 'a' })]),
    );
    writePlugin(
      root,
      'props-number',
      manifest('props-number', [tool('props_number_one', { type: 'object', properties: 5 })]),
    );
    writePlugin(
      root,
      'minlength-text',
      manifest('minlength-text', [
        tool('minlength_text_one', { type: 'object', properties: { a: { type: 'string', minLength: 'x' } } }),
      ]),
    );
    writePlugin(
      root,
      'draft-07',
      manifest('draft-07', [
        tool('draft_07_one', {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { a: { type: 'string' } },
          required: ['a'],
        }),
      ]),
    );
    const { plugins, errors } = loadPlugins([root]);
    assert.deepEqual(
      plugins.map((p) => p.manifest.name),
      ['draft-07'],
    );
    const byDir = new Map(errors.map((e) => [path.basename(e.dir), e.message]));
    assert.match(
      byDir.get('req-string') ?? '',
      /tools\.req_string_one\.inputSchema: not a valid JSON Schema: inputSchema\/required must be array/,
    );
    assert.match(
      byDir.get('props-number') ?? '',
      /tools\.props_number_one\.inputSchema: not a valid JSON Schema: inputSchema\/properties must be object/,
    );
    assert.match(
      byDir.get('minlength-text') ?? '',
      /tools\.minlength_text_one\.inputSchema: not a valid JSON Schema: inputSchema\/properties\/a\/minLength must be integer/,
    );
    assert.equal(
      plugins[0]?.tools.get('draft_07_one')?.validator.safeParse({}).success,
      false,
      'the accepted schema still requires "a"',
    );
  });

  it('refuses an inject.format placeholder that names no secret field, listing the ones there are', () => {
    const root = tempDir();
    const fields = [
      { name: 'apiKey', label: 'Key', secret: true },
      { name: 'username', label: 'User', secret: true },
      { name: 'region', label: 'Region' },
    ];
    const apikey = (format: string) => ({
      auth: { type: 'apikey', fields, inject: { header: 'x-key', format } },
      egress: ['api.example.com'],
    });
    const oauth = (format: string) => ({
      auth: {
        type: 'oauth2',
        authorizationUrl: 'https://a.example.com/a',
        tokenUrl: 'https://a.example.com/t',
        inject: { format },
      },
      egress: ['api.example.com'],
    });
    writePlugin(root, 'case', manifest('case', [tool('case_one')], apikey('{apikey}')));
    writePlugin(root, 'not-secret', manifest('not-secret', [tool('ns_one')], apikey('{apiKey}-{region}')));
    writePlugin(root, 'basic-typo', manifest('basic-typo', [tool('bt_one')], apikey('Basic {base64:user:apiKey}')));
    writePlugin(root, 'malformed', manifest('malformed', [tool('mf_one')], apikey('{api-key}')));
    writePlugin(root, 'oauth-name', manifest('oauth-name', [tool('on_one')], oauth('Bearer {access_token}')));
    writePlugin(
      root,
      'fine-basic',
      manifest('fine-basic', [tool('basic_one')], apikey('Basic {base64:username:apiKey}')),
    );
    writePlugin(root, 'fine-oauth', manifest('fine-oauth', [tool('oauth_one')], oauth('token {token}')));
    const { plugins, errors } = loadPlugins([root]);
    assert.deepEqual(
      plugins.map((p) => p.manifest.name),
      ['fine-basic', 'fine-oauth'],
    );
    const byDir = new Map(errors.map((e) => [path.basename(e.dir), e.message]));
    const listed = 'the placeholders this credential has are {apiKey}, {username}';
    assert.equal(
      byDir.get('case'),
      `auth.inject.format: {apikey} names no secret field (did you mean {apiKey}? names are case-sensitive); ${listed}`,
    );
    assert.equal(
      byDir.get('not-secret'),
      'auth.inject.format: {region}: field "region" is not secret, and only secret fields reach the credential (give it "secret": true, or use {apiKey}, {username})',
    );
    assert.equal(byDir.get('basic-typo'), `auth.inject.format: {base64:user:apiKey} names no secret field; ${listed}`);
    assert.equal(
      byDir.get('malformed'),
      `auth.inject.format: {api-key} is not a placeholder: write {name} with a field name, or {base64:a:b}; ${listed}`,
    );
    assert.equal(byDir.get('oauth-name'), 'auth.inject.format: {access_token}: an OAuth2 credential has only {token}');
  });

  it('loads a plugin folder installed as a symbolic link, and ignores a dangling one', () => {
    const releases = tempDir();
    writePlugin(releases, 'linked-1.2', manifest('linked', [tool('linked_one')]));
    const root = tempDir();
    fs.symlinkSync(path.join(releases, 'linked-1.2'), path.join(root, 'linked'));
    fs.symlinkSync(path.join(releases, 'gone'), path.join(root, 'dangling'));
    const { plugins, errors } = loadPlugins([root]);
    assert.deepEqual(
      plugins.map((p) => p.manifest.name),
      ['linked'],
    );
    assert.deepEqual(errors, []);
  });

  it('never evaluates plugin code on the host', () => {
    const root = tempDir();
    const marker = path.join(root, 'evaluated');
    writePlugin(
      root,
      'sneaky',
      manifest('sneaky', [tool('sneaky_one')]),
      `import fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(marker)}, 'x'); export default {};`,
    );
    const { plugins } = loadPlugins([root]);
    assert.equal(plugins.length, 1);
    assert.equal(fs.existsSync(marker), false);
  });
});

describe('plugin.js checked in the sandbox at start-up', () => {
  let gw: TestGateway;
  let root: string;
  const broken: Record<string, [string, RegExp]> = {
    importer: [
      'import fs from "node:fs";\nexport default { importer_x: async () => fs };',
      /^the module failed to load: import "node:fs" is not allowed: a plugin must be one self-contained module/,
    ],
    syntaxerr: ['export default { async syntaxerr_x() { return 1; } ;', /^the module failed to load: SyntaxError: /],
    nodefault: [
      'export const nodefault_x = async () => 1;',
      /^the module has no default export object; write `export default \{ nodefault_x: /,
    ],
    topthrow: ['throw new Error("top-level boom");\nexport default {};', /^the module failed to load: top-level boom/],
    nohandler: [
      'export default { nohandler_x: async () => 1 };',
      /^the default export has no function for tool "nohandler_y" of manifest\.json/,
    ],
    // read by parsing, not by guessing: after \`if (x)\` a slash starts a pattern, not a division
    vflag: [
      'export default { vflag_x: async () => /[\\p{L}--a]/v.test("b") };',
      /^line 1: a regular-expression literal with the v \(unicodeSets\) flag, which plugins may not use/,
    ],
    manyregex: [
      `${Array.from({ length: 6 }, (_, i) => `const r${i} = /${String.fromCharCode(97 + i).repeat(19_000)}/;`).join('\n')}\nexport default { manyregex_x: async () => 1 };`,
      /^its regular-expression literals hold 114000 characters in all; a plugin\.js may hold at most 100000 /,
    ],
    longregex: [
      `const x = 1;\nif (x) /${'a'.repeat(30_000)}/.test('a');\nexport default { longregex_x: async () => 1 };`,
      /^line 2: a regular-expression literal of 30000 characters; patterns may have at most 20000 /,
    ],
    notfunction: [
      'export default { notfunction_x: 42 };',
      /^the default export has no function for tool "notfunction_x"/,
    ],
  };
  before(async () => {
    root = tempDir();
    writePlugin(
      root,
      'fine',
      manifest('fine', [tool('fine_x')]),
      'export default { fine_x: async () => ({ fine: true }) };',
    );
    writePlugin(
      root,
      'fine-regex',
      manifest('fine-regex', [tool('regex_x')]),
      `export default { regex_x: async () => /${'b'.repeat(20_000)}/.test('b'.repeat(20_000)) };`,
    );
    for (const [name, [source]] of Object.entries(broken)) {
      const tools = name === 'nohandler' ? [tool('nohandler_x'), tool('nohandler_y')] : [tool(`${name}_x`)];
      writePlugin(root, name, manifest(name, tools), source);
    }
    // a broken plugin that declares a tool (or a name) a good one declares too owns nothing: the
    // good one loads
    writePlugin(
      root,
      'a-broken-owner',
      manifest('broken-shared', [tool('shared_x')]),
      'throw new Error("broken");\nexport default {};',
    );
    writePlugin(
      root,
      'b-good-sharer',
      manifest('good-shared', [tool('shared_x')]),
      'export default { shared_x: async () => ({ from: "b" }) };',
    );
    writePlugin(root, 'c-broken-name', manifest('same-name', [tool('name_c')]), 'export default {};');
    writePlugin(
      root,
      'd-good-name',
      manifest('same-name', [tool('name_d')]),
      'export default { name_d: async () => ({ from: "d" }) };',
    );
    gw = await startGateway({ plugins: [], pluginDirs: [root] });
  });
  after(async () => gw?.close());

  it('refuses a module that cannot serve its tools, naming plugin.js and the problem, and loads the rest', async () => {
    assert.deepEqual(
      gw.gateway.registry.plugins().map((p) => p.manifest.name),
      ['fine', 'fine-regex', 'good-shared', 'same-name'],
    );
    const byDir = new Map(gw.gateway.pluginErrors.map((e) => [path.basename(e.dir), e]));
    assert.deepEqual([...byDir.keys()].sort(), [...Object.keys(broken), 'a-broken-owner', 'c-broken-name'].sort());
    for (const [name, [, message]] of Object.entries(broken)) {
      const e = byDir.get(name);
      assert.ok(e, `${name} was not refused: ${JSON.stringify(gw.gateway.pluginErrors)}`);
      assert.equal(e.file, path.join(root, name, 'plugin.js'));
      assert.match(e.message, message, name);
    }
    assert.deepEqual((await gw.execute('fine_x')).result, { fine: true });
    assert.equal((await gw.execute('regex_x')).result, true, 'a literal at the bound loads and runs');
    assert.deepEqual(
      (await gw.execute('shared_x')).result,
      { from: 'b' },
      'the tool a refused plugin declared belongs to the good one',
    );
    assert.deepEqual(
      (await gw.execute('name_d')).result,
      { from: 'd' },
      'the name a refused plugin declared belongs to the good one',
    );
    assert.equal(
      (await gw.execute('nohandler_x')).code,
      'GW_ERR_ENGINE_TOOL_NOT_FOUND',
      'no tool of a refused plugin is listed',
    );
  });
});

describe('regular-expression literals in plugin.js', () => {
  it('are delimited without being built in the host: acorn never makes a RegExp of them', () => {
    const patterns = ['(a|b)+c', 'x'.repeat(30_000), '[/\\]]x'];
    const source = `const a = /${patterns[0]}/g;\nif (a) /${patterns[1]}/.test('x');\nexport default { t: () => /${patterns[2]}/ };`;
    const built: string[] = [];
    const Real = globalThis.RegExp;
    globalThis.RegExp = new Proxy(Real, {
      construct(target, args, newTarget) {
        built.push(String(args[0]));
        return Reflect.construct(target, args, newTarget);
      },
    });
    let verdict;
    try {
      verdict = checkRegExpLiterals(source);
    } finally {
      globalThis.RegExp = Real;
    }
    assert.deepEqual(verdict, {
      ok: false,
      problem:
        "line 2: a regular-expression literal of 30000 characters; patterns may have at most 20000 (V8 compiles and creates them without stopping for a call's time limit)",
    });
    assert.deepEqual(
      built.filter((p) => patterns.includes(p)),
      [],
      'no literal was built',
    );
    assert.deepEqual(checkRegExpLiterals(`const q = 4 / 2 / 1, r = /[\\]/]x/g;\nexport default { r };`), { ok: true });
  });
});

describe('a start-up probe that runs out of time among the others', () => {
  let sandbox: Sandbox;
  let root: string;
  before(async () => {
    root = tempDir();
    writePlugin(root, 'busy', manifest('busy', [tool('busy_x')]), 'export default { busy_x: async () => 1 };');
    writePlugin(root, 'fine', manifest('fine', [tool('fine_x')]), 'export default { fine_x: async () => 1 };');
    writePlugin(
      root,
      'spin',
      manifest('spin', [tool('spin_x')]),
      'for (;;) {}\nexport default { spin_x: async () => 1 };',
    );
    sandbox = await createSandbox({ workers: 2 });
  });
  after(async () => {
    await sandbox?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('is probed again alone: accepted when it loads then (the machine was busy), refused when it runs out of time again', async () => {
    const policy = parsePolicy({ plugins: { spin: { limits: { cpuMsPerCall: 300 } } } });
    const probes = new Map<string, number>();
    // "busy" is starved of CPU the first time (as under every plugin probed at once): its first
    // probe runs for real in the sandbox, and is answered as the sandbox answers a probe that ran out of time
    const contended: Pick<Sandbox, 'run'> = {
      async run(task, http) {
        const n = (probes.get(task.plugin.name) ?? 0) + 1;
        probes.set(task.plugin.name, n);
        const out = await sandbox.run(task, http);
        if (task.plugin.name === 'busy' && n === 1)
          return {
            ok: false,
            error: { code: 'GW_ERR_SANDBOX_TIMEOUT', message: 'the call ran out of time' },
            stats: out.stats,
          };
        return out;
      },
    };
    const loaded = await probePlugins(loadPlugins([root]), (p) =>
      probePlugin(
        contended,
        { name: p.manifest.name, version: p.manifest.version, source: p.source, sourceHash: p.sourceHash },
        [...p.tools.keys()],
        sandboxLimits(policy, p.manifest.name),
      ),
    );
    assert.deepEqual(loaded.plugins.map((p) => p.manifest.name).sort(), ['busy', 'fine']);
    assert.deepEqual(
      loaded.errors.map((e) => [path.basename(e.dir), e.message.slice(0, 60)]),
      [['spin', "the module's top-level code ran longer than its limits allow"]],
    );
    assert.deepEqual(Object.fromEntries(probes), { busy: 2, fine: 1, spin: 2 });
    assert.deepEqual(loaded.retried.map((r) => [path.basename(r.dir), r.ok]).sort(), [
      ['busy', true],
      ['spin', false],
    ]);
  });
});

describe('tenancy enforced by the engine', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      plugins: [],
      pluginDirs: [FIXTURES],
      policy: { tenants: { acme: { denyTools: ['echo_fail'] } } },
    });
  });
  after(async () => gw.close());

  it('answers FORBIDDEN naming the rule, audits it, and hides the tool from discovery', async () => {
    const item = await gw.execute('echo_fail', { message: 'x' });
    assert.equal(item.error, 'FORBIDDEN');
    assert.equal(item.rule, 'tenants.acme.denyTools');
    const rows = await gw.db.all<{ error_code: string }>(
      "SELECT error_code FROM audit_events WHERE tool = 'echo_fail'",
    );
    assert.deepEqual(
      rows.map((r) => r.error_code),
      ['GW_ERR_POLICY_FORBIDDEN'],
    );
    const rest = await gw.rest('fixture-echo', { tool: 'echo_fail', args: { message: 'x' } });
    assert.equal(rest.status, 403);
    const other = await gw.createUser('free@example.com', 'other');
    assert.equal((await gw.execute('echo_fail', { message: 'allowed here' }, other.apiKey)).error, 'allowed here');
    const client = await gw.mcpClient();
    const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'fail throw error' } })) as {
      content: { text: string }[];
    };
    const names = JSON.parse(found.content[0]?.text ?? '{}').tools.map((t: { name: string }) => t.name);
    assert.ok(!names.includes('echo_fail'), 'a tool the caller may not run is never shown');
  });
});
