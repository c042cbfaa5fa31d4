/**
 * @module plugins/linear/plugin
 * Linear tools over its GraphQL API (POST https://api.linear.app/graphql, `{query, variables}`),
 * acting as the connected Linear user (OAuth 2.0). Every value from the caller travels in
 * `variables`: query texts are constants. Team keys, state names, label names, emails and issue
 * identifiers ("ENG-123") are resolved to Linear ids (src/resolve.ts). Lists page with Linear's
 * `pageInfo.endCursor`, handed back as `next`.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import { addComment, listComments } from './src/comments.js';
import { createIssue, getIssue, listIssues, updateIssue } from './src/issues.js';
import { listProjects, listTeams, listWorkflowStates, whoami } from './src/workspace.js';

export default definePlugin({
  name: 'linear',
  version: '1.0.0',
  displayName: 'Linear',
  description:
    'Find, read, create and update Linear issues, move them between workflow states, assign and label them, comment on them, and list teams, workflow states and projects. Acts as the connected Linear user through the Linear GraphQL API.',
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://linear.app/oauth/authorize',
    tokenUrl: 'https://api.linear.app/oauth/token',
    revocationUrl: 'https://api.linear.app/oauth/revoke',
    // Linear separates scopes with commas
    scopes: ['read', 'write'],
    scopeSeparator: ',',
    pkce: true,
    clientAuth: 'body',
    inject: { hosts: ['api.linear.app'], header: 'authorization', format: 'Bearer {token}' },
  },
  egress: ['api.linear.app'],
  tools: {
    linear_whoami: whoami,
    linear_list_teams: listTeams,
    linear_list_issues: listIssues,
    linear_get_issue: getIssue,
    linear_create_issue: createIssue,
    linear_update_issue: updateIssue,
    linear_add_comment: addComment,
    linear_list_comments: listComments,
    linear_list_workflow_states: listWorkflowStates,
    linear_list_projects: listProjects,
  },
});
