// Row types of every table. Booleans are stored as 0/1 integers and times as Unix milliseconds on
// both dialects, so that one query path serves SQLite and PostgreSQL without per-dialect mapping.
import type { Generated, Selectable } from 'kysely';

type Bool = number; // 0 | 1
type Millis = number;

export interface PartnersTable {
  id: Generated<number>;
  name: string;
  api_key: string;
  token_hash: string;
  previous_token_hash: string | null;
  previous_token_expires_at: Millis | null;
  trusted: Bool;
  suspended: Bool;
  legacy_open_reads: Bool;
  /** JSON array of allowed origins; empty array = any origin. */
  allowed_origins: string;
  webhook_url: string | null;
  webhook_secret: string | null;
  /** The secret `rotate-webhook-secret` replaced: it still signs until it expires (migration 009). */
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: Millis | null;
  webhook_disabled: Bool;
  /** Per-partner override of the per-api_key request limit, per minute. */
  rate_limit_per_minute: number | null;
  created_at: Millis;
  updated_at: Millis;
  /** Made from an application, its api_token not yet issued to a member (migration 020). */
  token_unissued: Generated<Bool>;
}

export interface UsersTable {
  id: Generated<number>;
  user_id: string;
  email: string;
  email_md5: string;
  email_sha256: string;
  password_hash: string;
  /**
   * Whether partners and visitors see the user: their consent AND a proven address (migration 007).
   * Every visibility check reads this one column; change it only through services/accounts.ts.
   */
  opted_in: Bool;
  /** The visibility linked partners were last told of (`user.visible` / `user.hidden`). */
  announced_visible: Bool;
  /** The user's own choice to be shown (the opt-in box); takes effect once the address is proven. */
  consented: Bool;
  /** When the owner proved the address by following a mailed link; null until then. */
  email_proven_at: Millis | null;
  discoverable: Bool;
  pro: Bool;
  nickname: string | null;
  first_name: string | null;
  last_name: string | null;
  street: string | null;
  city: string | null;
  region: string | null;
  country: string | null;
  bio: string | null;
  /** JSON array of profile field names the user made public. */
  public_fields: string;
  created_at: Millis;
  updated_at: Millis;
  /** 'operator' (reviews applications, runs the console) or 'none' (migration 020). */
  role: Generated<string>;
}

/**
 * A person as partners name them. A partner may push for someone who has no account yet (by e-mail
 * hash or by a userId-shaped handle); the subject row ties every name of one person together and is
 * merged into the user's own subject when the account is created.
 */
export interface SubjectsTable {
  id: Generated<number>;
  email_md5: string | null;
  email_sha256: string | null;
  handle: string | null;
  user_ref: number | null;
  created_at: Millis;
}

export interface ServicesTable {
  svc_id: string;
  svc_name: string;
  sort_name: string;
  svc_url: string;
  left_url: string;
  right_url: string;
  mobile_url: string;
  iphone_url: string;
  favicon: string;
  icon: string;
  iphone_icon: string;
  regex_check: string | null;
  url_builder: string | null;
  disabled: Bool;
  updated_at: Millis;
}

export interface CentralIdentitiesTable {
  id: Generated<number>;
  user_ref: number;
  svc_id: string;
  usr_svc_id: string;
  /** Lower-cased, one leading "@" removed: the key of reverse_lookup. */
  usr_svc_id_norm: string;
  verified: Bool;
  verified_by: string | null; // a VerificationMethod: 'rel-me' | 'proof' | 'dns' | 'atproto' | 'operator'
  /** When the mark was first earned (kept through re-checks that confirm it). */
  verified_at: Millis | null;
  last_checked_at: Millis | null;
  /** What proves the mark: the page, record or document that was read. */
  evidence_url: string | null;
  /** When the entry is next due for a check; NULL: now (new or changed). */
  next_check_at: Millis | null;
  /** Since when a definite negative has stood against a mark still shown (to be confirmed). */
  negative_since: Millis | null;
  source_partner_id: number | null;
  created_at: Millis;
  updated_at: Millis;
  /** Where the person's proof for this identity is (a gist, a post), when its method needs one (migration 015). */
  proof_url: string | null;
}

export interface PartnerIdentitiesTable {
  id: Generated<number>;
  partner_id: number;
  subject_id: number;
  svc_id: string;
  usr_svc_id: string;
  created_at: Millis;
  updated_at: Millis;
}

export interface LinksTable {
  id: Generated<number>;
  partner_id: number;
  subject_id: number;
  user_ref: number;
  /** The user_identifier the partner linked under (an e-mail is kept as its MD5): webhooks name the person this way. */
  user_identifier: string;
  created_at: Millis;
}

