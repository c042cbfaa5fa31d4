/**
 * @module host/security-report/cases/cross-user
 * Two users of two tenants (Alice, Bob) and one whose tenant may not use the plugin (Olive), each
 * with a credential of their own. Each scenario makes one user reach for what belongs to another:
 * a continuation, a credential on calls made at once, connection settings, module state (after
 * the other's call, and while it is still in flight), the audit trail in the portal, a connection
 * to disconnect, a plugin the tenant's policy forbids. The scenario judges itself; the common
 * checks (secrets, canary, health) apply on top.
 */
import { randomBytes } from 'node:crypto';
import type { AttackCase, ScenarioResult } from '../catalogue.js';
import type { Json } from '../in-process-gateway.js';
import { signInToPortal } from '../portal-session.js';
import type { ScenarioEnv } from '../scenario-env.js';

const marker = (what: string): string => `${what}-${randomBytes(6).toString('hex')}`;
const text = (v: unknown): string => JSON.stringify(v) ?? '';
const judged = (happened: string, problems: (string | false | undefined)[], item?: Json): ScenarioResult => ({
  happened,
  problems: problems.filter((p): p is string => typeof p === 'string'),
  ...(item !== undefined ? { item } : {}),
});

function scenario(
  id: string,
  tries: string,
  handler: string,
  run: (env: ScenarioEnv) => Promise<ScenarioResult>,
): AttackCase {
  return { id, class: 'cross-user', origin: 'new', tries, handler, expected: { outcome: 'any' }, scenario: run };
}

async function continuationOfAnother(env: ScenarioEnv): Promise<ScenarioResult> {
  const secret = marker('alice-only');
  const { item } = await env.run(env.alice, { fill: secret });
  const id = /"continuationId":"([^"]+)"/.exec(text(item))?.[1];
  if (!id)
    return judged('no continuation was offered', [`Alice's large result was not capped: ${text(item).slice(0, 120)}`]);
  const bob = await env.gw.mcpCall('continue_tool_result', { continuationId: id, part: 1 }, env.bob.apiKey);
  const alice = await env.gw.mcpCall('continue_tool_result', { continuationId: id, part: 1 }, env.alice.apiKey);
  return judged(`Bob asked for part 1 of Alice's continuation: ${bob.text.slice(0, 120)}`, [
    bob.text.includes(secret) && "Bob read Alice's stored result",
    !alice.text.includes(secret) && 'control failed: Alice could not read her own continuation',
  ]);
}

async function credentialsAtOnce(env: ScenarioEnv): Promise<ScenarioResult> {
  const calls = [env.alice, env.bob].flatMap((caller) =>
    Array.from({ length: 6 }, (_, i) => env.run(caller, { who: `${caller.name}-${i}` })),
  );
  await Promise.all(calls);
  const seen = env.targets.upstream.requests.filter(
    (r) => r.path === '/echo' && /^(alice|bob)-\d$/.test(r.query.get('who') ?? ''),
  );
  const wrong = seen.filter(
    (r) =>
      r.headers['authorization'] !== `Bearer ${(r.query.get('who')?.startsWith('alice') ? env.alice : env.bob).token}`,
  );
  return judged(`${seen.length} requests of Alice's and Bob's calls made at once`, [
    seen.length < 12 && `only ${seen.length} of 12 requests reached the upstream`,
    wrong.length > 0 &&
      `${wrong.length} request(s) carried another user's credential: ${wrong.map((r) => r.query.get('who')).join(', ')}`,
  ]);
}

async function configPerCaller(env: ScenarioEnv): Promise<ScenarioResult> {
  const [a, b] = await Promise.all([env.run(env.alice), env.run(env.bob)]);
  return judged(
    `Alice saw ${text(a.item.result)}, Bob saw ${text(b.item.result)}`,
    [
      a.item.result?.site !== env.alice.site && "Alice's call did not see her own connection's settings",
      b.item.result?.site !== env.bob.site && "Bob's call did not see his own connection's settings",
      text(b.item).includes(env.alice.site) && "Bob's call saw Alice's settings",
    ],
    b.item,
  );
}

async function stateAfterAnother(env: ScenarioEnv): Promise<ScenarioResult> {
  const secret = marker('alice-state');
  await env.run(env.alice, { stash: secret });
  const { item } = await env.run(env.bob, {});
  return judged(
    `Bob's call, after Alice's stashed a value, saw ${text(item.result)}`,
    [text(item).includes(secret) && "Bob's call saw what Alice's left behind"],
    item,
  );
}

async function stateWhileInFlight(env: ScenarioEnv): Promise<ScenarioResult> {
  const secret = marker('alice-inflight');
  const alice = env.run(env.alice, { stash: secret, hold: 600 });
  await new Promise((resolve) => setTimeout(resolve, 150));
  const bob = await env.run(env.bob, {});
  await alice;
  return judged(
    `Bob's call, while Alice's held a value, saw ${text(bob.item.result)}`,
    [text(bob.item).includes(secret) && "Bob's call saw the state of Alice's call in flight"],
    bob.item,
  );
}

