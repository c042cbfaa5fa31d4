/**
 * @module test/plugins/google-drive.test
 * Every Google Drive tool runs through the real gateway and sandbox against a loopback stand-in
 * for www.googleapis.com (reached through the policy's origin mapping). One table states, per
 * tool, the requests it must make (method, path, exact query, JSON body, the injected Bearer
 * token) and its slim result; then the search expression (string literals with quotes and
 * backslashes escaped), reading content (export, download, binary, cut with an offset), the
 * multipart/related upload body, the error mappings (401, 403 scopes vs 403 rate limits, 404,
 * 429, 400) and argument checks made before any request.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { RecordedRequest, Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'ya29.drive-plugin-test-token-0001';
const BASE = '/drive/v3';
const LIST_FIELDS =
  'nextPageToken,incompleteSearch,files(id,name,mimeType,modifiedTime,size,parents,driveId,webViewLink,trashed,owners(displayName,emailAddress))';
const DETAIL_FIELDS =
  'id,name,mimeType,description,size,createdTime,modifiedTime,parents,driveId,webViewLink,trashed,starred,shared,' +
  'owners(displayName,emailAddress),lastModifyingUser(displayName,emailAddress),shortcutDetails(targetId,targetMimeType),' +
  'capabilities(canEdit,canComment,canShare,canTrash,canDownload,canRename,canAddChildren)';
const READ_FIELDS = 'id,name,mimeType,size,modifiedTime,webViewLink,shortcutDetails(targetId,targetMimeType)';
const WRITE_FIELDS = 'id,name,mimeType,parents,driveId,webViewLink,trashed,modifiedTime';
const PERMISSION_FIELDS = 'id,type,role,emailAddress,domain,displayName,expirationTime,deleted,allowFileDiscovery';
const ALL = { supportsAllDrives: 'true' };

type Gateway = TestGateway;
type Json = Record<string, unknown>;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway(
  'google-drive',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 },
  (s) => ({ upstream, gw } = s),
);

/** Answers "METHOD /path" (under /drive/v3, or absolute when it starts with /upload). */
const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: BASE,
    notFound: (m, path) => ({ error: { code: 404, message: `no route ${m} ${path}`, status: 'NOT_FOUND' } }),
  });

