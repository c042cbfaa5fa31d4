/**
 * @module test/host/portal/connect-records.test
 * The portal's API-key form for a records field (several projects in one connection): the field is
 * a password input that takes a JSON list; a list with a bad record is refused naming the record,
 * without echoing what was typed; a valid list is stored as the sealed secret, and the connection's
 * config holds the records without their secret sub-fields.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { manifestSchema } from '../../../contracts/manifest.js';
import { csrfOf, signIn, startHarness, type Harness } from '../../helpers/portal.js';

const projects = manifestSchema.parse({
  name: 'multiproj',
  version: '1.0.0',
  displayName: 'Multi Project',
  description: 'Several projects in one connection',
  auth: {
    type: 'apikey',
    fields: [
      {
        name: 'projects',
        label: 'Projects',
        description: 'A JSON list of projects.',
        secret: true,
        records: {
          key: 'accountId',
          fields: ['name', 'accountId', 'passcode'],
          required: ['accountId', 'passcode'],
          secret: ['passcode'],
        },
      },
      { name: 'defaultProject', label: 'Default project', required: false },
    ],
    inject: { header: 'x-passcode', format: '{projects.passcode}', recordHeader: 'x-account-id' },
  },
  egress: ['api.multiproj.test'],
  tools: [{ name: 'multiproj_ping', description: 'Ping', inputSchema: { type: 'object', properties: {} } }],
});

describe('portal connect form: a records field', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ extraManifests: [projects] });
  });
  after(async () => h.close());

  it('takes a JSON list in a password input, refuses a bad record by number, stores the list and the public records', async () => {
    const b = await signIn(h);
    const p = await h.connections.pending.create(h.t.user.id, 'multiproj', 'apikey');
    const page = await b.get(`/connect/${p.id}`);
    assert.match(page.body, /<input type="password"[^>]* id="f-projects" name="projects"/);
    const csrf = csrfOf(page.body);

    const typo = '[{"accountId":"A-1","passcode":"pc-secret-one"},{"accountId":"A-2","passCode":"pc-secret-two"}]';
    const bad = await b.post(`/connect/${p.id}/form`, { _csrf: csrf, projects: typo });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /Projects: record 2 has an unknown field &quot;passCode&quot;/);
    assert.ok(!bad.body.includes('pc-secret'), 'nothing typed in the secret field is sent back');

    const list = [
      { name: 'Prod', accountId: 'A-1', passcode: 'pc-secret-one' },
      { name: 'Stage', accountId: 'A-2', passcode: 'pc-secret-two' },
    ];
    const ok = await b.post(`/connect/${p.id}/form`, {
      _csrf: csrf,
      projects: JSON.stringify(list),
      defaultProject: 'Stage',
    });
    assert.equal(ok.status, 303);
    const m = h.manifests.find((x) => x.name === 'multiproj')!;
    const secret = (await h.connections.credential(h.t.user.id, m))?.values['projects'] ?? '';
    assert.deepEqual(JSON.parse(secret), list);
    const look = await h.connections.lookup(h.t.user.id, m);
    assert.deepEqual(look.connected && look.config, {
      projects: [
        { name: 'Prod', accountId: 'A-1' },
        { name: 'Stage', accountId: 'A-2' },
      ],
      defaultProject: 'Stage',
    });
  });
});
