/**
 * @module plugins/newrelic/src/nrql
 * Running NRQL in an account, and the accounts the key reaches.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { accountOf, inAccount, iso, nerdgraph } from './api.js';
import { accountId } from './fields.js';

type Nrql = {
  results?: unknown;
  metadata?: {
    eventTypes?: unknown;
    facets?: unknown;
    messages?: unknown;
    timeWindow?: { begin?: unknown; end?: unknown } | null;
  } | null;
};

export const runNrql = defineTool({
  description:
    "Run an NRQL query against a New Relic account and get the result rows, e.g. `SELECT count(*) FROM Transaction FACET appName SINCE 1 hour ago`, `SELECT percentile(duration, 95) FROM Transaction WHERE appName = 'checkout' SINCE 30 minutes ago TIMESERIES`, `SELECT * FROM Log WHERE level = 'error' SINCE 15 minutes ago LIMIT 50`. Returns up to maxRows rows plus facets, event types and the time window.",
  annotations: reads('Run NRQL query'),
  input: z.object({
    query: z.string().min(1).max(4000).describe('The NRQL query.'),
    accountId: accountId.optional().describe("Account to query; defaults to the connection's default account."),
    // At most 12 and 10 by default (NerdGraph's own default is 5): under the gateway's default wait
    // for one request (http.requestTimeoutMs, 15 s), so that a slow query ends with New Relic's own
    // timeout error rather than the gateway's.
    timeoutSeconds: z
      .int()
      .min(5)
      .max(12)
      .default(10)
      .describe(
        'Seconds New Relic may run the query (at most 12: by default the gateway waits 15 s for one request). For a slow query, narrow its time window (SINCE …) instead.',
      ),
    maxRows: z
      .int()
      .min(1)
      .max(2000)
      .default(200)
      .describe('Rows returned at most (the rest are counted, not returned).'),
  }),
  handler: async (ctx, args) => {
    const accountId = accountOf(ctx, args);
    const query = `query($accountId: Int!, $nrql: Nrql!, $timeout: Seconds) { actor { account(id: $accountId) { nrql(query: $nrql, timeout: $timeout) { results metadata { eventTypes facets messages timeWindow { begin end } } } } } }`;
    const slow =
      'the query took longer than the gateway allows: narrow its time window (SINCE …) or what it reads, or lower timeoutSeconds so that New Relic stops it first and says so';
    const account = await inAccount(
      ctx,
      accountId,
      'run the NRQL query',
      query,
      { nrql: args.query, timeout: args.timeoutSeconds },
      (a: { nrql?: Nrql | null }) => a,
      slow,
    );
    const result = account.nrql || {};
    const rows = Array.isArray(result.results) ? result.results : [];
    const max = args.maxRows;
    const meta = result.metadata || {};
    return {
      accountId,
      rows: rows.slice(0, max),
      rowCount: rows.length,
      truncated: rows.length > max,
      facets: meta.facets ?? null,
      eventTypes: meta.eventTypes ?? null,
      timeWindow: meta.timeWindow ? { begin: iso(meta.timeWindow.begin), end: iso(meta.timeWindow.end) } : null,
      messages: Array.isArray(meta.messages) && meta.messages.length ? meta.messages : undefined,
    };
  },
});

export const listAccounts = defineTool({
  description:
    "List the New Relic accounts (id and name) this API key can reach, and the connection's default account. Use it to find the accountId other tools need.",
  annotations: reads('List accounts'),
  input: z.object({}),
  handler: async (ctx) => {
    const data = await nerdgraph<{ actor?: { accounts?: Array<{ id: number; name: string }> | null } | null }>(
      ctx,
      'list accounts',
      'query { actor { accounts { id name } } }',
      {},
    );
    const accounts = ((data.actor && data.actor.accounts) || []).map((a) => ({ id: a.id, name: a.name }));
    const d = ctx.config['accountId'] ? Number(ctx.config['accountId']) : null;
    return { accounts, defaultAccountId: Number.isInteger(d) ? d : null };
  },
});
