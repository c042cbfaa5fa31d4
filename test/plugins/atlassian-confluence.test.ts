/**
 * @module test/plugins/atlassian-confluence.test
 * Every Confluence tool runs through the real gateway and sandbox against a loopback stand-in for
 * api.atlassian.com (reached through the policy's origin mapping): the cloud-id resolution, the
 * request each tool makes (method, /ex/confluence/{cloudId}/wiki path, query, JSON body, Bearer
 * token) and its slim result come from one table; then cursor paging, site selection, the error
 * mappings, argument refusals, the storage-format converters on awkward input (both ways, escaping
 * included, and pathological bodies that must not run out the sandbox's CPU), and a lone surrogate
 * in a query or path value (sent as U+FFFD, not a failure).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway, usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'confluence-access-token-0123456789';
const RESOURCES = '/oauth/token/accessible-resources';
const BASE = '/ex/confluence/cloud-beta/wiki';
const SITE = 'https://beta.atlassian.net';
const WIKI = `${SITE}/wiki`;
const WIKI_SCOPES = ['read:page:confluence', 'write:page:confluence', 'read:space:confluence'];
const SITES = [
  { id: 'cloud-jira', url: 'https://jira-only.atlassian.net', name: 'jira-only', scopes: ['read:jira-work'] },
  { id: 'cloud-alpha', url: 'https://alpha.atlassian.net', name: 'alpha', scopes: WIKI_SCOPES },
  { id: 'cloud-beta', url: 'https://beta.atlassian.net/', name: 'beta', scopes: WIKI_SCOPES },
];

type Gateway = TestGateway;
let upstream: Upstream;
let gw: Gateway;
let sites: unknown = SITES;

usePluginGateway(
  'atlassian-confluence',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600, config: { site: 'beta.atlassian.net' } },
  (s) => ({ upstream, gw } = s),
);

/** Answers "METHOD /path" (path under the wiki base, or absolute when it starts with /ex). */
const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: BASE,
    notFound: (m, path) => ({ errors: [{ status: 404, code: 'NOT_FOUND', title: `no route ${m} ${path}` }] }),
    first: (req) => (req.path === RESOURCES ? { json: sites } : undefined),
  });

type Call = [method: string, path: string, queryOrBody?: unknown];

/** The cloud-id look-up, then exactly these calls: GET with this query, writes with this JSON body. */
function assertCalls(calls: Call[], base = BASE): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length + 1, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  assert.equal(reqs[0]!.method, 'GET');
  assert.equal(reqs[0]!.path, RESOURCES);
  for (const r of reqs)
    assert.equal(r.headers.authorization, `Bearer ${TOKEN}`, 'every request carries the Bearer token');
  calls.forEach(([method, path, expected], i) => {
    const req = reqs[i + 1]!;
    assert.equal(req.method, method, `request ${i + 1} method`);
    assert.equal(req.path, `${base}${path}`, `request ${i + 1} path`);
    if (method === 'GET' || method === 'DELETE') {
      assert.deepEqual(Object.fromEntries(req.query), expected ?? {}, `request ${i + 1} query`);
      assert.equal(req.body, '');
    } else {
      assert.match(String(req.headers['content-type']), /^application\/json/);
      assert.deepEqual(req.json, expected, `request ${i + 1} JSON body`);
    }
  });
}

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

// ---------- fixtures: Confluence-shaped answers, with fields a slim result must drop ----------

const T = '2026-01-02T03:04:05.000Z';
const version = (number: number) => ({ number, createdAt: T, message: '', minorEdit: false, authorId: 'acc-1' });
const RAW_SPACE = {
  id: '98304',
  key: 'ENG',
  name: 'Engineering',
  type: 'global',
  status: 'current',
  authorId: 'acc-0',
  createdAt: '2025-01-01T00:00:00.000Z',
  homepageId: '100',
  description: { plain: { value: 'How we build things. ', representation: 'plain' } },
  icon: { path: '/x.png' },
  _links: { webui: '/spaces/ENG' },
};
const SPACE = {
  id: '98304',
  key: 'ENG',
  name: 'Engineering',
  type: 'global',
  status: 'current',
  description: 'How we build things.',
  homepageId: '100',
  url: `${WIKI}/spaces/ENG`,
};
const SPACES_BY_KEY = { results: [RAW_SPACE], _links: { base: WIKI } };
const RAW_PAGE = {
  id: '123',
  status: 'current',
  title: 'Deploy guide',
  spaceId: '98304',
  parentId: '100',
  parentType: 'page',
  position: 3,
  authorId: 'acc-0',
  ownerId: 'acc-0',
  lastOwnerId: null,
  createdAt: '2025-06-01T00:00:00.000Z',
  version: version(7),
  _links: {
    webui: '/spaces/ENG/pages/123/Deploy+guide',
    editui: '/pages/resumedraft.action?draftId=123',
    tinyui: '/x/ewA',
  },
};
const PAGE_ROW = {
  id: '123',
  title: 'Deploy guide',
  status: 'current',
  spaceId: '98304',
  parentId: '100',
  version: 7,
  updated: T,
  url: `${WIKI}/spaces/ENG/pages/123/Deploy+guide`,
};
const STORAGE =
  '<h2>Steps</h2><ol><li>Build</li><li>Ship <strong>it</strong></li></ol><p>See <a href="https://ci.example/run?id=1&amp;x=2">the CI run</a>.</p>';
