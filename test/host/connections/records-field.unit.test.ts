/**
 * @module test/host/connections/records-field.unit.test
 * A records field (several projects in one API-key connection): the manifest rules that go with
 * it (secret, no enum/default/pattern, its sub-fields named, `{field.sub}` placeholders and
 * `inject.recordHeader` together), and the values a form or an import may give (a JSON list of
 * records of texts, each with its required sub-fields and a unique key). The list is the secret;
 * the records without their secret parts are the config a plugin reads.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateApiKeyFields } from '../../../host/connections/apikey-fields.js';
import { describeIssues, manifestSchema, type ApiKeyField } from '../../../contracts/manifest.js';

const projects = {
  name: 'projects',
  label: 'Projects',
  secret: true,
  required: true,
  records: {
    key: 'accountId',
    fields: ['name', 'accountId', 'passcode', 'region'],
    required: ['accountId', 'passcode'],
    secret: ['passcode'],
    max: 3,
  },
} as ApiKeyField;
const fields: ApiKeyField[] = [
  projects,
  { name: 'defaultProject', label: 'Default project', secret: false, required: false },
];

const manifestWith = (auth: Record<string, unknown>) =>
  manifestSchema.safeParse({
    name: 'multi',
    version: '1.0.0',
    displayName: 'Multi',
    description: 'projects',
    egress: ['api.example.com'],
    auth: { type: 'apikey', ...auth },
    tools: [{ name: 'multi_run', description: 'run', inputSchema: { type: 'object' } }],
  });
const errorOf = (r: ReturnType<typeof manifestWith>): string => (r.success ? '' : describeIssues(r.error));

describe('a records field in the manifest', () => {
  const inject = { header: 'x-passcode', format: '{projects.passcode}', recordHeader: 'X-Account-Id' };

  it('loads with a {field.sub} placeholder and the header that chooses the record', () => {
    const r = manifestWith({ fields, inject });
    assert.ok(r.success, errorOf(r));
  });

  it('needs recordHeader with {field.sub}, and refuses it without', () => {
    assert.match(
      errorOf(manifestWith({ fields, inject: { ...inject, recordHeader: undefined } })),
      /recordHeader[\s\S]*required/,
    );
    assert.match(
      errorOf(
        manifestWith({
          fields: [...fields, { name: 'key', label: 'Key', secret: true }],
          inject: { header: 'x-key', format: '{key}', recordHeader: 'x-account-id' },
        }),
      ),
      /only for a format that names a secret of a record/,
    );
  });

  it('refuses a placeholder naming the whole list, a sub-field that is not secret, or an unknown one', () => {
    assert.match(
      errorOf(manifestWith({ fields, inject: { ...inject, format: '{projects}' } })),
      /holds a list of records: .*\{projects\.passcode\}/,
    );
    assert.match(
      errorOf(manifestWith({ fields, inject: { ...inject, format: '{projects.accountId}' } })),
      /names no secret field/,
    );
    assert.match(
      errorOf(manifestWith({ fields, inject: { ...inject, format: '{projects.Passcode}' } })),
      /did you mean \{projects\.passcode\}/,
    );
  });

  it('refuses a records field that is not secret, that has enum/default/pattern, or whose sub-fields do not add up', () => {
    const withField = (f: Record<string, unknown>) => manifestWith({ fields: [{ ...projects, ...f }], inject });
    assert.match(errorOf(withField({ secret: false })), /must be secret/);
    assert.match(errorOf(withField({ pattern: '.*' })), /takes no pattern/);
    assert.match(errorOf(withField({ records: { ...projects.records, key: 'id' } })), /"id" is not in fields/);
    assert.match(
      errorOf(withField({ records: { ...projects.records, secret: ['accountId', 'passcode'] } })),
      /cannot be secret/,
    );
    assert.match(
      errorOf(manifestWith({ fields: [projects, { ...projects, name: 'more' }], inject })),
      /one records field at most/,
    );
    assert.match(errorOf(manifestWith({ fields, inject: { ...inject, recordHeader: 'Host' } })), /steers routing/);
  });
});

describe('the values of a records field', () => {
  const list = [
    { name: 'Production', accountId: 'W8R-1', passcode: 'pass-prod-1', region: 'in1' },
    { accountId: 'W8R-2', passcode: ' pass-stage-2 ', region: 'eu1' },
  ];

  it('keeps the list (trimmed) as the secret and the records without their passcodes as config', () => {
    for (const given of [JSON.stringify(list), list]) {
      const v = validateApiKeyFields(fields, { projects: given, defaultProject: 'Production' });
      assert.deepEqual(v.errors, {});
      assert.deepEqual(JSON.parse(v.secret['projects'] ?? ''), [list[0], { ...list[1], passcode: 'pass-stage-2' }]);
      assert.deepEqual(v.config, {
        projects: [
          { name: 'Production', accountId: 'W8R-1', region: 'in1' },
          { accountId: 'W8R-2', region: 'eu1' },
        ],
        defaultProject: 'Production',
      });
      assert.ok(!JSON.stringify(v.config).includes('pass-'), 'no passcode in the config');
    }
  });

  const cases: Array<[string, unknown, RegExp]> = [
    ['missing', undefined, /Projects is required/],
    ['empty list', '[]', /at least one record/],
    ['not JSON', '[{"accountId":', /not valid JSON/],
    ['not a list', '{"accountId":"a"}', /must be a JSON list/],
    ['a record that is not an object', '["W8R-1"]', /record 1 is not an object/],
    [
      'an unknown sub-field',
      [{ accountId: 'a', passcode: 'p', passCode: 'x' }],
      /record 1 has an unknown field "passCode"/,
    ],
    ['a required sub-field missing', [{ accountId: 'a' }], /record 1 has no "passcode"/],
    ['a sub-field that is not text', [{ accountId: 'a', passcode: { x: 1 } }], /"passcode" must be text/],
    ['a control character', [{ accountId: 'a', passcode: 'p\nq' }], /control characters/],
    [
      'two records with one key',
      [
        { accountId: 'a', passcode: 'p' },
        { accountId: 'a', passcode: 'q' },
      ],
      /two records have the accountId "a"/,
    ],
    [
      'too many records',
      Array.from({ length: 4 }, (_, i) => ({ accountId: `a${i}`, passcode: 'p' })),
      /at most 3 records/,
    ],
    ['too long', `[${' '.repeat(20000)}]`, /too long/],
  ];
  for (const [what, given, pattern] of cases)
    it(`refuses ${what}, naming the field`, () => {
      const v = validateApiKeyFields(fields, given === undefined ? {} : { projects: given });
      assert.match(v.errors['projects'] ?? '', pattern);
      assert.equal(v.secret['projects'], undefined);
    });
});
