// The events idsvc sends to partners' webhooks, described for the OpenAPI document's `webhooks`
// section (OpenAPI 3.1). Keyed by every outbox event type, so a new event cannot go undocumented
// (the compiler asks for it here); docs/webhooks.md says the same for people.
import { PROFILE_FIELD_NAMES, PROFILE_MAX_LENGTH } from '../domain/profile.js';
import type { EventType } from '../repositories/outbox.js';
import { VERIFICATION_METHODS } from '../verification/methods.js';

type Schema = Record<string, unknown>;

const DOCS = '`docs/webhooks.md` in the idsvc repository (verification in Node, Python and Go, retries, secret rotation)';

/** What every event about a user carries: how this partner names them, and their userId. */
const userFields: Record<string, Schema> = {
  user_identifier: {
    type: 'string',
    description: 'The identifier this partner linked the user under, lower-cased: its userId, MD5 or SHA-256; an e-mail address appears as its MD5.',
  },
  userId: { type: 'string', description: "The user's userId on this service." },
};

const profileSchema: Schema = {
  type: 'object',
  description: "Exactly the `profile` object of return_profile's private view for this partner: userId, url and every filled-in field.",
  required: ['userId', 'url'],
  properties: {
    userId: { type: 'string' },
    url: { type: 'string', format: 'uri' },
    ...Object.fromEntries(PROFILE_FIELD_NAMES.map((f) => [f, { type: 'string', maxLength: PROFILE_MAX_LENGTH[f] }])),
  },
  additionalProperties: false,
};

const identityFields: Record<string, Schema> = {
  svcId: { type: 'string' },
  usrSvcId: { type: 'string', description: 'Only for trusted partners or when the user is a pro user.' },
  url: { type: 'string', description: "The profile URL built from the catalogue's pattern; empty when the service has none for this identifier." },
};

/** The evidence of a verified mark, as in JSON answers (docs/verification.md). */
const evidenceFields: Record<string, Schema> = {
  verifiedBy: { type: 'string', enum: [...VERIFICATION_METHODS], description: 'How the mark was earned.' },
  verifiedAt: { type: 'string', format: 'date-time', description: 'When the mark was first earned (kept while re-checks confirm it).' },
  lastCheckedAt: { type: 'string', format: 'date-time', description: 'The last check that kept the mark.' },
  evidenceUrl: { type: 'string', description: "What proves it: the page or record read, or `dns:TXT:<name>`. Absent for an operator's mark." },
};

interface EventDoc {
  summary: string;
  description: string;
  /** Fields of `data` beyond user_identifier and userId. */
  data: Record<string, Schema>;
  required: string[];
}

