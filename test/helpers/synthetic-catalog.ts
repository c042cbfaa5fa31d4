/**
 * @module test/helpers/synthetic-catalog
 * A small hand-written catalog for unit tests of search and the discovery meta-tools: a few
 * tools of three integrations, with deliberately overlapping words (issue, message, comment).
 */
import type { CatalogTool } from '../../host/discovery/catalog-tool.js';

const obj = (properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> => ({
  type: 'object',
  properties,
  required,
});
const str = (description: string): Record<string, unknown> => ({ type: 'string', description });

export const SYNTHETIC_CATALOG: readonly CatalogTool[] = [
  {
    name: 'github_create_pull_request',
    integration: 'github',
    integrationDisplayName: 'GitHub',
    description: 'Opens a pull request from a head branch into a base branch.',
    inputSchema: obj(
      {
        owner: str('Repository owner'),
        repo: str('Repository name'),
        head: str('Branch with the changes'),
        title: str('Title'),
      },
      ['owner', 'repo', 'head', 'title'],
    ),
    annotations: { destructiveHint: false },
  },
  {
    name: 'github_list_pull_requests',
    integration: 'github',
    integrationDisplayName: 'GitHub',
    description: 'Lists pull requests in a repository, filtered by state.',
    inputSchema: obj({
      owner: str('Repository owner'),
      repo: str('Repository name'),
      state: { type: 'string', enum: ['open', 'closed', 'all'], default: 'open' },
    }),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'github_merge_pull_request',
    integration: 'github',
    integrationDisplayName: 'GitHub',
    description: 'Merges a pull request with a merge commit, squash or rebase.',
    inputSchema: obj({ owner: str('Repository owner'), repo: str('Repository name'), number: { type: 'integer' } }),
  },
  {
    name: 'github_create_issue',
    integration: 'github',
    integrationDisplayName: 'GitHub',
    description: 'Opens a new issue in a repository with a title and body.',
    inputSchema: obj({ owner: str('Repository owner'), repo: str('Repository name'), title: str('Issue title') }),
  },
  {
    name: 'github_list_issues',
    integration: 'github',
    integrationDisplayName: 'GitHub',
    description: 'Lists issues in a repository, filtered by state and labels.',
    inputSchema: obj({
      owner: str('Repository owner'),
      repo: str('Repository name'),
      labels: str('Comma-separated label names'),
    }),
  },
  {
    name: 'github_add_issue_comment',
    integration: 'github',
    integrationDisplayName: 'GitHub',
    description: 'Posts a comment on an issue or pull request.',
    inputSchema: obj({ owner: str('Repository owner'), repo: str('Repository name'), body: str('Comment text') }),
  },
  {
    name: 'github_list_repositories',
    integration: 'github',
    integrationDisplayName: 'GitHub',
    description: 'Lists repositories the user can access.',
    inputSchema: obj({ visibility: { type: 'string', enum: ['all', 'public', 'private'] } }),
  },
  {
    name: 'slack_post_message',
    integration: 'slack',
    integrationDisplayName: 'Slack',
    description: 'Sends a message to a Slack channel or direct message conversation.',
    inputSchema: obj({ channel: str('Channel ID or name'), text: str('Message text') }),
  },
  {
    name: 'slack_list_channels',
    integration: 'slack',
    integrationDisplayName: 'Slack',
    description: 'Lists the channels of the workspace.',
    inputSchema: obj({ types: str('public_channel, private_channel') }),
  },
  {
    name: 'slack_open_dm',
    integration: 'slack',
    integrationDisplayName: 'Slack',
    description: 'Opens a direct message with one person and returns its channel ID.',
    inputSchema: obj({ users: str('User IDs') }),
  },
  {
    name: 'slack_search_messages',
    integration: 'slack',
    integrationDisplayName: 'Slack',
    description: 'Searches messages across the workspace.',
    inputSchema: obj({ query: str('Search query') }),
  },
  {
    name: 'slack_list_users',
    integration: 'slack',
    integrationDisplayName: 'Slack',
    description: 'Lists people in the workspace with their names and emails.',
    inputSchema: obj({}),
  },
  {
    name: 'jira_create_issue',
    integration: 'atlassian-jira',
    integrationDisplayName: 'Jira',
    description: 'Creates a Jira issue (task, bug, story) in a project.',
    inputSchema: obj({ project: str('Project key'), summary: str('Summary'), issueType: str('Issue type') }),
  },
  {
    name: 'jira_transition_issue',
    integration: 'atlassian-jira',
    integrationDisplayName: 'Jira',
    description: 'Moves a Jira issue through its workflow: change its status.',
    inputSchema: obj({ issueKey: str('Issue key'), transition: str('Transition name') }),
  },
  {
    name: 'jira_add_comment',
    integration: 'atlassian-jira',
    integrationDisplayName: 'Jira',
    description: 'Adds a plain-text comment to a Jira issue.',
    inputSchema: obj({ issueKey: str('Issue key'), body: str('Comment text') }),
  },
  {
    name: 'jira_search_issues',
    integration: 'atlassian-jira',
    integrationDisplayName: 'Jira',
    description: 'Searches Jira issues with JQL.',
    inputSchema: obj({ jql: str('JQL query') }),
  },
];
