/**
 * @module test/host/discovery/search-index.unit.test
 * Ranked search over a small synthetic catalog: synonyms, stems, typos, field weights, intent,
 * filters, limits, score normalisation and deterministic order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toSearchEntry } from '../../../host/discovery/catalog-tool.js';
import { createSearchIndex, DEFAULT_LIMIT, MAX_LIMIT, type SearchEntry } from '../../../host/discovery/search-index.js';
import { SYNTHETIC_CATALOG } from '../../helpers/synthetic-catalog.js';

const index = createSearchIndex(SYNTHETIC_CATALOG.map(toSearchEntry));
const top = (query: string, opts = {}): string | undefined => index.search(query, opts)[0]?.entry.name;
const names = (query: string, opts = {}): string[] => index.search(query, opts).map((h) => h.entry.name);

describe('search: what people type finds the tool', () => {
  it('matches "create pull request", which a substring search misses', () => {
    assert.equal(top('create pull request'), 'github_create_pull_request');
  });
  it('understands synonyms and abbreviations', () => {
    assert.equal(top('open a PR'), 'github_create_pull_request');
    assert.equal(top('merge the MR'), 'github_merge_pull_request');
    assert.equal(top('file a ticket in jira'), 'jira_create_issue');
    assert.equal(top('send a msg'), 'slack_post_message');
    assert.equal(top('dm someone'), 'slack_open_dm');
    assert.equal(top('show my repos'), 'github_list_repositories');
    assert.equal(top('move the ticket to done'), 'jira_transition_issue');
    assert.equal(top('find people'), 'slack_list_users');
    assert.equal(top('reply on the github issue'), 'github_add_issue_comment');
  });
  it('tolerates typos within the edit budget', () => {
    assert.equal(top('crate pul request'), 'github_create_pull_request');
    assert.equal(top('lst chanels'), 'slack_list_channels');
    assert.equal(top('serch mesages'), 'slack_search_messages');
    assert.equal(top('transtion isue'), 'jira_transition_issue');
  });
  it('does not correct short words or stretch past the budget', () => {
    // "prz" (3 letters) is not corrected to "pr"; "xqzv" is 4 letters and 4 edits from anything
    assert.deepEqual(names('xqzv'), []);
    assert.deepEqual(names('prz'), []);
  });
  it('weights the name above the description and the integration', () => {
    // "comment" is in two names and one description; both names outrank the description
    const hits = names('comment');
    assert.deepEqual(hits.slice(0, 2).sort(), ['github_add_issue_comment', 'jira_add_comment']);
    // the integration's name finds its tools, and only them
    assert.deepEqual(
      new Set(names('jira')),
      new Set(['jira_add_comment', 'jira_create_issue', 'jira_search_issues', 'jira_transition_issue']),
    );
  });
  it('prefers the tool that reads for a question and the tool that writes for an order', () => {
    assert.equal(top('which pull requests are open'), 'github_list_pull_requests');
    assert.equal(top('open a pull request'), 'github_create_pull_request');
    assert.equal(top('what issues are in the repo'), 'github_list_issues');
    // "open" describes a state here: no synonym turns it into "create"
    assert.equal(top('my open pull requests'), 'github_list_pull_requests');
  });
  it('a bigram of the query in a name beats the same words apart', () => {
    const hits = index.search('create issue');
    assert.ok(['github_create_issue', 'jira_create_issue'].includes(hits[0]?.entry.name ?? ''));
    assert.ok(hits.findIndex((h) => h.entry.name === 'github_add_issue_comment') > 1);
  });
});

describe('search: options and result shape', () => {
  it('filters by integration name, display name or part of the name', () => {
    assert.deepEqual(
      new Set(index.search('issue', { integration: 'jira' }).map((h) => h.entry.integration)),
      new Set(['atlassian-jira']),
    );
    assert.deepEqual(
      new Set(index.search('issue', { integration: 'GitHub' }).map((h) => h.entry.integration)),
      new Set(['github']),
    );
    assert.deepEqual(index.search('issue', { integration: 'gitlab' }), []);
  });
  it('applies the caller filter before the limit', () => {
    const hits = index.search('issue', {
      limit: 2,
      filter: (e: SearchEntry) => e.name !== 'github_create_issue' && e.name !== 'jira_create_issue',
    });
    assert.equal(hits.length, 2);
    assert.ok(hits.every((h) => !h.entry.name.endsWith('create_issue')));
  });
  it('returns 10 by default and at most 50', () => {
    assert.equal(DEFAULT_LIMIT, 10);
    assert.equal(MAX_LIMIT, 50);
    const entries: SearchEntry[] = Array.from({ length: 80 }, (_, i) => ({
      name: `demo_tool_${String(i).padStart(2, '0')}`,
      integration: 'demo',
      integrationDisplayName: 'Demo',
      description: 'Does a demo thing.',
      parameters: [],
    }));
    const big = createSearchIndex(entries);
    assert.equal(big.size, 80);
    assert.equal(big.search('demo').length, 10);
    assert.equal(big.search('demo', { limit: 500 }).length, 50);
    assert.equal(big.search('demo', { limit: 0 }).length, 1);
    // equal scores: alphabetical by name
    assert.deepEqual(
      big.search('demo', { limit: 3 }).map((h) => h.entry.name),
      ['demo_tool_00', 'demo_tool_01', 'demo_tool_02'],
    );
  });
  it('scores in 0..1 with 3 decimals, best first, and the same order every time', () => {
    for (const q of ['create pull request', 'issue', 'send message to channel', 'jira']) {
      const hits = index.search(q, { limit: 50 });
      assert.ok(hits.length > 0);
      for (const h of hits) {
        assert.ok(h.score >= 0 && h.score <= 1, `${q}: ${h.score}`);
        assert.equal(Math.round(h.score * 1000) / 1000, h.score);
      }
      for (let i = 1; i < hits.length; i++) assert.ok((hits[i - 1]?.score ?? 0) >= (hits[i]?.score ?? 0));
      assert.deepEqual(index.search(q, { limit: 50 }), hits);
    }
    // a tool whose whole name is asked for scores near the top of the scale
    assert.ok((index.search('list slack channels')[0]?.score ?? 0) >= 0.8);
  });
  it('answers nothing for empty, blank or meaningless queries, and never throws', () => {
    assert.deepEqual(index.search(''), []);
    assert.deepEqual(index.search('   '), []);
    assert.deepEqual(index.search('!!! ??? ...'), []);
    assert.deepEqual(createSearchIndex([]).search('anything'), []);
    assert.ok(Array.isArray(index.search('the of and')));
    assert.ok(Array.isArray(index.search('x'.repeat(500))));
  });
  it('indexes parameter names, descriptions and enum values', () => {
    assert.equal(top('jql'), 'jira_search_issues');
    assert.equal(top('squash'), 'github_merge_pull_request');
    assert.ok(names('private visibility').includes('github_list_repositories'));
  });
});
