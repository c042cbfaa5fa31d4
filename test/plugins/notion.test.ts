/**
 * @module test/plugins/notion.test
 * Every Notion tool runs through the real gateway and sandbox against a loopback stand-in for
 * api.notion.com (reached through the policy's origin mapping): the request each tool makes (method,
 * /v1 path, query, JSON body, Bearer token and Notion-Version header) and its slim result; then the
 * start_cursor paging, the block tree read as text (nesting, paging, the request budget), the
 * markdown-ish text turned into blocks (100 per request), simple values turned into property shapes
 * by the schema, the id parser (links, dashed and bare ids, refusals before any request), and the
 * error mapping (Notion's `{code, message}`, 400/401/403/404/409/429/5xx).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway, usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'notion-access-token-0123456789';
const BASE = '/v1';

type Gateway = TestGateway;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway('notion', { token: TOKEN }, (s) => ({ upstream, gw } = s));

/** Answers "METHOD /path" (path under /v1); anything else is a 404 in Notion's error shape. */
const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: BASE,
    notFound: (m, path) => ({
      object: 'error',
      status: 404,
      code: 'object_not_found',
      message: `no route ${m} ${path}`,
    }),
  });

type Call = [method: string, path: string, query?: Record<string, string>, body?: unknown];

function assertCalls(calls: Call[]): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  for (const r of reqs) {
    assert.equal(r.headers.authorization, `Bearer ${TOKEN}`, 'every request carries the Bearer token');
    assert.equal(r.headers['notion-version'], '2022-06-28', 'every request names the API version');
  }
  calls.forEach(([method, path, query, body], i) => {
    const req = reqs[i]!;
    assert.equal(req.method, method, `request ${i} method`);
    assert.equal(req.path, `${BASE}${path}`, `request ${i} path`);
    assert.deepEqual(Object.fromEntries(req.query), query ?? {}, `request ${i} query`);
    if (body === undefined) {
      assert.equal(req.body, '', `request ${i} has no body`);
    } else {
      assert.match(String(req.headers['content-type']), /^application\/json/);
      assert.deepEqual(req.json, body, `request ${i} JSON body`);
    }
  });
}

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

// ---------- fixtures ----------

const PAGE_ID = '0123456789abcdef0123456789abcdef';
const PAGE = '01234567-89ab-cdef-0123-456789abcdef';
const DB = 'fedcba98-7654-3210-fedc-ba9876543210';
const ROW = '11111111-2222-3333-4444-555555555555';
const rt = (s: string, href: string | null = null) => ({
  type: 'text',
  text: { content: s, link: href ? { url: href } : null },
  plain_text: s,
  href,
});
const txt = (s: string) => [{ type: 'text', text: { content: s } }];

