/**
 * @module test/host/discovery/connected-ranking.test
 * search_tools through a started gateway with overlapping integrations (GitHub, GitLab and
 * Bitbucket all merge and list pull requests): among tools that do the same job, those of an
 * integration the caller has connected come first, in the places that job's tools hold in the
 * relevance order; every other tool keeps its place, and every tool its score. A query that names
 * a product (in any spelling the index reads) and the `integration` filter keep the relevance
 * order; a connected tool that does another job never jumps ahead.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { namesIntegration } from '../../../host/discovery/meta-tools.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

interface Hit {
  name: string;
  integration: string;
  score: number;
  connected: boolean;
}
interface Answer {
  tools: Hit[];
  hint?: string;
}

let gw: TestGateway;
const users: Record<'gitlab' | 'github' | 'bitbucket' | 'slack' | 'nobody', Client> = {} as never;

async function answer(c: Client, args: Record<string, unknown>): Promise<Answer> {
  const res = await c.callTool({ name: 'search_tools', arguments: args });
  const content = res.content as { type: string; text: string }[];
  assert.notEqual(res.isError, true, content[0]?.text);
  return JSON.parse(content[0]?.text ?? 'null') as Answer;
}
const names = async (c: Client, query: string, limit = 20): Promise<string[]> =>
  (await answer(c, { query, limit })).tools.map((t) => t.name);

/** the job a code-host tool does, as its name says it without the product, in the singular: gitlab's merge requests are pull requests */
const jobOf = (name: string): string =>
  name
    .split('_')
    .slice(1)
    .map((w) => w.replace(/s$/, ''))
    .join('_')
    .replace('merge_request', 'pull_request');

before(async () => {
  gw = await startGateway({ plugins: ['github', 'gitlab', 'atlassian-bitbucket', 'slack', 'google-gmail'] });
  const tokens = { gitlab: 'glpat-a', github: 'gho_b', 'atlassian-bitbucket': 'bb-c', slack: 'xoxp-d' } as const;
  for (const [integration, token] of Object.entries(tokens)) {
    const u = await gw.createUser(`${integration}@example.com`);
    await gw.connect(integration, { token }, u.user);
    users[integration === 'atlassian-bitbucket' ? 'bitbucket' : (integration as 'gitlab' | 'github' | 'slack')] =
      await gw.mcpClient(u.apiKey);
  }
  users.nobody = await gw.mcpClient((await gw.createUser('nobody@example.com')).apiKey);
});
after(async () => gw?.close());

describe('search_tools lists the tools of connected integrations first among those doing the same job', () => {
  it('"merge the pull request": each user sees its own code host first, in the place the job holds', async () => {
    const pure = await names(users.nobody, 'merge the pull request');
    const wide = await names(users.nobody, 'merge the pull request', 50);
    const merges = pure.filter((n) => jobOf(n) === 'merge_pull_request');
    assert.deepEqual(
      new Set(merges),
      new Set(['github_merge_pull_request', 'gitlab_merge_merge_request', 'bitbucket_merge_pull_request']),
    );
    const first = pure.findIndex((n) => jobOf(n) === 'merge_pull_request');
    for (const [user, mine] of [
      ['github', 'github_merge_pull_request'],
      ['gitlab', 'gitlab_merge_merge_request'],
      ['bitbucket', 'bitbucket_merge_pull_request'],
    ] as const) {
      const got = await names(users[user], 'merge the pull request');
      assert.equal(got[first], mine, `${user}: ${got.join(', ')}`);
      // tools whose job no other integration here shares keep their places
      // (the reorder sees the top 50, so a job is shared when two of the top 50 do it)
      const shared = new Set(wide.map(jobOf).filter((j, i, all) => all.indexOf(j) !== i));
      pure.forEach((n, i) => {
        if (!shared.has(jobOf(n))) assert.equal(got[i], n, `${user}: place ${i}`);
      });
      // the places of a shared job hold that job's tools
      pure.forEach((n, i) => {
        if (shared.has(jobOf(n))) assert.equal(jobOf(got[i] ?? ''), jobOf(n), `${user}: place ${i}`);
      });
    }
  });

  it('each tool keeps its own score, whoever asks; the order is decided before the limit cuts', async () => {
    const score = async (c: Client, name: string): Promise<number | undefined> =>
      (await answer(c, { query: 'merge the pull request', limit: 20 })).tools.find((t) => t.name === name)?.score;
    for (const name of ['github_merge_pull_request', 'gitlab_merge_merge_request']) {
      assert.equal(await score(users.gitlab, name), await score(users.nobody, name), name);
      assert.equal(await score(users.github, name), await score(users.nobody, name), name);
    }
    const pureFirst = (await names(users.nobody, 'merge the pull request', 1))[0];
    for (const [user, mine] of [
      ['github', 'github_merge_pull_request'],
      ['gitlab', 'gitlab_merge_merge_request'],
    ] as const) {
      // with limit 1 the connected host's tool is the one shown, whichever the relevance order put first
      if (jobOf(pureFirst ?? '') === 'merge_pull_request')
        assert.deepEqual(await names(users[user], 'merge the pull request', 1), [mine]);
    }
  });

  it('a connected tool that does another job never jumps ahead', async () => {
    for (const [user, query] of [
      ['bitbucket', 'ask someone to review my PR'],
      ['bitbucket', 'make a new branch from main'],
      ['slack', 'search my email'],
      ['slack', 'look up email'],
    ] as const) {
      const pure = await names(users.nobody, query);
      const got = await names(users[user], query);
      assert.equal(got[0], pure[0], `${user} "${query}": ${got.slice(0, 3).join(', ')}`);
    }
  });

  it('a query that names the product keeps the relevance order, however the name is written', async () => {
    for (const query of [
      'merge the github pull request',
      'mergeGithubPullRequest',
      'ｍｅｒｇｅ ｔｈｅ ｇｉｔｈｕｂ ｐｕｌｌ ｒｅｑｕｅｓｔ',
    ]) {
      const pure = await names(users.nobody, query);
      assert.equal(pure[0], 'github_merge_pull_request', query);
      // without the check the GitLab user would see gitlab_merge_merge_request in GitHub's place
      assert.deepEqual(await names(users.gitlab, query), pure, query);
    }
  });
});

