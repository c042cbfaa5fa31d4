/**
 * @module host/portal/activity-routes
 * The activity page: the signed-in user's own audit events, newest first, filtered by tool,
 * integration, outcome and date range, paged with a keyset cursor (stable while new events
 * arrive). Bad filter values are reported next to the form instead of failing the page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SqlValue } from '../storage/db.js';
import type { PortalContext } from './context.js';
import { html, type SafeHtml } from './html.js';

export const ACTIVITY_PAGE_SIZE = 50;

interface EventRow {
  id: string;
  at: number;
  action: string;
  tool: string | null;
  integration: string | null;
  success: number;
  error_code: string | null;
  error: string | null;
  duration_ms: number;
  transport: string | null;
}

type Query = Partial<Record<'tool' | 'integration' | 'success' | 'from' | 'to' | 'before', string>>;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The outcome filter's values: the form sends succeeded/failed; yes/no (older links) still work. */
const OUTCOMES: Record<string, 'succeeded' | 'failed'> = {
  succeeded: 'succeeded',
  failed: 'failed',
  yes: 'succeeded',
  no: 'failed',
};

/** A UTC day, as epoch ms at its start (or at the next day's start); 'bad' when not YYYY-MM-DD, 'unreal' when no such day (2026-02-31). */
function parseDay(s: string | undefined, endOfDay: boolean): number | undefined | 'bad' | 'unreal' {
  if (!s) return undefined;
  if (!DAY.test(s)) return 'bad';
  const t = Date.parse(`${s}T00:00:00Z`);
  if (Number.isNaN(t)) return 'bad';
  // Date.parse rolls an impossible day over (2026-02-31 is read as 2026-03-03): refuse it
  if (new Date(t).toISOString().slice(0, 10) !== s) return 'unreal';
  return endOfDay ? t + 86_400_000 : t;
}

const dayProblem = (name: string, value: string, r: 'bad' | 'unreal'): string =>
  r === 'bad'
    ? `${name} must be a date like 2026-01-31.`
    : `${name} is not a date in the calendar: ${value} has no such day.`;

export function registerActivityRoutes(scope: FastifyInstance, ctx: PortalContext): void {
  scope.get<{ Querystring: Query }>('/activity', async (request, reply) => showActivity(ctx, request, reply));
}

/** The activity page for the filters in the query (400, with the problems listed above the table, when some cannot apply). */
async function showActivity(
  ctx: PortalContext,
  request: FastifyRequest<{ Querystring: Query }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const who = await ctx.requireUser(request, reply);
  if (!who) return reply;
  const q = readQuery(request.query);
  const { where, params, problems } = filterOf(q, who.user.id);
  const rows = await ctx.deps.db.all<EventRow>(
    `SELECT id, at, action, tool, integration, success, error_code, error, duration_ms, transport FROM audit_events
        WHERE ${where.join(' AND ')} ORDER BY at DESC, id DESC LIMIT ${ACTIVITY_PAGE_SIZE + 1}`,
    params,
  );
  const more = rows.length > ACTIVITY_PAGE_SIZE;
  const page = rows.slice(0, ACTIVITY_PAGE_SIZE);
  const last = page[page.length - 1];
  const keep = new URLSearchParams(Object.entries(q).filter(([k]) => k !== 'before'));
  const olderHref =
    more && last
      ? `/activity?${new URLSearchParams([...keep, ['before', `${Number(last.at)}.${last.id}`]])}`
      : undefined;
  // only the integrations this user may use (as on /integrations): the list names no others
  const integrations = ctx.deps.registry
    .plugins()
    .map((p) => p.name)
    .filter((name) => ctx.mayUse(who.user, name))
    .sort();
  const body = html`${filterForm(q, integrations)}
${problems.length ? html`<div class="error" role="alert"><ul>${problems.map((p) => html`<li>${p}</li>`)}</ul></div>` : ''}
${eventTable(page)}
<nav aria-label="Pages"><p>${q.before ? html`<a href="/activity?${keep.toString()}">Newest</a> ` : ''}${olderHref ? html`<a href="${olderHref}" rel="next">Older</a>` : ''}</p></nav>`;
  return ctx.sendPage(reply, problems.length ? 400 : 200, { title: 'Activity', active: 'activity', who, body });
}

