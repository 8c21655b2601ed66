// Form fields that more than one account form reads.
import { Type } from '@sinclair/typebox';

/** A service id as the identity forms send it; normalised by the handler. */
export const svcIdField = Type.String({ maxLength: 64 });
