/**
 * @module plugins/gitlab/plugin
 * GitLab tools over the REST API v4 of gitlab.com (a self-managed instance is reached through the
 * policy's `upstreams` mapping): projects, issues, merge requests (review notes, commits, approval),
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
    "Projects, issues, merge requests (create, review diffs, comment, merge), CI/CD pipelines and job logs, files, branches and code search on gitlab.com through the GitLab REST API v4. A self-managed GitLab is reached by mapping https://gitlab.com to it in the policy's upstreams.",
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