interface Call {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

/** Exactly these requests, each with the Bearer token, this exact query and (for writes) this JSON body. */
function assertCalls(calls: Call[]): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  calls.forEach((c, i) => {
    const req = reqs[i]!;
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`, `request ${i} carries the Bearer token`);
    assert.equal(req.method, c.method, `request ${i} method`);
    assert.equal(req.path, c.path.startsWith('/upload') ? c.path : `${BASE}${c.path}`, `request ${i} path`);
    assert.deepEqual(Object.fromEntries(req.query), c.query ?? {}, `request ${i} query`);
    if (c.body === undefined) assert.equal(req.body, '', `request ${i} has no body`);
    else {
      assert.match(String(req.headers['content-type']), /^application\/json/);
      assert.deepEqual(req.json, c.body, `request ${i} JSON body`);
    }
  });
}

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

const gerr = (code: number, message: string, status: string, reason?: string) => ({
  status: code,
  json: { error: { code, message, status, ...(reason ? { errors: [{ domain: 'global', reason, message }] } : {}) } },
});

// ---------- fixtures: Drive-shaped answers; NOISE marks what a slim result drops ----------
const T = '2025-03-01T10:00:00.000Z';
const NOISE = { kind: 'drive#file', iconLink: 'NOISE', thumbnailLink: 'NOISE' };
const FILE = {
  ...NOISE,
  id: 'f1',
  name: 'Plan.docx',
  mimeType: 'application/vnd.google-apps.document',
  modifiedTime: T,
  size: '2048',
  parents: ['p1'],
  webViewLink: 'https://docs.google.com/document/d/f1/edit',
  owners: [{ displayName: 'Ann', emailAddress: 'ann@example.com', photoLink: 'NOISE', kind: 'drive#user' }],
};
const SLIM = {
  id: 'f1',
  name: 'Plan.docx',
  mimeType: 'application/vnd.google-apps.document',
  modifiedTime: T,
  size: 2048,
  parents: ['p1'],
  owners: ['ann@example.com'],
  driveId: null,
  webViewLink: 'https://docs.google.com/document/d/f1/edit',
};
const FOLDER_JSON = {
  ...NOISE,
  id: 'd9',
  name: 'Reports',
  mimeType: 'application/vnd.google-apps.folder',
  parents: ['root0'],
  webViewLink: 'https://drive.google.com/drive/folders/d9',
  modifiedTime: T,
};
const FOLDER_SLIM = {
  id: 'd9',
  name: 'Reports',
  mimeType: 'application/vnd.google-apps.folder',
  modifiedTime: T,
  size: null,
  parents: ['root0'],
  owners: [],
  driveId: null,
  webViewLink: 'https://drive.google.com/drive/folders/d9',
};
const PERM = {
  kind: 'drive#permission',
  id: 'perm-1',
  type: 'user',
  role: 'writer',
  emailAddress: 'bob@example.com',
  displayName: 'Bob',
  photoLink: 'NOISE',
  pendingOwner: false,
};
const PERM_SLIM = {
  id: 'perm-1',
  type: 'user',
  role: 'writer',
  emailAddress: 'bob@example.com',
  domain: null,
  displayName: 'Bob',
  expirationTime: null,
};

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
    tool: 'drive_search_files',
    args: { nameContains: 'plan', mimeType: 'document', pageSize: 10 },
    replies: {
      'GET /files': {
        json: { kind: 'drive#fileList', files: [FILE], nextPageToken: 'tok-2', incompleteSearch: false },
      },
    },
    calls: [
      {
        method: 'GET',
        path: '/files',
        query: {
          q: "name contains 'plan' and mimeType = 'application/vnd.google-apps.document' and trashed = false",
          pageSize: '10',
          orderBy: 'modifiedTime desc',
          fields: LIST_FIELDS,
          ...ALL,
          includeItemsFromAllDrives: 'true',
        },
      },
    ],
    result: {
      query: "name contains 'plan' and mimeType = 'application/vnd.google-apps.document' and trashed = false",
      files: [SLIM],
      count: 1,
      next: 'tok-2',
    },
  },
  {
    name: 'drive_search_files (folder listing, next page, in a shared drive)',
    tool: 'drive_search_files',
    args: {
      folderId: 'https://drive.google.com/drive/folders/d9',
      cursor: 'tok-2',
      driveId: 'sd1',
      orderBy: 'folder,name',
    },
    replies: {
      'GET /files': { json: { files: [{ ...FILE, driveId: 'sd1', trashed: false }], incompleteSearch: true } },
    },
    calls: [
      {
        method: 'GET',
        path: '/files',
        query: {
          q: "'d9' in parents and trashed = false",
          pageSize: '25',
          pageToken: 'tok-2',
          orderBy: 'folder,name',
          fields: LIST_FIELDS,
          ...ALL,
          includeItemsFromAllDrives: 'true',
          corpora: 'drive',
          driveId: 'sd1',
        },
      },
    ],
    result: {
      query: "'d9' in parents and trashed = false",
      files: [{ ...SLIM, driveId: 'sd1' }],
      count: 1,
      next: null,
      incompleteSearch: true,
    },
  },
  {
    tool: 'drive_get_file',
    args: { fileId: 'https://docs.google.com/document/d/f1/edit?usp=sharing' },
    replies: {
      'GET /files/f1': {
        json: {
          ...FILE,
          description: 'Q3 plan',
          createdTime: T,
          starred: true,
          shared: true,
          trashed: false,
          lastModifyingUser: { displayName: 'Bob', emailAddress: 'bob@example.com' },
          capabilities: { canEdit: true, canShare: false },
        },
      },
    },
    calls: [{ method: 'GET', path: '/files/f1', query: { fields: DETAIL_FIELDS, ...ALL } }],
    result: {
      ...SLIM,
      description: 'Q3 plan',
      createdTime: T,
      lastModifiedBy: 'bob@example.com',
      starred: true,
      shared: true,
      trashed: false,
      shortcutTarget: null,
      capabilities: { canEdit: true, canShare: false },
      readableAsText: true,
    },
  },
  {
    tool: 'drive_read_file',
    args: { fileId: 'f1', format: 'markdown' },
    replies: {
      'GET /files/f1': { json: FILE },
      'GET /files/f1/export': { headers: { 'content-type': 'text/markdown' }, body: '# Plan\n\n- ship it' },
    },
    calls: [
      { method: 'GET', path: '/files/f1', query: { fields: READ_FIELDS, ...ALL } },
      { method: 'GET', path: '/files/f1/export', query: { mimeType: 'text/markdown' } },
    ],
    result: {
      id: 'f1',
      name: 'Plan.docx',
      mimeType: 'application/vnd.google-apps.document',
      modifiedTime: T,
      webViewLink: SLIM.webViewLink,
      exportedAs: 'text/markdown',
      totalChars: 17,
      offset: 0,
      content: '# Plan\n\n- ship it',
      nextOffset: null,
    },
  },
  {
    tool: 'drive_create_folder',
    args: { name: 'Reports', parentId: 'root0' },
    replies: { 'POST /files': { json: FOLDER_JSON } },
    calls: [
      {
        method: 'POST',
        path: '/files',
        query: { ...ALL, fields: WRITE_FIELDS },
        body: { name: 'Reports', mimeType: 'application/vnd.google-apps.folder', parents: ['root0'] },
      },
    ],
    result: FOLDER_SLIM,
  },
  {
    tool: 'drive_move_or_rename_file',
    args: { fileId: 'f1', name: 'Plan v2', moveToFolderId: 'd9' },
    replies: {
      'GET /files/f1': { json: { parents: ['p1', 'p2'] } },
      'PATCH /files/f1': { json: { ...FILE, name: 'Plan v2', parents: ['d9'] } },
    },
    calls: [
      { method: 'GET', path: '/files/f1', query: { fields: 'parents', ...ALL } },
      {
        method: 'PATCH',
        path: '/files/f1',
        query: { ...ALL, fields: WRITE_FIELDS, addParents: 'd9', removeParents: 'p1,p2' },
        body: { name: 'Plan v2' },
      },
    ],
    result: { ...SLIM, name: 'Plan v2', parents: ['d9'] },
  },
  {
    name: 'drive_move_or_rename_file (rename only: no parents look-up)',
    tool: 'drive_move_or_rename_file',
    args: { fileId: 'f1', name: 'Plan v3', description: '' },
    replies: { 'PATCH /files/f1': { json: { ...FILE, name: 'Plan v3' } } },
    calls: [
      {
        method: 'PATCH',
        path: '/files/f1',
        query: { ...ALL, fields: WRITE_FIELDS },
        body: { name: 'Plan v3', description: '' },
      },
    ],
    result: { ...SLIM, name: 'Plan v3' },
  },
  {
    tool: 'drive_share_file',
    args: {
      fileId: 'f1',
      type: 'user',
      role: 'writer',
      emailAddress: 'bob@example.com',
      emailMessage: 'Please review',
    },
    replies: { 'POST /files/f1/permissions': { json: PERM } },
    calls: [
      {
        method: 'POST',
        path: '/files/f1/permissions',
        query: { ...ALL, sendNotificationEmail: 'true', emailMessage: 'Please review', fields: PERMISSION_FIELDS },
        body: { type: 'user', role: 'writer', emailAddress: 'bob@example.com' },
      },
    ],
    result: { fileId: 'f1', permission: PERM_SLIM, notified: true },
  },
  {
    name: 'drive_share_file (anyone with the link: no notification parameter)',
    tool: 'drive_share_file',
    args: { fileId: 'f1', type: 'anyone', role: 'reader', allowFileDiscovery: false },
    replies: {
      'POST /files/f1/permissions': {
        json: { id: 'anyoneWithLink', type: 'anyone', role: 'reader', allowFileDiscovery: false },
      },
    },
    calls: [
      {
        method: 'POST',
        path: '/files/f1/permissions',
        query: { ...ALL, fields: PERMISSION_FIELDS },
        body: { type: 'anyone', role: 'reader', allowFileDiscovery: false },
      },
    ],
    result: {
      fileId: 'f1',
      permission: {
        id: 'anyoneWithLink',
        type: 'anyone',
        role: 'reader',
        emailAddress: null,
        domain: null,
        displayName: null,
        expirationTime: null,
        allowFileDiscovery: false,
      },
      notified: false,
    },
  },
  {
    name: 'drive_share_file (a domain, quietly)',
    tool: 'drive_share_file',
    args: { fileId: 'f1', type: 'domain', role: 'commenter', domain: 'example.com' },
    replies: {
      'POST /files/f1/permissions': {
        json: { id: 'p-dom', type: 'domain', role: 'commenter', domain: 'example.com', allowFileDiscovery: true },
      },
    },
    calls: [
      {
        method: 'POST',
        path: '/files/f1/permissions',
        query: { ...ALL, fields: PERMISSION_FIELDS },
        body: { type: 'domain', role: 'commenter', domain: 'example.com' },
      },
    ],
    result: {
      fileId: 'f1',
      permission: {
        id: 'p-dom',
        type: 'domain',
        role: 'commenter',
        emailAddress: null,
        domain: 'example.com',
        displayName: null,
        expirationTime: null,
        allowFileDiscovery: true,
      },
      notified: false,
    },
  },
  {
    tool: 'drive_list_permissions',
    args: { fileId: 'f1' },
    replies: {
      'GET /files/f1/permissions': {
        json: {
          kind: 'drive#permissionList',
          permissions: [
            PERM,
            { id: 'p0', type: 'user', role: 'owner', emailAddress: 'ann@example.com', displayName: 'Ann' },
          ],
          nextPageToken: 'pp2',
        },
      },
    },
    calls: [
      {
        method: 'GET',
        path: '/files/f1/permissions',
        query: { ...ALL, pageSize: '100', fields: `nextPageToken,permissions(${PERMISSION_FIELDS})` },
      },
    ],
    result: {
      fileId: 'f1',
      permissions: [
        PERM_SLIM,
        {
          id: 'p0',
          type: 'user',
          role: 'owner',
          emailAddress: 'ann@example.com',
          domain: null,
          displayName: 'Ann',
          expirationTime: null,
        },
      ],
      next: 'pp2',
    },
  },
  {
    tool: 'drive_trash_file',
    args: { fileId: 'f1' },
    replies: {
      'PATCH /files/f1': {
        json: { id: 'f1', name: 'Plan.docx', mimeType: FILE.mimeType, trashed: true, webViewLink: SLIM.webViewLink },
      },
    },
    calls: [
      {
        method: 'PATCH',
        path: '/files/f1',
        query: { ...ALL, fields: 'id,name,mimeType,trashed,webViewLink' },
        body: { trashed: true },
      },
    ],
    result: { id: 'f1', name: 'Plan.docx', mimeType: FILE.mimeType, trashed: true, webViewLink: SLIM.webViewLink },
  },
  {
    name: 'drive_trash_file (restore)',
    tool: 'drive_trash_file',
    args: { fileId: 'f1', restore: true },
    replies: { 'PATCH /files/f1': { json: { id: 'f1', name: 'Plan.docx', mimeType: FILE.mimeType, trashed: false } } },
    calls: [
      {
        method: 'PATCH',
        path: '/files/f1',
        query: { ...ALL, fields: 'id,name,mimeType,trashed,webViewLink' },
        body: { trashed: false },
      },
    ],
    result: { id: 'f1', name: 'Plan.docx', mimeType: FILE.mimeType, trashed: false, webViewLink: null },
  },
];

describe('google-drive tools: request made and slim result', () => {
  for (const c of CASES) {
    test(c.name ?? c.tool, async () => {
      route(c.replies);
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      assertCalls(c.calls);
    });
  }

  test('every tool of the manifest is covered (drive_create_file below, drive_upload_from_url in google-drive-upload.test.ts)', () => {
    const tools = new Set(gw.gateway.registry.plugin('google-drive')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(new Set([...CASES.map((c) => c.tool), 'drive_create_file', 'drive_upload_from_url']), tools);
  });
});

describe('google-drive search expression', () => {
  const qOf = async (args: Json): Promise<string> => {
    route({ 'GET /files': { json: { files: [] } } });
    const r = await ok('drive_search_files', args);
    const sent = upstream.last().query.get('q');
    assert.equal(sent, r.query, 'the result names the expression sent');
    return sent!;
  };

  test('quotes and backslashes in a string literal are escaped with a backslash', async () => {
    assert.equal(
      await qOf({ nameContains: "quinn's paper\\essay" }),
      "name contains 'quinn\\'s paper\\\\essay' and trashed = false",
    );
    assert.equal(await qOf({ fullText: 'it\'s "done"' }), "fullText contains 'it\\'s \"done\"' and trashed = false");
  });

  test('a quote cannot end the literal and add a clause of its own', async () => {
    const q = await qOf({ nameContains: "x' or name contains '" });
    assert.equal(q, "name contains 'x\\' or name contains \\'' and trashed = false");
  });

  test('every structured filter, a raw q, and no orderBy with fullText', async () => {
    const q = await qOf({
      q: 'starred = true',
      fullText: 'budget',
      mimeType: 'image',
      folderId: 'root',
      modifiedAfter: '2025-01-31',
    });
    assert.equal(
      q,
      "(starred = true) and fullText contains 'budget' and mimeType contains 'image/' and 'root' in parents and modifiedTime > '2025-01-31T00:00:00' and trashed = false",
    );
    assert.equal(upstream.last().query.get('orderBy'), null, 'fullText results come in relevance order');
  });

  test('a MIME type as given, a time as given, trashed files on request', async () => {
    assert.equal(
      await qOf({ mimeType: 'application/pdf', modifiedAfter: '2025-01-31T09:00:00Z', includeTrashed: true }),
      "mimeType = 'application/pdf' and modifiedTime > '2025-01-31T09:00:00Z'",
    );
  });

  test('a time without seconds gets ":00" (zone kept)', async () => {
    assert.equal(
      await qOf({ modifiedAfter: '2025-01-31T09:00', includeTrashed: true }),
      "modifiedTime > '2025-01-31T09:00:00'",
    );
    assert.equal(
      await qOf({ modifiedAfter: '2025-01-31T09:00+02:00', includeTrashed: true }),
      "modifiedTime > '2025-01-31T09:00:00+02:00'",
    );
    assert.equal(
      await qOf({ modifiedAfter: '2025-01-31T09:00Z', includeTrashed: true }),
      "modifiedTime > '2025-01-31T09:00:00Z'",
    );
    assert.equal(
      await qOf({ modifiedAfter: '2025-01-31T09:00:30.5Z', includeTrashed: true }),
      "modifiedTime > '2025-01-31T09:00:30.5Z'",
    );
  });

  test('mimeType "constructor", "toString" or "__proto__" is not a kind (no inherited keys)', async () => {
    route({});
    for (const kind of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      await fails('drive_search_files', { mimeType: kind }, new RegExp(`mimeType "${kind}" is neither a MIME type`));
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('a raw q that speaks of trashed is left to say so', async () => {
    assert.equal(await qOf({ q: 'trashed = true' }), '(trashed = true)');
  });
});

describe('google-drive read_file', () => {
  const meta = (extra: Json) => ({
    'GET /files/f2': {
      json: { id: 'f2', name: 'x', modifiedTime: T, webViewLink: 'https://drive.google.com/file/d/f2/view', ...extra },
    },
  });
  const BASE_OUT = { id: 'f2', name: 'x', modifiedTime: T, webViewLink: 'https://drive.google.com/file/d/f2/view' };

  test('a Google Sheet is exported as CSV with a note that only its first sheet comes', async () => {
    route({
      ...meta({ mimeType: 'application/vnd.google-apps.spreadsheet' }),
      'GET /files/f2/export': { body: 'a,b\n1,2\n' },
    });
    const r = await ok('drive_read_file', { fileId: 'f2' });
    assert.equal(r.content, 'a,b\n1,2\n');
    assert.equal(r.exportedAs, 'text/csv');
    assert.match(r.note, /first sheet.*google-sheets/);
    assert.equal(upstream.last().query.get('mimeType'), 'text/csv');
  });

  test('an export over the response cap says to open the file or change format, not to ask for less', async () => {
    route({
      ...meta({ mimeType: 'application/vnd.google-apps.document' }),
      'GET /files/f2/export': { body: 'x'.repeat(9 * 1024 * 1024) },
    });
    const msg = await fails(
      'drive_read_file',
      { fileId: 'f2', maxChars: 1000 },
      /export file f2 as text\/plain was larger than the gateway accepts: offset and maxChars cannot help .*open webViewLink \(https:\/\/drive\.google\.com\/file\/d\/f2\/view\).*format "markdown"/,
    );
    assert.ok(!/ask for less/.test(msg));
  });

  test('Slides and a Doc in text format are exported as text/plain', async () => {
    for (const mime of ['application/vnd.google-apps.presentation', 'application/vnd.google-apps.document']) {
      route({ ...meta({ mimeType: mime }), 'GET /files/f2/export': { body: 'Slide 1' } });
      assert.equal((await ok('drive_read_file', { fileId: 'f2' })).content, 'Slide 1');
      assert.equal(upstream.last().query.get('mimeType'), 'text/plain');
    }
  });

  test('a text file is downloaded with alt=media, cut at maxChars, and continued from offset', async () => {
    const text = 'é'.repeat(150) + 'z'.repeat(100);
    route({
      ...meta({ mimeType: 'text/plain', size: '400' }),
      'GET /files/f2': (req) =>
        req.query.get('alt') === 'media'
          ? { body: text }
          : {
              json: {
                id: 'f2',
                name: 'x',
                mimeType: 'text/plain',
                size: '400',
                modifiedTime: T,
                webViewLink: BASE_OUT.webViewLink,
              },
            },
    });
    const first = await ok('drive_read_file', { fileId: 'f2', maxChars: 200 });
    assert.deepEqual(first, {
      ...BASE_OUT,
      mimeType: 'text/plain',
      totalChars: 250,
      offset: 0,
      content: text.slice(0, 200),
      nextOffset: 200,
      note: 'Cut at 200 of 250 characters: call again with offset 200 for the rest.',
    });
    assertCalls([
      { method: 'GET', path: '/files/f2', query: { fields: READ_FIELDS, ...ALL } },
      { method: 'GET', path: '/files/f2', query: { alt: 'media', ...ALL } },
    ]);
    const rest = await ok('drive_read_file', { fileId: 'f2', offset: 200 });
    assert.equal(rest.content, 'z'.repeat(50));
    assert.equal(rest.nextOffset, null);
    assert.equal(rest.note, undefined);
  });

  test('the default cut is 50,000 characters', async () => {
    route({
      ...meta({ mimeType: 'application/vnd.google-apps.document' }),
      'GET /files/f2/export': { body: 'a'.repeat(60000) },
    });
    const r = await ok('drive_read_file', { fileId: 'f2' });
    assert.equal(r.content.length, 50000);
    assert.equal(r.nextOffset, 50000);
    assert.match(r.note, /Cut at 50000 of 60000 characters/);
  });

  test('a binary file is answered with a note, and its bytes are never fetched', async () => {
    for (const mime of ['application/pdf', 'image/png', 'application/vnd.google-apps.drawing']) {
      route(meta({ mimeType: mime, size: '999' }));
      const r = await ok('drive_read_file', { fileId: 'f2' });
      assert.equal(r.content, null);
      assert.equal(r.binary, true);
      assert.match(r.note, /not a text format/);
      assert.equal(upstream.requests.length, 1);
    }
  });

  test('a "text" file holding NUL bytes is answered with a note', async () => {
    route({
      'GET /files/f2': (req) =>
        req.query.get('alt') === 'media'
          ? { body: 'ab\u0000cd' }
          : { json: { id: 'f2', name: 'x', mimeType: 'application/octet-stream+json' } },
    });
    const r = await ok('drive_read_file', { fileId: 'f2' });
    assert.equal(r.binary, true);
    assert.match(r.note, /binary data/);
  });

  test('a large text file is not downloaded; a folder and a shortcut say what to do instead', async () => {
    route(meta({ mimeType: 'text/csv', size: String(6 * 1024 * 1024) }));
    assert.match((await ok('drive_read_file', { fileId: 'f2' })).note, /more than the 5242880 this tool downloads/);
    assert.equal(upstream.requests.length, 1);
    route(meta({ mimeType: 'application/vnd.google-apps.folder', name: 'Reports' }));
    await fails('drive_read_file', { fileId: 'f2' }, /"Reports" is a folder.*drive_search_files and folderId "f2"/);
    route(
      meta({
        mimeType: 'application/vnd.google-apps.shortcut',
        shortcutDetails: { targetId: 'f9', targetMimeType: 'text/plain' },
      }),
    );
    assert.match((await ok('drive_read_file', { fileId: 'f2' })).note, /shortcut: read its target with fileId "f9"/);
  });
});

describe('google-drive create_file: a multipart/related upload', () => {
  function parts(req: RecordedRequest): { boundary: string; parts: Array<{ headers: string; body: string }> } {
    const m = /^multipart\/related; boundary=(.+)$/.exec(String(req.headers['content-type']));
    assert.ok(m, `content-type ${req.headers['content-type']}`);
    const boundary = m[1]!;
    assert.ok(boundary.length <= 70, 'RFC 2046 allows 70 characters');
    const chunks = req.body.split(`--${boundary}`);
    assert.equal(chunks[0], '', 'the body starts with the first delimiter');
    assert.equal(chunks[chunks.length - 1], '--\r\n', 'the body ends with the close delimiter');
    return {
      boundary,
      parts: chunks.slice(1, -1).map((c) => {
        assert.ok(c.startsWith('\r\n') && c.endsWith('\r\n'));
        const [headers, ...rest] = c.slice(2, -2).split('\r\n\r\n');
        return { headers: headers!, body: rest.join('\r\n\r\n') };
      }),
    };
  }

  test('metadata as JSON, then the text; the boundary occurs in neither', async () => {
    const content = 'line 1\r\n--workbench-drive-\r\n\r\nünïcødé ✓\n--\n';
    route({
      'POST /upload/drive/v3/files': { json: { ...FILE, id: 'n1', name: 'notes.md', mimeType: 'text/markdown' } },
    });
    const r = await ok('drive_create_file', {
      name: 'notes.md',
      content,
      mimeType: 'text/markdown',
      parentId: 'd9',
      description: 'Notes',
    });
    assert.deepEqual(r, { ...SLIM, id: 'n1', name: 'notes.md', mimeType: 'text/markdown' });
    const req = upstream.last();
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/upload/drive/v3/files');
    assert.deepEqual(Object.fromEntries(req.query), { uploadType: 'multipart', ...ALL, fields: WRITE_FIELDS });
    const {
      boundary,
      parts: [meta, media, ...more],
    } = parts(req);
    assert.equal(more.length, 0);
    assert.ok(!content.includes(boundary));
    assert.equal(meta!.headers, 'Content-Type: application/json; charset=UTF-8');
    assert.deepEqual(JSON.parse(meta!.body), {
      name: 'notes.md',
      mimeType: 'text/markdown',
      parents: ['d9'],
      description: 'Notes',
    });
    assert.equal(media!.headers, 'Content-Type: text/markdown; charset=UTF-8');
    assert.equal(media!.body, content);
  });

  test('convertToGoogleDoc asks Drive for a Google Doc from plain text', async () => {
    route({ 'POST /upload/drive/v3/files': { json: FILE } });
    await ok('drive_create_file', { name: 'Plan', content: 'Hello', convertToGoogleDoc: true });
    const {
      parts: [meta, media],
    } = parts(upstream.last());
    assert.deepEqual(JSON.parse(meta!.body), { name: 'Plan', mimeType: 'application/vnd.google-apps.document' });
    assert.equal(media!.headers, 'Content-Type: text/plain; charset=UTF-8');
    assert.equal(media!.body, 'Hello');
  });

  test('an empty file is a valid upload', async () => {
    route({ 'POST /upload/drive/v3/files': { json: FILE } });
    await ok('drive_create_file', { name: 'empty.txt', content: '' });
    const {
      parts: [, media],
    } = parts(upstream.last());
    assert.equal(media!.body, '');
  });
});

describe('google-drive error mapping', () => {
  const cases: Array<[string, string, Json, string, UpstreamReply, RegExp]> = [
    [
      '401 invalid token',
      'drive_get_file',
      { fileId: 'f1' },
      'GET /files/f1',
      gerr(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token.', 'UNAUTHENTICATED'),
      /rejected the access token \(401\).*reconnect google-drive/,
    ],
    [
      '403 insufficient scopes',
      'drive_trash_file',
      { fileId: 'f1' },
      'PATCH /files/f1',
      {
        status: 403,
        json: {
          error: {
            code: 403,
            message: 'Request had insufficient authentication scopes.',
            status: 'PERMISSION_DENIED',
            errors: [{ reason: 'insufficientPermissions', domain: 'global', message: 'Insufficient Permission' }],
            details: [
              { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT' },
            ],
          },
        },
      },
      /lacks the OAuth scope needed to move file f1 to the trash \(403; needs https:\/\/www\.googleapis\.com\/auth\/drive\): reconnect google-drive/,
    ],
    [
      '403 user rate limit (Google sends rate limits as 403 too)',
      'drive_search_files',
      {},
      'GET /files',
      gerr(403, 'User Rate Limit Exceeded', 'PERMISSION_DENIED', 'userRateLimitExceeded'),
      /rate limited the request to search files \(403 userRateLimitExceeded\): wait a minute and retry/,
    ],
    [
      '403 sharing rate limit',
      'drive_share_file',
      { fileId: 'f1', type: 'user', role: 'reader', emailAddress: 'a@b.c' },
      'POST /files/f1/permissions',
      gerr(
        403,
        'Rate limit exceeded. User message: "Sorry, you have exceeded your sharing quota."',
        'PERMISSION_DENIED',
        'sharingRateLimitExceeded',
      ),
      /rate limited.*\(403 sharingRateLimitExceeded\)/,
    ],
    [
      '403 daily limit',
      'drive_get_file',
      { fileId: 'f1' },
      'GET /files/f1',
      gerr(403, 'Daily Limit Exceeded', 'PERMISSION_DENIED', 'dailyLimitExceeded'),
      /daily quota is used up.*try again tomorrow/,
    ],
    [
      '403 no access to the file',
      'drive_move_or_rename_file',
      { fileId: 'f1', name: 'x' },
      'PATCH /files/f1',
      gerr(
        403,
        'The user does not have sufficient permissions for this file.',
        'PERMISSION_DENIED',
        'insufficientFilePermissions',
      ),
      /refused to update file f1 \(403 insufficientFilePermissions\): The user does not have sufficient permissions for this file/,
    ],
    [
      '404 not found',
      'drive_get_file',
      { fileId: 'nope' },
      'GET /files/nope',
      gerr(404, 'File not found: nope.', 'NOT_FOUND', 'notFound'),
      /found nothing while trying to read the metadata of file nope \(404\): File not found: nope/,
    ],
    [
      '429 with Retry-After',
      'drive_list_permissions',
      { fileId: 'f1' },
      'GET /files/f1/permissions',
      { ...gerr(429, 'Quota exceeded', 'RESOURCE_EXHAUSTED', 'rateLimitExceeded'), headers: { 'retry-after': '12' } },
      /rate limited the request to list who has access to file f1 \(429 rateLimitExceeded\): retry after 12 seconds/,
    ],
    [
      '400 bad query',
      'drive_search_files',
      { q: 'nonsense ~~' },
      'GET /files',
      gerr(400, 'Invalid Value', 'INVALID_ARGUMENT', 'invalid'),
      /refused to search files \(400 invalid\): Invalid Value/,
    ],
    [
      '500 server error',
      'drive_get_file',
      { fileId: 'f1' },
      'GET /files/f1',
      { status: 503, body: '<html>Unavailable</html>' },
      /server error \(503\).*retry later/,
    ],
  ];
  for (const [name, tool, args, key, reply, pattern] of cases) {
    test(name, async () => {
      route({ [key]: reply });
      await fails(tool, args, pattern);
    });
  }

  test('an export too large for Google passes its message on', async () => {
    route({
      'GET /files/f1': { json: FILE },
      'GET /files/f1/export': gerr(
        403,
        'This file is too large to be exported.',
        'PERMISSION_DENIED',
        'exportSizeLimitExceeded',
      ),
    });
    await fails(
      'drive_read_file',
      { fileId: 'f1' },
      /refused to export file f1 as text\/plain \(403 exportSizeLimitExceeded\): This file is too large to be exported/,
    );
  });
});

describe('google-drive argument checks happen before any request', () => {
  const cases: Array<[string, Json, RegExp]> = [
    ['drive_search_files', { fullText: 'x', orderBy: 'name' }, /cannot sort a fullText search/],
    ['drive_search_files', { mimeType: 'spreadsheets' }, /mimeType "spreadsheets" is neither a MIME type/],
    [
      'drive_search_files',
      { folderId: "a' in parents or 'b" },
      /folderId .* is neither a Drive file id nor a Drive link/,
    ],
    ['drive_search_files', { modifiedAfter: 'yesterday' }, /Invalid arguments for drive_search_files/],
    ['drive_search_files', { pageSize: 1000 }, /Invalid arguments for drive_search_files/],
    ['drive_get_file', { fileId: '../etc' }, /is neither a Drive file id nor a Drive link/],
    ['drive_move_or_rename_file', { fileId: 'f1' }, /Nothing to change/],
    [
      'drive_create_file',
      { name: 'a', content: 'b', mimeType: 'text/csv', convertToGoogleDoc: true },
      /converts plain text/,
    ],
    [
      'drive_create_file',
      { name: 'a', content: 'b', mimeType: 'image/png' },
      /Invalid arguments for drive_create_file/,
    ],
    ['drive_share_file', { fileId: 'f1', type: 'user', role: 'reader' }, /needs emailAddress/],
    [
      'drive_share_file',
      { fileId: 'f1', type: 'anyone', role: 'reader', emailAddress: 'a@b.c' },
      /emailAddress is only for type user or group/,
    ],
    ['drive_share_file', { fileId: 'f1', type: 'domain', role: 'reader' }, /needs domain/],
    [
      'drive_share_file',
      { fileId: 'f1', type: 'anyone', role: 'reader', emailMessage: 'hi' },
      /Notification emails go only to a user or a group/,
    ],
    [
      'drive_share_file',
      {
        fileId: 'f1',
        type: 'user',
        role: 'reader',
        emailAddress: 'a@b.c',
        sendNotificationEmail: false,
        emailMessage: 'hi',
      },
      /emailMessage needs sendNotificationEmail/,
    ],
    [
      'drive_share_file',
      { fileId: 'f1', type: 'user', role: 'owner', emailAddress: 'a@b.c' },
      /Invalid arguments for drive_share_file/,
    ],
    ['drive_read_file', { fileId: 'f1', maxChars: 60000 }, /Invalid arguments for drive_read_file/],
  ];
  for (const [tool, args, pattern] of cases) {
    test(`${tool} ${JSON.stringify(args)}`, async () => {
      route({});
      await fails(tool, args, pattern);
      assert.equal(upstream.requests.length, 0);
    });
  }
});
