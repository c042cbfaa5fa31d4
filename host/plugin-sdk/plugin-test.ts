/**
 * @module host/plugin-sdk/plugin-test
 * `workbench plugin test DIR`: runs a plugin's tools against the author's recorded fixtures
 * (fixtures.ts) through the real path — a gateway in this process with a temporary SQLite data
 * folder (the security report's in-process gateway), the sandbox, argument validation and the
 * egress bridge — with each host the plugin may reach answered by a loopback recording server
 * (security-report/recording-server.ts) that replays the recorded answers and checks each request.
 * A folder with plugin.ts is built first (into a temporary folder), so the sources are what is tested.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { startInProcessGateway, type InProcessGateway } from '../security-report/in-process-gateway.js';
import { startUpstream, type RecordedRequest, type UpstreamReply } from '../security-report/recording-server.js';
import type { User } from '../storage/users.js';
import type { PluginManifest } from '../../contracts/manifest.js';
import { buildPlugin } from './build.js';
import { readFixtures, type FixtureCase, type FixtureRequest } from './fixtures.js';
import { fail } from '../../contracts/errors.js';

export interface PluginTestOptions {
  /** the plugin folder: plugin.ts (built first), or a built folder with manifest.json */
  dir: string;
  /** the fixtures folder (default DIR/fixtures) */
  fixturesDir?: string;
  /** receives each line of the report */
  write: (line: string) => void;
}

export interface CaseOutcome {
  fixture: FixtureCase;
  problems: string[];
}

/** What the replay servers saw of one case: the next expected exchange, and what went wrong. */
interface Replay {
  pending: FixtureCase['exchanges'];
  seen: number;
  problems: string[];
}

/** The built folder to test: a temporary build of plugin.ts, or the folder (or its dist/) as it is. */
async function builtFolder(dir: string, temp: string): Promise<string> {
  if (fs.existsSync(path.join(dir, 'plugin.ts')))
    return (await buildPlugin({ dir, outDir: path.join(temp, 'plugins', path.basename(path.resolve(dir))) })).outDir;
  if (fs.existsSync(path.join(dir, 'manifest.json'))) return dir;
  if (fs.existsSync(path.join(dir, 'dist', 'manifest.json'))) return path.join(dir, 'dist');
  throw fail('GW_ERR_CLI_USAGE', {
    message: `${dir}: neither plugin.ts nor manifest.json (nor dist/manifest.json) is there`,
  });
}

/** Compares one request the tool made with the one the fixture expects; returns the differences. */
function compareRequest(want: FixtureRequest, got: RecordedRequest, url: string): string[] {
  const problems: string[] = [];
  if (want.method !== got.method || want.url !== url)
    problems.push(`expected ${want.method} ${want.url}, the tool sent ${got.method} ${url}`);
  for (const [name, value] of Object.entries(want.headers ?? {})) {
    const sent = got.headers[name.toLowerCase()];
    if (sent !== value)
      problems.push(`header ${name}: expected ${JSON.stringify(value)}, sent ${JSON.stringify(sent ?? null)}`);
  }
  if (want.body !== undefined && want.body !== got.body)
    problems.push(`body: expected ${JSON.stringify(want.body)}, sent ${JSON.stringify(got.body)}`);
  const sent = got.json === undefined ? got.body : got.json;
  if (want.json !== undefined && !isDeepStrictEqual(sent, want.json))
    problems.push(`JSON body: expected ${JSON.stringify(want.json)}, sent ${JSON.stringify(sent)}`);
  return problems;
}

/** Answers a request with the next recorded exchange when it is the one recorded; else 599, and the difference is noted. */
function replayNext(replay: Replay, origin: string, req: RecordedRequest): UpstreamReply {
  const url = `${origin}${req.url}`;
  const next = replay.pending.shift();
  const n = ++replay.seen;
  const problems = next
    ? compareRequest(next.request, req, url)
    : [`the tool sent ${req.method} ${url}, but the fixture records no more requests`];
  if (!next || problems.length > 0) {
    replay.problems.push(...problems.map((p) => `request ${n}: ${p}`));
    return { status: 599, headers: { 'content-type': 'text/plain' }, body: 'not the recorded request' };
  }
  const { status, headers, json, body } = next.response;
  return { status, headers, ...(json !== undefined ? { json } : { body: body ?? '' }) };
}

/** A credential for the test connection: made-up secrets (the replay servers accept any). */
function testCredential(
  manifest: PluginManifest,
  config: Record<string, unknown> | undefined,
): { token?: string; values?: Record<string, string>; config?: Record<string, unknown>; cookies?: unknown } {
  const auth = manifest.auth;
  if (auth.type === 'oauth2') return { token: 'workbench-test-token', ...(config ? { config } : {}) };
  // a session cookie of the first domain (for its hosts too): the replay server does not check it
  if (auth.type === 'cookie')
    return { cookies: [{ name: 'workbench_test', value: 'workbench-test-cookie', domain: `.${auth.domains[0]}` }] };
  if (auth.type !== 'apikey') return {};
  const values: Record<string, string> = {};
  for (const field of auth.fields) {
    const given = config?.[field.name];
    values[field.name] = field.secret
      ? `test-${field.name}`
      : typeof given === 'string'
        ? given
        : (field.default ?? field.enum?.[0] ?? 'test');
  }
  return { values };
}

