/**
 * @module host/telemetry/plugin-metrics
 * Plugin reloads as Prometheus metrics: reloads since start by outcome (`ok`: every plugin folder
 * loaded; `refused`: at least one was refused, and the rest of the reload applied), and the plugins
 * and tools serving now, read from the registry when /metrics is scraped.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ReloadOutcome } from '../registry/plugin-loader.js';

export function registerPluginMetrics(
  registry: Registry,
  serving: () => { plugins: number; tools: number },
): (outcome: ReloadOutcome) => void {
  const reloads = new Counter({
    name: 'workbench_plugin_reloads_total',
    help: 'Plugin reloads (SIGHUP or workbench plugins reload) since start, by outcome: ok (every plugin folder loaded) or refused (at least one was refused; the others were applied).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  // both series exist from the start, so that rate() sees the first refusal
  for (const outcome of ['ok', 'refused'] as const) reloads.inc({ outcome }, 0);
  new Gauge({
    name: 'workbench_plugins_serving',
    help: 'Plugins serving now (after the latest start-up or reload).',
    registers: [registry],
    collect() {
      this.set(serving().plugins);
    },
  });
  new Gauge({
    name: 'workbench_plugin_tools_serving',
    help: 'Tools of the plugins serving now.',
    registers: [registry],
    collect() {
      this.set(serving().tools);
    },
  });
  return (outcome) => reloads.inc({ outcome });
}