describe('namesIntegration', () => {
  const installed = [
    { name: 'github', displayName: 'GitHub' },
    { name: 'gitlab', displayName: 'GitLab' },
    { name: 'newrelic', displayName: 'New Relic' },
    { name: 'atlassian-jira', displayName: 'Jira (Atlassian Cloud)' },
  ];
  it('finds a product named by a word, a part of its name, two words run together, camelCase or full-width letters', () => {
    assert.equal(namesIntegration('merge the GitHub PR', installed), true);
    assert.equal(namesIntegration('create a jira ticket', installed), true);
    assert.equal(namesIntegration('open New Relic alerts', installed), true);
    assert.equal(namesIntegration('mergeGithubPullRequest', installed), true);
    assert.equal(namesIntegration('ｍｅｒｇｅ ｔｈｅ ｇｉｔｈｕｂ ｐｒ', installed), true);
    assert.equal(namesIntegration('merge the pull request', installed), false);
    assert.equal(namesIntegration('merge request', installed), false);
    assert.equal(namesIntegration('   ', installed), false);
  });
});

describe('the weak-match hint speaks of the tool shown first', () => {
  it('when the connection order puts an equivalent of the best match first, the hint is about that tool', async () => {
    // even the best match (GitLab's merge tool, for nobody) covers too little of this request
    const query = 'go ahead and merge it';
    const plain = await answer(users.nobody, { query, limit: 1 });
    assert.equal(plain.tools[0]?.name, 'gitlab_merge_merge_request');
    assert.match(
      plain.hint ?? '',
      /^No tool may fit: the first result, gitlab_merge_merge_request, leaves out the words "go", "ahead"/,
    );
    // a GitHub user is shown GitHub's merge tool in its place, and the hint names that one
    const mine = await answer(users.github, { query, limit: 1 });
    assert.equal(mine.tools[0]?.name, 'github_merge_pull_request');
    assert.match(
      mine.hint ?? '',
      /^No tool may fit: the first result, github_merge_pull_request, leaves out the words "go", "ahead"/,
    );
  });

  it('whether a hint is due is decided on the best match, not on the equivalent shown in its place', async () => {
    // GitLab's merge tool answers "merge now" whole; GitHub's, shown first to a GitHub user, covers
    // less of the words, but it does the same job: no warning that no tool may fit
    const mine = await answer(users.github, { query: 'merge now', limit: 1 });
    assert.equal(mine.tools[0]?.name, 'github_merge_pull_request');
    assert.equal(mine.hint, undefined, JSON.stringify(mine));
  });

  it('never names a stop word as left out', async () => {
    const a = await answer(users.nobody, { query: 'who are you', limit: 1 });
    assert.match(a.hint ?? '', /No tool may fit: the first result, \w+, matches your words only loosely\./);
  });
});
