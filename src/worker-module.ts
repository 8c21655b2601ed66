// Starts a worker thread from a module beside the caller. Compiled, the worker is a .js file; under
// tsx (tests, npm run dev) it is TypeScript, and on Node 20 a worker does not inherit tsx's loader:
// it registers it first.
import { Worker } from 'node:worker_threads';

/** `callerUrl` is the caller's import.meta.url; `name` the worker module's file name without extension. */
export function spawnModuleWorker(callerUrl: string, name: string, workerData: unknown): Worker {
  if (!callerUrl.endsWith('.ts') && !callerUrl.endsWith('.tsx')) return new Worker(new URL(`./${name}.js`, callerUrl), { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const file = new URL(`./${name}.ts`, callerUrl).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(file)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}
