/**
 * @module test/plugins/google-sheets.test
 * Every Google Sheets tool runs through the real gateway and sandbox against a loopback stand-in
 * for sheets.googleapis.com (reached through the policy's origin mapping). One table states, per
 * tool, the request it must make (method, path with the A1 range encoded in it, exact query, JSON
 * body, the injected Bearer token) and its slim result; then A1 quoting of sheet titles (spaces,
 * quotes, "!", titles that look like cells), row checks and bounds, the error mappings (401, 403
 * scopes vs 403/429 rate limits, 403 access, 404, 400) and argument checks made before any request.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'ya29.sheets-plugin-test-token-0001';
const ID = '1AbC-dEf_123';
const BASE = `/v4/spreadsheets`;
const URL_OF = `https://docs.google.com/spreadsheets/d/${ID}/edit#gid=0`;
const SPREADSHEET_FIELDS =
  'spreadsheetId,spreadsheetUrl,properties(title,locale,timeZone),' +
  'sheets(properties(sheetId,title,index,sheetType,hidden,gridProperties(rowCount,columnCount,frozenRowCount,frozenColumnCount))),namedRanges(name)';

type Gateway = TestGateway;
type Json = Record<string, unknown>;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway(
  'google-sheets',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 },
  (s) => ({ upstream, gw } = s),
);

/** Answers "METHOD /path" with the path under /v4/spreadsheets, percent-decoded. */
const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: BASE,
    notFound: (m, path) => ({ error: { code: 404, message: `no route ${m} ${path}`, status: 'NOT_FOUND' } }),
    decode: true,
  });

