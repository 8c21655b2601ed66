// Changes to a user's central repository, and the announcements they cause (SPEC §9): every change
// is written to the outbox for each partner linked to the user, except the partner that caused it.
// While the user is not visible, nothing is written but `user.hidden` and `user.deleted`.
import { buildProfileUrl } from '../catalogue/profile-url.js';
import type { CatalogueEntry } from '../catalogue/catalogue-file.js';
import type { Write } from '../db/handle.js';
import { markEvidence } from '../domain/evidence.js';
import { isVisible } from '../domain/visibility.js';
import type { VerificationMethod } from '../verification/methods.js';
import {
  deleteCentralIdentity,
  findCentralIdentity,
  insertCentralIdentity,
  replaceCentralIdentity,
  type CentralIdentity,
} from '../repositories/central-identities.js';
import { linkedPartners, type LinkedPartner } from '../repositories/links.js';
import { SENT_WHILE_NOT_VISIBLE, writeEvents, type EventToWrite, type EventType } from '../repositories/outbox.js';
import { markVisibilityAnnounced, visibilityOf, type User } from '../repositories/users.js';

export function normaliseUsrSvcId(usrSvcId: string): string {
  return usrSvcId.trim().toLowerCase().replace(/^@/, '');
}

export async function announce(
  w: Write,
  user: User,
  type: EventType,
  data: (p: LinkedPartner) => Record<string, unknown>,
  now: number,
  options: { except?: number; only?: LinkedPartner[] } = {},
): Promise<void> {
  const partners = (options.only ?? (await linkedPartners(w, user.id))).filter((p) => p.partner_id !== options.except);
  if (partners.length === 0) return;
  // Read in this transaction, not taken from `user`: the caller's row may predate an opt-out.
  if (!SENT_WHILE_NOT_VISIBLE.has(type) && !isVisible(await visibilityOf(w, user.id))) return;
  const events: EventToWrite[] = partners.map((p) => ({
    partnerId: p.partner_id,
    userRef: user.id,
    type,
    data: { user_identifier: p.user_identifier, userId: user.user_id, ...data(p) },
  }));
  await writeEvents(w, events, now);
}

/**
 * Tells every linked partner `user.visible` or `user.hidden` when the user's visibility is not what
 * they were last told. Call it in the transaction of any change that can make a user visible or
 * hidden (opt-in, opt-out, and whatever else visibility comes to depend on), after the change: it
 * reads the visibility as it now stands, and announces each change once.
 */
export async function announceVisibility(w: Write, user: User, now: number): Promise<void> {
  const visible = isVisible(await visibilityOf(w, user.id));
  if (!(await markVisibilityAnnounced(w, user.id, visible))) return;
  await announce(w, user, visible ? 'user.visible' : 'user.hidden', () => ({}), now);
}

export function identityData(user: User, svc: CatalogueEntry, row: { usr_svc_id: string; verified: boolean }) {
  return (p: LinkedPartner) => ({
    svcId: svc.svcId,
    ...(p.trusted || user.pro ? { usrSvcId: row.usr_svc_id } : {}),
    url: buildProfileUrl(svc, row.usr_svc_id),
    verified: row.verified,
  });
}

/**
 * identity.verified and identity.unverified: the entry as identityData gives it, with the evidence
 * of the mark earned, or the reason it was removed (what was read, where, and what was missing).
 */
/** Why a mark was removed: the method whose check found nothing (or `operator`), what it read and where. */
export interface UnverifiedReason {
  method: VerificationMethod;
  detail: string;
  evidenceUrl: string | null;
  status?: number;
}

export function verificationData(user: User, svc: CatalogueEntry, row: CentralIdentity, reason: UnverifiedReason | null) {
  const base = identityData(user, svc, row);
  const evidence = markEvidence(row);
  return (p: LinkedPartner) => ({
    ...base(p),
    ...(evidence ?? {}),
    ...(reason
      ? {
          reason: {
            method: reason.method,
            detail: reason.detail,
            ...(reason.evidenceUrl !== null ? { evidenceUrl: reason.evidenceUrl } : {}),
            ...(reason.status !== undefined ? { status: reason.status } : {}),
          },
        }
      : {}),
  });
}

export type CentralChange = 'added' | 'replaced' | 'unchanged' | 'kept_verified';

/**
 * Sets (service → identifier) in the central repository. A partner's push never overwrites an entry
 * the user proved (verified): the proof is the user's, not the partner's.
 */
export async function setCentralIdentity(
  w: Write,
  user: User,
  svc: CatalogueEntry,
  usrSvcId: string,
  source: { partnerId: number | null },
  now: number,
): Promise<{ change: CentralChange; row: CentralIdentity }> {
  const existing = await findCentralIdentity(w, user.id, svc.svcId);
  if (existing && existing.usr_svc_id === usrSvcId) return { change: 'unchanged', row: existing };
  if (existing?.verified && source.partnerId !== null) return { change: 'kept_verified', row: existing };
  const entry = { usrSvcId, usrSvcIdNorm: normaliseUsrSvcId(usrSvcId), sourcePartnerId: source.partnerId };
  const row = existing
    ? await replaceCentralIdentity(w, existing.id, entry, now)
    : await insertCentralIdentity(w, { ...entry, userRef: user.id, svcId: svc.svcId }, now);
  await announce(w, user, 'identity.updated', identityData(user, svc, row), now, source.partnerId !== null ? { except: source.partnerId } : {});
  return { change: existing ? 'replaced' : 'added', row };
}

/**
 * Removes a central entry. A partner may remove only what it put there and the user has not
 * verified (SPEC §9); the user may remove anything.
 */
export async function removeCentralIdentity(w: Write, user: User, svcId: string, by: { partnerId: number | null }, now: number): Promise<boolean> {
  if (!(await deleteCentralIdentity(w, user.id, svcId, by.partnerId))) return false;
  await announce(w, user, 'identity.removed', () => ({ svcId }), now, by.partnerId !== null ? { except: by.partnerId } : {});
  return true;
}
