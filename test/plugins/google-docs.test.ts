/**
 * @module test/plugins/google-docs.test
 * Every Google Docs tool runs through the real gateway and sandbox against a loopback stand-in
 * for docs.googleapis.com (reached through the policy's origin mapping). One table states, per
 * tool, the requests it must make (method, path, exact query, JSON body, the injected Bearer
 * token) and its slim result; then the document as text (headings, lists, tables, links,
 * footnotes, tabs, paging by characters), the index checks made before an insert, the revision
 * guard (writeControl.requiredRevisionId) and its conflict message, the error mappings, the
 * gateway's response-cap and timeout refusals in words, and argument checks made before any request.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startPluginGateway, usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'ya29.docs-plugin-test-token-0001';
const ID = '1DoC-aBc_123';
const BASE = '/v1/documents';
const LINK = `https://docs.google.com/document/d/${ID}/edit`;
const REV = 'ALm37BVt-rev-1';
const TABS = { includeTabsContent: 'true' };

type Gateway = TestGateway;
type Json = Record<string, unknown>;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway(
  'google-docs',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 },
  (s) => ({ upstream, gw } = s),
);

/** Answers "METHOD /path" with the path under /v1/documents as sent. */
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

/** Exactly these requests: the path as sent under /v1/documents, the exact query, the JSON body. */
function assertCalls(calls: Call[]): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  calls.forEach((c, i) => {
    const req = reqs[i]!;
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`, `request ${i} carries the Bearer token`);
    assert.equal(req.method, c.method, `request ${i} method`);
    assert.equal(req.path, `${BASE}${c.path}`, `request ${i} path`);
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

// ---------- fixtures: structural elements with consistent indexes ----------
type Run =
  | string
  | { text: string; url?: string }
  | { person: { name: string; email: string } }
  | { footnote: string; n: string }
  | { image: string };

/** Builds body content from a start index; each element gets startIndex/endIndex in UTF-16 code units. */
function builder(start: number) {
  let at = start;
  const elementOf = (run: Run): Json => {
    const s = at;
    if (typeof run === 'string' || 'text' in run) {
      const text = typeof run === 'string' ? run : run.text;
      at += text.length;
      const link = typeof run === 'string' || !run.url ? {} : { link: { url: run.url } };
      return { startIndex: s, endIndex: at, textRun: { content: text, textStyle: { ...link, bold: false } } };
    }
    at += 1;
    if ('person' in run)
      return { startIndex: s, endIndex: at, person: { personId: 'p1', personProperties: run.person } };
    if ('footnote' in run)
      return { startIndex: s, endIndex: at, footnoteReference: { footnoteId: run.footnote, footnoteNumber: run.n } };
    return { startIndex: s, endIndex: at, inlineObjectElement: { inlineObjectId: run.image } };
  };
  const para = (runs: Run[], style = 'NORMAL_TEXT', extra: Json = {}): Json => {
    const s = at;
    const elements = runs.map(elementOf);
    const styleExtra = (extra['headingId'] ? { headingId: extra['headingId'] } : {}) as Json;
    const bullet = extra['bullet'] ? { bullet: extra['bullet'] } : {};
    return {
      startIndex: s,
      endIndex: at,
      paragraph: {
        elements,
        paragraphStyle: { namedStyleType: style, direction: 'LEFT_TO_RIGHT', ...styleExtra },
        ...bullet,
      },
    };
  };
  const table = (rows: string[][]): Json => {
    const s = at;
    at += 1;
    const tableRows = rows.map((cells) => {
      const rs = at;
      at += 1;
      const tableCells = cells.map((text) => {
        const cs = at;
        at += 1;
        const content = [para([`${text}\n`])];
        return { startIndex: cs, endIndex: at, content, tableCellStyle: { rowSpan: 1 } };
      });
      return { startIndex: rs, endIndex: at, tableCells };
    });
    at += 1;
    return { startIndex: s, endIndex: at, table: { rows: rows.length, columns: rows[0]!.length, tableRows } };
  };
  return { para, table, at: () => at };
}

const sectionBreak = { endIndex: 1, sectionBreak: { sectionStyle: { columnSeparatorStyle: 'NONE' } } };
const b = builder(1);
const PLAN_BODY = [
  sectionBreak,
  b.para(['Launch plan\n'], 'TITLE'), //                                   1–13
  b.para(['Goals\n'], 'HEADING_1', { headingId: 'h.goals' }), //             13–19
  b.para(['Ship the ', { text: 'beta', url: 'https://example.com/beta' }, ' by May.\n']), // 19–41
  b.para(['Docs\n'], 'NORMAL_TEXT', { bullet: { listId: 'kix.b' } }), //      41–46
  b.para(['API reference\n'], 'NORMAL_TEXT', { bullet: { listId: 'kix.b', nestingLevel: 1 } }), // 46–60
  b.para(['Draft\n'], 'NORMAL_TEXT', { bullet: { listId: 'kix.n' } }), //     60–66
  b.para(['Review\n'], 'NORMAL_TEXT', { bullet: { listId: 'kix.n' } }), //    66–73
  b.para(['Risks\n'], 'HEADING_2', { headingId: 'h.risks' }), //             73–79
  b.table([
    ['Risk', 'Owner'],
    ['Delay', 'Ana | Bo'],
  ]), //                     79–113 (cell paragraphs 82, 88, 96, 103)
  b.para(['\n']), //                                                          113–114
  b.para(['Timeline\n'], 'HEADING_1', { headingId: 'h.time' }), //          114–123
  b.para([
    'Kick-off\u000bMonday with ',
    { person: { name: 'Ana', email: 'ana@example.com' } },
    { footnote: 'kix.fn1', n: '1' },
    { image: 'kix.img1' },
    '.\n',
  ]), // 123–149
  b.para(['Done.\n']), //                                                     149–155
];
assert.equal(b.at(), 155, 'the fixture body ends at 155');
const fn = builder(0);
const PLAN_TAB = {
  body: { content: PLAN_BODY },
  lists: {
    'kix.b': {
      listProperties: {
        nestingLevels: [
          { glyphSymbol: '●', glyphFormat: '%0' },
          { glyphSymbol: '○', glyphFormat: '%1' },
        ],
      },
    },
    'kix.n': { listProperties: { nestingLevels: [{ glyphType: 'DECIMAL', glyphFormat: '%0.' }] } },
  },
  footnotes: { 'kix.fn1': { footnoteId: 'kix.fn1', content: [fn.para([' Source: the plan.\n'])] } },
  inlineObjects: {
    'kix.img1': {
      objectId: 'kix.img1',
      inlineObjectProperties: {
        embeddedObject: { description: 'Roadmap chart', imageProperties: { contentUri: 'NOISE' } },
      },
    },
  },
  namedStyles: { styles: [{ namedStyleType: 'NORMAL_TEXT', textStyle: { fontSize: { magnitude: 11, unit: 'PT' } } }] },
  documentStyle: { marginTop: { magnitude: 72, unit: 'PT' } },
};
const n = builder(1);
const NOTES_TAB = {
  body: {
    content: [
      sectionBreak,
      {
        startIndex: 1,
        endIndex: 8,
        tableOfContents: { content: [n.para([{ text: 'Goals\n', url: '#heading=h.goals' }])] },
      },
      builder(8).para(['Notes here.\n']),
    ],
  },
};
const tab = (tabId: string, title: string, documentTab: Json, extra: Json = {}, childTabs: Json[] = []) => ({
  tabProperties: { tabId, title, index: 0, ...extra },
  documentTab,
  ...(childTabs.length ? { childTabs } : {}),
});
const DOC = {
  documentId: ID,
  title: 'Launch plan',
  revisionId: REV,
  suggestionsViewMode: 'SUGGESTIONS_INLINE',
  tabs: [tab('t.0', 'Plan', PLAN_TAB, {}, [tab('t.1', 'Notes', NOTES_TAB, { parentTabId: 't.0', nestingLevel: 1 })])],
};
const TABS_LIST = [
  { tabId: 't.0', title: 'Plan', level: 0 },
  { tabId: 't.1', title: 'Notes', level: 1, parentTabId: 't.0' },
];
const PLAN_TEXT = [
  '# Launch plan',
  '',
  '# Goals',
  '',
  'Ship the [beta](https://example.com/beta) by May.',
  '',
  '- Docs',
  '  - API reference',
  '1. Draft',
  '2. Review',
  '',
  '## Risks',
  '',
  '| Risk | Owner |',
  '| --- | --- |',
  '| Delay | Ana \\| Bo |',
  '',
  '# Timeline',
  '',
  'Kick-off',
  'Monday with Ana (ana@example.com)[^1][image: Roadmap chart].',
  '',
  'Done.',
  '',
  '[^1]: Source: the plan.',
].join('\n');
const TAB_NOTE = 'The document has 2 tabs and this is "Plan" (t.0): pass tabId to read another.';

/** A one-tab document whose body is `content` (the end of the last element is the body's end). */
const oneTab = (content: Json[], revisionId = REV) => ({
  documentId: ID,
  title: 'Small',
  revisionId,
  tabs: [tab('t.0', 'Tab 1', { body: { content } })],
});
const EMPTY_DOC = oneTab([sectionBreak, builder(1).para(['\n'])]);
const ENDS_WITH_HEADING = oneTab([sectionBreak, builder(1).para(['Summary\n'], 'HEADING_1')]);

const batch = (replies: Json[] = [{}], rev = 'ALm37BVt-rev-2') => ({
  json: { documentId: ID, replies, writeControl: { requiredRevisionId: rev } },
});
const BATCH = `/${ID}:batchUpdate`;

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
    name: 'docs_get_document (a link: the first tab, as text with its structure)',
    tool: 'docs_get_document',
    args: { documentId: LINK },
    replies: { [`GET /${ID}`]: { json: DOC } },
    calls: [{ method: 'GET', path: `/${ID}`, query: TABS }],
    result: {
      documentId: ID,
      title: 'Launch plan',
      revisionId: REV,
      url: `${LINK}?tab=t.0`,
      tab: { tabId: 't.0', title: 'Plan' },
      tabs: TABS_LIST,
      totalChars: PLAN_TEXT.length,
      offset: 0,
      content: PLAN_TEXT,
      nextOffset: null,
      note: TAB_NOTE,
    },
  },
  {
    name: 'docs_get_document (a child tab, suggestions accepted)',
    tool: 'docs_get_document',
    args: { documentId: ID, tabId: 't.1', suggestionsViewMode: 'PREVIEW_SUGGESTIONS_ACCEPTED' },
    replies: { [`GET /${ID}`]: { json: DOC } },
    calls: [{ method: 'GET', path: `/${ID}`, query: { ...TABS, suggestionsViewMode: 'PREVIEW_SUGGESTIONS_ACCEPTED' } }],
    result: {
      documentId: ID,
      title: 'Launch plan',
      revisionId: REV,
      url: `${LINK}?tab=t.1`,
      tab: { tabId: 't.1', title: 'Notes' },
      tabs: TABS_LIST,
      totalChars: 32,
      offset: 0,
      content: '[Table of contents]\n\nNotes here.',
      nextOffset: null,
      note: 'The document has 2 tabs and this is "Notes" (t.1): pass tabId to read another.',
    },
  },
  {
    name: 'docs_get_document (the tab of a pasted link, cut at maxChars)',
    tool: 'docs_get_document',
    args: { documentId: `${LINK}?tab=t.0#heading=h.goals`, maxChars: 100 },
    replies: { [`GET /${ID}`]: { json: DOC } },
    calls: [{ method: 'GET', path: `/${ID}`, query: TABS }],
    result: {
      documentId: ID,
      title: 'Launch plan',
      revisionId: REV,
      url: `${LINK}?tab=t.0`,
      tab: { tabId: 't.0', title: 'Plan' },
      tabs: TABS_LIST,
      totalChars: PLAN_TEXT.length,
      offset: 0,
      content: PLAN_TEXT.slice(0, 100),
      nextOffset: 100,
      note: `Cut at 100 of ${PLAN_TEXT.length} characters: call again with offset 100 for the rest. ${TAB_NOTE}`,
    },
  },
  {
    name: 'docs_get_document (the older shape without tabs; read-only access: no revisionId)',
    tool: 'docs_get_document',
    args: { documentId: ID, offset: 2 },
    replies: {
      [`GET /${ID}`]: {
        json: { documentId: ID, title: 'Old', body: { content: [sectionBreak, builder(1).para(['Hi there\n'])] } },
      },
    },
    calls: [{ method: 'GET', path: `/${ID}`, query: TABS }],
    result: {
      documentId: ID,
      title: 'Old',
      revisionId: null,
      url: LINK,
      tab: null,
      tabs: [],
      totalChars: 8,
      offset: 2,
      content: ' there',
      nextOffset: null,
    },
  },
  {
    tool: 'docs_get_outline',
    args: { documentId: ID },
    replies: { [`GET /${ID}`]: { json: DOC } },
    calls: [{ method: 'GET', path: `/${ID}`, query: TABS }],
    result: {
      documentId: ID,
      title: 'Launch plan',
      revisionId: REV,
      url: `${LINK}?tab=t.0`,
      tab: { tabId: 't.0', title: 'Plan' },
      tabs: TABS_LIST,
      endIndex: 155,
      headings: [
        { style: 'TITLE', level: 0, text: 'Launch plan', startIndex: 1, endIndex: 13, sectionEndIndex: 155 },
        {
          style: 'HEADING_1',
          level: 1,
          text: 'Goals',
          startIndex: 13,
          endIndex: 19,
          sectionEndIndex: 114,
          headingId: 'h.goals',
        },
        {
          style: 'HEADING_2',
          level: 2,
          text: 'Risks',
          startIndex: 73,
          endIndex: 79,
          sectionEndIndex: 114,
          headingId: 'h.risks',
        },
        {
          style: 'HEADING_1',
          level: 1,
          text: 'Timeline',
          startIndex: 114,
          endIndex: 123,
          sectionEndIndex: 155,
          headingId: 'h.time',
        },
      ],
      count: 4,
    },
  },
  {
    tool: 'docs_create_document',
    args: { title: 'Meeting notes', text: 'Agenda\r\n1. Budget\u0007' },
    replies: {
      'POST ': { json: { documentId: 'new-1', title: 'Meeting notes', revisionId: 'r0', body: { content: [] } } },
      'POST /new-1:batchUpdate': batch([{}], 'r1'),
    },
    calls: [
      { method: 'POST', path: '', body: { title: 'Meeting notes' } },
      {
        method: 'POST',
        path: '/new-1:batchUpdate',
        body: { requests: [{ insertText: { text: 'Agenda\n1. Budget', location: { index: 1 } } }] },
      },
    ],
    result: {
      documentId: 'new-1',
      title: 'Meeting notes',
      url: 'https://docs.google.com/document/d/new-1/edit',
      revisionId: 'r1',
      insertedChars: 16,
    },
  },
  {
    name: 'docs_create_document (title only: one request)',
    tool: 'docs_create_document',
    args: { title: 'Empty' },
    replies: { 'POST ': { json: { documentId: 'new-2', title: 'Empty', revisionId: 'r0' } } },
    calls: [{ method: 'POST', path: '', body: { title: 'Empty' } }],
    result: {
      documentId: 'new-2',
      title: 'Empty',
      url: 'https://docs.google.com/document/d/new-2/edit',
      revisionId: 'r0',
      insertedChars: 0,
    },
  },
  {
    name: 'docs_append_text (a new paragraph styled as a heading, guarded by the read revision)',
    tool: 'docs_append_text',
    args: { documentId: ID, text: 'Next steps', style: 'HEADING_2' },
    replies: { [`GET /${ID}`]: { json: DOC }, [`POST ${BATCH}`]: batch([{}, {}]) },
    calls: [
      { method: 'GET', path: `/${ID}`, query: TABS },
      {
        method: 'POST',
        path: BATCH,
        body: {
          requests: [
            { insertText: { text: '\nNext steps', endOfSegmentLocation: { tabId: 't.0' } } },
            {
              updateParagraphStyle: {
                range: { startIndex: 155, endIndex: 165, tabId: 't.0' },
                paragraphStyle: { namedStyleType: 'HEADING_2' },
                fields: 'namedStyleType',
              },
            },
          ],
          writeControl: { requiredRevisionId: REV },
        },
      },
    ],
    result: {
      documentId: ID,
      tabId: 't.0',
      insertedAt: { startIndex: 155, endIndex: 165 },
      style: 'HEADING_2',
      revisionId: 'ALm37BVt-rev-2',
      url: `${LINK}?tab=t.0`,
    },
  },
  {
    name: 'docs_append_text (after a heading, body text is made normal text)',
    tool: 'docs_append_text',
    args: { documentId: ID, text: 'All good.\nMore.' },
    replies: { [`GET /${ID}`]: { json: ENDS_WITH_HEADING }, [`POST ${BATCH}`]: batch([{}, {}]) },
    calls: [
      { method: 'GET', path: `/${ID}`, query: TABS },
      {
        method: 'POST',
        path: BATCH,
        body: {
          requests: [
            { insertText: { text: '\nAll good.\nMore.', endOfSegmentLocation: { tabId: 't.0' } } },
            {
              updateParagraphStyle: {
                range: { startIndex: 9, endIndex: 24, tabId: 't.0' },
                paragraphStyle: { namedStyleType: 'NORMAL_TEXT' },
                fields: 'namedStyleType',
              },
            },
          ],
          writeControl: { requiredRevisionId: REV },
        },
      },
    ],
    result: {
      documentId: ID,
      tabId: 't.0',
      insertedAt: { startIndex: 9, endIndex: 24 },
      style: 'NORMAL_TEXT',
      revisionId: 'ALm37BVt-rev-2',
      url: LINK,
    },
  },
  {
    name: 'docs_append_text (an empty last paragraph is filled, not followed)',
    tool: 'docs_append_text',
    args: { documentId: ID, text: 'Hello', revisionId: REV },
    replies: { [`GET /${ID}`]: { json: EMPTY_DOC }, [`POST ${BATCH}`]: batch() },
    calls: [
      { method: 'GET', path: `/${ID}`, query: TABS },
      {
        method: 'POST',
        path: BATCH,
        body: {
          requests: [{ insertText: { text: 'Hello', endOfSegmentLocation: { tabId: 't.0' } } }],
          writeControl: { requiredRevisionId: REV },
        },
      },
    ],
    result: {
      documentId: ID,
      tabId: 't.0',
      insertedAt: { startIndex: 1, endIndex: 6 },
      style: null,
      revisionId: 'ALm37BVt-rev-2',
      url: LINK,
    },
  },
  {
    name: 'docs_append_text (newParagraph false continues the last paragraph)',
    tool: 'docs_append_text',
    args: { documentId: ID, text: ' Signed.', newParagraph: false, tabId: 't.0' },
    replies: { [`GET /${ID}`]: { json: DOC }, [`POST ${BATCH}`]: batch() },
    calls: [
      { method: 'GET', path: `/${ID}`, query: TABS },
      {
        method: 'POST',
        path: BATCH,
        body: {
          requests: [{ insertText: { text: ' Signed.', endOfSegmentLocation: { tabId: 't.0' } } }],
          writeControl: { requiredRevisionId: REV },
        },
      },
    ],
    result: {
      documentId: ID,
      tabId: 't.0',
      insertedAt: { startIndex: 154, endIndex: 162 },
      style: null,
      revisionId: 'ALm37BVt-rev-2',
      url: `${LINK}?tab=t.0`,
    },
  },
  {
    name: 'docs_insert_text (a normal paragraph before a heading, in a child tab-less document: no tabId)',
    tool: 'docs_insert_text',
    args: { documentId: ID, index: 9, text: 'Intro\n', style: 'NORMAL_TEXT', revisionId: REV },
    replies: {
      [`GET /${ID}`]: {
        json: {
          documentId: ID,
          title: 'Old',
          revisionId: REV,
          body: {
            content: [
              sectionBreak,
              builder(1).para(['Summary\n'], 'HEADING_1'),
              builder(9).para(['Details\n'], 'HEADING_1'),
            ],
          },
        },
      },
      [`POST ${BATCH}`]: batch([{}, {}]),
    },
    calls: [
      { method: 'GET', path: `/${ID}`, query: TABS },
      {
        method: 'POST',
        path: BATCH,
        body: {
          requests: [
            { insertText: { text: 'Intro\n', location: { index: 9 } } },
            {
              updateParagraphStyle: {
                range: { startIndex: 9, endIndex: 15 },
                paragraphStyle: { namedStyleType: 'NORMAL_TEXT' },
                fields: 'namedStyleType',
              },
            },
          ],
          writeControl: { requiredRevisionId: REV },
        },
      },
    ],
    result: {
      documentId: ID,
      tabId: null,
      insertedAt: { startIndex: 9, endIndex: 15 },
      style: 'NORMAL_TEXT',
      revisionId: 'ALm37BVt-rev-2',
      url: LINK,
    },
  },
  {
    name: 'docs_insert_text (inside a table cell, no style)',
    tool: 'docs_insert_text',
    args: { documentId: ID, index: 101, text: ' (Q3)', revisionId: REV },
    replies: { [`GET /${ID}`]: { json: DOC }, [`POST ${BATCH}`]: batch() },
    calls: [
      { method: 'GET', path: `/${ID}`, query: TABS },
      {
        method: 'POST',
        path: BATCH,
        body: {
          requests: [{ insertText: { text: ' (Q3)', location: { index: 101, tabId: 't.0' } } }],
          writeControl: { requiredRevisionId: REV },
        },
      },
    ],
    result: {
      documentId: ID,
      tabId: 't.0',
      insertedAt: { startIndex: 101, endIndex: 106 },
      style: null,
      revisionId: 'ALm37BVt-rev-2',
      url: `${LINK}?tab=t.0`,
    },
  },
  {
    tool: 'docs_replace_text',
    args: { documentId: LINK, find: '{{client}}', replaceWith: 'Acme' },
    replies: { [`POST ${BATCH}`]: batch([{ replaceAllText: { occurrencesChanged: 3 } }]) },
    calls: [
      {
        method: 'POST',
        path: BATCH,
        body: {
          requests: [
            { replaceAllText: { containsText: { text: '{{client}}', matchCase: true }, replaceText: 'Acme' } },
          ],
        },
      },
    ],
    result: { documentId: ID, occurrencesChanged: 3, revisionId: 'ALm37BVt-rev-2' },
  },
  {
    name: 'docs_replace_text (ignoring case, some tabs, guarded; nothing matched)',
    tool: 'docs_replace_text',
    args: {
      documentId: ID,
      find: 'beta',
      replaceWith: '',
      matchCase: false,
      tabIds: ['t.1', 't.0', 't.1'],
      revisionId: REV,
    },
    replies: { [`POST ${BATCH}`]: batch([{ replaceAllText: {} }]) },
    calls: [
      {
        method: 'POST',
        path: BATCH,
        body: {
          requests: [
            {
              replaceAllText: {
                containsText: { text: 'beta', matchCase: false },
                replaceText: '',
                tabsCriteria: { tabIds: ['t.1', 't.0'] },
              },
            },
          ],
          writeControl: { requiredRevisionId: REV },
        },
      },
    ],
    result: {
      documentId: ID,
      occurrencesChanged: 0,
      revisionId: 'ALm37BVt-rev-2',
      note: 'No occurrence of "beta" was found in tabs t.1, t.0: nothing changed.',
    },
  },
];