interface Call {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

/** Exactly these requests: the path as sent under /v4/spreadsheets, the exact query, the JSON body. */
function assertCalls(calls: Call[]): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  calls.forEach((c, i) => {
    const req = reqs[i]!;
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`, `request ${i} carries the Bearer token`);
    assert.equal(req.method, c.method, `request ${i} method`);
    assert.equal(req.path, `${BASE}${c.path}`, `request ${i} path (as sent: a range is one encoded segment)`);
    assert.deepEqual(Object.fromEntries(req.query), c.query ?? {}, `request ${i} query`);
    if (c.body === undefined) assert.equal(req.body, '', `request ${i} has no body`);
    else {
      assert.match(String(req.headers['content-type']), /^application\/json/);
      assert.deepEqual(req.json, c.body, `request ${i} JSON body`);
    }
  });
}

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

const gerr = (code: number, message: string, status: string, extra: Json = {}) => ({
  status: code,
  json: { error: { code, message, status, ...extra } },
});

// ---------- fixtures ----------
const sheetJson = (sheetId: number, title: string, index: number, extra: Json = {}) => ({
  properties: {
    sheetId,
    title,
    index,
    sheetType: 'GRID',
    gridProperties: { rowCount: 1000, columnCount: 26, ...extra },
  },
  conditionalFormats: 'NOISE',
});
const SPREADSHEET = {
  spreadsheetId: ID,
  spreadsheetUrl: URL_OF,
  properties: { title: 'Budget 2025', locale: 'en_US', timeZone: 'Europe/Paris', autoRecalc: 'NOISE' },
  sheets: [
    sheetJson(0, 'Summary', 0, { frozenRowCount: 1 }),
    { properties: { ...sheetJson(77, "Q1 Bob's", 1).properties, hidden: true } },
  ],
  namedRanges: [{ name: 'Totals', namedRangeId: 'NOISE', range: { sheetId: 0 } }],
};
const slimSheet = (sheetId: number, title: string, index: number, extra: Json = {}) => ({
  sheetId,
  title,
  index,
  type: 'GRID',
  rows: 1000,
  columns: 26,
  frozenRows: 0,
  frozenColumns: 0,
  ...extra,
});
const UPDATES = {
  spreadsheetId: ID,
  updatedRange: "'Q1 Bob''s'!A5:C6",
  updatedRows: 2,
  updatedColumns: 3,
  updatedCells: 6,
};
const ROWS = [
  ['2025-01-31', 42, true],
  ['=SUM(B2:B4)', null, ''],
];

interface Case {
  name?: string;
  tool: string;
  args: Json;
  replies: Record<string, RouteReply>;
  calls: Call[];
  result: unknown;
}

const CASES: Case[] = [
  {
    tool: 'sheets_get_spreadsheet',
    args: { spreadsheetId: URL_OF },
    replies: { [`GET /${ID}`]: { json: SPREADSHEET } },
    calls: [{ method: 'GET', path: `/${ID}`, query: { fields: SPREADSHEET_FIELDS } }],
    result: {
      spreadsheetId: ID,
      title: 'Budget 2025',
      url: URL_OF,
      locale: 'en_US',
      timeZone: 'Europe/Paris',
      sheets: [slimSheet(0, 'Summary', 0, { frozenRows: 1 }), slimSheet(77, "Q1 Bob's", 1, { hidden: true })],
      namedRanges: ['Totals'],
    },
  },
  {
    tool: 'sheets_read_values',
    args: { spreadsheetId: ID, sheet: 'Q1 Budget', range: 'A1:C3' },
    replies: {
      [`GET /${ID}/values/'Q1 Budget'!A1:C3`]: {
        json: {
          range: "'Q1 Budget'!A1:C3",
          majorDimension: 'ROWS',
          values: [
            ['Item', 'Cost'],
            ['Pens', '$3.00'],
          ],
        },
      },
    },
    calls: [
      {
        method: 'GET',
        path: `/${ID}/values/'Q1%20Budget'!A1%3AC3`,
        query: { majorDimension: 'ROWS', valueRenderOption: 'FORMATTED_VALUE' },
      },
    ],
    result: {
      range: "'Q1 Budget'!A1:C3",
      majorDimension: 'ROWS',
      values: [
        ['Item', 'Cost'],
        ['Pens', '$3.00'],
      ],
      count: 2,
    },
  },
  {
    name: 'sheets_read_values (raw values by column, a full A1 range as given)',
    tool: 'sheets_read_values',
    args: {
      spreadsheetId: ID,
      range: 'Totals',
      valueRenderOption: 'UNFORMATTED_VALUE',
      majorDimension: 'COLUMNS',
      maxRows: 1,
    },
    replies: {
      [`GET /${ID}/values/Totals`]: {
        json: {
          range: 'Summary!B2:C9',
          majorDimension: 'COLUMNS',
          values: [
            [1, 2],
            [3, 4],
          ],
        },
      },
    },
    calls: [
      {
        method: 'GET',
        path: `/${ID}/values/Totals`,
        query: {
          majorDimension: 'COLUMNS',
          valueRenderOption: 'UNFORMATTED_VALUE',
          dateTimeRenderOption: 'FORMATTED_STRING',
        },
      },
    ],
    result: {
      range: 'Summary!B2:C9',
      majorDimension: 'COLUMNS',
      values: [[1, 2]],
      count: 1,
      truncated: true,
      note: 'Only the first 1 of 2 columns are returned: read a narrower range for the rest.',
    },
  },
  {
    name: 'sheets_read_values (an empty range has no values)',
    tool: 'sheets_read_values',
    args: { spreadsheetId: ID, sheet: 'Summary' },
    replies: { [`GET /${ID}/values/'Summary'`]: { json: { range: 'Summary!A1:Z1000', majorDimension: 'ROWS' } } },
    calls: [
      {
        method: 'GET',
        path: `/${ID}/values/'Summary'`,
        query: { majorDimension: 'ROWS', valueRenderOption: 'FORMATTED_VALUE' },
      },
    ],
    result: { range: 'Summary!A1:Z1000', majorDimension: 'ROWS', values: [], count: 0 },
  },
  {
    tool: 'sheets_append_rows',
    args: { spreadsheetId: ID, sheet: "Q1 Bob's", values: ROWS },
    replies: {
      [`POST /${ID}/values/'Q1 Bob''s':append`]: {
        json: { spreadsheetId: ID, tableRange: "'Q1 Bob''s'!A1:C4", updates: UPDATES },
      },
    },
    calls: [
      {
        method: 'POST',
        path: `/${ID}/values/'Q1%20Bob''s':append`,
        query: { valueInputOption: 'USER_ENTERED', insertDataOption: 'INSERT_ROWS' },
        body: { majorDimension: 'ROWS', values: ROWS },
      },
    ],
    result: {
      spreadsheetId: ID,
      tableRange: "'Q1 Bob''s'!A1:C4",
      updatedRange: "'Q1 Bob''s'!A5:C6",
      updatedRows: 2,
      updatedColumns: 3,
      updatedCells: 6,
    },
  },
  {
    name: 'sheets_append_rows (RAW, overwrite, columns A:C)',
    tool: 'sheets_append_rows',
    args: {
      spreadsheetId: ID,
      sheet: 'Log',
      range: 'A:C',
      values: [['x']],
      valueInputOption: 'RAW',
      insertDataOption: 'OVERWRITE',
    },
    replies: {
      [`POST /${ID}/values/'Log'!A:C:append`]: {
        json: {
          spreadsheetId: ID,
          updates: { spreadsheetId: ID, updatedRange: 'Log!A1', updatedRows: 1, updatedColumns: 1, updatedCells: 1 },
        },
      },
    },
    calls: [
      {
        method: 'POST',
        path: `/${ID}/values/'Log'!A%3AC:append`,
        query: { valueInputOption: 'RAW', insertDataOption: 'OVERWRITE' },
        body: { majorDimension: 'ROWS', values: [['x']] },
      },
    ],
    result: {
      spreadsheetId: ID,
      tableRange: null,
      updatedRange: 'Log!A1',
      updatedRows: 1,
      updatedColumns: 1,
      updatedCells: 1,
    },
  },
  {
    tool: 'sheets_update_values',
    args: { spreadsheetId: ID, sheet: "Q1 Bob's", range: 'A5', values: ROWS },
    replies: { [`PUT /${ID}/values/'Q1 Bob''s'!A5`]: { json: UPDATES } },
    calls: [
      {
        method: 'PUT',
        path: `/${ID}/values/'Q1%20Bob''s'!A5`,
        query: { valueInputOption: 'USER_ENTERED' },
        body: { majorDimension: 'ROWS', values: ROWS },
      },
    ],
    result: {
      spreadsheetId: ID,
      updatedRange: "'Q1 Bob''s'!A5:C6",
      updatedRows: 2,
      updatedColumns: 3,
      updatedCells: 6,
    },
  },
  {
    tool: 'sheets_clear_values',
    args: { spreadsheetId: ID, range: "'Old data'!A2:F" },
    replies: {
      [`POST /${ID}/values/'Old data'!A2:F:clear`]: {
        json: { spreadsheetId: ID, clearedRange: "'Old data'!A2:F1000" },
      },
    },
    calls: [{ method: 'POST', path: `/${ID}/values/'Old%20data'!A2%3AF:clear`, body: {} }],
    result: { spreadsheetId: ID, clearedRange: "'Old data'!A2:F1000" },
  },
  {
    tool: 'sheets_create_spreadsheet',
    args: { title: 'Team budget', sheets: ['Summary', 'Q1 Data'], locale: 'en_GB', timeZone: 'Europe/London' },
    replies: {
      'POST ': {
        json: {
          spreadsheetId: 'new-1',
          spreadsheetUrl: 'https://docs.google.com/spreadsheets/d/new-1/edit',
          properties: { title: 'Team budget' },
          sheets: [sheetJson(0, 'Summary', 0), sheetJson(123, 'Q1 Data', 1)],
        },
      },
    },
    calls: [
      {
        method: 'POST',
        path: '',
        query: {
          fields:
            'spreadsheetId,spreadsheetUrl,properties(title),sheets(properties(sheetId,title,index,sheetType,gridProperties(rowCount,columnCount)))',
        },
        body: {
          properties: { title: 'Team budget', locale: 'en_GB', timeZone: 'Europe/London' },
          sheets: [{ properties: { title: 'Summary' } }, { properties: { title: 'Q1 Data' } }],
        },
      },
    ],
    result: {
      spreadsheetId: 'new-1',
      title: 'Team budget',
      url: 'https://docs.google.com/spreadsheets/d/new-1/edit',
      sheets: [slimSheet(0, 'Summary', 0), slimSheet(123, 'Q1 Data', 1)],
    },
  },
  {
    tool: 'sheets_add_sheet',
    args: { spreadsheetId: ID, title: 'March', index: 2, rows: 200, columns: 10 },
    replies: {
      [`POST /${ID}:batchUpdate`]: {
        json: {
          spreadsheetId: ID,
          replies: [
            {
              addSheet: {
                properties: {
                  sheetId: 555,
                  title: 'March',
                  index: 2,
                  sheetType: 'GRID',
                  gridProperties: { rowCount: 200, columnCount: 10 },
                },
              },
            },
          ],
        },
      },
    },
    calls: [
      {
        method: 'POST',
        path: `/${ID}:batchUpdate`,
        body: {
          requests: [
            {
              addSheet: {
                properties: { title: 'March', index: 2, gridProperties: { rowCount: 200, columnCount: 10 } },
              },
            },
          ],
        },
      },
    ],
    result: {
      spreadsheetId: ID,
      sheetId: 555,
      title: 'March',
      index: 2,
      type: 'GRID',
      rows: 200,
      columns: 10,
      frozenRows: 0,
      frozenColumns: 0,
    },
  },
];

describe('google-sheets tools: request made and slim result', () => {
  for (const c of CASES) {
    test(c.name ?? c.tool, async () => {
      route(c.replies);
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      assertCalls(c.calls);
    });
  }

  test('the table covers every tool of the manifest', () => {
    const tools = new Set(gw.gateway.registry.plugin('google-sheets')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(new Set(CASES.map((c) => c.tool)), tools);
  });
});

describe('google-sheets A1 notation: a sheet title is quoted, a quote in it doubled', () => {
  const rangeSent = async (args: Json): Promise<{ decoded: string; raw: string }> => {
    upstream.requests.length = 0;
    upstream.setHandler(() => ({ json: { range: 'x', values: [] } }));
    await ok('sheets_read_values', { spreadsheetId: ID, ...args });
    const raw = upstream.last().path.slice(`${BASE}/${ID}/values/`.length);
    return { decoded: decodeURIComponent(raw), raw };
  };
  const cases: Array<[Json, string]> = [
    [{ sheet: 'Sheet1', range: 'A1:B2' }, "'Sheet1'!A1:B2"],
    [{ sheet: 'Q1 Budget' }, "'Q1 Budget'"],
    [{ sheet: "Bob's", range: 'A:A' }, "'Bob''s'!A:A"],
    [{ sheet: "''", range: '1:1' }, "''''''!1:1"],
    [{ sheet: 'A1', range: 'B2' }, "'A1'!B2"],
    [{ sheet: 'Costs!2025', range: 'C3' }, "'Costs!2025'!C3"],
    [{ sheet: '2025 Sales #1 (EUR)' }, "'2025 Sales #1 (EUR)'"],
    [{ range: "'My Sheet'!A1:D5" }, "'My Sheet'!A1:D5"],
  ];
  for (const [args, expected] of cases) {
    test(`${JSON.stringify(args)} → ${expected}`, async () => {
      assert.equal((await rangeSent(args)).decoded, expected);
    });
  }

  test('the range is one percent-encoded path segment (a space, "#" or "?" cannot leave it)', async () => {
    const { raw } = await rangeSent({ sheet: 'Q1 #2? a/b', range: 'A1:B2' });
    assert.equal(raw, "'Q1%20%232%3F%20a%2Fb'!A1%3AB2");
    assert.equal(upstream.last().url.split('?')[1], 'majorDimension=ROWS&valueRenderOption=FORMATTED_VALUE');
  });
});

describe('google-sheets error mapping', () => {
  const read = { spreadsheetId: ID, sheet: 'Summary' };
  const cases: Array<[string, string, Json, UpstreamReply, RegExp]> = [
    [
      '401 invalid token',
      'sheets_get_spreadsheet',
      { spreadsheetId: ID },
      gerr(401, 'Request had invalid authentication credentials.', 'UNAUTHENTICATED'),
      /rejected the access token \(401\).*reconnect google-sheets/,
    ],
    [
      '403 insufficient scopes',
      'sheets_append_rows',
      { ...read, values: [['a']] },
      gerr(403, 'Request had insufficient authentication scopes.', 'PERMISSION_DENIED', {
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
            domain: 'googleapis.com',
          },
        ],
      }),
      /lacks the OAuth scope needed to append rows to 'Summary' of spreadsheet 1AbC-dEf_123 \(403; needs https:\/\/www\.googleapis\.com\/auth\/spreadsheets\)/,
    ],
    [
      '403 no access',
      'sheets_update_values',
      { ...read, range: 'A1', values: [['a']] },
      gerr(403, 'The caller does not have permission', 'PERMISSION_DENIED'),
      /refused to write 'Summary'!A1 of spreadsheet .* \(403\): The caller does not have permission\. Ask its owner to share it/,
    ],
    [
      '403 rate limit',
      'sheets_read_values',
      read,
      gerr(403, 'Rate Limit Exceeded', 'PERMISSION_DENIED', {
        errors: [{ reason: 'rateLimitExceeded', domain: 'usageLimits' }],
      }),
      /rate limited the request to read 'Summary' of spreadsheet .* \(403\): Sheets quotas are per minute/,
    ],
    [
      '429 quota',
      'sheets_read_values',
      read,
      {
        ...gerr(
          429,
          "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per user'",
          'RESOURCE_EXHAUSTED',
        ),
        headers: { 'retry-after': '30' },
      },
      /rate limited .* \(429\): retry after 30 seconds/,
    ],
    [
      '404 not found',
      'sheets_get_spreadsheet',
      { spreadsheetId: ID },
      gerr(404, 'Requested entity was not found.', 'NOT_FOUND'),
      /found nothing while trying to read spreadsheet 1AbC-dEf_123 \(404\): Requested entity was not found/,
    ],
    [
      '400 bad range',
      'sheets_read_values',
      read,
      gerr(400, "Unable to parse range: 'Summary'", 'INVALID_ARGUMENT'),
      /refused to read 'Summary' of spreadsheet .* \(400\): Unable to parse range: 'Summary'/,
    ],
    [
      '400 duplicate sheet',
      'sheets_add_sheet',
      { spreadsheetId: ID, title: 'Summary' },
      gerr(
        400,
        'Invalid requests[0].addSheet: A sheet with the name "Summary" already exists. Please enter another name.',
        'INVALID_ARGUMENT',
      ),
      /refused to add the sheet "Summary".*already exists/,
    ],
    [
      '500 server error',
      'sheets_clear_values',
      read,
      { status: 500, body: 'oops' },
      /server error \(500\).*retry later/,
    ],
  ];
  for (const [name, tool, args, reply, pattern] of cases) {
    test(name, async () => {
      upstream.requests.length = 0;
      upstream.setHandler(() => reply);
      await fails(tool, args, pattern);
      assert.equal(upstream.requests.length, 1);
    });
  }
});

describe('google-sheets argument checks happen before any request', () => {
  const big = Array.from({ length: 100 }, () => Array.from({ length: 201 }, () => 1));
  const cases: Array<[string, Json, RegExp]> = [
    ['sheets_read_values', { spreadsheetId: ID }, /Give sheet \(a sheet title\), range/],
    ['sheets_read_values', { spreadsheetId: ID, sheet: 'A', range: "'B'!A1" }, /give range as cells only/],
    // a range of only dots would be a dot segment of the URL (".." → the spreadsheet itself)
    ['sheets_read_values', { spreadsheetId: ID, range: '..' }, /range "\.\." is not an A1 range/],
    ['sheets_read_values', { spreadsheetId: ID, range: ' . ' }, /range "\." is not an A1 range/],
    ['sheets_update_values', { spreadsheetId: ID, range: '..', values: [['x']] }, /range "\.\." is not an A1 range/],
    ['sheets_append_rows', { spreadsheetId: ID, range: '...', values: [['x']] }, /range "\.\.\." is not an A1 range/],
    ['sheets_clear_values', { spreadsheetId: ID, range: '.' }, /range "\." is not an A1 range/],
    [
      'sheets_read_values',
      { spreadsheetId: 'https://example.com/x y' },
      /neither a spreadsheet id nor a Google Sheets link/,
    ],
    ['sheets_read_values', { spreadsheetId: ID, sheet: 'A', maxRows: 0 }, /Invalid arguments for sheets_read_values/],
    ['sheets_append_rows', { spreadsheetId: ID, sheet: 'A', values: [] }, /Invalid arguments for sheets_append_rows/],
    [
      'sheets_append_rows',
      { spreadsheetId: ID, sheet: 'A', values: ['a', 'b'] },
      /Invalid arguments for sheets_append_rows/,
    ],
    [
      'sheets_append_rows',
      { spreadsheetId: ID, sheet: 'A', values: [[{ a: 1 }]] },
      /Invalid arguments for sheets_append_rows/,
    ],
    [
      'sheets_append_rows',
      { spreadsheetId: ID, sheet: 'A', values: [[['nested']]] },
      /Invalid arguments for sheets_append_rows/,
    ],
    [
      'sheets_append_rows',
      { spreadsheetId: ID, sheet: 'A', values: [Array(501).fill('x')] },
      /Invalid arguments for sheets_append_rows/,
    ],
    [
      'sheets_append_rows',
      { spreadsheetId: ID, sheet: 'A', values: big },
      /100 rows × 201 columns is more than 20000 cells in one call/,
    ],
    [
      'sheets_update_values',
      { spreadsheetId: ID, sheet: 'A', values: [['x']] },
      /Invalid arguments for sheets_update_values/,
    ],
    [
      'sheets_update_values',
      { spreadsheetId: ID, range: 'A1', values: [['x'.repeat(50001)]] },
      /Invalid arguments for sheets_update_values/,
    ],
    ['sheets_create_spreadsheet', { title: 'x', sheets: ['Data', 'data'] }, /"data" is given twice/],
    ['sheets_create_spreadsheet', { title: 'x', sheets: [] }, /Invalid arguments for sheets_create_spreadsheet/],
    ['sheets_add_sheet', { spreadsheetId: ID, title: 'x', rows: 0 }, /Invalid arguments for sheets_add_sheet/],
  ];
  for (const [tool, args, pattern] of cases) {
    test(`${tool} ${JSON.stringify(args).slice(0, 120)}`, async () => {
      route({});
      await fails(tool, args, pattern);
      assert.equal(upstream.requests.length, 0);
    });
  }
});
