// The partner API part of the OpenAPI document, built from the same schemas apiRoute() validates
// with. Each operation is listed once, under one method and its main path: every operation also
// answers the other method and its alias paths alike (docs/spec.md, "The API description"), and a
// reference page that lists GET and POST of nine operations at fifteen paths hides the nine.
import type { TObject, TSchema } from '@sinclair/typebox';
import { bodySchema, paramsSchema, querySchema, type ApiOperation } from './api-route.js';
import { ref } from './api-schemas.js';

type Json = Record<string, unknown>;

const DOCS = 'the idsvc documentation (`docs/` in the repository and the npm package)';

/** Headers of every answer under /api, refusals included, as `components.headers`. */
export const COMPONENT_HEADERS: Record<string, Json> = {
  RequestId: {
    required: true,
    description: "The request id: the caller's own when it sent a valid one (1–64 of `[A-Za-z0-9._-]`), else a fresh UUID. Quote it when reporting a problem.",
    schema: { type: 'string' },
  },
  ApiVersion: { required: true, description: 'The API version of this answer: `1`.', schema: { type: 'string', const: '1' } },
  // Not required: refusals by the HTTP parser itself (headers too large, not HTTP) come before any count.
  RateLimitLimit: {
    required: false,
    description:
      'Requests allowed a minute by the tightest limit that counted this request: per api_key (with or without proof, two budgets), or per client address without the api_token.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  RateLimitRemaining: {
    required: false,
    description: 'Requests left in the current minute under that limit.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  RateLimitReset: { required: false, description: "Seconds until that limit's window starts again.", schema: { type: 'string', pattern: '^[0-9]+$' } },
  // Not required: the contract lists it on every answer, but refusals before routing are not checked for it.
  CacheControl: {
    required: false,
    description:
      "What a cache may keep. The public view of return_services and return_profile, and service_details, asked for by GET without proof: `public, max-age=60, stale-while-revalidate=60` (the operator's `PUBLIC_CACHE_MAX_AGE` and `PUBLIC_CACHE_STALE`; `public, no-cache` when the max-age is 0), with an `ETag` and `Vary: Accept, Origin`. Every other answer (a POST, any proof: the api_token or a signed widget URL, and a `legacy_open_reads` partner's private view, served on the key alone) is `private, no-store`; every error `no-store`.",
    schema: { type: 'string' },
  },
  RetryAfter: { required: true, description: 'Seconds until a retry may succeed.', schema: { type: 'string', pattern: '^[0-9]+$' } },
};

const headerRef = (name: keyof typeof COMPONENT_HEADERS) => ({ $ref: `#/components/headers/${name}` });
const ANSWER_HEADERS = {
  'X-Request-Id': headerRef('RequestId'),
  'X-Idsvc-Api-Version': headerRef('ApiVersion'),
  'RateLimit-Limit': headerRef('RateLimitLimit'),
  'RateLimit-Remaining': headerRef('RateLimitRemaining'),
  'RateLimit-Reset': headerRef('RateLimitReset'),
  'Cache-Control': headerRef('CacheControl'),
};
const RETRY_HEADERS = { ...ANSWER_HEADERS, 'Retry-After': headerRef('RetryAfter') };

/** Every error an operation can answer, with the codes behind each status (docs/spec.md, "Errors"). */
const ERRORS: Record<string, { description: string; retry?: boolean }> = {
  '400': {
    description:
      '`invalid_request`: a field the operation does not know or a value it refuses, a path segment over 256 characters or a malformed %-encoding, headers over 16 KiB, a body that is neither a form nor a JSON object. `credentials_in_query`: `api_token`, `password` or `email_address` in the URL (send them in the POST body). Refusals by the HTTP parser itself (headers too large, not HTTP, headers or body not received in time) carry a fresh X-Request-Id and no RateLimit-* headers.',
  },
  '401': {
    description:
      '`invalid_api_key`: no partner has this key. `invalid_api_token`: a wrong api_token, or none where the operation (or the private view) needs it. `invalid_credentials`: a wrong e-mail address or password (sync_user, unsync_user).',
  },
  '403': {
    description:
      '`forbidden`: the partner is suspended, the request comes from an origin the partner did not list, or the user has not linked this partner (or has not confirmed their address yet).',
  },
  '404': { description: '`not_found`: no opted-in user, service or link by that identifier (unknown and opted-out users answer alike).' },
  '413': { description: '`payload_too_large`: a body over 64 KiB, also on GET.' },
  '429': {
    description: '`rate_limited`: too many requests, or too many connections open from one client address; `Retry-After` says when to try again.',
    retry: true,
  },
  '500': { description: '`internal_error`: a fault in idsvc; the message names the request id, nothing else.' },
  '503': { description: '`unavailable`: the database cannot be reached just now; `Retry-After` says when to try again.', retry: true },
};

const XML = 'application/xml';
const JSON_TYPE = 'application/json';
const SCRIPT = 'text/javascript';
const FORM = 'application/x-www-form-urlencoded';

/** Both formats of an answer whose root is `root`: `<root>…</root>` and `{"root": …}`. */
function answerContent(root: string, value: TSchema): Json {
  return {
    [XML]: { schema: value },
    [JSON_TYPE]: { schema: { type: 'object', required: [root], properties: { [root]: value }, additionalProperties: false } },
  };
}

const SCRIPT_CONTENT = { [SCRIPT]: { schema: { type: 'string', description: 'A script; errors are reported with console.error.' } } };

function strip(schema: TSchema): Json {
  // TypeBox adds symbol keys only; JSON would drop them anyway, a copy keeps the document plain.
  return JSON.parse(JSON.stringify(schema)) as Json;
}

function parameters(where: 'path' | 'query', object: TObject): Json[] {
  const required = new Set(object.required ?? []);
  return Object.entries(object.properties).map(([name, property]) => {
    const { description, ...schema } = strip(property);
    return { name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema };
  });
}

/** The example as a shell command; `$API_KEY`-style placeholders stay shell variables. */
export function curlExample(op: ApiOperation, baseUrl: string, documentedPath: string): string {
  const path = documentedPath.replace(/:([A-Za-z_]+)/g, (_m, name: string) => op.example.params[name] ?? `{${name}}`);
  const query = new URLSearchParams({ ...(op.answer === 'javascript' ? {} : { format: 'json' }), ...(op.example.query ?? {}) }).toString();
  const lines = [`curl "${baseUrl}${path}${query ? `?${query}` : ''}"`];
  if ((op.documented?.method ?? 'POST') === 'POST') {
    const at = op.documented?.paths?.indexOf(documentedPath) ?? -1;
    const body = Object.entries(op.documented?.bodies?.[at] ?? op.example.body ?? {});
    // --data-urlencode sends a POST with a form body, each value encoded as it must be.
    for (const [name, value] of body) lines.push(`  --data-urlencode "${name}=${value}"`);
    if (body.length === 0) lines.push('  -X POST');
  }
  return lines.join(' \\\n');
}

function aliasNote(op: ApiOperation, method: 'GET' | 'POST', paths: string[]): string {
  const other =
    method === 'POST' ? 'GET (without a body, so without the api_token: the view anyone gets)' : 'POST (with the same fields in a form or JSON body)';
  const aliases = op.paths.filter((p) => !paths.includes(p)).map((p) => `\`${p.replace(/:([A-Za-z_]+)/g, '{$1}')}\``);
  return `Also answers ${other}${aliases.length ? `, and at ${aliases.join(', ')} (older clients' path forms; a path value there stands for the field of the same name)` : ''}.`;
}

function responses(op: ApiOperation, method: 'GET' | 'POST'): Json {
  const errorContent = op.answer === 'javascript' ? SCRIPT_CONTENT : answerContent('error', ref('Error'));
  const cached = op.cache !== undefined;
  const success = op.answer === 'javascript' ? SCRIPT_CONTENT : answerContent(op.answer.root, op.answer.value);
  const out: Json = {
    '200': {
      description:
        op.answer === 'javascript' ? 'The widget script for this person.' : 'Success: XML by default, JSON with `Accept: application/json` or `?format=json`.',
      headers: cached
        ? {
            ...ANSWER_HEADERS,
            ETag: {
              description:
                'On a public answer (a GET without proof, of the public view where the operation has views): a strong ETag of the body, the same while the answer is; send it back in `If-None-Match`.',
              schema: { type: 'string' },
            },
            Vary: {
              description:
                "On a public answer (a GET without proof, of the public view where the operation has views): `Accept, Origin` (the format follows Accept; the partner's allowed origins decide whether it is answered).",
              schema: { type: 'string' },
            },
          }
        : ANSWER_HEADERS,
      content: success,
    },
  };
  if (cached)
    out['304'] = {
      description: `Not modified: the \`If-None-Match\` ETag is still current (a public answer: a GET without proof, of the public view where the operation has views${method === 'POST' ? '; not this POST' : ''}). No body.`,
      headers: ANSWER_HEADERS,
    };
  for (const [status, e] of Object.entries(ERRORS)) {
    out[status] = {
      description: `${e.description}${op.answer === 'javascript' ? ' The widget answers every error as a script that reports it with console.error.' : ''}`,
      headers: e.retry ? RETRY_HEADERS : ANSWER_HEADERS,
      content: errorContent,
    };
  }
  return out;
}

function operation(op: ApiOperation, path: string, method: 'GET' | 'POST', documentedPaths: string[], baseUrl: string): Json {
  const curl = curlExample(op, baseUrl, path);
  const proof = op.tokenRequired ? ' Needs the api_token (server-side calls only).' : '';
  const body = bodySchema(op);
  return {
    operationId: documentedPaths.length > 1 && path !== documentedPaths[0] ? `${op.operationId}_${op.paths.indexOf(path) + 1}` : op.operationId,
    summary: op.documented?.summaries?.[documentedPaths.indexOf(path)] ?? op.summary,
    description: `${op.description ?? ''}${proof} ${aliasNote(op, method, documentedPaths)}\n\n\`\`\`sh\n${curl}\n\`\`\``.trim(),
    tags: ['partner API'],
    parameters: [...parameters('path', paramsSchema(path)), ...parameters('query', querySchema(op))],
    ...(method === 'POST'
      ? {
          requestBody: {
            required: false,
            description: 'A form (`application/x-www-form-urlencoded`) or a JSON object; an empty body means no fields. Secrets go here, never in the URL.',
            content: { [FORM]: { schema: strip(body) }, [JSON_TYPE]: { schema: strip(body) } },
          },
        }
      : {}),
    responses: responses(op, method),
    'x-codeSamples': [{ lang: 'Shell', label: 'curl', source: curl }],
  };
}

/** The `paths` of the document: each operation once. */
export function apiPaths(operations: readonly ApiOperation[], baseUrl: string): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    const method = op.documented?.method ?? 'POST';
    const documentedPaths = op.documented?.paths ?? [op.paths[0]!];
    for (const path of documentedPaths) {
      const key = path.replace(/:([A-Za-z_]+)/g, '{$1}');
      paths[key] = { ...paths[key], [method.toLowerCase()]: operation(op, path, method, documentedPaths, baseUrl) };
    }
  }
  return paths;
}

export const API_DESCRIPTION = `Look up the online identities a person has opted to share, push changes, link repositories. Start with the partner quickstart, \`docs/partner-quickstart.md\` in ${DOCS}; the widget is in \`docs/widget.md\`, events in \`docs/webhooks.md\`, every rule in \`docs/spec.md\`.

Every operation answers POST and GET; this reference lists each once, under the method partners use (POST where a body can carry the api_token or fields; GET for the catalogue and the widget script). Answers are XML unless \`Accept: application/json\` or \`?format=json\`; both formats hold the same tree (\`<services><service>…</service></services>\` is \`{"services": [ … ]}\`). Bodies are forms (\`application/x-www-form-urlencoded\`) or JSON objects. Secrets (\`api_token\`, \`email_address\`, \`password\`) go in the POST body only.

The api_key is public: a call without proof (the api_token, or a signed widget URL) gets the public view, with no \`usrSvcId\` from the central repository, and draws on the key's unproven request budget, apart from the proven one; \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` describe the tightest budget that applied.

The examples expect \`API_KEY\` and \`API_TOKEN\` in the shell (\`idsvc partner create\` prints them). This document is served at \`/api/openapi.json\`.`;
