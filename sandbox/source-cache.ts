/**
 * @module sandbox/source-cache
 * Plugin sources by content hash, kept by the sandbox process and by each worker so that a call
 * does not carry its plugin's source (tens of KB) across every boundary: the sender strips the
 * source from the task, and a receiver that does not have it asks for it once (first call of that
 * plugin version there, or after eviction). A bounded map, oldest entry evicted first. The hash
 * is the host's (sha256 of the source), so two plugin versions never share an entry.
 */

export const MAX_CACHED_SOURCES = 64;

export class SourceCache {
  readonly #map = new Map<string, string>();

  get(hash: string): string | undefined {
    return this.#map.get(hash);
  }

  set(hash: string, source: string): void {
    this.#map.delete(hash);
    this.#map.set(hash, source);
    while (this.#map.size > MAX_CACHED_SOURCES) this.#map.delete(this.#map.keys().next().value as string);
  }
}
