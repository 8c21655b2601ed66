// The host reference: nginx (Debian's nginx-light or nginx), one worker pinned to the server's core,
// answering every scenario with the very body the service sent, as a static file.
//
// Why a third reference server, and why not Node: the latency targets are absolute figures, and on
// the shared 2-core hosts this benchmark runs on, the tail moves from minute to minute with
// whatever else the host does. A C server that does nothing but send a file, measured at the same
// arrival rates, shows what the machine itself (kernel, loopback, hypervisor) and the load
// generator add to the latency, so a run can tell a slow tail of the service from a slow tail of
// the host or of the generator. The bytes ceiling cannot answer that on its own: it is Node too.
//
// Optional: without nginx on the PATH the run says so and reports no host figures.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Sample } from './ceiling-server.js';

/** nginx's path, or null when it is not installed (Debian puts it in /usr/sbin, not on every PATH). */
export function findNginx(): string | null {
  for (const candidate of ['nginx', '/usr/sbin/nginx']) {
    if (!spawnSync(candidate, ['-v']).error) return candidate;
  }
  return null;
}

/**
 * The configuration: one file per scenario, chosen by path and method as bench/ceiling-server.ts's
 * `scenarioOf` does. nginx answers a POST to a static file with 405; `error_page 405 =200 $uri`
 * turns that into the file itself, which is the long-standing way to serve static bodies to POSTs.
 */
export function nginxConfig(dir: string, port: number): string {
  return `# Written by bench/host-reference.ts for one benchmark run.
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  # wrk keeps its connections for the whole run; nginx would close each after 1,000 requests.
  keepalive_requests 1000000000;
  keepalive_timeout 60s;
  types { }
  default_type "application/xml; charset=utf-8";
  server {
    listen 127.0.0.1:${port};
    root ${dir}/www;
    location = / { return 200 "ready\\n"; }
    location /api/return_services/ {
      if ($request_method = POST) { rewrite ^ /return_services_private.xml last; }
      rewrite ^ /return_services_public.xml last;
    }
    location ~ ^/api/service_details/[^/]+/?$ { rewrite ^ /service_details_all.xml last; }
    location /api/service_details/ { rewrite ^ /service_details_one.xml last; }
    location /api/update_service/ { rewrite ^ /update_service.xml last; }
    location /api/service_collection_widget/ { rewrite ^ /widget.xml last; }
    location ~ \\.xml$ { error_page 405 =200 $uri; }
  }
}
`;
}

/** Starts nginx on `port`, pinned with `pin`, serving the samples' bodies; the caller waits for `GET /` to answer. */
export function startHostReference(
  nginx: string,
  dir: string,
  port: number,
  samples: Record<string, Sample>,
  pin: (cmd: string, argv: string[]) => [string, string[]],
): ChildProcess {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'www'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  for (const [scenario, s] of Object.entries(samples)) fs.writeFileSync(path.join(dir, 'www', `${scenario}.xml`), s.body);
  const conf = path.join(dir, 'nginx.conf');
  fs.writeFileSync(conf, nginxConfig(dir, port));
  const [cmd, argv] = pin(nginx, ['-p', dir, '-c', conf]);
  return spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'inherit'] });
}
