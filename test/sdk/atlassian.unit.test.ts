/**
 * @module test/sdk/atlassian.unit.test
 * atlassianSite picks the site a call acts on from an accessible-resources answer as the Atlassian
 * plugins rely on: the product's sites first, the configured site by URL, host, first label, name
 * or cloud id, else the first; and the plugin's own words when there is none or no match.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { atlassianSite } from '../../sdk/atlassian.js';

const JIRA = {
  id: 'c1',
  url: 'https://acme.atlassian.net/',
  name: 'Acme',
  scopes: ['read:jira-work', 'write:jira-work'],
};
const WIKI = { id: 'c2', url: 'https://docs.atlassian.net', name: 'Docs', scopes: ['read:confluence-content.all'] };
const OTHER = { id: 'c3', url: 'https://beta.atlassian.net', name: 'Beta', scopes: ['read:jira-work'] };
const words = {
  none: 'no site at all',
  unmatched: (wanted: string, reachable: string) => `no "${wanted}" among ${reachable}`,
};
const pick = (resources: unknown, product: string, wanted?: unknown) =>
  atlassianSite(resources, { product, wanted, ...words });

describe('sdk atlassianSite', () => {
  test("the first of the product's sites, its URL without a trailing slash", () => {
    assert.deepEqual(pick([WIKI, JIRA, OTHER], 'jira'), { id: 'c1', name: 'Acme', url: 'https://acme.atlassian.net' });
    assert.deepEqual(pick([JIRA, WIKI], 'confluence'), { id: 'c2', name: 'Docs', url: 'https://docs.atlassian.net' });
  });

  test('every site when none has a scope of the product; entries without an id are not sites', () => {
    assert.deepEqual(
      pick([null, { url: 'https://x.atlassian.net' }, { id: 'c9', url: 'https://nine.atlassian.net' }], 'confluence'),
      { id: 'c9', name: null, url: 'https://nine.atlassian.net' },
    );
  });

  test('the configured site by cloud id, URL, host, first host label or name (any case, trimmed)', () => {
    for (const wanted of ['c3', 'https://beta.atlassian.net/', 'BETA.atlassian.net', ' beta ', 'Beta'])
      assert.equal(pick([JIRA, OTHER], 'jira', wanted).id, 'c3', wanted);
    assert.equal(pick([JIRA, OTHER], 'jira', '').id, 'c1');
    assert.equal(pick([JIRA, OTHER], 'jira', 42).id, 'c1');
  });

  test("the plugin's words: no site, or none matching", () => {
    for (const answer of [[], 'not JSON', undefined, [{ url: 'https://x.atlassian.net' }]])
      assert.throws(() => pick(answer, 'jira'), { message: 'no site at all' });
    assert.throws(() => pick([JIRA, OTHER, { id: 'c4', name: 'Nameless' }], 'jira', 'gamma'), {
      message: 'no "gamma" among https://acme.atlassian.net/, https://beta.atlassian.net',
    });
  });
});