/** Where a case runs: the gateway, its test user and key, and the plugin under test. */
interface Bench {
  gw: InProcessGateway;
  user: User;
  apiKey: string;
  manifest: PluginManifest;
}

/** Runs one case through REST (POST /rest/:integration) and checks the answer. */
async function runCase(bench: Bench, fixture: FixtureCase, replay: Replay): Promise<string[]> {
  const { gw, user, apiKey, manifest } = bench;
  replay.pending = [...fixture.exchanges];
  replay.seen = 0;
  replay.problems = [];
  if (manifest.auth.type !== 'none') {
    const { token, ...extra } = testCredential(manifest, fixture.config);
    await gw.connect(manifest.name, user, token, extra);
  }
  const [item] = (await gw.batch(manifest.name, [{ tool: fixture.tool, args: fixture.args }], apiKey)) as Array<
    { result?: unknown; error?: string; message?: string } | undefined
  >;
  const problems = [...replay.problems];
  if (!item) return [...problems, 'the gateway answered no item'];
  if (replay.pending.length > 0)
    problems.push(
      `${replay.pending.length} recorded request(s) were not made, the first: ${replay.pending[0]!.request.method} ${replay.pending[0]!.request.url}`,
    );
  if ('result' in fixture.expect) {
    if (!('result' in item)) problems.push(`expected a result, the tool failed: ${item.error ?? JSON.stringify(item)}`);
    else if (!isDeepStrictEqual(item.result, fixture.expect.result))
      problems.push(`result: expected ${JSON.stringify(fixture.expect.result)}, got ${JSON.stringify(item.result)}`);
  } else {
    const text = `${item.error ?? ''} ${item.message ?? ''}`;
    if ('result' in item)
      problems.push(
        `expected an error containing ${JSON.stringify(fixture.expect.error)}, the tool returned ${JSON.stringify(item.result)}`,
      );
    else if (!text.includes(fixture.expect.error))
      problems.push(
        `error: expected it to contain ${JSON.stringify(fixture.expect.error)}, got ${JSON.stringify(text.trim())}`,
      );
  }
  return problems;
}

const label = (f: FixtureCase): string =>
  `${f.tool}${f.name ? `: ${f.name}` : ''} (${f.file}${f.index > 0 ? ` #${f.index + 1}` : ''})`;

/** Runs every fixture; writes one line per case and a closing count. Resolves to the outcomes. */
export async function testPlugin(options: PluginTestOptions): Promise<CaseOutcome[]> {
  const dir = path.resolve(options.dir);
  const fixtures = readFixtures(options.fixturesDir ?? path.join(dir, 'fixtures'));
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-plugin-test-'));
  const servers: Array<{ close(): Promise<void> }> = [];
  let gw: InProcessGateway | undefined;
  try {
    const built = await builtFolder(dir, temp);
    const manifest = JSON.parse(fs.readFileSync(path.join(built, 'manifest.json'), 'utf8')) as PluginManifest;
    const replay: Replay = { pending: [], seen: 0, problems: [] };
    const upstreams: Record<string, string> = {};
    for (const host of manifest.egress ?? []) {
      const origin = `https://${host}`;
      const server = await startUpstream((req) => replayNext(replay, origin, req));
      servers.push(server);
      upstreams[origin] = server.origin;
    }
    gw = await startInProcessGateway({
      policy: { upstreams, sandbox: { workers: 1 } },
      pluginDirs: [path.dirname(built)],
    });
    if (!gw.gateway.registry.plugin(manifest.name))
      throw fail('GW_ERR_PLUGIN_INVALID', {
        message: `${manifest.name} did not load: ${gw.gateway.pluginErrors.map((e) => e.message).join('; ') || 'see `workbench plugin validate`'}`,
      });
    const { user, apiKey } = await gw.createUser('plugin-test@workbench.local', 'plugin-test');
    const bench: Bench = { gw, user, apiKey, manifest };
    const outcomes: CaseOutcome[] = [];
    for (const fixture of fixtures) {
      const problems = await runCase(bench, fixture, replay);
      outcomes.push({ fixture, problems });
      options.write(`${problems.length === 0 ? '✔' : '✖'} ${label(fixture)}`);
      for (const p of problems) options.write(`    ${p}`);
    }
    const failed = outcomes.filter((o) => o.problems.length > 0).length;
    options.write(`${outcomes.length - failed} passed, ${failed} failed`);
    return outcomes;
  } finally {
    await gw?.close();
    for (const s of servers) await s.close();
    fs.rmSync(temp, { recursive: true, force: true });
  }
}
