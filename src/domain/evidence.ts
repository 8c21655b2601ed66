// What partners and visitors are shown of a verified mark: how it was earned, what proves it, when
// it was first earned and when it was last checked. An entry that is not verified has none.
import type { VerificationMethod } from '../verification/methods.js';

export interface MarkEvidence {
  verifiedBy: VerificationMethod;
  /** ISO 8601, UTC: when the mark was first earned. */
  verifiedAt: string;
  /** ISO 8601, UTC: the last check that kept it; absent for an operator's mark never checked. */
  lastCheckedAt?: string;
  /** The page, record or document read; absent for an operator's mark. */
  evidenceUrl?: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function markEvidence(row: {
  verified: boolean;
  verified_by: string | null;
  verified_at: number | null;
  last_checked_at: number | null;
  evidence_url: string | null;
}): MarkEvidence | null {
  if (!row.verified || row.verified_by === null || row.verified_at === null) return null;
  return {
    // Only verify.ts, the operator's mark and "Find my identities" write the column, each a method.
    verifiedBy: row.verified_by as VerificationMethod,
    verifiedAt: iso(Number(row.verified_at)),
    ...(row.last_checked_at !== null ? { lastCheckedAt: iso(Number(row.last_checked_at)) } : {}),
    ...(row.evidence_url !== null && row.evidence_url !== '' ? { evidenceUrl: row.evidence_url } : {}),
  };
}