const RAW_PAGE = {
  object: 'page',
  id: PAGE,
  url: `https://www.notion.so/Roadmap-${PAGE_ID}`,
  created_time: '2025-01-01T00:00:00.000Z',
  last_edited_time: '2025-02-01T00:00:00.000Z',
  archived: false,
  parent: { type: 'workspace', workspace: true },
  properties: { title: { id: 'title', type: 'title', title: [rt('Road'), rt('map')] } },
};
const RAW_ROW = {
  object: 'page',
  id: ROW,
  url: 'https://www.notion.so/Row-11111111222233334444555555555555',
  created_time: '2025-01-01T00:00:00.000Z',
  last_edited_time: '2025-02-02T00:00:00.000Z',
  archived: false,
  parent: { type: 'database_id', database_id: DB },
  properties: {
    Name: { type: 'title', title: [rt('Ship it')] },
    Notes: { type: 'rich_text', rich_text: [rt('see '), rt('spec', 'https://example.com/spec')] },
    Status: { type: 'status', status: { name: 'In progress' } },
    Priority: { type: 'select', select: { name: 'High' } },
    Tags: { type: 'multi_select', multi_select: [{ name: 'a' }, { name: 'b' }] },
    Due: { type: 'date', date: { start: '2025-03-01', end: '2025-03-05' } },
    Owner: {
      type: 'people',
      people: [
        { object: 'user', id: 'u1', name: 'Ada' },
        { object: 'user', id: 'u2' },
      ],
    },
    Done: { type: 'checkbox', checkbox: true },
    Points: { type: 'number', number: 3 },
    Link: { type: 'url', url: 'https://example.com' },
    Blocks: { type: 'relation', relation: [{ id: PAGE }] },
    Formula: { type: 'formula', formula: { type: 'string', string: 'x' } },
  },
};
// a property named "__proto__" must stay a property like any other (an own key, not a prototype)
Object.defineProperty(RAW_ROW.properties, '__proto__', {
  value: { type: 'checkbox', checkbox: false },
  enumerable: true,
});
const ROW_READ = {
  Name: 'Ship it',
  Notes: 'see [spec](https://example.com/spec)',
  Status: 'In progress',
  Priority: 'High',
  Tags: ['a', 'b'],
  Due: '2025-03-01 → 2025-03-05',
  Owner: ['Ada', 'u2'],
  Done: true,
  Points: 3,
  Link: 'https://example.com',
  Blocks: [PAGE],
  Formula: 'x',
};
Object.defineProperty(ROW_READ, '__proto__', { value: false, enumerable: true });
const RAW_DB = {
  object: 'database',
  id: DB,
  url: 'https://www.notion.so/fedcba9876543210fedcba9876543210',
  title: [rt('Tasks')],
  last_edited_time: '2025-02-03T00:00:00.000Z',
  parent: { type: 'page_id', page_id: PAGE },
  properties: {
    Name: { id: 'title', type: 'title', title: {} },
    Status: { type: 'status', status: {} },
    Tags: { type: 'multi_select', multi_select: {} },
    Due: { type: 'date', date: {} },
    Points: { type: 'number', number: {} },
    Done: { type: 'checkbox', checkbox: {} },
    Blocks: { type: 'relation', relation: {} },
    Formula: { type: 'formula', formula: {} },
  },
};
/** A block id as Notion gives it (dashed 32 hex), from a short tag such as 'b3' or 'n12'. */
const bid = (tag: string) => {
  const hex = Array.from(tag, (c) => c.charCodeAt(0).toString(16).padStart(2, '0'))
    .join('')
    .padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
const block = (id: string, type: string, value: object, hasChildren = false) => ({
  object: 'block',
  id,
  type,
  has_children: hasChildren,
  [type]: value,
});
const list = (items: unknown[], next: string | null = null) => ({
  object: 'list',
  results: items,
  has_more: next !== null,
  next_cursor: next,
});

describe('notion_search', () => {
  test('POST /search with the title query, object filter and cursor; slim results and next', async () => {
    route({ 'POST /search': { json: list([RAW_PAGE, RAW_DB], 'cur-2') } });
    const out = await ok('notion_search', { query: 'road', type: 'page', limit: 5, cursor: 'cur-1' });
    assertCalls([
      [
        'POST',
        '/search',
        {},
        {
          page_size: 5,
          query: 'road',
          filter: { property: 'object', value: 'page' },
          start_cursor: 'cur-1',
          sort: { timestamp: 'last_edited_time', direction: 'descending' },
        },
      ],
    ]);
    assert.deepEqual(out, {
      results: [
        {
          id: PAGE,
          object: 'page',
          title: 'Roadmap',
          url: RAW_PAGE.url,
          parent: { type: 'workspace' },
          lastEdited: '2025-02-01T00:00:00.000Z',
          archived: false,
        },
        {
          id: DB,
          object: 'database',
          title: 'Tasks',
          url: RAW_DB.url,
          parent: { type: 'page_id', id: PAGE },
          lastEdited: '2025-02-03T00:00:00.000Z',
          archived: false,
        },
      ],
      next: 'cur-2',
    });
  });
  test('no query lists everything; the last page has next null', async () => {
    route({ 'POST /search': { json: list([]) } });
    const out = await ok('notion_search', {});
    assertCalls([
      ['POST', '/search', {}, { page_size: 20, sort: { timestamp: 'last_edited_time', direction: 'descending' } }],
    ]);
    assert.deepEqual(out, { results: [], next: null });
  });
});

describe('notion_get_page', () => {
  test('properties in readable form and content as text, nested blocks read breadth-first', async () => {
    const top = [
      block(bid('b1'), 'heading_1', { rich_text: [rt('Plan')] }),
      block(bid('b2'), 'paragraph', { rich_text: [rt('Hello '), rt('world', 'https://w.example')] }),
      block(bid('b3'), 'bulleted_list_item', { rich_text: [rt('one')] }, true),
      block(bid('b4'), 'numbered_list_item', { rich_text: [rt('first')] }),
      block(bid('b5'), 'numbered_list_item', { rich_text: [rt('second')] }),
      block(bid('b6'), 'to_do', { rich_text: [rt('task')], checked: true }),
      block(bid('b7'), 'code', { rich_text: [rt('x = 1')], language: 'python' }),
      block(bid('b8'), 'divider', {}),
      block(bid('b9'), 'child_page', { title: 'Sub' }, true),
      block(bid('b10'), 'callout', { rich_text: [rt('note')], icon: { type: 'emoji', emoji: '💡' } }),
      block(bid('b11'), 'toggle', { rich_text: [rt('more')] }, true),
      block(bid('b12'), 'weird_new_type', {}),
    ];
    route({
      'GET /pages/01234567-89ab-cdef-0123-456789abcdef': { json: { ...RAW_ROW, id: PAGE } },
      'GET /blocks/01234567-89ab-cdef-0123-456789abcdef/children': (req) =>
        req.query.get('start_cursor') === 'p2' ? { json: list(top.slice(6)) } : { json: list(top.slice(0, 6), 'p2') },
      [`GET /blocks/${bid('b3')}/children`]: {
        json: list([block(bid('b3a'), 'bulleted_list_item', { rich_text: [rt('nested')] })]),
      },
      [`GET /blocks/${bid('b11')}/children`]: {
        json: list([block(bid('b11a'), 'quote', { rich_text: [rt('inside')] })]),
      },
    });
    const out = await ok('notion_get_page', { page: `https://www.notion.so/acme/Roadmap-${PAGE_ID}?pvs=4#x` });
    assertCalls([
      ['GET', `/pages/${PAGE}`],
      ['GET', `/blocks/${PAGE}/children`, { page_size: '100' }],
      ['GET', `/blocks/${PAGE}/children`, { page_size: '100', start_cursor: 'p2' }],
      ['GET', `/blocks/${bid('b3')}/children`, { page_size: '100' }],
      ['GET', `/blocks/${bid('b11')}/children`, { page_size: '100' }],
    ]);
    assert.deepEqual(out.properties, ROW_READ);
    assert.ok(Object.hasOwn(out.properties, '__proto__'), 'a property named __proto__ is an own key');
    assert.equal(out.title, 'Ship it');
    assert.equal(
      out.content,
      [
        '# Plan',
        'Hello [world](https://w.example)',
        '- one',
        '  - nested',
        '1. first',
        '2. second',
        '- [x] task',
        '```python',
        'x = 1',
        '```',
        '---',
        `[child page: Sub] (${bid('b9')})`,
        '> 💡 note',
        '▸ more',
        '  > inside',
        '[unsupported block: weird_new_type]',
      ].join('\n'),
    );
    assert.equal(out.notes, undefined);
  });
  test('content=false reads only the page; a bare dashed id is accepted', async () => {
    route({ 'GET /pages/01234567-89ab-cdef-0123-456789abcdef': { json: RAW_PAGE } });
    const out = await ok('notion_get_page', { page: PAGE.toUpperCase(), content: false });
    assertCalls([['GET', `/pages/${PAGE}`]]);
    assert.deepEqual(out, {
      id: PAGE,
      object: 'page',
      title: 'Roadmap',
      url: RAW_PAGE.url,
      parent: { type: 'workspace' },
      lastEdited: '2025-02-01T00:00:00.000Z',
      archived: false,
      createdTime: '2025-01-01T00:00:00.000Z',
      properties: { title: 'Roadmap' },
    });
  });
  test('the block reads stop at the request budget and say what was left out, naming the block ids', async () => {
    const many = Array.from({ length: 40 }, (_, i) =>
      block(bid(`n${i}`), 'toggle', { rich_text: [rt(`t${i}`)] }, true),
    );
    route({
      'GET /pages/01234567-89ab-cdef-0123-456789abcdef': { json: RAW_PAGE },
      'GET /blocks/01234567-89ab-cdef-0123-456789abcdef/children': { json: list(many) },
    });
    upstream.setHandler((req) => {
      if (req.path === `${BASE}/pages/${PAGE}`) return { json: RAW_PAGE };
      if (req.path === `${BASE}/blocks/${PAGE}/children`) return { json: list(many) };
      return { json: list([block(bid('c'), 'paragraph', { rich_text: [rt('child')] })]) };
    });
    const out = await ok('notion_get_page', { page: PAGE_ID });
    assert.equal(upstream.requests.length, 23, 'one page read and 22 block reads');
    assert.ok(
      out.notes.some((n: string) => /19 nested block\(s\) were not read \(request budget\)/.test(n)),
      JSON.stringify(out.notes),
    );
    assert.ok(out.content.includes(`▸ t39\n  (nested content not read: block ${bid('n39')})`), out.content);
    assert.ok(out.content.includes('▸ t20\n  child'));
  });
});

describe('notion_get_page: hostile answers, nested blocks, failures, size', () => {
  const PAGE_ROUTE = `GET /pages/${PAGE}`;
  const CHILDREN = `GET /blocks/${PAGE}/children`;
  test('a block id in an answer that is not a Notion id is never put into a path: the block is noted as unreadable', async () => {
    route({
      [PAGE_ROUTE]: { json: RAW_PAGE },
      [CHILDREN]: {
        json: list([
          block('..', 'toggle', { rich_text: [rt('dots')] }, true),
          block('../../users/me', 'toggle', { rich_text: [rt('climb')] }, true),
          block('.', 'toggle', { rich_text: [rt('dot')] }, true),
          block(`${PAGE_ID}/..`, 'toggle', { rich_text: [rt('tail')] }, true),
          block(bid('ok'), 'toggle', { rich_text: [rt('fine')] }, true),
        ]),
      },
      [`GET /blocks/${bid('ok')}/children`]: {
        json: list([block(bid('ok1'), 'paragraph', { rich_text: [rt('inside')] })]),
      },
    });
    const out = await ok('notion_get_page', { page: PAGE });
    assertCalls([
      ['GET', `/pages/${PAGE}`],
      ['GET', `/blocks/${PAGE}/children`, { page_size: '100' }],
      ['GET', `/blocks/${bid('ok')}/children`, { page_size: '100' }],
    ]);
    assert.match(out.content, /▸ dots\n {2}\(nested content not read: its id in the answer is not a Notion id\)/);
    assert.match(out.content, /▸ fine\n {2}inside$/);
    assert.ok(
      out.notes.some((n: string) => /4 block\(s\) had an id in Notion's answer that is not a Notion id/.test(n)),
      JSON.stringify(out.notes),
    );
  });
  test('a block id (a toggle, a column) given as page: /pages 404s, then the block and its children are read', async () => {
    const TOGGLE = bid('tg');
    route({
      [`GET /blocks/${TOGGLE}`]: {
        json: {
          object: 'block',
          id: TOGGLE,
          type: 'toggle',
          has_children: true,
          toggle: { rich_text: [rt('Details')] },
          parent: { type: 'page_id', page_id: PAGE },
          last_edited_time: '2025-02-01T00:00:00.000Z',
        },
      },
      [`GET /blocks/${TOGGLE}/children`]: {
        json: list([block(bid('tg1'), 'paragraph', { rich_text: [rt('hidden text')] })]),
      },
    });
    const out = await ok('notion_get_page', { page: TOGGLE.split('-').join('') });
    assertCalls([
      ['GET', `/pages/${TOGGLE}`],
      ['GET', `/blocks/${TOGGLE}`],
      ['GET', `/blocks/${TOGGLE}/children`, { page_size: '100' }],
    ]);
    assert.deepEqual(out, {
      id: TOGGLE,
      object: 'block',
      type: 'toggle',
      text: '▸ Details',
      parent: { type: 'page_id', id: PAGE },
      lastEdited: '2025-02-01T00:00:00.000Z',
      archived: false,
      content: 'hidden text',
    });
    // neither a page nor a block: the page's 404 message
    route({});
    await fails('notion_get_page', { page: PAGE }, /found nothing while trying to read page .*404/);
    assert.equal(upstream.requests.length, 2);
  });
  test('a failed nested read (429, 404) is a note with the block id; the rest of the page is returned', async () => {
    route({
      [PAGE_ROUTE]: { json: RAW_PAGE },
      [CHILDREN]: {
        json: list([
          block(bid('r1'), 'toggle', { rich_text: [rt('limited')] }, true),
          block(bid('r2'), 'toggle', { rich_text: [rt('gone')] }, true),
          block(bid('r3'), 'toggle', { rich_text: [rt('fine')] }, true),
        ]),
      },
      [`GET /blocks/${bid('r1')}/children`]: {
        status: 429,
        headers: { 'retry-after': '3' },
        json: { object: 'error', status: 429, code: 'rate_limited', message: 'Slow down.' },
      },
      [`GET /blocks/${bid('r3')}/children`]: {
        json: list([block(bid('r3a'), 'paragraph', { rich_text: [rt('inside')] })]),
      },
    });
    const out = await ok('notion_get_page', { page: PAGE });
    assert.equal(upstream.requests.length, 5);
    assert.equal(
      out.content,
      [
        '▸ limited',
        `  (nested content could not be read: Notion said 429 (rate limited), retry later: block ${bid('r1')})`,
        '▸ gone',
        `  (nested content could not be read: Notion said 404: block ${bid('r2')})`,
        '▸ fine',
        '  inside',
      ].join('\n'),
    );
    assert.ok(
      out.notes.some((n: string) => n.includes(`block ${bid('r1')}: Notion said 429`)),
      JSON.stringify(out.notes),
    );
    assert.ok(out.notes.some((n: string) => n.includes(`block ${bid('r2')}: Notion said 404`)));
  });
  test('big answers: each block becomes a line at once (cut at 4,000 characters), and no more reads once the text passes 50,000 characters', async () => {
    const big = Array.from({ length: 100 }, (_, i) =>
      block(bid(`g${i}`), 'toggle', { rich_text: [rt(`${i}:`.padEnd(9000, 'x'))] }, true),
    );
    route({ [PAGE_ROUTE]: { json: RAW_PAGE }, [CHILDREN]: { json: list(big, 'more') } });
    const out = await ok('notion_get_page', { page: PAGE });
    assertCalls([
      ['GET', `/pages/${PAGE}`],
      ['GET', `/blocks/${PAGE}/children`, { page_size: '100' }],
    ]);
    assert.equal(out.content.length, 50000);
    assert.ok(
      out.content.startsWith(`▸ 0:${'x'.repeat(3996)}…\n  (nested content not read: block ${bid('g0')})\n▸ 1:`),
      out.content.slice(0, 100),
    );
    assert.ok(
      out.notes.some((n: string) => /cut at 50000 characters \(no more blocks were read past that\)/.test(n)),
      JSON.stringify(out.notes),
    );
    assert.ok(out.notes.some((n: string) => /longer than 4000 characters were shortened/.test(n)));
    assert.ok(out.notes.some((n: string) => /content stops early/.test(n)));
  });
  test('the 50,000-character cut never splits a surrogate pair', async () => {
    const blocks = Array.from({ length: 12 }, (_, i) =>
      block(bid(`s${i}`), 'paragraph', { rich_text: [rt('a'.repeat(3999))] }),
    );
    blocks.push(block(bid('s12'), 'paragraph', { rich_text: [rt(`${'a'.repeat(1999)}😀😀`)] }));
    route({ [PAGE_ROUTE]: { json: RAW_PAGE }, [CHILDREN]: { json: list(blocks) } });
    const out = await ok('notion_get_page', { page: PAGE });
    assert.equal(out.content.length, 49999);
    assert.ok(out.content.isWellFormed(), 'no lone surrogate at the end');
    assert.ok(out.notes.some((n: string) => /cut at 50000/.test(n)));
  });
  test('a side-peek link (…/<database>?v=<view>&p=<page>&pm=s) reads the page in p', async () => {
    route({ [PAGE_ROUTE]: { json: RAW_PAGE } });
    await ok('notion_get_page', {
      page: `https://www.notion.so/acme/fedcba9876543210fedcba9876543210?v=aaaabbbbccccddddeeeeffff00001111&p=${PAGE_ID}&pm=s`,
      content: false,
    });
    assertCalls([['GET', `/pages/${PAGE}`]]);
  });
});

describe('notion_create_page', () => {
  test('a sub-page under a page: title and markdown-ish content as blocks', async () => {
    route({ 'POST /pages': { json: { ...RAW_PAGE, id: ROW, parent: { type: 'page_id', page_id: PAGE } } } });
    const out = await ok('notion_create_page', {
      parentPage: PAGE_ID,
      title: 'Notes',
      content:
        '# Title\nline one\nline two\n\n- bullet\n* star\n1. num\n- [ ] open\n- [x] done\n> quoted\n---\n```js\nlet a;\n```\n## H2\n### H3\n```TS\nx\n```\n```sh\ny\n```\n```yml\nz\n```\n```text\nt\n```\n```klingon\nk\n```\n```\np\n```\n```c++\nc\n```',
    });
    assertCalls([
      [
        'POST',
        '/pages',
        {},
        {
          parent: { page_id: PAGE },
          properties: { title: { title: txt('Notes') } },
          children: [
            { object: 'block', type: 'heading_1', heading_1: { rich_text: txt('Title') } },
            { object: 'block', type: 'paragraph', paragraph: { rich_text: txt('line one\nline two') } },
            { object: 'block', type: 'bulleted_list_item', bulleted_list_item: { rich_text: txt('bullet') } },
            { object: 'block', type: 'bulleted_list_item', bulleted_list_item: { rich_text: txt('star') } },
            { object: 'block', type: 'numbered_list_item', numbered_list_item: { rich_text: txt('num') } },
            { object: 'block', type: 'to_do', to_do: { rich_text: txt('open'), checked: false } },
            { object: 'block', type: 'to_do', to_do: { rich_text: txt('done'), checked: true } },
            { object: 'block', type: 'quote', quote: { rich_text: txt('quoted') } },
            { object: 'block', type: 'divider', divider: {} },
            { object: 'block', type: 'code', code: { rich_text: txt('let a;'), language: 'javascript' } },
            { object: 'block', type: 'heading_2', heading_2: { rich_text: txt('H2') } },
            { object: 'block', type: 'heading_3', heading_3: { rich_text: txt('H3') } },
            // fence names mapped to Notion's language list; an unknown or empty one is "plain text"
            { object: 'block', type: 'code', code: { rich_text: txt('x'), language: 'typescript' } },
            { object: 'block', type: 'code', code: { rich_text: txt('y'), language: 'shell' } },
            { object: 'block', type: 'code', code: { rich_text: txt('z'), language: 'yaml' } },
            { object: 'block', type: 'code', code: { rich_text: txt('t'), language: 'plain text' } },
            { object: 'block', type: 'code', code: { rich_text: txt('k'), language: 'plain text' } },
            { object: 'block', type: 'code', code: { rich_text: txt('p'), language: 'plain text' } },
            { object: 'block', type: 'code', code: { rich_text: txt('c'), language: 'c++' } },
          ],
        },
      ],
    ]);
    assert.deepEqual(out, {
      id: ROW,
      object: 'page',
      title: 'Roadmap',
      url: RAW_PAGE.url,
      parent: { type: 'page_id', id: PAGE },
      lastEdited: '2025-02-01T00:00:00.000Z',
      archived: false,
      blocks: 19,
    });
  });
  test('a database row: simple values converted by the schema; more than 100 blocks go on in appends of 100', async () => {
    route({
      'GET /databases/fedcba98-7654-3210-fedc-ba9876543210': { json: RAW_DB },
      'POST /pages': { json: RAW_ROW },
      'PATCH /blocks/11111111-2222-3333-4444-555555555555/children': { json: { object: 'list', results: [] } },
    });
    const content = Array.from({ length: 250 }, (_, i) => `- item ${i}`).join('\n');
    const out = await ok('notion_create_page', {
      database: 'https://acme.notion.site/fedcba9876543210fedcba9876543210?v=1',
      title: 'Ship it',
      properties: {
        Status: 'In progress',
        Tags: ['a', 'b'],
        Due: { start: '2025-03-01', end: '2025-03-05' },
        Points: '3',
        Done: true,
        Blocks: [PAGE_ID],
      },
      content,
    });
    const item = (i: number) => ({
      object: 'block',
      type: 'bulleted_list_item',
      bulleted_list_item: { rich_text: txt(`item ${i}`) },
    });
    const items = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => item(from + k));
    assertCalls([
      ['GET', `/databases/${DB}`],
      [
        'POST',
        '/pages',
        {},
        {
          parent: { database_id: DB },
          properties: {
            Status: { status: { name: 'In progress' } },
            Tags: { multi_select: [{ name: 'a' }, { name: 'b' }] },
            Due: { date: { start: '2025-03-01', end: '2025-03-05' } },
            Points: { number: 3 },
            Done: { checkbox: true },
            Blocks: { relation: [{ id: PAGE }] },
            Name: { title: txt('Ship it') },
          },
          children: items(0, 100),
        },
      ],
      ['PATCH', `/blocks/${ROW}/children`, {}, { children: items(100, 200) }],
      ['PATCH', `/blocks/${ROW}/children`, {}, { children: items(200, 250) }],
    ]);
    assert.equal(out.blocks, 250);
    assert.equal(out.id, ROW);
  });
  test("the new page's id from the create answer goes into the append path only when it is a Notion id", async () => {
    const content = Array.from({ length: 150 }, (_, i) => `- item ${i}`).join('\n');
    for (const id of ['..', '../../users/me', `${ROW}/..`]) {
      route({ 'POST /pages': { json: { ...RAW_PAGE, id } } });
      await fails(
        'notion_create_page',
        { parentPage: PAGE, title: 'x', content },
        /was created with blocks 1–100 of 150.*did not give a usable page id.*notion_append_content/,
      );
      assert.deepEqual(
        upstream.requests.map((r) => `${r.method} ${r.path}`),
        [`POST ${BASE}/pages`],
      );
    }
  });
  test('an append failing after the page was created says which page was made with which blocks, and how to go on', async () => {
    route({
      'POST /pages': { json: { ...RAW_PAGE, id: ROW } },
      [`PATCH /blocks/${ROW}/children`]: {
        status: 503,
        json: { object: 'error', status: 503, code: 'service_unavailable', message: 'Down.' },
      },
    });
    const content = Array.from({ length: 250 }, (_, i) => `- item ${i}`).join('\n');
    await fails(
      'notion_create_page',
      { parentPage: PAGE, title: 'x', content },
      new RegExp(
        `The page ${ROW} \\(${RAW_PAGE.url.replace(/[.]/g, '\\.')}\\) was created with blocks 1–100 of 250, but adding the rest failed: .*503.* Continue with notion_append_content on page ${ROW}, from block 101`,
      ),
    );
    let n = 0;
    route({
      'POST /pages': { json: { ...RAW_PAGE, id: ROW } },
      [`PATCH /blocks/${ROW}/children`]: () =>
        n++ === 0
          ? { json: list([]) }
          : { status: 429, json: { object: 'error', status: 429, code: 'rate_limited', message: 'Slow.' } },
    });
    await fails(
      'notion_create_page',
      { parentPage: PAGE, title: 'x', content },
      /blocks 1–100 of 250 and blocks 101–200 were added, but adding the rest failed: .*429.*from block 201/,
    );
  });
  test('a title property named "__proto__" is sent as a property like any other', async () => {
    route({
      'GET /databases/fedcba98-7654-3210-fedc-ba9876543210': {
        json: {
          ...RAW_DB,
          properties: JSON.parse(
            '{"__proto__": {"type": "title", "title": {}}, "Points": {"type": "number", "number": {}}}',
          ),
        },
      },
      'POST /pages': { json: RAW_ROW },
    });
    await ok('notion_create_page', { database: DB, title: 'Odd', properties: { Points: 2 } });
    const sent = upstream.requests[1]!.json as { properties: Record<string, unknown> };
    assert.ok(Object.hasOwn(sent.properties, '__proto__'), JSON.stringify(sent));
    assert.deepEqual(
      JSON.parse(JSON.stringify(sent.properties)),
      JSON.parse(`{"Points": {"number": 2}, "__proto__": {"title": ${JSON.stringify(txt('Odd'))}}}`),
    );
  });
  test('refusals: unknown property, read-only type, wrong value, both or neither parent', async () => {
    route({ 'GET /databases/fedcba98-7654-3210-fedc-ba9876543210': { json: RAW_DB } });
    await fails('notion_create_page', { database: DB, properties: { Nope: 'x' } }, /no property "Nope".*Name, Status/);
    await fails(
      'notion_create_page',
      { database: DB, properties: { Formula: 'x' } },
      /formula property, which cannot be set/,
    );
    await fails(
      'notion_create_page',
      { database: DB, properties: { Points: 'many' } },
      /Points" is a number property: give a number/,
    );
    await fails('notion_create_page', { database: DB, properties: { Name: 'a' }, title: 'b' }, /title once/);
    assert.equal(upstream.requests.filter((r) => r.method === 'POST').length, 0, 'nothing was created');
    upstream.requests.length = 0;
    await fails('notion_create_page', { parentPage: PAGE, database: DB, title: 'x' }, /exactly one of parentPage/);
    await fails('notion_create_page', { title: 'x' }, /exactly one of parentPage/);
    await fails(
      'notion_create_page',
      { parentPage: PAGE, title: 'x', properties: { A: 1 } },
      /only apply to a page in a database/,
    );
    assert.equal(upstream.requests.length, 0);
  });
});

describe('notion_append_content', () => {
  test('PATCH /blocks/{id}/children with the blocks; long text split into 2000-character pieces', async () => {
    route({ 'PATCH /blocks/01234567-89ab-cdef-0123-456789abcdef/children': { json: list([]) } });
    const long = 'a'.repeat(2500);
    const out = await ok('notion_append_content', { page: PAGE, content: `${long}\n\n> q` });
    assertCalls([
      [
        'PATCH',
        `/blocks/${PAGE}/children`,
        {},
        {
          children: [
            {
              object: 'block',
              type: 'paragraph',
              paragraph: { rich_text: [...txt('a'.repeat(2000)), ...txt('a'.repeat(500))] },
            },
            { object: 'block', type: 'quote', quote: { rich_text: txt('q') } },
          ],
        },
      ],
    ]);
    assert.deepEqual(out, { page: PAGE, blocks: 2 });
  });
  test('a 2,000-character split never cuts a surrogate pair', async () => {
    route({ 'PATCH /blocks/01234567-89ab-cdef-0123-456789abcdef/children': { json: list([]) } });
    await ok('notion_append_content', { page: PAGE, content: `${'a'.repeat(1999)}😀b` });
    assertCalls([
      [
        'PATCH',
        `/blocks/${PAGE}/children`,
        {},
        {
          children: [
            { object: 'block', type: 'paragraph', paragraph: { rich_text: [...txt('a'.repeat(1999)), ...txt('😀b')] } },
          ],
        },
      ],
    ]);
  });
  test('appends are split by encoded size too (Notion refuses a body over 500 KB)', async () => {
    // an operator may allow larger arguments than the default 256 KiB
    const big = await startPluginGateway(
      'notion',
      upstream,
      { token: TOKEN },
      { policy: { limits: { maxArgsBytes: 2 * 1024 * 1024 } } },
    );
    try {
      route({ 'PATCH /blocks/01234567-89ab-cdef-0123-456789abcdef/children': { json: list([]) } });
      const para = '€'.repeat(60000); // 180 KB in UTF-8
      const item = (await big.execute('notion_append_content', {
        page: PAGE,
        content: [para, para, para].join('\n\n'),
      })) as { result?: unknown };
      assert.deepEqual(item.result, { page: PAGE, blocks: 3 }, JSON.stringify(item).slice(0, 300));
      assert.deepEqual(
        upstream.requests.map((r) => (r.json as { children: unknown[] }).children.length),
        [2, 1],
      );
      for (const r of upstream.requests) assert.ok(Buffer.byteLength(r.body) < 500_000);
    } finally {
      await big.close();
    }
  });
  test('blank content makes no blocks and sends nothing', async () => {
    route({});
    await fails('notion_append_content', { page: PAGE, content: '\n \n' }, /makes no blocks/);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('notion_update_page', () => {
  test('reads the page for its property types, then PATCHes converted values and the title', async () => {
    route({
      'GET /pages/11111111-2222-3333-4444-555555555555': { json: RAW_ROW },
      'PATCH /pages/11111111-2222-3333-4444-555555555555': { json: RAW_ROW },
    });
    const out = await ok('notion_update_page', {
      page: ROW,
      title: 'New',
      properties: { Status: 'Done', Priority: null, Owner: ['aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee'], Link: '' },
    });
    assertCalls([
      ['GET', `/pages/${ROW}`],
      [
        'PATCH',
        `/pages/${ROW}`,
        {},
        {
          properties: {
            Status: { status: { name: 'Done' } },
            Priority: { select: null },
            Owner: { people: [{ id: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee' }] },
            Link: { url: null },
            Name: { title: txt('New') },
          },
        },
      ],
    ]);
    assert.deepEqual(out.updated, ['Status', 'Priority', 'Owner', 'Link', 'Name']);
    assert.equal(out.properties.Status, 'In progress');
  });
  test('archive alone is one PATCH with in_trash: true (archived is the deprecated alias)', async () => {
    route({ 'PATCH /pages/11111111-2222-3333-4444-555555555555': { json: { ...RAW_ROW, archived: true } } });
    const out = await ok('notion_update_page', { page: ROW, archived: true });
    assertCalls([['PATCH', `/pages/${ROW}`, {}, { in_trash: true }]]);
    assert.equal(out.archived, true);
    assert.deepEqual(out.updated, ['archived']);
  });
  test('a title property named "__proto__" (from the page\'s schema) is sent as a property like any other', async () => {
    // (an own "__proto__" key in the arguments never reaches the plugin: the gateway drops it)
    const page = {
      ...RAW_ROW,
      properties: JSON.parse(
        '{"__proto__": {"type": "title", "title": []}, "Points": {"type": "number", "number": 1}}',
      ),
    };
    route({
      'GET /pages/11111111-2222-3333-4444-555555555555': { json: page },
      'PATCH /pages/11111111-2222-3333-4444-555555555555': { json: page },
    });
    const out = await ok('notion_update_page', { page: ROW, title: 'New', properties: { Points: 4 } });
    const sent = upstream.requests[1]!.json as { properties: Record<string, unknown> };
    assert.ok(Object.hasOwn(sent.properties, '__proto__'), JSON.stringify(sent));
    assert.deepEqual(
      JSON.parse(JSON.stringify(sent.properties)),
      JSON.parse(`{"Points": {"number": 4}, "__proto__": {"title": ${JSON.stringify(txt('New'))}}}`),
    );
    assert.deepEqual(out.updated, ['Points', '__proto__']);
  });
  test('nothing to update is refused before any request', async () => {
    route({});
    await fails('notion_update_page', { page: ROW }, /Nothing to update/);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('notion_query_database', () => {
  test('filter and sorts passed through; rows in readable form; next', async () => {
    route({ 'POST /databases/fedcba98-7654-3210-fedc-ba9876543210/query': { json: list([RAW_ROW], 'c2') } });
    const filter = { and: [{ property: 'Status', status: { equals: 'Done' } }] };
    const sorts = [{ property: 'Due', direction: 'ascending' }];
    const out = await ok('notion_query_database', { database: DB, filter, sorts, limit: 10, cursor: 'c1' });
    assertCalls([['POST', `/databases/${DB}/query`, {}, { page_size: 10, filter, sorts, start_cursor: 'c1' }]]);
    assert.equal(out.next, 'c2');
    assert.equal(out.rows.length, 1);
    assert.equal(out.rows[0].id, ROW);
    assert.deepEqual(out.rows[0].properties, ROW_READ);
  });
  test('badly shaped filter or sorts are refused before any request', async () => {
    route({});
    await fails('notion_query_database', { database: DB, filter: { Status: 'Done' } }, /must name a `property`/);
    await fails('notion_query_database', { database: DB, sorts: [{ direction: 'up', property: 'Due' }] }, /ascending/);
    await fails('notion_query_database', { database: DB, sorts: [{ field: 'Due' }] }, /Each sort must be/);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('comments', () => {
  const RAW_COMMENT = {
    object: 'comment',
    id: 'c0ffee00-0000-0000-0000-000000000001',
    discussion_id: 'd1d1d1d1-0000-0000-0000-000000000001',
    created_time: '2025-02-04T00:00:00.000Z',
    created_by: { object: 'user', id: 'u1' },
    rich_text: [rt('Looks good')],
  };
  const SLIM = {
    id: RAW_COMMENT.id,
    discussionId: RAW_COMMENT.discussion_id,
    author: 'u1',
    createdTime: '2025-02-04T00:00:00.000Z',
    text: 'Looks good',
  };
  test('notion_add_comment on a page, and as a reply in a discussion', async () => {
    route({ 'POST /comments': { json: RAW_COMMENT } });
    assert.deepEqual(await ok('notion_add_comment', { page: PAGE_ID, text: 'Looks good' }), SLIM);
    assert.deepEqual(await ok('notion_add_comment', { discussionId: RAW_COMMENT.discussion_id, text: 'Reply' }), SLIM);
    assertCalls([
      ['POST', '/comments', {}, { rich_text: txt('Looks good'), parent: { page_id: PAGE } }],
      ['POST', '/comments', {}, { rich_text: txt('Reply'), discussion_id: RAW_COMMENT.discussion_id }],
    ]);
    await fails('notion_add_comment', { text: 'x' }, /exactly one of page/);
  });
  test('notion_list_comments: GET /comments?block_id with paging', async () => {
    route({ 'GET /comments': { json: list([RAW_COMMENT], 'n2') } });
    const out = await ok('notion_list_comments', { page: PAGE, limit: 5, cursor: 'n1' });
    assertCalls([['GET', '/comments', { block_id: PAGE, page_size: '5', start_cursor: 'n1' }]]);
    assert.deepEqual(out, { page: PAGE, comments: [SLIM], next: 'n2' });
  });
});

describe('ids', () => {
  test('anything but a Notion link or a 32-hex id is refused before any request', async () => {
    route({});
    for (const page of [
      '../../users/me/../../users/me/../..',
      '0123456789abcdef0123456789abcdeg',
      `https://evil.example/${PAGE_ID}`,
      `http://www.notion.so/${PAGE_ID}`,
      `https://www.notion.so/Roadmap${PAGE_ID}`,
      '01234567-89ab-cdef-0123456789abcdef0',
      `${PAGE_ID}/..`,
      `https://www.notion.so/${PAGE_ID}/x`,
    ]) {
      await fails('notion_get_page', { page }, /not a Notion id or link|>=32 characters/);
    }
    assert.equal(upstream.requests.length, 0, 'no request at all');
    route({ 'GET /pages/11111111-2222-3333-4444-555555555555': { json: RAW_ROW } });
    await fails(
      'notion_update_page',
      { page: ROW, properties: { Blocks: ['nope'] } },
      /`Blocks` is not a Notion id or link/,
    );
    assertCalls([['GET', `/pages/${ROW}`]]);
  });
  test('schema refusals: unknown argument, over-long limit, wrong type', async () => {
    route({});
    await fails('notion_search', { q: 'x' }, /Invalid arguments/);
    await fails('notion_query_database', { database: DB, limit: 500 }, /Invalid arguments/);
    await fails('notion_search', { type: 'block' }, /Invalid arguments/);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('errors', () => {
  const err = (status: number, code: string, message: string, headers?: Record<string, string>): UpstreamReply => ({
    status,
    headers,
    json: { object: 'error', status, code, message },
  });
  const cases: [UpstreamReply, RegExp][] = [
    [err(401, 'unauthorized', 'API token is invalid.'), /rejected the access token \(401\).*reconnect notion/],
    [
      err(403, 'restricted_resource', 'Insufficient permissions for this endpoint.'),
      /403 restricted_resource.*capability.*Insufficient permissions/,
    ],
    [
      err(404, 'object_not_found', 'Could not find page.'),
      /found nothing.*404.*not shared with the integration.*Could not find page/,
    ],
    [
      err(400, 'validation_error', 'body failed validation: body.filter.or should be an array.'),
      /refused to search \(400 validation_error\): body failed validation/,
    ],
    [err(409, 'conflict_error', 'Conflict occurred while saving.'), /conflicting change \(409\)/],
    [err(429, 'rate_limited', 'Slow down.', { 'retry-after': '7' }), /rate limited.*retry after 7 seconds/],
    [err(503, 'service_unavailable', 'Notion is unavailable.'), /server error \(503\).*retry later/],
  ];
  for (const [reply, pattern] of cases) {
    test(`HTTP ${reply.status}`, async () => {
      route({ 'POST /search': reply });
      await fails('notion_search', {}, pattern);
    });
  }
});
