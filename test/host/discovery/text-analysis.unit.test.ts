/**
 * @module test/host/discovery/text-analysis.unit.test
 * The pieces under tool search: tokenizer, stemmer, phrases and synonyms, edit distance and the
 * read/write intent of a query.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyze, bigramsOf, intentWords } from '../../../host/discovery/analyze.js';
import { editDistance, typoBudget } from '../../../host/discovery/edit-distance.js';
import { queryIntent, verbIntent } from '../../../host/discovery/intent.js';
import { stem } from '../../../host/discovery/stem.js';
import { synonymsOf } from '../../../host/discovery/synonyms.js';
import { tokenize } from '../../../host/discovery/tokenize.js';

describe('tokenize', () => {
  it('splits snake_case, kebab-case, camelCase and punctuation, and lower-cases', () => {
    assert.deepEqual(tokenize('github_list_prs'), ['github', 'list', 'prs']);
    assert.deepEqual(tokenize('listPRsForRepo'), ['list', 'prs', 'for', 'repo']);
    assert.deepEqual(tokenize('HTTPServer, atlassian-jira!'), ['http', 'server', 'atlassian', 'jira']);
    assert.deepEqual(tokenize("user's issue #42"), ['users', 'issue', '42']);
    assert.deepEqual(tokenize('  '), []);
  });
});

describe('stem', () => {
  const same = (words: string[]): void => {
    const stems = new Set(words.map(stem));
    assert.equal(stems.size, 1, `${words.join(', ')} → ${[...stems].join(', ')}`);
  };
  it('conflates plurals, -ing, -ed, -er, -ies, -ment and -ion forms', () => {
    same(['issue', 'issues', 'issued']);
    same(['create', 'creates', 'created', 'creating', 'creation']);
    same(['message', 'messages', 'messaging']);
    same(['close', 'closed', 'closing', 'closes']);
    same(['reply', 'replies', 'replied']);
    same(['deploy', 'deploys', 'deployed', 'deployment', 'deployments']);
    same(['review', 'reviews', 'reviewer', 'reviewers', 'reviewed']);
    same(['run', 'runs', 'running']);
    same(['name', 'names', 'named']);
    same(['commit', 'commits', 'committed']);
    same(['branch', 'branches']);
    same(['repository', 'repositories']);
    same(['status', 'statuses']);
    same(['pr', 'prs']);
  });
  it('keeps short words, words with digits and distinct words apart', () => {
    assert.equal(stem('is'), 'is');
    assert.equal(stem('v2'), 'v2');
    assert.equal(stem('oauth2'), 'oauth2');
    assert.notEqual(stem('user'), stem('use'));
    assert.notEqual(stem('member'), stem('mention'));
  });
});

describe('phrases and synonyms', () => {
  it('collapses "pull request" to one query term, and the index keeps both', () => {
    assert.deepEqual(
      analyze('open a pull request', 'query').map((o) => o.term),
      [stem('open'), 'pr'],
    );
    const indexed = analyze('Opens a pull request', 'index').map((o) => o.term);
    assert.ok(indexed.includes('pr') && indexed.includes('pull') && indexed.includes('request'));
  });
  it('drops stop words but keeps positions adjacent for bigrams', () => {
    const occ = analyze('Create a new issue in the repo', 'index');
    assert.deepEqual(
      occ.map((o) => o.term),
      [stem('create'), 'new', stem('issue'), 'repo'],
    );
    assert.ok(bigramsOf(occ).has(`new ${stem('issue')}`));
  });
  it('keeps a camelCase brand as one query word and indexes its parts too', () => {
    assert.deepEqual(
      analyze('GitHub', 'query').map((o) => o.term),
      ['github'],
    );
    // a query keeps the parts aside, phrases collapsed, for a run that is no word ("listPullRequests")
    assert.deepEqual(
      analyze('listPullRequests', 'query')[0]?.parts?.map((o) => o.term),
      [stem('list'), 'pr'],
    );
    assert.deepEqual(
      analyze('GitHub', 'index')
        .map((o) => o.term)
        .sort(),
      ['git', 'github', 'hub'],
    );
  });
  it('relates the words people use for the same thing, below weight 1', () => {
    const rel = (a: string, b: string): number => synonymsOf(stem(a)).get(stem(b)) ?? 0;
    for (const [a, b] of [
      ['pr', 'mr'],
      ['ticket', 'issue'],
      ['bug', 'issue'],
      ['msg', 'message'],
      ['post', 'message'],
      ['repo', 'repository'],
      ['reply', 'comment'],
      ['new', 'create'],
      ['resolve', 'close'],
      ['remove', 'delete'],
      ['show', 'list'],
      ['find', 'search'],
      ['people', 'user'],
      ['room', 'channel'],
      ['incident', 'alert'],
      ['release', 'deploy'],
      ['owner', 'assign'],
    ] as const) {
      const w = rel(a, b);
      assert.ok(w > 0 && w < 1, `${a} ↔ ${b}: ${w}`);
      assert.ok((rel(b, a) ?? 0) > 0, `${b} ↔ ${a} should be symmetric`);
    }
    // "issue" may mean an incident, but only weakly, and the relation is one-way for "file"
    assert.ok(rel('issue', 'incident') > 0 && rel('issue', 'incident') < 0.5);
    assert.ok(rel('file', 'create') > 0 && rel('create', 'file') === 0);
  });
});

describe('edit distance', () => {
  it('counts insertions, deletions, substitutions and adjacent swaps', () => {
    assert.equal(editDistance('issue', 'issue'), 0);
    assert.equal(editDistance('isue', 'issue'), 1);
    assert.equal(editDistance('isseu', 'issue'), 1);
    assert.equal(editDistance('mesage', 'message'), 1);
    assert.equal(editDistance('chanels', 'channel'), 2);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('kitten', 'sitting'), 3);
  });
  it('stops early past the bound', () => {
    assert.equal(editDistance('abcdefgh', 'zzzzzzzz', 2), 3);
    assert.equal(editDistance('a', 'abcdef', 1), 2);
  });
  it('allows 1 edit from 4 letters and 2 from 8', () => {
    assert.deepEqual([3, 4, 7, 8, 12].map(typoBudget), [0, 1, 1, 2, 2]);
  });
});

describe('intent', () => {
  it('reads intent after phrases collapse: "new" in "new relic" and "merge" in "merge request" ask for nothing', () => {
    assert.deepEqual(intentWords('New Relic: which alerts are open'), ['~new', 'which', 'alerts', 'are', 'open']);
    assert.equal(queryIntent(intentWords('new relic: which alerts are open')), 'read');
    assert.equal(queryIntent(intentWords('new relic open incidents')), 'read');
    assert.equal(queryIntent(intentWords('gitlab merge requests that are open')), 'read');
    assert.equal(queryIntent(intentWords('new relic: create an alert policy')), 'write');
    assert.equal(queryIntent(intentWords('new issue for the login bug')), 'write');
    assert.equal(queryIntent(intentWords('who is in the design channel')), 'read');
    assert.equal(queryIntent(intentWords('look up a user by email')), 'read');
    // a phrase names a thing: "direct message(s)" is no "dm bob", and "check run" still asks
    assert.equal(queryIntent(intentWords('direct messages from alice')), undefined);
    assert.equal(queryIntent(intentWords('dm bob about the release')), 'write');
    assert.equal(queryIntent(intentWords('check run status for the build')), 'read');
  });
  it('reads questions and lookups, writes imperatives', () => {
    assert.equal(queryIntent(tokenize('which PRs are open')), 'read');
    assert.equal(queryIntent(tokenize('could you please show me the diff')), 'read');
    assert.equal(queryIntent(tokenize('open a ticket for the bug')), 'write');
    assert.equal(queryIntent(tokenize('please retry the failed build')), 'write');
    assert.equal(queryIntent(tokenize('the new config file, create it')), 'write');
    assert.equal(queryIntent(tokenize('my open pull requests')), 'read');
    assert.equal(queryIntent(tokenize('open PRs in the api repo')), 'read');
    assert.equal(queryIntent(tokenize('tickets assigned to me')), 'read');
    assert.equal(queryIntent(tokenize('ask carol to review it')), 'write');
    assert.equal(queryIntent(tokenize('jira')), undefined);
  });
  it('classifies tools by their leading name verb', () => {
    assert.equal(verbIntent(stem('list')), 'read');
    assert.equal(verbIntent(stem('create')), 'write');
    assert.equal(verbIntent('run'), undefined);
    assert.equal(verbIntent(undefined), undefined);
  });
});
