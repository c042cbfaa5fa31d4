/**
 * @module test/plugins/google-gmail.test
 * Every Gmail tool runs through the real gateway and sandbox against a loopback stand-in for
 * gmail.googleapis.com (reached through the policy's origin mapping): the request each tool makes
 * (method, /gmail/v1/users/me path, query with its repeated keys, JSON body, Bearer token) and its
 * slim result come from one table. Then the MIME reader on awkward messages (multipart/alternative
 * inside multipart/mixed, an HTML-only Latin-1 body, no charset, encoded-word headers), the MIME
 * writer (RFC 2047 subjects and names, replies threaded with In-Reply-To and References, CR/LF in a
 * header refused), the error mappings (401, 403 scopes vs 403 rate limits, 404, 400, 429) and bad
 * arguments refused before any request.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway, usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import { startUpstream, type RecordedRequest, type Upstream, type UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'ya29.gmail-access-token-0123456789';
const BASE = '/gmail/v1/users/me';
type Gateway = TestGateway;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway(
  'google-gmail',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 },
  (s) => ({ upstream, gw } = s),
);

/** Answers "METHOD /path" (path under /gmail/v1/users/me). */
const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: BASE,
    notFound: (m, path) => ({ error: { code: 404, message: `no route ${m} ${path}`, status: 'NOT_FOUND' } }),
  });

/** [method, path, query entries in order (GET) or JSON body (writes)] */
type Call = [method: string, path: string, queryOrBody?: unknown];

function assertCalls(calls: Call[]): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  calls.forEach(([method, path, expected], i) => {
    const req = reqs[i]!;
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`, `request ${i} carries the user's token`);
    assert.equal(req.method, method, `request ${i} method`);
    assert.equal(req.path, `${BASE}${path}`, `request ${i} path`);
    if (method === 'GET') {
      assert.deepEqual([...req.query], expected ?? [], `request ${i} query`);
      assert.equal(req.body, '');
    } else if (expected === undefined) {
      assert.equal(req.body, '', `request ${i} has no body`);
    } else {
      assert.match(String(req.headers['content-type']), /^application\/json/);
      assert.deepEqual(req.json, expected, `request ${i} JSON body`);
    }
  });
}

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

// ---------- fixtures ----------

const b64url = (s: string | Buffer) => (typeof s === 'string' ? Buffer.from(s, 'utf8') : s).toString('base64url');
const hdrs = (h: Record<string, string>) => Object.entries(h).map(([name, value]) => ({ name, value }));
const META = [
  ['format', 'metadata'],
  ['metadataHeaders', 'From'],
  ['metadataHeaders', 'To'],
  ['metadataHeaders', 'Subject'],
  ['metadataHeaders', 'Date'],
];
const THREAD_META = [
  ['format', 'metadata'],
  ...['From', 'To', 'Cc', 'Subject', 'Date'].map((h) => ['metadataHeaders', h]),
];
const REPLY_META = [
  ['format', 'metadata'],
  ['metadataHeaders', 'Subject'],
  ['metadataHeaders', 'Message-ID'],
  ['metadataHeaders', 'References'],
  ['metadataHeaders', 'From'],
  ['metadataHeaders', 'Reply-To'],
  ['metadataHeaders', 'To'],
];

const metaMessage = (id: string, subject: string, labels = ['INBOX', 'UNREAD']) => ({
  id,
  threadId: `t-${id}`,
  labelIds: labels,
  snippet: 'Don&#39;t forget &amp; bring the slides',
  sizeEstimate: 4000,
  internalDate: '1767000000000',
  payload: {
    mimeType: 'multipart/alternative',
    headers: hdrs({
      From: 'Alice <alice@example.com>',
      To: 'me@example.com',
      Subject: subject,
      Date: 'Mon, 2 Mar 2026 09:00:00 +0100',
    }),
  },
});
const slimRow = (id: string, subject: string, labels = ['INBOX', 'UNREAD']) => ({
  id,
  threadId: `t-${id}`,
  date: 'Mon, 2 Mar 2026 09:00:00 +0100',
  from: 'Alice <alice@example.com>',
  to: 'me@example.com',
  subject,
  snippet: "Don't forget & bring the slides",
  labels,
  unread: labels.includes('UNREAD'),
});

// multipart/mixed ▸ [multipart/alternative ▸ [text/plain utf-8, text/html], application/pdf attachment]
const SUBJECT_FR = 'Réunion – budget ✓';
const MIXED = {
  id: 'm1',
  threadId: 't1',
  labelIds: ['INBOX', 'UNREAD', 'IMPORTANT'],
  snippet: 'x',
  internalDate: '1767000000000',
  payload: {
    partId: '',
    mimeType: 'multipart/mixed',
    filename: '',
    headers: hdrs({
      From: '=?ISO-8859-1?Q?Andr=E9_Dupont?= <andre@example.com>',
      To: 'me@example.com',
      Cc: 'Bob <bob@example.com>',
      Subject: `=?UTF-8?B?${Buffer.from(SUBJECT_FR).toString('base64')}?=`,
      Date: 'Tue, 3 Mar 2026 10:00:00 +0100',
      'Message-Id': '<abc@mail.example.com>',
    }),
    body: { size: 0 },
    parts: [
      {
        partId: '0',
        mimeType: 'multipart/alternative',
        filename: '',
        headers: hdrs({ 'Content-Type': 'multipart/alternative; boundary="b2"' }),
        body: { size: 0 },
        parts: [
          {
            partId: '0.0',
            mimeType: 'text/plain',
            filename: '',
            headers: hdrs({ 'Content-Type': 'text/plain; charset="UTF-8"' }),
            body: { size: 20, data: b64url('Bonjour à tous,\r\nle budget est prêt.\r\n') },
          },
          {
            partId: '0.1',
            mimeType: 'text/html',
            filename: '',
            headers: hdrs({ 'Content-Type': 'text/html; charset="UTF-8"' }),
            body: { size: 40, data: b64url('<p>Bonjour <b>à tous</b></p>') },
          },
        ],
      },
      {
        partId: '1',
        mimeType: 'application/pdf',
        filename: 'budget 2026.pdf',
        headers: hdrs({
          'Content-Type': 'application/pdf; name="budget 2026.pdf"',
          'Content-Disposition': 'attachment; filename="budget 2026.pdf"',
        }),
        body: { attachmentId: 'ANGjdJ-att1', size: 48213 },
      },
    ],
  },
};
const MIXED_FULL = {
  id: 'm1',
  threadId: 't1',
  date: 'Tue, 3 Mar 2026 10:00:00 +0100',
  from: 'André Dupont <andre@example.com>',
  to: 'me@example.com',
  cc: 'Bob <bob@example.com>',
  subject: SUBJECT_FR,
  messageId: '<abc@mail.example.com>',
  labels: ['INBOX', 'UNREAD', 'IMPORTANT'],
  unread: true,
  body: 'Bonjour à tous,\nle budget est prêt.',
  bodyFormat: 'text',
  truncated: false,
  attachments: [
    { filename: 'budget 2026.pdf', mimeType: 'application/pdf', size: 48213, attachmentId: 'ANGjdJ-att1', partId: '1' },
  ],
};

