/**
 * @module host/telemetry/bridge-metrics
 * The bridge's response buffer as Prometheus metrics, read from `bridge.bufferStats()` when
 * /metrics is scraped: the bytes of ctx.http response bodies the host holds now and the bound on
 * them (`http.maxBufferedBytes`), and the requests refused for want of room since start.
 */
import { Gauge, type Registry } from 'prom-client';
import type { BridgeBufferStats } from '../bridge/index.js';
import { registerReadCounter } from './metrics.js';

export function registerBridgeMetrics(registry: Registry, stats: () => BridgeBufferStats): void {
  new Gauge({
    name: 'workbench_bridge_buffered_bytes',
    help: 'Bytes of ctx.http response bodies the host holds now, all calls together, from their first byte until they are written to the sandbox process.',
    registers: [registry],
    collect() {
      this.set(stats().heldBytes);
    },
  });
  new Gauge({
    name: 'workbench_bridge_buffered_limit_bytes',
    help: 'http.maxBufferedBytes: the most workbench_bridge_buffered_bytes may reach.',
    registers: [registry],
    collect() {
      this.set(stats().limitBytes);
    },
  });
  registerReadCounter(
    registry,
    'workbench_bridge_busy_total',
    "ctx.http requests refused with GW_ERR_BRIDGE_BUSY (no room for their body in http.maxBufferedBytes, or the plugin's share of it) since start.",
    () => stats().refusals,
  );
}
