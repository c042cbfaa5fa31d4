/**
 * @module plugins/atlassian-bitbucket/plugin
 * Bitbucket Cloud tools over the REST API 2.0 (https://api.bitbucket.org/2.0), acting as the
 * connected user (OAuth 2.0; the gateway adds the Bearer token, this code never sees it): the tool
 * table. The client, error mapping, paging cursor and BBQL are in src/api.ts, the shared arguments
 * in src/fields.ts, the tools in src/repos.ts, src/pulls.ts, src/pull-review.ts, src/members.ts and
 * src/repo-ops.ts, the result shapes in src/shape.ts.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import * as members from './src/members.js';
import * as review from './src/pull-review.js';
import * as pulls from './src/pulls.js';
import * as ops from './src/repo-ops.js';
import * as repos from './src/repos.js';

export default definePlugin({
  name: 'atlassian-bitbucket',
  version: '1.0.0',
  displayName: 'Bitbucket Cloud',
  description:
    'Workspaces and their members, repositories, branches, commits, files, clone URLs, pull requests (open, review, approve, request changes, comment, merge, decline, diffs, commits, default reviewers) and Pipelines (list, trigger, stop) on Bitbucket Cloud (bitbucket.org), through the Bitbucket REST API 2.0, as the connected user.',
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://bitbucket.org/site/oauth2/authorize',
    tokenUrl: 'https://bitbucket.org/site/oauth2/access_token',
    scopes: ['account', 'repository', 'pullrequest', 'pullrequest:write', 'pipeline', 'pipeline:write'],
    scopeSeparator: ' ',
    pkce: false,
    clientAuth: 'basic',
    inject: { hosts: ['api.bitbucket.org'], header: 'authorization', format: 'Bearer {token}' },
  },
  egress: ['api.bitbucket.org'],
  tools: {
    bitbucket_get_current_user: repos.getCurrentUser,
    bitbucket_list_workspaces: repos.listWorkspaces,
    bitbucket_list_repositories: repos.listRepositories,
    bitbucket_get_repository: repos.getRepository,
    bitbucket_list_pull_requests: pulls.listPullRequests,
    bitbucket_get_pull_request: pulls.getPullRequest,
    bitbucket_create_pull_request: pulls.createPullRequest,
    bitbucket_update_pull_request: pulls.updatePullRequest,
    bitbucket_approve_pull_request: pulls.approvePullRequest,
    bitbucket_decline_pull_request: pulls.declinePullRequest,
    bitbucket_merge_pull_request: pulls.mergePullRequest,
    bitbucket_get_pull_request_diff: pulls.getPullRequestDiff,
    bitbucket_list_pull_request_comments: pulls.listPullRequestComments,
    bitbucket_add_pull_request_comment: pulls.addPullRequestComment,
    bitbucket_list_branches: repos.listBranches,
    bitbucket_list_commits: repos.listCommits,
    bitbucket_get_file_content: repos.getFileContent,
    bitbucket_list_pipelines: repos.listPipelines,
    bitbucket_trigger_pipeline: repos.triggerPipeline,
    bitbucket_request_changes: review.requestChanges,
    bitbucket_list_pull_request_commits: review.listPullRequestCommits,
    bitbucket_list_default_reviewers: review.listDefaultReviewers,
    bitbucket_stop_pipeline: ops.stopPipeline,
    bitbucket_search_workspace_members: members.searchWorkspaceMembers,
    bitbucket_get_clone_url: ops.getCloneUrl,
  },
});
