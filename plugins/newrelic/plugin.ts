/**
 * @module plugins/newrelic/plugin
 * New Relic tools over NerdGraph (GraphQL, POST {query, variables}) in the connection's region,
 * with a User API key. User input always travels as GraphQL variables; the only literals built here
 * are entity-search query strings (the schema takes the search as one string), whose values are
 * escaped by `literal()` (src/api.ts).
 */
import { definePlugin } from 'workbench/plugin-sdk';
import {
  acknowledgeIssue,
  createAlertPolicy,
  listAlertConditions,
  listAlertPolicies,
  listIssues,
  resolveIssue,
} from './src/alerts.js';
import { createDeploymentMarker, listErrorGroups, updateErrorGroupState } from './src/changes.js';
import { createStaticNrqlCondition } from './src/conditions.js';
import { addTagsToEntity, getApmSummary, getEntityTool, getGoldenMetrics, searchEntities } from './src/entities.js';
import {
  createNotificationChannel,
  createNotificationDestination,
  listNotificationChannels,
  listNotificationDestinations,
} from './src/notifications.js';
import { listAccounts, runNrql } from './src/nrql.js';
import {
  addWidgetsToDashboardPage,
  getDashboard,
  listDashboards,
  listSyntheticMonitors,
  listWorkloads,
} from './src/views.js';
import { createWorkflow, listWorkflows } from './src/workflows.js';

export default definePlugin({
  name: 'newrelic',
  version: '1.0.0',
  displayName: 'New Relic',
  description:
    'Query New Relic through NerdGraph: run NRQL, find entities (services, hosts, monitors, dashboards, workloads) and their health, read and manage alert policies, conditions and issues, notification destinations, channels and workflows, tags, dashboards and their widgets, errors inbox groups, and record deployments. Uses a User API key, in the US or EU region.',
  auth: {
    type: 'apikey',
    fields: [
      {
        name: 'apiKey',
        label: 'User API key',
        description: 'A New Relic User API key (starts with NRAK-), from the API keys page of your New Relic account.',
        secret: true,
        pattern: '^\\S{8,200}$',
      },
      {
        name: 'region',
        label: 'Region',
        description: 'The data center region of your account.',
        enum: ['us', 'eu'],
        default: 'us',
        secret: false,
      },
      {
        name: 'accountId',
        label: 'Default account ID',
        description: 'Used when a tool is called without accountId.',
        secret: false,
        required: false,
        pattern: '^[0-9]{1,12}$',
      },
    ],
    inject: { header: 'api-key', format: '{apiKey}' },
    instructions:
      'Create a User API key in New Relic (your user menu > API keys > Create a key, type User) and paste it here. Pick EU if your account lives in the EU data center. The default account ID is optional: tools accept an accountId argument, and newrelic_list_accounts lists the accounts the key can reach.',
  },
  egress: ['api.newrelic.com', 'api.eu.newrelic.com'],
  tools: {
    newrelic_run_nrql: runNrql,
    newrelic_list_accounts: listAccounts,
    newrelic_search_entities: searchEntities,
    newrelic_get_entity: getEntityTool,
    newrelic_get_apm_summary: getApmSummary,
    newrelic_get_golden_metrics: getGoldenMetrics,
    newrelic_list_alert_policies: listAlertPolicies,
    newrelic_create_alert_policy: createAlertPolicy,
    newrelic_list_alert_conditions: listAlertConditions,
    newrelic_list_issues: listIssues,
    newrelic_acknowledge_issue: acknowledgeIssue,
    newrelic_resolve_issue: resolveIssue,
    newrelic_list_dashboards: listDashboards,
    newrelic_get_dashboard: getDashboard,
    newrelic_list_synthetic_monitors: listSyntheticMonitors,
    newrelic_create_deployment_marker: createDeploymentMarker,
    newrelic_list_workloads: listWorkloads,
    newrelic_list_error_groups: listErrorGroups,
    newrelic_update_error_group_state: updateErrorGroupState,
    newrelic_create_static_nrql_condition: createStaticNrqlCondition,
    newrelic_create_notification_destination: createNotificationDestination,
    newrelic_list_notification_destinations: listNotificationDestinations,
    newrelic_create_notification_channel: createNotificationChannel,
    newrelic_list_notification_channels: listNotificationChannels,
    newrelic_create_workflow: createWorkflow,
    newrelic_list_workflows: listWorkflows,
    newrelic_add_tags_to_entity: addTagsToEntity,
    newrelic_add_widgets_to_dashboard_page: addWidgetsToDashboardPage,
  },
});
