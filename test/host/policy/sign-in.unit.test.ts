/**
 * @module test/host/policy/sign-in.unit.test
 * The single sign-on rule (host/policy/sign-in.ts) and its place in the policy file: who is
 * admitted (an email, verified unless the policy says otherwise, in an allowed domain, with the
 * required claim), who may get an account (only when the rule says who may), and the tenant a new
 * user is placed in (claim, then domain, then default); the schema refuses what would silently
 * match nothing (an upper-case domain, a tenant no user can have).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePolicy } from '../../../host/policy/load.js';
import type { SsoRule } from '../../../host/policy/schema.js';
import {
  claimHas,
  createsAccounts,
  decideSsoAccess,
  placeNewUser,
  type SsoClaims,
} from '../../../host/policy/sign-in.js';

const ruleOf = (sso: Record<string, unknown>): SsoRule => parsePolicy({ signIn: { sso } }, 'test').signIn.sso;

const person = (extra: Record<string, unknown> = {}): SsoClaims => ({
  sub: 's-1',
  email: 'Ada@Acme.Test',
  email_verified: true,
  ...extra,
});

describe('single sign-on rule', () => {
  it('defaults: API keys and links on; the rule admits verified emails of existing users and creates nobody', () => {
    const policy = parsePolicy({}, 'test');
    assert.equal(policy.signIn.apiKey, true);
    assert.equal(policy.signIn.loginLinks, true);
    const rule = policy.signIn.sso;
    assert.deepEqual(rule, { allowedDomains: [], requireVerifiedEmail: true, tenantByDomain: {} });
    assert.equal(createsAccounts(rule), false);
    assert.deepEqual(decideSsoAccess(rule, person()), {
      ok: true,
      email: 'ada@acme.test',
      domain: 'acme.test',
      mayCreate: false,
    });
  });

  it('refuses, in order: no email, an unverified one, a domain not allowed, a missing claim', () => {
    const rule = ruleOf({ allowedDomains: ['acme.test'], requiredClaim: { claim: 'groups', value: 'workbench' } });
    const codeOf = (claims: SsoClaims): string => {
      const d = decideSsoAccess(rule, claims);
      return d.ok ? 'ok' : d.code;
    };
    const table: [SsoClaims, string][] = [
      [{ sub: 'x' }, 'GW_ERR_SSO_EMAIL_MISSING'],
      [person({ email: 'not an email' }), 'GW_ERR_SSO_EMAIL_MISSING'],
      [person({ email: 42 }), 'GW_ERR_SSO_EMAIL_MISSING'],
      [person({ email_verified: false, groups: ['workbench'] }), 'GW_ERR_SSO_EMAIL_UNVERIFIED'],
      [person({ email_verified: undefined, groups: ['workbench'] }), 'GW_ERR_SSO_EMAIL_UNVERIFIED'],
      [person({ email_verified: 'yes', groups: ['workbench'] }), 'GW_ERR_SSO_EMAIL_UNVERIFIED'],
      [person({ email: 'ada@evil.test', groups: ['workbench'] }), 'GW_ERR_SSO_DOMAIN_NOT_ALLOWED'],
      [person({ email: 'ada@sub.acme.test', groups: ['workbench'] }), 'GW_ERR_SSO_DOMAIN_NOT_ALLOWED'],
      [person({ email: 'ada@acme.test.evil.test', groups: ['workbench'] }), 'GW_ERR_SSO_DOMAIN_NOT_ALLOWED'],
      [person(), 'GW_ERR_SSO_CLAIM_REQUIRED'],
      [person({ groups: ['sales'] }), 'GW_ERR_SSO_CLAIM_REQUIRED'],
      [person({ groups: { workbench: true } }), 'GW_ERR_SSO_CLAIM_REQUIRED'],
      [person({ groups: ['sales', 'workbench'] }), 'ok'],
      [person({ groups: 'workbench', email_verified: 'true' }), 'ok'],
    ];
    for (const [claims, want] of table) assert.equal(codeOf(claims), want, JSON.stringify(claims));
    const ok = decideSsoAccess(rule, person({ groups: ['workbench'] }));
    assert.ok(ok.ok && ok.mayCreate, 'a rule that names who may sign in creates accounts');
  });

  it('requireVerifiedEmail: false admits an unverified email; the refusal text never names the required value', () => {
    const rule = ruleOf({ requireVerifiedEmail: false, requiredClaim: { claim: 'role', value: ['admin', 'dev'] } });
    assert.ok(decideSsoAccess(rule, person({ email_verified: false, role: 'dev' })).ok);
    const refused = decideSsoAccess(rule, person({ role: 'guest' }));
    assert.ok(!refused.ok && refused.code === 'GW_ERR_SSO_CLAIM_REQUIRED');
    assert.ok(!refused.ok && !/\badmin\b|\bdev\b/.test(refused.reason), refused.ok ? '' : refused.reason);
  });

  it('claim values: strings equal, lists contain, booleans and numbers by their text', () => {
    assert.equal(claimHas('a', 'a'), true);
    assert.equal(claimHas('ab', 'a'), false);
    assert.equal(claimHas(['x', 'a'], ['b', 'a']), true);
    assert.equal(claimHas(true, 'true'), true);
    assert.equal(claimHas(7, ['7']), true);
    assert.equal(claimHas(null, 'null'), false);
    assert.equal(claimHas({ a: 1 }, '[object Object]'), false);
    assert.equal(claimHas(undefined, 'undefined'), false);
  });

  it('places a new user by the tenant claim, then the domain, then the default; refuses when none applies', () => {
    const rule = ruleOf({
      allowedDomains: ['acme.test', 'beta.test', 'gamma.test'],
      tenantClaim: 'wb_tenant',
      tenantByDomain: { 'acme.test': 'acme', 'beta.test': 'beta' },
    });
    assert.deepEqual(placeNewUser(rule, person({ wb_tenant: 'Research' }), 'acme.test'), {
      ok: true,
      tenant: 'research',
      by: 'claim',
    });
    assert.deepEqual(placeNewUser(rule, person(), 'beta.test'), { ok: true, tenant: 'beta', by: 'domain' });
    assert.deepEqual(placeNewUser(rule, person({ wb_tenant: '' }), 'acme.test'), {
      ok: true,
      tenant: 'acme',
      by: 'domain',
    });
    const bad = placeNewUser(rule, person({ wb_tenant: '../root' }), 'acme.test');
    assert.ok(!bad.ok && bad.code === 'GW_ERR_SSO_NO_TENANT' && /wb_tenant/.test(bad.reason));
    const none = placeNewUser(rule, person(), 'gamma.test');
    assert.ok(!none.ok && none.code === 'GW_ERR_SSO_NO_TENANT');
    const withDefault = ruleOf({ allowedDomains: ['gamma.test'], defaultTenant: 'guests' });
    assert.deepEqual(placeNewUser(withDefault, person(), 'gamma.test'), { ok: true, tenant: 'guests', by: 'default' });
    // an object's own keys only: a domain named like Object's members finds nothing
    assert.ok(!placeNewUser(ruleOf({ allowedDomains: ['x.test'] }), person(), 'constructor').ok);
  });

  it('the schema refuses domains and tenants that could never match, and unknown keys', () => {
    const refused = (signIn: unknown, field: RegExp): void =>
      assert.throws(
        () => parsePolicy({ signIn }, 'test'),
        (err: Error) => field.test(err.message),
      );
    refused({ sso: { allowedDomains: ['Acme.test'] } }, /signIn\.sso\.allowedDomains/);
    refused({ sso: { allowedDomains: ['@acme.test'] } }, /allowedDomains/);
    refused({ sso: { tenantByDomain: { 'acme.test': 'Not A Tenant' } } }, /tenantByDomain/);
    refused({ sso: { defaultTenant: '' } }, /defaultTenant/);
    refused({ sso: { requiredClaim: { claim: 'groups' } } }, /requiredClaim/);
    refused({ sso: { requiredClaim: { claim: 'groups', value: [] } } }, /requiredClaim/);
    refused({ sso: { allowDomains: ['acme.test'] } }, /allowDomains/);
    refused({ apiKeys: false }, /apiKeys/);
  });
});