const STORAGE_TEXT = '## Steps\n\n1. Build\n2. Ship **it**\n\nSee the CI run (https://ci.example/run?id=1&x=2).';
const withBody = (storage: string, extra: Record<string, unknown> = {}) => ({
  ...RAW_PAGE,
  body: { storage: { representation: 'storage', value: storage } },
  _links: { ...RAW_PAGE._links, base: WIKI },
  ...extra,
});
const PAGE_DETAIL = {
  id: '123',
  title: 'Deploy guide',
  status: 'current',
  spaceId: '98304',
  parentId: '100',
  authorId: 'acc-0',
  createdAt: '2025-06-01T00:00:00.000Z',
  version: { number: 7, createdAt: T, authorId: 'acc-1', message: '' },
  format: 'text',
  body: STORAGE_TEXT,
  truncated: false,
  url: PAGE_ROW.url,
};
const created = (id: string, title: string, v = 1, extra: Record<string, unknown> = {}) => ({
  id,
  status: 'current',
  title,
  spaceId: '98304',
  parentId: '100',
  version: version(v),
  body: { storage: { value: '', representation: 'storage' } },
  _links: { webui: `/spaces/ENG/pages/${id}/${title.replace(/ /g, '+')}`, base: WIKI },
  ...extra,
});
const RAW_COMMENT = {
  id: '555',
  status: 'current',
  title: 'Re: Deploy guide',
  pageId: '123',
  version: { ...version(1), authorId: 'acc-bob' },
  body: { storage: { representation: 'storage', value: '<p>Looks <em>good</em></p><p>Ship it &amp; tell ops</p>' } },
  _links: { webui: '/spaces/ENG/pages/123/Deploy+guide?focusedCommentId=555#comment-555' },
};
const COMMENT = {
  id: '555',
  authorId: 'acc-bob',
  created: T,
  body: 'Looks _good_\n\nShip it & tell ops',
  url: `${WIKI}/spaces/ENG/pages/123/Deploy+guide?focusedCommentId=555#comment-555`,
};
const RAW_ATTACHMENT = {
  id: 'att9',
  status: 'current',
  title: 'diagram.png',
  createdAt: T,
  pageId: '123',
  mediaType: 'image/png',
  mediaTypeDescription: 'PNG Image',
  comment: 'Architecture',
  fileId: 'f-1',
  fileSize: 2048,
  webuiLink: '/pages/viewpageattachments.action?pageId=123&preview=diagram.png',
  downloadLink: '/download/attachments/123/diagram.png?version=2&api=v2',
  version: version(2),
  _links: { webui: '/x', download: '/y' },
};
const ATTACHMENT = {
  id: 'att9',
  title: 'diagram.png',
  mediaType: 'image/png',
  fileSize: 2048,
  comment: 'Architecture',
  createdAt: T,
  version: 2,
  downloadUrl: `${WIKI}/download/attachments/123/diagram.png?version=2&api=v2`,
  url: `${WIKI}/pages/viewpageattachments.action?pageId=123&preview=diagram.png`,
};
const SEARCH_HIT = {
  content: {
    id: '123',
    type: 'page',
    status: 'current',
    title: 'Deploy guide',
    _links: { webui: '/spaces/ENG/pages/123/Deploy+guide' },
    _expandable: {},
  },
  title: '@@@hl@@@Deploy@@@endhl@@@ guide',
  excerpt: 'How to @@@hl@@@deploy@@@endhl@@@ &amp; roll\n back   the app',
  url: '/spaces/ENG/pages/123/Deploy+guide',
  resultGlobalContainer: { title: 'Engineering', displayUrl: '/spaces/ENG' },
  breadcrumbs: [],
  entityType: 'content',
  iconCssClass: 'aui-icon',
  lastModified: T,
  friendlyLastModified: 'Jan 02',
  score: 1.5,
};
const HIT = {
  id: '123',
  type: 'page',
  title: 'Deploy guide',
  space: 'Engineering',
  excerpt: 'How to deploy & roll back the app',
  lastModified: T,
  url: `${WIKI}/spaces/ENG/pages/123/Deploy+guide`,
};
const storageBody = (value: string) => ({ representation: 'storage', value });

interface Case {
  name?: string;
  tool: string;
  args: Record<string, unknown>;
  replies: Record<string, RouteReply>;
  calls: Call[];
  result: unknown;
}

