/**
 * @module test/plugins/clevertap.test
 * Every CleverTap tool runs through the real gateway and sandbox against loopback stand-ins for
 * two regional hosts (in1 and eu1, reached through the policy's origin mapping), with one
 * connection holding two projects. Per tool: the requests it makes (method, path, exact query, JSON
 * body, the account-id header the plugin sets and the passcode the gateway adds for that project
 * only) and its slim result. Then CleverTap's asynchronous pattern: a query answered "partial" is
 * polled by its req_id (a 64-bit id kept exactly), a query not ready within the call's request
 * or time budget comes back "running" with the reqId to collect it, cursors page events and
 * profiles; the read-only request's allow-list; and the error mappings, none quoting a passcode.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { startUpstream, type RecordedRequest, type Upstream, type UpstreamReply } from '../helpers/upstream.js';

const PROD = { name: 'Production', accountId: 'W8R-PROD-1', passcode: 'SCX-prod-passcode-7f3a', region: 'in1' };
const STAGE = { name: 'Staging', accountId: 'W8R-STAGE-2', passcode: 'SCX-stage-passcode-9b1c', region: 'eu1' };
const CREDENTIAL = {
  values: { projects: JSON.stringify([PROD, STAGE]), defaultProject: 'Production' },
};
/** a req_id past 2^53: JSON.parse would round it */
const BIG_REQ = '7268375392719254321';

let in1: Upstream;
let eu1: Upstream;
let gw: TestGateway;

type Route = (req: RecordedRequest) => UpstreamReply | Promise<UpstreamReply>;
/** Answers "METHOD /path" (path under /1) from `routes`, in order for a list; records both hosts' requests. */
function routes(up: Upstream, table: Record<string, UpstreamReply | Route | Array<UpstreamReply | Route>>): void {
  up.requests.length = 0;
  const seen: Record<string, number> = {};
  up.setHandler((req) => {
    const key = `${req.method} ${req.path.replace(/^\/1/, '')}`;
    const entry = table[key];
    if (!entry) return { status: 404, json: { status: 'fail', error: `no route ${key}`, code: 404 } };
    const n = (seen[key] = (seen[key] ?? 0) + 1);
    const reply = Array.isArray(entry) ? entry[Math.min(n, entry.length) - 1] : entry;
    return typeof reply === 'function' ? reply(req) : (reply as UpstreamReply);
  });
}

before(async () => {
  in1 = await startUpstream();
  eu1 = await startUpstream();
  gw = await startPluginGateway('clevertap', in1, CREDENTIAL, { more: { 'https://eu1.api.clevertap.com': eu1 } });
});
after(async () => {
  await gw?.close();
  await in1?.close();
  await eu1?.close();
});

const { ok, fails } = toolCalls(() => gw, [PROD.passcode, STAGE.passcode]);

