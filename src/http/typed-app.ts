// Routes whose request types (body, query, params) are derived from their TypeBox schemas, so a
// handler reads `request.body.email` as the schema declares it, with no cast.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';

export type TypedApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export const typed = (app: FastifyInstance): TypedApp => app.withTypeProvider<TypeBoxTypeProvider>();