// an HTML-only message in ISO-8859-1 (bytes, not UTF-8), with a style block, a link and entities
const LATIN1_HTML = Buffer.from(
  '<html><head><style>p { color: red }</style></head><body><p>Caf\xe9 &amp; cr\xe8me&nbsp;br\xfbl\xe9e</p>' +
    '<p>Voir <a href="https://example.com/menu?a=1&amp;b=2">le menu</a><br>Merci</p><ul><li>un</li><li>deux</li></ul></body></html>',
  'latin1',
);
const HTML_ONLY = {
  id: 'm2',
  threadId: 't2',
  labelIds: ['INBOX'],
  internalDate: '1767000000000',
  payload: {
    partId: '',
    mimeType: 'text/html',
    filename: '',
    headers: hdrs({ From: 'resto@example.com', Subject: 'Menu', 'Content-Type': 'text/html; charset=ISO-8859-1' }),
    body: { size: LATIN1_HTML.length, data: LATIN1_HTML.toString('base64url') },
  },
};
const HTML_TEXT = 'Café & crème brûlée\n\nVoir le menu (https://example.com/menu?a=1&b=2)\nMerci\n\n- un\n- deux';

const payloadNoCharset = (bytes: Buffer) => ({
  id: 'm3',
  threadId: 't3',
  labelIds: [],
  internalDate: '1',
  payload: {
    partId: '',
    mimeType: 'text/plain',
    filename: '',
    headers: hdrs({ Subject: 'x', 'Content-Type': 'text/plain' }),
    body: { size: bytes.length, data: bytes.toString('base64url') },
  },
});

const NO_CONTENT: UpstreamReply = { status: 204 };
const sentRaw = (req: RecordedRequest): string =>
  Buffer.from((req.json as any).raw ?? (req.json as any).message.raw, 'base64url').toString('utf8');
const bodyB64 = (text: string) =>
  (
    Buffer.from(text.replace(/\n/g, '\r\n'), 'utf8')
      .toString('base64')
      .match(/.{1,76}/g) ?? []
  ).join('\r\n');

// ---------- the table ----------

/** anyOrder: the requests are made in parallel, so they are compared sorted by path (write calls in that order) */
interface Case {
  name?: string;
  tool: string;
  args: Record<string, unknown>;
  replies: Record<string, RouteReply>;
  calls: Call[];
  result: unknown;
  anyOrder?: boolean;
}