const CASES: Case[] = [
  {
    tool: 'confluence_search',
    args: { cql: 'text ~ "deploy" AND type = page', limit: 2 },
    replies: {
      'GET /rest/api/search': {
        json: {
          results: [SEARCH_HIT],
          start: 0,
          limit: 2,
          size: 1,
          totalSize: 3,
          _links: {
            base: WIKI,
            context: '/wiki',
            next: '/rest/api/search?cql=text+~+%22deploy%22&limit=2&cursor=_sa_WyIxMjMiXQ%3D%3D',
          },
        },
      },
    },
    calls: [['GET', '/rest/api/search', { cql: 'text ~ "deploy" AND type = page', limit: '2' }]],
    result: { results: [HIT], count: 1, totalSize: 3, next: '_sa_WyIxMjMiXQ==' },
  },
  {
    name: 'confluence_search (next page, the last)',
    tool: 'confluence_search',
    args: { cql: 'label = "runbook"', cursor: '_sa_WyIxMjMiXQ==' },
    replies: {
      'GET /rest/api/search': {
        json: { results: [], start: 2, limit: 25, size: 0, totalSize: 3, _links: { base: WIKI } },
      },
    },
    calls: [['GET', '/rest/api/search', { cql: 'label = "runbook"', limit: '25', cursor: '_sa_WyIxMjMiXQ==' }]],
    result: { results: [], count: 0, totalSize: 3, next: null },
  },
  {
    tool: 'confluence_list_spaces',
    args: { type: 'global', sort: 'name', limit: 2 },
    replies: {
      'GET /api/v2/spaces': {
        json: {
          results: [RAW_SPACE],
          _links: { next: '/wiki/api/v2/spaces?cursor=c3BhY2Uy&limit=2&type=global', base: WIKI },
        },
      },
    },
    calls: [['GET', '/api/v2/spaces', { type: 'global', sort: 'name', 'description-format': 'plain', limit: '2' }]],
    result: { spaces: [SPACE], next: 'c3BhY2Uy' },
  },
  {
    tool: 'confluence_get_space',
    args: { space: 'ENG' },
    replies: { 'GET /api/v2/spaces': { json: SPACES_BY_KEY } },
    calls: [['GET', '/api/v2/spaces', { keys: 'ENG', 'description-format': 'plain' }]],
    result: { ...SPACE, createdAt: '2025-01-01T00:00:00.000Z', authorId: 'acc-0' },
  },
  {
    name: 'confluence_get_space (by numeric id)',
    tool: 'confluence_get_space',
    args: { space: '98304' },
    replies: { 'GET /api/v2/spaces/98304': { json: { ...RAW_SPACE, _links: { ...RAW_SPACE._links, base: WIKI } } } },
    calls: [['GET', '/api/v2/spaces/98304', { 'description-format': 'plain' }]],
    result: { ...SPACE, createdAt: '2025-01-01T00:00:00.000Z', authorId: 'acc-0' },
  },
  {
    tool: 'confluence_list_pages',
    args: { space: 'ENG', depth: 'root', sort: '-modified-date', limit: 2 },
    replies: {
      'GET /api/v2/spaces': { json: SPACES_BY_KEY },
      'GET /api/v2/spaces/98304/pages': {
        json: {
          results: [RAW_PAGE],
          _links: { next: '/wiki/api/v2/spaces/98304/pages?depth=root&cursor=cGFnZTI%3D&limit=2', base: WIKI },
        },
      },
    },
    calls: [
      ['GET', '/api/v2/spaces', { keys: 'ENG' }],
      ['GET', '/api/v2/spaces/98304/pages', { depth: 'root', sort: '-modified-date', limit: '2' }],
    ],
    result: { spaceId: '98304', pages: [PAGE_ROW], next: 'cGFnZTI=' },
  },
  {
    name: 'confluence_list_pages (space id, exact title, next page)',
    tool: 'confluence_list_pages',
    args: { space: '98304', title: 'Deploy guide', cursor: 'cGFnZTI=' },
    replies: { 'GET /api/v2/spaces/98304/pages': { json: { results: [RAW_PAGE], _links: { base: WIKI } } } },
    calls: [
      ['GET', '/api/v2/spaces/98304/pages', { depth: 'all', title: 'Deploy guide', limit: '25', cursor: 'cGFnZTI=' }],
    ],
    result: { spaceId: '98304', pages: [PAGE_ROW], next: null },
  },
  {
    tool: 'confluence_get_page',
    args: { pageId: '123' },
    replies: { 'GET /api/v2/pages/123': { json: withBody(STORAGE) } },
    calls: [['GET', '/api/v2/pages/123', { 'body-format': 'storage' }]],
    result: PAGE_DETAIL,
  },
  {
    name: 'confluence_get_page (storage format)',
    tool: 'confluence_get_page',
    args: { pageId: '123', format: 'storage' },
    replies: { 'GET /api/v2/pages/123': { json: withBody(STORAGE) } },
    calls: [['GET', '/api/v2/pages/123', { 'body-format': 'storage' }]],
    result: { ...PAGE_DETAIL, format: 'storage', body: STORAGE },
  },
  {
    tool: 'confluence_get_page_children',
    args: { pageId: '100', limit: 2 },
    replies: {
      'GET /api/v2/pages/100/children': {
        json: {
          results: [
            { id: '123', status: 'current', title: 'Deploy guide', spaceId: '98304', childPosition: 0 },
            { id: '124', status: 'archived', title: 'Old', spaceId: '98304', childPosition: null },
          ],
          _links: { next: '/wiki/api/v2/pages/100/children?cursor=Y2gy&limit=2' },
        },
      },
    },
    calls: [['GET', '/api/v2/pages/100/children', { limit: '2' }]],
    result: {
      parentId: '100',
      pages: [
        {
          id: '123',
          title: 'Deploy guide',
          status: 'current',
          position: 0,
          url: `${WIKI}/pages/viewpage.action?pageId=123`,
        },
        {
          id: '124',
          title: 'Old',
          status: 'archived',
          position: null,
          url: `${WIKI}/pages/viewpage.action?pageId=124`,
        },
      ],
      next: 'Y2gy',
    },
  },
  {
    tool: 'confluence_create_page',
    args: {
      space: 'ENG',
      title: 'Release 1.2',
      parentId: '100',
      body: '# Notes\n\nFixed **login** & <script>.\n\n- one\n- two',
    },
    replies: {
      'GET /api/v2/spaces': { json: SPACES_BY_KEY },
      'POST /api/v2/pages': { json: created('200', 'Release 1.2') },
    },
    calls: [
      ['GET', '/api/v2/spaces', { keys: 'ENG' }],
      [
        'POST',
        '/api/v2/pages',
        {
          spaceId: '98304',
          status: 'current',
          title: 'Release 1.2',
          parentId: '100',
          body: storageBody(
            '<h1>Notes</h1><p>Fixed <strong>login</strong> &amp; &lt;script&gt;.</p><ul><li>one</li><li>two</li></ul>',
          ),
        },
      ],
    ],
    result: {
      id: '200',
      title: 'Release 1.2',
      spaceId: '98304',
      parentId: '100',
      version: 1,
      url: `${WIKI}/spaces/ENG/pages/200/Release+1.2`,
    },
  },
  {
    name: 'confluence_create_page (space id, plain text, no body markup)',
    tool: 'confluence_create_page',
    args: { space: '98304', title: 'Plain', body: '# not a heading\nline two\n\n**not bold**', bodyFormat: 'text' },
    replies: { 'POST /api/v2/pages': { json: created('201', 'Plain') } },
    calls: [
      [
        'POST',
        '/api/v2/pages',
        {
          spaceId: '98304',
          status: 'current',
          title: 'Plain',
          body: storageBody('<p># not a heading<br />line two</p><p>**not bold**</p>'),
        },
      ],
    ],
    result: {
      id: '201',
      title: 'Plain',
      spaceId: '98304',
      parentId: '100',
      version: 1,
      url: `${WIKI}/spaces/ENG/pages/201/Plain`,
    },
  },
  {
    tool: 'confluence_update_page',
    args: { pageId: '123', title: 'Deploy guide v2', body: 'All **new**', versionMessage: 'rewrite' },
    replies: {
      'GET /api/v2/pages/123': { json: withBody(STORAGE) },
      'PUT /api/v2/pages/123': { json: created('123', 'Deploy guide v2', 8) },
    },
    calls: [
      ['GET', '/api/v2/pages/123', { 'body-format': 'storage' }],
      [
        'PUT',
        '/api/v2/pages/123',
        {
          id: '123',
          status: 'current',
          title: 'Deploy guide v2',
          body: storageBody('<p>All <strong>new</strong></p>'),
          version: { number: 8, message: 'rewrite' },
        },
      ],
    ],
    result: {
      id: '123',
      title: 'Deploy guide v2',
      version: 8,
      updated: ['title', 'body'],
      url: `${WIKI}/spaces/ENG/pages/123/Deploy+guide+v2`,
    },
  },
  {
    tool: 'confluence_delete_page',
    args: { pageId: '123' },
    replies: {
      'GET /api/v2/pages/123': { json: RAW_PAGE },
      'DELETE /api/v2/pages/123': { status: 204 },
    },
    calls: [
      ['GET', '/api/v2/pages/123'],
      ['DELETE', '/api/v2/pages/123'],
    ],
    result: {
      id: '123',
      title: 'Deploy guide',
      spaceId: '98304',
      status: 'trashed',
      note: 'In the space trash: a space admin can restore it.',
    },
  },
  {
    name: 'confluence_delete_page (purge: trashed first, then purged)',
    tool: 'confluence_delete_page',
    args: { pageId: '123', purge: true },
    replies: {
      'GET /api/v2/pages/123': { json: RAW_PAGE },
      'DELETE /api/v2/pages/123': { status: 204 },
    },
    calls: [
      ['GET', '/api/v2/pages/123'],
      ['DELETE', '/api/v2/pages/123'],
      ['DELETE', '/api/v2/pages/123', { purge: 'true' }],
    ],
    result: {
      id: '123',
      title: 'Deploy guide',
      spaceId: '98304',
      status: 'purged',
      note: 'Deleted permanently: it cannot be restored.',
    },
  },
  {
    name: 'confluence_delete_page (purge a page already in the trash)',
    tool: 'confluence_delete_page',
    args: { pageId: '123', purge: true },
    replies: {
      'GET /api/v2/pages/123': { json: { ...RAW_PAGE, status: 'trashed' } },
      'DELETE /api/v2/pages/123': { status: 204 },
    },
    calls: [
      ['GET', '/api/v2/pages/123'],
      ['DELETE', '/api/v2/pages/123', { purge: 'true' }],
    ],
    result: {
      id: '123',
      title: 'Deploy guide',
      spaceId: '98304',
      status: 'purged',
      note: 'Deleted permanently: it cannot be restored.',
    },
  },
  {
    name: 'confluence_update_page (title only keeps the body)',
    tool: 'confluence_update_page',
    args: { pageId: '123', title: 'Renamed' },
    replies: {
      'GET /api/v2/pages/123': { json: withBody(STORAGE) },
      'PUT /api/v2/pages/123': { json: created('123', 'Renamed', 8) },
    },
    calls: [
      ['GET', '/api/v2/pages/123', { 'body-format': 'storage' }],
      [
        'PUT',
        '/api/v2/pages/123',
        { id: '123', status: 'current', title: 'Renamed', body: storageBody(STORAGE), version: { number: 8 } },
      ],
    ],
    result: {
      id: '123',
      title: 'Renamed',
      version: 8,
      updated: ['title'],
      url: `${WIKI}/spaces/ENG/pages/123/Renamed`,
    },
  },
  {
    name: 'confluence_update_page (append a section)',
    tool: 'confluence_update_page',
    args: { pageId: '123', mode: 'append', body: '## Rollback\n\nRun `undo`.' },
    replies: {
      'GET /api/v2/pages/123': { json: withBody(STORAGE) },
      'PUT /api/v2/pages/123': { json: created('123', 'Deploy guide', 8) },
    },
    calls: [
      ['GET', '/api/v2/pages/123', { 'body-format': 'storage' }],
      [
        'PUT',
        '/api/v2/pages/123',
        {
          id: '123',
          status: 'current',
          title: 'Deploy guide',
          body: storageBody(`${STORAGE}<h2>Rollback</h2><p>Run <code>undo</code>.</p>`),
          version: { number: 8 },
        },
      ],
    ],
    result: {
      id: '123',
      title: 'Deploy guide',
      version: 8,
      updated: ['body'],
      url: `${WIKI}/spaces/ENG/pages/123/Deploy+guide`,
    },
  },
  {
    tool: 'confluence_add_comment',
    args: { pageId: '123', body: 'Looks _good_' },
    replies: { 'POST /api/v2/footer-comments': { status: 201, json: { ...RAW_COMMENT, body: undefined } } },
    calls: [['POST', '/api/v2/footer-comments', { pageId: '123', body: storageBody('<p>Looks <em>good</em></p>') }]],
    result: { id: '555', pageId: '123', parentCommentId: null, created: T, url: COMMENT.url },
  },
  {
    name: 'confluence_add_comment (reply)',
    tool: 'confluence_add_comment',
    args: { pageId: '123', body: 'Agreed', parentCommentId: '555', bodyFormat: 'text' },
    replies: {
      'POST /api/v2/footer-comments': {
        status: 201,
        json: {
          id: '556',
          status: 'current',
          parentCommentId: '555',
          version: version(1),
          _links: { webui: '/spaces/ENG/pages/123/Deploy+guide?focusedCommentId=556' },
        },
      },
    },
    calls: [['POST', '/api/v2/footer-comments', { parentCommentId: '555', body: storageBody('<p>Agreed</p>') }]],
    result: {
      id: '556',
      pageId: '123',
      parentCommentId: '555',
      created: T,
      url: `${WIKI}/spaces/ENG/pages/123/Deploy+guide?focusedCommentId=556`,
    },
  },
  {
    tool: 'confluence_list_comments',
    args: { pageId: '123', limit: 1 },
    replies: {
      'GET /api/v2/pages/123/footer-comments': {
        json: {
          results: [RAW_COMMENT],
          _links: {
            next: '/wiki/api/v2/pages/123/footer-comments?body-format=storage&cursor=Y20y&limit=1',
            base: WIKI,
          },
        },
      },
    },
    calls: [
      ['GET', '/api/v2/pages/123/footer-comments', { 'body-format': 'storage', sort: '-created-date', limit: '1' }],
    ],
    result: { pageId: '123', comments: [COMMENT], next: 'Y20y' },
  },
  {
    name: 'confluence_list_comments (oldest first, last page)',
    tool: 'confluence_list_comments',
    args: { pageId: '123', order: 'oldest', cursor: 'Y20y' },
    replies: { 'GET /api/v2/pages/123/footer-comments': { json: { results: [], _links: { base: WIKI } } } },
    calls: [
      [
        'GET',
        '/api/v2/pages/123/footer-comments',
        { 'body-format': 'storage', sort: 'created-date', limit: '25', cursor: 'Y20y' },
      ],
    ],
    result: { pageId: '123', comments: [], next: null },
  },
  {
    tool: 'confluence_list_attachments',
    args: { pageId: '123', mediaType: 'image/png' },
    replies: {
      'GET /api/v2/pages/123/attachments': {
        json: {
          results: [RAW_ATTACHMENT],
          _links: { next: '/wiki/api/v2/pages/123/attachments?cursor=YXQy&limit=50', base: WIKI },
        },
      },
    },
    calls: [['GET', '/api/v2/pages/123/attachments', { mediaType: 'image/png', limit: '50' }]],
    result: { pageId: '123', attachments: [ATTACHMENT], next: 'YXQy' },
  },
  {
    tool: 'confluence_add_labels',
    args: { pageId: '123', labels: ['Release-Notes', 'v1.2'] },
    replies: {
      'POST /rest/api/content/123/label': {
        json: {
          results: [
            { prefix: 'global', name: 'ops', id: '1', label: 'ops' },
            { prefix: 'global', name: 'release-notes', id: '2', label: 'release-notes' },
            { prefix: 'global', name: 'v1.2', id: '3', label: 'v1.2' },
          ],
          start: 0,
          limit: 200,
          size: 3,
        },
      },
    },
    calls: [
      [
        'POST',
        '/rest/api/content/123/label',
        [
          { prefix: 'global', name: 'release-notes' },
          { prefix: 'global', name: 'v1.2' },
        ],
      ],
    ],
    result: {
      pageId: '123',
      added: ['release-notes', 'v1.2'],
      labels: ['ops', 'release-notes', 'v1.2'],
      url: `${WIKI}/pages/viewpage.action?pageId=123`,
    },
  },
];