describe('google-docs tools: request made and slim result', () => {
  for (const c of CASES) {
    test(c.name ?? c.tool, async () => {
      route(c.replies);
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      assertCalls(c.calls);
    });
  }

  test('the table covers every tool of the manifest', () => {
    const tools = new Set(gw.gateway.registry.plugin('google-docs')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(new Set(CASES.map((c) => c.tool)), tools);
  });

  test('paging: the next call starts at nextOffset, and a cut never splits a surrogate pair', async () => {
    route({ [`GET /${ID}`]: { json: DOC } });
    const second = await ok('docs_get_document', { documentId: ID, offset: 100, maxChars: 100 });
    assert.equal(second.content, PLAN_TEXT.slice(100, 200));
    assert.equal(second.offset, 100);
    assert.equal(second.nextOffset, 200);
    const emoji = oneTab([sectionBreak, builder(1).para([`${'a'.repeat(99)}😀 end\n`])]);
    route({ [`GET /${ID}`]: { json: emoji } });
    const cut = await ok('docs_get_document', { documentId: ID, maxChars: 100 });
    assert.equal(cut.content, 'a'.repeat(99), 'the high surrogate at 99 is left for the next call');
    assert.equal(cut.nextOffset, 99);
    const rest = await ok('docs_get_document', { documentId: ID, offset: 99 });
    assert.equal(rest.content, '😀 end');
  });
});

describe('google-docs reading: the rest of the structure', () => {
  test('nested numbered lists restart below a new item, start numbers count, internal links and chips are kept', async () => {
    const r = builder(1);
    const item = (text: string, level: number) =>
      r.para([`${text}\n`], 'NORMAL_TEXT', { bullet: { listId: 'kix.o', ...(level ? { nestingLevel: level } : {}) } });
    const content = [
      sectionBreak,
      item('A', 0),
      item('a1', 1),
      item('a2', 1),
      item('B', 0),
      item('b1', 1),
      r.para(['See ', { text: 'Goals', url: '' }, '\n']),
      {
        ...r.para(['x\n']),
        paragraph: {
          elements: [
            { textRun: { content: 'See ', textStyle: {} } },
            { textRun: { content: 'Goals', textStyle: { link: { headingId: 'h.goals' } } } },
            { textRun: { content: ' and ', textStyle: {} } },
            {
              richLink: {
                richLinkId: 'r1',
                richLinkProperties: {
                  title: 'Budget sheet',
                  uri: 'https://docs.google.com/spreadsheets/d/x',
                  mimeType: 'application/vnd.google-apps.spreadsheet',
                },
              },
            },
            { textRun: { content: '\n', textStyle: {} } },
          ],
          paragraphStyle: { namedStyleType: 'NORMAL_TEXT' },
        },
      },
      {
        ...r.para(['x\n']),
        paragraph: {
          elements: [{ horizontalRule: {} }, { textRun: { content: '\n' } }],
          paragraphStyle: { namedStyleType: 'NORMAL_TEXT' },
        },
      },
      r.para(['The end\n'], 'SUBTITLE'),
    ];
    const doc = {
      documentId: ID,
      title: 'Lists',
      tabs: [
        tab('t.0', 'Tab 1', {
          body: { content },
          lists: {
            'kix.o': {
              listProperties: { nestingLevels: [{ glyphType: 'DECIMAL', startNumber: 3 }, { glyphType: 'ALPHA' }] },
            },
          },
        }),
      ],
    };
    route({ [`GET /${ID}`]: { json: doc } });
    const out = await ok('docs_get_document', { documentId: ID });
    assert.equal(
      out.content,
      [
        '3. A',
        '  1. a1',
        '  2. a2',
        '4. B',
        '  1. b1',
        '',
        'See Goals',
        '',
        'See [Goals](#heading=h.goals) and [Budget sheet](https://docs.google.com/spreadsheets/d/x)',
        '',
        '---',
        '',
        '## The end',
      ].join('\n'),
    );
  });
});

describe('google-docs reading: suggested edits', () => {
  test('suggested insertions and deletions are marked {+…+} and {-…-} in the text and in outline headings', async () => {
    const r = builder(1);
    const heading = r.para(['Plan for MayJune\n'], 'HEADING_1'); // 1–18
    const body = r.para(['Ship in MayJune.\n']); // 18–34
    const runs = (p: Json, parts: Array<[string, Json]>) => {
      (p['paragraph'] as Json)['elements'] = parts.map(([content, extra]) => ({
        textRun: { content, textStyle: {}, ...extra },
      }));
      return p;
    };
    const del = { suggestedDeletionIds: ['suggest.1'] };
    const ins = { suggestedInsertionIds: ['suggest.2'] };
    runs(heading, [
      ['Plan for ', {}],
      ['May', del],
      ['June', ins],
      ['\n', {}],
    ]);
    runs(body, [
      ['Ship in ', {}],
      ['May', del],
      ['June', ins],
      ['.\n', {}],
    ]);
    const added = runs(r.para(['New line\n']), [['New line\n', ins]]);
    route({ [`GET /${ID}`]: { json: oneTab([sectionBreak, heading, body, added]) } });
    const doc = await ok('docs_get_document', { documentId: ID });
    assert.equal(doc.content, '# Plan for {-May-}{+June+}\n\nShip in {-May-}{+June+}.\n\n{+New line+}');
    const outline = await ok('docs_get_outline', { documentId: ID });
    assert.equal((outline.headings as Array<{ text: string }>)[0]!.text, 'Plan for {-May-}{+June+}');
    assert.deepEqual(Object.fromEntries(upstream.last().query), TABS, 'the outline reads in the default mode');
  });
});

describe('google-docs reading: date chips', () => {
  test('a date chip reads as its displayText, in the text and in outline headings', async () => {
    const r = builder(1);
    const chip = {
      dateElement: {
        dateId: 'd1',
        dateElementProperties: { timestamp: '2026-05-04T00:00:00Z', displayText: 'May 4, 2026', locale: 'en' },
        textStyle: {},
      },
    };
    const heading = r.para(['Review x\n'], 'HEADING_2');
    (heading['paragraph'] as Json)['elements'] = [
      { textRun: { content: 'Review ', textStyle: {} } },
      chip,
      { textRun: { content: '\n', textStyle: {} } },
    ];
    const body = r.para(['Due x.\n']);
    (body['paragraph'] as Json)['elements'] = [
      { textRun: { content: 'Due ', textStyle: {} } },
      chip,
      { textRun: { content: '.\n', textStyle: {} } },
    ];
    route({ [`GET /${ID}`]: { json: oneTab([sectionBreak, heading, body]) } });
    assert.equal(
      (await ok('docs_get_document', { documentId: ID })).content,
      '## Review May 4, 2026\n\nDue May 4, 2026.',
    );
    const outline = await ok('docs_get_outline', { documentId: ID });
    assert.equal((outline.headings as Array<{ text: string }>)[0]!.text, 'Review May 4, 2026');
  });
});

describe('google-docs reading: deeply nested tables', () => {
  test('tables nested deeper than 20 levels read as [nested table]', async () => {
    const nest = (k: number): Json[] =>
      k === 0
        ? [
            {
              startIndex: 1,
              endIndex: 6,
              paragraph: {
                elements: [{ textRun: { content: 'deep\n' } }],
                paragraphStyle: { namedStyleType: 'NORMAL_TEXT' },
              },
            },
          ]
        : [{ startIndex: 1, endIndex: 6, table: { tableRows: [{ tableCells: [{ content: nest(k - 1) }] }] } }];
    route({ [`GET /${ID}`]: { json: oneTab([sectionBreak, ...nest(25)]) } });
    const text = (await ok('docs_get_document', { documentId: ID })).content as string;
    assert.match(text, /\[nested table\]/);
    assert.doesNotMatch(text, /deep/);
    route({ [`GET /${ID}`]: { json: oneTab([sectionBreak, ...nest(20)]) } });
    assert.match(
      (await ok('docs_get_document', { documentId: ID })).content as string,
      /deep/,
      '20 levels still read in full',
    );
  });
});

describe('google-docs outline: section ends', () => {
  test("a section ends at the next heading of the same or a higher level, or at the body's end", async () => {
    const r = builder(1);
    const levels = [
      'TITLE',
      'HEADING_1',
      'HEADING_2',
      'HEADING_3',
      'HEADING_2',
      'HEADING_1',
      'HEADING_3',
      'SUBTITLE',
      'HEADING_4',
    ];
    const content = [sectionBreak, ...levels.flatMap((style, i) => [r.para([`H${i}\n`], style), r.para(['text\n'])])];
    route({ [`GET /${ID}`]: { json: oneTab(content) } });
    const outline = await ok('docs_get_outline', { documentId: ID });
    const hs = outline.headings as Array<{ startIndex: number; sectionEndIndex: number }>;
    const start = hs.map((h) => h.startIndex);
    const end = outline.endIndex as number;
    // TITLE→SUBTITLE, H1→H1, H2→H2, H3→H2, H2→H1, H1→SUBTITLE, H3→SUBTITLE, SUBTITLE→end, H4→end
    assert.deepEqual(
      hs.map((h) => h.sectionEndIndex),
      [start[7], start[5], start[4], start[4], start[5], start[7], start[7], end, end],
    );
  });
});

describe('google-docs index checks before an insert (one read, nothing written)', () => {
  const cases: Array<[string, Json, RegExp]> = [
    [
      'the start of a table',
      { index: 79 },
      /index 79 is not inside a paragraph \(it is the start of a table\); text can only go inside a paragraph, e\.g\. at 78, the end of the paragraph before it/,
    ],
    // the hint is the last index that is inside a paragraph, not index - 1 (79, the table's start, is refused too)
    [
      'a row boundary',
      { index: 80 },
      /index 80 is not inside a paragraph \(it is the boundary of a table row or cell\); text can only go inside a paragraph, e\.g\. at 78, the end of the paragraph before it/,
    ],
    [
      'a cell boundary',
      { index: 87 },
      /index 87 is not inside a paragraph \(it is the boundary of a table cell\); text can only go inside a paragraph, e\.g\. at 86, the end of the paragraph before it/,
    ],
    [
      'past the end of the body',
      { index: 156 },
      /index 156 is past the end of the body \(it ends at 155; 155, the last section's sectionEndIndex, adds text after the last paragraph\): use docs_append_text/,
    ],
    ['far past the end', { index: 9000 }, /index 9000 is past the end/],
    [
      'a table of contents (in another tab)',
      { index: 3, tabId: 't.1' },
      /index 3 is not inside a paragraph \(it is a table of contents/,
    ],
    [
      'an unknown tab',
      { index: 3, tabId: 't.9' },
      /The document has no tab "t\.9"; its tabs are: t\.0 "Plan", t\.1 "Notes"/,
    ],
    [
      'a stale revision',
      { index: 3, revisionId: 'old-rev' },
      /Document 1DoC-aBc_123 changed since revision old-rev was read \(it is now at ALm37BVt-rev-1\), so nothing was written: read it again/,
    ],
  ];
  for (const [name, args, pattern] of cases) {
    test(name, async () => {
      route({ [`GET /${ID}`]: { json: DOC } });
      await fails('docs_insert_text', { documentId: ID, text: 'x', revisionId: REV, ...args }, pattern);
      assertCalls([{ method: 'GET', path: `/${ID}`, query: TABS }]);
    });
  }

  test('append refuses a stale revision and an unknown tab too', async () => {
    route({ [`GET /${ID}`]: { json: DOC } });
    await fails(
      'docs_append_text',
      { documentId: ID, text: 'x', revisionId: 'old-rev' },
      /changed since revision old-rev was read/,
    );
    await fails('docs_append_text', { documentId: ID, text: 'x', tabId: 't.7' }, /no tab "t\.7"/);
    route({
      [`GET /${ID}`]: { json: { documentId: ID, title: 'Old', revisionId: REV, body: { content: [sectionBreak] } } },
    });
    await fails(
      'docs_get_outline',
      { documentId: ID, tabId: 't.0' },
      /has no tab "t\.0": it has a single tab; leave tabId out/,
    );
  });

  test("every sectionEndIndex the outline gives is accepted; the body's end becomes a new last paragraph", async () => {
    route({ [`GET /${ID}`]: { json: DOC } });
    const outline = await ok('docs_get_outline', { documentId: ID });
    const ends = [...new Set((outline.headings as Array<{ sectionEndIndex: number }>).map((h) => h.sectionEndIndex))];
    assert.deepEqual(ends, [155, 114]);
    for (const at of ends) {
      route({ [`GET /${ID}`]: { json: DOC }, [`POST ${BATCH}`]: batch([{}, {}]) });
      const r = await ok('docs_insert_text', {
        documentId: ID,
        index: at,
        text: 'Wrap-up\n',
        style: 'NORMAL_TEXT',
        revisionId: REV,
      });
      const sent = (upstream.last().json as { requests: Json[] }).requests;
      if (at === 155) {
        // nothing can follow the final newline (154–155): "\n" + the text goes before it
        assert.deepEqual(sent[0], { insertText: { text: '\nWrap-up', location: { index: 154, tabId: 't.0' } } });
        assert.deepEqual(r.insertedAt, { startIndex: 155, endIndex: 162 });
      } else {
        assert.deepEqual(sent[0], { insertText: { text: 'Wrap-up\n', location: { index: 114, tabId: 't.0' } } });
        assert.deepEqual(r.insertedAt, { startIndex: 114, endIndex: 122 });
      }
      assert.deepEqual((sent[1] as { updateParagraphStyle: { range: Json } }).updateParagraphStyle.range, {
        ...r.insertedAt,
        tabId: 't.0',
      });
    }
  });

  test('after a bulleted last paragraph, new paragraphs leave the list (deleteParagraphBullets) unless continueList is true', async () => {
    const r = builder(1);
    const listDoc = oneTab([
      sectionBreak,
      r.para(['Intro\n']),
      r.para(['Item\n'], 'NORMAL_TEXT', { bullet: { listId: 'kix.l' } }),
    ]); // item 7–12
    const unbullet = { deleteParagraphBullets: { range: { startIndex: 12, endIndex: 19, tabId: 't.0' } } };
    route({ [`GET /${ID}`]: { json: listDoc }, [`POST ${BATCH}`]: batch([{}, {}, {}]) });
    await ok('docs_append_text', { documentId: ID, text: 'Summary', style: 'HEADING_2' });
    assert.deepEqual((upstream.last().json as { requests: Json[] }).requests, [
      { insertText: { text: '\nSummary', endOfSegmentLocation: { tabId: 't.0' } } },
      unbullet,
      {
        updateParagraphStyle: {
          range: { startIndex: 12, endIndex: 19, tabId: 't.0' },
          paragraphStyle: { namedStyleType: 'HEADING_2' },
          fields: 'namedStyleType',
        },
      },
    ]);
    await ok('docs_append_text', { documentId: ID, text: 'Summary', continueList: true });
    assert.deepEqual((upstream.last().json as { requests: Json[] }).requests, [
      { insertText: { text: '\nSummary', endOfSegmentLocation: { tabId: 't.0' } } },
    ]);
    // continuing the list item itself (no new paragraph) keeps it a list item
    await ok('docs_append_text', { documentId: ID, text: ' too', newParagraph: false });
    assert.deepEqual((upstream.last().json as { requests: Json[] }).requests, [
      { insertText: { text: ' too', endOfSegmentLocation: { tabId: 't.0' } } },
    ]);
    // an insert at the body's end follows the last paragraph the same way
    await ok('docs_insert_text', { documentId: ID, index: 12, text: 'Summary\n', revisionId: REV });
    assert.deepEqual((upstream.last().json as { requests: Json[] }).requests, [
      { insertText: { text: '\nSummary', location: { index: 11, tabId: 't.0' } } },
      { deleteParagraphBullets: { range: { startIndex: 12, endIndex: 19, tabId: 't.0' } } },
    ]);
    await ok('docs_insert_text', { documentId: ID, index: 12, text: 'Summary', continueList: true, revisionId: REV });
    assert.deepEqual((upstream.last().json as { requests: Json[] }).requests, [
      { insertText: { text: '\nSummary', location: { index: 11, tabId: 't.0' } } },
    ]);
  });

  test('the text is sent as Google stores it (CR LF → LF, stripped control and private-use characters), so the styled range is exact', async () => {
    route({ [`GET /${ID}`]: { json: DOC }, [`POST ${BATCH}`]: batch([{}, {}]) });
    const r = await ok('docs_insert_text', {
      documentId: ID,
      index: 19,
      text: 'A\r\nB\rC\u0001\u001f\ue000\t\n',
      style: 'HEADING_3',
      revisionId: REV,
    });
    assert.deepEqual(r.insertedAt, { startIndex: 19, endIndex: 26 });
    const body = upstream.last().json as { requests: Json[] };
    assert.deepEqual(body.requests[0], { insertText: { text: 'A\nB\nC\t\n', location: { index: 19, tabId: 't.0' } } });
    assert.deepEqual((body.requests[1] as { updateParagraphStyle: { range: Json } }).updateParagraphStyle.range, {
      startIndex: 19,
      endIndex: 26,
      tabId: 't.0',
    });
  });
});

describe('google-docs error mapping', () => {
  const cases: Array<[string, string, Json, Record<string, RouteReply>, RegExp, number]> = [
    [
      '401 invalid token',
      'docs_get_document',
      { documentId: ID },
      { [`GET /${ID}`]: gerr(401, 'Request had invalid authentication credentials.', 'UNAUTHENTICATED') },
      /rejected the access token \(401\) while trying to read document 1DoC-aBc_123: reconnect google-docs/,
      1,
    ],
    [
      '403 insufficient scopes',
      'docs_create_document',
      { title: 'x' },
      {
        'POST ': gerr(403, 'Request had insufficient authentication scopes.', 'PERMISSION_DENIED', {
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
              domain: 'googleapis.com',
            },
          ],
        }),
      },
      /lacks the OAuth scope needed to create the document "x" \(403; needs https:\/\/www\.googleapis\.com\/auth\/documents\)/,
      1,
    ],
    [
      '403 no access',
      'docs_replace_text',
      { documentId: ID, find: 'a', replaceWith: 'b' },
      { [`POST ${BATCH}`]: gerr(403, 'The caller does not have permission', 'PERMISSION_DENIED') },
      /Google Docs refused to replace "a" in document 1DoC-aBc_123 \(403\): The caller does not have permission\. Ask its owner to share it/,
      1,
    ],
    [
      '429 quota',
      'docs_get_outline',
      { documentId: ID },
      {
        [`GET /${ID}`]: {
          ...gerr(429, "Quota exceeded for quota metric 'Read requests'", 'RESOURCE_EXHAUSTED'),
          headers: { 'retry-after': '20' },
        },
      },
      /rate limited the request to read the outline of document 1DoC-aBc_123 \(429\): retry after 20 seconds/,
      1,
    ],
    [
      '403 rateLimitExceeded (a rate limit, not a refusal of access)',
      'docs_get_document',
      { documentId: ID },
      {
        [`GET /${ID}`]: gerr(403, 'Rate Limit Exceeded', 'PERMISSION_DENIED', {
          errors: [{ domain: 'usageLimits', reason: 'rateLimitExceeded', message: 'Rate Limit Exceeded' }],
        }),
      },
      /^Google Docs rate limited the request to read document 1DoC-aBc_123 \(403\): Docs quotas are per minute: wait a minute and retry\.\s*$/,
      1,
    ],
    [
      '404 not found',
      'docs_get_document',
      { documentId: ID },
      { [`GET /${ID}`]: gerr(404, 'Requested entity was not found.', 'NOT_FOUND') },
      /found nothing while trying to read document 1DoC-aBc_123 \(404\): Requested entity was not found\. Check the document id/,
      1,
    ],
    [
      '400 a Word file in Drive',
      'docs_get_document',
      { documentId: ID },
      { [`GET /${ID}`]: gerr(400, 'This operation is not supported for this document', 'FAILED_PRECONDITION') },
      /\(400\): This operation is not supported for this document\. The file is probably not a Google Docs document .* drive_read_file/,
      1,
    ],
    [
      '400 revision conflict on an append (the write carried the read revision)',
      'docs_append_text',
      { documentId: ID, text: 'x' },
      {
        [`GET /${ID}`]: { json: DOC },
        [`POST ${BATCH}`]: gerr(
          400,
          'The required revision ID does not match the latest revision of the document.',
          'FAILED_PRECONDITION',
        ),
      },
      /refused to append text to document 1DoC-aBc_123 \(400\): the document changed after revision ALm37BVt-rev-1 was read \(someone else edited it\), so nothing was written\. Read it again/,
      2,
    ],
    [
      '400 revision conflict on a guarded replacement',
      'docs_replace_text',
      { documentId: ID, find: 'a', replaceWith: 'b', revisionId: 'r-9' },
      { [`POST ${BATCH}`]: gerr(400, 'Invalid requests: revision r-9 is not the latest.', 'INVALID_ARGUMENT') },
      /the document changed after revision r-9 was read/,
      1,
    ],
    [
      "400 on an unguarded replacement is Google's message, not a conflict",
      'docs_replace_text',
      { documentId: ID, find: 'a', replaceWith: 'b' },
      {
        [`POST ${BATCH}`]: gerr(
          400,
          'Invalid requests[0].replaceAllText: The tab t.5 does not exist.',
          'INVALID_ARGUMENT',
        ),
      },
      /refused to replace "a" in document .* \(400\): Invalid requests\[0\]\.replaceAllText: The tab t\.5 does not exist\.\s*$/,
      1,
    ],
    [
      '400 for another reason on a guarded insert',
      'docs_insert_text',
      { documentId: ID, index: 20, text: 'x', revisionId: REV },
      {
        [`GET /${ID}`]: { json: DOC },
        [`POST ${BATCH}`]: gerr(
          400,
          'Invalid requests[0].insertText: Index 20 must be less than the end index.',
          'INVALID_ARGUMENT',
        ),
      },
      /\(400\): Invalid requests\[0\]\.insertText: Index 20 must be less than the end index\. \(The write required revision ALm37BVt-rev-1: if the document changed since, read it again\.\)/,
      2,
    ],
    [
      'created, but the text not inserted',
      'docs_create_document',
      { title: 'Notes', text: 'Hi' },
      {
        'POST ': { json: { documentId: 'new-3', title: 'Notes', revisionId: 'r0' } },
        'POST /new-3:batchUpdate': { status: 500, body: 'oops' },
      },
      /^The document "Notes" was created \(new-3, https:\/\/docs\.google\.com\/document\/d\/new-3\/edit\) but its text was not inserted: Google Docs had a server error \(500\) .* Add it with docs_append_text\./,
      2,
    ],
    [
      '500 server error',
      'docs_get_outline',
      { documentId: ID },
      { [`GET /${ID}`]: { status: 503, body: 'unavailable' } },
      /server error \(503\).*retry later/,
      1,
    ],
  ];
  for (const [name, tool, args, replies, pattern, requests] of cases) {
    test(name, async () => {
      route(replies);
      await fails(tool, args, pattern);
      assert.equal(upstream.requests.length, requests);
    });
  }
});

// ---------- the gateway's own refusals (response cap, timeout) in words, not bare bridge codes ----------
describe('google-docs: an answer over the response cap, or none in time', () => {
  let small: Gateway;
  before(async () => {
    small = await startPluginGateway(
      'google-docs',
      upstream,
      { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 },
      { policy: { http: { maxResponseBytes: 4096, requestTimeoutMs: 300 } } },
    );
  });
  after(async () => small?.close());
  const smallCalls = toolCalls(() => small, [TOKEN]);
  const late = (reply: UpstreamReply) => () =>
    new Promise<UpstreamReply>((resolve) => setTimeout(() => resolve(reply), 1000));

  test('a document over the cap: paging cannot help, read it through Drive or open it', async () => {
    const big = oneTab([sectionBreak, builder(1).para([`${'x'.repeat(6000)}\n`])]);
    route({ [`GET /${ID}`]: { json: big } });
    await smallCalls.fails(
      'docs_get_document',
      { documentId: ID, maxChars: 100 },
      /^The answer to read document 1DoC-aBc_123 was larger than the gateway accepts: the document's structure \(JSON\) is over the response cap, and offset or maxChars cannot help .* drive_read_file .* open https:\/\/docs\.google\.com\/document\/d\/1DoC-aBc_123\/edit\.\s*$/,
    );
    await smallCalls.fails(
      'docs_append_text',
      { documentId: ID, text: 'x' },
      /^The answer to read document 1DoC-aBc_123 before appending to it was larger than the gateway accepts/,
    );
    assert.ok(
      upstream.requests.every((r) => r.method === 'GET'),
      'nothing was written',
    );
  });

  test('no answer in time: a read says to retry, a write to check first', async () => {
    route({ [`GET /${ID}`]: late({ json: DOC }) as unknown as RouteReply });
    await smallCalls.fails(
      'docs_get_outline',
      { documentId: ID },
      /^Google Docs did not answer in time while trying to read the outline of document 1DoC-aBc_123: retry in a moment\.\s*$/,
    );
    route({ [`POST ${BATCH}`]: late(batch()) as unknown as RouteReply });
    await smallCalls.fails(
      'docs_replace_text',
      { documentId: ID, find: 'a', replaceWith: 'b' },
      /^Google Docs did not answer in time while trying to replace "a" in document 1DoC-aBc_123: it may still have been done, so check the document \(docs_get_document\) before trying again\.\s*$/,
    );
  });
});

describe('google-docs argument checks happen before any request', () => {
  const cases: Array<[string, Json, RegExp]> = [
    // "." and ".." would be dot segments of the URL (".." → the documents collection itself)
    ['docs_get_document', { documentId: '..' }, /documentId "\.\." is neither a document id nor a Google Docs link/],
    ['docs_get_document', { documentId: ' . ' }, /documentId "\." is neither a document id/],
    ['docs_append_text', { documentId: '..', text: 'x' }, /documentId "\.\." is neither/],
    ['docs_replace_text', { documentId: '.', find: 'a', replaceWith: 'b' }, /documentId "\." is neither/],
    [
      'docs_insert_text',
      { documentId: 'https://docs.google.com/document/d/../edit', index: 1, text: 'x', revisionId: REV },
      /is neither a document id nor a Google Docs link/,
    ],
    [
      'docs_get_outline',
      { documentId: 'https://docs.google.com/spreadsheets/d/1AbC/edit' },
      /is a link to a Google Sheets spreadsheet: use the google-sheets tools, not to a Google Docs document/,
    ],
    ['docs_get_outline', { documentId: 'https://example.com/x y' }, /neither a document id nor a Google Docs link/],
    ['docs_append_text', { documentId: ID, text: '\u0001\u0002\u001b' }, /text holds nothing Google Docs keeps/],
    ['docs_create_document', { title: 'x', text: '\ue000' }, /text holds nothing Google Docs keeps/],
    ['docs_get_document', { documentId: ID, maxChars: 50001 }, /Invalid arguments for docs_get_document/],
    ['docs_get_document', { documentId: ID, tabId: 't 0' }, /Invalid arguments for docs_get_document/],
    ['docs_get_document', { documentId: ID, format: 'html' }, /Invalid arguments for docs_get_document/],
    [
      'docs_insert_text',
      { documentId: ID, index: 0, text: 'x', revisionId: REV },
      /Invalid arguments for docs_insert_text/,
    ],
    // the read that produced the index has a revisionId, and without it a second insert could land at a moved index
    ['docs_insert_text', { documentId: ID, index: 19, text: 'x' }, /Invalid arguments for docs_insert_text/],
    ['docs_insert_text', { documentId: ID, text: 'x', revisionId: REV }, /Invalid arguments for docs_insert_text/],
    ['docs_append_text', { documentId: ID, text: '' }, /Invalid arguments for docs_append_text/],
    ['docs_append_text', { documentId: ID, text: 'x', style: 'HEADING_7' }, /Invalid arguments for docs_append_text/],
    ['docs_replace_text', { documentId: ID, find: '', replaceWith: 'b' }, /Invalid arguments for docs_replace_text/],
    ['docs_replace_text', { documentId: ID, find: 'a' }, /Invalid arguments for docs_replace_text/],
    [
      'docs_replace_text',
      { documentId: ID, find: 'a', replaceWith: 'b', tabIds: [] },
      /Invalid arguments for docs_replace_text/,
    ],
    ['docs_create_document', { title: '' }, /Invalid arguments for docs_create_document/],
  ];
  for (const [tool, args, pattern] of cases) {
    test(`${tool} ${JSON.stringify(args).slice(0, 120)}`, async () => {
      route({});
      await fails(tool, args, pattern);
      assert.equal(upstream.requests.length, 0);
    });
  }
});
