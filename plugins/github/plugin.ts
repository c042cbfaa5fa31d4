/**
 * @module plugins/github/plugin
 * GitHub tools over the REST API (version 2022-11-28), acting as the connected user: repositories,
 * files, branches and commits; issues and pull requests with reviews; GitHub Actions; releases; the
 * notifications inbox. The tool table only: handlers are in src/, one file per area.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import {
  createBranch,
  getCloneUrl,
  getCommit,
  getMe,
  getRepository,
  listBranches,
  listCommits,
  listMyRepositories,
  searchCode,
  searchRepositories,
} from './src/repos.js';
import { createOrUpdateFile, getFileContents } from './src/files.js';
import {
  addIssueComment,
  createIssue,
  getIssue,
  listIssueComments,
  listIssues,
  listLabels,
  searchIssues,
  updateIssue,
} from './src/issues.js';
import {
  createPullRequest,
  getPullRequest,
  getPullRequestDiff,
  listPullRequestFiles,
  listPullRequests,
  mergePullRequest,
  updatePullRequest,
} from './src/pulls.js';
import {
  createPullRequestReview,
  listPullRequestComments,
  listPullRequestReviews,
  replyToReviewComment,
  requestReviewers,
} from './src/reviews.js';
import {
  cancelWorkflowRun,
  getWorkflowRun,
  listCheckRuns,
  listWorkflowRuns,
  listWorkflows,
  rerunWorkflow,
  triggerWorkflow,
} from './src/actions.js';
import { createRelease, listReleases } from './src/releases.js';
import { listNotifications, markNotificationsRead } from './src/notifications.js';

export default definePlugin({
  name: 'github',
  version: '1.0.0',
  displayName: 'GitHub',
  description:
    'Repositories, files, branches, commits, issues, pull requests and reviews, GitHub Actions, releases and notifications on github.com, through the GitHub REST API.',
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    scopes: ['repo', 'read:org', 'read:user'],
    scopeSeparator: ' ',
    pkce: true,
    clientAuth: 'body',
    inject: { hosts: ['api.github.com'], header: 'authorization', format: 'Bearer {token}' },
  },
  egress: ['api.github.com'],
  tools: {
    github_get_me: getMe,
    github_search_repositories: searchRepositories,
    github_list_my_repositories: listMyRepositories,
    github_get_repository: getRepository,
    github_get_clone_url: getCloneUrl,
    github_list_branches: listBranches,
    github_create_branch: createBranch,
    github_get_file_contents: getFileContents,
    github_create_or_update_file: createOrUpdateFile,
    github_list_commits: listCommits,
    github_get_commit: getCommit,
    github_search_code: searchCode,
    github_list_issues: listIssues,
    github_get_issue: getIssue,
    github_create_issue: createIssue,
    github_update_issue: updateIssue,
    github_add_issue_comment: addIssueComment,
    github_list_issue_comments: listIssueComments,
    github_search_issues: searchIssues,
    github_list_labels: listLabels,
    github_list_pull_requests: listPullRequests,
    github_get_pull_request: getPullRequest,
    github_create_pull_request: createPullRequest,
    github_update_pull_request: updatePullRequest,
    github_merge_pull_request: mergePullRequest,
    github_list_pull_request_files: listPullRequestFiles,
    github_get_pull_request_diff: getPullRequestDiff,
    github_list_pull_request_reviews: listPullRequestReviews,
    github_create_pull_request_review: createPullRequestReview,
    github_request_reviewers: requestReviewers,
    github_list_pull_request_comments: listPullRequestComments,
    github_reply_to_review_comment: replyToReviewComment,
    github_list_check_runs: listCheckRuns,
    github_list_workflows: listWorkflows,
    github_list_workflow_runs: listWorkflowRuns,
    github_get_workflow_run: getWorkflowRun,
    github_trigger_workflow: triggerWorkflow,
    github_rerun_workflow: rerunWorkflow,
    github_cancel_workflow_run: cancelWorkflowRun,
    github_list_releases: listReleases,
    github_create_release: createRelease,
    github_list_notifications: listNotifications,
    github_mark_notifications_read: markNotificationsRead,
  },
});