const EVENTS: Record<EventType, EventDoc> = {
  'identity.updated': {
    summary: "An entry of the user's central repository was added, changed, or its verification changed",
    description: 'Not sent to the partner whose push caused it.',
    data: {
      svcId: { type: 'string' },
      usrSvcId: { type: 'string', description: 'Only for trusted partners or when the user is a pro user.' },
      url: { type: 'string', description: "The profile URL built from the catalogue's pattern; empty when the service has none for this identifier." },
      verified: { type: 'boolean' },
    },
    required: ['svcId', 'url', 'verified'],
  },
  'identity.verified': {
    summary: "An entry of the user's central repository became verified, with the evidence",
    description: 'Sent with `identity.updated` when a check (or an operator) verifies an entry. docs/verification.md explains each method.',
    data: {
      ...identityFields,
      verified: { const: true },
      ...evidenceFields,
    },
    required: ['svcId', 'url', 'verified', 'verifiedBy', 'verifiedAt'],
  },
  'identity.unverified': {
    summary: "An entry of the user's central repository lost its verified mark, with the reason",
    description:
      'Sent with `identity.updated`. A check removes a mark only after every method that applies found a definite negative twice, the second time at least an hour (VERIFY_CONFIRM_AFTER_SECONDS) after the first; a timeout, 5xx, 429 or DNS failure never does.',
    data: {
      ...identityFields,
      verified: { const: false },
      reason: {
        type: 'object',
        required: ['method', 'detail'],
        properties: {
          method: {
            type: 'string',
            enum: [...VERIFICATION_METHODS],
            description: 'The method whose check found nothing, or `operator` when an operator removed the mark.',
          },
          detail: { type: 'string', description: 'What was looked for, where, and what was found, in words.' },
          evidenceUrl: { type: 'string', description: 'What was read: a URL, or `dns:TXT:<name>`.' },
          status: { type: 'integer', description: 'The HTTP status of the answer read, when there was one.' },
        },
        additionalProperties: false,
      },
    },
    required: ['svcId', 'url', 'verified', 'reason'],
  },
  'identity.removed': {
    summary: "An entry was removed from the user's central repository",
    description: 'Not sent to the partner whose call removed it.',
    data: { svcId: { type: 'string' } },
    required: ['svcId'],
  },
  'link.created': {
    summary: 'Another partner linked the user',
    description: 'Sent to the partners already linked, not to the one that linked.',
    data: { partner: { type: 'string', description: "The other partner's display name." } },
    required: ['partner'],
  },
  'link.removed': {
    summary: 'A link between the user and a partner ended',
    description:
      'When a partner unlinks (unsync_user) the other linked partners hear it. When the user ends a link on the site, the partner concerned hears it too, and `endedBy` is `user`.',
    data: { partner: { type: 'string', description: 'The display name of the partner whose link ended.' }, endedBy: { type: 'string', enum: ['user'] } },
    required: ['partner'],
  },
  'profile.updated': {
    summary: 'Something return_profile answers this partner changed',
    description: 'A save that changes nothing sends nothing; changing only which fields are public sends it.',
    data: {
      profile: profileSchema,
      publicFields: {
        type: 'array',
        items: { type: 'string', enum: [...PROFILE_FIELD_NAMES] },
        description: 'Which fields of `profile` the public view shows too, in answer order.',
      },
    },
    required: ['profile', 'publicFields'],
  },
  'user.visible': {
    summary: 'The user became visible to partners (opted in with a proven address)',
    description: 'Read the user afresh: events withheld while they were not visible are never sent later.',
    data: {},
    required: [],
  },
  'user.hidden': {
    summary: 'The user is no longer visible to partners',
    description: 'Stop showing what you hold from idsvc about them. Until `user.visible`, nothing else is sent about them except `user.deleted`.',
    data: {},
    required: [],
  },
  'user.deleted': {
    summary: 'The user deleted their account',
    description: 'Their links are gone; what you pushed stays yours.',
    data: {},
    required: [],
  },
};

function envelope(type: string, data: Schema): Schema {
  return {
    type: 'object',
    required: ['type', 'timestamp', 'data'],
    properties: {
      type: { const: type },
      timestamp: { type: 'string', format: 'date-time', description: 'When the change happened (ISO 8601, UTC).' },
      data,
    },
  };
}

const headers = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'Unique per event (`msg_` + 32 hex digits), the same on every retry: use it to drop duplicates.',
    schema: { type: 'string', pattern: '^msg_[0-9a-f]{32}$' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds of this attempt; reject values far from your clock (5 minutes).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `{webhook-id}.{webhook-timestamp}.{body}`, one per signing secret (two while a rotated-out secret is in its grace period). Verify with any Standard Webhooks library.',
    schema: { type: 'string' },
  },
];

function operation(type: string, summary: string, description: string, schema: Schema): Schema {
  return {
    post: {
      operationId: `webhook_${type.replace('.', '_')}`,
      summary,
      description: `${description} Signed per Standard Webhooks; delivered at least once; see ${DOCS}.`,
      tags: ['webhooks'],
      parameters: headers,
      requestBody: { required: true, content: { 'application/json': { schema } } },
      responses: {
        '200': { description: 'Any 2xx answer counts as delivered.' },
        '410': { description: 'Gone: idsvc stops delivering to this endpoint until the operator sets it again.' },
        default: { description: 'Anything else (or no answer within 15 s) is retried with back-off for 72 hours; `Retry-After` is honoured.' },
      },
    },
  };
}

/** The OpenAPI 3.1 `webhooks` object: one entry per event type, and `ping`. */
export function openApiWebhooks(): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const [type, e] of Object.entries(EVENTS)) {
    const data: Schema = { type: 'object', required: ['user_identifier', 'userId', ...e.required], properties: { ...userFields, ...e.data } };
    out[type] = operation(type, e.summary, e.description, envelope(type, data));
  }
  out.ping = operation(
    'ping',
    'A test event from `idsvc partner test-webhook`',
    "Sent at once on the operator's request, never retried; carries no user.",
    envelope('ping', { type: 'object', additionalProperties: false }),
  );
  return out;
}