describe('atlassian-confluence tools: request made and slim result', () => {
  for (const c of CASES) {
    test(c.name ?? c.tool, async () => {
      route(c.replies);
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      assertCalls(c.calls);
    });
  }

  test('the table covers every tool of the manifest', () => {
    const tools = new Set(gw.gateway.registry.plugin('atlassian-confluence')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(new Set(CASES.map((c) => c.tool)), tools);
  });

  test('a cursor goes back exactly as the `next` it came from, through two pages', async () => {
    const cursors: Array<string | null> = [];
    route({
      'GET /api/v2/spaces/98304/pages': (req) => {
        cursors.push(req.query.get('cursor'));
        return req.query.get('cursor')
          ? { json: { results: [{ ...RAW_PAGE, id: '124' }], _links: {} } }
          : {
              json: {
                results: [RAW_PAGE],
                _links: { next: '/wiki/api/v2/spaces/98304/pages?cursor=a%2Bb%2Fc%3D&limit=1' },
              },
            };
      },
    });
    const first = (await ok('confluence_list_pages', { space: '98304', limit: 1 })) as { next: string };
    assert.equal(first.next, 'a+b/c=');
    const second = (await ok('confluence_list_pages', { space: '98304', limit: 1, cursor: first.next })) as {
      pages: Array<{ id: string }>;
      next: unknown;
    };
    assert.deepEqual([second.pages.map((p) => p.id), second.next], [['124'], null]);
    assert.deepEqual(cursors, [null, 'a+b/c=']);
    assert.match(upstream.requests.at(-1)!.url, /[?&]cursor=a%2Bb%2Fc%3D(&|$)/);
  });
});

describe('atlassian-confluence site resolution', () => {
  async function userWith(config?: Record<string, unknown>): Promise<string> {
    const n = Math.random().toString(36).slice(2, 8);
    const { user, apiKey } = await gw.createUser(`confluence-${n}@example.com`);
    await gw.connect('atlassian-confluence', { token: TOKEN, ...(config ? { config } : {}) }, user);
    return apiKey;
  }
  const space = { 'GET /ex/confluence/cloud-alpha/wiki/api/v2/spaces/1': { json: { ...RAW_SPACE, id: '1' } } };

  test('without a configured site, the first Confluence site (not a Jira-only one) is used', async () => {
    const key = await userWith();
    route(space);
    const r = (await ok('confluence_get_space', { space: '1' }, key)) as { url: string };
    assert.equal(r.url, 'https://alpha.atlassian.net/wiki/spaces/ENG');
    assertCalls([['GET', '/api/v2/spaces/1', { 'description-format': 'plain' }]], '/ex/confluence/cloud-alpha/wiki');
  });

  for (const site of ['https://ALPHA.atlassian.net/', 'alpha', 'cloud-alpha']) {
    test(`the configured site "${site}" selects its cloud id`, async () => {
      const key = await userWith({ site });
      route(space);
      await ok('confluence_get_space', { space: '1' }, key);
      assertCalls([['GET', '/api/v2/spaces/1', { 'description-format': 'plain' }]], '/ex/confluence/cloud-alpha/wiki');
    });
  }

  test('a configured site that is not reachable is named with the reachable ones', async () => {
    const key = await userWith({ site: 'gamma.atlassian.net' });
    route({});
    await fails(
      'confluence_get_space',
      { space: '1' },
      /No Confluence site matching "gamma\.atlassian\.net".*alpha\.atlassian\.net.*beta\.atlassian\.net/,
      key,
    );
    assert.equal(upstream.requests.length, 1);
  });

  test('a token that reaches no site says so', async () => {
    sites = [];
    try {
      route({});
      await fails('confluence_get_space', { space: '1' }, /can reach no Confluence site: reconnect/);
    } finally {
      sites = SITES;
    }
  });
});

describe('atlassian-confluence error mapping', () => {
  const cases: Array<[string, string, Record<string, unknown>, string, UpstreamReply, RegExp]> = [
    [
      '401 invalid token',
      'confluence_get_page',
      { pageId: '123' },
      'GET /api/v2/pages/123',
      { status: 401, json: { code: 401, message: 'Unauthorized' } },
      /rejected the access token \(401\).*reconnect atlassian-confluence/,
    ],
    [
      '401 scope mismatch',
      'confluence_search',
      { cql: 'type = page' },
      'GET /rest/api/search',
      { status: 401, json: { code: 401, message: 'Unauthorized; scope does not match' } },
      /lacks the OAuth scope needed to search Confluence with CQL \(401; needs search:confluence \(or read:content-details:confluence\)\)/,
    ],
    [
      '403 permission (v2 errors)',
      'confluence_create_page',
      { space: '98304', title: 'x' },
      'POST /api/v2/pages',
      {
        status: 403,
        json: {
          errors: [
            {
              status: 403,
              code: 'FORBIDDEN',
              title: 'User does not have permission to create pages in this space',
              detail: null,
            },
          ],
        },
      },
      /refused permission to create the page "x" in space 98304 \(403\): User does not have permission to create pages in this space\..*write:page:confluence/,
    ],
    [
      '403 on delete: the delete scope is named',
      'confluence_delete_page',
      { pageId: '123' },
      'DELETE /api/v2/pages/123',
      { status: 403, json: { errors: [{ status: 403, code: 'FORBIDDEN', title: 'Not permitted to delete' }] } },
      /refused permission to move to the trash page 123 \(403\): Not permitted to delete\..*delete:page:confluence/,
    ],
    [
      '404 page',
      'confluence_get_page',
      { pageId: '404' },
      'GET /api/v2/pages/404',
      { status: 404, json: { errors: [{ status: 404, code: 'NOT_FOUND', title: 'Not Found', detail: null }] } },
      /found nothing while trying to read page 404 \(404\): Not Found/,
    ],
    [
      '409 version conflict',
      'confluence_update_page',
      { pageId: '123', body: 'x' },
      'PUT /api/v2/pages/123',
      {
        status: 409,
        json: {
          errors: [
            {
              status: 409,
              code: 'CONFLICT',
              title: 'Version must be incremented on update. Current Version is: 9',
              detail: null,
            },
          ],
        },
      },
      /conflict while trying to update page 123 \(409\): Version must be incremented on update\. Current Version is: 9\. Read it again and retry/,
    ],
    [
      '400 duplicate title',
      'confluence_create_page',
      { space: '98304', title: 'Dup' },
      'POST /api/v2/pages',
      {
        status: 400,
        json: {
          errors: [
            {
              status: 400,
              code: 'INVALID_REQUEST_PARAMETER',
              title: 'A page with this title already exists',
              detail: 'A page already exists with the same TITLE in this space',
            },
          ],
        },
      },
      /refused to create the page "Dup" in space 98304 \(400\): A page with this title already exists: A page already exists with the same TITLE in this space/,
    ],
    [
      '400 CQL (v1 body)',
      'confluence_search',
      { cql: 'tyype = page' },
      'GET /rest/api/search',
      {
        status: 400,
        json: {
          statusCode: 400,
          data: {
            authorized: true,
            valid: false,
            errors: [
              { message: { key: 'cql.parse.error', translation: 'Could not parse cql : tyype = page', args: [] } },
            ],
            successful: false,
          },
          message:
            'com.atlassian.confluence.api.service.exceptions.BadRequestException: Could not parse cql : tyype = page',
        },
      },
      /refused to search Confluence with CQL \(400\): Could not parse cql : tyype = page\./,
    ],
    [
      '429 rate limit',
      'confluence_list_spaces',
      {},
      'GET /api/v2/spaces',
      { status: 429, headers: { 'retry-after': '17' }, json: { message: 'Rate limit exceeded' } },
      /rate limited the request to list spaces \(429\): retry after 17 seconds/,
    ],
    [
      '500 server error',
      'confluence_list_attachments',
      { pageId: '123' },
      'GET /api/v2/pages/123/attachments',
      { status: 502, body: '<html>Bad gateway</html>' },
      /server error \(502\) while trying to list the attachments of page 123: retry later\./,
    ],
  ];
  for (const [name, tool, args, routeKey, reply, pattern] of cases) {
    test(name, async () => {
      route({ 'GET /api/v2/pages/123': { json: withBody(STORAGE) }, [routeKey]: reply });
      await fails(tool, args, pattern);
    });
  }

  test('the cloud-id look-up maps its own failures', async () => {
    upstream.setHandler(() => ({ status: 401, json: { code: 401, message: 'Unauthorized' } }));
    upstream.requests.length = 0;
    await fails(
      'confluence_list_spaces',
      {},
      /rejected the access token \(401\) while trying to list the Confluence sites/,
    );
    assert.equal(upstream.requests.length, 1);
  });

  test('an unknown space key is named, and nothing is created', async () => {
    route({ 'GET /api/v2/spaces': { json: { results: [], _links: {} } } });
    await fails(
      'confluence_create_page',
      { space: 'NOPE', title: 'x' },
      /No Confluence space has the key "NOPE".*confluence_list_spaces/,
    );
    assert.ok(upstream.requests.every((r) => r.method === 'GET'));
  });

  test('argument problems are refused before any request', async () => {
    route({});
    await fails(
      'confluence_update_page',
      { pageId: '123' },
      /Nothing to update: give a new body, a new title, or both/,
    );
    await fails('confluence_update_page', { pageId: '123', title: 'x', mode: 'append' }, /mode "append" needs a body/);
    await fails('confluence_get_page', { pageId: 'abc' }, /Invalid arguments for confluence_get_page/);
    await fails('confluence_search', { cql: 'type = page', limit: 500 }, /Invalid arguments for confluence_search/);
    await fails(
      'confluence_add_labels',
      { pageId: '1', labels: ['has space'] },
      /Invalid arguments for confluence_add_labels/,
    );
    await fails('confluence_add_labels', { pageId: '1', labels: [] }, /Invalid arguments for confluence_add_labels/);
    await fails('confluence_list_pages', { space: 'ENG', extra: 1 }, /Invalid arguments for confluence_list_pages/);
    await fails(
      'confluence_create_page',
      { space: 'bad key!', title: 'x' },
      /Invalid arguments for confluence_create_page/,
    );
    assert.equal(upstream.requests.length, 0);
  });
});

describe('atlassian-confluence storage format → text, on awkward input', () => {
  async function textOf(storage: string): Promise<{ body: string; truncated: boolean }> {
    route({ 'GET /api/v2/pages/123': { json: withBody(storage) } });
    return (await ok('confluence_get_page', { pageId: '123' })) as { body: string; truncated: boolean };
  }

  const cases: Array<[string, string, string]> = [
    [
      'entities: named, numeric, hex, unknown, out of range',
      '<p>A&amp;B &lt;tag&gt; &quot;q&quot; caf&#233; &#x1F600; &nbsp;x&mdash;y &copy; &bogus; &#xD800; &#0;</p>',
      'A&B <tag> "q" café 😀 \u00a0x—y © &bogus; \uFFFD \uFFFD',
    ],
    [
      'nested lists, paragraphs inside items, ordered start',
      '<ul><li><p>one</p><ul><li>a</li><li>b<ol start="4"><li>deep</li></ol></li></ul></li><li>two</li></ul>',
      '- one\n  - a\n  - b\n    4. deep\n- two',
    ],
    [
      'code macro keeps CDATA verbatim (no entity decoding, indentation kept)',
      '<ac:structured-macro ac:name="code" ac:schema-version="1"><ac:parameter ac:name="language">xml</ac:parameter><ac:plain-text-body><![CDATA[<a href="x">&amp;</a>\n  indented]]></ac:plain-text-body></ac:structured-macro>',
      '```xml\n<a href="x">&amp;</a>\n  indented\n```',
    ],
    [
      'callout macro with a title and two paragraphs',
      '<ac:structured-macro ac:name="warning"><ac:parameter ac:name="title">Careful</ac:parameter><ac:rich-text-body><p>One</p><p>Two</p></ac:rich-text-body></ac:structured-macro>',
      '> [warning] Careful\n> One\n>\n> Two',
    ],
    [
      'table with header row, pipes and line breaks in cells',
      '<table><colgroup><col/></colgroup><tbody><tr><th><p>Key</p></th><th>Value</th></tr><tr><td>a|b</td><td>line1<br/>line2</td></tr></tbody></table>',
      '| Key | Value |\n| --- | --- |\n| a\\|b | line1 line2 |',
    ],
    [
      'Confluence links: page, user, attachment, custom body, external',
      '<p><ac:link><ri:page ri:content-title="Runbook" ri:space-key="OPS"/></ac:link>, <ac:link><ri:user ri:account-id="557058:u1"/></ac:link>, <ac:link><ri:attachment ri:filename="a.pdf"/></ac:link>, <ac:link><ri:page ri:content-title="X"/><ac:link-body><strong>bold link</strong></ac:link-body></ac:link>, <a href="https://ex.com">https://ex.com</a></p>',
      'Runbook, @557058:u1, a.pdf, **bold link**, https://ex.com',
    ],
    [
      'tasks, images, emoticons, status and Jira macros, time',
      '<ac:task-list><ac:task><ac:task-id>1</ac:task-id><ac:task-status>complete</ac:task-status><ac:task-body>ship</ac:task-body></ac:task><ac:task><ac:task-status>incomplete</ac:task-status><ac:task-body>tell <ac:link><ri:user ri:account-id="u2"/></ac:link></ac:task-body></ac:task></ac:task-list><p><ac:image><ri:attachment ri:filename="arch.png"/></ac:image> <ac:emoticon ac:name="tick"/> <ac:structured-macro ac:name="status"><ac:parameter ac:name="title">BLOCKED</ac:parameter></ac:structured-macro> <ac:structured-macro ac:name="jira"><ac:parameter ac:name="key">OPS-7</ac:parameter></ac:structured-macro> due <time datetime="2026-02-01"/></p>',
      '- [x] ship\n- [ ] tell @u2\n\n[image: arch.png] :tick: [BLOCKED] [Jira OPS-7] due 2026-02-01',
    ],
    [
      'unclosed, stray and mis-nested tags; comments, scripts; stray "<"',
      '<p>open <b>bold <i>both</p><p>next</div></span> 1 < 2 && 3 > 2</p><!-- <p>hidden</p> --><script>alert("x")</script><style>p{}</style><p>end',
      'open **bold _both_**\n\nnext 1 < 2 && 3 > 2\n\nend',
    ],
    [
      'layouts, expand and unknown macros, headings with breaks',
      '<ac:layout><ac:layout-section ac:type="two_equal"><ac:layout-cell><h3>Left<br/>side</h3></ac:layout-cell><ac:layout-cell><ac:structured-macro ac:name="expand"><ac:parameter ac:name="title">More</ac:parameter><ac:rich-text-body><p>hidden text</p></ac:rich-text-body></ac:structured-macro></ac:layout-cell></ac:layout-section></ac:layout><ac:structured-macro ac:name="toc"/><ac:structured-macro ac:name="gallery"/>',
      '### Left side\n\nMore:\n\nhidden text\n\n[table of contents]\n\n[gallery macro]',
    ],
    [
      'attributes in single quotes, unquoted, with ">" inside, uppercase tags',
      '<P CLASS=x><A HREF=\'https://ex.com/?a=1&amp;b=2\' title="a>b">site</A></P><pre>  keep\n    this</pre>',
      'site (https://ex.com/?a=1&b=2)\n\n```\n  keep\n    this\n```',
    ],
  ];
  for (const [name, storage, expected] of cases) {
    test(name, async () => {
      const r = await textOf(storage);
      assert.equal(r.body, expected);
      assert.equal(r.truncated, false);
    });
  }

  test('a long page is cut at 20,000 characters and says so', async () => {
    const r = await textOf(`<p>${'word '.repeat(6000)}</p>`);
    assert.equal(r.truncated, true);
    assert.equal(r.body.length, 20000 + '… (truncated)'.length);
    assert.ok(r.body.endsWith('… (truncated)'));
  });

  for (const [name, storage] of [
    ['unterminated quotes in tags', '<a "'.repeat(150000)],
    ['lists nested far past the depth limit', '<ul><li>x'.repeat(60000)],
    ['a huge flat table', `<table>${'<tr><td>a</td><td>b</td></tr>'.repeat(20000)}</table>`],
  ] as const) {
    test(`pathological storage stays within the sandbox's CPU limit: ${name}`, async () => {
      const r = await textOf(storage);
      assert.equal(typeof r.body, 'string');
      assert.ok(r.body.length <= 20000 + '… (truncated)'.length);
    });
  }
});

describe('atlassian-confluence markdown-ish → storage format', () => {
  async function storageFor(body: string, bodyFormat?: string): Promise<string> {
    route({ 'POST /api/v2/pages': { json: created('300', 'T') } });
    await ok('confluence_create_page', { space: '98304', title: 'T', body, ...(bodyFormat ? { bodyFormat } : {}) });
    return (upstream.requests.at(-1)!.json as { body: { value: string } }).body.value;
  }

  test('everything written is escaped; only recognised markup becomes elements', async () => {
    assert.equal(
      await storageFor(
        '<b>not html</b> & "quotes" \'single\' 5 > 3\n[x](javascript:alert(1)) [ok](https://ex.com/a?b=1&c="d")',
      ),
      '<p>&lt;b&gt;not html&lt;/b&gt; &amp; &quot;quotes&quot; \'single\' 5 &gt; 3<br />[x](javascript:alert(1)) <a href="https://ex.com/a?b=1&amp;c=&quot;d&quot;">ok</a></p>',
    );
  });

  test('code blocks become the code macro, with "]]>" split out of the CDATA', async () => {
    assert.equal(
      await storageFor('```ts\nif (a < b) x = "]]>";\n```'),
      '<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">ts</ac:parameter><ac:plain-text-body><![CDATA[if (a < b) x = "]]]]><![CDATA[>";]]></ac:plain-text-body></ac:structured-macro>',
    );
  });

  test('tables, nested and mixed lists, quotes, rules, emphasis, snake_case and bare links', async () => {
    assert.equal(
      await storageFor(
        '| a | b \\| c |\n|---|:---:|\n| `x<y` | **y** |\n\n- one\n  1. sub\n- two\n\n> quoted _text_\n\n---\nsnake_case_name and *em* and https://ex.com/x.',
      ),
      '<table><tbody><tr><th>a</th><th>b | c</th></tr><tr><td><code>x&lt;y</code></td><td><strong>y</strong></td></tr></tbody></table>' +
        '<ul><li>one<ol><li>sub</li></ol></li><li>two</li></ul><blockquote><p>quoted <em>text</em></p></blockquote><hr />' +
        '<p>snake_case_name and <em>em</em> and <a href="https://ex.com/x">https://ex.com/x</a>.</p>',
    );
  });

  test('control characters XML forbids are dropped and a lone surrogate becomes U+FFFD', async () => {
    assert.equal(await storageFor('a\u0001b\u0007c \uD800 d\ud83d\ude00', 'text'), '<p>abc \uFFFD d\ud83d\ude00</p>');
  });

  test('storage bodies are sent as they are', async () => {
    assert.equal(
      await storageFor('<p>raw <ac:emoticon ac:name="smile"/></p>', 'storage'),
      '<p>raw <ac:emoticon ac:name="smile"/></p>',
    );
  });
});

describe('atlassian-confluence: a lone surrogate is sent as U+FFFD (%EF%BF%BD), as URLSearchParams sends it', () => {
  test('in a query-string argument: confluence_search with a CQL holding "\\uD800"', async () => {
    route({ 'GET /rest/api/search': { json: { results: [], _links: {} } } });
    await ok('confluence_search', { cql: 'text ~ "a\uD800b"' });
    assertCalls([['GET', '/rest/api/search', { cql: 'text ~ "a\uFFFDb"', limit: '25' }]]);
    assert.match(upstream.requests[1]!.url, /[?&]cql=text%20~%20%22a%EF%BF%BDb%22(&|$)/);
  });

  test('in a path segment: a cloud id holding "\\uDC00" from the accessible resources', async () => {
    const { user, apiKey } = await gw.createUser('confluence-surrogate@example.com');
    await gw.connect('atlassian-confluence', { token: TOKEN }, user);
    sites = [{ id: 'cloud-\uDC00', url: 'https://gamma.atlassian.net', name: 'gamma', scopes: WIKI_SCOPES }];
    try {
      route({ 'GET /ex/confluence/cloud-%EF%BF%BD/wiki/api/v2/spaces/1': { json: RAW_SPACE } });
      const r = (await ok('confluence_get_space', { space: '1' }, apiKey)) as { url: string };
      assert.equal(r.url, 'https://gamma.atlassian.net/wiki/spaces/ENG');
      assertCalls(
        [['GET', '/api/v2/spaces/1', { 'description-format': 'plain' }]],
        '/ex/confluence/cloud-%EF%BF%BD/wiki',
      );
    } finally {
      sites = SITES;
    }
  });
});

// ---------- the gateway's own refusals (response cap, timeout) in words, not bare bridge codes ----------
describe('atlassian-confluence: an answer over the response cap, or none in time', () => {
  let small: Gateway;
  before(async () => {
    small = await startPluginGateway(
      'atlassian-confluence',
      upstream,
      { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600, config: { site: 'beta.atlassian.net' } },
      { policy: { http: { maxResponseBytes: 4096, requestTimeoutMs: 200 } } },
    );
  });
  after(async () => small?.close());
  const smallCalls = toolCalls(() => small, [TOKEN]);

  test('a page over the cap says where to open it (reading and updating)', async () => {
    route({ 'GET /api/v2/pages/123': { json: withBody(`<p>${'x'.repeat(20000)}</p>`) } });
    await smallCalls.fails(
      'confluence_get_page',
      { pageId: '123' },
      /^Confluence's answer is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\) while trying to read page 123: the page's body is too large to read here \(and so to update here\)\. Open it in Confluence: https:\/\/beta\.atlassian\.net\/wiki\/pages\/viewpage\.action\?pageId=123\./,
    );
    await smallCalls.fails(
      'confluence_update_page',
      { pageId: '123', body: 'x' },
      /while trying to read page 123 before updating it: the page's body is too large to read here \(and so to update here\)/,
    );
    assert.ok(
      upstream.requests.every((r) => r.method === 'GET'),
      'nothing was written',
    );
  });

  test('a list over the cap says to ask for less', async () => {
    route({ 'GET /api/v2/spaces': { json: { results: Array.from({ length: 30 }, () => RAW_SPACE), _links: {} } } });
    await smallCalls.fails(
      'confluence_list_spaces',
      {},
      /^Confluence's answer is larger than the gateway accepts \(GW_ERR_BRIDGE_RESPONSE_TOO_LARGE\) while trying to list spaces: ask for less \(a smaller limit\)/,
    );
  });

  test('no answer in time: a read says to try again, a write to check first', async () => {
    const late = (reply: UpstreamReply) => () =>
      new Promise<UpstreamReply>((resolve) => setTimeout(() => resolve(reply), 1000));
    route({ 'GET /api/v2/pages/123': late({ json: withBody(STORAGE) }) as unknown as RouteReply });
    await smallCalls.fails(
      'confluence_get_page',
      { pageId: '123' },
      /^Confluence did not answer in time \(GW_ERR_BRIDGE_TIMEOUT\) while trying to read page 123\. Try again in a moment\./,
    );
    route({
      'GET /api/v2/pages/123': { json: withBody(STORAGE) },
      'PUT /api/v2/pages/123': late({ json: created('123', 'Deploy guide', 8) }) as unknown as RouteReply,
    });
    await smallCalls.fails(
      'confluence_update_page',
      { pageId: '123', body: 'x' },
      /^Confluence did not answer in time \(GW_ERR_BRIDGE_TIMEOUT\) while trying to update page 123\. It may still have been done: check before trying again\./,
    );
  });
});
