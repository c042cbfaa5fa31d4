/**
 * @module test/plugins/google-slides.test
 * Every Google Slides tool runs through the real gateway and sandbox against a loopback stand-in
 * for slides.googleapis.com (reached through the policy's origin mapping): the requests each makes
 * (method, path, exact query, JSON body, the injected Bearer token) and its slim result; a deck
 * built from Markdown request by request (layouts, placeholder ids, text, bold and link ranges,
 * bullets nested by tabs and applied from the end, the default slide deleted, speaker notes added
 * once their shapes exist); the revision guard; the error mappings; and argument checks made
 * before any request.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { Upstream } from '../helpers/upstream.js';

const TOKEN = 'ya29.slides-plugin-test-token-0001';
const ID = '1SlIdEs-aBc_123';
const BASE = '/v1/presentations';
const URL_OF = `https://docs.google.com/presentation/d/${ID}/edit`;
const READ_FIELDS =
  'presentationId,title,revisionId,locale,slides(objectId,pageElements(objectId,shape(placeholder(type),text(textElements(textRun(content),autoText(content)))),' +
  'table(tableRows(tableCells(text(textElements(textRun(content)))))),image(contentUrl),video(id),sheetsChart(chartId),elementGroup),' +
  'slideProperties(notesPage(notesProperties(speakerNotesObjectId),pageElements(objectId,shape(text(textElements(textRun(content))))))))';

let upstream: Upstream;
let gw: TestGateway;
usePluginGateway(
  'google-slides',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 },
  (s) => ({ upstream, gw } = s),
);

const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: BASE,
    notFound: (m, p) => ({ error: { code: 404, message: `no route ${m} ${p}`, status: 'NOT_FOUND' } }),
  });

interface Call {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

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

const text = (...runs: string[]) => ({ textElements: runs.map((content) => ({ textRun: { content } })) });
const shape = (objectId: string, type: string | null, ...runs: string[]) => ({
  objectId,
  shape: { ...(type ? { placeholder: { type } } : {}), text: text(...runs) },
});
const DECK = {
  presentationId: ID,
  title: 'Q2 review',
  revisionId: 'rev-7',
  slides: [
    {
      objectId: 's1',
      pageElements: [shape('s1t', 'CENTERED_TITLE', 'Q2 review\n'), shape('s1s', 'SUBTITLE', 'June 2026\n')],
      slideProperties: {
        notesPage: {
          notesProperties: { speakerNotesObjectId: 'n1' },
          pageElements: [shape('n0', 'SLIDE_IMAGE'), shape('n1', 'BODY', 'Welcome everyone\n')],
        },
      },
    },
    {
      objectId: 's2',
      pageElements: [
        shape('s2t', 'TITLE', 'Numbers\n'),
        shape('s2b', 'BODY', 'Revenue up\n', 'Costs flat\n'),
        {
          objectId: 'tbl',
          table: {
            tableRows: [
              { tableCells: [{ text: text('Q1\n') }, { text: text('Q2\n') }] },
              { tableCells: [{ text: text('10\n') }, { text: text('12|a\n') }] },
            ],
          },
        },
        { objectId: 'img', image: { contentUrl: 'https://lh3.example/img' } },
        { objectId: 'grp', elementGroup: { children: [shape('g1', null, 'Grouped note\n')] } },
      ],
    },
    { objectId: 's3', pageElements: [shape('s3t', 'TITLE', 'Thanks\n')] },
  ],
};

describe('google-slides tools', () => {
  test('slides_get_presentation: the text-bearing fields only; per slide its title, text, tables, images and notes', async () => {
    route({ [`GET /${ID}`]: { json: DECK } });
    const r = await ok('slides_get_presentation', { presentationId: URL_OF });
    assert.deepEqual(r, {
      presentationId: ID,
      title: 'Q2 review',
      revisionId: 'rev-7',
      url: URL_OF,
      slideCount: 3,
      slides: [
        { index: 0, objectId: 's1', title: 'Q2 review', text: 'June 2026', notes: 'Welcome everyone' },
        {
          index: 1,
          objectId: 's2',
          title: 'Numbers',
          text: 'Revenue up\nCosts flat\n| Q1 | Q2 |\n| 10 | 12\\|a |\n[image]\nGrouped note',
          notes: null,
        },
        { index: 2, objectId: 's3', title: 'Thanks', text: '', notes: null },
      ],
      nextSlide: null,
    });
    assertCalls([{ method: 'GET', path: `/${ID}`, query: { fields: READ_FIELDS } }]);
  });

  test('slides_get_presentation pages by slide and can leave the notes out', async () => {
    route({ [`GET /${ID}`]: { json: DECK } });
    const r = await ok('slides_get_presentation', {
      presentationId: ID,
      fromSlide: 0,
      maxSlides: 2,
      includeNotes: false,
    });
    assert.deepEqual(
      r.slides.map((s: Record<string, unknown>) => [s['index'], 'notes' in s]),
      [
        [0, false],
        [1, false],
      ],
    );
    assert.equal(r.nextSlide, 2);
  });

  test('slides_create_presentation: POST {title}', async () => {
    route({
      'POST ': { json: { presentationId: 'NEW1', title: 'Plan', revisionId: 'r1', slides: [{ objectId: 'p' }] } },
    });
    const r = await ok('slides_create_presentation', { title: 'Plan' });
    assert.deepEqual(r, {
      presentationId: 'NEW1',
      title: 'Plan',
      url: 'https://docs.google.com/presentation/d/NEW1/edit',
      revisionId: 'r1',
      slides: ['p'],
    });
    assertCalls([{ method: 'POST', path: '', body: { title: 'Plan' } }]);
  });

  test('slides_batch_update: the requests as given, guarded by the revision; the replies and the new revision', async () => {
    const requests = [
      { replaceAllText: { containsText: { text: '{{q}}', matchCase: true }, replaceText: 'Q2' } },
      { createSlide: { objectId: 'new_slide_1', slideLayoutReference: { predefinedLayout: 'BLANK' } } },
    ];
    route({
      [`POST /${ID}:batchUpdate`]: {
        json: {
          presentationId: ID,
          replies: [{ replaceAllText: { occurrencesChanged: 3 } }, { createSlide: { objectId: 'new_slide_1' } }],
          writeControl: { requiredRevisionId: 'rev-8' },
        },
      },
    });
    const r = await ok('slides_batch_update', { presentationId: ID, requests, revisionId: 'rev-7' });
    assert.deepEqual(r, {
      presentationId: ID,
      applied: 2,
      replies: [{ replaceAllText: { occurrencesChanged: 3 } }, { createSlide: { objectId: 'new_slide_1' } }],
      revisionId: 'rev-8',
      url: URL_OF,
    });
    assertCalls([
      { method: 'POST', path: `/${ID}:batchUpdate`, body: { requests, writeControl: { requiredRevisionId: 'rev-7' } } },
    ]);
  });

  test('slides_create_from_markdown: creates, writes every slide in one batch, deletes the default slide, adds the notes', async () => {
    const markdown = [
      '# Q2 review',
      'June 2026',
      'Notes: Welcome everyone',
      '---',
      '## Numbers',
      'Revenue is **up 12%**, see [the sheet](https://example.com/s)',
      '- Growth',
      '  - EMEA',
      '- Costs',
      '1. First',
      '2. Second',
      '---',
      '# Thanks',
      '',
    ].join('\n');
    route({
      'POST ': { json: { presentationId: 'NEW2', title: 'Q2', revisionId: 'r1', slides: [{ objectId: 'p_default' }] } },
      'POST /NEW2:batchUpdate': (req) =>
        (req.json as { requests: Array<Record<string, unknown>> }).requests.length === 1
          ? { json: { writeControl: { requiredRevisionId: 'r3' } } }
          : { json: { writeControl: { requiredRevisionId: 'r2' } } },
      'GET /NEW2': {
        json: {
          slides: ['md_slide_001', 'md_slide_002', 'md_slide_003'].map((objectId, i) => ({
            objectId,
            slideProperties: { notesPage: { notesProperties: { speakerNotesObjectId: `notes_${i}` } } },
          })),
        },
      },
    });
    const r = await ok('slides_create_from_markdown', { title: 'Q2', markdown });
    assert.deepEqual(r, {
      presentationId: 'NEW2',
      title: 'Q2',
      url: 'https://docs.google.com/presentation/d/NEW2/edit',
      revisionId: 'r3',
      slideCount: 3,
      slides: [
        { index: 0, objectId: 'md_slide_001', title: 'Q2 review', notes: true },
        { index: 1, objectId: 'md_slide_002', title: 'Numbers', notes: false },
        { index: 2, objectId: 'md_slide_003', title: 'Thanks', notes: false },
      ],
    });
    const body = 'Revenue is up 12%, see the sheet\nGrowth\n\tEMEA\nCosts\nFirst\nSecond';
    const range = (startIndex: number, endIndex: number) => ({ type: 'FIXED_RANGE', startIndex, endIndex });
    const slide = (n: string, i: number, layout: string, title: string, bodyType?: string) => ({
      createSlide: {
        objectId: `md_slide_${n}`,
        insertionIndex: i,
        slideLayoutReference: { predefinedLayout: layout },
        placeholderIdMappings: [
          { layoutPlaceholder: { type: title, index: 0 }, objectId: `md_slide_${n}_title` },
          ...(bodyType ? [{ layoutPlaceholder: { type: bodyType, index: 0 }, objectId: `md_slide_${n}_body` }] : []),
        ],
      },
    });
    assertCalls([
      { method: 'POST', path: '', body: { title: 'Q2' } },
      {
        method: 'POST',
        path: '/NEW2:batchUpdate',
        body: {
          requests: [
            slide('001', 0, 'TITLE', 'CENTERED_TITLE', 'SUBTITLE'),
            slide('002', 1, 'TITLE_AND_BODY', 'TITLE', 'BODY'),
            slide('003', 2, 'SECTION_HEADER', 'TITLE'),
            { insertText: { objectId: 'md_slide_001_title', insertionIndex: 0, text: 'Q2 review' } },
            { insertText: { objectId: 'md_slide_001_body', insertionIndex: 0, text: 'June 2026' } },
            { insertText: { objectId: 'md_slide_002_title', insertionIndex: 0, text: 'Numbers' } },
            { insertText: { objectId: 'md_slide_002_body', insertionIndex: 0, text: body } },
            {
              updateTextStyle: {
                objectId: 'md_slide_002_body',
                textRange: range(11, 17),
                style: { bold: true },
                fields: 'bold',
              },
            },
            {
              updateTextStyle: {
                objectId: 'md_slide_002_body',
                textRange: range(23, 32),
                style: { link: { url: 'https://example.com/s' } },
                fields: 'link',
              },
            },
            {
              createParagraphBullets: {
                objectId: 'md_slide_002_body',
                textRange: range(52, 64),
                bulletPreset: 'NUMBERED_DIGIT_ALPHA_ROMAN',
              },
            },
            {
              createParagraphBullets: {
                objectId: 'md_slide_002_body',
                textRange: range(33, 51),
                bulletPreset: 'BULLET_DISC_CIRCLE_SQUARE',
              },
            },
            { insertText: { objectId: 'md_slide_003_title', insertionIndex: 0, text: 'Thanks' } },
            { deleteObject: { objectId: 'p_default' } },
          ],
        },
      },
      {
        method: 'GET',
        path: '/NEW2',
        query: { fields: 'slides(objectId,slideProperties(notesPage(notesProperties(speakerNotesObjectId))))' },
      },
      {
        method: 'POST',
        path: '/NEW2:batchUpdate',
        body: { requests: [{ insertText: { objectId: 'notes_0', insertionIndex: 0, text: 'Welcome everyone' } }] },
      },
    ]);
    assert.equal(body.slice(11, 17), 'up 12%');
    assert.equal(body.slice(23, 32), 'the sheet');
    assert.equal(body.slice(33, 51), 'Growth\n\tEMEA\nCosts');
    assert.equal(body.slice(52, 64), 'First\nSecond');
  });

  test('the table covers every tool of the manifest', () => {
    const tools = new Set(gw.gateway.registry.plugin('google-slides')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(
      tools,
      new Set([
        'slides_get_presentation',
        'slides_create_presentation',
        'slides_batch_update',
        'slides_create_from_markdown',
      ]),
    );
  });
});

describe('google-slides errors', () => {
  const gerr = (code: number, message: string, status: string, reason?: string) => ({
    status: code,
    json: { error: { code, message, status, ...(reason ? { details: [{ reason }] } : {}) } },
  });

  test('a revision conflict says nothing was written and to read again', async () => {
    route({ [`POST /${ID}:batchUpdate`]: gerr(400, 'The required revision ID does not match', 'FAILED_PRECONDITION') });
    await fails(
      'slides_batch_update',
      { presentationId: ID, requests: [{ deleteObject: { objectId: 's2' } }], revisionId: 'rev-1' },
      /changed after revision rev-1 was read, so nothing was written/,
    );
  });

  test('401, scope, 404 and a slide write that fails after the create (naming the new presentation)', async () => {
    route({ [`GET /${ID}`]: gerr(401, 'Invalid Credentials', 'UNAUTHENTICATED') });
    await fails('slides_get_presentation', { presentationId: ID }, /reconnect google-slides/);
    route({
      [`GET /${ID}`]: gerr(
        403,
        'Request had insufficient authentication scopes.',
        'PERMISSION_DENIED',
        'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
      ),
    });
    await fails('slides_get_presentation', { presentationId: ID }, /lacks the OAuth scope .*auth\/presentations/);
    route({ [`GET /${ID}`]: gerr(404, 'Requested entity was not found.', 'NOT_FOUND') });
    await fails('slides_get_presentation', { presentationId: ID }, /found nothing .*404/);
    route({
      'POST ': { json: { presentationId: 'NEW3', slides: [{ objectId: 'p' }] } },
      'POST /NEW3:batchUpdate': gerr(400, 'Invalid requests[0].createSlide', 'INVALID_ARGUMENT'),
    });
    await fails(
      'slides_create_from_markdown',
      { title: 'X', markdown: '# A' },
      /"X" was created \(https:\/\/docs\.google\.com\/presentation\/d\/NEW3\/edit, id NEW3\) but its slides were not all written/,
    );
  });

  test('refused before any request: a link to another kind of file, a request with two kinds, Markdown with no slide', async () => {
    route({});
    await fails(
      'slides_get_presentation',
      { presentationId: 'https://docs.google.com/document/d/abc/edit' },
      /another kind of Google file/,
    );
    await fails(
      'slides_batch_update',
      { presentationId: ID, requests: [{ insertText: {}, deleteObject: {} }] },
      /requests\[0\] must hold exactly one request kind/,
    );
    await fails('slides_create_from_markdown', { title: 'X', markdown: '---\n\n---' }, /holds no slide/);
    assert.equal(upstream.requests.length, 0);
  });
});
