// A widget boot script as the answer cache keeps it (services/answer-cache.ts): bytes, on the
// server only (src/widget/boot-script.ts is also compiled for the browser, where Buffer does not exist).
import { BUFFER_OVERHEAD } from '../http/cache-headers.js';
import { bootScriptAround, type WidgetBootConfig } from './boot-script.js';

/**
 * A boot script as the answer cache keeps it: its bytes, rendered once for the request that
 * rendered them (`renderedFor` tells which requests get the same script), so that a request like it
 * is answered with these bytes, not a script made and encoded again. Any other request for the
 * same person and view (another partner's key for a public view, another lang or spelling) gets a
 * script of its own around the same services, read back from the bytes. The bytes have memory of
 * their own, off the JavaScript heap.
 */
export class KeptBootScript {
  /** What it holds in memory, for the answer cache's budget. */
  readonly size: number;

  private constructor(
    readonly bytes: Buffer,
    readonly renderedFor: string,
    private readonly servicesStart: number,
    private readonly servicesEnd: number,
  ) {
    this.size = bytes.length + BUFFER_OVERHEAD;
  }

  static render(config: Omit<WidgetBootConfig, 'services'>, renderedFor: string, services: string): KeptBootScript {
    const [before, after] = bootScriptAround(config);
    const start = Buffer.byteLength(before);
    const end = start + Buffer.byteLength(services);
    const bytes = Buffer.allocUnsafeSlow(end + Buffer.byteLength(after));
    bytes.write(before, 0);
    bytes.write(services, start);
    bytes.write(after, end);
    return new KeptBootScript(bytes, renderedFor, start, end);
  }

  /** The services it carries, as servicesJson() made them. */
  get services(): string {
    return this.bytes.toString('utf8', this.servicesStart, this.servicesEnd);
  }
}
