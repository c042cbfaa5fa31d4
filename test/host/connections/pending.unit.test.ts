/**
 * @module test/host/connections/pending.unit.test
 * Connect links near their expiry, on a SQLite file with a controlled clock: a link whose code
 * exchange is under way when the link's time runs out is not reported (or settled) expired; the
 * exchange settles it.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { EXCHANGE_GRACE_MS, PendingConnects } from '../../../host/connections/pending.js';
import { createVault, generateKey } from '../../../host/connections/vault.js';
import { openTestDb, type TestDb } from '../../helpers/connections-db.js';

describe('connect links near their expiry', () => {
  let t: TestDb;
  let clock: number;
  let pending: PendingConnects;
  beforeEach(async () => {
    t = await openTestDb();
    clock = Date.now();
    pending = new PendingConnects({ db: t.db, vault: createVault(generateKey()), now: () => clock });
  });
  afterEach(async () => t.close());

  it('a link whose exchange outlasts its expiry is neither reported nor settled expired; the exchange settles it connected', async () => {
    const link = await pending.create(t.user.id, 'mockhub', 'oauth2');
    assert.ok((await pending.open(link.id, t.user.id, { state: 'state-1', codeVerifier: 'v'.repeat(64) })).ok);
    clock += pending.ttlMs - 1_000; // the user comes back from the provider a second before the window ends
    const taken = await pending.takeByState('state-1', t.user.id);
    assert.ok(taken.ok && taken.pending.status === 'exchanging');
    clock += 2_000; // the code exchange takes two seconds
    assert.equal((await pending.get(link.id))?.status, 'exchanging', 'wait_for_connection keeps waiting');
    // the browser reloads the callback URL meanwhile
    assert.deepEqual(await pending.takeByState('state-1', t.user.id), { ok: false, reason: 'used' });
    assert.equal((await pending.get(link.id))?.status, 'exchanging', 'the reload did not settle it');
    assert.equal(await pending.settle(link.id, 'connected', null), true);
    assert.equal((await pending.get(link.id))?.status, 'connected');
  });

  it('an opened link past its expiry is settled expired by a late callback; an exchange that never finished is reported expired after the grace', async () => {
    const late = await pending.create(t.user.id, 'mockhub', 'oauth2');
    await pending.open(late.id, t.user.id, { state: 'state-late', codeVerifier: undefined });
    const stuck = await pending.create(t.user.id, 'mockhub', 'oauth2');
    await pending.open(stuck.id, t.user.id, { state: 'state-stuck', codeVerifier: undefined });
    assert.ok((await pending.takeByState('state-stuck', t.user.id)).ok);
    clock += pending.ttlMs + 1;
    assert.deepEqual(await pending.takeByState('state-late', t.user.id), { ok: false, reason: 'expired' });
    const settled = await t.db.get<{ status: string }>('SELECT status FROM pending_connects WHERE id = ?', [late.id]);
    assert.equal(settled?.status, 'expired');
    assert.equal((await pending.get(stuck.id))?.status, 'exchanging');
    clock += EXCHANGE_GRACE_MS;
    assert.equal(
      (await pending.get(stuck.id))?.status,
      'expired',
      'a replica that died mid-exchange does not leave the wait hanging',
    );
  });
});
