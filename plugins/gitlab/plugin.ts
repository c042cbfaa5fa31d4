/**
 * @module plugins/gitlab/plugin
 * GitLab tools over the REST API v4 of gitlab.com, or of the connection's own GitLab instance
 * (self-managed or Dedicated, named at connect time; connected by OAuth with a client registered on
 * it, or with a personal access token): projects, issues, merge requests (review notes, commits, approval),
 * CI/CD pipelines and job logs, files, commits, releases, branches, clone URLs and code search. The tool table; the handlers live in src/ by area.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import { addIssueNote, createIssue, getIssue, listIssues, updateIssue } from './src/issues.js';
import {
  addMergeRequestNote,
  createMergeRequest,
  getMergeRequest,
  getMergeRequestDiffs,
  listMergeRequests,
  mergeMergeRequest,
  updateMergeRequest,
} from './src/merge-requests.js';
import { listCommits, listMergeRequestCommits, listReleases } from './src/history.js';
import {
  cancelPipeline,
  createPipeline,
  getJobLog,
  getPipeline,
  listPipelines,
  retryPipeline,
} from './src/pipelines.js';
import { getCloneUrl, getCurrentUser, getProject, listProjects } from './src/projects.js';
import {
  createBranch,
  createOrUpdateFile,
  getFile,
  listBranches,
  listRepositoryTree,
  searchCode,
} from './src/repository.js';
import { approveMergeRequest, listMergeRequestNotes } from './src/review.js';

export default definePlugin({
  name: 'gitlab',
  version: '1.0.0',
  displayName: 'GitLab',
  description:
    'Projects, issues, merge requests (create, review diffs, comment, merge), CI/CD pipelines and job logs, files, branches and code search through the GitLab REST API v4, on gitlab.com or on your own GitLab (self-managed or Dedicated: its URL is given when connecting). Connects with OAuth or a personal access token.',
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://gitlab.com/oauth/authorize',
    tokenUrl: 'https://gitlab.com/oauth/token',
    revocationUrl: 'https://gitlab.com/oauth/revoke',
    scopes: ['api', 'read_user'],
    scopeSeparator: ' ',
    pkce: true,
    clientAuth: 'body',
    inject: { hosts: ['gitlab.com'], header: 'authorization', format: 'Bearer {token}' },
    instance: {
      default: 'https://gitlab.com',
      label: 'GitLab instance URL',
      description:
        "For GitLab self-managed or Dedicated, your GitLab's address, e.g. https://gitlab.example.com (no path). Leave it empty for gitlab.com.",
      oauth: { authorizationPath: '/oauth/authorize', tokenPath: '/oauth/token', revocationPath: '/oauth/revoke' },
    },
    personalToken: {
      label: 'Personal access token',
      description:
        'Instead of signing in: a GitLab personal access token with the api scope (User settings > Access tokens), made on the GitLab named above. It is sent to that GitLab only.',
    },
  },
  egress: ['gitlab.com'],
  tools: {
    gitlab_get_current_user: getCurrentUser,
    gitlab_list_projects: listProjects,
    gitlab_get_project: getProject,
    gitlab_list_issues: listIssues,
    gitlab_get_issue: getIssue,
    gitlab_create_issue: createIssue,
    gitlab_update_issue: updateIssue,
    gitlab_add_issue_note: addIssueNote,
    gitlab_list_merge_requests: listMergeRequests,
    gitlab_get_merge_request: getMergeRequest,
    gitlab_create_merge_request: createMergeRequest,
    gitlab_update_merge_request: updateMergeRequest,
    gitlab_merge_merge_request: mergeMergeRequest,
    gitlab_get_merge_request_diffs: getMergeRequestDiffs,
    gitlab_add_merge_request_note: addMergeRequestNote,
    gitlab_list_pipelines: listPipelines,
    gitlab_get_pipeline: getPipeline,
    gitlab_create_pipeline: createPipeline,
    gitlab_get_job_log: getJobLog,
    gitlab_get_file: getFile,
    gitlab_list_repository_tree: listRepositoryTree,
    gitlab_list_branches: listBranches,
    gitlab_create_branch: createBranch,
    gitlab_search_code: searchCode,
    gitlab_list_commits: listCommits,
    gitlab_list_releases: listReleases,
    gitlab_create_or_update_file: createOrUpdateFile,
    gitlab_list_merge_request_commits: listMergeRequestCommits,
    gitlab_list_merge_request_notes: listMergeRequestNotes,
    gitlab_approve_merge_request: approveMergeRequest,
    gitlab_retry_pipeline: retryPipeline,
    gitlab_cancel_pipeline: cancelPipeline,
    gitlab_get_clone_url: getCloneUrl,
  },
});
