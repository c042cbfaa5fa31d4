/**
 * @module test/plugins/google-gemini.test
 * gemini_generate_text through the real gateway and sandbox against a loopback stand-in for
 * generativelanguage.googleapis.com: the generateContent request (path with the model, the API key
 * the gateway adds as x-goog-api-key, contents, systemInstruction and generationConfig as the API
 * takes them), the slim result (text without thought parts, finish reason, usage), a blocked
 * prompt, and the error mappings: a bad key answered 400 API_KEY_INVALID, quota 429, unknown model
 * 404; a model name that is not one is refused before any request.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { Upstream } from '../helpers/upstream.js';

const KEY = 'AIzaSyTest-gemini-key-0123456789abcdef';
const BASE = '/v1beta';
let upstream: Upstream;
let gw: TestGateway;
usePluginGateway('google-gemini', { values: { apiKey: KEY } }, (s) => ({ upstream, gw } = s));

const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: BASE,
    notFound: (m, p) => ({ error: { code: 404, message: `models/x is not found for ${m} ${p}`, status: 'NOT_FOUND' } }),
  });

const { ok, fails } = toolCalls(() => gw, [KEY]);

const ANSWER = {
  candidates: [
    {
      content: {
        role: 'model',
        parts: [
          { text: 'thinking about it', thought: true },
          { text: 'Paris is the capital' },
          { text: ' of France.' },
        ],
      },
      finishReason: 'STOP',
      index: 0,
      safetyRatings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', probability: 'NEGLIGIBLE' }],
    },
  ],
  usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 8, thoughtsTokenCount: 30, totalTokenCount: 50 },
  modelVersion: 'gemini-2.5-flash',
  responseId: 'resp-1',
};

describe('gemini_generate_text', () => {
  test('POST models/{model}:generateContent with the key header, contents, system instruction and settings', async () => {
    route({ 'POST /models/gemini-2.5-pro:generateContent': { json: ANSWER } });
    const r = await ok('gemini_generate_text', {
      prompt: 'What is the capital of France?',
      model: 'models/gemini-2.5-pro',
      systemInstruction: 'Answer in one sentence.',
      temperature: 0.2,
      maxOutputTokens: 256,
      stopSequences: ['END'],
      json: true,
    });
    assert.deepEqual(r, {
      text: 'Paris is the capital of France.',
      finishReason: 'STOP',
      model: 'gemini-2.5-flash',
      usage: { promptTokens: 12, outputTokens: 8, thinkingTokens: 30, totalTokens: 50 },
    });
    const req = upstream.last();
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/v1beta/models/gemini-2.5-pro:generateContent');
    assert.deepEqual(Object.fromEntries(req.query), {});
    assert.equal(req.headers['x-goog-api-key'], KEY);
    assert.equal(req.headers.authorization, undefined);
    assert.match(String(req.headers['content-type']), /^application\/json/);
    assert.deepEqual(req.json, {
      contents: [{ role: 'user', parts: [{ text: 'What is the capital of France?' }] }],
      systemInstruction: { parts: [{ text: 'Answer in one sentence.' }] },
      generationConfig: {
        temperature: 0.2,
        maxOutputTokens: 256,
        stopSequences: ['END'],
        responseMimeType: 'application/json',
      },
    });
  });

  test('the default model, no optional settings: only contents is sent; a cut answer says so', async () => {
    route({
      'POST /models/gemini-2.5-flash:generateContent': {
        json: {
          candidates: [{ content: { parts: [{ text: 'Once upon' }] }, finishReason: 'MAX_TOKENS' }],
          usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
        },
      },
    });
    const r = await ok('gemini_generate_text', { prompt: 'Tell a story' });
    assert.deepEqual(r, {
      text: 'Once upon',
      finishReason: 'MAX_TOKENS',
      model: 'gemini-2.5-flash',
      usage: { promptTokens: 3, outputTokens: 2, totalTokens: 5 },
      note: 'The answer was cut at maxOutputTokens: raise it for the rest.',
    });
    assert.deepEqual(upstream.last().json, { contents: [{ role: 'user', parts: [{ text: 'Tell a story' }] }] });
  });

  test('a blocked prompt comes back with no text and the reason', async () => {
    route({
      'POST /models/gemini-2.5-flash:generateContent': {
        json: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 } },
      },
    });
    const r = await ok('gemini_generate_text', { prompt: 'something' });
    assert.equal(r.text, '');
    assert.equal(r.finishReason, 'BLOCKED');
    assert.match(r.note, /blocked the prompt \(SAFETY\)/);
  });
});

describe('gemini errors', () => {
  const gerr = (code: number, message: string, status: string, reason?: string) => ({
    status: code,
    json: {
      error: {
        code,
        message,
        status,
        ...(reason
          ? { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com' }] }
          : {}),
      },
    },
  });
  const PATH = 'POST /models/gemini-2.5-flash:generateContent';

  test('a bad key (400 API_KEY_INVALID), quota (429), unknown model (404), a server error', async () => {
    route({
      [PATH]: gerr(400, 'API key not valid. Please pass a valid API key.', 'INVALID_ARGUMENT', 'API_KEY_INVALID'),
    });
    await fails(
      'gemini_generate_text',
      { prompt: 'hi' },
      /refused the Gemini API key \(400\).*reconnect google-gemini/,
    );
    route({
      [PATH]: {
        ...gerr(429, 'Resource has been exhausted (e.g. check quota).', 'RESOURCE_EXHAUSTED'),
        headers: { 'retry-after': '20' },
      },
    });
    await fails(
      'gemini_generate_text',
      { prompt: 'hi' },
      /quota or rate limit is used up \(429\).*retry after 20 seconds/,
    );
    route({});
    await fails('gemini_generate_text', { prompt: 'hi', model: 'gemini-9' }, /no such model .*404/);
    route({ [PATH]: gerr(503, 'The model is overloaded.', 'UNAVAILABLE') });
    await fails('gemini_generate_text', { prompt: 'hi' }, /server error \(503\).*retry later/);
  });

  test('a model name that is not one is refused before any request', async () => {
    route({});
    await fails('gemini_generate_text', { prompt: 'hi', model: '../files' }, /is not a Gemini model name/);
    assert.equal(upstream.requests.length, 0);
  });

  test('the manifest has this one tool', () => {
    const tools = gw.gateway.registry.plugin('google-gemini')!.manifest.tools.map((t) => t.name);
    assert.deepEqual(tools, ['gemini_generate_text']);
  });
});