/** The query's filters, trimmed and bounded; empty ones left out. */
function readQuery(query: Query): Query {
  const q: Query = {};
  for (const k of ['tool', 'integration', 'success', 'from', 'to', 'before'] as const) {
    const v = query[k];
    if (typeof v === 'string' && v.trim() !== '') q[k] = v.trim().slice(0, 200);
  }
  return q;
}

interface Filter {
  where: string[];
  params: SqlValue[];
  /** what is wrong with the filters that cannot apply (they are left out) */
  problems: string[];
}

/** The SQL conditions of the filters (the outcome is rewritten in `q` to its form value). */
function filterOf(q: Query, userId: string): Filter {
  const f: Filter = { where: ['user_id = ?'], params: [userId], problems: [] };
  const add = (condition: string, ...params: SqlValue[]): void => {
    f.where.push(condition);
    f.params.push(...params);
  };
  // LOWER on both sides: LIKE ignores ASCII case on SQLite but not on PostgreSQL.
  if (q.tool) add("LOWER(tool) LIKE ? ESCAPE '\\'", `%${q.tool.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (q.integration) add('integration = ?', q.integration);
  if (q.success) {
    const key = q.success.toLowerCase();
    const outcome = Object.hasOwn(OUTCOMES, key) ? OUTCOMES[key] : undefined; // not "constructor", "__proto__", …
    if (outcome) {
      q.success = outcome;
      add('success = ?', outcome === 'succeeded' ? 1 : 0);
    } else f.problems.push('Outcome must be "succeeded" or "failed".');
  }
  const from = parseDay(q.from, false);
  const to = parseDay(q.to, true);
  if (from === 'bad' || from === 'unreal') f.problems.push(dayProblem('From', q.from ?? '', from));
  else if (from !== undefined) add('at >= ?', from);
  if (to === 'bad' || to === 'unreal') f.problems.push(dayProblem('To', q.to ?? '', to));
  else if (to !== undefined) add('at < ?', to);
  if (typeof from === 'number' && typeof to === 'number' && from >= to)
    f.problems.push('From must be on or before To.');
  if (q.before) {
    const m = /^(\d{1,15})\.([A-Za-z0-9-]{1,64})$/.exec(q.before);
    if (!m) f.problems.push('The page cursor is not valid; showing the newest events.');
    else add('(at < ? OR (at = ? AND id < ?))', Number(m[1]), Number(m[1]), m[2] as string);
  }
  return f;
}

function filterForm(q: Query, integrations: string[]): SafeHtml {
  const sel = (v: string | undefined, o: string) => (v === o ? html` selected` : '');
  return html`<form method="get" action="/activity" class="filters" role="search" aria-label="Filter activity">
<div><label for="a-tool">Tool</label><input id="a-tool" name="tool" value="${q.tool ?? ''}"></div>
<div><label for="a-int">Integration</label><select id="a-int" name="integration"><option value="">All</option>${integrations.map(
    (n) => html`<option value="${n}"${sel(q.integration, n)}>${n}</option>`,
  )}</select></div>
<div><label for="a-ok">Outcome</label><select id="a-ok" name="success"><option value="">All</option><option value="succeeded"${sel(q.success, 'succeeded')}>Succeeded</option><option value="failed"${sel(q.success, 'failed')}>Failed</option></select></div>
<div><label for="a-from">From</label><input id="a-from" name="from" type="date" value="${q.from ?? ''}"></div>
<div><label for="a-to">To</label><input id="a-to" name="to" type="date" value="${q.to ?? ''}"></div>
<div><button type="submit">Filter</button> <a href="/activity">Clear</a></div></form>`;
}

function eventTable(page: EventRow[]): SafeHtml {
  if (page.length === 0) return html`<p>No activity matches.</p>`;
  return html`<table><caption class="hint">Your tool calls, newest first (times in UTC).</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Tool</th><th scope="col">Integration</th><th scope="col">Outcome</th><th scope="col">Duration</th><th scope="col">Via</th></tr></thead>
<tbody>${page.map(
    (
      e,
    ) => html`<tr><td>${new Date(Number(e.at)).toISOString().replace('T', ' ').slice(0, 19)}</td><td>${e.tool ?? e.action}</td><td>${e.integration ?? ''}</td>
<td>${Number(e.success) ? html`<span class="ok">Succeeded</span>` : html`<span class="error">Failed</span> ${e.error_code ?? ''}<p class="hint">${(e.error ?? '').slice(0, 300)}</p>`}</td>
<td>${Number(e.duration_ms)} ms</td><td>${e.transport ?? ''}</td></tr>`,
  )}</tbody></table>`;
}