/** Polls a portal page until it holds `want` (audit rows are written in batches). */
async function pageHolding(read: (p: string) => Promise<string>, pathname: string, want: string): Promise<string> {
  let page = '';
  for (let i = 0; i < 20 && !page.includes(want); i++) {
    page = await read(pathname);
    if (!page.includes(want)) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return page;
}

async function auditOfAnother(env: ScenarioEnv): Promise<ScenarioResult> {
  const secret = marker('alice-audit');
  await env.run(env.alice, { fail: secret });
  const alicePage = await pageHolding(await signInToPortal(env.gw.url, env.alice.apiKey), '/activity', secret);
  const readAsBob = await signInToPortal(env.gw.url, env.bob.apiKey);
  const pages = await Promise.all(
    ['/activity', `/activity?integration=${env.plugin.name}`, '/activity?success=failed'].map((p) => readAsBob(p)),
  );
  return judged("Bob read his activity pages after Alice's failed call", [
    !alicePage.includes(secret) && "control failed: Alice's own activity page does not show her call",
    pages.some((p) => p.includes(secret)) && "Bob's activity page shows Alice's call",
  ]);
}

async function disconnectOwnOnly(env: ScenarioEnv): Promise<ScenarioResult> {
  const r = await env.gw.mcpCall('disconnect', { integration: env.plugin.name }, env.bob.apiKey);
  const bob = await env.run(env.bob, { who: 'bob-after' });
  const alice = await env.run(env.alice, { who: 'alice-after' });
  await env.gw.connect(env.plugin.name, env.bob.user, undefined, {
    values: { token: env.bob.token, site: env.bob.site },
  });
  const sent = env.targets.upstream.requests.find((x) => x.query.get('who') === 'alice-after');
  return judged(
    `Bob disconnected (${r.text.slice(0, 80)}); then Bob's call: ${text(bob.item).slice(0, 80)}`,
    [
      bob.item.code !== 'GW_ERR_ENGINE_NOT_CONNECTED' && "Bob's call still ran after he disconnected",
      alice.item.result === undefined && "Alice's call failed after Bob disconnected",
      sent?.headers['authorization'] !== `Bearer ${env.alice.token}` && "Alice's call did not carry her own credential",
    ],
    alice.item,
  );
}

async function forbiddenTenant(env: ScenarioEnv): Promise<ScenarioResult> {
  const { item } = await env.run(env.olive, {});
  const search = await env.gw.mcpCall('search_tools', { query: 'attack cross user probe' }, env.olive.apiKey);
  const listed = [env.plugin.probeTool, ...env.plugin.caseTools].filter((t) => search.text.includes(t));
  return judged(`Olive's call: ${text(item).slice(0, 100)}`, [
    item.code !== 'GW_ERR_POLICY_FORBIDDEN' && "the tenant's policy did not forbid the call",
    listed.length > 0 && `search_tools showed Olive forbidden tools: ${listed.join(', ')}`,
  ]);
}

const ECHO_WHO = `async (ctx, args) => { const res = await ctx.http('https://api.attack.test/echo?who=' + encodeURIComponent(args.who)); return { status: res.status }; }`;
const STATE = `async (ctx, args) => {
  if (args.stash) { globalThis.__stash = args.stash; Object.prototype.__tenantLeak = args.stash; tools.__memory = args.stash; }
  if (args.hold) await ctx.http('https://api.attack.test/slow?ms=' + args.hold);
  return { stash: globalThis.__stash === undefined ? null : String(globalThis.__stash), proto: ({}).__tenantLeak === undefined ? null : String(({}).__tenantLeak), memory: tools.__memory === undefined ? null : String(tools.__memory) };
}`;

export const CROSS_USER_CASES: AttackCase[] = [
  scenario(
    'cu-continuation-of-another-user',
    "Bob pages through a stored oversized result of Alice's with its continuation id.",
    `async (ctx, args) => args.fill + 'c'.repeat(100000)`,
    continuationOfAnother,
  ),
  scenario(
    'cu-credentials-at-once',
    "Alice and Bob call the same plugin at once, 6 calls each: every request must carry its own caller's credential.",
    ECHO_WHO,
    credentialsAtOnce,
  ),
  scenario(
    'cu-connection-settings',
    "Each caller's call reads ctx.config: Bob must never get Alice's connection settings.",
    `async (ctx, args) => ({ site: ctx.config.site })`,
    configPerCaller,
  ),
  scenario(
    'cu-state-left-by-another-user',
    "Alice's call leaves a value in a global, Object.prototype and the module's export object; Bob's next call looks for it.",
    STATE,
    stateAfterAnother,
  ),
  scenario(
    'cu-state-of-call-in-flight',
    "Bob's call looks for the state of Alice's call while hers is still waiting on ctx.http.",
    STATE,
    stateWhileInFlight,
  ),
  scenario(
    'cu-audit-of-another-user',
    "Bob signs in to the portal and reads the activity pages, filtered every way, looking for Alice's failed call.",
    `async (ctx, args) => { if (args.fail) throw new Error('failed on purpose: ' + args.fail); return {}; }`,
    auditOfAnother,
  ),
  scenario(
    'cu-disconnect-affects-own-only',
    "Bob disconnects the plugin: his calls must stop, Alice's must go on with her own credential.",
    ECHO_WHO,
    disconnectOwnOnly,
  ),
  scenario(
    'cu-tenant-policy-forbids',
    "Olive's tenant may not use the plugin: her call must be refused and search_tools must not show its tools.",
    `async (ctx, args) => ({ ran: true })`,
    forbiddenTenant,
  ),
];