export interface OutboxTable {
  id: Generated<number>;
  event_id: string;
  partner_id: number;
  user_ref: number | null;
  event_type: string;
  payload: string;
  status: string; // 'pending' | 'delivered' | 'dead' | 'skipped' | 'suppressed'
  attempts: number;
  next_attempt_at: Millis;
  locked_until: Millis | null;
  last_error: string | null;
  delivered_at: Millis | null;
  created_at: Millis;
  /** The HTTP status of the last answer, when one came (migration 020). */
  last_status: Generated<number | null>;
}

export interface VerificationAttemptsTable {
  id: Generated<number>;
  identity_id: number;
  user_ref: number;
  svc_id: string;
  url: string;
  outcome: string; // CheckOutcome['result']: 'verified' | 'absent' | 'transient'
  detail: string;
  method: string | null;
  /** The HTTP status of the answer read, when there was one. */
  status: number | null;
  attempted_at: Millis;
}

export interface SessionsTable {
  id: string; // SHA-256 of the cookie value
  user_ref: number;
  csrf_token: string;
  created_at: Millis;
  expires_at: Millis;
}

export interface ThrottlesTable {
  key: string;
  count: number;
  expires_at: Millis;
}

export interface SettingsTable {
  key: string;
  value: string;
}

/** Opted-in users per service, kept by triggers (migration 005). */
export interface ServicePopularityTable {
  svc_id: string;
  user_count: number;
}

/** Outgoing mail, sent by the mail job (migration 007). */
export interface MailQueueTable {
  id: Generated<number>;
  /** The left part of the Message-ID header (the domain of MAIL_FROM is added when sent): the same on every attempt. */
  message_id: string;
  /** Which template made it (e.g. `confirm-address`): what an operator sees in `idsvc mail list`. */
  kind: string;
  to_address: string;
  subject: string;
  /** Null once sent: the bodies may hold single-use links. */
  text_body: string | null;
  html_body: string | null;
  status: string; // 'pending' | 'sent' | 'failed'
  attempts: number;
  next_attempt_at: Millis;
  locked_until: Millis | null;
  last_error: string | null;
  sent_at: Millis | null;
  created_at: Millis;
}

