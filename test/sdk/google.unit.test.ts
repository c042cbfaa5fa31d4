/**
 * @module test/sdk/google.unit.test
 * The kinds of failure googleReasonKind reads from a Google error body's reasons, as the Google
 * plugins' error words rely on: a quota (per day apart from the rest), a missing OAuth scope, an
 * API not enabled, or none of these.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { googleErrorInfo, googleReasonKind } from '../../sdk/google.js';

/** The body Google answers a failure with, carrying these reasons in `errors[]` (v3 APIs) or `details[]` (AIP-193). */
const body = (errors: string[], details: string[] = []) => ({
  error: {
    code: 403,
    message: 'no',
    status: 'PERMISSION_DENIED',
    errors: errors.map((reason) => ({ reason, domain: 'global' })),
    details: details.map((reason) => ({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason })),
  },
});
const kindOf = (errors: string[], details: string[] = []) => googleReasonKind(googleErrorInfo(body(errors, details)));

describe('sdk googleReasonKind', () => {
  test('rate limits and quotas, from either list', () => {
    for (const r of ['rateLimitExceeded', 'userRateLimitExceeded', 'sharingRateLimitExceeded', 'quotaExceeded'])
      assert.equal(kindOf([r]), 'rate-limit', r);
    for (const r of ['RATE_LIMIT_EXCEEDED', 'RESOURCE_EXHAUSTED']) assert.equal(kindOf([], [r]), 'rate-limit', r);
  });

  test('a daily quota is told apart, and comes first', () => {
    assert.equal(kindOf(['dailyLimitExceeded']), 'daily-limit');
    assert.equal(kindOf(['rateLimitExceeded', 'dailyLimitExceeded']), 'daily-limit');
  });

  test('a missing scope, a disabled API', () => {
    for (const r of ['insufficientPermissions', 'insufficientScopes']) assert.equal(kindOf([r]), 'scope', r);
    assert.equal(kindOf([], ['ACCESS_TOKEN_SCOPE_INSUFFICIENT']), 'scope');
    assert.equal(kindOf(['accessNotConfigured']), 'disabled');
    assert.equal(kindOf([], ['SERVICE_DISABLED']), 'disabled');
  });

  test('a rate limit wins over a scope, a scope over a disabled API', () => {
    assert.equal(kindOf(['insufficientPermissions'], ['RATE_LIMIT_EXCEEDED']), 'rate-limit');
    assert.equal(kindOf(['accessNotConfigured', 'insufficientPermissions']), 'scope');
  });

  test('other reasons, no reasons and other bodies are none of these', () => {
    assert.equal(kindOf(['forbidden', 'notFound', 'global']), '');
    assert.equal(kindOf([]), '');
    assert.equal(googleReasonKind(googleErrorInfo({ message: 'not Google' })), '');
    assert.equal(googleReasonKind(googleErrorInfo(undefined)), '');
  });
});