const CASES: Case[] = [
  {
    tool: 'gmail_get_profile',
    args: {},
    replies: {
      'GET /profile': {
        json: { emailAddress: 'asha@example.com', messagesTotal: 1523, threadsTotal: 890, historyId: '4412' },
      },
    },
    calls: [['GET', '/profile']],
    result: { emailAddress: 'asha@example.com', messagesTotal: 1523, threadsTotal: 890, historyId: '4412' },
  },
  {
    tool: 'gmail_search_emails',
    args: { query: 'from:alice is:unread', maxResults: 2 },
    replies: {
      'GET /messages': {
        json: {
          messages: [
            { id: 'a1', threadId: 't-a1' },
            { id: 'a2', threadId: 't-a2' },
          ],
          nextPageToken: 'page-2',
          resultSizeEstimate: 7,
        },
      },
      'GET /messages/a1': { json: metaMessage('a1', 'Slides') },
      'GET /messages/a2': { json: metaMessage('a2', 'Agenda', ['INBOX']) },
    },
    calls: [
      [
        'GET',
        '/messages',
        [
          ['q', 'from:alice is:unread'],
          ['maxResults', '2'],
        ],
      ],
      ['GET', '/messages/a1', META],
      ['GET', '/messages/a2', META],
    ],
    result: {
      messages: [slimRow('a1', 'Slides'), slimRow('a2', 'Agenda', ['INBOX'])],
      count: 2,
      resultSizeEstimate: 7,
      next: 'page-2',
    },
  },
  {
    name: 'gmail_search_emails (next page, labels, spam and trash)',
    tool: 'gmail_search_emails',
    args: { cursor: 'page-2', labelIds: ['INBOX', 'Label_7'], includeSpamTrash: true },
    replies: { 'GET /messages': { json: { resultSizeEstimate: 0 } } },
    calls: [
      [
        'GET',
        '/messages',
        [
          ['maxResults', '10'],
          ['pageToken', 'page-2'],
          ['labelIds', 'INBOX'],
          ['labelIds', 'Label_7'],
          ['includeSpamTrash', 'true'],
        ],
      ],
    ],
    result: { messages: [], count: 0, resultSizeEstimate: 0, next: null },
  },
  {
    name: 'gmail_search_emails leaves out a message deleted meanwhile',
    tool: 'gmail_search_emails',
    args: { query: 'x' },
    replies: {
      'GET /messages': {
        json: {
          messages: [
            { id: 'gone', threadId: 't' },
            { id: 'a1', threadId: 't-a1' },
          ],
        },
      },
      'GET /messages/a1': { json: metaMessage('a1', 'Slides') },
    },
    calls: [
      [
        'GET',
        '/messages',
        [
          ['q', 'x'],
          ['maxResults', '10'],
        ],
      ],
      ['GET', '/messages/gone', META],
      ['GET', '/messages/a1', META],
    ],
    result: { messages: [slimRow('a1', 'Slides')], count: 1, resultSizeEstimate: null, next: null },
  },
  {
    tool: 'gmail_get_email',
    args: { messageId: 'm1' },
    replies: { 'GET /messages/m1': { json: MIXED } },
    calls: [['GET', '/messages/m1', [['format', 'full']]]],
    result: MIXED_FULL,
  },
  {
    tool: 'gmail_get_thread',
    args: { threadId: 't1', maxBodyCharsPerMessage: 200 },
    replies: {
      'GET /threads/t1': {
        json: { id: 't1', historyId: '9', messages: [{ ...HTML_ONLY, internalDate: '1767000009000' }, MIXED] },
      },
      'GET /messages/m1': { json: MIXED },
      'GET /messages/m2': { json: { ...HTML_ONLY, internalDate: '1767000009000' } },
    },
    anyOrder: true,
    calls: [
      ['GET', '/messages/m1', [['format', 'full']]],
      ['GET', '/messages/m2', [['format', 'full']]],
      ['GET', '/threads/t1', THREAD_META],
    ],
    result: {
      threadId: 't1',
      subject: SUBJECT_FR,
      messageCount: 2,
      messages: [
        {
          id: 'm1',
          date: MIXED_FULL.date,
          from: MIXED_FULL.from,
          to: 'me@example.com',
          cc: 'Bob <bob@example.com>',
          subject: SUBJECT_FR,
          unread: true,
          body: MIXED_FULL.body,
          truncated: false,
          attachments: [{ filename: 'budget 2026.pdf', mimeType: 'application/pdf', size: 48213 }],
        },
        {
          id: 'm2',
          date: null,
          from: 'resto@example.com',
          to: null,
          cc: null,
          subject: 'Menu',
          unread: false,
          body: `${HTML_TEXT.slice(0, 200)}`,
          truncated: false,
          attachments: [],
        },
      ],
    },
  },
  {
    tool: 'gmail_send_email',
    args: {
      to: ['bob@example.com', 'Zoë Martin <zoe@example.com>'],
      cc: ['Smith, John <john@example.com>'],
      bcc: ['audit@example.com'],
      subject: 'Quarterly plan',
      body: 'Hi all,\nsee below.\n\n— Me',
    },
    replies: { 'POST /messages/send': { json: { id: 's1', threadId: 's1', labelIds: ['SENT'] } } },
    calls: [
      [
        'POST',
        '/messages/send',
        {
          raw: b64url(
            'To: bob@example.com,\r\n =?UTF-8?B?Wm/DqyBNYXJ0aW4=?= <zoe@example.com>\r\nCc: "Smith, John" <john@example.com>\r\nBcc: audit@example.com\r\nSubject: Quarterly plan\r\n' +
              `MIME-Version: 1.0\r\nContent-Type: text/plain; charset="UTF-8"\r\nContent-Transfer-Encoding: base64\r\n\r\n${bodyB64('Hi all,\nsee below.\n\n— Me')}\r\n`,
          ),
        },
      ],
    ],
    result: {
      id: 's1',
      threadId: 's1',
      labels: ['SENT'],
      reply: false,
      to: ['bob@example.com', 'zoe@example.com'],
      cc: ['john@example.com'],
      bcc: ['audit@example.com'],
    },
  },
  {
    tool: 'gmail_create_draft',
    args: { to: ['bob@example.com'], subject: 'Draft', body: 'Later' },
    replies: { 'POST /drafts': { json: { id: 'r-1', message: { id: 'd1', threadId: 'd1', labelIds: ['DRAFT'] } } } },
    calls: [
      [
        'POST',
        '/drafts',
        {
          message: {
            raw: b64url(
              `To: bob@example.com\r\nSubject: Draft\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset="UTF-8"\r\nContent-Transfer-Encoding: base64\r\n\r\n${bodyB64('Later')}\r\n`,
            ),
          },
        },
      ],
    ],
    result: { draftId: 'r-1', messageId: 'd1', threadId: 'd1', reply: false, to: ['bob@example.com'], cc: [], bcc: [] },
  },
  {
    tool: 'gmail_modify_labels',
    args: { messageIds: ['m1'], archive: true, read: true, starred: true },
    replies: { 'POST /messages/m1/modify': { json: { id: 'm1', threadId: 't1', labelIds: ['IMPORTANT', 'STARRED'] } } },
    calls: [['POST', '/messages/m1/modify', { addLabelIds: ['STARRED'], removeLabelIds: ['INBOX', 'UNREAD'] }]],
    result: { messageIds: ['m1'], added: ['STARRED'], removed: ['INBOX', 'UNREAD'], labels: ['IMPORTANT', 'STARRED'] },
  },
  {
    name: 'gmail_modify_labels (several messages, labels by name)',
    tool: 'gmail_modify_labels',
    args: {
      messageIds: ['m1', 'm2', 'm1'],
      read: false,
      archive: false,
      addLabels: ['clients', 'important'],
      removeLabels: ['Label_9'],
    },
    replies: {
      'GET /labels': {
        json: {
          labels: [
            { id: 'INBOX', name: 'INBOX', type: 'system' },
            { id: 'Label_3', name: 'Clients', type: 'user', messageListVisibility: 'show' },
          ],
        },
      },
      'POST /messages/batchModify': NO_CONTENT,
    },
    calls: [
      ['GET', '/labels'],
      [
        'POST',
        '/messages/batchModify',
        { ids: ['m1', 'm2'], addLabelIds: ['INBOX', 'UNREAD', 'Label_3', 'IMPORTANT'], removeLabelIds: ['Label_9'] },
      ],
    ],
    result: { messageIds: ['m1', 'm2'], added: ['INBOX', 'UNREAD', 'Label_3', 'IMPORTANT'], removed: ['Label_9'] },
  },
  {
    tool: 'gmail_list_labels',
    args: {},
    replies: {
      'GET /labels': {
        json: {
          labels: [
            {
              id: 'Label_3',
              name: 'Clients',
              type: 'user',
              messageListVisibility: 'show',
              labelListVisibility: 'labelShow',
            },
            { id: 'INBOX', name: 'INBOX', type: 'system', messageListVisibility: 'hide' },
            { id: 'Label_1', name: 'Archive/2025', type: 'user' },
            { id: 'SENT', name: 'SENT', type: 'system' },
          ],
        },
      },
    },
    calls: [['GET', '/labels']],
    result: {
      labels: [
        { id: 'INBOX', name: 'INBOX', type: 'system' },
        { id: 'SENT', name: 'SENT', type: 'system' },
        { id: 'Label_1', name: 'Archive/2025', type: 'user' },
        { id: 'Label_3', name: 'Clients', type: 'user' },
      ],
    },
  },
  {
    tool: 'gmail_trash_email',
    args: { messageId: 'm1' },
    replies: { 'POST /messages/m1/trash': { json: { id: 'm1', threadId: 't1', labelIds: ['TRASH', 'IMPORTANT'] } } },
    calls: [['POST', '/messages/m1/trash']],
    result: { id: 'm1', threadId: 't1', labels: ['TRASH', 'IMPORTANT'], trashed: true },
  },
];

