/**
 * @module test/host/portal/activity-keys.test
 * The activity page (only the user's own events, filters, keyset paging, bad filter input) and
 * API-key management (shown once, stored hashed, revocation takes effect, CSRF required).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { csrfOf, otherUser, signIn, startHarness, type Harness } from '../../helpers/portal.js';

describe('portal activity and keys', () => {
  let h: Harness;
  const base = Date.parse('2026-03-10T12:00:00Z');
  before(async () => {
    h = await startHarness();
    const eve = await h.t.users.create('eve@example.com', 'acme');
    const insert = (userId: string, i: number, tool: string, integration: string, success: boolean) =>
      h.t.db.run(
        `INSERT INTO audit_events (id, at, action, tenant, user_id, tool, integration, success, error_code, error, duration_ms, transport, request_id, args)
         VALUES (?, ?, 'tool_call', 'acme', ?, ?, ?, ?, ?, ?, ?, 'mcp', 'r', NULL)`,
        [
          randomUUID(),
          base + i * 60_000,
          userId,
          tool,
          integration,
          success ? 1 : 0,
          success ? null : 'GW_ERR_ENGINE_NOT_CONNECTED',
          success ? null : `<b>failure ${i}</b>`,
          10 + i,
        ],
      );
    for (let i = 0; i < 120; i++)
      await insert(
        h.t.user.id,
        i,
        i % 3 === 0 ? 'mockhub_whoami' : 'keyed_ping',
        i % 3 === 0 ? 'mockhub' : 'keyed',
        i % 4 !== 0,
      );
    await insert(h.t.user.id, 2000, 'mockhub_whoami', 'mockhub', true); // 2026-03-11
    await insert(eve.id, 5, 'secret_tool_of_eve', 'keyed', true);
  });
  after(async () => h.close());

  const rowsOf = (body: string): number => (body.match(/<tr><td>/g) ?? []).length;

  it("shows only the signed-in user's events, newest first, 50 per page with an Older link", async () => {
    const b = await signIn(h);
    const first = await b.get('/activity');
    assert.equal(first.status, 200);
    assert.equal(rowsOf(first.body), 50);
    assert.ok(!first.body.includes('secret_tool_of_eve'));
    assert.ok(first.body.indexOf('2026-03-11') < first.body.indexOf('2026-03-10'), 'newest first');
    assert.ok(first.body.includes('&lt;b&gt;failure'), 'error text is escaped');
    const seen = new Set<string>();
    let url: string | undefined = '/activity';
    let total = 0;
    while (url) {
      const page = await b.get(url.replace(/&amp;/g, '&'));
      for (const m of page.body.matchAll(/<tr><td>([^<]+)<\/td>/g)) seen.add(m[1] as string);
      total += rowsOf(page.body);
      url = /<a href="([^"]+)" rel="next">/.exec(page.body)?.[1];
    }
    assert.equal(total, 121);
    assert.equal(seen.size, 121, 'no event twice, none missing');
  });

  it('filters by tool, integration, outcome and date range', async () => {
    const b = await signIn(h);
    const failed = await b.get('/activity?success=no&integration=keyed');
    // i % 4 === 0 fails; keyed is i % 3 !== 0: i in [0,120) with i%4==0 and i%3!=0 → 20
    assert.equal(rowsOf(failed.body), 20);
    assert.ok(!failed.body.includes('Succeeded</span>'));
    const byTool = await b.get('/activity?tool=whoami');
    assert.equal(rowsOf(byTool.body), 41);
    const day = await b.get('/activity?from=2026-03-11&to=2026-03-11');
    assert.equal(rowsOf(day.body), 1);
    const wildcard = await b.get('/activity?tool=%25');
    assert.equal(rowsOf(wildcard.body), 0, '% is matched literally');
  });

  it('the outcome filter takes the values its message names (succeeded, failed) and still takes yes/no', async () => {
    const b = await signIn(h);
    const failed = await b.get('/activity?success=failed&integration=keyed');
    assert.equal(failed.status, 200, failed.body.match(/<li>[^<]*<\/li>/)?.[0]);
    assert.equal(rowsOf(failed.body), 20);
    assert.match(failed.body, /<option value="failed" selected>Failed<\/option>/);
    const succeeded = await b.get('/activity?success=succeeded&integration=keyed');
    assert.equal(succeeded.status, 200);
    assert.equal(rowsOf(succeeded.body), 50);
    assert.ok(!succeeded.body.includes('Failed</span>'));
    const old = await b.get('/activity?success=no&integration=keyed');
    assert.equal(old.status, 200);
    assert.equal(rowsOf(old.body), 20);
    assert.match(old.body, /<option value="failed" selected>/, 'shown as the form names it');
  });

  it('refuses a day that is not in the calendar instead of rolling it over', async () => {
    const b = await signIn(h);
    const res = await b.get('/activity?from=2026-02-31&to=2026-13-01');
    assert.equal(res.status, 400);
    assert.match(res.body, /From is not a date in the calendar: 2026-02-31 has no such day/);
    assert.match(res.body, /To (is not a date in the calendar|must be a date)/);
    const leap = await b.get('/activity?from=2026-02-29');
    assert.equal(leap.status, 400, '2026 is not a leap year');
    assert.equal((await b.get('/activity?from=2028-02-29')).status, 200);
  });

  it("the integration filter lists only the integrations the user's tenant may use", async () => {
    const denied = await startHarness({ allowed: (_user, plugin) => plugin !== 'keyed' });
    try {
      const b = await signIn(denied);
      const page = await b.get('/activity');
      assert.equal(page.status, 200);
      assert.match(page.body, /<option value="mockhub">/);
      assert.doesNotMatch(page.body, /<option value="keyed">/);
    } finally {
      await denied.close();
    }
  });

  it('explains bad filter input instead of failing', async () => {
    const b = await signIn(h);
    const res = await b.get('/activity?from=yesterday&success=maybe&before=garbage');
    assert.equal(res.status, 400);
    assert.match(res.body, /From must be a date like 2026-01-31/);
    assert.match(res.body, /Outcome must be/);
    assert.match(res.body, /page cursor is not valid/);
    // names every object has are no outcome
    for (const name of ['constructor', '__proto__', 'toString']) {
      const inherited = await b.get(`/activity?success=${name}`);
      assert.equal(inherited.status, 400, name);
      assert.match(inherited.body, /Outcome must be/);
    }
    const reversed = await b.get('/activity?from=2026-03-12&to=2026-03-10');
    assert.match(reversed.body, /From must be on or before To/);
  });

  it('creates a key shown once, lists only its prefix, and revokes it', async () => {
    const b = await signIn(h);
    const page = await b.get('/keys');
    const posted = await b.post('/keys', { _csrf: csrfOf(page.body), label: 'laptop <agent>' });
    assert.equal(posted.status, 303);
    const created = await b.get(posted.location ?? '');
    assert.equal(created.status, 200);
    assert.equal(created.headers['cache-control'], 'no-store');
    const key = /id="new-key" class="secret" readonly value="([^"]+)"/.exec(created.body)?.[1] ?? '';
    assert.match(key, /^wb_/);
    assert.ok(created.body.includes('laptop &lt;agent&gt;'));
    assert.ok(await h.t.users.authenticate(key));
    const list = await b.get('/keys');
    assert.ok(!list.body.includes(key), 'never shown again');
    assert.ok(list.body.includes(key.slice(0, 10)));
    const row = await h.t.db.get<{ id: string; hash: string }>('SELECT id, hash FROM api_keys WHERE prefix = ?', [
      key.slice(0, 10),
    ]);
    assert.ok(row && row.hash !== key && !row.hash.includes(key));
    assert.doesNotMatch((await b.get('/keys?revoked=1&signedOut=1')).body, /class="notice"/, 'no notice from the URL');
    const revoked = await b.post(`/keys/${row.id}/revoke`, { _csrf: csrfOf(list.body) });
    assert.equal(revoked.status, 303);
    assert.equal(revoked.location, '/keys');
    assert.equal(await h.t.users.authenticate(key), undefined);
    const after = await b.get('/keys');
    assert.match(after.body, /Revoked/);
    assert.match(after.body, /class="notice" role="status">The key was revoked/);
    assert.doesNotMatch((await b.get('/keys')).body, /The key was revoked/, 'once');
  });

  it('answers a new key with a redirect (a reload does not post again) and shows it once, only in the session that made it, never in a URL', async () => {
    const b = await signIn(h);
    const other = await signIn(h);
    const keyCount = async (): Promise<number> =>
      Number(
        (await h.t.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?', [h.t.user.id]))?.n,
      );
    const before = await keyCount();
    const posted = await b.post('/keys', { _csrf: csrfOf((await b.get('/keys')).body), label: 'ci' });
    assert.equal(posted.status, 303, 'post, redirect, get');
    assert.equal(posted.location, '/keys');
    assert.equal(posted.body, '');
    assert.equal(await keyCount(), before + 1);
    const keyOf = (body: string): string | undefined =>
      /id="new-key" class="secret" readonly value="([^"]+)"/.exec(body)?.[1];
    // the database holds the waiting key sealed, not readable
    const waiting = await h.t.db.all<{ body: string }>('SELECT body FROM portal_flash');
    assert.equal(waiting.length, 1);
    assert.doesNotMatch(waiting[0]?.body ?? '', /wb_/);
    assert.equal(keyOf((await other.get('/keys')).body), undefined, 'another session of the same user does not see it');
    const shown = await b.get('/keys');
    const key = keyOf(shown.body) ?? assert.fail('the key is shown after the redirect');
    assert.ok(await h.t.users.authenticate(key));
    assert.ok(!waiting[0]?.body.includes(key));
    const again = await b.get('/keys');
    assert.equal(keyOf(again.body), undefined, 'a reload does not show it again');
    assert.ok(!again.body.includes(key));
    assert.equal(await keyCount(), before + 1, 'and makes no second key');
    assert.equal((await h.t.db.all('SELECT id FROM portal_flash')).length, 0);
  });

  it('a new key whose one-time notice cannot be stored is revoked, not left live and never shown', async () => {
    const b = await signIn(h);
    const active = async (): Promise<number> =>
      Number(
        (
          await h.t.db.get<{ n: number }>(
            'SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ? AND revoked_at IS NULL',
            [h.t.user.id],
          )
        )?.n,
      );
    const before = await active();
    const csrf = csrfOf((await b.get('/keys')).body);
    await h.t.db.run(
      "CREATE TRIGGER refuse_flash BEFORE INSERT ON portal_flash BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    );
    try {
      const posted = await b.post('/keys', { _csrf: csrf, label: 'lost' });
      assert.equal(posted.status, 500);
    } finally {
      await h.t.db.run('DROP TRIGGER refuse_flash');
    }
    assert.equal(await active(), before, 'no live key was left behind');
    // the page's data is read before the waiting key is taken: a failed read leaves it for the next load
    const made = await b.post('/keys', { _csrf: csrf, label: 'kept' });
    assert.equal(made.status, 303);
    await h.t.db.run('ALTER TABLE api_keys RENAME COLUMN label TO label_away'); // the list's read fails, the session check does not
    try {
      assert.equal((await b.get('/keys')).status, 500);
    } finally {
      await h.t.db.run('ALTER TABLE api_keys RENAME COLUMN label_away TO label');
    }
    assert.match((await b.get('/keys')).body, /id="new-key" class="secret" readonly value="wb_/);
  });

  it("refuses key changes without CSRF, with a bad label, or for another user's key", async () => {
    const b = await signIn(h);
    const page = await b.get('/keys');
    assert.equal((await b.post('/keys', { label: 'x' })).status, 403);
    assert.equal((await b.post('/keys', { _csrf: 'forged', label: 'x' })).status, 403);
    const long = await b.post('/keys', { _csrf: csrfOf(page.body), label: 'x'.repeat(61) });
    assert.equal(long.status, 400);
    assert.match(long.body, /at most 60 characters/);
    const eve = await otherUser(h, 'eve3@example.com');
    const eveKey = await h.t.db.get<{ id: string }>('SELECT id FROM api_keys WHERE user_id = ?', [eve.user.id]);
    const res = await b.post(`/keys/${eveKey?.id}/revoke`, { _csrf: csrfOf(page.body) });
    assert.equal(res.status, 404);
    assert.equal(
      (
        await h.t.db.get<{ revoked_at: number | null }>('SELECT revoked_at FROM api_keys WHERE id = ?', [
          eveKey?.id ?? '',
        ])
      )?.revoked_at,
      null,
    );
  });
});
