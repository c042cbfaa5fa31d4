/**
 * @module plugins/httpbin-cookie/src/tools
 * The three httpbin.org requests. The gateway adds the signed-in session's Cookie header (the
 * plugin cannot send or read one) and removes the session's values from what comes back, so the
 * answers name the cookies the site received with "[REDACTED]" for their values.
 */
import { changes, createApi, defineTool, reads, z } from 'workbench/plugin-sdk';

const httpbin = createApi({ base: 'https://httpbin.org', provider: 'httpbin.org', integration: 'httpbin-cookie' });

type Json = Record<string, unknown>;

export const getHeaders = defineTool({
  description:
    "The request headers httpbin.org received from the gateway (GET /headers), as the site sees a call made with the user's signed-in session: the Cookie header is there, its values redacted. Returns {headers}.",
  annotations: reads('Show the headers httpbin.org receives'),
  input: z.object({}),
  handler: async (ctx) => {
    const answer = await httpbin.json<Json>(ctx, 'GET', '/headers', { action: 'read the request headers' });
    return { headers: answer['headers'] ?? {} };
  },
});

export const getCookies = defineTool({
  description:
    "The cookies httpbin.org received with the user's signed-in session (GET /cookies): their names, with the values redacted. Returns {cookies: {name: value}}.",
  annotations: reads('Show the cookies httpbin.org receives'),
  input: z.object({}),
  handler: async (ctx) => {
    const answer = await httpbin.json<Json>(ctx, 'GET', '/cookies', { action: 'read the cookies' });
    return { cookies: answer['cookies'] ?? {} };
  },
});

export const setCookie = defineTool({
  description:
    'Asks httpbin.org to set a cookie (GET /cookies/set?name=value), then returns the cookies it received on the redirect that follows. The connection keeps the cookies of the session the user signed in to: a cookie the site sets in an answer is not added to it, so the new cookie is not among them. Returns {requested: {name, value}, cookies}.',
  annotations: changes('Ask httpbin.org to set a cookie', { idempotent: true }),
  input: z.object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .describe('Cookie name: letters, digits, "_" and "-", at most 64'),
    value: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{0,200}$/)
      .describe('Cookie value: letters, digits, "_", "." and "-", at most 200'),
  }),
  handler: async (ctx, args) => {
    const answer = await httpbin.json<Json>(ctx, 'GET', '/cookies/set', {
      action: `set the cookie ${args.name}`,
      query: { [args.name]: args.value },
    });
    return { requested: { name: args.name, value: args.value }, cookies: answer['cookies'] ?? {} };
  },
});
