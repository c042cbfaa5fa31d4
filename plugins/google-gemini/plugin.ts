/**
 * @module plugins/google-gemini/plugin
 * Google Gemini text generation with a Gemini API key (Google AI Studio), sent by the gateway in
 * the x-goog-api-key header. A plugin has one way to connect, and an API key is the one every
 * Gemini user can get without an OAuth client of the operator's; the handler is in src/.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import { generateText } from './src/generate.js';

export default definePlugin({
  name: 'google-gemini',
  version: '1.0.0',
  displayName: 'Google Gemini',
  description:
    'Generate text with Google Gemini models: answer, write, summarise, translate or classify from a prompt, with a system instruction, temperature and output-token cap. Uses a Gemini API key.',
  auth: {
    type: 'apikey',
    fields: [
      {
        name: 'apiKey',
        label: 'Gemini API key',
        description: 'An API key from Google AI Studio (aistudio.google.com, "Get API key").',
        secret: true,
        pattern: '^\\S{20,200}$',
      },
      {
        name: 'defaultModel',
        label: 'Default model',
        description: 'The model used when a call names none, e.g. gemini-2.5-flash (the default) or gemini-2.5-pro.',
        secret: false,
        required: false,
        pattern: '^[a-z0-9][a-z0-9.-]{0,80}$',
      },
    ],
    inject: { header: 'x-goog-api-key', format: '{apiKey}' },
    instructions:
      "Create an API key in Google AI Studio (aistudio.google.com > Get API key) and paste it here. Calls are billed or rate limited on that key's project.",
  },
  egress: ['generativelanguage.googleapis.com'],
  tools: {
    gemini_generate_text: generateText,
  },
});