describe('google-gmail tools: request made and slim result', () => {
  for (const c of CASES) {
    test(c.name ?? c.tool, async () => {
      route(c.replies);
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      if (c.anyOrder) upstream.requests.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      assertCalls(c.calls);
    });
  }

  test('the table covers every tool of the manifest', () => {
    const tools = new Set(gw.gateway.registry.plugin('google-gmail')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(new Set(CASES.map((c) => c.tool)), tools);
  });
});

describe('google-gmail reads awkward MIME', () => {
  test('an HTML-only ISO-8859-1 message becomes text: style dropped, entities decoded, link kept', async () => {
    route({ 'GET /messages/m2': { json: HTML_ONLY } });
    const r = await ok('gmail_get_email', { messageId: 'm2' });
    assert.equal(r.body, HTML_TEXT);
    assert.equal(r.bodyFormat, 'text from html');
  });

  test('no charset: UTF-8 when the bytes are UTF-8, Windows-1252 when they are not', async () => {
    route({ 'GET /messages/m3': { json: payloadNoCharset(Buffer.from('naïve café — ok', 'utf8')) } });
    assert.equal((await ok('gmail_get_email', { messageId: 'm3' })).body, 'naïve café — ok');
    route({
      'GET /messages/m3': {
        json: payloadNoCharset(Buffer.from([0x6e, 0x61, 0xef, 0x76, 0x65, 0x20, 0x80, 0x35, 0x20, 0x93, 0x71, 0x94])),
      },
    });
    assert.equal((await ok('gmail_get_email', { messageId: 'm3' })).body, 'naïve €5 “q”');
  });

  test('an unsupported charset is decoded as UTF-8 and said so', async () => {
    const m = payloadNoCharset(Buffer.from('plain ascii', 'utf8'));
    m.payload.headers = hdrs({ Subject: 'x', 'Content-Type': 'text/plain; charset=koi8-r' });
    route({ 'GET /messages/m3': { json: m } });
    const r = await ok('gmail_get_email', { messageId: 'm3' });
    assert.equal(r.body, 'plain ascii');
    assert.match(r.note, /charset koi8-r is not supported/);
  });

  test('a long body is cut at maxBodyChars and marked truncated', async () => {
    const m = payloadNoCharset(Buffer.from('x'.repeat(500), 'utf8'));
    route({ 'GET /messages/m3': { json: m } });
    const r = await ok('gmail_get_email', { messageId: 'm3', maxBodyChars: 200 });
    assert.equal(r.body, `${'x'.repeat(200)}…`);
    assert.equal(r.truncated, true);
  });

  test('hostile HTML (unclosed comments, heads, links by the hundred thousand) is converted in linear time', async () => {
    const html = (body: string) => ({
      id: 'm4',
      threadId: 't4',
      labelIds: [],
      internalDate: '1',
      payload: {
        partId: '',
        mimeType: 'text/html',
        filename: '',
        headers: hdrs({ Subject: 'x', 'Content-Type': 'text/html; charset=UTF-8' }),
        body: { size: body.length, data: b64url(body) },
      },
    });
    for (const [body, starts] of [
      [`<p>Hi</p>${'<!--'.repeat(40000)}`, 'Hi\n<!--<!--'],
      [`<p>Hi</p>${'<head>'.repeat(83000)}tail`, 'Hi\ntail'],
      [`<p>Hi</p>${'<a href="h">'.repeat(40000)}x`, 'Hi\nx'],
      [`<p>Hi</p>${'<style>'.repeat(40000)}${'<script x'.repeat(20000)}`, 'Hi\n<script x<script x'],
    ] as const) {
      route({ 'GET /messages/m4': { json: html(body) } });
      const r = await ok('gmail_get_email', { messageId: 'm4', maxBodyChars: 200000 });
      assert.ok(r.body.startsWith(starts), `${body.slice(9, 30)}…: ${JSON.stringify(r.body.slice(0, 40))}`);
    }
  });

  test('HTML: comments, skipped elements and link addresses; a "<" that starts no tag is text', async () => {
    const body =
      '<!-- a --><title>T</title><p>1 < 2 &lt; 3</p><a href="https://x.example/?a=1&amp;b=2">see</a> <a href="https://y.example">https://y.example</a><br class="c">end';
    route({
      'GET /messages/m4': {
        json: {
          id: 'm4',
          threadId: 't4',
          payload: { mimeType: 'text/html', headers: hdrs({ Subject: 'x' }), body: { data: b64url(body) } },
        },
      },
    });
    assert.equal(
      (await ok('gmail_get_email', { messageId: 'm4' })).body,
      '1 < 2 < 3\nsee (https://x.example/?a=1&b=2) https://y.example\nend',
    );
  });

  test('a text part whose body Gmail gives as an attachmentId only is fetched; one that cannot be is listed with a note', async () => {
    const m = structuredClone(MIXED) as any;
    m.id = 'm6';
    m.payload.parts = [
      {
        partId: '0',
        mimeType: 'text/plain',
        filename: '',
        headers: hdrs({ 'Content-Type': 'text/plain; charset=UTF-8' }),
        body: { size: 30000, attachmentId: 'ATT-big' },
      },
      {
        partId: '1',
        mimeType: 'text/plain',
        filename: '',
        headers: hdrs({ 'Content-Type': 'text/plain; charset=UTF-8' }),
        body: { size: 40000, attachmentId: 'ATT-broken' },
      },
    ];
    route({
      'GET /messages/m6': { json: m },
      'GET /messages/m6/attachments/ATT-big': { json: { size: 13, data: b64url('Große Zahlen.') } },
      'GET /messages/m6/attachments/ATT-broken': {
        status: 503,
        json: { error: { code: 503, message: 'Backend Error', status: 'UNAVAILABLE' } },
      },
    });
    const r = await ok('gmail_get_email', { messageId: 'm6' });
    assert.equal(r.body, 'Große Zahlen.');
    assert.deepEqual(r.attachments, [
      { filename: null, mimeType: 'text/plain', size: 40000, attachmentId: 'ATT-broken', partId: '1' },
    ]);
    assert.match(
      r.note,
      /a text\/plain part of the body \(partId 1, 40000 bytes\) was not read \(Gmail had a server error \(503\).*\): it is listed in attachments/,
    );
    assert.equal(upstream.requests.length, 3);
  });

  test('an attached text file is listed as an attachment, not read as the body', async () => {
    const m = structuredClone(MIXED);
    m.payload.parts[1] = {
      partId: '1',
      mimeType: 'text/plain',
      filename: 'notes.txt',
      headers: hdrs({ 'Content-Disposition': 'attachment; filename="notes.txt"' }),
      body: { size: 5, data: b64url('NOTES') },
    } as any;
    route({ 'GET /messages/m1': { json: m } });
    const r = await ok('gmail_get_email', { messageId: 'm1' });
    assert.equal(r.body, MIXED_FULL.body);
    assert.deepEqual(r.attachments, [
      { filename: 'notes.txt', mimeType: 'text/plain', size: 5, attachmentId: null, partId: '1' },
    ]);
  });
});

/** Decodes =?UTF-8?B?…?= words (independently of the plugin) to check what it wrote. */
const unfoldDecode = (v: string) =>
  v
    .replace(/\r\n /g, ' ')
    .replace(/\?= =\?/g, '?==?')
    .replace(/=\?UTF-8\?B\?([^?]*)\?=/g, (_m, b) => Buffer.from(b, 'base64').toString('utf8'));
function headerBlock(raw: string): Record<string, string> {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
  const out: Record<string, string> = {};
  for (const line of head.split(/\r\n(?![ \t])/)) {
    const i = line.indexOf(':');
    out[line.slice(0, i)] = line.slice(i + 2);
  }
  return out;
}

describe('google-gmail reads large threads and messages', () => {
  const meta = (i: number) => ({
    id: `x${i}`,
    threadId: 'tb',
    labelIds: ['INBOX'],
    internalDate: String(1767000000000 + i * 1000),
    payload: { headers: hdrs({ From: `p${i}@example.com`, Subject: 'Big', Date: `d${i}` }) },
  });
  const full = (i: number) => ({
    ...meta(i),
    payload: {
      mimeType: 'text/plain',
      headers: hdrs({ From: `p${i}@example.com`, Subject: 'Big', Date: `d${i}` }),
      body: { data: b64url(`body ${i}`) },
    },
  });
  const HUGE: UpstreamReply = {
    json: { id: 'x', payload: { mimeType: 'text/plain', body: { data: 'A'.repeat(9 * 1024 * 1024) } } },
  };

  test('a thread: headers in one request, the newest 20 in full, the rest (and one too large) with headers only', async () => {
    const replies: Record<string, RouteReply> = {
      'GET /threads/tb': { json: { id: 'tb', messages: Array.from({ length: 23 }, (_, i) => meta(22 - i)) } },
    };
    for (let i = 0; i < 23; i++) replies[`GET /messages/x${i}`] = i === 21 ? HUGE : { json: full(i) };
    route(replies);
    const r = await ok('gmail_get_thread', { threadId: 'tb' });
    assert.equal(upstream.requests.length, 21, 'one metadata request and the 20 newest messages');
    assert.ok(
      !upstream.requests.some((q) => /\/messages\/x[012]$/.test(q.path)),
      'the three oldest are not downloaded',
    );
    assert.equal(r.messageCount, 23);
    assert.deepEqual(
      r.messages.map((m: any) => m.id),
      Array.from({ length: 23 }, (_, i) => `x${i}`),
    );
    assert.deepEqual(r.notRead, ['x0', 'x1', 'x2', 'x21']);
    assert.match(
      r.note,
      /^4 of the 23 messages are given with their headers only \(body null\): read them with gmail_get_email\.$/,
    );
    assert.deepEqual(r.messages[0], {
      id: 'x0',
      date: 'd0',
      from: 'p0@example.com',
      to: null,
      cc: null,
      subject: 'Big',
      unread: false,
      body: null,
      truncated: false,
      attachments: null,
      note: 'not read in full (only the newest 20 messages of a thread are read in full): read it with gmail_get_email',
    });
    assert.match(r.messages[21].note, /not read in full \(too large to download \(over the gateway's response cap\)\)/);
    assert.equal(r.messages[22].body, 'body 22');
  });

  test('a message over the response cap: its headers, with a note saying why the body is missing', async () => {
    route({ 'GET /messages/x5': (req) => (req.query.get('format') === 'full' ? HUGE : { json: meta(5) }) });
    const r = await ok('gmail_get_email', { messageId: 'x5' });
    assert.deepEqual([r.from, r.subject, r.body, r.attachments], ['p5@example.com', 'Big', null, null]);
    assert.match(
      r.note,
      /body and attachments of message x5 could not be read \(too large to download.*open it in Gmail/,
    );
  });
});

describe('google-gmail writes RFC 2822', () => {
  test('a new email: addresses, encoded-word names, Bcc, UTF-8 body in base64', async () => {
    route({ 'POST /messages/send': { json: { id: 's1', threadId: 's1', labelIds: ['SENT'] } } });
    await ok('gmail_send_email', {
      to: ['bob@example.com', 'Zoë Martin <zoe@example.com>'],
      cc: ['"Smith, John" <john@example.com>'],
      bcc: ['audit@example.com'],
      subject: 'Quarterly plan',
      body: 'Hi all,\nsee below.\n\n— Me',
    });
    const raw = sentRaw(upstream.requests[0]!);
    assert.equal(
      raw,
      'To: bob@example.com,\r\n =?UTF-8?B?Wm/DqyBNYXJ0aW4=?= <zoe@example.com>\r\nCc: "Smith, John" <john@example.com>\r\nBcc: audit@example.com\r\nSubject: Quarterly plan\r\n' +
        `MIME-Version: 1.0\r\nContent-Type: text/plain; charset="UTF-8"\r\nContent-Transfer-Encoding: base64\r\n\r\n${bodyB64('Hi all,\nsee below.\n\n— Me')}\r\n`,
    );
    assert.equal(
      Buffer.from(raw.split('\r\n\r\n')[1]!, 'base64').toString('utf8'),
      'Hi all,\r\nsee below.\r\n\r\n— Me',
    );
  });

  test('a long non-ASCII subject becomes folded encoded words of at most 75 characters that decode back exactly', async () => {
    const subject = 'Compte rendu de la réunion du comité — décisions, échéances et 日本語のテキスト ✓ ok';
    route({ 'POST /messages/send': { json: { id: 's2', threadId: 's2', labelIds: ['SENT'] } } });
    await ok('gmail_send_email', { to: ['bob@example.com'], subject, body: 'x' });
    const raw = sentRaw(upstream.requests[0]!);
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    assert.ok(/^[\x20-\x7e\r\n]*$/.test(head), 'the header block is ASCII');
    const subjectLines = head
      .slice(head.indexOf('Subject: '))
      .split('\r\n')
      .filter((l, i) => i === 0 || l.startsWith(' '));
    assert.ok(subjectLines.length > 2, 'folded over several lines');
    for (const l of subjectLines)
      for (const w of l.match(/=\?[^ ]*\?=/g) ?? []) assert.ok(w.length <= 75, `encoded word too long: ${w}`);
    assert.equal(unfoldDecode(headerBlock(raw)['Subject']!), subject);
  });

  test('a reply joins the thread with In-Reply-To and References, and defaults subject and to', async () => {
    const original = {
      id: 'm9',
      threadId: 't9',
      labelIds: ['INBOX'],
      payload: {
        headers: hdrs({
          Subject: 'Re: Budget',
          'Message-ID': '<m9@mail.example.com>',
          References: '<m7@mail.example.com>\r\n <m8@mail.example.com>',
          From: 'Andre <andre@example.com>',
          'Reply-To': 'Team <team@example.com>',
        }),
      },
    };
    route({
      'GET /messages/m9': { json: original },
      'POST /messages/send': { json: { id: 's3', threadId: 't9', labelIds: ['SENT'] } },
    });
    assert.deepEqual(await ok('gmail_send_email', { replyToMessageId: 'm9', body: 'Agreed.' }), {
      id: 's3',
      threadId: 't9',
      labels: ['SENT'],
      reply: true,
      to: ['team@example.com'],
      cc: [],
      bcc: [],
    });
    assertCalls([
      ['GET', '/messages/m9', REPLY_META],
      ['POST', '/messages/send', { raw: (upstream.requests[1]!.json as any).raw, threadId: 't9' }],
    ]);
    assert.equal(
      sentRaw(upstream.requests[1]!),
      'To: Team <team@example.com>\r\nSubject: Re: Budget\r\nIn-Reply-To: <m9@mail.example.com>\r\nReferences: <m7@mail.example.com>\r\n <m8@mail.example.com>\r\n <m9@mail.example.com>\r\n' +
        `MIME-Version: 1.0\r\nContent-Type: text/plain; charset="UTF-8"\r\nContent-Transfer-Encoding: base64\r\n\r\n${bodyB64('Agreed.')}\r\n`,
    );
  });

  test('a draft reply to a message without References: subject gets "Re: ", the sender is the recipient', async () => {
    const original = {
      id: 'm8',
      threadId: 't8',
      payload: {
        headers: hdrs({
          Subject: `=?UTF-8?B?${Buffer.from('Café').toString('base64')}?=`,
          'Message-Id': '<m8@x>',
          From: 'Zoë <zoe@example.com>',
        }),
      },
    };
    route({
      'GET /messages/m8': { json: original },
      'POST /drafts': { json: { id: 'r-2', message: { id: 'd2', threadId: 't8' } } },
    });
    assert.deepEqual(await ok('gmail_create_draft', { replyToMessageId: 'm8', cc: ['bob@example.com'], body: 'Oui' }), {
      draftId: 'r-2',
      messageId: 'd2',
      threadId: 't8',
      reply: true,
      to: ['zoe@example.com'],
      cc: ['bob@example.com'],
      bcc: [],
    });
    const req = upstream.requests[1]!;
    assert.equal((req.json as any).message.threadId, 't8');
    const h = headerBlock(sentRaw(req));
    assert.equal(h['To'], `=?UTF-8?B?${Buffer.from('Zoë').toString('base64')}?= <zoe@example.com>`);
    assert.equal(h['Cc'], 'bob@example.com');
    assert.equal(unfoldDecode(h['Subject']!), 'Re: Café');
    assert.equal(h['In-Reply-To'], '<m8@x>');
    assert.equal(h['References'], '<m8@x>');
  });

  test('a long References is folded, one id per line, and keeps the first id and the last 20', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `<r${i}@mail.example.com>`);
    const original = {
      id: 'm9',
      threadId: 't9',
      payload: {
        headers: hdrs({
          Subject: 'x',
          'Message-ID': '<m9@mail.example.com>',
          References: ids.join(' '),
          From: 'a@example.com',
        }),
      },
    };
    route({ 'GET /messages/m9': { json: original }, 'POST /messages/send': { json: { id: 's3', threadId: 't9' } } });
    await ok('gmail_send_email', { replyToMessageId: 'm9', body: 'x' });
    const raw = sentRaw(upstream.requests[1]!);
    const refs = headerBlock(raw)['References']!;
    assert.deepEqual(refs.split('\r\n '), [ids[0], ...ids.slice(-19), '<m9@mail.example.com>']);
    for (const line of raw.slice(0, raw.indexOf('\r\n\r\n')).split('\r\n'))
      assert.ok(line.length <= 78, `header line too long: ${line.slice(0, 60)}…`);
  });

  test('CR or LF in a header value is refused before any request (header injection)', async () => {
    route({});
    await fails(
      'gmail_send_email',
      { to: ['bob@example.com'], subject: 'Hi\r\nBcc: victim@example.com', body: 'x' },
      /subject contains a line break \(CR or LF\).*inject headers/,
    );
    await fails(
      'gmail_send_email',
      { to: ['bob@example.com\nBcc: victim@example.com'], subject: 'Hi', body: 'x' },
      /to contains a line break/,
    );
    await fails(
      'gmail_create_draft',
      { to: ['Bob\r <bob@example.com>'], subject: 'Hi', body: 'x' },
      /to contains a line break/,
    );
    assert.equal(upstream.requests.length, 0);
  });

  test('malformed addresses, a missing subject or no recipient are refused before any request', async () => {
    route({});
    await fails(
      'gmail_send_email',
      { to: ['bob@example.com, eve@example.com'], subject: 'Hi', body: 'x' },
      /one address per entry/,
    );
    await fails(
      'gmail_send_email',
      { to: ['not an address'], subject: 'Hi', body: 'x' },
      /"not an address" is not an email address/,
    );
    await fails('gmail_send_email', { to: ['bob@example.com'], body: 'x' }, /subject is required/);
    await fails('gmail_send_email', { subject: 'Hi', body: 'x' }, /at least one recipient/);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('google-gmail replies: whom a reply goes to by default', () => {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  /** Replies to an original with these headers (and labels) and returns the result and the sent header block. */
  async function replyTo(headers: Record<string, string>, labelIds = ['INBOX']) {
    const original = {
      id: 'm5',
      threadId: 't5',
      labelIds,
      payload: { headers: hdrs({ Subject: 'Hello', 'Message-ID': '<m5@x.example>', ...headers }) },
    };
    route({
      'GET /messages/m5': { json: original },
      'POST /messages/send': { json: { id: 's5', threadId: 't5', labelIds: ['SENT'] } },
    });
    const result = await ok('gmail_send_email', { replyToMessageId: 'm5', body: 'Thanks.' });
    return { result, head: headerBlock(sentRaw(upstream.requests[1]!)) };
  }

  test('a display name that decodes to "Bob <evil@evil.com>, Réal" adds no recipient: the reply goes to the address only', async () => {
    const hostile = `=?UTF-8?B?${b64('Bob <evil@evil.com>, Réal')}?= <noreply@service.example>`;
    for (const field of ['From', 'Reply-To']) {
      const { result, head } = await replyTo(
        field === 'From' ? { From: hostile } : { From: 'x@y.example', 'Reply-To': hostile },
      );
      assert.deepEqual([result.to, result.cc, result.bcc], [['noreply@service.example'], [], []], field);
      assert.equal(head['To'], `=?UTF-8?B?${b64('Bob <evil@evil.com>, Réal')}?= <noreply@service.example>`, field);
      assert.ok(!Object.keys(head).includes('Bcc') && !Object.keys(head).includes('Cc'));
    }
  });

  test('a Q-encoded name with a comma (=?UTF-8?Q?M=C3=BCller,_Hans?=) is one recipient, and the reply is sent', async () => {
    const { result, head } = await replyTo({ From: '=?UTF-8?Q?M=C3=BCller,_Hans?= <hans@x.example>' });
    assert.deepEqual(result.to, ['hans@x.example']);
    assert.equal(head['To'], `=?UTF-8?B?${b64('Müller, Hans')}?= <hans@x.example>`);
  });

  test('a name that decodes to a line break cannot inject a header; quoted names, comments and groups are parsed', async () => {
    let r = await replyTo({ From: `=?UTF-8?B?${b64('x\r\nBcc: evil@evil.com')}?= <n@service.example>` });
    assert.deepEqual([r.result.to, r.result.bcc], [['n@service.example'], []]);
    assert.equal(r.head['To'], '"x Bcc: evil@evil.com" <n@service.example>');
    r = await replyTo({
      From: 'x@y.example',
      'Reply-To':
        'a@example.com (Al, <b@evil.example>), "Lee, Ann <c@evil.example>" <ann@example.com>, Team: d@example.com;',
    });
    assert.deepEqual(r.result.to, ['a@example.com', 'ann@example.com', 'd@example.com']);
    assert.equal(r.head['To'], 'a@example.com,\r\n "Lee, Ann <c@evil.example>" <ann@example.com>,\r\n d@example.com');
  });

  test('a reply to a message one sent goes to its recipients (To), not to oneself, and says so', async () => {
    const { result, head } = await replyTo(
      { From: 'Me <me@example.com>', To: 'Carol <carol@example.com>, dan@example.com' },
      ['SENT'],
    );
    assert.deepEqual(result.to, ['carol@example.com', 'dan@example.com']);
    assert.equal(head['To'], 'Carol <carol@example.com>,\r\n dan@example.com');
    assert.match(result.note, /message m5 is one you sent, so to defaults to its recipients \(its To\), not to you/);
  });

  test('an original whose sender has no usable address: the reply asks for to', async () => {
    route({
      'GET /messages/m5': {
        json: {
          id: 'm5',
          threadId: 't5',
          payload: { headers: hdrs({ Subject: 'x', From: 'undisclosed-recipients:;' }) },
        },
      },
    });
    await fails(
      'gmail_send_email',
      { replyToMessageId: 'm5', body: 'x' },
      /From header has no address to reply to: give to/,
    );
    assert.equal(upstream.requests.length, 1);
  });
});

describe('google-gmail error mapping', () => {
  const gErr = (
    code: number,
    status: string,
    message: string,
    reason?: string,
    extra: Record<string, unknown> = {},
  ) => ({
    error: { code, message, status, ...(reason ? { errors: [{ message, domain: 'global', reason }] } : {}), ...extra },
  });
  const cases: Array<[string, string, Record<string, unknown>, string, UpstreamReply, RegExp]> = [
    [
      '401 invalid credentials',
      'gmail_list_labels',
      {},
      'GET /labels',
      {
        status: 401,
        json: gErr(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.', 'authError'),
      },
      /rejected the access token \(401\) while trying to list labels: reconnect google-gmail/,
    ],
    [
      '403 insufficient scopes',
      'gmail_send_email',
      { to: ['a@example.com'], subject: 's', body: 'b' },
      'POST /messages/send',
      {
        status: 403,
        json: gErr(
          403,
          'PERMISSION_DENIED',
          'Request had insufficient authentication scopes.',
          'insufficientPermissions',
          {
            details: [
              { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT' },
            ],
          },
        ),
      },
      /lacks the OAuth scope needed to send the email \(403; needs https:\/\/www\.googleapis\.com\/auth\/gmail\.modify\): reconnect google-gmail/,
    ],
    [
      '403 user rate limit',
      'gmail_get_email',
      { messageId: 'm1' },
      'GET /messages/m1',
      { status: 403, json: gErr(403, 'PERMISSION_DENIED', 'User-rate limit exceeded', 'userRateLimitExceeded') },
      /rate limited the request to read message m1 \(403 userRateLimitExceeded\): wait a minute and retry/,
    ],
    [
      '403 API not enabled',
      'gmail_list_labels',
      {},
      'GET /labels',
      {
        status: 403,
        json: gErr(
          403,
          'PERMISSION_DENIED',
          'Gmail API has not been used in project 1 before or it is disabled.',
          'accessNotConfigured',
        ),
      },
      /Gmail API is not enabled in the Google Cloud project.*operator/,
    ],
    [
      '403 other',
      'gmail_trash_email',
      { messageId: 'm1' },
      'POST /messages/m1/trash',
      { status: 403, json: gErr(403, 'PERMISSION_DENIED', 'Delegation denied for me@example.com', 'forbidden') },
      /refused permission to move message m1 to the trash \(403\)\. Gmail said: Delegation denied/,
    ],
    [
      '404 not found',
      'gmail_get_thread',
      { threadId: 'nope' },
      'GET /threads/nope',
      { status: 404, json: gErr(404, 'NOT_FOUND', 'Requested entity was not found.', 'notFound') },
      /found nothing while trying to read thread nope \(404\).*gmail_search_emails/,
    ],
    [
      '400 invalid header',
      'gmail_send_email',
      { to: ['a@example.com'], subject: 's', body: 'b' },
      'POST /messages/send',
      { status: 400, json: gErr(400, 'INVALID_ARGUMENT', 'Invalid To header', 'invalidArgument') },
      /refused to send the email \(400 INVALID_ARGUMENT\): Invalid To header/,
    ],
    [
      '409 conflict',
      'gmail_modify_labels',
      { messageIds: ['m1'], starred: true },
      'POST /messages/m1/modify',
      { status: 409, json: gErr(409, 'ABORTED', 'Conflict', 'conflict') },
      /refused to change the labels of message m1 \(409 ABORTED\): Conflict/,
    ],
    [
      '429 with retry-after',
      'gmail_search_emails',
      {},
      'GET /messages',
      {
        status: 429,
        headers: { 'retry-after': '30' },
        json: gErr(429, 'RESOURCE_EXHAUSTED', 'Too many concurrent requests for user', 'rateLimitExceeded'),
      },
      /rate limited the request to search messages \(429 rateLimitExceeded\): retry after 30 seconds/,
    ],
    [
      '500 not JSON',
      'gmail_list_labels',
      {},
      'GET /labels',
      { status: 502, body: '<html>Bad gateway</html>' },
      /server error \(502\) while trying to list labels: retry later/,
    ],
  ];
  for (const [name, tool, args, routeKey, reply, pattern] of cases) {
    test(name, async () => {
      route({ [routeKey]: reply });
      await fails(tool, args, pattern);
    });
  }

  test('a failure to read one message of a search page fails the search (only 404 is skipped)', async () => {
    route({
      'GET /messages': { json: { messages: [{ id: 'a1' }] } },
      'GET /messages/a1': { status: 401, json: gErr(401, 'UNAUTHENTICATED', 'x') },
    });
    await fails('gmail_search_emails', {}, /\(401\) while trying to read message a1/);
  });

  test('an unknown label name lists the user labels and changes nothing', async () => {
    route({
      'GET /labels': {
        json: {
          labels: [
            { id: 'Label_3', name: 'Clients', type: 'user' },
            { id: 'INBOX', name: 'INBOX', type: 'system' },
          ],
        },
      },
    });
    await fails(
      'gmail_modify_labels',
      { messageIds: ['m1'], addLabels: ['Suppliers'] },
      /No Gmail label is named "Suppliers"\. User labels: "Clients"/,
    );
    assert.ok(upstream.requests.every((r) => r.method === 'GET'));
  });

  test('argument problems are refused before any request', async () => {
    route({});
    await fails('gmail_modify_labels', { messageIds: ['m1'] }, /Nothing to change/);
    await fails(
      'gmail_modify_labels',
      { messageIds: ['m1'], starred: true, removeLabels: ['STARRED'] },
      /STARRED is both added and removed/,
    );
    await fails('gmail_get_email', { messageId: '../labels' }, /Invalid arguments for gmail_get_email/);
    await fails('gmail_search_emails', { maxResults: 21 }, /Invalid arguments for gmail_search_emails/);
    await fails('gmail_send_email', { to: ['a@example.com'], subject: 's' }, /Invalid arguments for gmail_send_email/);
    await fails('gmail_modify_labels', { messageIds: [] }, /Invalid arguments for gmail_modify_labels/);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('google-gmail plans its requests with ctx.limits', () => {
  let low: Gateway;
  let lowUp: Upstream;
  before(async () => {
    lowUp = await startUpstream((req) => {
      if (req.path === `${BASE}/messages`)
        return {
          json: {
            messages: Array.from({ length: Number(req.query.get('maxResults')) }, (_, i) => ({
              id: `m${i}`,
              threadId: `t${i}`,
            })),
            nextPageToken: 'p2',
            resultSizeEstimate: 40,
          },
        };
      const id = req.path.slice(`${BASE}/messages/`.length);
      return {
        json: {
          id,
          threadId: 't',
          labelIds: ['INBOX'],
          snippet: 's',
          payload: { headers: [{ name: 'Subject', value: `subject ${id}` }] },
        },
      };
    });
    low = await startPluginGateway(
      'google-gmail',
      lowUp,
      { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 },
      { policy: { plugins: { 'google-gmail': { limits: { maxRequestsPerCall: 6 } } } } },
    );
  });
  after(async () => {
    await low?.close();
    await lowUp?.close();
  });

  test('a search page is as long as the requests a call may make: the list and 5 messages when 6 are allowed', async () => {
    const item = (await low.execute('gmail_search_emails', { query: 'is:unread', maxResults: 20 })) as Record<
      string,
      any
    >;
    assert.ok('result' in item, JSON.stringify(item));
    assert.equal(lowUp.requests[0]?.query.get('maxResults'), '5');
    assert.equal(lowUp.requests.length, 6);
    assert.equal(item.result.count, 5);
    assert.equal(item.result.next, 'p2');
    assert.match(
      item.result.note,
      /^Pages are 5 messages here \(a call may make 6 requests, one per message\): pass next for more\.$/,
    );
  });
});

describe('the mailbox profile', () => {
  test('gmail_get_profile: a token without Gmail access gets the reconnect words', async () => {
    route({
      'GET /profile': {
        status: 401,
        json: {
          error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' },
        },
      },
    });
    await fails('gmail_get_profile', {}, /reconnect google-gmail/);
  });
});