interface Call {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

/** Exactly these requests at `up`, each for `project`: its account id, its passcode, JSON. */
function assertCalls(up: Upstream, project: typeof PROD, calls: Call[]): void {
  const reqs = up.requests;
  assert.equal(reqs.length, calls.length, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  calls.forEach((c, i) => {
    const req = reqs[i] as RecordedRequest;
    assert.equal(req.method, c.method, `request ${i} method`);
    assert.equal(req.path, `/1${c.path}`, `request ${i} path`);
    assert.deepEqual(Object.fromEntries(req.query), c.query ?? {}, `request ${i} query`);
    assert.equal(req.headers['x-clevertap-account-id'], project.accountId, `request ${i} names its project`);
    assert.equal(req.headers['x-clevertap-passcode'], project.passcode, `request ${i} carries that project's passcode`);
    assert.match(String(req.headers['content-type']), /^application\/json/);
    if (c.body === undefined) assert.equal(req.body, '', `request ${i} has no body`);
    else assert.deepEqual(req.json, c.body, `request ${i} JSON body`);
  });
}

const PROD_SHOWN = { name: 'Production', accountId: PROD.accountId, region: 'in1' };
const STAGE_SHOWN = { name: 'Staging', accountId: STAGE.accountId, region: 'eu1' };
const RANGE = { from: '2026-06-01', to: '20260607' };
const RANGE_N = { from: 20260601, to: 20260607 };

describe('projects', () => {
  test('clevertap_list_projects lists the projects without passcodes, and the default', async () => {
    routes(in1, {});
    const r = await ok('clevertap_list_projects', {});
    assert.deepEqual(r.projects, [
      { ...PROD_SHOWN, default: true },
      { ...STAGE_SHOWN, default: false },
    ]);
    assert.deepEqual(r.defaultProject, PROD_SHOWN);
    assert.match(r.defaultFrom, /Default project/);
    assert.equal(in1.requests.length, 0, 'read from the connection, not the API');
  });

  test('project picks another project by name or account id: its region, its account id, its passcode', async () => {
    routes(in1, {});
    for (const project of ['staging', STAGE.accountId]) {
      routes(eu1, { 'POST /now.json': { json: { status: 'success', users: { total: 12 } } } });
      const r = await ok('clevertap_get_real_time_counts', { project });
      assert.deepEqual(r, { project: STAGE_SHOWN, users: { total: 12 } });
      assertCalls(eu1, STAGE, [{ method: 'POST', path: '/now.json', body: {} }]);
    }
    assert.equal(in1.requests.length, 0);
    await fails(
      'clevertap_get_real_time_counts',
      { project: 'Test' },
      /No project "Test".*"Production" \(W8R-PROD-1, in1\), "Staging"/,
    );
  });
});

describe('counts and trends', () => {
  test('clevertap_get_event_count: POST /counts/events.json with YYYYMMDD numbers and property filters', async () => {
    routes(in1, { 'POST /counts/events.json': { json: { status: 'success', count: 4211 } } });
    const filters = [{ name: 'Amount', operator: 'greater_than', value: 100 }];
    const r = await ok('clevertap_get_event_count', { eventName: 'Charged', ...RANGE, eventProperties: filters });
    assert.deepEqual(r, { project: PROD_SHOWN, eventName: 'Charged', ...RANGE, count: 4211 });
    assertCalls(in1, PROD, [
      {
        method: 'POST',
        path: '/counts/events.json',
        body: { event_name: 'Charged', ...RANGE_N, event_properties: filters },
      },
    ]);
  });

  test('a partial answer is polled by its req_id, kept exactly past 2^53, until it succeeds', async () => {
    const partial: UpstreamReply = {
      body: `{"status":"partial","req_id":${BIG_REQ}}`,
      headers: { 'content-type': 'application/json' },
    };
    routes(in1, {
      'POST /counts/profiles.json': partial,
      'GET /counts/profiles.json': [partial, { json: { status: 'success', count: 77 } }],
    });
    const r = await ok('clevertap_get_profile_count', { eventName: 'App Launched', ...RANGE });
    assert.deepEqual(r, { project: PROD_SHOWN, eventName: 'App Launched', ...RANGE, count: 77 });
    assertCalls(in1, PROD, [
      { method: 'POST', path: '/counts/profiles.json', body: { event_name: 'App Launched', ...RANGE_N } },
      { method: 'GET', path: '/counts/profiles.json', query: { req_id: BIG_REQ } },
      { method: 'GET', path: '/counts/profiles.json', query: { req_id: BIG_REQ } },
    ]);
  });

  test('a query still running after the polls one call allows comes back "running"; the reqId collects it later', async () => {
    const partial: UpstreamReply = { json: { status: 'partial', req_id: 5551 } };
    routes(in1, { 'POST /counts/events.json': partial, 'GET /counts/events.json': partial });
    const r = await ok('clevertap_get_event_count', { eventName: 'Charged', ...RANGE });
    assert.equal(r.status, 'running');
    assert.equal(r.reqId, '5551');
    assert.match(
      r.note,
      /call clevertap_get_event_count again in a few seconds with the same arguments plus reqId "5551"/i,
    );
    assert.equal(in1.requests.length, 9, 'the query and 8 polls, then it stops');
    routes(in1, { 'GET /counts/events.json': { json: { status: 'success', count: 9 } } });
    const done = await ok('clevertap_get_event_count', { eventName: 'Charged', ...RANGE, reqId: '5551' });
    assert.equal(done.count, 9);
    assertCalls(in1, PROD, [{ method: 'GET', path: '/counts/events.json', query: { req_id: '5551' } }]);
  });

  test('polling stops within the call’s request budget and its wall time, handing back the reqId', async () => {
    const partial: UpstreamReply = { json: { status: 'partial', req_id: 31 } };
    const slow = async (): Promise<UpstreamReply> => {
      await new Promise((r) => setTimeout(r, 700));
      return partial;
    };
    const tight = await startPluginGateway('clevertap', in1, CREDENTIAL, {
      more: { 'https://eu1.api.clevertap.com': eu1 },
      policy: { plugins: { clevertap: { limits: { maxRequestsPerCall: 3 } } } },
    });
    const short = await startPluginGateway('clevertap', in1, CREDENTIAL, {
      more: { 'https://eu1.api.clevertap.com': eu1 },
      policy: { plugins: { clevertap: { limits: { wallMsPerCall: 6000 } } } },
    });
    try {
      routes(in1, { 'POST /counts/trends.json': partial, 'GET /counts/trends.json': partial });
      const budget = (await tight.execute('clevertap_get_daily_active_users', RANGE)) as { result: { reqId: string } };
      assert.equal(budget.result.reqId, '31');
      assert.equal(in1.requests.length, 3, 'every request the budget allows, none refused');
      routes(in1, { 'POST /counts/trends.json': slow, 'GET /counts/trends.json': slow });
      const t0 = Date.now();
      const timed = (await short.execute('clevertap_get_daily_active_users', RANGE)) as { result: { status: string } };
      assert.equal(timed.result.status, 'running', JSON.stringify(timed));
      assert.ok(Date.now() - t0 < 5500, 'answered before the 6 s deadline');
      assert.ok(in1.requests.length >= 2 && in1.requests.length <= 4, `stopped early: ${in1.requests.length} requests`);
    } finally {
      await tight.close();
      await short.close();
    }
  });

  test('clevertap_get_event_trends: groups per period, unique or summed; series in period order', async () => {
    routes(in1, {
      'POST /counts/trends.json': {
        json: {
          status: 'success',
          daily: { '20260602': 5, '20260601': 3 },
          weekly: { '20260601': 8 },
        },
      },
    });
    const r = await ok('clevertap_get_event_trends', {
      eventName: 'Charged',
      ...RANGE,
      periods: ['daily', 'weekly'],
      sumEventProperty: 'Amount',
    });
    assert.deepEqual(r, {
      project: PROD_SHOWN,
      eventName: 'Charged',
      ...RANGE,
      measure: 'sum of Amount',
      trends: {
        daily: [
          { period: '20260601', value: 3 },
          { period: '20260602', value: 5 },
        ],
        weekly: [{ period: '20260601', value: 8 }],
      },
    });
    assertCalls(in1, PROD, [
      {
        method: 'POST',
        path: '/counts/trends.json',
        body: {
          event_name: 'Charged',
          ...RANGE_N,
          unique: false,
          sum_event_prop: 'Amount',
          groups: { daily: { trend_type: 'daily' }, weekly: { trend_type: 'weekly' } },
        },
      },
    ]);
  });

  for (const [tool, event, field] of [
    ['clevertap_get_daily_active_users', 'App Launched', 'users'],
    ['clevertap_get_uninstall_report', 'App Uninstalled', 'uninstalls'],
  ] as const)
    test(`${tool}: the daily unique users of "${event}"`, async () => {
      routes(in1, { 'POST /counts/trends.json': { json: { status: 'success', daily: { '20260601': 40 } } } });
      const r = await ok(tool, RANGE);
      assert.deepEqual(r, { project: PROD_SHOWN, event, ...RANGE, days: [{ period: '20260601', [field]: 40 }] });
      assertCalls(in1, PROD, [
        {
          method: 'POST',
          path: '/counts/trends.json',
          body: { event_name: event, ...RANGE_N, unique: true, groups: { daily: { trend_type: 'daily' } } },
        },
      ]);
    });

  test('clevertap_get_top_property_counts: one group per property, results in the order asked', async () => {
    routes(in1, {
      'POST /counts/top.json': {
        json: { status: 'success', p1: { Shoes: 30, Hats: 12 }, p2: { Mumbai: 8 } },
      },
    });
    const r = await ok('clevertap_get_top_property_counts', {
      eventName: 'Charged',
      ...RANGE,
      properties: [
        { name: 'Category', top: 2 },
        { name: 'City', type: 'geo_fields', order: 'asc' },
      ],
    });
    assert.deepEqual(r.properties, [
      { name: 'Category', type: 'event_properties', counts: { Shoes: 30, Hats: 12 } },
      { name: 'City', type: 'geo_fields', counts: { Mumbai: 8 } },
    ]);
    assertCalls(in1, PROD, [
      {
        method: 'POST',
        path: '/counts/top.json',
        body: {
          event_name: 'Charged',
          ...RANGE_N,
          groups: {
            p1: { property_type: 'event_properties', name: 'Category', top_n: 2, order: 'desc' },
            p2: { property_type: 'geo_fields', name: 'City', top_n: 10, order: 'asc' },
          },
        },
      },
    ]);
  });

  test('clevertap_get_real_time_counts: POST /now.json, split by user type when asked', async () => {
    routes(in1, { 'POST /now.json': { json: { status: 'success', users: { total: 5, user_type: { new: 2 } } } } });
    const r = await ok('clevertap_get_real_time_counts', { byUserType: true });
    assert.deepEqual(r, { project: PROD_SHOWN, users: { total: 5, user_type: { new: 2 } } });
    assertCalls(in1, PROD, [{ method: 'POST', path: '/now.json', body: { user_type: true } }]);
  });
});

describe('events and profiles', () => {
  const ev = (n: number) => ({ ts: 20260601100000 + n, event_props: { Amount: n }, profile: { identity: `u${n}` } });

  test('clevertap_get_events: the cursor POST, then batches by cursor until the end', async () => {
    routes(in1, {
      'POST /events.json': { json: { status: 'success', cursor: 'CUR-1' } },
      'GET /events.json': (req) =>
        req.query.get('cursor') === 'CUR-1'
          ? { json: { status: 'success', records: [ev(1), ev(2)], next_cursor: 'CUR-2' } }
          : { json: { status: 'success', records: [ev(3)] } },
    });
    const r = await ok('clevertap_get_events', { eventName: 'Charged', ...RANGE, batchSize: 2 });
    assert.deepEqual(r, {
      project: PROD_SHOWN,
      eventName: 'Charged',
      records: [ev(1), ev(2), ev(3)],
      count: 3,
      next: null,
    });
    assertCalls(in1, PROD, [
      {
        method: 'POST',
        path: '/events.json',
        query: { batch_size: '2', app: 'false', profile: 'false', events: 'false' },
        body: { event_name: 'Charged', ...RANGE_N },
      },
      { method: 'GET', path: '/events.json', query: { cursor: 'CUR-1' } },
      { method: 'GET', path: '/events.json', query: { cursor: 'CUR-2' } },
    ]);
  });

  test('clevertap_get_events stops at limit with next; cursor goes on without a new POST', async () => {
    routes(in1, {
      'POST /events.json': { json: { status: 'success', cursor: 'CUR-1' } },
      'GET /events.json': (req) =>
        req.query.get('cursor') === 'CUR-1'
          ? { json: { status: 'success', records: [ev(1), ev(2)], next_cursor: 'CUR-2' } }
          : { json: { status: 'success', records: [ev(3)] } },
    });
    const first = await ok('clevertap_get_events', { eventName: 'Charged', ...RANGE, limit: 2, batchSize: 2 });
    assert.equal(first.count, 2);
    assert.equal(first.next, 'CUR-2');
    assert.match(first.note, /cursor set to next/);
    in1.requests.length = 0;
    const rest = await ok('clevertap_get_events', { eventName: 'Charged', ...RANGE, cursor: 'CUR-2' });
    assert.deepEqual(rest.records, [ev(3)]);
    assertCalls(in1, PROD, [{ method: 'GET', path: '/events.json', query: { cursor: 'CUR-2' } }]);
  });

  test('clevertap_get_profiles_by_event: cursor POST to /profiles.json, then the batch', async () => {
    const profile = { identity: 'u1', name: 'Asha', email: 'asha@example.com', platform: 'Android' };
    routes(in1, {
      'POST /profiles.json': { json: { status: 'success', cursor: 'P-1' } },
      'GET /profiles.json': { json: { status: 'success', records: [profile] } },
    });
    const r = await ok('clevertap_get_profiles_by_event', { eventName: 'Charged', ...RANGE, withEventSummary: true });
    assert.deepEqual(r, { project: PROD_SHOWN, eventName: 'Charged', records: [profile], count: 1, next: null });
    assertCalls(in1, PROD, [
      {
        method: 'POST',
        path: '/profiles.json',
        query: { batch_size: '100', profile: 'false', events: 'true' },
        body: { event_name: 'Charged', ...RANGE_N },
      },
      { method: 'GET', path: '/profiles.json', query: { cursor: 'P-1' } },
    ]);
  });

  test('clevertap_get_profile: GET /profile.json by identity, email or objectId (exactly one)', async () => {
    const record = { name: 'Asha', email: 'asha@example.com', identity: 'u1', profileData: { Tier: 'gold' } };
    for (const [key, value] of [
      ['identity', 'u1'],
      ['email', 'asha@example.com'],
      ['objectId', '__g1b2c3'],
    ] as const) {
      routes(in1, { 'GET /profile.json': { json: { status: 'success', record } } });
      const r = await ok('clevertap_get_profile', { [key]: value });
      assert.deepEqual(r, { project: PROD_SHOWN, found: true, profile: record });
      assertCalls(in1, PROD, [{ method: 'GET', path: '/profile.json', query: { [key]: value } }]);
    }
    await fails(
      'clevertap_get_profile',
      { identity: 'u1', email: 'a@b.c' },
      /exactly one of identity, email or objectId/,
    );
  });
});

describe('campaigns and messages', () => {
  test('clevertap_list_campaigns: POST /targets/list.json, slim rows', async () => {
    routes(in1, {
      'POST /targets/list.json': {
        json: {
          status: 'success',
          targets: [{ id: 1457429935, name: 'June promo', scheduled_on: 202606011605, status: 'completed', extra: 1 }],
        },
      },
    });
    const r = await ok('clevertap_list_campaigns', RANGE);
    assert.deepEqual(r, {
      project: PROD_SHOWN,
      campaigns: [{ id: 1457429935, name: 'June promo', scheduledOn: 202606011605, status: 'completed' }],
      count: 1,
    });
    assertCalls(in1, PROD, [{ method: 'POST', path: '/targets/list.json', body: RANGE_N }]);
  });

  test('clevertap_get_campaign_report: POST /targets/result.json {id}', async () => {
    routes(in1, {
      'POST /targets/result.json': { json: { status: 'success', result: { sent: 100, delivered: 90, clicked: 7 } } },
    });
    const r = await ok('clevertap_get_campaign_report', { campaignId: 1457429935 });
    assert.deepEqual(r, {
      project: PROD_SHOWN,
      campaignId: 1457429935,
      report: { sent: 100, delivered: 90, clicked: 7 },
    });
    assertCalls(in1, PROD, [{ method: 'POST', path: '/targets/result.json', body: { id: 1457429935 } }]);
  });

  test('clevertap_get_message_report: POST /message/report.json, dates as strings, filters as lists', async () => {
    routes(in1, {
      'POST /message/report.json': { json: { status: 'success', messages: [{ 'message id': 7, sent: 3 }] } },
    });
    const r = await ok('clevertap_get_message_report', {
      ...RANGE,
      channels: ['push', 'email'],
      status: ['completed'],
      labels: ['june'],
      daily: true,
    });
    assert.deepEqual(r, { project: PROD_SHOWN, ...RANGE, report: { messages: [{ 'message id': 7, sent: 3 }] } });
    assertCalls(in1, PROD, [
      {
        method: 'POST',
        path: '/message/report.json',
        body: {
          from: '20260601',
          to: '20260607',
          channel: ['push', 'email'],
          status: ['completed'],
          label: ['june'],
          daily: true,
        },
      },
    ]);
  });
});

describe('clevertap_request (read-only)', () => {
  test('sends an allow-listed read with its query and body, and polls a partial answer', async () => {
    routes(in1, {
      'POST /counts/events.json': { json: { status: 'partial', req_id: 88 } },
      'GET /counts/events.json': { json: { status: 'success', count: 3 } },
    });
    const body = { event_name: 'Charged', from: 20260601, to: 20260602 };
    const r = await ok('clevertap_request', { path: '/counts/events.json', body });
    assert.deepEqual(r, { project: PROD_SHOWN, path: '/counts/events.json', status: 'success', data: { count: 3 } });
    assertCalls(in1, PROD, [
      { method: 'POST', path: '/counts/events.json', body },
      { method: 'GET', path: '/counts/events.json', query: { req_id: '88' } },
    ]);
    routes(in1, { 'GET /profile.json': { json: { status: 'success', record: { identity: 'u1' } } } });
    const got = await ok('clevertap_request', { path: '/profile.json', method: 'GET', query: { identity: 'u1' } });
    assert.deepEqual(got.data, { record: { identity: 'u1' } });
    assertCalls(in1, PROD, [{ method: 'GET', path: '/profile.json', query: { identity: 'u1' } }]);
  });

  test('refuses any other path, a method the path does not take, and a body on GET, before any request', async () => {
    routes(in1, {});
    await fails(
      'clevertap_request',
      { path: '/upload', body: { d: [] } },
      /Invalid arguments for clevertap_request: path/,
    );
    await fails('clevertap_request', { path: '/now.json', method: 'GET' }, /\/now\.json takes POST, not GET/);
    await fails('clevertap_request', { path: '/profile.json', method: 'GET', body: {} }, /GET request has no body/);
    await fails(
      'clevertap_request',
      { path: '/profile.json', method: 'GET', query: { 'a-b': 1 } },
      /not a CleverTap parameter name/,
    );
    assert.equal(in1.requests.length, 0);
  });
});

describe('errors', () => {
  test('401 names the project and what to do; a 200 with status "fail" is an error; neither quotes a passcode', async () => {
    routes(in1, {
      'POST /now.json': { status: 401, json: { status: 'fail', error: 'Invalid Credentials', code: 401 } },
    });
    await fails(
      'clevertap_get_real_time_counts',
      {},
      /refused the account id and passcode of project "Production" \(W8R-PROD-1, in1\) \(401\).*reconnect clevertap.*Invalid Credentials/,
    );
    routes(in1, { 'POST /targets/list.json': { json: { status: 'fail', error: 'from date is too old', code: 400 } } });
    await fails('clevertap_list_campaigns', RANGE, /CleverTap could not list the campaigns: from date is too old/);
  });

  test('429 says to wait; 500 to retry later', async () => {
    routes(in1, {
      'POST /now.json': {
        status: 429,
        headers: { 'retry-after': '3' },
        json: { status: 'fail', error: 'Too many requests' },
      },
    });
    await fails('clevertap_get_real_time_counts', {}, /rate limited.*retry after 3 seconds/);
    routes(in1, { 'POST /now.json': { status: 503, json: { status: 'fail', error: 'down' } } });
    await fails('clevertap_get_real_time_counts', {}, /server error \(503\).*retry later/);
  });

  test('a date that is not a date, or a range the wrong way round, is refused before any request', async () => {
    routes(in1, {});
    await fails(
      'clevertap_get_event_count',
      { eventName: 'Charged', from: '20260231', to: '20260301' },
      /from "20260231" is not a date/,
    );
    await fails('clevertap_get_event_count', { eventName: 'Charged', from: '20260610', to: '20260601' }, /is after to/);
    assert.equal(in1.requests.length, 0);
  });
});
