// Gravatar's REST API v3 profile, field for field (names, types, which are required), as named
// OpenAPI components: a client written for api.gravatar.com reads idsvc by changing its base URL.
import { Type, type Static } from '@sinclair/typebox';
import { VERIFICATION_METHODS } from '../verification/methods.js';

const ISO_SECONDS = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$';

export const VerifiedAccountSchema = Type.Object(
  {
    service_type: Type.String({ description: "The service's id in idsvc's catalogue (e.g. `github`)." }),
    service_label: Type.String({ description: "The service's name." }),
    service_icon: Type.String({ format: 'uri', description: "The service's icon (its favicon)." }),
    url: Type.String({ format: 'uri', description: "The user's profile on the service." }),
    is_hidden: Type.Boolean({ description: 'Always false: idsvc lists no hidden accounts.' }),
    verified_by: Type.Optional(
      Type.Union(
        [...VERIFICATION_METHODS].map((m) => Type.Literal(m)),
        { description: "idsvc's addition: how the identity was verified (docs/verification.md)." },
      ),
    ),
    verified_at: Type.Optional(Type.String({ format: 'date-time', description: "idsvc's addition: when it was first verified." })),
    last_checked_at: Type.Optional(
      Type.String({ format: 'date-time', description: "idsvc's addition: the last check that kept the mark (re-checked daily)." }),
    ),
    evidence_url: Type.Optional(
      Type.String({ description: "idsvc's addition: what proves it, the page or record read or `dns:TXT:<name>`; absent for an operator's mark." }),
    ),
  },
  {
    $id: 'GravatarVerifiedAccount',
    description:
      "An identity idsvc proved is the user's (rel=\"me\", a proof text, DNS, ATProto; re-checked daily) or an operator vouched for. Gravatar's fields, then idsvc's evidence.",
  },
);

export const LinkSchema = Type.Object(
  {
    label: Type.String({ description: "The service's name." }),
    url: Type.String({ format: 'uri', description: "The user's profile on the service." }),
  },
  { $id: 'GravatarLink', description: 'An identity the user listed that is not (yet) verified.' },
);

const authenticatedOnly = 'Only in answers to a request with `Authorization: Bearer {api_token}`.';

export const ProfileSchema = Type.Object(
  {
    hash: Type.String({
      description: "The SHA-256 of the user's e-mail address; empty when the profile was asked for by userId and the user is not discoverable by address.",
    }),
    display_name: Type.String({ description: 'First and last name if public, else the nickname if public, else the userId.' }),
    profile_url: Type.String({ format: 'uri', description: 'The public profile page, `{base_url}/u/{userId}`.' }),
    avatar_url: Type.String({
      format: 'uri',
      description: "The avatar (the user's photo, or their letter avatar), `{base_url}/avatar/{sha256}` (or `/avatar/{userId}` where `hash` is empty).",
    }),
    avatar_alt_text: Type.String(),
    location: Type.String({ description: 'City, region and country, those the user made public.' }),
    description: Type.String({ description: 'The bio, if public.' }),
    job_title: Type.String({ description: 'Always empty: idsvc keeps no job title.' }),
    company: Type.String({ description: 'Always empty: idsvc keeps no company.' }),
    verified_accounts: Type.Array(Type.Ref(VerifiedAccountSchema), { description: 'Verified identities by service name; at most 4 without authentication.' }),
    pronunciation: Type.String({ description: 'Always empty.' }),
    pronouns: Type.String({ description: 'Always empty.' }),
    first_name: Type.Optional(Type.String({ description: `If filled in and public. ${authenticatedOnly}` })),
    last_name: Type.Optional(Type.String({ description: `If filled in and public. ${authenticatedOnly}` })),
    links: Type.Optional(Type.Array(Type.Ref(LinkSchema), { description: `Identities that are not verified. ${authenticatedOnly}` })),
    number_verified_accounts: Type.Optional(Type.Integer({ description: `All verified identities. ${authenticatedOnly}` })),
    last_profile_edit: Type.Optional(
      Type.Union([Type.String({ format: 'date-time', pattern: ISO_SECONDS }), Type.Null()], {
        description: `Always null: idsvc does not record when profile fields change. ${authenticatedOnly}`,
      }),
    ),
    registration_date: Type.Optional(
      Type.Union([Type.String({ format: 'date-time', pattern: ISO_SECONDS }), Type.Null()], {
        description: `When the account was created. ${authenticatedOnly}`,
      }),
    ),
  },
  { $id: 'GravatarProfile', description: "A user's profile, as Gravatar's REST API v3 answers it." },
);

export const ErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'What went wrong, for people.' }),
    code: Type.String({ description: '`not_found`, `rate_limit_exceeded`, `invalid_api_token`, `forbidden`, `unavailable` or `internal_error`.' }),
  },
  { $id: 'GravatarError' },
);

export type GravatarProfile = Static<typeof ProfileSchema>;
export type GravatarVerifiedAccount = Static<typeof VerifiedAccountSchema>;
export type GravatarLink = Static<typeof LinkSchema>;

/** Every named schema, for app.addSchema (OpenAPI components) before the routes refer to them. */
export const GRAVATAR_SCHEMAS = [VerifiedAccountSchema, LinkSchema, ProfileSchema, ErrorSchema];
