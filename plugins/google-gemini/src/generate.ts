/**
 * @module plugins/google-gemini/src/generate
 * Text generation with the Gemini API (v1beta `models/{model}:generateContent`): a prompt, an
 * optional system instruction and generation settings in; the text, why it stopped and the tokens
 * used out. Google's error body names a bad API key with a 400 (API_KEY_INVALID), a quota with a
 * 429 (RESOURCE_EXHAUSTED), an unknown model with a 404: each is worded for the agent. The gateway
 * adds the API key (x-goog-api-key): this code never sees it.
 */
import { createApi, defineTool, googleErrorInfo, path, reads, z, type ApiFailure } from 'workbench/plugin-sdk';

const DEFAULT_MODEL = 'gemini-2.5-flash';
const MODEL = /^[a-z0-9][a-z0-9.-]{0,80}$/;

function geminiWords(f: ApiFailure): Error {
  const info = googleErrorInfo(f.data);
  const said = f.detail ? ` Google said: ${f.detail}.` : '';
  const badKey = info.reasons.some((r) => r === 'API_KEY_INVALID' || r === 'API_KEY_SERVICE_BLOCKED');
  if (f.status === 401 || badKey)
    return new Error(
      `Google refused the Gemini API key (${f.status}) while trying to ${f.action}: reconnect google-gemini with a valid key from Google AI Studio.${said}`,
    );
  if (f.status === 429 || info.status === 'RESOURCE_EXHAUSTED') {
    const wait =
      f.retryAfterSec !== undefined
        ? `retry after ${f.retryAfterSec} seconds`
        : 'wait a minute and retry, or use another model';
    return new Error(
      `The Gemini API quota or rate limit is used up (${f.status}) while trying to ${f.action}: ${wait}.${said}`,
    );
  }
  if (f.status === 403)
    return new Error(
      `Google refused to ${f.action} (403): ${f.detail || 'the key may not use this model or the Generative Language API is not enabled for its project'}.`,
    );
  if (f.status === 404)
    return new Error(
      `Google found no such model while trying to ${f.action} (404): use a model name such as ${DEFAULT_MODEL} or gemini-2.5-pro.${said}`,
    );
  if (f.status === 400)
    return new Error(`Google refused to ${f.action} (400): ${f.detail || 'the request was not valid'}.`);
  if (f.status >= 500)
    return new Error(
      `The Gemini API had a server error (${f.status}) while trying to ${f.action}: retry later.${said}`,
    );
  return new Error(`The Gemini API answered HTTP ${f.status} while trying to ${f.action}.${said}`);
}

const api = createApi({
  base: 'https://generativelanguage.googleapis.com/v1beta',
  provider: 'The Gemini API',
  integration: 'google-gemini',
  failure: geminiWords,
  bridgeFailure: (f) =>
    f.code === 'GW_ERR_BRIDGE_TIMEOUT'
      ? new Error(
          `The Gemini API did not answer in time while trying to ${f.action}: ask for fewer output tokens, or use a faster model (such as ${DEFAULT_MODEL}).`,
        )
      : f.error,
});

type Part = { text?: string; thought?: boolean };
type Answer = {
  candidates?: Array<{
    content?: { parts?: Part[] };
    finishReason?: string;
    safetyRatings?: Array<{ category?: string; probability?: string; blocked?: boolean }>;
  }>;
  promptFeedback?: { blockReason?: string };
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    totalTokenCount?: number;
    thoughtsTokenCount?: number;
  };
  modelVersion?: string;
};

export const generateText = defineTool({
  description:
    'Ask Google Gemini, a large language model (LLM, generative AI), to generate text from a prompt: answer a question, write or draft (an email, a product description), summarise, translate, classify, or give a second opinion from another AI model; with an optional system instruction (the role or rules the model follows), a temperature and a cap on output tokens. Returns the text, why it stopped (STOP, MAX_TOKENS, SAFETY, …) and the tokens used.',
  input: z.object({
    prompt: z.string().min(1).max(200000).describe('What to ask or tell the model.'),
    model: z
      .string()
      .max(100)
      .optional()
      .describe(
        `The Gemini model, e.g. ${DEFAULT_MODEL} (default: the connection's default model, else ${DEFAULT_MODEL}) or gemini-2.5-pro.`,
      ),
    systemInstruction: z
      .string()
      .min(1)
      .max(50000)
      .optional()
      .describe('Instructions the model follows for the whole answer (its role, rules, style).'),
    temperature: z
      .number()
      .min(0)
      .max(2)
      .optional()
      .describe('Randomness, 0 to 2: low for factual answers, high for creative ones.'),
    maxOutputTokens: z.int().min(1).max(65536).optional().describe('The most tokens the answer may have.'),
    stopSequences: z
      .array(z.string().min(1).max(100))
      .max(5)
      .optional()
      .describe('The answer stops before any of these.'),
    json: z.boolean().default(false).describe('Ask for a JSON answer (responseMimeType application/json).'),
  }),
  annotations: reads('Generate text', { idempotent: false }),
  handler: async (ctx, a) => {
    const configured = typeof ctx.config['defaultModel'] === 'string' ? ctx.config['defaultModel'] : '';
    const model = (a.model || configured || DEFAULT_MODEL).replace(/^models\//, '');
    if (!MODEL.test(model))
      throw new Error(`model "${model.slice(0, 100)}" is not a Gemini model name (such as ${DEFAULT_MODEL}).`);
    const generationConfig = {
      ...(a.temperature !== undefined ? { temperature: a.temperature } : {}),
      ...(a.maxOutputTokens !== undefined ? { maxOutputTokens: a.maxOutputTokens } : {}),
      ...(a.stopSequences ? { stopSequences: a.stopSequences } : {}),
      ...(a.json ? { responseMimeType: 'application/json' } : {}),
    };
    const body = {
      contents: [{ role: 'user', parts: [{ text: a.prompt }] }],
      ...(a.systemInstruction ? { systemInstruction: { parts: [{ text: a.systemInstruction }] } } : {}),
      ...(Object.keys(generationConfig).length ? { generationConfig } : {}),
    };
    const r = await api.json<Answer>(ctx, 'POST', `${path`/models/${model}`}:generateContent`, {
      body,
      action: `generate text with ${model}`,
    });
    const candidate = r.candidates?.[0];
    const text = (candidate?.content?.parts ?? [])
      .filter((p) => !p.thought && typeof p.text === 'string')
      .map((p) => p.text)
      .join('');
    const u = r.usageMetadata ?? {};
    const blocked = r.promptFeedback?.blockReason ?? null;
    return {
      text,
      finishReason: candidate?.finishReason ?? (blocked ? 'BLOCKED' : null),
      model: r.modelVersion ?? model,
      usage: {
        promptTokens: u.promptTokenCount ?? null,
        outputTokens: u.candidatesTokenCount ?? null,
        ...(u.thoughtsTokenCount !== undefined ? { thinkingTokens: u.thoughtsTokenCount } : {}),
        totalTokens: u.totalTokenCount ?? null,
      },
      ...(blocked ? { note: `Gemini blocked the prompt (${blocked}): rephrase it.` } : {}),
      ...(candidate?.finishReason === 'MAX_TOKENS'
        ? { note: 'The answer was cut at maxOutputTokens: raise it for the rest.' }
        : {}),
      ...(candidate?.finishReason === 'SAFETY'
        ? { note: 'Gemini stopped the answer for safety: rephrase the prompt.' }
        : {}),
    };
  },
});
