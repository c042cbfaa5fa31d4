/**
 * @module plugins/asana/plugin
 * Asana REST API 1.0 tools acting as the connected Asana user (OAuth 2.0): the tool table. The
 * client and error mapping are in src/api.ts, the shared arguments in src/fields.ts, the tools in
 * src/workspaces.ts and src/tasks.ts, the result shapes and `opt_fields` in src/shape.ts.
 */
import { definePlugin } from 'workbench/plugin-sdk';
import * as tasks from './src/tasks.js';
import * as workspaces from './src/workspaces.js';

export default definePlugin({
  name: 'asana',
  version: '1.0.0',
  displayName: 'Asana',
  description:
    'Find, read, create, update and comment on Asana tasks, list workspaces, teams, projects and sections, see my tasks, search tasks and look up teammates. Acts as the connected Asana user through the Asana REST API.',
  auth: {
    type: 'oauth2',
    authorizationUrl: 'https://app.asana.com/-/oauth_authorize',
    tokenUrl: 'https://app.asana.com/-/oauth_token',
    revocationUrl: 'https://app.asana.com/-/oauth_revoke',
    scopes: ['default'],
    pkce: true,
    clientAuth: 'body',
    inject: { hosts: ['app.asana.com'], header: 'authorization', format: 'Bearer {token}' },
  },
  egress: ['app.asana.com'],
  tools: {
    asana_whoami: workspaces.whoami,
    asana_list_workspaces: workspaces.listWorkspaces,
    asana_list_teams: workspaces.listTeams,
    asana_list_projects: workspaces.listProjects,
    asana_get_project: workspaces.getProject,
    asana_list_sections: workspaces.listSections,
    asana_list_tasks: tasks.listTasks,
    asana_get_task: tasks.getTask,
    asana_create_task: tasks.createTask,
    asana_update_task: tasks.updateTask,
    asana_add_comment: tasks.addComment,
    asana_list_comments: tasks.listComments,
    asana_search_tasks: tasks.searchTasks,
    asana_find_users: workspaces.findUsers,
    asana_add_task_to_project: tasks.addTaskToProject,
  },
});
