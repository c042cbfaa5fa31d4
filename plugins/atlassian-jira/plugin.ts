/**
 * @module plugins/atlassian-jira/plugin
 * Jira Cloud REST v3 tools acting as the connected Atlassian user (OAuth 2.0 3LO): the tool table.
 * The client and site resolution are in src/api.ts, the issue tools in src/issues.ts, the look-ups
 * in src/projects.ts, boards in src/boards.ts, ADF ⇄ text in src/adf.ts and the result shapes in
 * src/shape.ts.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import * as boards from './src/boards.js';
import * as issues from './src/issues.js';
import * as lookups from './src/projects.js';

export default definePlugin({
  name: 'atlassian-jira',
  version: '1.0.0',
  displayName: 'Jira (Atlassian Cloud)',
  description:
    'Find, read, create, update, comment on, assign, watch, link and move Jira Cloud issues through their workflow, and look up projects, project types, boards, issue types and users. Acts as the connected Atlassian user on one Jira Cloud site (the site named in the connection, or the first one the user granted).',
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://auth.atlassian.com/authorize',
    authorizationParams: { audience: 'api.atlassian.com', prompt: 'consent' },
    tokenUrl: 'https://auth.atlassian.com/oauth/token',
    // the last two are Jira Software's, for boards (jira_list_boards)
    scopes: [
      'read:jira-work',
      'write:jira-work',
      'read:jira-user',
      'offline_access',
      'read:board-scope:jira-software',
      'read:project:jira',
    ],
    inject: { header: 'authorization', format: 'Bearer {token}' },
  },
  egress: ['api.atlassian.com'],
  tools: {
    jira_search_issues: issues.searchIssues,
    jira_get_issue: issues.getIssue,
    jira_create_issue: issues.createIssue,
    jira_update_issue: issues.updateIssue,
    jira_add_comment: issues.addComment,
    jira_list_comments: issues.listComments,
    jira_list_transitions: issues.listTransitions,
    jira_transition_issue: issues.transitionIssue,
    jira_assign_issue: issues.assignIssue,
    jira_list_projects: lookups.listProjects,
    jira_get_project: lookups.getProject,
    jira_list_issue_types: lookups.listIssueTypes,
    jira_search_users: lookups.searchUsers,
    jira_get_myself: lookups.getMyself,
    jira_add_watcher: issues.addWatcher,
    jira_link_issues: issues.linkIssues,
    jira_list_link_types: lookups.listLinkTypes,
    jira_list_boards: boards.listBoards,
    jira_list_project_types: lookups.listProjectTypes,
  },
});