/** Single-use links sent by mail (migration 007); only the SHA-256 of the token is kept. */
export interface EmailTokensTable {
  id: Generated<number>;
  token_hash: string;
  purpose: string; // 'confirm' | 'claim' | 'reset'
  user_ref: number | null;
  /** The address the link was sent to. */
  email: string;
  /** A claim's sign-up (purpose 'claim'): the account to create when the link is followed. */
  new_user_id: string | null;
  password_hash: string | null;
  consented: Bool | null;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

export interface Database {
  partners: PartnersTable;
  users: UsersTable;
  subjects: SubjectsTable;
  services: ServicesTable;
  central_identities: CentralIdentitiesTable;
  partner_identities: PartnerIdentitiesTable;
  links: LinksTable;
  outbox: OutboxTable;
  verification_attempts: VerificationAttemptsTable;
  sessions: SessionsTable;
  throttles: ThrottlesTable;
  settings: SettingsTable;
  service_popularity: ServicePopularityTable;
  mail_queue: MailQueueTable;
  email_tokens: EmailTokensTable;
  discovery_runs: DiscoveryRunsTable;
  discovery_pages: DiscoveryPagesTable;
  verified_pages: VerifiedPagesTable;
  avatar_photos: AvatarPhotosTable;
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
  provider_connections: ProviderConnectionsTable;
  provider_flows: ProviderFlowsTable;
  partner_applications: PartnerApplicationsTable;
  partner_members: PartnerMembersTable;
  partner_invitations: PartnerInvitationsTable;
  operator_audit: OperatorAuditTable;
  partner_link_events: PartnerLinkEventsTable;
  partner_usage: PartnerUsageTable;
  mastodon_apps: MastodonAppsTable;
}

/** Links made and ended, per partner, for its dashboard (migration 020). */
export interface PartnerLinkEventsTable {
  id: Generated<number>;
  partner_id: number;
  kind: string; // 'linked' | 'unlinked'
  by: string; // 'partner' | 'user' | 'deletion'
  created_at: Millis;
}

/** A person's application for partner keys (migration 020). */
export interface PartnerApplicationsTable {
  id: Generated<number>;
  user_ref: number;
  name: string;
  site_url: string;
  purpose: string;
  /** JSON array of the origins that will embed the widget. */
  origins: string;
  contact: string;
  status: string; // 'pending' | 'approved' | 'declined'
  decline_reason: string | null;
  partner_id: number | null;
  /** The deciding operator's userId, or 'auto' when approved on application. */
  decided_by: string | null;
  created_at: Millis;
  decided_at: Millis | null;
}

/** The people who run a partner from its dashboard. */
export interface PartnerMembersTable {
  partner_id: number;
  user_ref: number;
  created_at: Millis;
}

/** An invitation to become a member, mailed as a single-use link; only hashes are kept. */
export interface PartnerInvitationsTable {
  id: Generated<number>;
  partner_id: number;
  token_hash: string;
  email_sha256: string;
  invited_by: number | null;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

/** Every operator action: who, what, on what, before and after (JSON). */
export interface OperatorAuditTable {
  id: Generated<number>;
  actor_ref: number | null;
  actor_user_id: string;
  action: string;
  target: string;
  before: string | null;
  after: string | null;
  created_at: Millis;
}

export interface DiscoveryRunsTable {
  id: Generated<number>;
  user_ref: number;
  start_url: string;
  status: string; // 'queued' | 'running' | 'done'
  pages_fetched: Generated<number>;
  stopped_by: string | null; // 'page_limit' | 'time_limit'
  lease_until: Millis | null;
  created_at: Millis;
  finished_at: Millis | null;
}

export interface DiscoveryPagesTable {
  id: Generated<number>;
  run_id: number;
  user_ref: number;
  url: string;
  final_url: string | null;
  depth: number;
  via_url: string | null;
  fetched: Bool;
  outcome: string; // 'fetched' | 'unreachable' | 'not_fetched'
  detail: string;
  kind: string | null; // 'identity' | 'ambiguous' | 'homepage'
  svc_id: string | null;
  usr_svc_id: string | null;
  links_back: Generated<Bool>;
  fetched_at: Millis;
}

export interface VerifiedPagesTable {
  user_ref: number;
  url: string;
  verified_at: Millis;
}

export interface AvatarPhotosTable {
  user_ref: number;
  image: Buffer;
  media_type: string; // 'image/jpeg'
  digest: string;
  side: number;
  updated_at: Millis;
}

/** A person's passkeys (migration 018). */
export interface PasskeysTable {
  id: Generated<number>;
  user_ref: number;
  credential_id: string;
  public_key: Buffer;
  counter: number;
  /** base64url of the random user handle the authenticator keeps with the credential. */
  user_handle: string;
  /** JSON array of the transports the browser reported (hints for the next ceremony). */
  transports: string;
  name: string;
  created_at: Millis;
  last_used_at: Millis | null;
}

/** One WebAuthn ceremony's challenge (migration 018), keyed by what it is bound to. */
export interface PasskeyChallengesTable {
  binding: string;
  challenge: string;
  user_ref: number | null;
  label: string | null;
  user_handle: string | null;
  expires_at: Millis;
}

/** A sign-in provider account connected to an idsvc account (migration 019). */
export interface ProviderConnectionsTable {
  id: Generated<number>;
  user_ref: number;
  provider: string;
  subject: string;
  username: string | null;
  created_at: Millis;
  last_login_at: Millis | null;
}

export interface ProviderFlowsTable {
  id: string;
  state_hash: string;
  provider: string;
  purpose: string; // 'login' | 'connect'
  user_ref: number | null;
  code_verifier: string;
  nonce: string | null;
  pending: string | null;
  expires_at: Millis;
  created_at: Millis;
}

/** The app registered with a Mastodon server (migration 022). */
export interface MastodonAppsTable {
  server: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  created_at: Millis;
}

/** A partner's API calls in one hour and operation (migration 021); counts only ever grow. */
export interface PartnerUsageTable {
  partner_id: number;
  /** The hour's first millisecond (UTC). */
  hour_start: Millis;
  /** The operationId (`return_services`, …). */
  operation: string;
  status_2xx: number;
  status_3xx: number;
  /** 4xx other than 429. */
  status_4xx: number;
  status_429: number;
  status_5xx: number;
  /** The most of the proven budget (api_token or signed URL) used in one window during the hour, and that budget. */
  proven_peak: number;
  proven_limit: number;
  /** The same for the budget of calls with the public key alone. */
  unproven_peak: number;
  unproven_limit: number;
}

export type PartnerRow = Selectable<PartnersTable>;
export type UserRow = Selectable<UsersTable>;
export type ServiceRow = Selectable<ServicesTable>;
export type CentralIdentityRow = Selectable<CentralIdentitiesTable>;
export type OutboxRow = Selectable<OutboxTable>;
export type MailRow = Selectable<MailQueueTable>;
export type EmailTokenRow = Selectable<EmailTokensTable>;
