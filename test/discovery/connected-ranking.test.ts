/**
 * @module test/discovery/connected-ranking.test
 * search_tools through a started gateway with overlapping integrations (GitHub and GitLab both
 * merge; Jira, GitHub and GitLab all file issues): among comparably relevant tools, those of an
 * integration the caller has connected come first, each tool keeping its own score; a query that
 * names a product, or the `integration` filter, keeps the pure relevance order; a much more relevant
 * tool keeps its place ahead of a connected one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { namesIntegration, NOT_CONNECTED_WEIGHT } from '../../host/discovery/meta-tools.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

interface Hit {
  name: string;
  integration: string;
  score: number;
  connected: boolean;
}

let gw: TestGateway;
let gitlabUser: Client;
let githubUser: Client;
let slackUser: Client;
let nobody: Client;

async function search(c: Client, args: Record<string, unknown>): Promise<Hit[]> {
  const res = await c.callTool({ name: 'search_tools', arguments: args });
  const content = res.content as { type: string; text: string }[];
  assert.notEqual(res.isError, true, content[0]?.text);
  return (JSON.parse(content[0]?.text ?? 'null') as { tools: Hit[] }).tools;
}

before(async () => {
  gw = await startGateway({ plugins: ['github', 'gitlab', 'atlassian-jira', 'slack'] });
  const a = await gw.createUser('gitlab-user@example.com');
  await gw.connect('gitlab', { token: 'glpat-a' }, a.user);
  gitlabUser = await gw.mcpClient(a.apiKey);
  const b = await gw.createUser('github-user@example.com');
  await gw.connect('github', { token: 'gho_b' }, b.user);
  githubUser = await gw.mcpClient(b.apiKey);
  const c = await gw.createUser('slack-user@example.com');
  await gw.connect('slack', { token: 'xoxp-c' }, c.user);
  slackUser = await gw.mcpClient(c.apiKey);
  nobody = await gw.mcpClient((await gw.createUser('nobody@example.com')).apiKey);
});
after(async () => gw?.close());

describe('search_tools prefers the integrations the caller has connected', () => {
  it('"merge the pull request": GitLab first for the GitLab user, GitHub first for the GitHub user, the same scores for both', async () => {
    const forGitlab = await search(gitlabUser, { query: 'merge the pull request' });
    const forGithub = await search(githubUser, { query: 'merge the pull request' });
    assert.equal(forGitlab[0]?.name, 'gitlab_merge_merge_request');
    assert.equal(forGitlab[0]?.connected, true);
    assert.equal(forGithub[0]?.name, 'github_merge_pull_request');
    assert.equal(forGithub[0]?.connected, true);
    const score = (hits: Hit[], name: string): number | undefined => hits.find((h) => h.name === name)?.score;
    for (const name of ['gitlab_merge_merge_request', 'github_merge_pull_request']) {
      assert.equal(score(forGitlab, name), score(forGithub, name), `${name} keeps its own score`);
    }
    // with a limit the order is decided before the cut
    const one = await search(gitlabUser, { query: 'merge the pull request', limit: 1 });
    assert.deepEqual(one.map((h) => h.name), ['gitlab_merge_merge_request']);
    const oneGithub = await search(githubUser, { query: 'merge the pull request', limit: 1 });
    assert.deepEqual(oneGithub.map((h) => h.name), ['github_merge_pull_request']);
  });

  it('a user with no connection gets the pure relevance order (scores never increase down the list)', async () => {
    const hits = await search(nobody, { query: 'merge the pull request', limit: 20 });
    assert.ok(hits.length > 5);
    for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1]!.score >= hits[i]!.score, `${hits[i - 1]!.name} before ${hits[i]!.name}`);
    // and for a connected user, the connected tools come first only while they are comparably relevant
    const forGitlab = await search(gitlabUser, { query: 'merge the pull request', limit: 20 });
    for (let i = 1; i < forGitlab.length; i++) {
      const w = (h: Hit): number => h.score * (h.connected ? 1 : NOT_CONNECTED_WEIGHT);
      assert.ok(w(forGitlab[i - 1]!) >= w(forGitlab[i]!) - 1e-9, `${forGitlab[i - 1]!.name} before ${forGitlab[i]!.name}`);
    }
    // the 20 are cut from the reordered top 50: every GitLab tool the relevance order shows is still there
    const shown = new Set(forGitlab.map((h) => h.name));
    assert.deepEqual(hits.filter((h) => h.integration === 'gitlab' && !shown.has(h.name)), []);
  });

  it('a query that names the product keeps the relevance order, whatever is connected', async () => {
    const hits = await search(gitlabUser, { query: 'merge the github pull request' });
    assert.equal(hits[0]?.name, 'github_merge_pull_request');
    assert.equal(hits[0]?.connected, false);
    const filtered = await search(gitlabUser, { query: 'merge the pull request', integration: 'github' });
    assert.equal(filtered[0]?.name, 'github_merge_pull_request');
  });

  it('a far more relevant tool stays ahead of a connected one', async () => {
    // github_get_file_contents matches "get file contents" word for word; gitlab_get_file only in part
    const hits = await search(gitlabUser, { query: 'get file contents' });
    assert.equal(hits[0]?.name, 'github_get_file_contents');
    assert.equal(hits[0]?.connected, false);
    // Slack has nothing for tickets: the Slack user sees the relevance order
    const tickets = await search(slackUser, { query: 'file a bug in jira' });
    assert.equal(tickets[0]?.name, 'jira_create_issue');
  });
});

describe('namesIntegration', () => {
  const installed = [
    { name: 'github', displayName: 'GitHub' },
    { name: 'gitlab', displayName: 'GitLab' },
    { name: 'newrelic', displayName: 'New Relic' },
    { name: 'atlassian-jira', displayName: 'Jira (Atlassian Cloud)' },
  ];
  it('finds a product named by a word, a part of its name, or two words run together', () => {
    assert.equal(namesIntegration('merge the GitHub PR', installed), true);
    assert.equal(namesIntegration('create a jira ticket', installed), true);
    assert.equal(namesIntegration('open New Relic alerts', installed), true);
    assert.equal(namesIntegration('merge the pull request', installed), false);
    assert.equal(namesIntegration('merge request', installed), false);
    assert.equal(namesIntegration('   ', installed), false);
  });
});
