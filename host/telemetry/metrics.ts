/**
 * @module host/telemetry/metrics
 * Prometheus metrics on a registry of our own (so several gateways can live in one test process).
 * The two execution metrics of the seed, labelled by integration, tool and success, measure the
 * handler run; refusals before the handler are counted separately by reason. HTTP metrics label
 * the route by its pattern, and every unmatched URL shares the label "unmatched".
 */
import client from 'prom-client';

export interface Metrics {
  registry: client.Registry;
  toolExecutions: client.Counter<'integration' | 'tool' | 'success'>;
  toolDuration: client.Histogram<'integration' | 'tool' | 'success'>;
  refused: client.Counter<'reason' | 'integration'>;
  httpRequests: client.Counter<'method' | 'route' | 'status'>;
  httpDuration: client.Histogram<'method' | 'route' | 'status'>;
  sandboxCalls: client.Counter<'outcome'>;
}

export function createMetrics(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'workbench_' });
  return {
    registry,
    toolExecutions: new client.Counter({
      name: 'workbench_tool_executions_total',
      help: 'Plugin handler runs, by integration, tool and success.',
      labelNames: ['integration', 'tool', 'success'],
      registers: [registry],
    }),
    toolDuration: new client.Histogram({
      name: 'workbench_tool_execution_duration_seconds',
      help: 'Duration of plugin handler runs (credential load, sandbox run and upstream calls).',
      labelNames: ['integration', 'tool', 'success'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    refused: new client.Counter({
      name: 'workbench_tool_executions_refused_total',
      help: 'Executions refused before the handler ran, by reason (not_found, key_revoked, cancelled, args_too_large, not_connected, invalid_arguments, forbidden, rate_limited, schema_error).',
      labelNames: ['reason', 'integration'],
      registers: [registry],
    }),
    httpRequests: new client.Counter({
      name: 'workbench_http_requests_total',
      help: 'HTTP requests by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new client.Histogram({
      name: 'workbench_http_request_duration_seconds',
      help: 'HTTP request duration by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    sandboxCalls: new client.Counter({
      name: 'workbench_sandbox_calls_total',
      help: 'Sandbox calls by outcome code (ok or a GW_ERR_SANDBOX_* code).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}

/**
 * A counter whose count is kept elsewhere (a failure tally, the sandbox supervisor's stats) and read
 * when /metrics is scraped. It is exported as a counter, as its `_total` name says, so that rate()
 * and increase() apply and a metrics linter (promtool) accepts it; what was read since the last
 * scrape is added to it, so it never goes down.
 */
export function registerReadCounter(registry: client.Registry, name: string, help: string, read: () => number): void {
  let counted = 0;
  new client.Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      if (now > counted) {
        this.inc(now - counted);
        counted = now;
      }
    },
  });
}
